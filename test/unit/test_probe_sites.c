/* Each kernel feature perflink probes, forced absent through the seam
 * (PERFLINK_PROBE_FAIL) on trees that do have it, at the real probe sites:
 * the message is given once, and what is computed instead is right.
 *   smaps_rollup  the resource sampler sums PSS from smaps (the captured 6.18
 *                 tree has both; the test sums the smaps file itself)
 *   psi           the tracer runs without PSI and reads procs_blocked
 *   delayacct     the tracer counts no block-I/O delay and leaves the
 *                 sysctl alone even with --enable-delayacct
 *   ffs_aio       the link's AIO sender and reader refuse with -ENOSYS (the
 *                 link then falls back to --sync)
 *   eventfd_flags the AIO sender's eventfd is still non-blocking
 * Under qemu-user io_setup really is ENOSYS: the AIO checks then see the
 * real absence, with the same message. */
#include "kernel_compat.h"
#include "link_aio_rx.h"
#include "link_aio_tx.h"
#include "log.h"
#include "probe.h"
#include "resources.h"
#include "stderr_capture.h"
#include "probe_force.h"
#include "tap.h"
#include "test_resources_jsonl.h"
#include "test_tracer_tree.h"
#include "tracer.h"
#include "tracer_priv.h"

#include <errno.h>
#include <fcntl.h>

#define FIX PL_FIXTURES "/proc/"

static char base[256];

/* PSS of the captured process, summed here from its smaps. */
static uint64_t smaps_pss_kb(const char *path)
{
	const char *p = tree_slurp(path);
	uint64_t sum = 0;

	while ((p = strstr(p, "\nPss:")))
		sum += strtoull(p += 5, NULL, 10);
	return sum;
}

/* One tick of the resource sampler on the 6.18 tree; the sample's line. */
static int pss_tick(const char *root, const char *pid, const char *forced,
		    struct jl_lines *out, struct jl_capture *cap)
{
	struct pl_resources_config cfg;
	struct pl_resources *r = NULL;
	int err;

	probe_force(forced);
	pl__resources_config_init(&cfg);
	free(cfg.out_path);
	cfg.out_path = strdup("");
	free(cfg.proc_root);
	cfg.proc_root = strdup(root);
	cfg.pids = strdup(pid);
	cfg.pss_interval_s = 10;
	cfg.on_line = jl_capture_line;
	cfg.on_line_ctx = cap;
	memset(cap, 0, sizeof(*cap));
	err = pl__resources_open(&r, &cfg);
	pl__resources_config_free(&cfg);
	if (err == 0) {
		err = pl__resources_tick(r);
		pl__resources_close(r);
	}
	jl_lines_parse(out, cap->text ? cap->text : "");
	return err;
}

static void test_smaps_rollup(void)
{
	struct stderr_capture c;
	struct jl_lines l;
	struct jl_capture cap;
	const char *log;
	uint64_t want = smaps_pss_kb(FIX "live-6.18-tree/11915/smaps");
	int err;

	err = pss_tick(FIX "live-6.18-tree", "11915", NULL, &l, &cap);
	TAP_OK(err == 0 && l.n >= 2, "resources on the 6.18 tree");
	TAP_EQ_STR(jl_str(&l.doc[0], "pss_source"), "smaps_rollup", "the tree has smaps_rollup");
	TAP_OK(jl_u64(&l.doc[1], "procs.0.pss_kb.Pss") != want,
	       "the rollup's PSS differs from the smaps sum (so the source shows)");
	free(cap.text);
	jl_lines_free(&l);

	capture_begin(&c);
	err = pss_tick(FIX "live-6.18-tree", "11915", "smaps_rollup", &l, &cap);
	log = capture_end(&c);
	TAP_OK(err == 0 && l.n >= 2, "smaps_rollup forced absent: resources still runs");
	TAP_EQ_STR(jl_str(&l.doc[0], "pss_source"), "smaps", "PSS from smaps");
	TAP_EQ_STR(jl_str(&l.doc[0], "smaps_rollup"), "false", "header says no smaps_rollup");
	TAP_EQ_U64(jl_u64(&l.doc[1], "procs.0.pss_kb.Pss"), want, "PSS is the sum over smaps");
	TAP_OK(jl_u64(&l.doc[1], "procs.0.pss_mappings") > 0, "counted over the mappings");
	TAP_OK(count_of(log, "smaps_rollup: no /proc/PID/smaps_rollup") == 1, "said once");
	capture_diag(log);
	TAP_OK(strstr(log, "forced by PERFLINK_PROBE_FAIL") != NULL, "and that it was forced");
	free(cap.text);
	jl_lines_free(&l);

	/* the recorded 4.9 tree really lacks it: the same line, not forced */
	capture_begin(&c);
	err = pss_tick(FIX "agnos-4.9", "1234", NULL, &l, &cap);
	log = capture_end(&c);
	TAP_OK(err == 0 && l.n >= 2, "4.9 tree: resources runs");
	TAP_EQ_STR(jl_str(&l.doc[0], "pss_source"), "smaps", "4.9 tree: PSS from smaps");
	TAP_OK(count_of(log, "smaps_rollup: no /proc/PID/smaps_rollup (kernel 4.9") == 1 &&
		       !strstr(log, "forced"),
	       "4.9 tree: said once, with its kernel, not as forced");
	capture_diag(log);
	free(cap.text);
	jl_lines_free(&l);
}

