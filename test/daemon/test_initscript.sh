#!/bin/sh
# The init script against the real perflinkd: start, status, a second start,
# stop, and a start that fails on a bad config, with start-stop-daemon and,
# where PATH can be made to lack it, with perflinkd's own --pidfile.
#
# usage: test_initscript.sh INIT_SCRIPT PERFLINKD PERFLINK   (TAP output)
set -u
# start-stop-daemon runs the daemon from /: absolute paths only.
script=$(realpath "$1")
perflinkd=$(realpath "$2")
perflink=$(realpath "$3")
dir=$(mktemp -d /tmp/pl-test-init-XXXXXX)
n=0
failed=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}

export DAEMON="$perflinkd" PIDFILE="$dir/perflinkd.pid" LOGDIR="$dir/log"
good="--config /dev/null --control-socket $dir/control"

round() {
	how=$1
	out=$(PERFLINKD_ARGS="$good" sh "$script" start 2>&1)
	ok $? "$how: start ($out)"
	pid=$(cat "$PIDFILE" 2>/dev/null)
	kill -0 "$pid" 2>/dev/null
	ok $? "$how: the pid file names a live process ($pid)"
	"$perflink" status --socket "$dir/control" >/dev/null
	ok $? "$how: perflink status reaches it"
	sh "$script" status >/dev/null
	ok $? "$how: status says running"
	out=$(PERFLINKD_ARGS="$good" sh "$script" start 2>&1)
	case "$out" in *"already running"*) r=0 ;; *) r=1 ;; esac
	ok $r "$how: a second start sees it running"
	sh "$script" stop >/dev/null
	! kill -0 "$pid" 2>/dev/null
	ok $? "$how: stop ends it"
	[ ! -e "$PIDFILE" ] && [ ! -e "$dir/control" ]
	ok $? "$how: pid file and control socket are gone"
	sh "$script" status >/dev/null
	[ $? -eq 3 ]
	ok $? "$how: status says not running (3)"
	if PERFLINKD_ARGS="--config $dir/missing.conf" sh "$script" start >/dev/null 2>&1; then
		r=1
	else
		r=0
	fi
	ok $r "$how: a start with a bad config fails"
}

if command -v start-stop-daemon >/dev/null 2>&1; then
	round "start-stop-daemon"
else
	echo "ok $((n = n + 1)) # SKIP no start-stop-daemon here"
fi
if ! PATH=/usr/bin:/bin command -v start-stop-daemon >/dev/null 2>&1; then
	PATH=/usr/bin:/bin round "own pid file"
else
	echo "ok $((n = n + 1)) # SKIP start-stop-daemon cannot be hidden here"
fi
rm -rf "$dir"
echo "1..$n"
exit $failed
