/* Two processes hand a byte back and forth over two pipes, ROUNDS times,
 * and the time of a round trip is printed in ns. Run on one CPU (taskset),
 * each round trip is two context switches and little else, so what a
 * program on sched_switch adds to a switch shows as half the difference
 * between a run with it attached and one without (bench/tracer_cost.sh,
 * the D watch's share of the switching tasks' time: the kernel's count of
 * the program's run time leaves out the tracepoint's dispatch around it).
 *
 *   switch_pingpong [ROUNDS]        (default 200000) */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 200000;
	int there[2], back[2], status = 0;
	char c = 0;
	double t0;
	pid_t child;

	if (rounds <= 0 || pipe(there) < 0 || pipe(back) < 0) {
		fprintf(stderr, "usage: switch_pingpong [ROUNDS > 0]\n");
		return 2;
	}
	t0 = now_ns();
	child = fork();
	if (child < 0) {
		perror("switch_pingpong: fork");
		return 1;
	}
	if (child == 0) {
		for (long i = 0; i < rounds; i++) {
			if (read(there[0], &c, 1) != 1 || write(back[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	for (long i = 0; i < rounds; i++) {
		if (write(there[1], &c, 1) != 1 || read(back[0], &c, 1) != 1) {
			fprintf(stderr, "switch_pingpong: the other end is gone\n");
			return 1;
		}
	}
	if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 1;
	printf("%.0f\n", (now_ns() - t0) / (double)rounds);
	return 0;
}
