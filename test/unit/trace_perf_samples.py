#!/usr/bin/env python3
"""The render samples of a trace as Perfetto reads PerfSample packets: each
sample's timestamp, pid, tid and stack, resolved through the sequence's
interned callstacks, frames and function names, from `protoc --decode`'s
text of the trace (test_host_export.sh). Prints one line per sample,
"TIMESTAMP PID TID outer;...;inner", in the trace's order; exits 1 when a
sample names a callstack, frame or name the interned data lacks.

usage: trace_perf_samples.py DECODED_TEXT"""
import re
import sys

text = open(sys.argv[1], encoding="utf-8").read()
packets = re.split(r"\n?packet \{\n", text)
names, frames, stacks, samples = {}, {}, {}, []


def fields(block, key):
    return [int(v) for v in re.findall(r"\b%s: (\d+)" % key, block)]


for p in packets:
    for m in re.finditer(r"function_names \{\n\s*iid: (\d+)\n\s*str: \"((?:[^\"\\]|\\.)*)\"", p):
        names[int(m.group(1))] = m.group(2)
    for m in re.finditer(r"frames \{\n([^}]*)\}", p):
        frames[fields(m.group(1), "iid")[0]] = fields(m.group(1), "function_name_id")[0]
    for m in re.finditer(r"callstacks \{\n([^}]*)\}", p):
        stacks[fields(m.group(1), "iid")[0]] = fields(m.group(1), "frame_ids")
    m = re.search(r"perf_sample \{\n([^}]*)\}", p)
    if m:
        ts = re.search(r"^\s*timestamp: (\d+)", p, re.M)
        samples.append((int(ts.group(1)) if ts else None, fields(m.group(1), "pid")[0],
                        fields(m.group(1), "tid")[0], fields(m.group(1), "callstack_iid")[0]))
bad = 0
for ts, pid, tid, cs in samples:
    try:
        stack = ";".join(names[frames[f]] for f in stacks[cs])
    except KeyError as e:
        stack, bad = "unresolved %s" % e, 1
    print(ts, pid, tid, stack)
sys.exit(bad)
