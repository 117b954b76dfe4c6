#!/bin/sh
# The TCP link with a pre-shared key, every part real (TAP): perflinkd
# --link-tcp-key-file and perflink-host --tcp-key, a libperflink producer
# in between. The right key carries frames and their replies; no key, the
# wrong key, and a key file others can read are each refused with a message
# that says why, and perflinkd's status counts the refusals.
#
# usage: test_tcp_auth.sh PERFLINKD PERFLINK PERFLINK_HOST FRAME_PRODUCER
set -u
perflinkd=$1 perflink=$2 host=$3 producer=$4
. "$(dirname "$0")/../preload/tcp_link_lib.sh"
scratch_dir tcp-auth

head -c 32 /dev/urandom >"$d/key" && chmod 600 "$d/key"
head -c 32 /dev/urandom >"$d/other.key" && chmod 600 "$d/other.key"

# A key others may read is refused at start, with the reason.
cp "$d/key" "$d/open.key" && chmod 644 "$d/open.key"
: >"$d/empty.conf"
"$perflinkd" --foreground --config "$d/empty.conf" --control-socket "$d/control-x" \
	--pidfile "" --link --link-tcp 127.0.0.1:0 --link-tcp-key-file "$d/open.key" \
	2>"$d/refused.err"
rc=$?
check "perflinkd refuses a key file others can read (exit $rc): $(tail -n 1 "$d/refused.err")" \
	'[ $rc -ne 0 ] && grep -q "readable or writable by group or others" "$d/refused.err"'

# Without a key, every address means loopback, and perflinkd says so.
"$perflinkd" --foreground --config "$d/empty.conf" --control-socket "$d/control-y" \
	--pidfile "" --link --link-tcp :0 2>"$d/open.err" &
opid=$!
for _ in $(seq 50); do grep -q "loopback only" "$d/open.err" && break; sleep 0.1; done
check "without a key, ':0' listens on loopback only and says so" \
	'grep -q "no tcp-key-file: listening on loopback only" "$d/open.err"'
kill "$opid"; wait "$opid" 2>/dev/null; opid=

start_daemon_tcp --link-tcp-key-file "$d/key"
check "status says hosts must prove the key" \
	'status | grep -q "\"authentication\":\"pre-shared key\""'

# No key, then the wrong key: each host says why, neither becomes the host.
"$host" --tcp "127.0.0.1:$port" --seconds 2 --out "$d/nokey" >"$d/nokey.out" 2>&1
check "perflink-host without a key: 'the device asks for a key'" \
	'grep -q "the device asks for a key: give --tcp-key FILE" "$d/nokey.out"'
"$host" --tcp "127.0.0.1:$port" --tcp-key "$d/other.key" --seconds 2 --out "$d/wrong" \
	>"$d/wrong.out" 2>&1
check "perflink-host with the wrong key: refused, and says so once" \
	'[ "$(grep -c "refused this host.s proof" "$d/wrong.out")" = 1 ]'
check "and none of them was the host: link waiting" \
	'status | grep -q "\"state\":\"waiting for the host\""'
st=$(status)
check "status counts the refusals: $(echo "$st" | grep -o '"auth_[a-z_]*":[0-9]*' | tr '\n' ' ')" \
	'echo "$st" | grep -q "\"auth_passed\":0" && echo "$st" | grep -q "\"auth_failed\":[1-9]"'

# The right key: frames and their replies.
"$host" --tcp "127.0.0.1:$port" --tcp-key "$d/key" --reply echo --out "$d/host" \
	>"$d/host.out" 2>&1 &
hpid=$!
wait_link_up
check "perflink-host with the key: the device proved it, link up" \
	'status | grep -q "\"state\":\"up\"" && grep -q "the device proved the key" "$d/host.out"'
PERFLINK_SOCKET="$d/producers" "$producer" --socket "$d/producers" --frames 40 \
	--bytes 65536 --fps 40 --wait-replies 10 >"$d/producer.out" 2>&1
prc=$?
check "every frame's echo came back through the authenticated link: $(cat "$d/producer.out")" \
	"[ $prc -eq 0 ] && grep -q 'replies 40 bad_replies 0' '$d/producer.out'"
st=$(status)
kill -TERM "$hpid"; wait "$hpid"; hpid=
check "status: one host passed, admitted once" \
	'echo "$st" | grep -q "\"auth_passed\":1" && echo "$st" | grep -q "\"connections\":1,"'
finish
