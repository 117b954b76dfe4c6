#!/bin/sh
# PL_PRODUCER_KEEP_EVERY_FRAME end to end over the TCP link, every part real
# (TAP): frame_producer --keep-every-frame -> perflinkd --link-tcp ->
# perflink-host. The producer starts before any host is there and sends
# faster than the link takes; the host also stops reading for 2 s after 20
# frames. Every frame must still arrive, in order, none held or replaced:
# the producer is slowed down instead (its slots wait).
#
# usage: test_keep_every_frame_tcp.sh PERFLINKD PERFLINK PERFLINK_HOST FRAME_PRODUCER
set -u
perflinkd=$1 perflink=$2 host=$3 producer=$4
frames=200

. "$(dirname "$0")/tcp_link_lib.sh"
scratch_dir keep-every-frame
start_daemon_tcp

# No host yet: the producer's frames wait, it blocks on its slots.
"$producer" --socket "$d/producers" --frames $frames --bytes 262144 --fps 2000 \
	--wait-replies 30 --keep-every-frame >"$d/producer.out" 2>&1 &
ppid=$!
for _ in $(seq 50); do
	st=$(status)
	echo "$st" | grep -q '"frames_waited":1' && break
	sleep 0.1
done
check "no host: perflinkd sent none of its frames and counts one waiting" \
	"echo '$st' | grep -q '\"frames_sent\":0,\"frames_held\":0,\"frames_not_sent\":0,\"keep_every_frame\":true,\"frames_waited\":1'"
check "and the producer is blocked on its slots, not done" 'kill -0 "$ppid" 2>/dev/null'
sleep 0.3
check "still nothing sent a moment later" \
	"status | grep -q '\"frames_sent\":0,\"frames_held\":0,\"frames_not_sent\":0,\"keep_every_frame\":true,\"frames_waited\":1'"

# 16-byte acks: echoes of 256 KiB frames would overflow the producer's 1 MiB
# reply ring while it is blocked on its slots
"$host" --tcp "127.0.0.1:$port" --reply ack --frames $frames --timeout 20 --stall-after 20 \
	--stall-seconds 2 --out "$d/host" >"$d/host.out" 2>&1 &
hpid=$!
wait "$ppid"
prc=$?
ppid=
check "the producer got every frame's ack back: $(cat "$d/producer.out")" \
	"[ $prc -eq 0 ] && grep -q 'sent $frames held 0 not_sent 0 lost 0 replies $frames bad_replies 0' '$d/producer.out'"
wait "$hpid"
hrc=$?
hpid=
check "perflink-host took all $frames frames and exited 0" "[ $hrc -eq 0 ]"
check "summary.json: $frames frames, none held" \
	"grep -q '\"frames\": *$frames[,}]' '$d/host/summary.json' &&
	 grep -q '\"held_frames\": *0[,}]' '$d/host/summary.json'"
ids=$(tail -n +2 "$d/host/frames.csv" 2>/dev/null | cut -d, -f1 | awk -F, '{ printf "%d\n", $1 % 281474976710656 }' | tr '\n' ' ')
expect=$(seq 0 $((frames - 1)) | tr '\n' ' ')
check "frames.csv: every frame id from 0 to $((frames - 1)), in order" "[ '$ids' = '$expect' ]"
st=$(status)
check "the link sent $frames frames, none held or replaced" \
	"echo '$st' | grep -q '\"frames_sent\":$frames,\"frames_held\":0,\"frames_replaced\":0'"

finish
