# The stage profiler on a program nobody here wrote: v4l2-ctl (Debian's
# v4l-utils) streams 50 mmap buffers of 640x480 YUYV at 25 fps from vivid
# with only the built-in stages, once blocking in VIDIOC_DQBUF and once
# with --stream-poll, where it opens the node non-blocking and waits in
# select() before each DQBUF. For each: the status and the frames
# v4l2-ctl itself counts as bare, the report's frames, and that the wait
# the device imposes (the 40 ms frame period) is wall time, not CPU:
# - blocking: in v4l2_dqbuf, one call a frame;
# - poll: in the select(), which the shim attributes to the companion stage
#   v4l2_dqbuf.wait (a wait on a staged device fd), about one call a frame
#   (the wait before the first DQBUF has no stage yet: frames - 1 allowed),
#   and the DQBUF after it finds a buffer ready.
# TAP on the console; non-zero exit on any failure.
frames=50
interval=25
n=0
fail=0
check() {
	n=$((n + 1))
	if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; fail=1; fi
}
. /scenarios/lib/dqbuf_waits.sh
# v4l2-ctl's own count: one '<' per buffer it dequeued (on stderr)
captured() { tr -cd '<' <"$1" | wc -c; }
# and the rest of its output: none but where its lines break and its rate
# lines' figures, which are timing ("25.01 fps, dropped buffers: 2" when
# vivid's sequence skipped, as it did once on a loaded host)
rest() { sed -E 's/[0-9.]+ fps(, dropped buffers: [0-9]+)?$//' "$1" | tr -d '< \n'; }

dev=
for d in /sys/class/video4linux/video*; do
	grep -q 'vid-cap' "$d/name" && { dev=/dev/${d##*/}; break; }
done
check "vivid has a video capture node ($dev)" "[ -n '$dev' ] && [ -c '$dev' ]"
check "v4l2-ctl is in the VM (scripts/deps: v4l-utils)" "command -v v4l2-ctl >/dev/null"

# vivid keeps its format and rate between opens; its default rate is 5 fps
v4l2-ctl -d "$dev" --set-fmt-video=width=640,height=480,pixelformat=YUYV --set-parm=25 \
	>/tmp/set.out 2>&1
cat /tmp/set.out
v4l2-ctl -d "$dev" --get-parm >/tmp/parm.out 2>&1
check "vivid set to 25 fps ($(grep -i 'frames per second' /tmp/parm.out | tr -s ' '))" \
	"grep -qi 'frames per second: 25.000' /tmp/parm.out"

for mode in blocking poll; do
	opts="--stream-mmap --stream-count=$frames"
	[ $mode = poll ] && opts="$opts --stream-poll"
	out=/tmp/v4l2ctl-$mode.jsonl
	v4l2-ctl -d "$dev" $opts >/tmp/bare.out 2>&1
	bare_rc=$?
	check "$mode: v4l2-ctl $opts runs without the shim (status $bare_rc)" "[ $bare_rc -eq 0 ]"
	bare_frames=$(captured /tmp/bare.out)
	rm -f "$out"
	LD_PRELOAD=/usr/bin/libperflink-preload.so PERFLINK_PROFILE=1 \
	PERFLINK_PROFILE_INTERVAL=$interval PERFLINK_PROFILE_SYSLOG=off PERFLINK_PROFILE_OUT=$out \
		v4l2-ctl -d "$dev" $opts >/tmp/shim.out 2>&1
	rc=$?
	cat /tmp/shim.out
	check "$mode: under the shim, the same status ($rc)" "[ $rc -eq $bare_rc ]"
	shim_frames=$(captured /tmp/shim.out)
	check "$mode: v4l2-ctl counts $frames frames bare ($bare_frames) and under the shim ($shim_frames)" \
		"[ $bare_frames -eq $frames ] && [ $shim_frames -eq $frames ]"
	# and prints nothing else, bare or not
	check "$mode: under the shim, v4l2-ctl prints nothing but frames and rates, as bare" \
		"[ -z \"\$(rest /tmp/bare.out)\" ] && [ -z \"\$(rest /tmp/shim.out)\" ]"
	echo "--- last report"
	tail -n 1 "$out" 2>/dev/null
	report_frames=$(tail -n 1 "$out" 2>/dev/null | sed -n 's/.*"frames":\([0-9]*\).*/\1/p')
	check "$mode: the report counts $frames frames (${report_frames:-none})" \
		"[ '${report_frames:-0}' -eq $frames ]"

	# Measured, blocking: 37.6-38.8 ms a frame in v4l2_dqbuf, 0.43-1.09 ms
	# of it CPU (1.1-2.8%), 1.9 ms (5.1%) at a host load of 4.8; poll: 49
	# waits, wait + dqbuf 38.6-40.1 ms a frame, 0.55-1.1 ms of it CPU
	# (1.4-2.9%), 4.4 ms (11%) at that load; v4l2_dqbuf alone 0.08-0.17 ms
	# (the buffer is ready when select() returns; before the wait hooks
	# that was all).
	check_dqbuf_waits "$mode" $frames $mode
done
echo "1..$n"
exit $fail
