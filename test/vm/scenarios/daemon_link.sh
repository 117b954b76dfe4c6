# perflinkd runs the link over USB: it sets the gadget up, the resource
# sampler's lines and the link's own diagnostics reach perflink-host as
# telemetry, `perflink status` shows the link up, and an application's frames
# (frame_producer through libperflink's shared memory, sent from there with
# AIO) are echoed back to it by the host, every one. Then SIGTERM stops it.
# The host's --out folder gets the exports of the run over real USB
# (docs/host-export.md): metrics.prom counts the 60 frames, the trace has
# the link's track, a slice per frame and the sampled process's counters.
# its sockets in a directory only it may write to (perflinkd refuses /tmp)
mkdir -m 700 /tmp/perflinkd
perflinkd --foreground --link --link-setup-gadget \
	--resources --resources-pids 1 --resources-interval 0.5 --resources-out '' \
	--control-socket /tmp/perflinkd/control >/tmp/daemon.out 2>&1 &
daemon=$!
perflink-host --reply echo --telemetry-dir /tmp/telemetry --out /tmp/host --seconds 10 \
	>/tmp/host.out 2>&1 &
host=$!
for _ in $(seq 50); do
	perflink status --socket /tmp/perflinkd/control --json 2>/dev/null | grep -q '"state":"up"' && break
	sleep 0.2
done
frame_producer --socket /tmp/perflinkd/producers --frames 60 --bytes 131072 --fps 20 \
	--wait-replies 10 >/tmp/producer.out 2>&1
producer_rc=$?
wait $host
host_rc=$?
perflink status --socket /tmp/perflinkd/control --json >/tmp/status.json 2>&1
kill -TERM $daemon
wait $daemon
daemon_rc=$?
echo "--- perflinkd, exit $daemon_rc"
cat /tmp/daemon.out
echo "--- host, exit $host_rc"
cat /tmp/host.out
echo "--- producer, exit $producer_rc"
cat /tmp/producer.out
echo "--- status"
cat /tmp/status.json
samples=$(grep -c '"type":"sample"' /tmp/telemetry/telemetry.jsonl)
diags=$(grep -c '"type":"link_diag"' /tmp/telemetry/telemetry.jsonl)
echo "telemetry: $samples resource samples, $diags link diagnostics"
# protoc is not in the VM: the trace's strings are found as they are
frame_slices=$(grep -ao 'frame [0-9][0-9]* of producer [0-9]' /tmp/host/trace.perfetto-trace 2>/dev/null | wc -l)
echo "exports: $(ls /tmp/host 2>/dev/null | tr '\n' ' '); $frame_slices frame slices"
grep '^perflink_frames_total\|^perflink_device_link_bytes_total' /tmp/host/metrics.prom 2>/dev/null
exports_ok=0
grep -qx 'perflink_frames_total 60' /tmp/host/metrics.prom &&
	grep -qa 'perflink link' /tmp/host/trace.perfetto-trace &&
	grep -qa 'CPU %' /tmp/host/trace.perfetto-trace &&
	grep -qa 'link MB/s' /tmp/host/trace.perfetto-trace &&
	[ "$frame_slices" -eq 60 ] && exports_ok=1
echo "exports as docs/host-export.md says: $exports_ok"
[ "$daemon_rc" -eq 0 ] && [ "$samples" -ge 5 ] && [ "$diags" -ge 3 ] &&
	grep -q '"link":{"state":"up"' /tmp/status.json &&
	[ "$producer_rc" -eq 0 ] && grep -q 'replies 60 bad_replies 0' /tmp/producer.out &&
	[ "$exports_ok" -eq 1 ]
