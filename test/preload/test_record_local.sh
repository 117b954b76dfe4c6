#!/bin/sh
# perflinkd's own recording (record-dir, docs/perflinkd.md): with no host
# attached and no link at all, the resource sampler's lines and a target's
# profile reports and per-call stage events (capture_loop under the shim,
# through the producer socket) are kept in DIR/telemetry/TYPE.jsonl, and
# `perflink-host export DIR` makes a timeline of them: the capture loop's
# stage slices and the sampled process's CPU % counter. A record directory
# that other users may write to, or that is a symbolic link, is refused at
# start with a message (TAP).
#
# usage: test_record_local.sh PERFLINKD PERFLINK PERFLINK_HOST SHIM CAPTURE_LOOP STAGES
set -u
perflinkd=$1 perflink=$2 host=$3 shim=$4 capture=$5 stages=$6
. "$(dirname "$0")/tcp_link_lib.sh"
scratch_dir record-local
: >"$d/empty.conf"
rec="$d/rec"

"$perflinkd" --foreground --config "$d/empty.conf" --control-socket "$d/control" --pidfile "" \
	--resources --resources-pids $$ --resources-interval 0.2 --resources-out '' \
	--record-dir "$rec" 2>"$d/daemon.err" &
dpid=$!
for _ in $(seq 100); do
	[ -S "$d/producers" ] && status | grep -q '"record"' && break
	sleep 0.1
done
check "perflinkd runs without a link, recording in $rec" 'status | grep -q "\"record\":{\"dir\":\"$rec\""'

env LD_PRELOAD="$shim" PERFLINK_PROFILE=1 PERFLINK_PROFILE_INTERVAL=25 PERFLINK_PROFILE_EVENTS=1 \
	PERFLINK_PROFILE_SYSLOG=off PERFLINK_STAGES="$stages" PERFLINK_SOCKET="$d/producers" \
	"$capture" --frames 50 --fps 100 >"$d/capture.out" 2>&1
capture_rc=$? # now: inside check, $? would be its own arithmetic's
check "capture_loop ran under the shim (exit $capture_rc)" "[ $capture_rc -eq 0 ]"
# the shim's reporter sends what is due at exit; perflinkd drains it every 100 ms
for _ in $(seq 50); do
	[ "$(grep -c '"comm":"capture_loop"' "$rec/telemetry/perflink-profile.jsonl" 2>/dev/null)" -ge 2 ] &&
		[ -s "$rec/telemetry/perflink-stage-calls.jsonl" ] && break
	sleep 0.1
done
sleep 0.5
kill -TERM "$dpid"
wait "$dpid"
drc=$?
dpid=
check "perflinkd stops on SIGTERM (exit $drc)" "[ $drc -eq 0 ]"

check "resources.jsonl: the header and the samples" \
	"grep -q '\"type\":\"header\"' '$rec/telemetry/resources.jsonl' &&
	 [ \$(grep -c '\"type\":\"sample\"' '$rec/telemetry/resources.jsonl') -ge 3 ]"
check "perflink-profile.jsonl: the capture loop's two reports" \
	"[ \$(grep -c '\"comm\":\"capture_loop\"' '$rec/telemetry/perflink-profile.jsonl') -eq 2 ]"
check "perflink-stage-calls.jsonl: its per-call events" \
	"grep -q '\"stage_names\":\\[' '$rec/telemetry/perflink-stage-calls.jsonl'"
check "each file is whole lines" \
	"for f in '$rec'/telemetry/*.jsonl; do [ \"\$(tail -c 1 \"\$f\" | od -An -c | tr -d ' ')\" = '\\n' ] || exit 1; done"

"$host" export "$rec" 2>"$d/export.err"
check "perflink-host export makes a timeline of the device's folder ($(tr '\n' ' ' <"$d/export.err"))" \
	'[ $? -eq 0 ] && [ -s "$rec/trace.perfetto-trace" ] && [ -s "$rec/metrics.prom" ]'
export_proto_dir=$(dirname "$0")/../../host/export
if command -v protoc >/dev/null; then
	protoc --decode=perfetto.protos.Trace --proto_path="$export_proto_dir" perfetto_subset.proto \
		<"$rec/trace.perfetto-trace" >"$d/trace.txt" 2>/dev/null
	waits=$(grep -c 'name: "frame_wait"' "$d/trace.txt")
	check "the trace has the capture loop's stage slices ($waits frame_wait) and the CPU % counter" \
		"[ '$waits' -ge 50 ] && grep -qF 'name: \"CPU %\"' '$d/trace.txt'"
else
	missing "protoc is installed (scripts/deps installs protobuf-compiler)"
fi

mkdir -m 777 "$d/open"
"$perflinkd" --foreground --config "$d/empty.conf" --control-socket "$d/control2" --pidfile "" \
	--producer-socket "" --record-dir "$d/open" 2>"$d/open.err"
rc=$?
check "a record directory others may write to is refused at start (exit $rc): $(grep -o 'record-dir: .*' "$d/open.err" | head -n 1)" \
	"[ $rc -ne 0 ] && grep -q 'other users may write to it' '$d/open.err' && [ ! -e '$d/open/telemetry' ]"
mkdir "$d/real"
ln -s "$d/real" "$d/link"
"$perflinkd" --foreground --config "$d/empty.conf" --control-socket "$d/control3" --pidfile "" \
	--producer-socket "" --record-dir "$d/link" 2>"$d/link.err"
rc=$?
check "a record directory that is a symbolic link is refused (exit $rc)" \
	"[ $rc -ne 0 ] && grep -q 'not a directory' '$d/link.err' && [ ! -e '$d/real/telemetry' ]"

echo "1..$n"
[ "$failed" -eq 0 ]
