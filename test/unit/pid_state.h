/* A process's state letter as /proc/PID/stat shows it, for tests that wait
 * for a process to sleep or block; '?' when it cannot be read. */
#ifndef PL_TEST_PID_STATE_H
#define PL_TEST_PID_STATE_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static inline char state_of(int pid)
{
	char path[64], buf[512];
	const char *rp;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' ? rp[2] : '?';
}

/* Wait up to 2 s for pid to show state want. A process that has just
 * answered on a pipe is still running (R) on another CPU for a while before
 * it sleeps in its next read: a test that reads it as asleep waits here. */
static inline bool wait_state(int pid, char want)
{
	for (int i = 0; i < 200; i++) {
		if (state_of(pid) == want)
			return true;
		usleep(10000);
	}
	return false;
}

#endif
