#!/bin/sh
# perflink-host export over a recorded directory written here by hand (the
# files --out writes, with garbage and truncated lines among them): the
# Perfetto trace decodes with the project's .proto subset and has the
# tracks and slices the recording calls for, metrics.prom passes promtool
# and holds the recording's values, the pprof profiles of the render
# sampler's windows (test/fixtures/recording/render_window: the lines the
# device sends) read back with `go tool pprof` with the hot functions at
# their shares, bad lines are skipped and counted, an empty directory is
# refused with a message.
#
# usage: test_host_export.sh PERFLINK_HOST PERFETTO_SUBSET_PROTO RENDER_WINDOW_FIXTURE
# (TAP output)
set -u
host=$1
proto=$(realpath "$2")
render_window=$3
dir=$(mktemp -d /tmp/pl-test-export-XXXXXX)
trap 'rm -rf "$dir"' EXIT
n=0
failed=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}
# a tool scripts/deps installs that is missing fails the check: the test
# must not pass without checking
missing() {
	n=$((n + 1))
	echo "not ok $n - $1"
	failed=1
}
# decode_trace DIR OUT: DIR's trace as protoc prints it, its errors in
# $dir/protoc.err
decode_trace() {
	protoc --decode=perfetto.protos.Trace --proto_path="$(dirname "$proto")" \
		"$(basename "$proto")" < "$1/trace.perfetto-trace" > "$2" 2> "$dir/protoc.err"
}
# has FILE TEXT: the file holds the line TEXT exactly
has() {
	grep -qxF -- "$2" "$1"
}

