#!/usr/bin/env bash
# The C tracer against the Python one it replaces, side by side in one run:
# 200+ idle processes plus one process for each default watched name, both
# tracers at the same --hz against the same processes for the same time, in
# three conditions one after the other:
#   quiet  nothing else started;
#   churn  a loop starting `sh -c true` as fast as it can (hundreds of new
#          pids a second), running through both tracers' run;
#   stall  a dd rewriting a 1 GiB file in place with conv=fsync (the bully)
#          and a victim writing 4 KiB blocks with O_DSYNC under a watched
#          name (controlsd), so that both tracers see real I/O waits and D
#          states. In place (conv=notrunc): a dd that truncates the file
#          frees 1 GiB of page cache each round, which on the test VM the
#          guest reports free to the hypervisor (virtio-balloon free page
#          reporting); the guest's memory is then mapped again a page at a
#          time, 15-20 us a page, charged to whatever process touches it
#          first, about every 3 s. A canary touching 1024 pages every
#          100 ms was charged up to 22.8 ms for it (p99 15.4 ms, against
#          0.15 ms at p50), one touching none 1 ms at most; with the file
#          rewritten in place, neither moved. That is the VM, not what a
#          device does, and it fell on a tracer by the pages it touches,
#          not by its CPU time. STALL_TRUNCATE=1 takes the truncating dd.
# For each it prints both tools' CPU per tick, the ratio (Python/perflink)
# and perflink's p99 sampler_ms (perflink's CPU includes what its D watch
# costs the tasks that switch, the "watch us", while the watch is the one on
# sched_switch: the machine's context switches a tick while it was attached
# times what it adds to one, measured here first, or the kernel's count of
# its program's run time, whichever is more; the scan runs in perflink's
# own CPU time), then perflink's own split of a tick
# (--cost-split: the system files, the watched and the other processes, the
# directory scans, the new pids, the output), what its CPU time holds besides
# the ticks, and the cost model fitted from it. Targets (DESIGN.md, issue 14): ratio >= 30 quiet and under churn, >= 20
# under stall load, p99 sampler_ms under 2 ms.
#
#   bench/tracer_cost.sh [PERFLINK] [SECONDS] [IDLE_PROCESSES] [MODES]
#
# PERFLINK defaults to build/daemon/perflink; MODES to "quiet churn stall";
# the ping-pong that measures a switch is switch_pingpong in the build's
# bench/ (PINGPONG overrides);
# PERFLINK_ARGS adds options to perflink trace (--d-watch=no: without the
# BPF watch of D states, as where it cannot load);
# the Python tracer is ../shared/seeds/io_stall_tracer.py beside the
# repository (PYTRACER overrides). CPU time is each tracer's schedstat run
# time (ns), cross-checked with utime+stime. Both tracers renice themselves
# by 10 and pin to CPU 0, as the Python tool does; they run at the same
# time, so they see the same load. perflink runs with --cost-split, which
# adds two clock reads a file read: its figures here are slightly
# pessimistic.
set -euo pipefail

top=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
perflink=${1:-$top/build/daemon/perflink}
seconds=${2:-20}
idle=${3:-200}
modes=${4:-quiet churn stall}
pytracer=${PYTRACER:-$top/../shared/seeds/io_stall_tracer.py}
stall_conv=notrunc,fsync
[ "${STALL_TRUNCATE:-0}" = 1 ] && stall_conv=fsync
hz=10
names="controlsd car.c selfd ui loggerd encoderd modeld camerad locationd paramsd navd mapd"

[ -x "$perflink" ] || { echo "tracer_cost: no perflink at $perflink" >&2; exit 2; }
pingpong=${PINGPONG:-$(dirname "$perflink")/../bench/switch_pingpong}
[ -x "$pingpong" ] || { echo "tracer_cost: no switch_pingpong at $pingpong" >&2; exit 2; }
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

