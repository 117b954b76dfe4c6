# The stage profiler on a real V4L2 capture device: v4l2_capture takes 50
# frames of 640x480 YUYV at 25 fps from vivid under libperflink-preload.so
# with only the built-in stages and the default frame boundary (each capture
# DQBUF), and the JSONL report must say what the loop did and what the
# device imposed:
# - v4l2_dqbuf: one call a frame, waiting for the 40 ms frame period (wall),
#   not working (CPU): vivid fills buffers from its own kernel thread;
# - dmabuf_sync: a start and an end around each frame's CPU read.
# TAP on the console; non-zero exit on any failure.
frames=50
interval=25
out=/tmp/v4l2.jsonl
n=0
fail=0
check() {
	n=$((n + 1))
	if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; fail=1; fi
}
# The fields of stage $1 in the last report (a cache stage's "sites" come
# after its numbers, so stopping at the first '}' keeps them all).
stage() { tail -n 1 "$out" | sed -n "s/.*{\"name\":\"$1\",\([^}]*\).*/\1/p"; }
field() { echo "$1" | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"; }

dev=
for d in /sys/class/video4linux/video*; do
	grep -q 'vid-cap' "$d/name" && { dev=/dev/${d##*/}; break; }
done
check "vivid has a video capture node ($dev)" "[ -n '$dev' ] && [ -c '$dev' ]"

# Without the shim first: the loop itself works on this device.
check "v4l2_capture runs without the shim" "v4l2_capture $dev $interval"

rm -f "$out"
LD_PRELOAD=/usr/bin/libperflink-preload.so PERFLINK_PROFILE=1 \
PERFLINK_PROFILE_INTERVAL=$interval PERFLINK_PROFILE_SYSLOG=off PERFLINK_PROFILE_OUT=$out \
	v4l2_capture "$dev" $frames >/tmp/capture.out 2>&1
rc=$?
cat /tmp/capture.out
check "v4l2_capture under the shim exits 0" "[ $rc -eq 0 ]"
check "captured $frames frames" "grep -q '^frames=$frames ' /tmp/capture.out"
check "two reports written" "[ -f $out ] && [ \$(wc -l <$out) -eq 2 ]"
echo "--- last report"
tail -n 1 "$out" 2>/dev/null

report_frames=$(tail -n 1 "$out" 2>/dev/null | sed -n 's/.*"frames":\([0-9]*\).*/\1/p')
check "the report counts $frames frames (${report_frames:-none})" "[ '${report_frames:-0}' -eq $frames ]"

# The rate the device delivered: the report's span (from the shim's start,
# so set-up included) over its frames, 40 ms at 25 fps.
elapsed=$(tail -n 1 "$out" 2>/dev/null | sed -n 's/.*"elapsed_ns":\([0-9]*\).*/\1/p')
per_frame=0
[ "${report_frames:-0}" -gt 0 ] && per_frame=$(( ${elapsed:-0} / report_frames ))
echo "# elapsed_ns ${elapsed:-none}, per frame $per_frame ns"
check "the device delivered 25 fps (36..48 ms a frame)" \
	"[ $per_frame -ge 36000000 ] && [ $per_frame -le 48000000 ]"

dq=$(stage v4l2_dqbuf)
calls=$(field "$dq" calls)
wall=$(field "$dq" wall_avg_ns)
cpu=$(field "$dq" cpu_avg_ns)
errors=$(field "$dq" errors)
echo "# v4l2_dqbuf: calls ${calls:-none} wall_avg_ns ${wall:-none} cpu_avg_ns ${cpu:-none}"
check "v4l2_dqbuf stage present" "[ -n '$dq' ]"
check "v4l2_dqbuf calls = frames" "[ '${calls:-0}' -eq $frames ] && [ '${errors:-1}' -eq 0 ]"
# 25 fps is a 40 ms period, and the loop's own work between two DQBUFs (the
# byte-by-byte read of 600 KB, about 4 ms under emulation) comes off the
# wait: 35-37 ms measured on the rig. Above 40 ms means vivid's generator ran
# late under emulation (it must still average 25 fps, checked above), so
# 25..60 ms.
check "v4l2_dqbuf average wall near the 40 ms period (25..60 ms)" \
	"[ '${wall:-0}' -ge 25000000 ] && [ '${wall:-0}' -le 60000000 ]"
# A DQBUF that made the frame in the caller's thread would cost CPU near its
# wall. A waiting one still gets charged its wake-up: 0.2-1.3 ms even for a
# bare nanosleep under emulation with the rig's unstable TSC, and the DQBUF
# measured 2-9% of its wall (the high end on a loaded host): below 20%.
check "v4l2_dqbuf CPU below 20% of its wall" "[ \$(( ${cpu:-1} * 5 )) -lt ${wall:-0} ]"

sync=$(stage dmabuf_sync)
scalls=$(field "$sync" calls)
sbytes=$(field "$sync" cache_bytes)
echo "# dmabuf_sync: calls ${scalls:-none} cache_bytes ${sbytes:-none}"
check "dmabuf_sync stage present" "[ -n '$sync' ]"
# The report is taken when the last frame's DQBUF returns, by the reporter
# thread: that frame's start/end pair may or may not be in it yet.
check "dmabuf_sync calls = 2 per frame (last frame's pair may be after the report)" \
	"[ '${scalls:-0}' -ge $((2 * frames - 2)) ] && [ '${scalls:-0}' -le $((2 * frames)) ]"
check "dmabuf_sync bytes = calls x 614400" "[ '${sbytes:-0}' -eq \$(( ${scalls:-0} * 614400 )) ]"
echo "1..$n"
exit $fail
