#!/bin/sh
# perflink-host export's report.html, opened from disk in headless Chromium
# with the network off: over a recording written here by hand (a frame far
# slower than the rest, a stage call far longer than its stage's median and
# a stall during it, a process whose comm is markup), the page runs without
# a console message, draws the histogram, the time series, the worst-frames
# table with what the device did during the worst frame, the stage table,
# the flame graph of the render windows (test/fixtures/recording/
# render_window) and the resource chart, and shows the hostile comm as
# text; an empty recording's report says it is empty. A screenshot of each
# is kept in OUT_DIR. No chromium is a failed check.
#
# usage: test_host_report.sh PERFLINK_HOST CHECK_REPORT_DOM_PY RENDER_WINDOW_FIXTURE OUT_DIR
# (TAP output)
set -u
host=$1
check=$2
render_window=$3
out=$4
dir=$(mktemp -d /tmp/pl-test-report-XXXXXX)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$out"
n=0
failed=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}

chromium=$(command -v chromium || true)
if [ -z "$chromium" ]; then
	echo "not ok 1 - chromium is installed (scripts/deps installs it)"
	echo "1..1"
	exit 1
fi

# chromium ARGS...: headless from disk, with no network: every host
# resolves to nothing and the proxy is a closed port, so a page that
# fetched anything would miss it (the page's own policy forbids it too)
chrome() {
	timeout 60 "$chromium" --headless --disable-gpu --no-sandbox \
		--user-data-dir="$dir/profile" --host-resolver-rules='MAP * ~NOTFOUND' \
		--proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>' \
		--virtual-time-budget=5000 --hide-scrollbars "$@"
}
# browse DIR NAME: DIR/report.html's DOM to DIR.dom, Chromium's log (console
# messages are its INFO:CONSOLE lines) to DIR.log, a screenshot to
# OUT/NAME.png
browse() {
	chrome --enable-logging=stderr --v=0 --dump-dom "file://$1/report.html" >"$1.dom" 2>"$1.log"
	rc=$?
	[ -s "$1.dom" ] || rc=1
	rm -f "$out/$2.png"
	chrome --window-size=1280,3600 --screenshot="$out/$2.png" "file://$1/report.html" \
		>/dev/null 2>&1
	return $rc
}
# check DIR NAME full|empty: the DOM checks, then no console message
check() {
	"$check" "$1.dom" $((n + 1)) "$3" > "$dir/checks"
	cat "$dir/checks"
	n=$((n + $(wc -l < "$dir/checks")))
	grep -q '^not ok' "$dir/checks" && failed=1
	console=$(grep -c ':CONSOLE' "$1.log")
	[ "$console" -eq 0 ] || grep ':CONSOLE' "$1.log" | sed 's/^/# /'
	ok "$([ "$console" -eq 0 ]; echo $?)" "$2: no console message"
	[ -s "$out/$2.png" ]
	ok $? "$2: screenshot kept in $out/$2.png"
}

