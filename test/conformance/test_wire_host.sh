#!/bin/sh
# Conformance over TCP (TAP): test/conformance/wire_host.c, a host written
# from docs/wire.md alone, against a real perflinkd with a pre-shared key
# and a libperflink producer. The handshake proves both ends; every message
# from the device checks as "Receiving" says; each frame's echo reaches the
# producer; PINGs are answered at once; and each hostile message the host
# sends at the end is counted in status under the reason wire.md names.
# HELLO goes both ways, each COMMAND is answered, and end_of_stream ends
# the session: the device closes the connection. With "tls", all of it
# inside TLS 1.3 ("TLS"), wire_host checking the device's certificate (a
# throwaway self-signed one for 127.0.0.1) against the certificate itself.
#
# usage: test_wire_host.sh PERFLINKD PERFLINK WIRE_HOST FRAME_PRODUCER [tls]
set -u
perflinkd=$1 perflink=$2 wire_host=$3 producer=$4 mode=${5:-tcp}
frames=40

. "$(dirname "$0")/../preload/tcp_link_lib.sh"
. "$(dirname "$0")/wire_checks.sh"
scratch_dir wire-host
head -c 32 /dev/urandom >"$d/key" && chmod 600 "$d/key"
if [ "$mode" = tls ]; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=perflink conformance" -addext "subjectAltName=IP:127.0.0.1" \
		-keyout "$d/tls.key" -out "$d/tls.pem" 2>"$d/openssl.err" && chmod 600 "$d/tls.key"
	start_daemon_tcp --link-tcp-key-file "$d/key" --link-tcp-tls-cert "$d/tls.pem" \
		--link-tcp-tls-key "$d/tls.key"
	set -- tls "$port" "$d/key" "$d/tls.pem"
else
	start_daemon_tcp --link-tcp-key-file "$d/key"
	set -- tcp "$port" "$d/key"
fi

"$wire_host" "$@" $frames 30 >"$d/host.out" 2>"$d/host.err" &
hpid=$!
# the producer once the host is there: a frame with no host is not sent
for _ in $(seq 100); do
	status | grep -q '"state":"up"' && break
	sleep 0.1
done
# 25 fps: the producer's reply ring (1 MiB, the most perflinkd grants) holds
# ten of these 100 kB echoes, 400 ms of them at this rate. At 100 fps it
# held 100 ms, and a producer kept off the CPU that long (the ASan build on
# a loaded machine: 38 of 40 echoes once) loses the rest to a full ring,
# which perflinkd counts (replies_ring_full) but which is not the host's to
# get right.
"$producer" --socket "$d/producers" --frames $frames --bytes 100000 --fps 25 \
	--wait-replies 10 >"$d/producer.out" 2>&1 &
ppid=$!
for _ in $(seq 400); do
	grep -q '^replies_sent' "$d/host.out" 2>/dev/null && break
	sleep 0.1
done
st=$(status)
wait "$ppid"; prc=$?; ppid=
get() { sed -n "s/^$1 //p" "$d/host.out"; }

[ "$mode" = tls ] && check "TLS 1.3, the device's certificate checked" '[ "$(get tls)" = TLSv1.3 ]'
check "the handshake proved both ends" '[ "$(get handshake)" = ok ]'
producer_out=$d/producer.out
wire_checks
kill -USR1 "$hpid"
wait "$hpid"; hpid=
check "end_of_stream: answered, then the device closed the connection" \
	'[ "$(get end_of_stream_ok)" = 1 ] && [ "$(get end_of_stream_closed)" = 1 ]'
check "and the link waits for the next host" 'status | grep -q "\"state\":\"waiting for the host\""'
[ $failed -eq 0 ] || { echo "# --- wire_host's stderr"; diag "$d/host.err"; }
finish
