# perflink-bench link, inside the rig (run by bench/perflink-bench, not by
# the test suite): back to back in one boot, AIO 8 KiB, AIO 16 KiB and
# synchronous 32 KiB, each 1,000 frames of 393,216 bytes at 20 fps with the
# host answering each frame with a 16-byte ack (a small reply, like a model's
# output), in interleaved segments (below), then a maximum-throughput run of
# each and the bare AIO stream.
# The device does not generate or check bytes (--no-check): under emulation
# that work would dwarf the link's. aio8k-max-drain repeats the AIO 8 KiB
# maximum with a host that only counts bytes, as the bare stream's does.
# Results go to the console as BENCH-* lines that the host side collects.
# BENCH_FRAMES (perflink-bench --frames) sets the latency runs' length: the
# p99.9 of 1,000 frames is one frame.
frames=${BENCH_FRAMES:-1000}
RUN_ENV=
# BENCH_ROUNDS (perflink-bench --rounds) sets how many times the maximum-
# throughput comparison is repeated; BENCH_MAX_ONLY=1 (--max-only) leaves out
# the latency runs and the single maximum runs; BENCH_VARIANTS=1
# (--variants) adds to each round the runs that split the link's cost
rounds=${BENCH_ROUNDS:-9}
# Between runs: let the last one's teardown (gadget unbind, process exits)
# finish before the next starts, so that no run pays for the one before it.
settle() {
	sleep 1
}
run() {
	name=$1 mode_args=$2 fps=$3 host_args=$4 extra=$5
	# RUN_ENV: variables for this run's device side only
	env $RUN_ENV perflink stream --setup-gadget --frames "$frames" --payload-bytes 393216 --fps "$fps" \
		--no-check $mode_args $extra --frames-csv /tmp/frames.csv --timeout 120 >/tmp/device.out 2>&1 &
	device=$!
	sampler=
	# the comparison with the bare stream runs, like it, without the
	# resource sampler beside it (under emulation its reads of /proc cost
	# the same two CPUs the link uses)
	case "$name" in
	*-drain*) ;;
	*)
		perflink resources --pids $device --interval 1 --pss-interval 10 \
			--out /tmp/res.jsonl >/dev/null 2>&1 &
		sampler=$!
		;;
	esac
	perflink-host --timeout 120 $host_args >/tmp/host.out 2>&1
	wait $device
	rc=$?
	[ -n "$sampler" ] && { kill -TERM $sampler 2>/dev/null; wait $sampler; }
	echo "BENCH-RUN $name rc=$rc"
	sed "s/^/BENCH-OUT $name /" /tmp/device.out /tmp/host.out
	sed "s/^/BENCH-FRAMES $name /" /tmp/frames.csv 2>/dev/null
	sed "s/^/BENCH-RES $name /" /tmp/res.jsonl 2>/dev/null
	rm -f /tmp/frames.csv /tmp/res.jsonl
	settle
}
# The latency runs in BENCH_SEGMENTS segments of frames / segments frames
# each, the order of the three modes reversed from one segment to the next,
# so that a stretch of the emulator running slow (a tail of tens of
# milliseconds comes in bursts) falls on all three alike; perflink-bench
# pools each mode's segments.
segments=${BENCH_SEGMENTS:-3}
latency_run() { # MODE SEGMENT
	case $1 in
	aio8k) run "aio8k#$2" "--write-chunk 8192" 20 "--reply ack" ;;
	aio16k) run "aio16k#$2" "--write-chunk 16384" 20 "--reply ack" ;;
	sync32k) run "sync32k#$2" "--sync --sync-bytes 32768" 20 "--reply ack" ;;
	esac
}
if [ "${BENCH_MAX_ONLY:-0}" != 1 ]; then
	frames=$(((frames + segments - 1) / segments))
	for seg in $(seq "$segments"); do
		order="aio8k aio16k sync32k"
		[ $((seg % 2)) = 0 ] && order="sync32k aio16k aio8k"
		for mode in $order; do
			latency_run "$mode" "$seg"
		done
	done
fi
frames=300
if [ "${BENCH_MAX_ONLY:-0}" != 1 ]; then
	run aio8k-max "--write-chunk 8192" 0 "--reply none" --no-replies
	run aio16k-max "--write-chunk 16384" 0 "--reply none" --no-replies
	run sync32k-max "--sync --sync-bytes 32768" 0 "--reply none" --no-replies
fi
# The link's maximum against the bare AIO stream, both with a host that only
# counts bytes (host and device share the VM's two CPUs, so a checking host's
# own work would slow the device side too), BENCH_ROUNDS times: under
# emulation one run of either can be a third faster than the next, so the
# benchmark compares them within each round. With --variants, each round
# also runs the link with libxxhash's own XXH3 build instead of the one it
# chooses (common/wire/payload_hash.c), and the bare stream with the link's
# structure (48 requests per io_submit with a zero-length request after
# each), with an XXH3 of every byte, and with everything the link does but
# its own code ("as-link": also the three-piece messages and 8 queued OUT
# reads), to tell which costs throughput.
bare() {
	name=$1
	shift
	bare_aio_writer --chunk 8192 --mib 118 "$@" >/tmp/bare.out 2>&1 &
	writer=$!
	perflink-host --drain --timeout 3 >/tmp/host.out 2>&1
	wait $writer
	rc=$?
	echo "BENCH-RUN $name rc=$rc"
	sed "s/^/BENCH-OUT $name /" /tmp/bare.out /tmp/host.out
	settle
}
# Rounds alternate the order of the two runs (link first, then bare first),
# so that whatever the position in a round costs falls on both alike; the
# comparison is the median over rounds of the ratio within each.
for round in $(seq "$rounds"); do
	if [ $((round % 2)) = 1 ]; then
		run "aio8k-max-drain#$round" "--write-chunk 8192" 0 "--drain --timeout 3" --no-replies
		bare "bare-aio8k#$round"
	else
		bare "bare-aio8k#$round"
		run "aio8k-max-drain#$round" "--write-chunk 8192" 0 "--drain --timeout 3" --no-replies
	fi
	[ "${BENCH_VARIANTS:-0}" = 1 ] || continue
	RUN_ENV=PERFLINK_HASH_IMPL=library
	run "aio8k-max-drain-libxxh3#$round" "--write-chunk 8192" 0 "--drain --timeout 3" --no-replies
	RUN_ENV=
	bare "bare-aio8k-frames-zlp#$round" --msg-chunks 48 --zlp 1
	bare "bare-aio8k-hash#$round" --hash 1
	bare "bare-aio8k-as-link#$round" --msg-chunks 48 --zlp 1 --hash 1 --header 1 --out-reads 8
done
