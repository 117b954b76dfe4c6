#!/bin/sh
# perflinkd --user (TAP; root only, skipped otherwise): started as root with
# the tracer, the resource sampler and the TCP link, it runs as nobody with
# exactly the documented capabilities (docs/perflinkd.md, "Running as its own
# user"), and everything still works for processes of another user (root's):
# the tracer reads their /proc/PID/io, the sampler their PSS, the host gets
# frames and telemetry, `perflink status` answers. A bad user name is refused
# at start with a message; a gadget perflinkd cannot make here is a start
# error that leaves no root cleanup process behind. (The USB link as the
# user: the vm scenarios daemon_host_stall with PERFLINKD_USER, on a gadget
# bound outside perflinkd, and daemon_root_cleanup, on one it made.)
#
# usage: test_user_drop.sh PERFLINKD PERFLINK PERFLINK_HOST FRAME_PRODUCER
set -u
perflinkd=$1 perflink=$2 host=$3 producer=$4
if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP needs root (perflinkd drops from root to nobody)"
	exit 0
fi
if [ "$(id -u nobody 2>/dev/null)" != 65534 ] || [ "$(id -g nobody)" != 65534 ]; then
	echo "1..0 # SKIP no user nobody with uid and gid 65534"
	exit 0
fi
. "$(dirname "$0")/../preload/tcp_link_lib.sh"
scratch_dir user-drop
: >"$d/empty.conf"

# CAP_DAC_READ_SEARCH (bit 2) and CAP_SYS_PTRACE (bit 19): the tracer's and
# the sampler's, as documented
caps=0000000000080004

"$perflinkd" --foreground --config "$d/empty.conf" --control-socket "$d/control-bad" \
	--pidfile "" --user pl-no-such-user 2>"$d/bad.err"
rc=$?
check "an unknown user is a start error that names it (exit $rc): $(tail -n 2 "$d/bad.err" | head -n 1)" \
	'[ $rc -ne 0 ] && grep -q "no user named .pl-no-such-user." "$d/bad.err" && [ ! -e "$d/control-bad" ]'
"$perflinkd" --foreground --config "$d/empty.conf" --control-socket "$d/control-usb" \
	--pidfile "" --user nobody --link --link-setup-gadget --link-ffs-dir "$d/no-ffs" \
	2>"$d/usb.err"
rc=$?
# no configfs gadget can be made on this machine's /proc-only seam: the
# start fails at the gadget, before any root cleanup process is forked
check "user with a gadget perflinkd cannot make here: a start error naming the gadget (exit $rc)" \
	'[ $rc -ne 0 ] && grep -q "gadget: " "$d/usb.err" && grep -q "not started" "$d/usb.err"'
check "and no root cleanup process is left running" \
	'! grep -q "root cleanup process" "$d/usb.err" &&
	 [ -z "$(ps -eo comm | grep -x perflinkd-root)" ]'

# Root's writer, whose /proc/PID/io is mode 0400 root and smaps_rollup
# ptrace-checked: what nobody cannot read without the kept capabilities.
cp /bin/sh "$d/plvictim"
"$d/plvictim" -c 'while :; do head -c 65536 /dev/zero >"$0/w.bin"; sleep 0.02; done' "$d" &
opid=$!

start_daemon_tcp --user nobody --trace --trace-hz 20 --trace-names plvictim \
	--trace-nice 0 --trace-cpus "" --trace-out "$d/io_trace.csv" \
	--resources --resources-names plvictim --resources-interval 0.2 \
	--resources-pss-interval 0.2 --resources-out "$d/resources.jsonl"
s=$(cat "/proc/$dpid/status")
field() { echo "$s" | sed -n "s/^$1:[[:space:]]*//p" | tr -s ' \t' ' ' | sed 's/ $//'; }
check "Uid all nobody ($(field Uid))" '[ "$(field Uid)" = "65534 65534 65534 65534" ]'
check "Gid all nogroup ($(field Gid)), groups: $(field Groups)" \
	'[ "$(field Gid)" = "65534 65534 65534 65534" ] && [ "$(field Groups)" = 65534 ]'
check "CapEff and CapPrm exactly $caps ($(field CapEff) $(field CapPrm))" \
	'[ "$(field CapEff)" = $caps ] && [ "$(field CapPrm)" = $caps ]'
check "CapInh and CapAmb empty, CapBnd $caps ($(field CapInh) $(field CapAmb) $(field CapBnd))" \
	'[ "$(field CapInh)" = 0000000000000000 ] && [ "$(field CapAmb)" = 0000000000000000 ] &&
	 [ "$(field CapBnd)" = $caps ]'
check "NoNewPrivs 1" '[ "$(field NoNewPrivs)" = 1 ]'
check "perflinkd said whom it runs as" \
	'grep -q "running as uid 65534 gid 65534 (user = nobody), capabilities kept: CAP_DAC_READ_SEARCH CAP_SYS_PTRACE" "$d/daemon.err"'
"$perflink" status --socket "$d/control" >"$d/status.txt" 2>&1
check "perflink status answers" '[ $? -eq 0 ] && grep -q "tracer     running" "$d/status.txt"'

start_host_tcp
PERFLINK_SOCKET="$d/producers" "$producer" --socket "$d/producers" --frames 20 \
	--bytes 4096 --fps 40 --wait-replies 10 >"$d/producer.out" 2>&1
prc=$?
check "a producer's frames went to the host and came back: $(cat "$d/producer.out")" \
	"[ $prc -eq 0 ] && grep -q 'replies 20 bad_replies 0' '$d/producer.out'"

# the modules' lines for root's process: written, and sent as telemetry
for _ in $(seq 100); do
	[ "$(grep -c ',plvictim,' "$d/io_trace.csv" 2>/dev/null)" -ge 5 ] &&
		[ "$(grep -c '"pss_kb"' "$d/resources.jsonl" 2>/dev/null)" -ge 2 ] &&
		[ -s "$d/host/telemetry/resources.jsonl" ] && break
	sleep 0.1
done
check "the tracer reads root's writer's /proc/PID/io as nobody (rows with written kB)" \
	'[ "$(awk -F, "\$3 == \"plvictim\" && \$6 + 0 > 0" "$d/io_trace.csv" | wc -l)" -ge 5 ]'
check "the sampler reads root's writer's PSS as nobody" \
	'grep -q "\"comm\":\"plvictim\"" "$d/resources.jsonl" &&
	 grep -q "\"pss_kb\"" "$d/resources.jsonl" && ! grep -q "pss_error" "$d/resources.jsonl"'
check "the sampler's lines reached the host as telemetry" \
	'grep -q "\"comm\":\"plvictim\"" "$d/host/telemetry/resources.jsonl"'
st=$(status)
check "status: tracer and sampler running, no read errors" \
	'echo "$st" | grep -q "\"tracer\":{\"enabled\":true,\"running\":true" &&
	 echo "$st" | grep -q "\"resources\":{\"enabled\":true,\"running\":true" &&
	 ! echo "$st" | grep -q "\"read_errors\":[1-9]"'
kill -TERM "$hpid"; wait "$hpid"; hpid=
kill -TERM "$dpid"; wait "$dpid"
rc=$?
dpid=
check "perflinkd stops cleanly as nobody (exit $rc)" \
	'[ $rc -eq 0 ] && grep -q "stopped" "$d/daemon.err"'
finish