static struct pl_tracer *open_tracer(const char *root, const char *name, bool enable_da)
{
	struct pl_tracer_config cfg;
	struct pl_tracer *t = NULL;
	char path[400];

	pl__tracer_config_init(&cfg);
	free(cfg.proc_root);
	cfg.proc_root = strdup(root);
	snprintf(path, sizeof(path), "%s/%s.csv", base, name);
	free(cfg.out_path);
	cfg.out_path = strdup(path);
	snprintf(path, sizeof(path), "%s/%s.events.jsonl", base, name);
	free(cfg.events_path);
	cfg.events_path = strdup(path);
	free(cfg.disks);
	cfg.disks = strdup("vda");
	free(cfg.names);
	cfg.names = strdup("controlsd");
	cfg.enable_delayacct = enable_da;
	if (pl__tracer_open(&t, &cfg) < 0)
		t = NULL;
	pl__tracer_config_free(&cfg);
	return t;
}

static const char *first_line(const char *path)
{
	static char line[4096];
	const char *txt = tree_slurp(path);
	const char *nl = strchr(txt, '\n');

	snprintf(line, sizeof(line), "%.*s", nl ? (int)(nl - txt) : 0, txt);
	return line;
}

static void psi_tree(const char *root)
{
	tree_system(root, 1000, 50, 0, 0);
	tree_put(root, "pressure/io", "some avg10=1.50 avg60=0.00 avg300=0.00 total=100\n"
				      "full avg10=0.00 avg60=0.00 avg300=0.00 total=50\n");
	tree_put(root, "pressure/memory", "some avg10=0.00 avg60=0.00 avg300=0.00 total=7\n"
					  "full avg10=0.00 avg60=0.00 avg300=0.00 total=3\n");
	tree_put(root, "stat", "cpu  1 2 3 4 5 6 7 0 0 0\nprocs_running 1\nprocs_blocked 2\n");
	tree_put(root, "sys/kernel/task_delayacct", "1\n");
	tree_stat(root, 100, "controlsd", 'S', 1, 500, 10);
	tree_io(root, 100, 0, 0);
}

