#!/bin/sh
# End to end over the TCP link, every part real (TAP):
#   frame_producer (libperflink: frames in shared memory)  \
#   capture_loop under libperflink-preload.so (reports)     > perflinkd --link-tcp
#                                                           /     |
#                                     perflink-host --tcp --out DIR (echo replies)
# The producer must get every reply back, the host must write summary.json,
# frames.csv with the device's round trips, and the preload's reports as
# telemetry/perflink-profile.jsonl.
#
# The render sampler's windows (renderer under the shim) arrive as
# telemetry/render_window.jsonl, and are exported as pprof profiles;
# perflink-host compare reads the recording back.
#
# usage: test_e2e_tcp.sh PERFLINKD PERFLINK PERFLINK_HOST FRAME_PRODUCER SHIM
#        CAPTURE_LOOP STAGES RENDERER
set -u
perflinkd=$1 perflink=$2 host=$3 producer=$4 shim=$5 capture=$6 stages=$7 renderer=$8
frames=60

. "$(dirname "$0")/tcp_link_lib.sh"
scratch_dir e2e-tcp
start_daemon_tcp

start_host_tcp

PERFLINK_SOCKET="$d/producers" "$producer" --socket "$d/producers" --frames $frames \
	--bytes 65536 --fps 30 --wait-replies 10 --pipeline >"$d/producer.out" 2>&1
prc=$?
check "the producer got every frame's echo back: $(cat "$d/producer.out")" \
	"[ $prc -eq 0 ] && grep -q 'replies $frames bad_replies 0' '$d/producer.out'"

env LD_PRELOAD="$shim" PERFLINK_PROFILE=1 PERFLINK_PROFILE_INTERVAL=25 \
	PERFLINK_PROFILE_EVENTS=1 \
	PERFLINK_PROFILE_SYSLOG=off PERFLINK_STAGES="$stages" PERFLINK_SOCKET="$d/producers" \
	"$capture" --frames 50 --fps 100 >"$d/capture.out" 2>&1
capture_rc=$? # now: inside check, $? would be its own arithmetic's
check "capture_loop ran under the shim (exit $capture_rc)" "[ $capture_rc -eq 0 ]"

env LD_PRELOAD="$shim" PERFLINK_SAMPLE=1 PERFLINK_SAMPLE_HZ=100 PERFLINK_SAMPLE_WINDOW=1 \
	PERFLINK_SAMPLE_OUT="$d/render.txt" PERFLINK_SOCKET="$d/producers" \
	"$renderer" 3 >"$d/renderer.out" 2>&1
renderer_rc=$?
check "the renderer ran under the sampler (exit $renderer_rc)" "[ $renderer_rc -eq 0 ] && [ -s '$d/render.txt' ]"

# The telemetry has to cross the link; the round trips come every 0.5 s.
for _ in $(seq 50); do
	[ "$(wc -l <"$d/host/telemetry/perflink-profile.jsonl" 2>/dev/null || echo 0)" -ge 2 ] &&
		[ -s "$d/host/telemetry/render_window.jsonl" ] && break
	sleep 0.1
done
sleep 1
# metrics.prom while the host still runs: replaced every 5 s by default
# (--metrics-every), for node_exporter's textfile collector, which reads it
# at any moment
for _ in $(seq 80); do
	[ -s "$d/host/metrics.prom" ] && break
	sleep 0.1
done
cp "$d/host/metrics.prom" "$d/live.prom" 2>/dev/null
check "metrics.prom is there before perflink-host exits, counting the producer's $frames frames" \
	"kill -0 $hpid && grep -qx 'perflink_frames_total $frames' '$d/live.prom'"
check "and promtool finds no problem in it: $(promtool check metrics <"$d/live.prom" 2>&1 | tr '\n' ' ')" \
	"promtool check metrics <'$d/live.prom' >/dev/null 2>&1"
st=$(status)
kill -TERM "$hpid"
wait "$hpid"
hrc=$?
hpid=
check "perflink-host exits 0 on SIGTERM" "[ $hrc -eq 0 ]"

check "the preload's two reports reached the host as telemetry" \
	'[ "$(grep -c "\"comm\":\"capture_loop\"" "$d/host/telemetry/perflink-profile.jsonl" 2>/dev/null)" = 2 ]'