# What the switch watch adds to a context switch, in ns: a ping-pong on
# one CPU (two switches a round trip) with and without perflink's switch
# watch attached, five pairs in turn, the median difference over two.
# perflink runs as a user runs it (no --cost-split, whose run-time
# statistics make a switch dearer still) on the other CPU, the scan kept
# off with the probe seam a user has (PERFLINK_PROBE_FAIL), so that it
# cannot steer away from the switch watch. The kernel's count of the
# program's run time leaves out the tracepoint's dispatch around it: on the
# test VM, 87 ns a switch with its statistics on, where the ping-pong said
# 48-132 ns without them (median 62-74).
switch_cost_ns() {
	local pin_pp="" pin_pl="" diffs=() bare with pl_sw
	if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
		pin_pp="taskset -c 1"
		pin_pl="taskset -c 0"
	fi
	for _ in 1 2 3 4 5; do
		bare=$($pin_pp "$pingpong" 200000)
		PERFLINK_PROBE_FAIL=task_iter $pin_pl "$perflink" trace --out "$work/sw.csv" \
			--hz $hz --disk "$disk" 2>/dev/null &
		pl_sw=$!
		for _ in $(seq 50); do
			[ "$(ticks_in "$work/sw.csv")" -gt 0 ] && break
			sleep 0.1
		done
		with=$($pin_pp "$pingpong" 200000)
		kill -TERM $pl_sw
		wait $pl_sw || true
		rm -f "$work/sw.csv" "$work/sw.events.jsonl"
		diffs+=($(( (with - bare) / 2 )))
	done
	printf '%s\n' "${diffs[@]}" | sort -n | sed -n 3p
}
switch_ns=$(switch_cost_ns)
switch_ns=${switch_ns:-0}
[ "$switch_ns" -ge 0 ] || switch_ns=0 # noise under 0: nothing
echo "tracer_cost: the switch watch adds ${switch_ns} ns a context switch (ping-pong, median of 5)"

table="$work/table"
splits="$work/splits"
: >"$table"
for mode in $modes; do
	start_load "$mode"
	rm -f "$work/py.csv" "$work/pl.csv" # the last mode's ticks are not this one's
	sleep 1
	python3 "$pytracer" --out "$work/py.csv" --hz $hz --disk "$disk" 2>"$work/py.err" &
	py=$!
	# shellcheck disable=SC2086 # PERFLINK_ARGS is words
	"$perflink" trace --out "$work/pl.csv" --hz $hz --disk "$disk" --cost-split \
		${PERFLINK_ARGS:-} 2>"$work/pl.err" &
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
	nproc_now=$(find /proc -maxdepth 1 -name "[0-9]*" 2>/dev/null | wc -l || true)
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
	# the switch watch costs the tasks that switch, not perflink: the
	# switches a tick while it was attached times what it adds to one,
	# over the share of the run's ticks it was attached, or the kernel's
	# count of its program's run time, whichever is more (the ping-pong is
	# a switch at its cheapest, the count leaves the dispatch out), is
	# added to perflink's CPU
	bpf_run_us=$(sed -n 's/^perflink trace: cost d_watch .* its BPF program \([0-9.]*\) us\/tick.*/\1/p' \
		"$work/pl.err" | tail -1)
	bpf_us=$(sed -n 's/^perflink trace: cost d_watch .* attached \([0-9]*\) ticks with \([0-9.]*\) context switches\/tick.*/\1 \2/p' \
		"$work/pl.err" | tail -1 | awk -v ns="$switch_ns" -v run="$(sed -n 's/^perflink trace: \([0-9]*\) ticks,.*/\1/p' "$work/pl.err" | tail -1)" \
		'NF == 2 && run > 0 { printf "%.1f", $2 * ns / 1000 * ($1 < run ? $1 / run : 1) }')
	bpf_us=$(awk -v a="${bpf_us:-0}" -v b="${bpf_run_us:-0}" 'BEGIN { printf "%.1f", (a + 0 > b + 0) ? a : b }')
	echo "$mode $((py_ns1 - py_ns0)) $((pl_ns1 - pl_ns0)) $((py_ms1 - py_ms0))" \
	     "$((pl_ms1 - pl_ms0)) $nproc_now $newps ${p99:-0} $((pyt1 - pyt0))" \
	     "$((plt1 - plt0)) ${bpf_us:-0}" >>"$table"
	sed -n "s/^perflink trace: cost \([a-z_]*\) *\([0-9.]*\) us\/tick, items *\([0-9.]*\)\/tick (\([0-9.]*\) us each), reads *\([0-9.]*\)\/tick (\([0-9.]*\) us in reads)/$mode \1 \2 \3 \4 \5 \6/p" \
		"$work/pl.err" >>"$splits"
	sed -n "s/^perflink trace: cost split, us per tick over .*: tick CPU \([0-9.]*\)/$mode tick \1/p" \
		"$work/pl.err" >>"$splits"
	# perflink's whole CPU a tick (schedstat), to set the split's sum against
	plt=$((plt1 - plt0))
	[ "$plt" -gt 0 ] && echo "$mode sched $(( (pl_ns1 - pl_ns0) / plt / 1000 ))" >>"$splits"
	echo "$mode bpf ${bpf_us:-0}" >>"$splits"
	echo "  $mode: $summary"
	# which D watch was used (the scan or the switch one), and how often it changed
	dwatch=$(grep '^perflink trace: cost d_watch .* at the end' "$work/pl.err" | tail -1 || true)
	[ -n "$dwatch" ] && echo "  $mode: ${dwatch#perflink trace: cost }"
