#!/usr/bin/env python3
"""What `perflink-host export` costs on a long run: writes a recording of
MINUTES minutes at the demo's rates (scripts/demo: 30 frames a second on
the link, the capture loop's 4 stage calls a frame at 50 frames a second
with per-call events, a render thread sampled at 100 Hz in 4 s windows, a
resource sample and a link_diag line a second, a stall every 10 s), then
times the export of it and prints the size of each file written, per
minute of recording.

  export_cost.py PERFLINK_HOST [MINUTES]     (default 10)

The recording is synthetic but has the shape and rates of a real one; it
is made in a temporary folder and removed afterwards."""
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

S = 1_000_000_000


def write_recording(d, minutes):
    os.makedirs(os.path.join(d, "telemetry"))
    secs = minutes * 60
    t0 = 1000 * S
    rnd = random.Random(7)
    with open(os.path.join(d, "frames.csv"), "w") as f:
        f.write("frame_id,sequence,bytes,device_send_ns,host_recv_device_ns,one_way_ms,round_trip_ms\n")
        for i in range(secs * 30):
            send = t0 + i * S // 30
            rtt = 0.4 + rnd.random() * 0.4
            f.write("%d,%d,262144,%d,%d,%.6f,%.6f\n" % (
                (1 << 48) + i, i, send, send + 200000, 0.2, rtt))
    with open(os.path.join(d, "telemetry", "perflink-stage-calls.jsonl"), "w") as f:
        names = ["frame_wait", "frame_release", "cache_sync", "stream_poll"]
        calls, line = [], 0
        for fr in range(secs * 50):
            start = t0 + fr * S // 50
            for k, name in enumerate(names):
                wall = [15_000_000, 20_000, 300_000, 10_000][k]
                calls.append([start, wall, wall // 10 if k == 0 else wall, 4242, k, 0,
                              1048576 if k == 2 else 0])
                start += wall
            if len(calls) >= 512:
                line += 1
                f.write(json.dumps({"type": "perflink-stage-calls", "version": 1, "pid": 4242,
                                    "comm": "capture_loop", "mono_ns": start, "line": line,
                                    "events_sent": line * 512, "events_dropped": 0,
                                    "stage_names": names, "calls": calls}) + "\n")
                calls = []
    with open(os.path.join(d, "telemetry", "render_window.jsonl"), "w") as f:
        folded = ["main;run;draw;hot_a", "main;run;draw;hot_b", "main;run;swap;mesa_%d"]
        for w in range(secs // 4):
            end = t0 + (w + 1) * 4 * S
            lines = [folded[0], folded[1]] + [folded[2] % k for k in range(30)]
            samples = [[end - 4 * S + i * S // 100, rnd.randrange(len(lines))] for i in range(400)]
            counts = [0] * len(lines)
            for _, k in samples:
                counts[k] += 1
            text = "".join("%s %d\n" % (l, c) for l, c in zip(lines, counts) if c)
            kept = [k for k, c in enumerate(counts) if c]
            remap = {k: i for i, k in enumerate(kept)}
            samples = [[t, remap[k]] for t, k in samples]
            f.write(json.dumps({"type": "render_window", "pid": 4343, "comm": "renderer",
                                "tid": 4344, "mono_ns": end, "window_s": 4,
                                "sample_period_ns": 10_000_000, "report": "",
                                "folded": text, "samples": samples,
                                "samples_dropped": 0}) + "\n")
    with open(os.path.join(d, "telemetry", "resources.jsonl"), "w") as f:
        f.write(json.dumps({"type": "header", "schema": 1, "clk_tck": 100, "mono_ns": t0}) + "\n")
        for s in range(secs):
            procs = [{"pid": 4000 + p, "comm": "proc%d" % p, "utime_ticks": s * (p + 1),
                      "stime_ticks": s, "vm_kb": {"VmRSS": 10000 + p}} for p in range(10)]
            f.write(json.dumps({"type": "sample", "seq": s, "mono_ns": t0 + s * S,
                                "meminfo_kb": {"MemAvailable": 2000000, "Dirty": 100 + s % 50,
                                               "Writeback": s % 7},
                                "procs": procs}) + "\n")
    with open(os.path.join(d, "telemetry", "link_diag.jsonl"), "w") as f:
        for s in range(secs):
            f.write(json.dumps({"type": "link_diag", "mono_ns": t0 + s * S, "pid": 1,
                                "last_send": {"backlog_kb": s % 16},
                                "totals": {"frames_sent": s * 30, "bytes": s * 30 * 262144}}) + "\n")
    with open(os.path.join(d, "telemetry", "stall.jsonl"), "w") as f:
        for s in range(0, secs, 10):
            f.write(json.dumps({"type": "stall", "mono": (t0 + s * S) / S + 1, "window_ms": 300,
                                "victim": {"pid": 4100, "comm": "recorder"},
                                "bully": [{"pid": 4200, "comm": "dd", "d_wbytes_kB": 1024.0}],
                                "mechanism": "dirty_writeback"}) + "\n")


def main():
    host = sys.argv[1]
    minutes = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    d = tempfile.mkdtemp(prefix="pl-export-cost.")
    try:
        write_recording(d, minutes)
        size_in = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.monotonic()
        r = subprocess.run([host, "export", d], capture_output=True, text=True)
        wall = time.monotonic() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r.returncode != 0:
            print("export failed: " + r.stderr)
            return 1
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        print("a %d-minute recording at the demo's rates: %.1f MB of files" %
              (minutes, size_in / 1e6))
        print("export: %.2f s wall, %.2f s CPU, %.0f MB peak RSS" %
              (wall, cpu, after.ru_maxrss / 1024))
        for name in ("trace.perfetto-trace", "metrics.prom", "profile.pb.gz"):
            p = os.path.join(d, name)
            if os.path.exists(p):
                print("  %-22s %8.2f MB, %6.2f MB per minute" %
                      (name, os.path.getsize(p) / 1e6, os.path.getsize(p) / 1e6 / minutes))
        return 0
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    sys.exit(main())
