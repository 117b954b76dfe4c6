# perflinkd runs the link: it sets the gadget up, the resource sampler's
# lines and the link's own diagnostics reach perflink-host as telemetry, and
# `perflink status` shows the link up. Then SIGTERM stops it cleanly.
perflinkd --foreground --link --link-setup-gadget \
	--resources --resources-pids 1 --resources-interval 0.5 --resources-out '' \
	--control-socket /tmp/control >/tmp/daemon.out 2>&1 &
daemon=$!
perflink-host --reply none --telemetry-dir /tmp/telemetry --seconds 8 >/tmp/host.out 2>&1
host_rc=$?
perflink status --socket /tmp/control --json >/tmp/status.json 2>&1
kill -TERM $daemon
wait $daemon
daemon_rc=$?
echo "--- perflinkd, exit $daemon_rc"
cat /tmp/daemon.out
echo "--- host, exit $host_rc"
cat /tmp/host.out
echo "--- status"
cat /tmp/status.json
samples=$(grep -c '"type":"sample"' /tmp/telemetry/telemetry.jsonl)
diags=$(grep -c '"type":"link_diag"' /tmp/telemetry/telemetry.jsonl)
echo "telemetry: $samples resource samples, $diags link diagnostics"
[ "$daemon_rc" -eq 0 ] && [ "$samples" -ge 5 ] && [ "$diags" -ge 3 ] &&
	grep -q '"link":{"state":"up"' /tmp/status.json
