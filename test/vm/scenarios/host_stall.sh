# Host stall: the host stops reading for 5 s after 100 frames. The device's
# budget fills, frames are held (newest wins), the 2 s deadline passes, the
# gadget is offered to the host afresh, the host finds it again and the
# stream resumes; no message is corrupt.
# GADGET=external (lib/gadget.sh): the gadget is made and bound outside the
# device, as perflinkd's default expects; the device must bind it again
# itself after the re-arm (closing ep0 would leave it unbound for good).
. /scenarios/lib/gadget.sh
gadget_make || exit 1
perflink stream $(gadget_device_args) --frames 300 --payload-bytes 393216 --fps 20 \
	--deadline 2 --timeout 60 >/tmp/device.out 2>&1 &
device=$!
gadget_bind || exit 1
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
malformed=$(sed -n 's/.* malformed \([0-9]*\).*/\1/p' /tmp/host.out)
echo "rearms ${rearms:-0}, host connects ${connects:-0}, frames held ${held:-0}," \
	"malformed ${malformed:-?}"
rebound=1
if [ "$GADGET" = external ]; then
	grep -q "unbinding the gadget from UDC .* and binding it again" /tmp/device.out || rebound=0
fi
[ $host_rc -eq 0 ] && [ $device_rc -eq 0 ] && [ "${rearms:-0}" -ge 1 ] &&
	[ "${connects:-0}" -ge 2 ] && [ "${held:-0}" -ge 1 ] && [ "${malformed:-1}" -eq 0 ] &&
	[ $rebound -eq 1 ]
