# What the stage profiler's report must say of a capture program that
# waits for vivid's frames, blocking in VIDIOC_DQBUF or in a poll before
# it, for the scenarios that run programs nobody here wrote
# (profile_v4l2_ctl, profile_gst_v4l2src). Source it after defining
# check NAME EXPR; $out names the JSONL report.

# The fields of stage $1 in the last report.
stage() {
	tail -n 1 "$out" 2>/dev/null |
		sed -n "s/.*{\"name\":\"$(echo "$1" | sed 's/\./\\./g')\",\([^}]*\).*/\1/p"
}
field() { echo "$1" | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"; }

# check_dqbuf_waits LABEL FRAMES blocking|poll
# v4l2_dqbuf one call a frame without errors; in poll mode also
# v4l2_dqbuf.wait, the wait in poll/select on the device attributed to the
# stage it waits for, about one call a frame (the wait before the first
# DQBUF has no stage yet: frames - 1 allowed). The waiting stages' wall per
# frame near the 40 ms period of 25 fps, their CPU small.
check_dqbuf_waits() {
	local label=$1 frames=$2 mode=$3 dq calls errors wall cpu what w wcalls wwall wcpu per_frame
	dq=$(stage v4l2_dqbuf)
	calls=$(field "$dq" calls)
	errors=$(field "$dq" errors)
	wall=$(field "$dq" wall_total_ns)
	cpu=$(field "$dq" cpu_total_ns)
	echo "# $label v4l2_dqbuf: calls ${calls:-none} errors ${errors:-none} wall_total_ns ${wall:-none} cpu_total_ns ${cpu:-none}"
	check "$label: v4l2_dqbuf calls = frames, no errors" \
		"[ '${calls:-0}' -eq $frames ] && [ '${errors:-1}' -eq 0 ]"
	what=v4l2_dqbuf
	if [ "$mode" = poll ]; then
		w=$(stage v4l2_dqbuf.wait)
		wcalls=$(field "$w" calls)
		wwall=$(field "$w" wall_total_ns)
		wcpu=$(field "$w" cpu_total_ns)
		echo "# $label v4l2_dqbuf.wait: calls ${wcalls:-none} wall_total_ns ${wwall:-none} cpu_total_ns ${wcpu:-none}"
		check "$label: v4l2_dqbuf.wait stage present" "[ -n '$w' ]"
		check "$label: v4l2_dqbuf.wait about one call a frame ($((frames - 1))..$frames: ${wcalls:-none})" \
			"[ '${wcalls:-0}' -ge $((frames - 1)) ] && [ '${wcalls:-0}' -le $frames ]"
		wall=$(( ${wall:-0} + ${wwall:-0} ))
		cpu=$(( ${cpu:-0} + ${wcpu:-0} ))
		what="v4l2_dqbuf.wait + v4l2_dqbuf"
	fi
	per_frame=$(( ${wall:-0} / frames ))
	echo "# $label $what: wall per frame $per_frame ns, cpu_total_ns ${cpu:-none}"
	# 25 fps is a 40 ms period, less the program's own work between two
	# DQBUFs (little: neither program reads the frame) and, in poll mode,
	# the first frame's wait, in no stage: 49 of 50 periods. Above 40 ms
	# means vivid's generator ran late under emulation: 25..60 ms, the
	# bounds of profile_v4l2.
	check "$label: $what wall per frame near the 40 ms period (25..60 ms)" \
		"[ $per_frame -ge 25000000 ] && [ $per_frame -le 60000000 ]"
	# A wait charges its wake-up to CPU (0.2-1.3 ms under emulation,
	# profile_v4l2): below 20% of the wall, as profile_v4l2 asks.
	check "$label: $what CPU below 20% of its wall" "[ \$(( ${cpu:-1} * 5 )) -lt ${wall:-0} ]"
}
