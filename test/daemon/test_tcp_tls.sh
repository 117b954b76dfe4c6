#!/bin/sh
# The TCP link inside TLS 1.3, every part real (TAP): perflinkd with
# link-tcp-tls-cert/-key and link-tcp-key-file, perflink-host with --tls-ca
# or --tls-fingerprint and --tcp-key, a libperflink producer in between, on
# a throwaway self-signed certificate made here with openssl.
#
# The right CA or fingerprint carries frames and their echoes; a wrong CA
# and a wrong fingerprint are refused by the host, saying why; a host
# without TLS is refused and told why, and so is a TLS host at a device
# without TLS; garbage instead of a ClientHello and
# a handshake that stalls are refused (the stall at the deadline) while the
# host already there keeps its stream and status still answers. A private
# key others may read, a certificate others may write, and TLS without the
# pre-shared key stop perflinkd at start.
#
# usage: test_tcp_tls.sh PERFLINKD PERFLINK PERFLINK_HOST FRAME_PRODUCER
set -u
perflinkd=$1 perflink=$2 host=$3 producer=$4
. "$(dirname "$0")/../preload/tcp_link_lib.sh"
scratch_dir tcp-tls

command -v openssl >/dev/null || { missing "openssl (scripts/deps: openssl)"; finish; exit; }
# A device certificate for 127.0.0.1, and another nobody trusts.
cert() { # name
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=perflink $1" -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
		-keyout "$d/$1.key" -out "$d/$1.pem" 2>"$d/openssl.err" && chmod 600 "$d/$1.key"
}
cert device && cert stranger
check "openssl made the certificates" '[ -s "$d/device.pem" ] && [ -s "$d/stranger.pem" ]'
head -c 32 /dev/urandom >"$d/key" && chmod 600 "$d/key"
fp=$(openssl x509 -noout -fingerprint -sha256 -in "$d/device.pem" | sed 's/.*=//')
wrong_fp=$(openssl x509 -noout -fingerprint -sha256 -in "$d/stranger.pem" | sed 's/.*=//')
tls="--link-tcp-tls-cert $d/device.pem --link-tcp-tls-key $d/device.key"

# At start: a private key others may read, and TLS without the key.
cp "$d/device.key" "$d/open.key" && chmod 644 "$d/open.key"
: >"$d/empty.conf"
"$perflinkd" --foreground --config "$d/empty.conf" --control-socket "$d/control-x" \
	--pidfile "" --link --link-tcp 127.0.0.1:0 --link-tcp-key-file "$d/key" \
	--link-tcp-tls-cert "$d/device.pem" --link-tcp-tls-key "$d/open.key" 2>"$d/refused.err"
rc=$?
check "perflinkd refuses a TLS private key others can read (exit $rc): $(tail -n 1 "$d/refused.err")" \
	'[ $rc -ne 0 ] && grep -q "open.key: readable or writable by group or others" "$d/refused.err"'
cp "$d/device.pem" "$d/open.pem" && chmod 666 "$d/open.pem"
"$perflinkd" --foreground --config "$d/empty.conf" --control-socket "$d/control-x" \
	--pidfile "" --link --link-tcp 127.0.0.1:0 --link-tcp-key-file "$d/key" \
	--link-tcp-tls-cert "$d/open.pem" --link-tcp-tls-key "$d/device.key" 2>"$d/refused.err"
rc=$?
check "perflinkd refuses a certificate others can write (exit $rc)" \
	'[ $rc -ne 0 ] && grep -q "open.pem: writable by group or others" "$d/refused.err"'
# shellcheck disable=SC2086
"$perflinkd" --foreground --config "$d/empty.conf" --control-socket "$d/control-x" \
	--pidfile "" --link --link-tcp 127.0.0.1:0 $tls 2>"$d/nokey.err"
rc=$?
check "perflinkd refuses TLS without the pre-shared key (exit $rc)" \
	'[ $rc -ne 0 ] && grep -q "tcp-tls-cert needs tcp-key-file" "$d/nokey.err"'

