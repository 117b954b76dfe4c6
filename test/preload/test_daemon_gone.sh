#!/bin/sh
# A producer learns that its perflinkd died (TAP): frame_producer sends
# through a real perflinkd, which is then killed with SIGKILL (no goodbye on
# the socket but the kernel's). The producer must say so and end, not keep
# making frames for nobody.
#
# usage: test_daemon_gone.sh PERFLINKD PERFLINK FRAME_PRODUCER
set -u
perflinkd=$1 perflink=$2 producer=$3
d=$(mktemp -d "${TMPDIR:-/tmp}/pl-gone-XXXXXX")
dpid= ppid=
cleanup() {
	for pid in $ppid $dpid; do kill -KILL "$pid" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$d"
}
trap cleanup EXIT

. "$(dirname "$0")/tcp_link_lib.sh" # check; this test needs no link

: >"$d/empty.conf"
"$perflinkd" --foreground --config "$d/empty.conf" --control-socket "$d/control" \
	--pidfile "" 2>"$d/daemon.err" &
dpid=$!
for _ in $(seq 100); do
	[ -S "$d/producers" ] && break
	sleep 0.1
done
# a long run: 100 s of frames at 100 fps, were the daemon to stay
"$producer" --socket "$d/producers" --frames 10000 --bytes 4096 --fps 100 \
	--wait-replies 0 >"$d/producer.out" 2>&1 &
ppid=$!
for _ in $(seq 50); do
	"$perflink" status --json --socket "$d/control" 2>/dev/null | grep -q '"frames":[1-9]' && break
	sleep 0.1
done
check "the producer is sending" 'kill -0 "$ppid" 2>/dev/null'
kill -KILL "$dpid"
wait "$dpid" 2>/dev/null
dpid=
ended=no
for _ in $(seq 50); do
	kill -0 "$ppid" 2>/dev/null || { ended=yes; break; }
	sleep 0.1
done
check "perflinkd killed: the producer ends within 5 s" '[ $ended = yes ]'
wait "$ppid"
prc=$?
ppid=
check "with its own exit status (3) and saying why: $(cat "$d/producer.out")" \
	"[ $prc -eq 3 ] && grep -q 'perflinkd went away' '$d/producer.out'"
echo "1..$n"
[ $failed -eq 0 ]
