#!/bin/sh
# perflink-host compare over two recorded directories
# (test/fixtures/host_compare/a and b: summary.json as perflink-host writes
# it, resources and profiler telemetry): the rows of the A/B table and their
# change figures, absolute and in percent, worked out by hand from the
# fixtures; a missing or malformed summary.json is an error with exit 2 and
# a message, never a crash or a table.
#
# usage: test_host_compare.sh PERFLINK_HOST FIXTURES_DIR   (TAP output)
set -u
host=$1
fx=$2
# check WHAT COMMAND..., tmp_dir (the scratch $dir), tap_end
. "$(dirname "$0")/../preload/tap_lib.sh"
tmp_dir test-compare
# last: the status of the command before, for check
last() { return "$st"; }
# row METRIC A B CHANGE: the table has that row, its cells as given
# (columns are two spaces or more apart; numbers right-aligned)
row() {
	awk -v m="$1" -v a="$2" -v b="$3" -v c="$4" '
		{ n = split($0, f, /  +/); if (f[1] == "") { for (i = 1; i < n; i++) f[i] = f[i + 1]; n-- } }
		f[1] == m && f[2] == a && f[3] == b && f[4] == c { found = 1 }
		END { exit !found }' "$dir/out"
}

"$host" compare "$fx/a" "$fx/b" > "$dir/out" 2> "$dir/err"
st=$?; check "compare exits 0 ($(cat "$dir/err"))" last
head -4 "$dir/out" | grep -q '^Metric  *A  *B  *Change'
st=$?; check "the head is Metric | A | B | Change" last
row 'frames' '750' '750' 'unchanged'
st=$?; check "frames: unchanged" last
row 'latency p50' '18.8 ms' '9.4 ms' '-9.4 ms (-50.0%)'
st=$?; check "latency p50 18.8 -> 9.4 ms: -9.4 ms (-50.0%)" last
row 'latency p99' '42.0 ms' '21.0 ms' '-21.0 ms (-50.0%)' &&
	row 'latency max' '75.2 ms' '40.0 ms' '-35.2 ms (-46.8%)'
st=$?; check "latency p99 and max with their changes" last
row 'latency p99.9' '60.5 ms' '30.2 ms' '-30.2 ms (-50.0%)'
st=$?; check "latency p99.9" last
row 'one-way p50' '2.10 ms' '2.00 ms' '-0.10 ms (-4.8%)'
st=$?; check "one-way p50 in its own scale (2.10 ms)" last
row 'held frames' '3' '0' '-3 (-100.0%)'
st=$?; check "held frames 3 -> 0" last
row 'MB/s' '11.796' '11.800' '+0.004 (+0.0%)'
st=$?; check "MB/s" last
row 'device CPU (sampled processes)' '7.000%' '5.500%' '-1.500 points (-21.4%)'
st=$?; check "device CPU: 50+20 ticks at 100 Hz over 10 s = 7%, against 5.5%: in points and percent" last
row 'CPU raptor' '5.000%' '3.500%' '-1.500 points (-30.0%)' &&
	row 'CPU encoderd' '2.000%' '2.000%' 'unchanged'
st=$?; check "CPU per process" last
row 'raptor avpu_submit calls' '750' '750' 'unchanged' &&
	row 'raptor avpu_submit CPU' '262.5 ms' '234.8 ms' '-27.8 ms (-10.6%)' &&
	row 'raptor avpu_submit wall' '300.0 ms' '280.0 ms' '-20.0 ms (-6.7%)'
st=$?; check "stage totals: calls, CPU, wall" last
row 'raptor avpu_flush calls' '-' '1,500' 'only in B'
st=$?; check "a stage only B has" last
"$host" compare "$fx/b" "$fx/a" > "$dir/out" 2> /dev/null
row 'raptor avpu_flush calls' '1,500' '-' 'only in A' && row 'held frames' '0' '3' '+3 (new)'
st=$?; check "the other way round: only in A, and a change from 0 is new" last
"$host" compare --markdown --label-a before --label-b after "$fx/a" "$fx/b" > "$dir/out" 2> /dev/null
grep -qxF '| Metric | before | after | Change |' "$dir/out" &&
	grep -qxF '| latency p50 | 18.8 ms | 9.4 ms | -9.4 ms (-50.0%) |' "$dir/out"
st=$?; check "--markdown with --label-a and --label-b" last

# what is not a pair of recordings: exit 2, a message naming the file, no table
mkdir -p "$dir/bad/telemetry" "$dir/notsummary" "$dir/truncated" "$dir/empty"
printf '{"p50_ms":1,' > "$dir/truncated/summary.json"
printf 'not json at all\n' > "$dir/bad/summary.json"
printf '{"hello":1}\n' > "$dir/notsummary/summary.json"
for c in empty bad notsummary truncated; do
	"$host" compare "$fx/a" "$dir/$c" > "$dir/out" 2> "$dir/err"
	rc=$?
	[ $rc -eq 2 ] && grep -q "$dir/$c/summary.json" "$dir/err" && [ ! -s "$dir/out" ]
	st=$?; check "$c: exit 2 ($rc), said on stderr ($(cat "$dir/err")), no table" last
done
"$host" compare "$dir/missing" "$fx/b" > "$dir/out" 2> "$dir/err"
[ $? -eq 2 ] && grep -q 'missing/summary.json: No such file' "$dir/err"
st=$?; check "a directory that does not exist: exit 2 ($(cat "$dir/err"))" last
"$host" compare "$fx/a" > /dev/null 2>&1
[ $? -eq 2 ]
st=$?; check "one directory: usage, exit 2" last
"$host" compare --help > "$dir/out" 2>&1
[ $? -eq 0 ] && grep -q 'summary.json' "$dir/out" && grep -q 'exit\|Exit' "$dir/out"
st=$?; check "--help says what is read and the exit status" last

tap_end
