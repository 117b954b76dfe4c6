/* `perflink status`: ask a running perflinkd what it is doing, over its
 * control socket (see control.h for the protocol), and print a summary or
 * the raw JSON line. */
#include "cli.h"
#include "control.h"

#include "clock.h"
#include "json_reader.h"
#include "options.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define ANSWER_MAX (PL_CONTROL_ANSWER_MAX + 1)

/* The fields the summary shows; anything else in the answer is ignored, and
 * a field that is missing shows as "?", never as a made-up number. */
enum field {
	F_ERROR, F_VERSION, F_PID, F_UPTIME,
	F_RSS, F_MAXRSS, F_USER, F_SYS, F_CPU_PCT,
	F_T_STATE, F_T_ERROR, F_T_INTERVAL, F_T_LATE, F_T_TICKS, F_T_EVENTS, F_T_PROCS,
	F_T_MS, F_T_P99, F_T_MAX, F_T_READERR,
	F_R_STATE, F_R_ERROR, F_R_INTERVAL, F_R_LATE, F_R_SAMPLES, F_R_PROCS, F_R_MS, F_R_MAX,
	F_C_SERVED, F_C_REFUSED, F_C_ERRORS, F_C_TIMEOUTS, F_C_BUSY,
	F_L_STATE, F_L_TRANSPORT, F_L_FRAMES, F_L_HELD, F_L_RTT_MAX, F_L_TEL, F_L_TEL_DROPPED,
	F_P_ACCEPTED, F_P_REFUSED, F_P_LINES, F_P_UNROUTED, F_P_NO_PRODUCER, F_P_RING_FULL, F_P_CONN_DROPPED,
	F_P_TOO_BIG,
	F_COUNT
};

static const char *const field_path[F_COUNT] = {
	[F_ERROR] = "error",
	[F_VERSION] = "version",
	[F_PID] = "pid",
	[F_UPTIME] = "uptime_s",
	[F_RSS] = "self.rss_kib",
	[F_MAXRSS] = "self.max_rss_kib",
	[F_USER] = "self.cpu_user_s",
	[F_SYS] = "self.cpu_sys_s",
	[F_CPU_PCT] = "self.cpu_pct",
	[F_T_STATE] = "modules.tracer.state",
	[F_T_ERROR] = "modules.tracer.error",
	[F_T_INTERVAL] = "modules.tracer.interval_ms",
	[F_T_LATE] = "modules.tracer.late_ticks",
	[F_T_TICKS] = "modules.tracer.stats.ticks",
	[F_T_EVENTS] = "modules.tracer.stats.stall_events",
	[F_T_PROCS] = "modules.tracer.stats.processes",
	[F_T_MS] = "modules.tracer.stats.sampler_ms_p50",
	[F_T_P99] = "modules.tracer.stats.sampler_ms_p99",
	[F_T_MAX] = "modules.tracer.stats.sampler_ms_max",
	[F_T_READERR] = "modules.tracer.stats.read_errors",
	[F_R_STATE] = "modules.resources.state",
	[F_R_ERROR] = "modules.resources.error",
	[F_R_INTERVAL] = "modules.resources.interval_ms",
	[F_R_LATE] = "modules.resources.late_ticks",
	[F_R_SAMPLES] = "modules.resources.stats.samples",
	[F_R_PROCS] = "modules.resources.stats.processes",
	[F_R_MS] = "modules.resources.stats.sampler_ms_last",
	[F_R_MAX] = "modules.resources.stats.sampler_ms_max",
	[F_C_SERVED] = "control.served",
	[F_C_REFUSED] = "control.refused",
	[F_C_ERRORS] = "control.errors",
	[F_C_TIMEOUTS] = "control.timeouts",
	[F_C_BUSY] = "control.busy",
	[F_L_STATE] = "modules.link.state",
	[F_L_TRANSPORT] = "modules.link.transport",
	[F_L_FRAMES] = "modules.link.totals.frames_sent",
	[F_L_HELD] = "modules.link.totals.frames_held",
	[F_L_RTT_MAX] = "modules.link.totals.max_rtt_ms",
	[F_L_TEL] = "modules.link.telemetry_sent",
	[F_L_TEL_DROPPED] = "modules.link.telemetry_dropped",
	[F_P_ACCEPTED] = "modules.collector.accepted",
	[F_P_REFUSED] = "modules.collector.refused",
	[F_P_LINES] = "producers.lines",
	[F_P_UNROUTED] = "producers.replies_unrouted",
	[F_P_NO_PRODUCER] = "producers.replies_no_producer",
	[F_P_RING_FULL] = "producers.replies_ring_full",
	[F_P_CONN_DROPPED] = "producers.replies_connection_dropped",
	[F_P_TOO_BIG] = "producers.replies_too_big",
};

