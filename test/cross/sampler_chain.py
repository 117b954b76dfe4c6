#!/usr/bin/env python3
"""The render sampler's unwinding on this build's target (TAP).

Runs test/cross/chain (main -> render_loop -> chain_1 .. chain_6, all CPU in
chain_6) under libperflink-preload.so with PERFLINK_SAMPLE=1, through the
cross file's runner (qemu-user) when there is one, and reads the sampler's
folded stacks: frames per sample, and the share of busy samples in which
the whole known chain chain_1;...;chain_6 appears, innermost last.

  sampler_chain.py PRELOAD_LIB CHAIN_EXE MIN_INNER_PCT MIN_CHAIN_PCT [RUNNER WORD...]

MIN_INNER_PCT, MIN_CHAIN_PCT: the shares of busy samples whose innermost
frame is chain_6, and which hold the whole chain, that the test requires
(what this target and build reach: README's per-target section; 0 skips
that check). The figures are printed as TAP comments, and as one line
"# figures: ..." for bench use.
"""
import os
import subprocess
import sys
import tempfile

from tap import done, ok, skip

CHAIN = ";".join("chain_%d" % i for i in range(1, 7))


def main():
    lib, exe = sys.argv[1], sys.argv[2]
    min_inner, min_chain = float(sys.argv[3]), float(sys.argv[4])
    runner = sys.argv[5:]
    seconds = os.environ.get("PL_CHAIN_SECONDS", "3")
    with tempfile.TemporaryDirectory(prefix="pl-chain.") as tmp:
        out = os.path.join(tmp, "render.txt")
        env = {"PERFLINK_SAMPLE": "1", "PERFLINK_SAMPLE_OUT": out,
               "PERFLINK_SAMPLE_HZ": "100", "PERFLINK_SAMPLE_WINDOW": "600"}
        if runner:
            # qemu-user: the guest's environment, not qemu's own (an
            # LD_PRELOAD of a foreign library would reach qemu itself)
            cmd = list(runner)
            for k, v in list(env.items()) + [("LD_PRELOAD", lib)]:
                cmd += ["-E", "%s=%s" % (k, v)]
            cmd += [exe, seconds]
            penv = dict(os.environ)
        else:
            cmd = [exe, seconds]
            penv = dict(os.environ, LD_PRELOAD=lib, **env)
        r = subprocess.run(cmd, env=penv, capture_output=True, text=True, timeout=300)
        ok(r.returncode == 0 and r.stdout.startswith("frames "),
           "chain ran under the sampler (%s)" % (" ".join(runner[:1]) or "native"))
        for line in r.stderr.splitlines():
            print("#   stderr: " + line)
        try:
            report = open(out).read()
        except OSError:
            report = ""
        try:
            folded = open(out + ".folded").read()
        except OSError:
            folded = ""
        head = next((l for l in report.splitlines() if l.startswith("==== ")), "")
        ok(head != "", "a report was written")
        print("#   " + head)
        samples = depth_sum = chained = inner6 = 0
        bad = 0
        for line in folded.splitlines():
            stack, _, count = line.rpartition(" ")
            if not stack or not count.isdigit():
                bad += 1
                continue
            c = int(count)
            frames = stack.split(";")
            samples += c
            depth_sum += c * len(frames)
            if CHAIN in stack:
                chained += c
            if frames[-1] == "chain_6":
                inner6 += c
        ok(bad == 0, "every folded line is 'frame;...;frame COUNT'")
        ok(samples >= 50, "at least 50 busy samples (%d)" % samples)
        if samples == 0:
            samples = 1
        fps = depth_sum / samples
        chain_pct = 100.0 * chained / samples
        inner_pct = 100.0 * inner6 / samples
        top = sorted(((int(l.rpartition(" ")[2]), l.rpartition(" ")[0])
                      for l in folded.splitlines() if l.rpartition(" ")[2].isdigit()),
                     reverse=True)[:3]
        for c, s in top:
            print("#   %5d  %s" % (c, s))
        print("# figures: target=%s program=%s samples=%d frames_per_sample=%.1f chain_pct=%.1f "
              "innermost_chain_6_pct=%.1f" % (os.path.basename(runner[0]) if runner else
                                              "native", os.path.basename(exe), samples, fps,
                                              chain_pct, inner_pct))
        for what, pct, need in (("innermost frame chain_6", inner_pct, min_inner),
                                ("the whole chain chain_1..chain_6", chain_pct, min_chain)):
            if need > 0:
                ok(pct >= need, "%s in %.1f%% of samples (at least %g%%)" % (what, pct, need))
            else:
                skip("%s in %.1f%% of samples: not expected of this build" % (what, pct))
    return done()


if __name__ == "__main__":
    sys.exit(main())
