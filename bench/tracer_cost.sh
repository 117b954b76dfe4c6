#!/usr/bin/env bash
# The C tracer against the Python one it replaces, side by side in one run:
# idle processes up to PROCESSES in all, one for each default watched name
# among them, both tracers at the same --hz with their default settings
# against the same processes for the same time, in three conditions one
# after the other:
#   quiet  nothing else started;
#   churn  a loop starting `sh -c true` as fast as it can (hundreds of new
#          pids a second), running through both tracers' run;
#   stall  a dd rewriting a 1 GiB file in place with conv=fsync (the bully)
#          and a victim writing 4 KiB blocks with O_DSYNC under a watched
#          name (controlsd), so that both tracers see real I/O waits and D
#          states. In place (conv=notrunc): a dd that truncates its file
#          frees 1 GiB of page cache a round, which a VM's balloon may hand
#          back to the hypervisor and map again a page at a time, charged to
#          whichever process touches it first. STALL_TRUNCATE=1 takes the
#          truncating dd.
# For each it prints both tools' CPU per tick (schedstat run time over the
# ticks each wrote), the ratio (Python/perflink) and perflink's p99
# sampler_ms. Targets: ratio >= 15 in each condition, p99 under 2 ms.
#
#   bench/tracer_cost.sh [PERFLINK] [SECONDS] [PROCESSES] [MODES]
#
# PERFLINK defaults to build/daemon/perflink, SECONDS to 30, PROCESSES to
# 300, MODES to "quiet churn stall"; PERFLINK_ARGS adds options to perflink
# trace (--cost-split prints where its tick went); the Python tracer is
# ../shared/seeds/io_stall_tracer.py beside the repository (PYTRACER
# overrides). Both tracers renice themselves by 10, as the Python tool does,
# and run at the same time, so they see the same load.
set -euo pipefail

top=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
perflink=${1:-$top/build/daemon/perflink}
seconds=${2:-30}
processes=${3:-300}
modes=${4:-quiet churn stall}
pytracer=${PYTRACER:-$top/../shared/seeds/io_stall_tracer.py}
stall_conv=notrunc,fsync
[ "${STALL_TRUNCATE:-0}" = 1 ] && stall_conv=fsync
hz=10
names="controlsd car.c selfd ui loggerd encoderd modeld camerad locationd paramsd navd mapd"

[ -x "$perflink" ] || { echo "tracer_cost: no perflink at $perflink" >&2; exit 2; }
[ -r "$pytracer" ] || { echo "tracer_cost: no Python tracer at $pytracer" >&2; exit 2; }
command -v python3 >/dev/null || { echo "tracer_cost: needs python3" >&2; exit 2; }
for m in $modes; do
	case $m in quiet|churn|stall) ;; *) echo "tracer_cost: unknown mode $m" >&2; exit 2;; esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/tracer_cost.XXXXXX")
pids=()
load=()
stop_load() {
	# Only what this script started, by pid: the loops' children end with
	# their loop (each is a short-lived sh or dd).
	for p in "${load[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${load[@]}"; do wait "$p" 2>/dev/null || true; done
	load=()
}
cleanup() {
	stop_load
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
count_processes() { find /proc -maxdepth 1 -name "[0-9]*" 2>/dev/null | wc -l || true; }
idle=$((processes - $(count_processes)))
for _ in $(seq "$idle"); do
	sleep 100000 &
	pids+=($!)
done
disk=$(awk '$4 > 0 && $3 !~ /^(loop|ram|zram|dm-)/ && $3 !~ /[0-9]$/ {print $3; exit}' /proc/diskstats)
disk=${disk:-sda}
mkdir "$work/victim"
ln -s "$(command -v dd)" "$work/victim/controlsd"

start_load() {
	case $1 in
	churn)
		(while :; do sh -c true; done) &
		load+=($!)
		;;
	stall)
		(while :; do
			dd if=/dev/zero of="$work/big" bs=1M count=1024 conv="$stall_conv" status=none
		 done) &
		load+=($!)
		(while :; do
			"$work/victim/controlsd" if=/dev/zero of="$work/victim.dat" bs=4k \
				count=2000 oflag=dsync status=none
		 done) &
		load+=($!)
		;;
	esac
}

