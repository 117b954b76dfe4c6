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

/* Off its runqueue: /proc/PID/wchan names where it sleeps, "0" while it
 * is on a runqueue (running, or preempted after it set its state and
 * before it slept). */
static inline bool off_runqueue(int pid)
{
	char path[64], buf[128];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n > 0 && strcmp(buf, "0") != 0;
}

/* Wait up to 2 s for pid to show state want. A process that has just
 * answered on a pipe is still running (R) on another CPU for a while before
 * it sleeps in its next read: a test that reads it as asleep waits here.
 * D is waited for until the task has blocked: it shows D from the moment it
 * sets the state, and a task preempted then (a vfork parent, by the child
 * it has just woken) stays on its runqueue until it runs again. */
static inline bool wait_state(int pid, char want)
{
	for (int i = 0; i < 200; i++) {
		if (state_of(pid) == want && (want != 'D' || off_runqueue(pid)))
			return true;
		usleep(10000);
	}
	return false;
}

#endif