static void test_psi(void)
{
	struct stderr_capture c;
	struct pl_tsys s;
	struct pl_tsys_sample smp;
	struct pl_tracer *t;
	char root[300], ev[400];
	const char *log;
	int rootfd;

	snprintf(root, sizeof(root), "%s/psi", base);
	psi_tree(root);
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	probe_force(NULL);
	pl__tsys_init(&s, "vda");
	pl__tsys_read(&s, rootfd, false, &smp);
	TAP_OK(smp.have_psi_io && smp.psi_io.some.total_us == 100 && smp.maybe_blocked &&
	       smp.procs_blocked == 2,
	       "with PSI: pressure/io read; a first reading counts as grown, so /proc/stat's "
	       "procs_blocked is read too");
	pl__tsys_read(&s, rootfd, false, &smp);
	TAP_OK(smp.have_psi_io && !smp.maybe_blocked && smp.procs_blocked == -1,
	       "PSI that did not grow: procs_blocked not needed, not read");
	tree_put(root, "pressure/io", "some avg10=1.50 avg60=0.00 avg300=0.00 total=180\n"
				      "full avg10=0.00 avg60=0.00 avg300=0.00 total=50\n");
	pl__tsys_read(&s, rootfd, false, &smp);
	TAP_OK(smp.maybe_blocked && smp.procs_blocked == 2,
	       "PSI io grew: procs_blocked read, for the sweep to compare with what it found");
	pl__tsys_free(&s);
	psi_tree(root);

	probe_force("psi");
	capture_begin(&c);
	pl__tsys_init(&s, "vda");
	pl__tsys_read(&s, rootfd, false, &smp);
	pl__tsys_read(&s, rootfd, false, &smp);
	TAP_OK(!smp.have_psi_io && !smp.have_psi_mem, "psi forced absent: no PSI read");
	TAP_EQ_U64(smp.procs_blocked, 2, "procs_blocked from /proc/stat instead");
	TAP_OK(pl__tsys_maybe_blocked(&s, &smp), "which decides whether sleepers are re-read");
	pl__tsys_free(&s);

	t = open_tracer(root, "psi", false);
	TAP_OK(t && pl__tracer_tick(t) == 0 && pl__tracer_tick(t) == 0,
	       "the tracer runs without PSI");
	if (t)
		pl__tracer_close(t);
	log = capture_end(&c);
	snprintf(ev, sizeof(ev), "%s/psi.events.jsonl", base);
	TAP_OK(strstr(first_line(ev), "\"psi_io\":false,\"psi_memory\":false") != NULL,
	       "its config line says no PSI: %s", first_line(ev));
	TAP_EQ_U64(count_of(log, "psi: no /proc/pressure/"), 1, "said once over two readers");
	capture_diag(log);
	TAP_OK(strstr(log, "(forced by PERFLINK_PROBE_FAIL)") != NULL, "and that it was forced");
	close(rootfd);

	/* a tree without pressure/, as a 4.9 kernel: the same, not forced */
	snprintf(root, sizeof(root), "%s/nopsi", base);
	psi_tree(root);
	snprintf(ev, sizeof(ev), "%s/nopsi/pressure", base);
	tree_rm(ev);
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	probe_force(NULL);
	capture_begin(&c);
	pl__tsys_init(&s, "vda");
	pl__tsys_read(&s, rootfd, false, &smp);
	pl__tsys_free(&s);
	log = capture_end(&c);
	TAP_OK(!smp.have_psi_io && smp.procs_blocked == 2, "no pressure/: procs_blocked instead");
	TAP_OK(count_of(log, "psi: no /proc/pressure/io (kernel before 4.20") == 1 &&
		       !strstr(log, "forced"),
	       "said once, not as forced");
	capture_diag(log);
	close(rootfd);
}

/* The CSV row of controlsd after its block-I/O delay grew by 7 ticks. */
static const char *blkio_row(const char *root, const char *name, bool enable_da,
			     const char **log)
{
	static struct stderr_capture c;
	static char row[256];
	struct pl_tracer *t;
	char csv[400];
	const char *p, *nl;

	tree_stat(root, 100, "controlsd", 'S', 1, 500, 10);
	tree_io(root, 100, 0, 0);
	capture_begin(&c);
	t = open_tracer(root, name, enable_da);
	row[0] = '\0';
	if (t) {
		pl__tracer_tick(t);
		tree_stat(root, 100, "controlsd", 'S', 1, 500, 17);
		tree_io(root, 100, 10240, 8192);
		pl__tracer_tick(t);
		pl__tracer_close(t);
	}
	*log = capture_end(&c);
	snprintf(csv, sizeof(csv), "%s/%s.csv", base, name);
	p = strstr(tree_slurp(csv), "controlsd,100,");
	if (p) {
		nl = strchr(p, '\n');
		snprintf(row, sizeof(row), "%.*s", nl ? (int)(nl - p) : (int)strlen(p), p);
	}
	return row;
}