# run_ns from schedstat, and utime+stime in ms.
cpu_of() {
	local ss st
	ss=$(cut -d' ' -f1 "/proc/$1/schedstat")
	st=$(sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}')
	echo "$ss $((st * 1000 / $(getconf CLK_TCK)))"
}
# pids handed out over SECONDS, from loadavg's last pid once a second: a
# wrap of pid_max starts again at 300 (RESERVED_PIDS); at 32768 (Debian's
# default) a churn of 1000 pids a second wraps in about 30 s, which one
# reading at each end cannot tell from no pid at all
pids_handed_out_over() {
	local max lp prev total=0
	max=$(cat /proc/sys/kernel/pid_max)
	read -r _ _ _ _ prev </proc/loadavg
	for _ in $(seq "$1"); do
		sleep 1
		read -r _ _ _ _ lp </proc/loadavg
		total=$((total + (lp >= prev ? lp - prev : max - prev + lp - 300)))
		prev=$lp
	done
	echo "$total"
}
# Ticks a tool has written: one SYS row each (both flush every tick). On a
# loaded machine a tool may run fewer ticks than SECONDS x HZ, so CPU is
# divided by the ticks each one ran in the window.
ticks_in() { if [ -f "$1" ]; then grep -c ',SYS,' "$1" || true; else echo 0; fi; }

table="$work/table"
: >"$table"
for mode in $modes; do
	start_load "$mode"
	rm -f "$work/py.csv" "$work/pl.csv" # the last mode's ticks are not this one's
	sleep 1
	python3 "$pytracer" --out "$work/py.csv" --hz $hz --disk "$disk" 2>"$work/py.err" &
	py=$!
	# shellcheck disable=SC2086 # PERFLINK_ARGS is words
	"$perflink" trace --out "$work/pl.csv" --hz $hz --disk "$disk" ${PERFLINK_ARGS:-} \
		2>"$work/pl.err" &
	pl=$!
	# both past their start-up: a second, and a first tick written each
	sleep 1
	for _ in $(seq 100); do
		[ "$(ticks_in "$work/py.csv")" -gt 0 ] && [ "$(ticks_in "$work/pl.csv")" -gt 0 ] && break
		sleep 0.1
	done
	py0=$(cpu_of $py)
	pl0=$(cpu_of $pl)
	pyt0=$(ticks_in "$work/py.csv")
	plt0=$(ticks_in "$work/pl.csv")
	nproc_now=$(count_processes)
	handed_out=$(pids_handed_out_over "$seconds")
	py1=$(cpu_of $py)
	pl1=$(cpu_of $pl)
	pyt1=$(ticks_in "$work/py.csv")
	plt1=$(ticks_in "$work/pl.csv")
	kill -TERM $pl
	wait $pl || true
	# SIGTERM: a background job of a script ignores SIGINT, and so does Python then
	kill -TERM $py 2>/dev/null || true
	wait $py 2>/dev/null || true
	stop_load
	rm -f "$work/big" "$work/victim.dat"

	read -r py_ns0 py_ms0 <<<"$py0"
	read -r py_ns1 py_ms1 <<<"$py1"
	read -r pl_ns0 pl_ms0 <<<"$pl0"
	read -r pl_ns1 pl_ms1 <<<"$pl1"
	summary=$(grep 'perflink trace:.*ticks,' "$work/pl.err" | tail -1)
	p99=$(sed -n 's/.*sampler_ms p50 [0-9.]* p99 \([0-9.]*\).*/\1/p' <<<"$summary")
	newps=$((handed_out / seconds))
	echo "$mode $((py_ns1 - py_ns0)) $((pl_ns1 - pl_ns0)) $((py_ms1 - py_ms0))" \
	     "$((pl_ms1 - pl_ms0)) $nproc_now $newps ${p99:-0} $((pyt1 - pyt0))" \
	     "$((plt1 - plt0))" >>"$table"
	echo "  $mode: $summary"
	grep '^perflink trace: cost' "$work/pl.err" | sed "s/^perflink trace: /  $mode: /" || true
done

echo "tracer_cost: $hz Hz, $seconds s a mode side by side, disk $disk, $processes processes" \
     "(12 watched); CPU per tick from schedstat; stall dd conv=$stall_conv"
awk -v ticks=$((seconds * hz)) '
BEGIN {
	printf "  %-6s %6s %8s %14s %16s %7s %9s %13s\n", "mode", "procs", "new/s", "python ms/tick",
	       "perflink ms/tick", "ratio", "p99 ms", "ticks py/pl"
}
{
	py = $9 > 0 ? $2 / 1e6 / $9 : 0; pl = $10 > 0 ? $3 / 1e6 / $10 : 0
	printf "  %-6s %6d %8d %14.3f %16.3f %7.1f %9.3f %6d/%-6d (target ratio >= 15, p99 < 2; utime+stime %d/%d ms)\n",
	       $1, $6, $7, py, pl, (pl > 0 ? py / pl : 0), $8, $9, $10, $4, $5
	if ($9 < ticks * 0.9 || $10 < ticks * 0.9)
		printf "  %-6s a tool ran fewer than 90%% of its %d ticks: the machine is overloaded\n", $1, ticks
}' "$table"
