/* The payload hash: every build of XXH3 it chooses from gives the library's
 * XXH3_64bits for every length and alignment, the choice is measured (or
 * named by PERFLINK_HASH_IMPL, a bad name said once), and threads that hash
 * their first payload at the same moment all get the right value.
 *
 * The choice is made once per process, so each case that depends on it runs
 * in a child of its own. */
#include "payload_hash.h"
#include "tap.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#define BIG (393216 + 64)

static uint8_t *data;

static void test_builds_agree(void)
{
	static const size_t lengths[] = { 0,   1,    3,    16,   17,   128,  129,   240,
					  241, 1023, 1024, 1025, 4096, 8191, 65536, 393216 };
	unsigned n = pl__payload_hash_candidate_count(), i, k, off;

	TAP_OK(n >= 2, "at least two builds to choose from (%u)", n);
	TAP_EQ_STR(pl__payload_hash_candidate_name(0), "library", "the library's own build is first");
	TAP_OK(pl__payload_hash_candidate_name(n) == NULL, "no name past the last build");
	for (i = 0; i < n; i++) {
		bool same = true;

		for (k = 0; k < sizeof(lengths) / sizeof(lengths[0]); k++) {
			for (off = 0; off < 8; off++) {
				uint64_t want = XXH3_64bits(data + off, lengths[k]);

				same = same &&
				       pl__payload_hash_with(i, data + off, lengths[k]) == want;
			}
		}
		TAP_OK(same, "build '%s' gives XXH3_64bits at every length and alignment",
		       pl__payload_hash_candidate_name(i));
	}
}

struct child_result {
	char name[32];
	double mbps[3];
	unsigned n;
	bool right; /* pl__payload_hash agreed with XXH3_64bits afterwards */
	char err[512];
};

/* Runs the choice in a child with PERFLINK_HASH_IMPL set to impl (NULL:
 * unset), and reads back what it chose and what it said on stderr. */
static bool choose_in_child(const char *impl, struct child_result *res)
{
	int out[2], err[2], status;
	ssize_t got;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	if (pipe(out) < 0 || pipe(err) < 0)
		return false;
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		struct pl_payload_hash_choice c;
		struct child_result r;
		unsigned i;

		memset(&r, 0, sizeof(r));
		dup2(err[1], 2);
		if (impl)
			setenv("PERFLINK_HASH_IMPL", impl, 1);
		else
			unsetenv("PERFLINK_HASH_IMPL");
		pl__payload_hash_describe(&c);
		snprintf(r.name, sizeof(r.name), "%s", c.name ? c.name : "(null)");
		r.n = c.n;
		for (i = 0; i < c.n && i < 3; i++)
			r.mbps[i] = c.candidate[i].mbps;
		r.right = pl__payload_hash(data, BIG) == XXH3_64bits(data, BIG) &&
			  pl__payload_hash(data + 1, 5000) == XXH3_64bits(data + 1, 5000);
		if (write(out[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(out[1]);
	close(err[1]);
	got = read(out[0], res, sizeof(*res));
	{
		ssize_t e = read(err[0], res->err, sizeof(res->err) - 1);

		res->err[e > 0 ? e : 0] = '\0';
		/* one line in the TAP output, where a check prints it */
		for (char *nl = strchr(res->err, '\n'); nl; nl = strchr(nl, '\n'))
			*nl = ' ';
	}
	close(out[0]);
	close(err[0]);
	waitpid(pid, &status, 0);
	return got == (ssize_t)sizeof(*res) && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void test_measured(void)
{
	struct child_result r;
	bool all_measured = true, known = false;
	unsigned i;

	TAP_OK(choose_in_child(NULL, &r), "measured: the child ran");
	for (i = 0; i < r.n; i++) {
		all_measured = all_measured && r.mbps[i] > 0;
		known = known || strcmp(r.name, pl__payload_hash_candidate_name(i)) == 0;
	}
	TAP_EQ_U64(r.n, pl__payload_hash_candidate_count(), "measured: every build is described");
	TAP_OK(all_measured, "measured: each build's speed (%.0f, %.0f, %.0f MB/s)", r.mbps[0],
	       r.mbps[1], r.mbps[2]);
	TAP_OK(known, "measured: the choice is one of the builds (%s)", r.name);
	TAP_OK(r.right, "measured: the chosen build hashes right");
	TAP_EQ_STR(r.err, "", "measured: nothing said");
}

static void test_named(void)
{
	unsigned n = pl__payload_hash_candidate_count(), i;
	struct child_result r;

	for (i = 0; i < n; i++) {
		const char *name = pl__payload_hash_candidate_name(i);

		TAP_OK(choose_in_child(name, &r), "named %s: the child ran", name);
		TAP_EQ_STR(r.name, name, "named: PERFLINK_HASH_IMPL is used as it is");
		TAP_OK(r.mbps[0] == 0 && r.mbps[1] == 0 && r.mbps[2] == 0,
		       "named: nothing is measured");
		TAP_OK(r.right, "named: it hashes right");
		TAP_EQ_STR(r.err, "", "named: nothing said");
	}
	TAP_OK(choose_in_child("sse9", &r), "a bad name: the child ran");
	TAP_OK(strstr(r.err, "PERFLINK_HASH_IMPL='sse9' is not a build of XXH3 here") &&
		       strstr(r.err, "library") && strstr(r.err, "scalar"),
	       "a bad name: said, with the names there are (%s)", r.err);
	TAP_OK(r.mbps[0] > 0 && r.right, "a bad name: measured instead, and right");
	TAP_OK(choose_in_child("", &r) && r.err[0] == '\0' && r.mbps[0] > 0,
	       "an empty name is no name: measured, silently");
}

struct racer {
	pthread_t tid;
	bool right;
};

static void *race(void *arg)
{
	struct racer *r = arg;

	r->right = pl__payload_hash(data, BIG) == XXH3_64bits(data, BIG);
	return NULL;
}

/* The first large payload chooses; threads that arrive together wait for
 * the one choice (pthread_once) and all hash right. */
static void test_first_use_from_threads(void)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0) {
		struct racer rs[4];
		bool right = true;
		int i;

		for (i = 0; i < 4; i++)
			pthread_create(&rs[i].tid, NULL, race, &rs[i]);
		for (i = 0; i < 4; i++) {
			pthread_join(rs[i].tid, NULL);
			right = right && rs[i].right;
		}
		_exit(right ? 0 : 1);
	}
	TAP_OK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		       WEXITSTATUS(status) == 0,
	       "four threads' first payloads at once: all hashed right");
}

int main(void)
{
	size_t i;

	data = malloc(BIG + 8);
	if (!data)
		return 1;
	for (i = 0; i < BIG + 8; i++)
		data[i] = (uint8_t)(i * 2654435761u >> 13);
	test_builds_agree();
	test_measured();
	test_named();
	test_first_use_from_threads();
	free(data);
	return tap_done();
}