done

echo "tracer_cost: $hz Hz, $seconds s a mode side by side, disk $disk, $idle idle processes" \
     "+ 12 watched; CPU per tick from schedstat; stall dd conv=$stall_conv"
awk -v ticks=$((seconds * hz)) '
BEGIN {
	printf "  %-6s %6s %8s %14s %16s %9s %7s %9s %13s\n", "mode", "procs", "new/s", "python ms/tick",
	       "perflink ms/tick", "(watch us)", "ratio", "p99 ms", "ticks py/pl"
}
{
	py = $9 > 0 ? $2 / 1e6 / $9 : 0; pl = $10 > 0 ? $3 / 1e6 / $10 + $11 / 1000 : 0
	target = $1 == "stall" ? 20 : 30
	printf "  %-6s %6d %8d %14.3f %16.3f %9.1f %7.1f %9.3f %6d/%-6d (target ratio >= %d, p99 < 2; utime+stime %d/%d ms)\n",
	       $1, $6, $7, py, pl, $11, (pl > 0 ? py / pl : 0), $8, $9, $10, target, $4, $5
	if ($9 < ticks * 0.9 || $10 < ticks * 0.9)
		printf "  %-6s a tool ran fewer than 90%% of its %d ticks: the machine is overloaded\n", $1, ticks
}' "$table"

# The split, wall us per tick (reads: read syscalls a tick, a process's CPU
# clock read counted as one), perflink's CPU outside its ticks, and the cost
# model from it: a tick costs the system files and the output, plus each
# watched process, plus each other process checked, plus each new pid,
# plus the D watch's drain and the stall detection, a tick each.
awk '
$2 == "tick" { tick[$1] = $3; if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 }; next }
$2 == "sched" { sched[$1] = $3; next }
$2 == "bpf" { bpf[$1] = $3; next }
{
	us[$1, $2] = $3; items[$1, $2] = $4; each[$1, $2] = $5; reads[$1, $2] = $6
	if (!($2 in pseen)) { pseen[$2] = 1; phases[np++] = $2 }
	if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 }
}
END {
	if (!n) exit
	printf "  perflink split, wall us/tick (items/tick, reads/tick):\n"
	printf "  %-10s", "phase"
	for (i = 0; i < n; i++) printf " %26s", order[i]
	printf "\n"
	for (j = 0; j < np; j++) {
		ph = phases[j]
		printf "  %-10s", ph
		for (i = 0; i < n; i++)
			printf " %8.1f (%7.2f, %6.2f)", us[order[i], ph], items[order[i], ph], reads[order[i], ph]
		printf "\n"
	}
	printf "  %-10s", "tick"
	for (i = 0; i < n; i++) printf " %8.1f %17s", tick[order[i]], ""
	printf "\n"
	# what schedstat counts besides the ticks: going to sleep until the
	# next one and waking (a C loop that does nothing but sleep 100 ms at a
	# time was charged ~110 us a wake on the shared test VM), the loop
	# around the tick
	printf "  %-10s", "outside"
	for (i = 0; i < n; i++) printf " %8.1f %17s", sched[order[i]] - tick[order[i]], ""
	printf "\n"
	for (i = 0; i < n; i++) {
		m = order[i]; fixed = 0
		split("diskstats vmstat meminfo pressure stat loadavg output", f, " ")
		for (k in f) fixed += us[m, f[k]]
		printf "  model %-6s CPU %.0f us a tick = %.0f outside the tick (sleep, wake) + tick %.0f us" \
		       " = %.0f fixed (system files, output)" \
		       " + %.2f watched x %.1f us + %.1f others read x %.1f us" \
		       " + %.0f skipped x %.2f us + %.2f scans x %.0f us + %.1f pids probed x %.1f us" \
		       " + %.2f new pids x %.1f us + %.1f us the D watch (its ring, or the scan)" \
		       " + %.1f us the stall detection and its events;" \
		       " and %.1f us of the D watch in the tasks switching\n",
		       m, sched[m], sched[m] - tick[m], tick[m], fixed, items[m, "watched"], each[m, "watched"],
		       items[m, "others"], each[m, "others"], items[m, "skipped"], each[m, "skipped"],
		       items[m, "scan"], each[m, "scan"], items[m, "probe"], each[m, "probe"],
		       items[m, "new_pids"], each[m, "new_pids"], us[m, "d_watch"], us[m, "events"], bpf[m]
	}
}' "$splits"