struct summary {
	bool found[F_COUNT];
	bool is_null[F_COUNT];
	char value[F_COUNT][96];
};

static void collect(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	struct summary *s = ctx;
	unsigned i;

	for (i = 0; i < F_COUNT; i++) {
		if (strcmp(path, field_path[i]) != 0)
			continue;
		s->found[i] = true;
		s->is_null[i] = kind == PL_JSON_NULL;
		/* The daemon's strings go to a terminal: no control bytes. */
		snprintf(s->value[i], sizeof(s->value[i]), "%s", value);
		for (char *p = s->value[i]; *p; p++) {
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '?';
		}
		return;
	}
}

static const char *get(const struct summary *s, enum field f)
{
	return s->found[f] && !s->is_null[f] ? s->value[f] : "?";
}

static double num(const struct summary *s, enum field f, bool *ok)
{
	char *end;
	double v;

	if (!s->found[f] || s->is_null[f]) {
		*ok = false;
		return 0;
	}
	v = strtod(s->value[f], &end);
	*ok = end != s->value[f] && *end == '\0';
	return v;
}

static void print_uptime(const struct summary *s)
{
	bool ok;
	double up = num(s, F_UPTIME, &ok);
	unsigned long t = (unsigned long)up;

	if (!ok || up < 0) {
		printf("up ?");
		return;
	}
	if (t >= 86400)
		printf("up %lud %02luh %02lum", t / 86400, t / 3600 % 24, t / 60 % 60);
	else if (t >= 3600)
		printf("up %luh %02lum %02lus", t / 3600, t / 60 % 60, t % 60);
	else
		printf("up %lum %02lus", t / 60, t % 60);
}

static void print_mib(const struct summary *s, enum field f)
{
	bool ok;
	double kib = num(s, f, &ok);

	if (ok)
		printf("%.1f MiB", kib / 1024);
	else
		printf("? MiB");
}

static void print_module(const struct summary *s, const char *label, enum field state,
			 enum field error, enum field interval, enum field late)
{
	printf("  %-10s %s", label, get(s, state));
	if (s->found[error] && !s->is_null[error])
		printf(" (%s)", get(s, error));
	if (strcmp(get(s, state), "off") != 0) {
		bool ok;
		double ms = num(s, interval, &ok);

		if (ok)
			printf(", every %g ms", ms);
		printf(", %s ticks late", get(s, late));
	}
}