# A TLS host at a device without TLS: the device's challenge in the clear
# is no TLS record, and both ends say what is wrong.
"$perflinkd" --foreground --config "$d/empty.conf" --control-socket "$d/control-y" \
	--pidfile "" --link --link-tcp 127.0.0.1:0 --link-tcp-key-file "$d/key" \
	2>"$d/clear.err" &
opid=$!
for _ in $(seq 50); do
	clear_port=$("$perflink" status --json --socket "$d/control-y" 2>/dev/null |
		sed -n 's/.*"tcp_port":\([0-9]*\).*/\1/p')
	[ -n "$clear_port" ] && break
	sleep 0.1
done
"$host" --tcp "127.0.0.1:${clear_port:-1}" --tcp-key "$d/key" --tls-ca "$d/device.pem" \
	--seconds 1 --out "$d/h-clear" >"$d/clear.out" 2>&1
kill "$opid"; wait "$opid" 2>/dev/null; opid=
check "a TLS host at a device without TLS: it asks whether the device has link-tcp-tls-cert" \
	'grep -q "does the device have link-tcp-tls-cert?" "$d/clear.out"'
check "and the device says the host may speak TLS to a port without it" \
	'grep -q "one that speaks TLS to a port without it" "$d/clear.err"'

# shellcheck disable=SC2086
start_daemon_tcp --link-tcp-key-file "$d/key" $tls
check "status says TLS 1.3 and the key" \
	'status | grep -q "\"authentication\":\"pre-shared key\",\"encryption\":\"TLS 1.3\""'

# The wrong CA, the wrong fingerprint, and no TLS: each refused, saying why.
"$host" --tcp "127.0.0.1:$port" --tcp-key "$d/key" --tls-ca "$d/stranger.pem" --seconds 2 \
	--out "$d/h-ca" >"$d/wrong-ca.out" 2>&1
check "a CA that did not sign the device's certificate: refused, and said once" \
	'[ "$(grep -c "does not verify against the CA" "$d/wrong-ca.out")" = 1 ]'
"$host" --tcp "127.0.0.1:$port" --tcp-key "$d/key" --tls-fingerprint "$wrong_fp" --seconds 2 \
	--out "$d/h-fp" >"$d/wrong-fp.out" 2>&1
check "another certificate's fingerprint: refused, naming the device's" \
	'grep -q "not the one pinned (its SHA-256 fingerprint is $fp)" "$d/wrong-fp.out"'
"$host" --tcp "127.0.0.1:$port" --tcp-key "$d/key" --seconds 7 --out "$d/h-plain" \
	>"$d/plain.out" 2>&1
check "a host without TLS: refused, and told the device wants TLS" \
	'grep -q "give --tls-ca or --tls-fingerprint" "$d/plain.out"'
st=$(status)
check "none of them became the host: $(echo "$st" | grep -o '"[a-z_]*\(auth\|tls\)_[a-z_]*":[0-9]*' | tr '\n' ' ')" \
	'echo "$st" | grep -q "\"state\":\"waiting for the host\"" &&
	 echo "$st" | grep -q "\"auth_passed\":0" && echo "$st" | grep -q "\"tls_failed\":[1-9]"'

# The right CA: frames and their echoes through TLS.
"$host" --tcp "127.0.0.1:$port" --tcp-key "$d/key" --tls-ca "$d/device.pem" --reply echo \
	--out "$d/host" >"$d/host.out" 2>&1 &
hpid=$!
wait_link_up
check "perflink-host with the CA: link up over TLS" \
	'status | grep -q "\"state\":\"up\"" && grep -q "TLS 1.3, the device proved its certificate and the key" "$d/host.out"'

# Hostile peers while the host streams: garbage for a ClientHello, a
# handshake begun and never finished, and a fuzzer. None displaces the host.
cat >"$d/hostile.py" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
g = socket.create_connection(("127.0.0.1", port))
g.sendall(b"GET / HTTP/1.0\r\n\r\n" + b"\0" * 500)
g.settimeout(3)
try:
    print("garbage_closed", 1 if g.recv(100) == b"" else 0)
except OSError:
    print("garbage_closed", 1)
s = socket.create_connection(("127.0.0.1", port))
# a TLS record header for a 512-byte handshake message, then silence
s.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
t0 = time.monotonic()
s.settimeout(10)
try:
    s.recv(100)
