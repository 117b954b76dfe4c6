#!/usr/bin/env python3
"""Every TELEMETRY line of a real run against docs/wire.md's "Telemetry
lines" table (TAP): for each line of DIR/*.jsonl (as perflink-host --out
files them, by type), the time and id fields the table names for its type
must be there. Types the table does not name are reported, not failed (a
host must ignore them). Each type in REQUIRE must have been seen at least
once, so that a run that sent nothing does not pass.

  telemetry_fields.py WIRE_MD TELEMETRY_DIR [REQUIRE_TYPE ...]
"""
import json
import os
import re
import sys

from_here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cross")
sys.path.insert(0, from_here)
from tap import done, ok  # noqa: E402


def table(wire_md):
    """type -> [field path, ...] from the table's time and who columns."""
    text = open(wire_md).read()
    part = text.split("## Telemetry lines", 1)[1].split("\n## ", 1)[0]
    fields = {}
    for row in part.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) < 5 or not cells[0].startswith("`"):
            continue
        paths = []
        for cell in cells[2:4]:
            # backticked paths, not the words in parentheses
            paths += re.findall(r"`([^`]+)`", re.sub(r"\([^)]*\)", "", cell))
        for t in re.findall(r"`([^`]+)`", cells[0]):
            fields[t] = paths
    return fields


def values(obj, path):
    """The values at path; None when a scalar step is missing."""
    out = [obj]
    for step in re.findall(r"[^.\[\]]+|\[\]|\[\d+\]", path):
        nxt = []
        for v in out:
            if step == "[]":
                if not isinstance(v, list):
                    return None if v is not None else []
                nxt += v
            elif step.startswith("["):
                i = int(step[1:-1])
                if not isinstance(v, list) or len(v) <= i:
                    return None
                nxt.append(v[i])
            else:
                if not isinstance(v, dict) or step not in v:
                    return None
                nxt.append(v[step])
        out = nxt
    return out


def missing(line, path):
    optional = path.endswith("?")
    path = path.rstrip("?")
    got = values(line, path)
    if got is None:
        # an array that is absent counts as empty; a scalar must be there
        if "[]" in path and values(line, path.split("[]")[0]) is None:
            return False
        return not optional
    return any(v is None for v in got)


def main():
    wire, tdir, require = sys.argv[1], sys.argv[2], sys.argv[3:]
    fields = table(wire)
    ok(len(fields) >= 10, "docs/wire.md's telemetry table names %d types" % len(fields))
    seen = {}
    for name in sorted(os.listdir(tdir)):
        if not name.endswith(".jsonl"):
            continue
        for n, text in enumerate(open(os.path.join(tdir, name)), 1):
            line = json.loads(text)
            t = line.get("type")
            if t not in fields:
                print("# %s:%d: type %r is not in the table (ignored, as a host must)" %
                      (name, n, t))
                continue
            seen[t] = seen.get(t, 0) + 1
            bad = [p for p in fields[t] if missing(line, p)]
            if bad:
                ok(False, "%s:%d (%s) has %s" % (name, n, t, ", ".join(bad)))
                seen[t] = -1e9
    for t in sorted(seen):
        if seen[t] > 0:
            ok(True, "%d %s lines carry %s" % (seen[t], t, ", ".join(fields[t])))
    for t in require:
        ok(seen.get(t, 0) > 0, "the run sent %s lines" % t)
    return done()


if __name__ == "__main__":
    sys.exit(main())