check "the sampler's windows reached the host, report and folded stacks" \
	'grep -q "\"report\":\".*hot_a" "$d/host/telemetry/render_window.jsonl" &&
	 grep -q "\"folded\":\".*hot_a [0-9]" "$d/host/telemetry/render_window.jsonl"'
samples=$(python3 "$(dirname "$0")/check_render_samples.py" "$d/host/telemetry/render_window.jsonl" 2>&1)
samples_rc=$?
check "each window's samples carry their time and folded line: $samples" "[ $samples_rc -eq 0 ]"
check "each window says its sampling period: 10 ms at PERFLINK_SAMPLE_HZ=100" \
	'[ -s "$d/host/telemetry/render_window.jsonl" ] &&
	 ! grep -v "\"sample_period_ns\":10000000," "$d/host/telemetry/render_window.jsonl" | grep -q .'
check "link diagnostics reached the host" '[ -s "$d/host/telemetry/link_diag.jsonl" ]'
# docs/wire.md's table of each type's time and id fields, against every line
fields=$(python3 "$(dirname "$0")/../conformance/telemetry_fields.py" \
	"$(dirname "$0")/../../docs/wire.md" "$d/host/telemetry" \
	perflink-profile perflink-stage-calls render_window link_diag pipeline 2>&1)
fields_rc=$?
printf '%s\n' "$fields" | sed 's/^/# /'
check "every telemetry line carries the time and ids docs/wire.md names for its type" \
	"[ $fields_rc -eq 0 ]"
# a 2 s run is shorter than a pipeline period: its summary is the one made at exit
published=$(sed -n 's/.*"published_frames":\([0-9]*\).*/\1/p' "$d/host/telemetry/pipeline.jsonl" 2>/dev/null |
	awk '{n += $1} END {print n + 0}')
check "the producer's pipeline summary reached the host: $published of $frames frames" \
	"[ '$published' -eq $frames ]"
check "summary.json counts the producer's $frames frames" \
	"grep -q '\"frames\": *$frames[,}]' '$d/host/summary.json'"
check "summary.json has the round-trip percentiles" \
	"grep -q '\"p99_ms\": *[0-9]' '$d/host/summary.json'"
# the device's HELLO, which report.html's header shows (docs/wire.md HELLO)
check "summary.json has the device as its HELLO said: perflinkd, wire version 1, over tcp" \
	"python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))[\"device\"]; sys.exit(not (d[\"program\"] == \"perflinkd\" and d[\"wire_version\"] == 1 and d[\"transport\"] == \"tcp\" and d[\"hellos\"] >= 1 and d[\"hellos_malformed\"] == 0 and d[\"deadline_ms\"] > 0))' '$d/host/summary.json'"
rows=$(tail -n +2 "$d/host/frames.csv" 2>/dev/null | wc -l)
rtts=$(tail -n +2 "$d/host/frames.csv" 2>/dev/null | awk -F, '$7 != ""' | wc -l)
check "frames.csv: $rows frames, $rtts with the device's round trip" \
	"[ $rows -eq $frames ] && [ $rtts -eq $frames ]"
# --out also exported the recording (as `perflink-host export` does)
check "metrics.prom counts the $frames frames and the capture loop's stages" \
	"grep -qx 'perflink_frames_total $frames' '$d/host/metrics.prom' &&
	 grep -q '^perflink_stage_calls_total{pid=\"[0-9]*\",comm=\"capture_loop\"' '$d/host/metrics.prom'"
# report.html's data element (the page itself is checked in Chromium by
# the unit test host_report): the run's frames with their round trips, the
# 10 worst, the capture loop's stage rows and timed calls, the renderer's
# stacks
report_data=$(python3 - "$d/host/report.html" 2>&1 <<'PY'
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script type="application/json" id="perflink-data">(.*?)</script>', page, re.S)
d = json.loads(m.group(1))
print(d["frames"], d["latency"]["source"], d["latency"]["frames"], len(d["worst"]),
      sum(s["comm"] == "capture_loop" for s in d["stages"]), d["calls"] > 0,
      sum(p["comm"] == "renderer" and p["samples"] > 0 for p in d["flame"]))
PY
)
check "report.html holds the run: $report_data" \
	"[ '$report_data' = '$frames device_round_trip $frames 10 4 True 1' ]"