static void test_delayacct(void)
{
	char root[300], ev[400], sysctl[400];
	const char *row, *log;

	snprintf(root, sizeof(root), "%s/da", base);
	psi_tree(root);
	snprintf(sysctl, sizeof(sysctl), "%s/sys/kernel/task_delayacct", root);

	probe_force(NULL);
	row = blkio_row(root, "da-on", false, &log);
	TAP_EQ_STR(row, "controlsd,100,S,10,8,70,0,0,,,,,,,", "delays counted: 70 ms of block I/O");

	probe_force("delayacct");
	row = blkio_row(root, "da-forced", false, &log);
	TAP_EQ_STR(row, "controlsd,100,S,10,8,0,0,0,,,,,,,",
		   "delayacct forced absent: the row is there, its block-I/O delay 0");
	snprintf(ev, sizeof(ev), "%s/da-forced.events.jsonl", base);
	TAP_OK(strstr(first_line(ev), "\"task_delayacct\":\"off\",\"blkio_delays\":false") != NULL,
	       "config line: off, no block-I/O delays");
	TAP_OK(count_of(log, "delayacct: kernel.task_delayacct is off") == 1, "said once");
	capture_diag(log);

	tree_put(root, "sys/kernel/task_delayacct", "0\n");
	row = blkio_row(root, "da-forced-enable", true, &log);
	TAP_EQ_STR(tree_slurp(sysctl), "0\n", "--enable-delayacct leaves a forced-off sysctl alone");
	TAP_EQ_U64(count_of(log, "delayacct:"), 0, "and says nothing again in this process");
}

static void test_aio(void)
{
	struct pl_aio_tx_config cfg;
	struct pl_aio_tx *tx = NULL;
	struct pl_aio_rx *rx = NULL;
	struct stderr_capture c;
	const char *log;
	int err, err_rx, err_real;

	pl__aio_tx_config_default(&cfg);
	probe_force(NULL);
	capture_begin(&c);
	err_real = pl__aio_tx_open(&tx, &cfg);
	log = capture_end(&c);
	if (err_real == 0) {
		TAP_OK(pl__probe_state(PL_PROBE_FFS_AIO) == PL_PROBE_PRESENT,
		       "native AIO here: probe present");
		pl__aio_tx_close(tx);
	} else {
		/* qemu-user, or a kernel without CONFIG_AIO: the real thing */
		TAP_EQ_U64(-err_real, ENOSYS, "no native AIO here: -ENOSYS");
		TAP_EQ_U64(count_of(log, "ffs_aio: native AIO is unavailable"), 1, "said plainly");
	}

	probe_force("ffs_aio");
	capture_begin(&c);
	err = pl__aio_tx_open(&tx, &cfg);
	err_rx = pl__aio_rx_open(&rx, 4, 4096, NULL, NULL, NULL);
	log = capture_end(&c);
	TAP_EQ_U64(-err, ENOSYS, "ffs_aio forced absent: the sender opens with -ENOSYS");
	TAP_EQ_U64(-err_rx, ENOSYS, "so does the reader");
	TAP_OK(count_of(log, "ffs_aio: native AIO is unavailable: io_setup for the IN "
			     "endpoint gives ENOSYS (kernel without CONFIG_AIO") == 1,
	       "said once, for the first");
	capture_diag(log);
	TAP_OK(strstr(log, "synchronous writes") && strstr(log, "(forced by PERFLINK_PROBE_FAIL)"),
	       "with the fallback and that it was forced");

	if (err_real == 0) {
		int fl;

		probe_force("eventfd_flags");
		capture_begin(&c);
		err = pl__aio_tx_open(&tx, &cfg);
		log = capture_end(&c);
		TAP_OK(err == 0, "eventfd_flags forced absent: the sender opens");
		if (err == 0) {
			fl = fcntl(pl__aio_tx_eventfd(tx), F_GETFL);
			TAP_OK(fl >= 0 && (fl & O_NONBLOCK), "its eventfd is non-blocking");
			TAP_OK(fcntl(pl__aio_tx_eventfd(tx), F_GETFD) & FD_CLOEXEC,
			       "and close-on-exec");
			pl__aio_tx_close(tx);
		}
		TAP_EQ_U64(count_of(log, "eventfd_flags: eventfd refuses"), 1, "said once");
	} else {
		TAP_SKIP("eventfd fallback in the AIO sender: no native AIO here");
	}
}

int main(void)
{
	snprintf(base, sizeof(base), "/tmp/pl-test-probes.XXXXXX");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 99;
	}
	pl__log_init("test_probe_sites", true, 0);
	test_smaps_rollup();
	test_psi();
	test_delayacct();
	test_aio();
	probe_force(NULL);
	tree_rm(base);
	return tap_done();
}
