#!/bin/sh
# A host that stalls longer than the link's deadline, over TCP, every part
# real (TAP): frame_producer --keep-every-frame and a second, ordinary
# producer (whose held frames make the deadline count) -> perflinkd
# --link-tcp --link-deadline 1 -> perflink-host, which stops reading for
# 5 s after 20 frames. perflinkd drops the host at the deadline; the host
# connects again. Every keep-every-frame frame must either reach
# frames.csv or be counted not sent where its producer and status see it:
# nothing reported sent that never arrived (issue 16).
#
# usage: test_host_stall_tcp.sh PERFLINKD PERFLINK PERFLINK_HOST FRAME_PRODUCER
set -u
perflinkd=$1 perflink=$2 host=$3 producer=$4
frames=400

. "$(dirname "$0")/tcp_link_lib.sh"
scratch_dir host-stall
start_daemon_tcp --link-deadline 1

"$producer" --socket "$d/producers" --frames $frames --bytes 262144 --fps 2000 \
	--wait-replies 3 --keep-every-frame >"$d/producer.out" 2>&1 &
ppid=$!
"$producer" --socket "$d/producers" --frames 200 --bytes 4096 --fps 25 \
	>"$d/other.out" 2>&1 &
opid=$!
# acks, not echoes: 256 KiB echoes would overflow the producer's reply ring
"$host" --tcp "127.0.0.1:$port" --reply ack --frames $frames --seconds 25 --stall-after 20 \
	--stall-seconds 5 --out "$d/host" >"$d/host.out" 2>&1 &
hpid=$!
# While it waits for the replies of what it sent, the producer is still
# perflinkd's: its counts in status, taken then.
keep_status() {
	status | python3 -c 'import json, sys
for p in json.load(sys.stdin)["modules"]["collector"]["producers"]:
    if p["keep_every_frame"]:
        print(p["frames_sent"] + p["frames_not_sent"], p["frames_lost_on_link"])' 2>/dev/null
}
lost_on_link=
while kill -0 "$ppid" 2>/dev/null; do
	set -- $(keep_status)
	[ "${1:-0}" -eq $frames ] && { lost_on_link=$2; break; }
	sleep 0.2
done
wait "$ppid"
ppid=
kill "$opid" 2>/dev/null; wait "$opid" 2>/dev/null; opid=
st=$(status)
kill -TERM "$hpid" 2>/dev/null; wait "$hpid"; hpid=

rearms=$(echo "$st" | sed -n 's/.*"rearms":\([0-9]*\).*/\1/p')
check "perflinkd dropped the stalled host at the deadline ($rearms re-arms)" \
	'[ "${rearms:-0}" -ge 1 ]'
check "and the host came back: $(grep -c 'connected to' "$d/host.out") connections" \
	'[ "$(grep -c "connected to" "$d/host.out")" -ge 2 ]'
sent=$(sed -n 's/.* sent \([0-9]*\) held.*/\1/p' "$d/producer.out")
not_sent=$(sed -n 's/.* not_sent \([0-9]*\) lost.*/\1/p' "$d/producer.out")
got=$(tail -n +2 "$d/host/frames.csv" 2>/dev/null | awk -F, '$3 == 262144' | wc -l)
check "the producer's frames: sent $sent + not sent $not_sent = $frames ($(cat "$d/producer.out"))" \
	'[ -n "$sent" ] && [ $((sent + not_sent)) -eq $frames ] && grep -q "held 0" "$d/producer.out"'
check "every frame it was told sent is in frames.csv: $got of $sent" '[ "$got" = "$sent" ]'
ids=$(tail -n +2 "$d/host/frames.csv" 2>/dev/null | awk -F, '$3 == 262144 { print $1 }')
check "none twice" '[ "$(echo "$ids" | sort | uniq -d | wc -l)" -eq 0 ]'
check "status shows the producer's frames lost on the link: $lost_on_link (not sent $not_sent)" \
	'[ "${lost_on_link:-x}" = "$not_sent" ]'
link_lost=$(echo "$st" | sed -n 's/.*"frames_lost":\([0-9]*\).*/\1/p')
check "and the link's totals count them: frames_lost $link_lost" \
	'[ "${link_lost:-0}" -ge "$not_sent" ]'
finish
