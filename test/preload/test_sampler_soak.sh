#!/bin/sh
# The sampler soak (TAP): test/preload/soak.c's threads allocate, free,
# dlopen and dlclose without pause while the render thread is sampled at
# 1 kHz with a report every second; on x86-64 it also spins in a function
# libunwind cannot walk. No deadlock (the run ends, the windows keep
# coming), no crash, samples taken, failed walks counted.
#
#   test_sampler_soak.sh PRELOAD_LIB SOAK SOAK_LIB SECONDS [THREADS]
#
# Also the body of bench/sampler_soak.sh, with a longer SECONDS.
lib=$1 soak=$2 soak_lib=$3 seconds=${4:-10} threads=${5:-4}
. "$(dirname "$0")/tap_lib.sh"

if ! command -v timeout >/dev/null 2>&1; then
	echo "1..0 # SKIP timeout (coreutils) is not installed"
	exit 0
fi
tmp_dir soak
shim_free_env

bad=""
case $(uname -m) in x86_64) bad=--bad-frames ;; esac

"$soak" 1 "$threads" "$soak_lib" $bad >"$dir/bare.out" 2>&1
check "the soak runs without the shim" [ $? -eq 0 ]

# a hang is killed at three times the run (the sampler must never block
# the program: a deadlock in the handler stops the render thread for good)
limit=$((seconds * 3 + 20))
LD_PRELOAD=$lib PERFLINK_SAMPLE=1 PERFLINK_SAMPLE_HZ=1000 PERFLINK_SAMPLE_WINDOW=1 \
PERFLINK_SAMPLE_MAX_BYTES=999999999 \
PERFLINK_SAMPLE_OUT="$dir/soak.txt" timeout -s KILL "$limit" \
	"$soak" "$seconds" "$threads" "$soak_lib" $bad >"$dir/out" 2>&1
rc=$?
case $rc in
0) ok "soak of $seconds s under the sampler at 1 kHz ended normally" ;;
137) not_ok "soak under the sampler hung (killed after $limit s): a deadlock" ;;
*) not_ok "soak under the sampler failed with status $rc (128 + signal: a crash)" ;;
esac
sed 's/^/# /' "$dir/out"
loops=$(sed -n 's/^loops \([0-9]*\) dlopens \([0-9]*\).*/\2/p' "$dir/out")
check "threads kept loading and unloading libraries: ${loops:-0} dlopen/dlclose" \
	[ "${loops:-0}" -gt $((seconds * 50)) ]

cat "$dir/soak.txt.1" "$dir/soak.txt" >"$dir/all" 2>/dev/null
windows=$(grep -c '^==== ' "$dir/all")
samples=$(sed -n 's/^==== .* of \([0-9]*\) samples.*/\1/p' "$dir/all" | awk '{ s += $1 } END { print s + 0 }')
cut=$(sed -n 's/^==== .*, \([0-9]*\) cut short.*/\1/p' "$dir/all" | awk '{ s += $1 } END { print s + 0 }')
# windows of one second, some without a busy sample (no text): most of them
check "the sampler thread kept writing windows: $windows in $seconds s" \
	[ "$windows" -ge $((seconds / 2)) ]
check "samples taken: $samples" [ "$samples" -ge 50 ]
if [ -n "$bad" ]; then
	check "walks libunwind could not finish are counted: $cut" [ "$cut" -gt 0 ]
	check "and named where they stopped" grep -q 'soak_bad_frame' "$dir/all"
else
	echo "ok $((n + 1)) # SKIP no unwalkable frame on $(uname -m)"
	n=$((n + 1))
fi
bad_lines=$(grep -v -E '^(==== .* ====|render_stats .*|-- .*|[ 0-9]{3}[0-9]\.[0-9]% [^ ].*|)$' "$dir/all" | head -3)
check "every report line in the window format${bad_lines:+ (first bad: $bad_lines)}" [ -z "$bad_lines" ]
tap_end
