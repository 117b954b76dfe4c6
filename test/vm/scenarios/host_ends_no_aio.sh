# A device without native AIO (forced: PERFLINK_PROBE_FAIL=ffs_aio) sends
# with blocking writes and never reads what the host sends on bulk OUT.
# perflink-host --frames N must still end on time with its files written:
# its replies and pings wait on bulk OUT, and at the end they are cancelled,
# not waited for. The device is killed afterwards: its blocking writes stall
# once the host has stopped reading, as docs/perflinkd.md says.
PERFLINK_PROBE_FAIL=ffs_aio perflink stream --setup-gadget --frames 400 \
	--payload-bytes 65536 --fps 50 --no-replies --timeout 60 >/tmp/device.out 2>&1 &
device=$!
start=$(date +%s)
timeout 90 perflink-host --reply echo --frames 100 --out /tmp/host >/tmp/host.out 2>&1
host_rc=$?
took=$(($(date +%s) - start))
kill -KILL $device 2>/dev/null
wait $device 2>/dev/null
echo "--- device (killed)"
cat /tmp/device.out
echo "--- host, exit $host_rc after ${took} s"
cat /tmp/host.out
rows=$(tail -n +2 /tmp/host/frames.csv 2>/dev/null | wc -l)
echo "frames.csv: $rows rows; summary.json: $(wc -c </tmp/host/summary.json 2>/dev/null) bytes"
grep -q "without native AIO" /tmp/device.out &&
	[ $host_rc -eq 0 ] && [ "$took" -le 40 ] && [ "$rows" -ge 100 ] &&
	grep -q '"frames":' /tmp/host/summary.json
