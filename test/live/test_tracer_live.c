/* `perflink trace` on the live /proc with a real bully and a real victim:
 * a process named "victim" writes 512 bytes and fdatasyncs in a loop while a
 * process named "bully" writes 2 GB and syncs it, as dd conv=fdatasync does.
 * The tracer must report a stall of the victim with the bully named. Needs
 * root (it turns kernel.task_delayacct on, and restores it); without root it
 * is skipped. If no stall can be provoked, it fails.
 *
 * Also compares the CSV header with what io_stall_tracer.py writes, byte for
 * byte, when the Python script is beside the repository.
 *
 *   test_tracer_live PERFLINK SOURCE_ROOT */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "live_run.h"
#include "tap.h"

static char dir[] = "/var/tmp/pl-live-tracer.XXXXXX";

static const char *slurp(const char *path)
{
	static char buf[1 << 20];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	return buf;
}

/* The first stall event that names the bully among its bullies, copied to
 * buf; NULL if none. A stall of the victim before the bully writes (its own
 * fsyncs on a busy machine) rightly names no one, and is passed over. */
static const char *bully_stall(const char *events, char *buf, size_t cap)
{
	for (const char *s = strstr(events, "\"type\":\"stall\""); s;
	     s = strstr(s + 1, "\"type\":\"stall\"")) {
		const char *b, *named, *mech;

		snprintf(buf, cap, "%.*s", (int)strcspn(s, "\n"), s);
		b = strstr(buf, "\"bully\":[");
		named = b ? strstr(b, "\"comm\":\"bully\"") : NULL;
		mech = b ? strstr(b, "\"mechanism\":") : NULL;
		if (named && (!mech || named < mech))
			return buf;
	}
	return NULL;
}

static pid_t victim(void)
{
	pid_t p = fork();

	if (p == 0) {
		char path[128], buf[512];
		int fd;

		prctl(PR_SET_NAME, "victim", 0, 0, 0);
		snprintf(path, sizeof(path), "%s/victim.log", dir);
		fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
		memset(buf, 'v', sizeof(buf));
		for (int i = 0; i < 3000 && fd >= 0; i++) {
			if (write(fd, buf, sizeof(buf)) < 0 || fdatasync(fd) < 0)
				break;
			live_sleep_ms(20);
		}
		_exit(0);
	}
	return p;
}

static pid_t bully(void)
{
	pid_t p = fork();

	if (p == 0) {
		static char buf[1 << 20];
		char path[128];
		int fd;

		prctl(PR_SET_NAME, "bully", 0, 0, 0);
		snprintf(path, sizeof(path), "%s/bully.dat", dir);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		memset(buf, 'b', sizeof(buf));
		for (int i = 0; i < 2000 && fd >= 0; i++) {
			if (write(fd, buf, sizeof(buf)) < 0)
				break;
		}
		if (fd >= 0)
			fdatasync(fd);
		_exit(0);
	}
	return p;
}

static void python_header(const char *perflink_csv, const char *source_root)
{
	char script[600], out[200], err[200];
	pid_t p;
	const char *py, *nl;
	char first[1024];

	snprintf(script, sizeof(script), "%s/../shared/seeds/io_stall_tracer.py", source_root);
	if (access(script, R_OK) != 0 || access("/usr/bin/python3", X_OK) != 0) {
		TAP_SKIP("io_stall_tracer.py or python3 not found beside the repository");
		return;
	}
	snprintf(out, sizeof(out), "%s/py.csv", dir);
	snprintf(err, sizeof(err), "%s/py.err", dir);
	{
		char *argv[] = { "python3", script, "--out", out, NULL };

		p = live_spawn(argv, err);
	}
	for (int i = 0; i < 50 && !strchr(slurp(out), '\n'); i++)
		live_sleep_ms(100);
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	py = slurp(out);
	nl = strchr(py, '\n');
	snprintf(first, sizeof(first), "%.*s", nl ? (int)(nl - py + 1) : 0, py);
	py = slurp(perflink_csv);
	nl = strchr(py, '\n');
	TAP_OK(first[0] && nl && strncmp(first, py, (size_t)(nl - py + 1)) == 0 &&
		       strlen(first) == (size_t)(nl - py + 1),
	       "CSV header is byte for byte the Python tool's");
}

int main(int argc, char **argv)
{
	char csv[200], ev[200], err[200], disklist[256], da_old[8];
	pid_t v, b, tr;
	const char *events = "", *stall = NULL;
	static char line[8192];
	int status;

	if (argc < 3) {
		fprintf(stderr, "usage: %s PERFLINK SOURCE_ROOT\n", argv[0]);
		return 2;
	}
	if (geteuid() != 0) {
		TAP_SKIP("needs root: turning kernel.task_delayacct on and provoking a stall");
		return tap_done();
	}
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 99;
	}
	snprintf(da_old, sizeof(da_old), "%s", slurp("/proc/sys/kernel/task_delayacct"));
	live_put("/proc/sys/kernel/task_delayacct", "1\n");
	live_disks(disklist, sizeof(disklist));
	snprintf(csv, sizeof(csv), "%s/trace.csv", dir);
	snprintf(ev, sizeof(ev), "%s/trace.events.jsonl", dir);
	snprintf(err, sizeof(err), "%s/trace.err", dir);

	v = victim(); /* after delay accounting is on, so its delays count */
	{
		char *targv[] = { argv[1], "trace", "--out", csv, "--names", "victim",
				  "--disk", disklist, "--seconds", "40", NULL };

		tr = live_spawn(targv, err);
	}
	live_sleep_ms(1000);
	b = bully();
	for (int i = 0; i < 380 && !stall; i++) {
		live_sleep_ms(100);
		events = slurp(ev);
		stall = bully_stall(events, line, sizeof(line));
		if (i == 200 && !stall) {
			/* The first round did not stall the victim: a second. */
			waitpid(b, NULL, 0);
			b = bully();
		}
	}
	live_sleep_ms(300);
	kill(tr, SIGTERM);
	waitpid(tr, &status, 0);
	kill(v, SIGKILL);
	kill(b, SIGKILL);
	waitpid(v, NULL, 0);
	waitpid(b, NULL, 0);
	if (da_old[0])
		live_put("/proc/sys/kernel/task_delayacct", da_old);

	TAP_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "perflink trace stops cleanly on SIGTERM");
	TAP_OK(strstr(slurp(err), "stall events") != NULL, "and prints its summary");
	events = slurp(ev);
	TAP_OK(strstr(events, "\"task_delayacct\":\"on\"") != NULL,
	       "config line: delay accounting on");
	TAP_OK(strstr(events, "\"type\":\"stall\"") != NULL, "a real stall of the victim was caught");
	stall = bully_stall(events, line, sizeof(line));
	TAP_OK(stall != NULL, "and one while the bully wrote names it");
	if (stall) {
		printf("# %s\n", stall);
		TAP_OK(strstr(stall, "\"victim\":{\"pid\":") && strstr(stall, "\"comm\":\"victim\""),
		       "the victim is named");
		TAP_OK(strstr(stall, "\"mechanism\":\"") != NULL, "a mechanism is given");
	}
	TAP_OK(strstr(slurp(csv), ",victim,") != NULL, "the victim has CSV rows");
	python_header(csv, argv[2]);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	return tap_done();
}
