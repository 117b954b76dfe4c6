#!/usr/bin/env python3
"""The preload's hooks on this build's ABI (TAP), under qemu-user in a cross
build: test/preload/test_hooks.c's checks, driven from the build machine
because a program under qemu-user cannot start another foreign program.

hooks_probe calls every interposed function on real files, pipes and memfds
and prints what it got. Its output must be the same without the shim, with
the shim dormant, and with the profiler active over a stage file naming
FIONREAD and TCGETS (the target's numbers); the active run must have
counted those calls. Each probe given is checked; a probe built with
_TIME_BITS=64 on 32-bit glibc calls __ioctl_time64 instead of ioctl, and
the script checks that it really imports that symbol.

  hooks_cross.py PRELOAD_LIB FIONREAD TCGETS NM PROBE[:time64] ... -- [RUNNER WORD...]
"""
import json
import os
import subprocess
import sys
import tempfile

from tap import done, ok



def run(runner, exe, args, env):
    if runner:
        cmd = list(runner)
        for k, v in env.items():
            cmd += ["-E", "%s=%s" % (k, v)]
        cmd += [exe] + args
        penv = dict(os.environ)
    else:
        cmd = [exe] + args
        penv = dict(os.environ, **env)
    return subprocess.run(cmd, env=penv, capture_output=True, text=True, timeout=120)


def stage(report, name, key):
    for s in report.get("stages", []):
        if s.get("name") == name:
            return s.get(key)
    return None


def check_probe(lib, fionread, tcgets, nm, probe, time64, runner, tmp):
    tag = os.path.basename(probe)
    if time64:
        syms = [w.split("@")[0] for w in
                subprocess.run([nm, "-D", "--undefined-only", probe], capture_output=True,
                               text=True).stdout.split()]
        ok("__ioctl_time64" in syms, "%s imports __ioctl_time64 (ioctl in a _TIME_BITS=64 "
           "program on 32-bit glibc)" % tag)
        for f in ("__ppoll64", "__select64", "__pselect64"):
            ok(f in syms, "%s imports %s (its time64 wait)" % (tag, f))
    stages = os.path.join(tmp, tag + ".stages")
    out = os.path.join(tmp, tag + ".jsonl")
    with open(stages, "w") as f:
        f.write("stage probe_pipe dequeue pipe:*  0x%x boundary\n"
                "stage probe_null other /dev/null 0x%x\n"
                "stage probe_tcgets other *       0x%x\n" % (fionread, fionread, tcgets))
    envs = {
        "bare": {},
        "dormant": {"LD_PRELOAD": lib},
        "active": {"LD_PRELOAD": lib, "PERFLINK_PROFILE": "1",
                   "PERFLINK_PROFILE_INTERVAL": "25", "PERFLINK_PROFILE_SYSLOG": "off",
                   "PERFLINK_STAGES": stages, "PERFLINK_PROFILE_OUT": out},
    }
    res = {}
    for k, env in envs.items():
        d = os.path.join(tmp, tag + "." + k)
        os.mkdir(d)
        res[k] = run(runner, probe, [d, "frames", "30"], env)
        ok(res[k].returncode == 0, "%s %s: runs (%s)" % (tag, k,
           res[k].stderr.strip().replace("\n", " | ")[:200]))
    ok(res["dormant"].stderr == "", "%s dormant: nothing on stderr" % tag)
    ok(res["active"].stderr == "", "%s active: nothing on stderr" % tag)
    bare = res["bare"].stdout.splitlines()
    same = 0
    for i, line in enumerate(bare):
        b = res["dormant"].stdout.splitlines()
        c = res["active"].stdout.splitlines()
        if i < len(b) and i < len(c) and b[i] == line and c[i] == line:
            same += 1
        else:
            print("#   differs: %s" % line)
    ok(len(bare) > 50 and same == len(bare) and
       len(res["dormant"].stdout.splitlines()) == len(bare) and
       len(res["active"].stdout.splitlines()) == len(bare),
       "%s: the %d lines printed are the same with and without the shim" % (tag, len(bare)))
    reports = []
    try:
        for line in open(out):
            reports.append(json.loads(line))
    except (OSError, ValueError):
        pass
    rep = reports[-1] if reports else {}
    ok(rep != {}, "%s active: a report after 25 frames" % tag)
    calls = stage(rep, "probe_pipe", "calls")
    ok(calls is not None and calls >= 25, "%s active: FIONREAD on pipes counted (%s)"
       % (tag, calls))
    ok(stage(rep, "probe_null", "calls") == 1 and stage(rep, "probe_null", "errors") == 1,
       "%s active: FIONREAD on /dev/null, with its ENOTTY" % tag)
    ok(stage(rep, "probe_tcgets", "calls") == 2, "%s active: TCGETS on any fd (%s)"
       % (tag, stage(rep, "probe_tcgets", "calls")))
    # the probe's waits on its pipe after the pipe's first FIONREAD (a
    # dequeue stage), each timed as probe_pipe.wait: the time64 probe's
    # through __ppoll64, __select64, __pselect64, __epoll_pwait2_time64
    waits = [int(l.split(": ")[1]) for l in bare if l.startswith("waits on the device: ")]
    ok(waits and waits[0] >= 8 and stage(rep, "probe_pipe.wait", "calls") == waits[0],
       "%s active: every wait on the pipe timed as probe_pipe.wait (%s of %s)"
       % (tag, stage(rep, "probe_pipe.wait", "calls"), waits))


def main():
    sep = sys.argv.index("--")
    lib, fionread, tcgets, nm = sys.argv[1], int(sys.argv[2], 0), int(sys.argv[3], 0), sys.argv[4]
    probes = sys.argv[5:sep]
    runner = sys.argv[sep + 1:]
    with tempfile.TemporaryDirectory(prefix="pl-hooks-cross.") as tmp:
        for p in probes:
            path, _, kind = p.partition(":")
            check_probe(lib, fionread, tcgets, nm, path, kind == "time64", runner, tmp)
    return done()


if __name__ == "__main__":
    sys.exit(main())
