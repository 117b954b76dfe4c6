# The stage profiler on GStreamer's v4l2src (Debian's gst-launch-1.0 and
# gstreamer1.0-plugins-good): 50 buffers of 640x480 YUY2 at 25 fps from
# vivid into a fakesink, with only the built-in stages. v4l2src's
# streaming thread waits in GstPoll (ppoll on the device fd) before each
# VIDIOC_DQBUF, so the wait the device imposes (the 40 ms frame period)
# belongs to the companion stage v4l2_dqbuf.wait, about one call a frame
# (the wait before the first DQBUF has no stage yet: frames - 1 allowed),
# and must be wall time, not CPU. The status and the output as bare but
# for timing; the report's frames.
# The initramfs has gst-launch-1.0, the two plugins the pipeline needs
# (coreelements, video4linux2) and gst-plugin-scanner at their own paths
# (meson.build), nothing more; the registry lives in /tmp.
# TAP on the console; non-zero exit on any failure.
frames=50
interval=25
out=/tmp/gst.jsonl
n=0
fail=0
check() {
	n=$((n + 1))
	if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; fail=1; fi
}
. /scenarios/lib/dqbuf_waits.sh

dev=
for d in /sys/class/video4linux/video*; do
	grep -q 'vid-cap' "$d/name" && { dev=/dev/${d##*/}; break; }
done
check "vivid has a video capture node ($dev)" "[ -n '$dev' ] && [ -c '$dev' ]"
check "gst-launch-1.0 is in the VM (scripts/deps: gstreamer1.0-tools)" \
	"command -v gst-launch-1.0 >/dev/null"
for p in coreelements:libgstreamer1.0-0 video4linux2:gstreamer1.0-plugins-good; do
	check "GStreamer's ${p%%:*} plugin is in the VM (scripts/deps: ${p#*:})" \
		"ls /usr/lib/*/gstreamer-1.0/libgst${p%%:*}.so >/dev/null 2>&1"
done

# A registry of its own, made by the bare run (its gst-plugin-scanner
# child): the run under the shim then finds it whole and starts no scanner.
# The plugins and the scanner are named: libgstreamer looks for them next
# to where it was loaded from, and the loader found it in /lib, which on
# this machine is /usr/lib (merged /usr) but in the VM a folder of its own.
export GST_REGISTRY=/tmp/gst-registry.bin HOME=/tmp
GST_PLUGIN_SYSTEM_PATH=$(ls -d /usr/lib/*/gstreamer-1.0 2>/dev/null | head -n 1)
GST_PLUGIN_SCANNER=$(ls /usr/lib/*/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner 2>/dev/null | head -n 1)
export GST_PLUGIN_SYSTEM_PATH GST_PLUGIN_SCANNER
check "gst-plugin-scanner is in the VM (scripts/deps: libgstreamer1.0-0)" "[ -x '$GST_PLUGIN_SCANNER' ]"
pipeline="v4l2src device=$dev num-buffers=$frames
	! video/x-raw,format=YUY2,width=640,height=480,framerate=25/1 ! fakesink"
timing='s/^Execution ended after [0-9:.]*$/Execution ended after T/'
gst-launch-1.0 $pipeline >/tmp/bare.out 2>/tmp/bare.err
bare_rc=$?
cat /tmp/bare.out /tmp/bare.err
check "gst-launch-1.0 v4l2src runs without the shim (status $bare_rc)" "[ $bare_rc -eq 0 ]"

rm -f "$out"
LD_PRELOAD=/usr/bin/libperflink-preload.so PERFLINK_PROFILE=1 \
PERFLINK_PROFILE_INTERVAL=$interval PERFLINK_PROFILE_SYSLOG=off PERFLINK_PROFILE_OUT=$out \
	gst-launch-1.0 $pipeline >/tmp/shim.out 2>/tmp/shim.err
rc=$?
cat /tmp/shim.out /tmp/shim.err
check "under the shim, the same status ($rc)" "[ $rc -eq $bare_rc ]"
# gst-launch prints bus messages as they come from the streaming thread:
# two may change places from run to run, so the lines are compared sorted
sed "$timing" /tmp/bare.out | sort >/tmp/bare.norm
sed "$timing" /tmp/shim.out | sort >/tmp/shim.norm
check "under the shim, the same stdout but for gst-launch's timing" \
	"cmp -s /tmp/bare.norm /tmp/shim.norm"
check "under the shim, the same stderr" "cmp -s /tmp/bare.err /tmp/shim.err"
echo "--- last report"
tail -n 1 "$out" 2>/dev/null
report_frames=$(tail -n 1 "$out" 2>/dev/null | sed -n 's/.*"frames":\([0-9]*\).*/\1/p')
check "the report counts $frames frames (${report_frames:-none})" \
	"[ '${report_frames:-0}' -eq $frames ]"

# Measured: 49 waits, wait + dqbuf 36.8-37.7 ms a frame, 0.42-0.67 ms of
# it CPU (1.1-1.8%); v4l2_dqbuf alone 0.09-0.15 ms (the buffer is ready
# when the poll returns; before the wait hooks, and before a dup of the
# device learnt its wait stage with it, that was all: v4l2src polls the fd
# it opened and dequeues on its buffer pool's dup);
# 50 buffers in 2.03 s bare and 2.07 s under the shim (gst-launch's own
# "Execution ended after").
check_dqbuf_waits v4l2src $frames poll
echo "1..$n"
exit $fail
