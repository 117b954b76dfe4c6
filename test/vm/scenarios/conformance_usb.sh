# Conformance over USB: test/conformance/wire_host.c, a host written from
# docs/wire.md alone (libusb, its own header code, no zero-length packets
# ever), against perflinkd in its default set-up: the gadget made and bound
# outside it (lib/gadget.sh), perflinkd started with nothing but --link.
# Every message from the device checks as "Receiving" says; each frame's
# echo reaches the libperflink producer; PINGs are answered at once although
# the host sends no zero-length packet; HELLO goes both ways; each COMMAND is
# answered; each hostile message is counted in status under its reason;
# end_of_stream ends the session (the gadget is offered afresh, so the host
# sees the device leave) and the device comes back for the next host.
. /scenarios/lib/perflinkd.sh
. /scenarios/lib/wire_checks.sh   # test/conformance/wire_checks.sh
frames=40
start_perflinkd
wire_host usb $frames 60 >/tmp/host.out 2>/tmp/host.err &
hpid=$!
wait_link_up
frame_producer --socket /tmp/perflinkd/producers --frames $frames --bytes 100000 --fps 20 \
	--wait-replies 20 >/tmp/producer.out 2>&1 &
ppid=$!
for _ in $(seq 600); do
	grep -q '^replies_sent' /tmp/host.out 2>/dev/null && break
	sleep 0.1
done
st=$(status)
wait $ppid
prc=$?
get() { sed -n "s/^$1 //p" /tmp/host.out; }

check "the host found the interface by class: packet $(get usb_packet)" '[ -n "$(get usb_packet)" ]'
producer_out=/tmp/producer.out
wire_checks
kill -USR1 $hpid
wait $hpid
check "end_of_stream: answered, then the device left the bus" \
	'[ "$(get end_of_stream_ok)" = 1 ] && [ "$(get end_of_stream_closed)" = 1 ]'
for _ in $(seq 50); do
	[ -n "$(cat "$(gadget_udc_file)")" ] && status | grep -q '"state":"up"' && break
	sleep 0.2
done
check "and came back, still bound: UDC '$(cat "$(gadget_udc_file)")'" \
	'[ -n "$(cat "$(gadget_udc_file)")" ] && status | grep -q "\"state\":\"up\""'
kill -TERM $daemon
wait $daemon
drc=$?
check "perflinkd stopped cleanly on SIGTERM" '[ $drc -eq 0 ]'
if [ $failed -ne 0 ]; then
	echo "--- perflinkd"; cat /tmp/daemon.out
	echo "--- wire_host"; cat /tmp/host.out /tmp/host.err
	echo "--- status"; echo "$st"
fi
echo "conformance over USB: $failed failed"
[ $failed -eq 0 ]