static void print_summary(const struct summary *s)
{
	printf("perflinkd %s, pid %s, ", get(s, F_VERSION), get(s, F_PID));
	print_uptime(s);
	printf("\n  %-10s %s%% of one CPU on average (%s s user, %s s system), ", "own cost",
	       get(s, F_CPU_PCT), get(s, F_USER), get(s, F_SYS));
	print_mib(s, F_RSS);
	printf(" resident (peak ");
	print_mib(s, F_MAXRSS);
	printf(")\n");

	print_module(s, "tracer", F_T_STATE, F_T_ERROR, F_T_INTERVAL, F_T_LATE);
	if (s->found[F_T_TICKS])
		printf("; %s ticks, %s stall events, %s processes, tick cost %s ms (p99 %s, "
		       "max %s), %s read errors",
		       get(s, F_T_TICKS), get(s, F_T_EVENTS), get(s, F_T_PROCS), get(s, F_T_MS),
		       get(s, F_T_P99), get(s, F_T_MAX), get(s, F_T_READERR));
	printf("\n");
	print_module(s, "resources", F_R_STATE, F_R_ERROR, F_R_INTERVAL, F_R_LATE);
	if (s->found[F_R_SAMPLES])
		printf("; %s samples, %s processes, sample cost %s ms (max %s)",
		       get(s, F_R_SAMPLES), get(s, F_R_PROCS), get(s, F_R_MS), get(s, F_R_MAX));
	printf("\n");
	if (s->found[F_L_STATE])
		printf("  %-10s %s over %s; %s frames sent, %s held, round trip max %s ms; "
		       "telemetry %s sent, %s dropped\n",
		       "link", get(s, F_L_STATE), get(s, F_L_TRANSPORT), get(s, F_L_FRAMES),
		       get(s, F_L_HELD), get(s, F_L_RTT_MAX), get(s, F_L_TEL), get(s, F_L_TEL_DROPPED));
	if (s->found[F_P_ACCEPTED])
		printf("  %-10s %s connected so far (%s refused), %s telemetry lines, %s replies "
		       "not delivered (%s with no producer, %s to a full ring, %s too big, "
		       "%s on a dropped connection)\n",
		       "producers", get(s, F_P_ACCEPTED), get(s, F_P_REFUSED), get(s, F_P_LINES),
		       get(s, F_P_UNROUTED), get(s, F_P_NO_PRODUCER), get(s, F_P_RING_FULL),
		       get(s, F_P_TOO_BIG), get(s, F_P_CONN_DROPPED));
	printf("  %-10s %s answered, %s refused, %s bad requests, %s timed out, %s busy\n",
	       "control", get(s, F_C_SERVED), get(s, F_C_REFUSED), get(s, F_C_ERRORS),
	       get(s, F_C_TIMEOUTS), get(s, F_C_BUSY));
}

static int connect_daemon(const char *path, const char *prog)
{
	struct sockaddr_un sun;
	int fd, ret;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "%s: socket path too long: %s\n", prog, path);
		return -ENAMETOOLONG;
	}
	memcpy(sun.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		fprintf(stderr, "%s: socket: %s\n", prog, strerror(errno));
		return ret;
	}
	do
		ret = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	while (ret < 0 && errno == EINTR);
	if (ret == 0)
		return fd;
	ret = -errno;
	if (errno == ENOENT)
		fprintf(stderr, "%s: no perflinkd is running: %s does not exist "
			"(is it started? another --socket?)\n", prog, path);
	else if (errno == ECONNREFUSED)
		fprintf(stderr, "%s: no perflinkd is running: nobody listens on %s "
			"(left over by a daemon that died)\n", prog, path);
	else if (errno == EACCES || errno == EPERM)
		fprintf(stderr, "%s: %s: permission denied (run as root, as perflinkd's user, "
			"or as a member of its control-group)\n", prog, path);
	else
		fprintf(stderr, "%s: connect %s: %s\n", prog, path, strerror(errno));
	close(fd);
	return ret;
}

