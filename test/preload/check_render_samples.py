#!/usr/bin/env python3
"""The render sampler's timed samples in render_window lines (as perflinkd
forwards them and perflink-host files them): each window's samples are in
time order, within the window, taken on the render thread the line names,
and account exactly for its folded stacks: line k of `folded`, counted N
there, is named by N samples. Prints one summary line; exit 0 when all hold.

  check_render_samples.py TELEMETRY/render_window.jsonl
"""
import json
import sys


def check(path):
    windows = samples = 0
    for n, text in enumerate(open(path), 1):
        w = json.loads(text)
        folded = [l for l in w.get("folded", "").split("\n") if l]
        counts = [int(l.rsplit(" ", 1)[1]) for l in folded]
        got = [0] * len(counts)
        times = [s[0] for s in w.get("samples", [])]
        if times != sorted(times):
            return "window %d: samples out of time order" % n
        end, span = w["mono_ns"], w["window_s"] * 1e9
        if times and (times[-1] > end or times[0] < end - span - 2e9):
            return "window %d: samples %d..%d outside the window %d..%d" % (
                n, times[0], times[-1], end - span, end)
        for t, line in w.get("samples", []):
            if line >= len(counts) or line < -1:
                return "window %d: sample names folded line %d of %d" % (n, line, len(counts))
            if line >= 0:
                got[line] += 1
        if w.get("samples_dropped", 0) == 0 and got != counts:
            return "window %d: samples per line %s, folded counts %s" % (n, got, counts)
        if times and not w.get("tid"):
            return "window %d: samples but no render thread id" % n
        windows += 1
        samples += len(times)
    if samples == 0:
        return "no samples in %d windows" % windows
    print("%d windows, %d timed samples, each folded line's count matched" % (windows, samples))
    return None


err = check(sys.argv[1])
if err:
    print(err)
sys.exit(1 if err else 0)
