# The byte-integrity diagnostic: 2,000 frames of 393,216 bytes, every byte
# checked on the host, SHA-256 digests compared on the device, while the
# submitting thread gets SIGUSR2 every 100 us. Mismatches must be 0 and at
# least 10,000 signals must have been delivered.
frames=${INTEGRITY_FRAMES:-2000}
perflink integrity --setup-gadget --frames "$frames" --payload-bytes 393216 \
	--signal-interval-us 100 --timeout 60 >/tmp/device.out 2>&1 &
device=$!
perflink-host --integrity --timeout 60 >/tmp/host.out 2>&1
host_rc=$?
wait $device
device_rc=$?
echo "--- device (perflink integrity), exit $device_rc"
cat /tmp/device.out
echo "--- host (perflink-host --integrity), exit $host_rc"
cat /tmp/host.out
signals=$(sed -n 's/.*delivered \([0-9]*\).*/\1/p' /tmp/device.out)
echo "signals delivered: ${signals:-0}"
[ $host_rc -eq 0 ] && [ $device_rc -eq 0 ] && [ "${signals:-0}" -ge 10000 ]