/* Send the request and read the answer up to EOF, within timeout_ns. */
static ssize_t ask(int fd, char *buf, size_t cap, uint64_t timeout_ns, const char *prog)
{
	static const char request[] = "status\n";
	uint64_t deadline = pl__mono_ns() + timeout_ns;
	size_t len = 0;
	ssize_t n;

	do
		n = send(fd, request, sizeof(request) - 1, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	/* A daemon that refuses us may close before the request is out; its
	 * one-line refusal is still there to read. */
	if (n != (ssize_t)sizeof(request) - 1 && !(n < 0 && (errno == EPIPE ||
							     errno == ECONNRESET))) {
		fprintf(stderr, "%s: sending the request: %s\n", prog,
			n < 0 ? strerror(errno) : "short write");
		return -EIO;
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = pl__mono_ns();
		int ret;

		if (now >= deadline) {
			fprintf(stderr, "%s: perflinkd did not answer within %.1f s\n", prog,
				(double)timeout_ns / 1e9);
			return -ETIMEDOUT;
		}
		ret = poll(&pfd, 1, (int)((deadline - now + 999999) / 1000000));
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -errno;
		if (ret == 0)
			continue;
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			/* The daemon may close with our request unread after
			 * an error line: that line is what matters. */
			if (errno == ECONNRESET && len > 0)
				break;
			fprintf(stderr, "%s: reading the answer: %s\n", prog, strerror(errno));
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == cap - 1) {
			fprintf(stderr, "%s: the answer is larger than %zu bytes\n", prog, cap - 1);
			return -E2BIG;
		}
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

int pl__cmd_status(int argc, char **argv)
{
	char *socket_path = NULL;
	bool json = false;
	double timeout_s = 5;
	const struct pl_option options[] = {
		{ "socket", PL_OPT_STRING, &socket_path, 0, 0, "PATH",
		  "perflinkd's control socket (default: " PL_CONTROL_SOCKET_DEFAULT ")" },
		{ "json", PL_OPT_BOOL, &json, 0, 0, NULL,
		  "print the daemon's answer as it is: one JSON object" },
		{ "timeout", PL_OPT_DOUBLE, &timeout_s, 0.1, 3600, "SECONDS",
		  "give up when perflinkd has not answered by then" },
		PL_OPT_END,
	};
	struct summary *s = NULL;
	char err[PL_ERRBUF];
	char *answer = NULL;
	const char *prog = "perflink status";
	int next, fd = -1, status = 1, ret;
	ssize_t len;

	ret = pl__options_parse_argv(options, argc, argv, &next, err, sizeof(err));
	if (ret == 0 && next < argc) {
		snprintf(err, sizeof(err), "unexpected argument '%s'", argv[next]);
		ret = -EINVAL;
	}
	if (ret != 0) {
		FILE *out = ret > 0 ? stdout : stderr;

		if (ret < 0)
			fprintf(stderr, "%s: %s\n\n", prog, err);
		fprintf(out, "usage: perflink status [--socket PATH] [--json]\n\n"
			     "Ask a running perflinkd what it is doing: its modules, their counts and\n"
			     "costs, and the daemon's own CPU and memory.\n\n");
		pl__options_print_help(options, out);
		pl__options_free(options);
		return ret > 0 ? 0 : 2;
	}
	answer = malloc(ANSWER_MAX);
	s = calloc(1, sizeof(*s));
	if (!answer || !s) {
		fprintf(stderr, "%s: out of memory\n", prog);
		goto out;
	}
	fd = connect_daemon(socket_path ? socket_path : PL_CONTROL_SOCKET_DEFAULT, prog);
	if (fd < 0)
		goto out;
	len = ask(fd, answer, ANSWER_MAX, (uint64_t)(timeout_s * 1e9), prog);
	if (len < 0)
		goto out;
	/* Results of a walk that failed halfway are not used. */
	if (len == 0 || answer[0] != '{' || answer[len - 1] != '\n' ||
	    memchr(answer, '\n', (size_t)len - 1) ||
	    pl__json_walk(answer, (size_t)len, collect, s) < 0) {
		fprintf(stderr, "%s: perflinkd's answer is not one JSON object on one line "
			"(%zd bytes)\n", prog, len);
		goto out;
	}
	if (s->found[F_ERROR]) {
		fprintf(stderr, "%s: perflinkd refused: %s\n", prog, get(s, F_ERROR));
		goto out;
	}
	if (json)
		fputs(answer, stdout);
	else
		print_summary(s);
	status = fflush(stdout) == 0 ? 0 : 1;
out:
	if (fd >= 0)
		close(fd);
	free(answer);
	free(s);
	pl__options_free(options);
	return status;
}