rec="$dir/rec"
mkdir -p "$rec/telemetry"
# frames 1 and 2 overlap (two lanes); frame 3 has no round trip, only the
# host's receive; then a garbage line and one cut off mid-line
cat > "$rec/frames.csv" <<'CSV'
frame_id,sequence,bytes,device_send_ns,host_recv_device_ns,one_way_ms,round_trip_ms
1,1,1000,1000000000,1002000000,2.000000,30.000000
2,2,2000,1010000000,1012000000,2.000000,5.000000
3,3,3000,1050000000,1052000000,2.000000,
this is not a frame
4,4,1000,10600
CSV
cat > "$rec/telemetry/link_diag.jsonl" <<'JSON'
{"type":"link_diag","mono_ns":5,"totals":{"frames_sent":9,"frames_held":1,"bytes":100}}
{"type":"link_diag","mono_ns":6,"last_send":{"bytes":10},"totals":{"frames_sent":10,"frames_held":3,"frames_replaced":1,"frames_lost":0,"messages_dropped":2,"bytes":12345}}
{"type":"link_diag","totals":{"frames_sent":
JSON
cat > "$rec/telemetry/perflink-profile.jsonl" <<'JSON'
{"type":"perflink-profile","version":1,"pid":812,"comm":"raptor","report":1,"frames":250,"stages":[{"name":"avpu_wait_irq","kind":"wait","calls":250,"wall_total_ns":1000000000,"cpu_total_ns":1000000}]}
{"type":"perflink-profile","version":1,"pid":812,"comm":"raptor","report":2,"frames":500,"stages":[{"name":"avpu_wait_irq","kind":"wait","calls":500,"wall_total_ns":2500000000,"cpu_total_ns":3000000},{"name":"avpu_flush","kind":"cache","calls":7,"wall_total_ns":7000,"cpu_total_ns":6000}]}
{garbage
JSON
cat > "$rec/telemetry/stall.jsonl" <<'JSON'
{"type":"stall","wall":1700000000.5,"mono":12.5,"victim":{"pid":900,"comm":"rec\"der","label":"x"},"ongoing":false,"window_ms":500,"mechanism":"writeback"}
{"type":"stall","wall":1700000001.5,"mono":13.5,"victim":{"pid":900,"comm":"rec\"der","label":"x"},"ongoing":false,"window_ms":200,"mechanism":"writeback"}
{"type":"stall","wall":1700000002.5,"mono":14,"victim":{"pid":901,"comm":"encoder","label":"y"},"ongoing":false,"window_ms":100,"mechanism":"direct_reclaim"}
{"type":"stall","mono":15,"window_ms":100,"mechanism":"writeback"}
{"type":"stall","mono":0.001,"victim":{"pid":902,"comm":"early"},"window_ms":900,"mechanism":"compaction"}
JSON
# a name that is not UTF-8 (a byte 0xff) and one cut in the middle of a
# character: label values must be UTF-8 or Prometheus refuses the file
printf '{"type":"stall","mono":20,"victim":{"pid":903,"comm":"bad\377name"},"window_ms":1,"mechanism":"%s\303\251"}\n' \
	"$(printf '%062d' 0)" >> "$rec/telemetry/stall.jsonl"
cat > "$rec/telemetry/resources.jsonl" <<'JSON'
{"type":"header","schema":1,"clk_tck":100,"page_size":4096}
{"type":"sample","seq":0,"mono_ns":1,"procs":[{"pid":812,"comm":"raptor","utime_ticks":10,"stime_ticks":5,"vm_kb":{"VmRSS":1024}}]}
{"type":"sample","seq":1,"mono_ns":2,"procs":[{"pid":812,"comm":"raptor","utime_ticks":150,"stime_ticks":50,"vm_kb":{"VmRSS":2048}},{"pid":813,"comm":"a\\b","utime_ticks":1,"stime_ticks":0}]}
JSON
# the fuzz seed's first byte picks its file (test/fuzz/fuzz_recording.c);
# the rest is render_window.jsonl as perflink-host --out files it
tail -c +2 "$render_window" > "$rec/telemetry/render_window.jsonl"

"$host" export "$rec" 2> "$dir/stderr"
ok $? "export exits 0 ($(tr '\n' ' ' < "$dir/stderr"))"
grep -q 'frames.csv: skipped 2 of 6 lines' "$dir/stderr"
ok $? "stderr counts the 2 bad lines of frames.csv"
grep -q 'stall.jsonl: skipped 1 of 6 lines' "$dir/stderr"
ok $? "stderr counts the stall without a victim"
[ -s "$rec/metrics.prom" ] && [ -s "$rec/trace.perfetto-trace" ]
ok $? "metrics.prom and trace.perfetto-trace written"
ls "$rec" | grep -q '\.tmp\.'
[ $? -ne 0 ]
ok $? "no temporary file left"

if command -v protoc > /dev/null; then
	decode_trace "$rec" "$dir/trace.txt"
	ok $? "protoc decodes the trace ($(head -c 200 "$dir/protoc.err"))"
	for name in 'perflink link' 'frames 0' 'frames 1' 'rec\"der 900' 'encoder 901' 'early 902' 'bad?name 903'; do
		grep -qF "name: \"$name\"" "$dir/trace.txt"
		ok $? "trace has the track \"$name\""
	done
	[ "$(grep -c 'type: TYPE_SLICE_BEGIN' "$dir/trace.txt")" -eq 8 ] &&
		[ "$(grep -c 'type: TYPE_SLICE_END' "$dir/trace.txt")" -eq 8 ]
	ok $? "trace has 8 slices: 3 frames, 5 stalls"
	[ "$(grep -c 'trusted_packet_sequence_id: 1' "$dir/trace.txt")" -eq "$(grep -c '^packet {' "$dir/trace.txt")" ]
	ok $? "every packet is on trusted sequence 1"
	grep -q 'name: "frame 2"' "$dir/trace.txt" && grep -q 'timestamp: 1015000000' "$dir/trace.txt" &&
		grep -q 'timestamp: 1052000000' "$dir/trace.txt"
	ok $? "frame slices end at the round trip, else at the host's receive"
	grep -q 'timestamp: 12000000000' "$dir/trace.txt" && grep -q 'name: "stall: writeback"' "$dir/trace.txt"
	ok $? "a stall slice starts window_ms before mono and is named by its mechanism"
	grep -q 'timestamp: 1000000$' "$dir/trace.txt"
	ok $? "a window said to start before the clock did still ends at mono"
	[ "$(grep -c 'type: TYPE_INSTANT' "$dir/trace.txt")" -eq 2 ] &&
		grep -q 'name: "frames held +2"' "$dir/trace.txt" &&
		grep -q 'name: "frames replaced +1"' "$dir/trace.txt"
	ok $? "instants where link_diag's held and replaced totals went up"
else
	missing "protoc is installed (scripts/deps installs protobuf-compiler)"
fi

# leaves PROFILE: per leaf function of go tool pprof -raw's samples, one
# line "NAME MODULE FILE:LINE SAMPLES CPU_NS SHARE%" (MODULE - when none)
leaves() {
	go tool pprof -raw -symbolize=none "$1" 2> "$dir/pprof.err" | awk '
	/^Samples:/ { sec = "s"; next }
	/^Locations/ { sec = "l"; next }
	/^Mappings/ { sec = "m"; next }
	sec == "s" && /^ *[0-9]+ +[0-9]+: / {
		split($0, a, ":"); split(a[1], v, " "); split(a[2], locs, " ")
		n++; cnt[n] = v[1]; cpu[n] = v[2]; leaf[n] = locs[1]; next
	}
	sec == "l" && /^ *[0-9]+: / {
		id = $1; sub(":", "", id); l = $0; m = "-"
		sub(/^ *[0-9]+: 0x[0-9a-f]+ /, "", l)
		if (l ~ /^M=[0-9]+ /) { m = l; sub(/ .*/, "", m); sub(/^M=/, "", m); sub(/^M=[0-9]+ /, "", l) }
		sub(/ s=[0-9]+$/, "", l)
		where = l; sub(/.* /, "", where); nm = l; sub(/ [^ ]*$/, "", nm)
		name[id] = nm; at[id] = where; map[id] = m; next
	}
	sec == "m" && /^[0-9]+: / { id = $1; sub(":", "", id); mod[id] = $3 }
	END {
		for (i = 1; i <= n; i++) { c[leaf[i]] += cnt[i]; ns[leaf[i]] += cpu[i]; tot += cnt[i] }
		for (id in c)
			printf "%s %s %s %d %d %.1f%%\n", name[id], map[id] == "-" ? "-" : mod[map[id]],
				at[id], c[id], ns[id], 100 * c[id] / tot
	}'
}
if command -v go > /dev/null; then
	p="$rec/profile.pb.gz"
	[ -s "$p" ] && [ -s "$rec/profiles/window-1.pb.gz" ] && [ -s "$rec/profiles/window-2.pb.gz" ] &&
		[ -s "$rec/profiles/window-3.pb.gz" ] && [ ! -e "$rec/profiles/window-4.pb.gz" ]
	ok $? "profile.pb.gz and one profiles/window-N.pb.gz for each of the 3 windows"
	[ "$(head -c 2 "$p" | od -An -tx1 | tr -d ' ')" = 1f8b ]
	ok $? "the profile is gzipped"
	go tool pprof -raw -symbolize=none "$p" > "$dir/raw.txt" 2> "$dir/pprof.err" &&
		grep -qx 'samples/count cpu/nanoseconds' "$dir/raw.txt" &&
		grep -qx 'PeriodType: cpu nanoseconds' "$dir/raw.txt" && grep -qx 'Period: 10000000' "$dir/raw.txt"
	ok $? "go tool pprof reads it: samples/count and cpu/nanoseconds, period 10 ms ($(head -c 200 "$dir/pprof.err"))"
	leaves "$p" > "$dir/merged.txt"
	has "$dir/merged.txt" 'hot_a renderer spin.h:10 100 1000000000 50.0%' &&
		has "$dir/merged.txt" 'hot_b renderer spin.h:20 90 900000000 45.0%' &&
		has "$dir/merged.txt" 'ns::draw(int, char) libdraw.so :0 10 100000000 5.0%' &&
		[ "$(wc -l < "$dir/merged.txt")" -eq 3 ]
	ok $? "merged: the hot functions at their shares of both windows, with the device's module, file:line and name ($(tr '\n' '|' < "$dir/merged.txt"))"
	leaves "$rec/profiles/window-1.pb.gz" > "$dir/w1.txt"
	has "$dir/w1.txt" 'hot_a renderer spin.h:10 60 600000000 60.0%' &&
		has "$dir/w1.txt" 'hot_b renderer spin.h:20 30 300000000 30.0%'
	ok $? "window 1 alone: hot_a 60%, hot_b 30% ($(tr '\n' '|' < "$dir/w1.txt"))"
	leaves "$rec/profiles/window-2.pb.gz" > "$dir/w2.txt"
	has "$dir/w2.txt" 'hot_a renderer spin.h:10 40 400000000 40.0%' &&
		has "$dir/w2.txt" 'hot_b renderer spin.h:20 60 600000000 60.0%' &&
		[ "$(wc -l < "$dir/w2.txt")" -eq 2 ]
	ok $? "window 2 alone: its two folded lines that parse, hot_a 40%, hot_b 60% ($(tr '\n' '|' < "$dir/w2.txt"))"
	go tool pprof -raw -symbolize=none "$rec/profiles/window-1.pb.gz" 2> /dev/null |
		grep -q 'M=[0-9]* render_frame :0'
	ok $? "a caller keeps its module and has no line (the device gives lines of innermost frames only)"
	go tool pprof -raw -symbolize=none "$rec/profiles/window-3.pb.gz" > "$dir/w3.txt" 2> /dev/null &&
		grep -qx 'Period: 10000000' "$dir/w3.txt" && [ -z "$(leaves "$rec/profiles/window-3.pb.gz")" ]
	ok $? "the window without a busy sample is a profile without samples"
	grep -q 'render_window.jsonl: skipped 2 of 5 lines' "$dir/stderr" &&
		grep -q 'render_window.jsonl: skipped 2 folded stack lines' "$dir/stderr"
	ok $? "stderr counts the 2 bad render_window lines and the 2 bad folded lines"
else
	missing "go is installed (scripts/deps installs golang-go for go tool pprof)"
fi

m="$rec/metrics.prom"
if command -v promtool > /dev/null; then
	out=$(promtool check metrics < "$m" 2>&1)
	st=$?
	[ $st -eq 0 ] && [ -z "$out" ]
	ok $? "promtool check metrics finds no problem ($out)"
else
	missing "promtool is installed (scripts/deps installs prometheus)"
fi
has "$m" 'perflink_frames_total 3'
ok $? "frames counted"
has "$m" 'perflink_frame_bytes_total 6000'
ok $? "frame bytes summed"
has "$m" 'perflink_frame_round_trip_seconds{quantile="0.5"} 0.005000000' &&
	has "$m" 'perflink_frame_round_trip_seconds{quantile="0.99"} 0.030000000' &&
	has "$m" 'perflink_frame_round_trip_seconds_count 2'
ok $? "round-trip quantiles in seconds"
has "$m" 'perflink_frame_one_way_seconds_count 3'
ok $? "one-way latency over all 3 frames"
has "$m" 'perflink_device_frames_held_total 3' && has "$m" 'perflink_device_link_bytes_total 12345' &&
	has "$m" 'perflink_device_messages_dropped_total 2'
ok $? "link totals from the last valid link_diag"
has "$m" 'perflink_stage_calls_total{pid="812",comm="raptor",stage="avpu_wait_irq"} 500' &&
	has "$m" 'perflink_stage_wall_seconds_total{pid="812",comm="raptor",stage="avpu_wait_irq"} 2.500000000' &&
	has "$m" 'perflink_stage_cpu_seconds_total{pid="812",comm="raptor",stage="avpu_flush"} 0.000006000'
ok $? "stage calls and times from the last report"
[ "$(grep -c '^perflink_stage_calls_total' "$m")" -eq 2 ]
ok $? "an earlier report does not add stages twice"
has "$m" 'perflink_stall_events_total{mechanism="writeback"} 2' &&
	has "$m" 'perflink_stall_events_total{mechanism="direct_reclaim"} 1' &&
	has "$m" 'perflink_stall_seconds_total{mechanism="writeback"} 0.700000000'
ok $? "stall events and seconds by mechanism"
has "$m" 'perflink_process_cpu_seconds_total{pid="812",comm="raptor"} 2.000' &&
	has "$m" 'perflink_process_resident_memory_bytes{pid="812",comm="raptor"} 2097152'
ok $? "process CPU seconds and resident bytes from the last sample"
has "$m" 'perflink_process_cpu_seconds_total{pid="813",comm="a\\b"} 0.010'
ok $? "a backslash in a label value is escaped"
grep -q "^perflink_stall_events_total{mechanism=\"$(printf '%062d' 0)\"} 1$" "$m"
ok $? "a name is cut between characters, not inside one"
has "$m" 'perflink_export_skipped_lines_total{file="frames.csv"} 2' &&
	has "$m" 'perflink_export_skipped_lines_total{file="telemetry/perflink-profile.jsonl"} 1' &&
	has "$m" 'perflink_export_skipped_lines_total{file="telemetry/link_diag.jsonl"} 1' &&
	has "$m" 'perflink_export_skipped_lines_total{file="telemetry/render_window.jsonl"} 2' &&
	has "$m" 'perflink_export_skipped_lines_total{file="telemetry/render_window.jsonl:folded"} 2'
ok $? "skipped lines counted per file"

# Per-call stage events (docs/stages.md "Events"): two threads of one
# process, one call with EAGAIN and bytes; a line with a call short of a
# field and one naming a stage it does not list are skipped whole.
calls="$dir/calls"
mkdir -p "$calls/telemetry"
cat > "$calls/telemetry/perflink-stage-calls.jsonl" <<'JSON'
{"type":"perflink-stage-calls","version":1,"pid":812,"comm":"raptor","start_mono_ns":5,"line":1,"events_sent":3,"events_dropped":0,"stage_names":["v4l2_dqbuf.wait","v4l2_dqbuf"],"calls":[[1000000000,30000000,20000,812,0,0,0],[1010000000,100000,90000,815,1,1,0],[1030000000,50000,40000,812,1,0,614400]]}
{"type":"perflink-stage-calls","version":1,"pid":812,"comm":"raptor","stage_names":["v4l2_dqbuf"],"calls":[[1040000000,50000,40000,812,0,0]]}
{"type":"perflink-stage-calls","version":1,"pid":812,"comm":"raptor","stage_names":["v4l2_dqbuf"],"calls":[[1040000000,50000,40000,812,1,0,0]]}
{"type":"perflink-stage-calls","version":1,"pid":812,"comm":"raptor","line":4,"events_sent":4,"events_dropped":0,"stage_names":["v4l2_dqbuf.wait"],"calls":[[1033000000,20000000,15000,812,0,0,0]]}
JSON
"$host" export "$calls" 2> "$dir/calls.err"
ok $? "export of stage calls exits 0 ($(tr '\n' ' ' < "$dir/calls.err"))"
grep -q 'perflink-stage-calls.jsonl: skipped 2 of 4 lines' "$dir/calls.err"
ok $? "the two bad lines of stage calls are counted"
if command -v protoc > /dev/null; then
	decode_trace "$calls" "$dir/calls.txt"
	ok $? "protoc decodes the trace of stage calls ($(head -c 200 "$dir/protoc.err"))"
	grep -qF 'name: "raptor 812"' "$dir/calls.txt" && grep -qF 'thread_name: "raptor"' "$dir/calls.txt" &&
		grep -qF 'thread_name: "thread 815"' "$dir/calls.txt" && grep -q 'tid: 815' "$dir/calls.txt"
	ok $? "a process track and a thread track for each of its threads"
	[ "$(grep -c 'type: TYPE_SLICE_BEGIN' "$dir/calls.txt")" -eq 4 ] &&
		[ "$(grep -c 'type: TYPE_SLICE_END' "$dir/calls.txt")" -eq 4 ]
	ok $? "a slice for each of the 4 calls of the good lines"
	[ "$(grep -c 'name: "v4l2_dqbuf.wait"' "$dir/calls.txt")" -eq 2 ] &&
		[ "$(grep -c 'name: "v4l2_dqbuf"' "$dir/calls.txt")" -eq 2 ]
	ok $? "slices named by their stage"
	grep -q 'timestamp: 1000000000$' "$dir/calls.txt" && grep -q 'timestamp: 1030000000$' "$dir/calls.txt" &&
		grep -q 'timestamp: 1030050000$' "$dir/calls.txt" && grep -q 'timestamp: 1053000000$' "$dir/calls.txt"
	ok $? "each slice from the call's start to start + wall"
	# protoc prints a message's fields by number: the value comes first
	grep -B1 'name: "cpu_ns"' "$dir/calls.txt" | grep -q 'uint_value: 20000' &&
		grep -B1 'name: "result"' "$dir/calls.txt" | grep -q 'string_value: "EAGAIN"' &&
		grep -B1 'name: "bytes"' "$dir/calls.txt" | grep -q 'uint_value: 614400'
	ok $? "CPU time, result and bytes as the slices' arguments"
else
	missing "protoc is installed (scripts/deps installs protobuf-compiler)"
fi

# Counters and a stall's bully: CPU % from a process's ticks (50 ticks of
# 100 a second over 1 s: 50), RSS, MemAvailable, link MB/s from its byte
# totals (5,000,000 bytes over 1 s: 5) and backlog; the bully as an
# instant on its own process track with a flow to the victim's stall.
cnt="$dir/counters"
mkdir -p "$cnt/telemetry"
cat > "$cnt/telemetry/resources.jsonl" <<'JSON'
{"type":"header","schema":1,"clk_tck":100,"page_size":4096}
{"type":"sample","seq":0,"mono_ns":1000000000,"meminfo_kb":{"MemAvailable":1000,"Dirty":10},"procs":[{"pid":812,"comm":"raptor","utime_ticks":10,"stime_ticks":0,"vm_kb":{"VmRSS":1024}}]}
{"type":"sample","seq":1,"mono_ns":2000000000,"meminfo_kb":{"MemAvailable":900,"Dirty":20},"procs":[{"pid":812,"comm":"raptor","utime_ticks":40,"stime_ticks":20,"vm_kb":{"VmRSS":2048}}]}
JSON
cat > "$cnt/telemetry/link_diag.jsonl" <<'JSON'
{"type":"link_diag","mono_ns":1000000000,"last_send":{"backlog_kb":4},"totals":{"frames_sent":1,"bytes":0}}
{"type":"link_diag","mono_ns":2000000000,"last_send":{"backlog_kb":8},"totals":{"frames_sent":2,"bytes":5000000}}
JSON
cat > "$cnt/telemetry/stall.jsonl" <<'JSON'
{"type":"stall","mono":3.5,"victim":{"pid":900,"comm":"recorder"},"window_ms":500,"bully":[{"pid":777,"comm":"dd","d_wbytes_kB":2048.0,"d_wchar_kB":2048.0,"exited":false}],"mechanism":"writeback"}
JSON
"$host" export "$cnt" 2> "$dir/cnt.err"
ok $? "export of counters and a bully exits 0 ($(tr '\n' ' ' < "$dir/cnt.err"))"
if command -v protoc > /dev/null; then
	decode_trace "$cnt" "$dir/cnt.txt"
	ok $? "protoc decodes the trace of counters ($(head -c 200 "$dir/protoc.err"))"
	for name in 'CPU %' 'RSS' 'MemAvailable' 'Dirty' 'link MB/s' 'link backlog' 'dd 777' 'recorder 900'; do
		grep -qF "name: \"$name\"" "$dir/cnt.txt"
		ok $? "trace has the track \"$name\""
	done
	grep -q 'double_counter_value: 50$' "$dir/cnt.txt"
	ok $? "CPU % from the process's ticks: 50"
	grep -q 'double_counter_value: 5$' "$dir/cnt.txt" && grep -q 'double_counter_value: 8192$' "$dir/cnt.txt"
	ok $? "link MB/s from its byte totals (5) and its backlog in bytes (8192)"
	grep -q 'double_counter_value: 2097152$' "$dir/cnt.txt" && grep -q 'double_counter_value: 921600$' "$dir/cnt.txt"
	ok $? "RSS and MemAvailable in bytes"
	[ "$(grep -c 'type: TYPE_COUNTER' "$dir/cnt.txt")" -eq 10 ]
	ok $? "10 counter values: CPU % from the second sample on, the others from the first"
	grep -qF 'name: "bully of recorder 900: wrote 2.0 MiB"' "$dir/cnt.txt" &&
		grep -q 'flow_ids: 1$' "$dir/cnt.txt" && grep -q 'terminating_flow_ids: 1$' "$dir/cnt.txt"
	ok $? "the bully's instant with a flow to the victim's stall slice"
else
	missing "protoc is installed (scripts/deps installs protobuf-compiler)"
fi

# The render sampler's timed samples: instants on the render thread named
# by the innermost frame. The folded text's second line does not parse, so
# line 2 is the second stack kept: the mapping must follow the device's
# line numbers, not the kept stacks'. A sample of line 1 (the bad one) and
# one of -1 (idle) get no instant.
smp="$dir/samples"
mkdir -p "$smp/telemetry"
printf '%s\n' '{"type":"render_window","pid":812,"comm":"raptor","tid":815,"mono_ns":3000000000,"window_s":2,"sample_period_ns":10000000,"report":"","folded":"main;draw;hot_a 2\nmain;;broken 1\nmain;draw;hot_b 1\n","samples":[[1000000000,0],[1010000000,2],[1020000000,0],[1030000000,1],[1040000000,-1],[1050000000]],"samples_dropped":0}' \
	> "$smp/telemetry/render_window.jsonl"
"$host" export "$smp" 2> "$dir/smp.err"
ok $? "export of timed samples exits 0 ($(tr '\n' ' ' < "$dir/smp.err"))"
if command -v protoc > /dev/null; then
	decode_trace "$smp" "$dir/smp.txt"
	ok $? "protoc decodes the trace of samples ($(head -c 200 "$dir/protoc.err"))"
	grep -qF 'name: "raptor 812"' "$dir/smp.txt" && grep -q 'tid: 815' "$dir/smp.txt" &&
		grep -qF 'thread_name: "thread 815"' "$dir/smp.txt"
	ok $? "the render thread's track under its process"
	[ "$(grep -c 'type: TYPE_INSTANT' "$dir/smp.txt")" -eq 3 ] &&
		[ "$(grep -c 'name: "hot_a"' "$dir/smp.txt")" -eq 2 ] && [ "$(grep -c 'name: "hot_b"' "$dir/smp.txt")" -eq 1 ]
	ok $? "an instant for each sample with a stack, named by its innermost frame (line 2 is hot_b)"
	grep -q 'timestamp: 1010000000$' "$dir/smp.txt" && ! grep -q 'timestamp: 1030000000$' "$dir/smp.txt" &&
		! grep -q 'timestamp: 1040000000$' "$dir/smp.txt"
	ok $? "at the sample's time; none for the bad line's sample or the idle one"
	grep -B1 'name: "stack"' "$dir/smp.txt" | grep -qF 'string_value: "main;draw;hot_b"'
	ok $? "the sample's stack as its argument"
	# and as Perfetto's own samples (PerfSample), resolved through the
	# interned callstacks as Perfetto resolves them
	python3 "$(dirname "$0")/trace_perf_samples.py" "$dir/smp.txt" > "$dir/perf.txt" 2>&1
	rc=$?
	printf '1000000000 812 815 main;draw;hot_a\n1010000000 812 815 main;draw;hot_b\n1020000000 812 815 main;draw;hot_a\n' |
		cmp -s - "$dir/perf.txt"
	same=$?
	ok "$([ $rc -eq 0 ] && [ $same -eq 0 ]; echo $?)" "a PerfSample for each sample with a stack, at its time, on its thread, its interned callstack the stack outermost first ($(tr '\n' '|' < "$dir/perf.txt"))"
else
	missing "protoc is installed (scripts/deps installs protobuf-compiler)"
fi

# A trace past --trace-max-mb goes into parts that each open on their own:
# 3000 calls in 6 lines, a cap of 20 kB.
rot="$dir/rotation"
mkdir -p "$rot/telemetry"
awk 'BEGIN {
	for (l = 0; l < 6; l++) {
		printf "{\"type\":\"perflink-stage-calls\",\"pid\":812,\"comm\":\"raptor\",\"stage_names\":[\"v4l2_dqbuf\"],\"calls\":["
		for (i = 0; i < 500; i++)
			printf "%s[%d,1000,500,812,0,0,0]", (i ? "," : ""), 1000000000 + (l * 500 + i) * 2000
		print "]}"
	}
}' > "$rot/telemetry/perflink-stage-calls.jsonl"
"$host" export --trace-max-mb 0.02 "$rot" 2> "$dir/rot.err"
ok $? "export with a 20 kB cap exits 0 ($(tr '\n' ' ' < "$dir/rot.err"))"
parts=$(ls "$rot" | grep -c '^trace\(\.[0-9]*\)\?\.perfetto-trace$')
[ "$parts" -ge 5 ] && [ -s "$rot/trace.perfetto-trace" ] && [ -s "$rot/trace.1.perfetto-trace" ]
ok $? "the trace went into $parts parts"
if command -v protoc > /dev/null; then
	total=0 whole=0 big=0
	for f in "$rot"/trace*.perfetto-trace; do
		protoc --decode=perfetto.protos.Trace --proto_path="$(dirname "$proto")" \
			"$(basename "$proto")" < "$f" > "$dir/part.txt" 2> /dev/null || whole=1
		b=$(grep -c 'type: TYPE_SLICE_BEGIN' "$dir/part.txt")
		e=$(grep -c 'type: TYPE_SLICE_END' "$dir/part.txt")
		[ "$b" -eq "$e" ] && [ "$b" -gt 0 ] || whole=1
		grep -qF 'thread_name: "raptor"' "$dir/part.txt" && grep -qF 'name: "raptor 812"' "$dir/part.txt" &&
			[ "$(sed -n '2,6p' "$dir/part.txt" | grep -c 'sequence_flags: 1')" -eq 1 ] || whole=1
		# at most the cap plus one slice's two packets
		[ "$(wc -c < "$f")" -le 20200 ] || big=1
		total=$((total + b))
	done
	[ "$whole" -eq 0 ]
	ok $? "each part decodes, starts afresh (sequence_flags) with the process and thread tracks, and ends no slice it did not begin"
	[ "$total" -eq 3000 ] && [ "$big" -eq 0 ]
	ok $? "the parts hold the 3000 slices between them ($total), none past the cap"
else
	missing "protoc is installed (scripts/deps installs protobuf-compiler)"
fi
"$host" export "$rot" 2> /dev/null
[ "$(ls "$rot" | grep -c 'perfetto-trace$')" -eq 1 ]
ok $? "exported again with the default cap: one file, the earlier export's parts removed"
"$host" export --trace-max-mb 0 "$rot" 2> /dev/null
[ $? -eq 2 ]
ok $? "a cap of 0 is refused (exit 2)"

mkdir "$dir/empty"
"$host" export "$dir/empty" 2> "$dir/empty.err"
st=$?
[ $st -eq 1 ] && grep -q 'no recording here' "$dir/empty.err" && [ ! -e "$dir/empty/metrics.prom" ]
ok $? "an empty directory: exit 1 and a message ($(cat "$dir/empty.err"))"
"$host" export "$dir/missing" 2> /dev/null
[ $? -eq 1 ]
ok $? "a missing directory: exit 1"
"$host" export 2> /dev/null
[ $? -eq 2 ]
ok $? "no directory: usage, exit 2"

echo "1..$n"
exit $failed