HOSTILE='</script><img src=x onerror=alert(1)>'
rec="$dir/rec"
mkdir -p "$rec/telemetry"
# 20 frames 33 ms apart, round trips about 11 ms but frame 7's 120 ms;
# a line that is not a frame
{
	echo "frame_id,sequence,bytes,device_send_ns,host_recv_device_ns,one_way_ms,round_trip_ms"
	i=1
	while [ $i -le 20 ]; do
		send=$((1000000000 + i * 33000000))
		if [ $i -eq 7 ]; then rtt=120.000000; else rtt=$(printf '%d.%d00000' $((10 + i / 10)) $((i % 10))); fi
		echo "$i,$i,4096,$send,$((send + 2000000)),2.000000,$rtt"
		i=$((i + 1))
	done
	echo "not a frame"
} > "$rec/frames.csv"
# raptor's avpu_wait_irq (5 events lost to its full ring): 40 calls of 2 ms (the median) every 30 ms, and
# thread 813's of 80 ms during frame 7 ([1.231 s, 1.351 s]); avpu_flush
# calls of about 2 ms there too, usual for their stage
calls=$(i=0; while [ $i -lt 40 ]; do printf '[%d,2000000,500000,812,0,0,0],' $((1000000000 + i * 30000000)); i=$((i + 1)); done)
cat > "$rec/telemetry/perflink-stage-calls.jsonl" <<JSON
{"type":"perflink-stage-calls","version":1,"pid":812,"comm":"raptor","start_mono_ns":1,"line":1,"events_sent":44,"events_dropped":5,"stage_names":["avpu_wait_irq","avpu_flush"],"calls":[$calls[1240000000,80000000,1000000,813,0,1,0],[1300000000,2000000,400000,812,1,0,4096],[1305000000,2100000,400000,812,1,0,4096],[1310000000,1900000,400000,812,1,0,4096]]}
JSON
cat > "$rec/telemetry/perflink-profile.jsonl" <<JSON
{"type":"perflink-profile","version":1,"pid":812,"comm":"raptor","report":2,"frames":500,"dropped_calls":4,"site_overflow_calls":0,"daemon_dropped_reports":1,"stages":[{"name":"avpu_wait_irq","kind":"wait","calls":500,"wall_total_ns":2500000000,"cpu_total_ns":3000000},{"name":"avpu_flush","kind":"cache","calls":7,"wall_total_ns":7000,"cpu_total_ns":6000}]}
{"type":"perflink-profile","version":1,"pid":900,"comm":"$HOSTILE","report":1,"frames":5,"stages":[{"name":"enc","kind":"cpu","calls":5,"wall_total_ns":5000000,"cpu_total_ns":4900000}]}
JSON
# a stall of 50 ms ending at 1.3 s, inside frame 7
cat > "$rec/telemetry/stall.jsonl" <<JSON
{"type":"stall","mono":1.3,"victim":{"pid":900,"comm":"$HOSTILE"},"window_ms":50,"mechanism":"writeback","bully":[{"pid":77,"comm":"dd","d_wbytes_kB":20480}]}
JSON
cat > "$rec/telemetry/resources.jsonl" <<'JSON'
{"type":"header","schema":1,"clk_tck":100,"page_size":4096}
{"type":"sample","seq":0,"mono_ns":1000000000,"procs":[{"pid":812,"comm":"raptor","utime_ticks":10,"stime_ticks":5,"vm_kb":{"VmRSS":1024}}]}
{"type":"sample","seq":1,"mono_ns":2000000000,"procs":[{"pid":812,"comm":"raptor","utime_ticks":50,"stime_ticks":15,"vm_kb":{"VmRSS":2048}}]}
{"type":"sample","seq":2,"mono_ns":3000000000,"procs":[{"pid":812,"comm":"raptor","utime_ticks":80,"stime_ticks":25,"vm_kb":{"VmRSS":3072}}]}
JSON
cat > "$rec/telemetry/link_diag.jsonl" <<'JSON'
{"type":"link_diag","mono_ns":6,"totals":{"frames_sent":22,"frames_held":3,"frames_replaced":1,"frames_lost":1,"messages_dropped":2,"bytes":12345}}
JSON
# the fuzz seed's first byte picks its file (test/fuzz/fuzz_recording.c)
tail -c +2 "$render_window" > "$rec/telemetry/render_window.jsonl"
cat > "$rec/summary.json" <<'JSON'
{"p50_ms":11.1,"frames":20,"bytes":81920,"mbps":0.1,"seconds":1.0,"clock_offset_ns":-1200,"clock_offset_rtt_ns":90000,"clock_offset_samples":30,"transport":"tcp","device":{"program":"perflinkd","version":"0.1.0","transport":"tcp","wire_version":1,"packet_size":64,"deadline_ms":2000,"max_host_payload":4194304,"hellos":1,"hellos_malformed":0},"connects":1,"sequence_gaps":0,"lost_messages":0,"reply_drops":0,"frames_not_kept":0,"device_send":null}
JSON

"$host" --help 2>&1 | grep -q 'DIR/report.html, one page that needs no network'
ok $? "perflink-host --help tells of report.html"
"$host" export "$rec" 2>"$dir/export.err"
ok $? "export of the recording exits 0"
[ -s "$rec/report.html" ]
ok $? "report.html written beside the other exports"
grep -qF "$HOSTILE" "$rec/report.html"
ok "$([ $? -ne 0 ]; echo $?)" "the hostile comm is nowhere in report.html as it is (escaped in the data)"
for lib in uplot d3 d3-flame-graph; do
	grep -qE "^/\* $lib [0-9]+\.[0-9]+\.[0-9]+: LICENSE$" "$rec/report.html"
	ok $? "report.html carries $lib's licence with its version"
done
browse "$rec" report
ok $? "chromium opened report.html"
check "$rec" report full

# frames without the device's round trips: one way, device send to host
# receive; frame 5 has no receive
oneway="$dir/oneway"
mkdir -p "$oneway"
cat > "$oneway/frames.csv" <<'CSV'
frame_id,sequence,bytes,device_send_ns,host_recv_device_ns,one_way_ms,round_trip_ms
1,1,100,1000000000,1002000000,2.000000,
2,2,100,1033000000,1035000000,2.000000,
3,3,100,1066000000,1075000000,9.000000,
4,4,100,1099000000,1100000000,1.000000,
5,5,100,1132000000,,,
CSV
"$host" export "$oneway" 2>"$dir/export-oneway.err"
ok $? "export of a recording without round trips exits 0"
browse "$oneway" report-oneway
ok $? "chromium opened its report"
check "$oneway" report-oneway oneway

# an empty run: frames.csv with its header only
empty="$dir/empty"
mkdir -p "$empty"
echo "frame_id,sequence,bytes,device_send_ns,host_recv_device_ns,one_way_ms,round_trip_ms" > "$empty/frames.csv"
"$host" export "$empty" 2>"$dir/export-empty.err"
ok $? "export of an empty recording exits 0"
browse "$empty" report-empty
ok $? "chromium opened the empty report"
check "$empty" report-empty empty

echo "1..$n"
exit $failed
