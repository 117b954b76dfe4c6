/* perflink-host's state for one run, shared by the main program and the
 * code that reports the run at its end (run_output.c). */
#ifndef PL_HOST_HOST_H
#define PL_HOST_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "latency_table.h"
#include "live_metrics.h"
#include "progress.h"
#include "session.h"
#include "telemetry_files.h"

struct pl_host_options {
	char *tcp;
	char *tcp_key;
	char *tls_ca, *tls_fingerprint;
	long vendor_id, product_id;
	char *serial;
	char *reply;
	long frames;
	double seconds;
	double timeout_s;
	char *out;
	char *frames_csv;
	char *telemetry_dir;
	double trace_max_mb;
	double metrics_every_s;
	char *sysroot, *debug_dir;
	double latency_wait_s;
	long max_frames_kept;
	long depth;
	long transfer_kib;
	bool drain;
	long stall_after;
	double stall_s;
	bool integrity;
};

struct pl_host {
	struct pl_host_session session; /* the link, receiver, telemetry, clock offset */
	struct pl_latency_table table;
	struct pl_telemetry_files files;
	bool have_files;
	struct pl_progress progress;
	struct pl_live_metrics metrics; /* --out: metrics.prom while running */
	uint64_t last_flush_ns;
	uint64_t start_ns, end_ns;
	uint64_t first_frame_ns, last_frame_ns;
	uint64_t drained_bytes, first_byte_ns, last_byte_ns;
	uint64_t first_byte_cpu_ns, last_byte_cpu_ns; /* --drain: this process's CPU */
};

#endif
