#!/usr/bin/env bash
# The C tracer against the Python one it replaces, side by side in one run:
# 200+ idle processes plus one process for each default watched name, both
# tracers at the same --hz against the same processes for the same time;
# prints each one's CPU per tick, the ratio and perflink's sampler_ms.
# Targets (DESIGN.md): perflink at most 1/30 of the Python CPU, p99
# sampler_ms under 2 ms.
#
#   bench/tracer_cost.sh [PERFLINK] [SECONDS] [IDLE_PROCESSES]
#
# PERFLINK defaults to build/daemon/perflink; the Python tracer is
# ../shared/seeds/io_stall_tracer.py beside the repository (PYTRACER
# overrides). CPU time is each tracer's schedstat run time (ns), cross-checked
# with utime+stime. Both tracers renice themselves by 10 and pin to CPU 0, as
# the Python tool does; they run at the same time, so they see the same load.
set -euo pipefail

top=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
perflink=${1:-$top/build/daemon/perflink}
seconds=${2:-20}
idle=${3:-200}
pytracer=${PYTRACER:-$top/../shared/seeds/io_stall_tracer.py}
hz=10
names="controlsd car.c selfd ui loggerd encoderd modeld camerad locationd paramsd navd mapd"

[ -x "$perflink" ] || { echo "tracer_cost: no perflink at $perflink" >&2; exit 2; }
[ -r "$pytracer" ] || { echo "tracer_cost: no Python tracer at $pytracer" >&2; exit 2; }
command -v python3 >/dev/null || { echo "tracer_cost: needs python3" >&2; exit 2; }

work=$(mktemp -d /tmp/tracer_cost.XXXXXX)
pids=()
cleanup() {
	# Only what this script started, by pid.
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# The watched names: a process's comm is the name it was executed under.
sleep_bin=$(command -v sleep)
for n in $names; do
	ln -s "$sleep_bin" "$work/$n"
	"$work/$n" 100000 &
	pids+=($!)
done
for _ in $(seq "$idle"); do
	sleep 100000 &
	pids+=($!)
done
disk=$(awk '$4 > 0 && $3 !~ /^(loop|ram|zram|dm-)/ && $3 !~ /[0-9]$/ {print $3; exit}' /proc/diskstats)
disk=${disk:-sda}
nproc_now=$(ls -d /proc/[0-9]* | wc -l)

# run_ns from schedstat, and utime+stime in ms.
cpu_of() {
	local ss st
	ss=$(cut -d' ' -f1 "/proc/$1/schedstat")
	st=$(sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}')
	echo "$ss $((st * 1000 / $(getconf CLK_TCK)))"
}

python3 "$pytracer" --out "$work/py.csv" --hz $hz --disk "$disk" 2>"$work/py.err" &
py=$!
pids+=($py)
"$perflink" trace --out "$work/pl.csv" --hz $hz --disk "$disk" 2>"$work/pl.err" &
pl=$!
pids+=($pl)
sleep 1 # both past their start-up
py0=$(cpu_of $py)
pl0=$(cpu_of $pl)
sleep "$seconds"
py1=$(cpu_of $py)
pl1=$(cpu_of $pl)
kill -TERM $pl
wait $pl || true
kill -INT $py 2>/dev/null || true

read -r py_ns0 py_ms0 <<<"$py0"
read -r py_ns1 py_ms1 <<<"$py1"
read -r pl_ns0 pl_ms0 <<<"$pl0"
read -r pl_ns1 pl_ms1 <<<"$pl1"
ticks=$((seconds * hz))
summary=$(grep 'perflink trace:.*ticks' "$work/pl.err" | tail -1)
p99=$(sed -n 's/.*sampler_ms p50 \([0-9.]*\) p99 \([0-9.]*\) max \([0-9.]*\).*/\2/p' <<<"$summary")
p50=$(sed -n 's/.*sampler_ms p50 \([0-9.]*\) p99.*/\1/p' <<<"$summary")
max=$(sed -n 's/.*sampler_ms p50 [0-9.]* p99 [0-9.]* max \([0-9.]*\).*/\1/p' <<<"$summary")

awk -v pyns=$((py_ns1 - py_ns0)) -v plns=$((pl_ns1 - pl_ns0)) \
    -v pyms=$((py_ms1 - py_ms0)) -v plms=$((pl_ms1 - pl_ms0)) \
    -v ticks=$ticks -v secs="$seconds" -v procs="$nproc_now" -v disk="$disk" \
    -v p50="$p50" -v p99="$p99" -v max="$max" 'BEGIN {
	py = pyns / 1e6 / ticks; pl = plns / 1e6 / ticks;
	printf "tracer_cost: %d processes, %d Hz, %d s side by side, disk %s\n", procs, 10, secs, disk
	printf "  python  io_stall_tracer.py  %8.3f ms CPU/tick  (%4.1f%% of a core; utime+stime %d ms)\n", py, py * 10 / 10, pyms
	printf "  C       perflink trace      %8.3f ms CPU/tick  (%4.2f%% of a core; utime+stime %d ms)\n", pl, pl * 10 / 10, plms
	printf "  ratio   python/perflink     %8.1f  (target >= 30)\n", (pl > 0 ? py / pl : 0)
	printf "  perflink sampler_ms         p50 %s  p99 %s  max %s  (target p99 < 2)\n", p50, p99, max
}'
echo "  $summary"
