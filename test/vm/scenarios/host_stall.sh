# Host stall: the host stops reading for 5 s after 100 frames. The device's
# budget fills, frames are held (newest wins), the 2 s deadline passes, the
# gadget is dropped and re-armed, the host finds it again and the stream
# resumes; no message is corrupt.
perflink stream --setup-gadget --frames 300 --payload-bytes 393216 --fps 20 \
	--deadline 2 --timeout 60 >/tmp/device.out 2>&1 &
device=$!
perflink-host --reply echo --stall-after 100 --stall-seconds 5 --timeout 60 >/tmp/host.out 2>&1
host_rc=$?
wait $device
device_rc=$?
echo "--- device, exit $device_rc"
cat /tmp/device.out
echo "--- host, exit $host_rc"
cat /tmp/host.out
rearms=$(sed -n 's/.* rearms \([0-9]*\).*/\1/p' /tmp/device.out)
connects=$(sed -n 's/.* connects \([0-9]*\).*/\1/p' /tmp/host.out)
held=$(sed -n 's/.* held \([0-9]*\).*/\1/p' /tmp/device.out)
echo "rearms ${rearms:-0}, host connects ${connects:-0}, frames held ${held:-0}"
[ $host_rc -eq 0 ] && [ $device_rc -eq 0 ] && [ "${rearms:-0}" -ge 1 ] &&
	[ "${connects:-0}" -ge 2 ] && [ "${held:-0}" -ge 1 ]