export_proto_dir=$(dirname "$0")/../../host/export
if command -v protoc > /dev/null; then
	slices=$(protoc --decode=perfetto.protos.Trace --proto_path="$export_proto_dir" \
		perfetto_subset.proto < "$d/host/trace.perfetto-trace" 2>/dev/null |
		grep -c 'name: "frame [0-9]* of producer [0-9]*"')
	check "trace.perfetto-trace decodes with a slice per frame ($slices)" "[ '$slices' -eq $frames ]"
	# the capture loop's per-call events (PERFLINK_PROFILE_EVENTS=1): a
	# slice for each frame_wait call its last report counts
	waits=$(protoc --decode=perfetto.protos.Trace --proto_path="$export_proto_dir" \
		perfetto_subset.proto < "$d/host/trace.perfetto-trace" 2>/dev/null |
		grep -c 'name: "frame_wait"')
	reported=$(grep '"comm":"capture_loop"' "$d/host/telemetry/perflink-profile.jsonl" 2>/dev/null |
		tail -n 1 | sed -n 's/.*{"name":"frame_wait","kind":"wait","boundary":[a-z]*,"calls":\([0-9]*\).*/\1/p')
	check "the capture loop's stage calls reached the host as events, a slice each ($waits frame_wait slices, ${reported:-no} calls reported)" \
		"[ -s '$d/host/telemetry/perflink-stage-calls.jsonl' ] && [ '${reported:-0}' -ge 50 ] && [ '$waits' -eq '${reported:-x}' ]"
else
	missing "protoc is installed (scripts/deps installs protobuf-compiler)"
fi
# the render windows as the device really sends them, made into pprof
# profiles: the renderer's hot function is there, CPU time from its 100 Hz
if command -v go > /dev/null; then
	go tool pprof -top -symbolize=none -sample_index=cpu "$d/host/profile.pb.gz" >"$d/top.txt" 2>&1
	check "profile.pb.gz: go tool pprof reads it, hot_a in it, in CPU time ($(grep -m1 hot_a "$d/top.txt"))" \
		"grep -q '^ *[0-9.]*m\\?s .* hot_a\$' '$d/top.txt' && [ -s '$d/host/profiles/window-1.pb.gz' ]"
else
	n=$((n + 1))
	echo "not ok $n - go is installed (scripts/deps installs golang-go)"
	failed=$((failed + 1))
fi
# perflink-host compare reads a summary.json as --out really writes it
"$host" compare "$d/host" "$d/host" >"$d/compare.out" 2>&1
crc=$?
check "perflink-host compare of the run with itself: $(grep '^frames ' "$d/compare.out")" \
	"[ $crc -eq 0 ] && grep -q '^frames  *$frames  *$frames  *unchanged' '$d/compare.out' &&
	 grep -q '^latency p99  *[0-9.]* [mu]s  *[0-9.]* [mu]s  *unchanged' '$d/compare.out' &&
	 grep -q '^capture_loop [a-z_]* calls ' '$d/compare.out'"
check "perflinkd's collector saw the four producers (the pipeline's own)" \
	"echo '$st' | grep -q '\"accepted\":4'"
check "and routed every reply" "echo '$st' | grep -q '\"replies_unrouted\":0'"

# A host that sends what does not check: bytes that are no message, then
# a magic whose header check fails. The device counts them by reason in
# status (and link_diag), and its log says so.
python3 - "$port" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"garbage!" * 8 + b"PLNK" + bytes(60))
time.sleep(0.3)
s.close()
PY
sleep 0.3
st=$(status)
check "a host's malformed input is counted by reason: $(echo "$st" | grep -o '"from_host":{[^}]*}[^}]*}' | head -1)" \
	"echo '$st' | grep -q '\"from_host\":{\"messages\":[0-9]*,\"skipped_bytes\":[1-9][0-9]*,\"malformed\":{[^}]*\"bad_header_check\":1'"
check "and the device's log says which" \
	"grep -q 'malformed input from the host (bad_header_check)' '$d/daemon.err'"

finish
