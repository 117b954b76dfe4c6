#!/bin/sh
# Conformance over TCP (TAP): test/conformance/wire_host.c, a host written
# from docs/wire.md alone, against a real perflinkd with a pre-shared key
# and a libperflink producer. The handshake proves both ends; every message
# from the device checks as "Receiving" says; each frame's echo reaches the
# producer; PINGs are answered at once; and each hostile message the host
# sends at the end is counted in status under the reason wire.md names.
# HELLO goes both ways, each COMMAND is answered, and end_of_stream ends
# the session: the device closes the connection.
#
# usage: test_wire_host.sh PERFLINKD PERFLINK WIRE_HOST FRAME_PRODUCER
set -u
perflinkd=$1 perflink=$2 wire_host=$3 producer=$4
frames=40

. "$(dirname "$0")/../preload/tcp_link_lib.sh"
scratch_dir wire-host
head -c 32 /dev/urandom >"$d/key" && chmod 600 "$d/key"
start_daemon_tcp --link-tcp-key-file "$d/key"

"$wire_host" "$port" "$d/key" $frames 30 >"$d/host.out" 2>"$d/host.err" &
hpid=$!
# the producer once the host is there: a frame with no host is not sent
for _ in $(seq 100); do
	status | grep -q '"state":"up"' && break
	sleep 0.1
done
"$producer" --socket "$d/producers" --frames $frames --bytes 100000 --fps 100 \
	--wait-replies 10 >"$d/producer.out" 2>&1 &
ppid=$!
for _ in $(seq 400); do
	grep -q '^replies_sent' "$d/host.out" 2>/dev/null && break
	sleep 0.1
done
st=$(status)
wait "$ppid"; prc=$?; ppid=
get() { sed -n "s/^$1 //p" "$d/host.out"; }

check "the handshake proved both ends" '[ "$(get handshake)" = ok ]'
check "$(get frames) of $frames frames came, every message checked ($(get messages) messages, $(get bad) bad)" \
	'[ "$(get frames)" = $frames ] && [ "$(get bad)" = 0 ]'
check "sequence numbers from 0, +1 each" '[ "$(get sequence_ok)" = 1 ]'
check "padding zero to 64 bytes" '[ "$(get padding_ok)" = 1 ]'
check "telemetry: $(get telemetry) messages of JSON lines" \
	'[ "$(get telemetry)" -ge 1 ] && [ "$(get telemetry_lines_ok)" = 1 ]'
check "PINGs answered by PONGs carrying the PING's time: $(get pongs), slowest $(get max_pong_ms) ms" \
	'[ "$(get pongs)" -ge 3 ] && [ "$(get pong_time_ok)" = 1 ] &&
	 awk "BEGIN { exit !($(get max_pong_ms) < 500) }"'
check "the producer got every echo back: $(cat "$d/producer.out")" \
	"[ $prc -eq 0 ] && grep -q 'replies $frames bad_replies 0' '$d/producer.out'"
for reason in bad_header_check bad_checksum bad_flags bad_version bad_padding; do
	check "status counts the hostile message rejected as $reason" \
		"echo '$st' | grep -q '\"$reason\":1[,}]'"
done
check "and the REPLY to a frame never sent as replies_never_sent" \
	"echo '$st' | grep -q '\"replies_never_sent\":1[,}]'"
check "the host is still the host after all of it" "echo '$st' | grep -q '\"state\":\"up\"'"
check "the device's first message is its HELLO, with wire_version and commands" \
	'[ "$(get device_hello_ok)" = 1 ]'
check "status shows the host's HELLO: wire_host 1" \
	"echo '$st' | grep -q '\"host\":{\"program\":\"wire_host\",\"version\":\"1\",\"wire_version\":1'"
check "COMMAND ping and link_diag answered ok, and link_diag sent a link_diag line" \
	'[ "$(get ping_ok)" = 1 ] && [ "$(get link_diag_ok)" = 1 ] && [ "$(get link_diag_on_command)" = 1 ]'
check "an unknown and a malformed COMMAND answered not ok, and counted" \
	"[ \"\$(get unknown_refused)\" = 1 ] && [ \"\$(get malformed_refused)\" = 1 ] &&
	 echo '$st' | grep -q '\"commands_unknown\":1,\"commands_malformed\":1'"
kill -USR1 "$hpid"
wait "$hpid"; hpid=
check "end_of_stream: answered, then the device closed the connection" \
	'[ "$(get end_of_stream_ok)" = 1 ] && [ "$(get end_of_stream_closed)" = 1 ]'
check "and the link waits for the next host" 'status | grep -q "\"state\":\"waiting for the host\""'
[ $failed -eq 0 ] || { echo "# --- wire_host's stderr"; diag "$d/host.err"; }
finish
