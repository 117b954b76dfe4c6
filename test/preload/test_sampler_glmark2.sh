#!/bin/sh
# glmark2 (Debian's glmark2-x11) under the sampler, on a private Xvfb with
# Mesa's software rasteriser. glmark2 links no GL library: it dlopens
# libGL.so.1 and finds glXSwapBuffers with dlsym (preload/lookup_hooks.c),
# and closes libGL before it exits (names are taken when a stack is first
# seen). Its status and output as bare, a report with render_stats within
# 5% of glmark2's own FPS, Mesa on top of the busy stacks.
#
#   test_sampler_glmark2.sh PRELOAD_LIB
# Xvfb and glmark2 missing is a failure: scripts/deps installs them.
lib=$1
. "$(dirname "$0")/tap_lib.sh"

for p in Xvfb glmark2; do
	if ! command -v $p >/dev/null 2>&1; then
		not_ok "$p is installed (scripts/deps: xvfb glmark2-x11)"
		tap_end
	fi
done
tmp_dir glmark2
start_xvfb
shim_free_env
bench="-b build:duration=20"

timeout -s KILL 120 glmark2 $bench >"$dir/bare.out" 2>&1
bare_rc=$?
check "glmark2 runs on Xvfb $DISPLAY without the shim (status $bare_rc)" [ $bare_rc -eq 0 ]
# the shim in glmark2 only: a preloaded timeout would say, rightly, that
# it never swaps
timeout -s KILL 120 env LD_PRELOAD="$lib" PERFLINK_SAMPLE=1 PERFLINK_SAMPLE_WINDOW=5 \
	PERFLINK_SAMPLE_OUT="$dir/gm.txt" glmark2 $bench >"$dir/gm.out" 2>&1
rc=$?
check "under the sampler: the same status ($rc)" [ $rc -eq $bare_rc ]
# the figures differ from run to run, nothing else may
figures='s/FPS: [0-9]*/FPS: N/; s/FrameTime: [0-9.]* ms/FrameTime: N ms/; s/Score: [0-9]*/Score: N/'
sed "$figures" "$dir/bare.out" >"$dir/bare.norm"
sed "$figures" "$dir/gm.out" >"$dir/gm.norm"
check "under the sampler: the same output but for its figures" cmp -s "$dir/bare.norm" "$dir/gm.norm"
diff "$dir/bare.norm" "$dir/gm.norm" | head -n 6 | sed 's/^/# /'
grep 'FPS' "$dir/gm.out" | sed 's/^/# /'
sed -n '1,14s/^/# /p' "$dir/gm.txt" 2>/dev/null
check "a report was written" grep -q '^==== ' "$dir/gm.txt"
theirs=$(sed -n 's/.*FPS: \([0-9]*\).*/\1/p' "$dir/gm.out" | head -n 1)
# a window every 5 s, each with render_stats of the 5 s before it: the
# second to the fourth lie inside the 20 s scene (the first holds
# glmark2's start-up), 15 of its 20 s
ours=$(sed -n 's/^render_stats fps=\([0-9.]*\) .*/\1/p' "$dir/gm.txt" 2>/dev/null |
	sed -n '2,4p' | awk '{ s += $1; n++ } END { if (n == 3) printf "%.1f", s / n }')
check "render_stats fps ${ours:-none} (windows 2-4) within 5% of glmark2's own ${theirs:-none}" \
	awk -v a="${ours:-0}" -v b="${theirs:-0}" 'BEGIN { exit !(b > 0 && a >= b * 0.95 && a <= b * 1.05) }'
# Mesa: the DRI driver (swrast_dri.so, stripped: module+offset) and its
# JIT's code ([anonymous code]): the hottest on the stack outside glmark2
# and libc (whose memset Mesa calls), as preload_sampler_gl asks of glxgears
top=$(sed -n '/^-- on the stack/,/^--/p' "$dir/gm.txt" | sed '1d;$d' | sort -t% -k1 -rn |
	grep -Ev '\((glmark2|libc\.so\.6)\)$| glmark2\+0x' | head -n 1)
check "the hottest function on the stack outside glmark2 and libc is Mesa's: '$top'" \
	sh -c "echo '$top' | grep -Eq 'swrast_dri\\.so|libgallium|libLLVM|\\[anonymous code\\]'"
mesa=$(echo "$top" | awk '{ print $1 }')
check "a Mesa frame on the stack of most busy samples: ${mesa:-none}" \
	awk -v m="${mesa%\%}" 'BEGIN { exit !(m + 0 >= 50) }'
check "no frame left without a name ([unknown])" sh -c "! grep -q 'unknown' '$dir/gm.txt'"
tap_end
