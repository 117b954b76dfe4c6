# Stream and check 500 frames of 393,216 bytes: perflink stream (gadget side,
# FunctionFS + AIO, configfs set-up, dummy_hcd) to perflink-host (libusb),
# which checks every message and echoes each frame; the device checks each
# echo byte for byte and measures the round trip.
frames=${STREAM_FRAMES:-500}
perflink stream --setup-gadget --frames "$frames" --payload-bytes 393216 --fps 20 \
	--timeout 60 >/tmp/device.out 2>&1 &
device=$!
perflink-host --reply echo --timeout 60 >/tmp/host.out 2>&1
host_rc=$?
wait $device
device_rc=$?
echo "--- device (perflink stream), exit $device_rc"
cat /tmp/device.out
echo "--- host (perflink-host), exit $host_rc"
cat /tmp/host.out
[ $host_rc -eq 0 ] && [ $device_rc -eq 0 ]