except OSError:
    pass
print("stall_closed_after_s %.1f" % (time.monotonic() - t0))
PY
# And a fuzzer meanwhile: for 4 s, connection after connection of random
# bytes, a real ClientHello cut short, corrupted, or followed by garbage.
cat >"$d/fuzz.py" <<'PY'
import os, random, socket, ssl, sys, time
port, secs = int(sys.argv[1]), float(sys.argv[2])
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
out = ssl.MemoryBIO()
tls = ctx.wrap_bio(ssl.MemoryBIO(), out)
try:
    tls.do_handshake()
except ssl.SSLWantReadError:
    pass
hello = out.read()
n = 0
end = time.time() + secs
while time.time() < end:
    kind = random.randrange(4)
    if kind == 0:
        data = os.urandom(random.randrange(1, 20000))
    elif kind == 1:
        data = hello[:random.randrange(len(hello))]
    elif kind == 2:
        b = bytearray(hello)
        for _ in range(5):
            b[random.randrange(len(b))] = random.randrange(256)
        data = bytes(b)
    else:
        data = hello + os.urandom(random.randrange(1, 5000))
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=1)
        s.sendall(data)
        s.settimeout(0.02)
        try:
            s.recv(4096)
        except OSError:
            pass
        s.close()
        n += 1
    except OSError:
        pass
print("fuzz_connections", n)
PY
fds_before=$(ls /proc/"$dpid"/fd | wc -l)
lines_before=$(wc -l <"$d/daemon.err")
python3 "$d/fuzz.py" "$port" 4 >"$d/fuzz.out" 2>&1 &
ppid=$!
python3 "$d/hostile.py" "$port" >"$d/hostile.out" 2>&1 &
opid=$!
PERFLINK_SOCKET="$d/producers" "$producer" --socket "$d/producers" --frames 200 \
	--bytes 65536 --fps 40 --wait-replies 10 >"$d/producer.out" 2>&1
prc=$?
wait "$opid"; opid=
wait "$ppid"; ppid=
fuzzed=$(sed -n 's/fuzz_connections //p' "$d/fuzz.out")
# the producer's own descriptors go when perflinkd sees it gone
for _ in $(seq 20); do
	fds_after=$(ls /proc/"$dpid"/fd | wc -l)
	[ "$fds_after" -le "$fds_before" ] && break
	sleep 0.1
done
lines=$(($(wc -l <"$d/daemon.err") - lines_before))
check "a 4 s TLS fuzz of ${fuzzed:-no} connections: perflinkd's fds $fds_before before, $fds_after after, $lines log lines" \
	'[ "${fuzzed:-0}" -ge 100 ] && [ "$fds_after" -le "$fds_before" ] && [ "$lines" -le 20 ]'
check "every frame's echo came back through TLS, hostile peers meanwhile: $(cat "$d/producer.out")" \
	"[ $prc -eq 0 ] && grep -q 'replies 200 bad_replies 0' '$d/producer.out'"
check "garbage instead of a ClientHello: closed at once" 'grep -q "garbage_closed 1" "$d/hostile.out"'
stall=$(sed -n 's/stall_closed_after_s //p' "$d/hostile.out")
check "a stalled handshake: closed at the 5 s deadline (after $stall s)" \
	'[ -n "$stall" ] && awk "BEGIN { exit !($stall >= 4.5 && $stall < 8) }"'
st=$(status)
check "and the host stayed the host: admitted once, never replaced" \
	'echo "$st" | grep -q "\"state\":\"up\"" && echo "$st" | grep -q "\"connections\":1,\"replaced\":0"'
kill -TERM "$hpid"; wait "$hpid"; hpid=

# The pinned fingerprint, colons and all, as openssl prints it.
"$host" --tcp "127.0.0.1:$port" --tcp-key "$d/key" --tls-fingerprint "$fp" --seconds 2 \
	--out "$d/h-pin" >"$d/pin.out" 2>&1
check "perflink-host with the device's fingerprint pinned: connected" \
	'grep -q "TLS 1.3, the device proved its certificate and the key" "$d/pin.out"'
st=$(status)
finish
