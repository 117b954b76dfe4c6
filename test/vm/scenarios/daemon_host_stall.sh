# A host that stalls past the link's deadline, over USB, perflinkd in its
# default set-up (the gadget made and bound outside it, lib/gadget.sh):
# frame_producer --keep-every-frame and an ordinary producer (whose held
# frames make the deadline count) -> perflinkd --link --link-deadline 1 ->
# perflink-host, which stops reading for 5 s after 20 frames. perflinkd
# offers the gadget afresh at the deadline; the requests then in flight are
# cancelled. Every keep-every-frame frame must either reach frames.csv or be
# counted not sent where its producer and status see it: nothing reported
# sent that never arrived (the USB side of test_host_stall_tcp.sh).
# PERFLINKD_USER=UID:GID: perflinkd runs as that user with no capability
# (docs/perflinkd.md "Running as its own user") and must still re-arm.
. /scenarios/lib/perflinkd.sh
frames=200
start_perflinkd --link-deadline 1
# acks, not echoes: echoes of every frame would fill the producer's reply ring
perflink-host --reply ack --frames $frames --seconds 60 --stall-after 20 --stall-seconds 5 \
	--out /tmp/host >/tmp/host.out 2>&1 &
hpid=$!
wait_link_up
frame_producer --socket /tmp/perflinkd/producers --frames $frames --bytes 65536 --fps 500 \
	--wait-replies 5 --keep-every-frame >/tmp/producer.out 2>&1 &
ppid=$!
frame_producer --socket /tmp/perflinkd/producers --frames 400 --bytes 4096 --fps 25 \
	>/tmp/other.out 2>&1 &
opid=$!
# While it waits for the replies of what it sent, the producer is still
# perflinkd's: its counts in status (sent, not sent, lost on the link)
keep_counts() {
	status | sed -n 's/.*"frames_sent":\([0-9]*\),"frames_held":[0-9]*,"frames_not_sent":\([0-9]*\),"keep_every_frame":true,"frames_waited":[0-9]*,"frames_lost_on_link":\([0-9]*\).*/\1 \2 \3/p'
}
if [ -n "${PERFLINKD_USER:-}" ]; then
	uid=${PERFLINKD_USER%%:*}
	gid=${PERFLINKD_USER##*:}
	grep -E "^(Uid|Gid|CapEff|CapPrm|NoNewPrivs)" /proc/$daemon/status
	field() { awk -v k="$1:" '$1 == k { $1 = ""; print substr($0, 2) }' /proc/$daemon/status; }
	check "perflinkd runs as uid $uid gid $gid, every id" \
		'[ "$(field Uid)" = "$uid $uid $uid $uid" ] && [ "$(field Gid)" = "$gid $gid $gid $gid" ]'
	check "with no capability at all, and no_new_privs" \
		'[ "$(field CapEff)" = 0000000000000000 ] && [ "$(field CapPrm)" = 0000000000000000 ] &&
		 [ "$(field NoNewPrivs)" = 1 ]'
fi
lost_on_link=
while kill -0 $ppid 2>/dev/null; do
	set -- $(keep_counts)
	[ $((${1:-0} + ${2:-0})) -eq $frames ] && { lost_on_link=$3; break; }
	sleep 0.2
done
wait $ppid
kill $opid 2>/dev/null
wait $opid 2>/dev/null
st=$(status)
kill -TERM $hpid 2>/dev/null
wait $hpid
kill -TERM $daemon
wait $daemon

rearms=$(echo "$st" | sed -n 's/.*"rearms":\([0-9]*\).*/\1/p')
check "perflinkd offered the gadget afresh at the deadline ($rearms re-arms)" '[ "${rearms:-0}" -ge 1 ]'
check "and the host came back: $(grep -c 'connected:' /tmp/host.out) connections" \
	'[ "$(grep -c "connected:" /tmp/host.out)" -ge 2 ]'
sent=$(sed -n 's/.* sent \([0-9]*\) held.*/\1/p' /tmp/producer.out)
not_sent=$(sed -n 's/.* not_sent \([0-9]*\) lost.*/\1/p' /tmp/producer.out)
got=$(tail -n +2 /tmp/host/frames.csv 2>/dev/null | awk -F, '$3 == 65536' | wc -l)
check "the producer's frames: sent $sent + not sent $not_sent = $frames ($(cat /tmp/producer.out))" \
	'[ -n "$sent" ] && [ $((sent + not_sent)) -eq $frames ] && grep -q "held 0" /tmp/producer.out'
check "every frame it was told sent is in frames.csv: $got of $sent" '[ "$got" = "$sent" ]'
ids=$(tail -n +2 /tmp/host/frames.csv 2>/dev/null | awk -F, '$3 == 65536 { print $1 }')
check "none twice" '[ "$(echo "$ids" | sort | uniq -d | wc -l)" -eq 0 ]'
check "status shows the producer's frames lost on the link: ${lost_on_link:-?} (not sent $not_sent)" \
	'[ "${lost_on_link:-x}" = "$not_sent" ]'
link_lost=$(echo "$st" | sed -n 's/.*"frames_lost":\([0-9]*\).*/\1/p')
check "and the link's totals count them: frames_lost $link_lost" '[ "${link_lost:-0}" -ge "$not_sent" ]'
if [ $failed -ne 0 ]; then
	echo "--- perflinkd"; cat /tmp/daemon.out
	echo "--- host"; cat /tmp/host.out
	echo "--- status"; echo "$st"
fi
echo "host stall over USB: $failed failed"
[ $failed -eq 0 ]
