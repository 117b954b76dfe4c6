#!/usr/bin/env bash
# What the TCP link's protection costs, side by side in one run: the same
# stream of frames from a libperflink producer through perflinkd to
# perflink-host over loopback, three ways:
#   plain  no key (loopback only);
#   key    link-tcp-key-file / --tcp-key: the HMAC handshake at connect,
#          nothing per byte after it;
#   tls    the key and TLS 1.3 (link-tcp-tls-cert, --tls-ca) around it all.
# Each mode runs REPEATS times, interleaved (plain key tls plain key ...), so
# that whatever else the machine does falls on all three alike. For each run
# it takes perflinkd's and perflink-host's CPU time (the run time of all
# their threads, /proc/PID/task/*/schedstat, ns) across the stream, and the
# bytes the host received; it prints the median CPU ms per MB for each side
# and mode and the ratios to plain. The producer's CPU (it fills every byte)
# is the same in all modes and not counted.
#
#   bench/link_tcp_cost.sh PERFLINKD PERFLINK PERFLINK_HOST FRAME_PRODUCER [MB] [REPEATS]
#
# MB defaults to 512 (frames of 256 KiB, kept every one: the producer waits
# for the link rather than have frames replaced), REPEATS to 3.
#
# Then what one connection's handshake costs perflinkd, key alone against
# TLS and key: a Python host (its ssl and hmac modules, from docs/wire.md)
# connects, proves the key, takes the device's proof and closes, 200 times;
# perflinkd's CPU over them, per connection.
set -euo pipefail
perflinkd=$1 perflink=$2 host=$3 producer=$4 mb=${5:-512} repeats=${6:-3}
frame_bytes=262144
frames=$((mb * 1048576 / frame_bytes))

d=$(mktemp -d "${TMPDIR:-/tmp}/pl-tcp-cost-XXXXXX")
dpid= hpid=
trap 'for p in $hpid $dpid; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$d"' EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
	-subj "/CN=perflink bench" -addext "subjectAltName=IP:127.0.0.1" \
	-keyout "$d/tls.key" -out "$d/tls.pem" 2>/dev/null
chmod 600 "$d/tls.key"
head -c 32 /dev/urandom >"$d/key" && chmod 600 "$d/key"
: >"$d/empty.conf"

cpu_ns() { # pid: run time of all its threads, ns (a thread may end meanwhile)
	{ cat /proc/"$1"/task/*/schedstat 2>/dev/null || true; } |
		awk '{ s += $1 } END { printf "%d", s }'
}
# never fails (set -e, pipefail): a daemon not up yet answers nothing
status() { "$perflink" status --json --socket "$d/control" 2>/dev/null || true; }

start_daemon() { # perflinkd's link options; sets dpid and port
	"$perflinkd" --foreground --config "$d/empty.conf" --control-socket "$d/control" \
		--pidfile "" --link --link-tcp 127.0.0.1:0 "$@" >/dev/null 2>"$d/daemon.err" &
	dpid=$!
	port=
	for _ in $(seq 100); do
		port=$(status | sed -n 's/.*"tcp_port":\([0-9]*\).*/\1/p')
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || { echo "perflinkd did not start:" >&2; cat "$d/daemon.err" >&2; exit 1; }
}

run() { # mode; prints "mode daemon_ms_per_mb host_ms_per_mb mb"
	local mode=$1 dopt=() hopt=() d0 h0 d1 h1 got
	case $mode in
	key) dopt=(--link-tcp-key-file "$d/key"); hopt=(--tcp-key "$d/key") ;;
	tls) dopt=(--link-tcp-key-file "$d/key" --link-tcp-tls-cert "$d/tls.pem"
		   --link-tcp-tls-key "$d/tls.key")
	     hopt=(--tcp-key "$d/key" --tls-ca "$d/tls.pem") ;;
	esac
	start_daemon "${dopt[@]}"
	"$host" --tcp "127.0.0.1:$port" "${hopt[@]}" --reply none --out "$d/host-$mode" \
		>"$d/host.out" 2>&1 &
	hpid=$!
	for _ in $(seq 100); do
		status | grep -q '"state":"up"' && break
		sleep 0.1
	done
	status | grep -q '"state":"up"' || { echo "no host ($mode):" >&2; cat "$d/host.out" >&2; exit 1; }
	d0=$(cpu_ns "$dpid") h0=$(cpu_ns "$hpid")
	"$producer" --socket "$d/producers" --frames "$frames" --bytes "$frame_bytes" \
		--fps 10000 --keep-every-frame --wait-replies 0 >"$d/producer.out" 2>&1 || true
	# the last frames in flight (the 1 MiB budget at most) reach the host
	sleep 0.5
	d1=$(cpu_ns "$dpid") h1=$(cpu_ns "$hpid")
	kill -TERM "$hpid"; wait "$hpid" || true; hpid=
	kill -TERM "$dpid"; wait "$dpid" || true; dpid=
	got=$(sed -n 's/^frames [0-9]*  bytes \([0-9]*\).*/\1/p' "$d/host.out" | tail -n 1)
	[ -n "$got" ] && [ "$got" -gt 0 ] || { echo "the host got nothing ($mode):" >&2; cat "$d/host.out" "$d/producer.out" >&2; exit 1; }
	awk -v m="$mode" -v dn=$((d1 - d0)) -v hn=$((h1 - h0)) -v b="$got" 'BEGIN {
		mb = b / 1048576
		printf "%s %.4f %.4f %.1f\n", m, dn / 1e6 / mb, hn / 1e6 / mb, mb }'
}

: >"$d/runs"
for i in $(seq "$repeats"); do
	for mode in plain key tls; do
		# not in a pipeline: run's pids stay this shell's, for the trap
		run "$mode" >"$d/one"
		cat "$d/one" >>"$d/runs"
		awk -v i="$i" '{ printf "run %d %-5s perflinkd %.3f ms/MB, perflink-host %.3f ms/MB (%.0f MB)\n", i, $1, $2, $3, $4 }' "$d/one"
	done
done
median() { # mode column
	awk -v m="$1" -v c="$2" '$1 == m { print $c }' "$d/runs" | sort -g |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo
echo "CPU per MB of frames delivered over loopback ($frames frames of $((frame_bytes / 1024)) KiB a run, median of $repeats):"
printf "%-6s %16s %16s %10s %10s\n" mode "perflinkd ms/MB" "host ms/MB" "vs plain" "(host)"
pd=$(median plain 2) ph=$(median plain 3)
for mode in plain key tls; do
	md=$(median "$mode" 2) mh=$(median "$mode" 3)
	awk -v m="$mode" -v a="$md" -v b="$mh" -v pa="$pd" -v pb="$ph" 'BEGIN {
		printf "%-6s %16.3f %16.3f %9.2fx %9.2fx\n", m, a, b, a / pa, b / pb }'
done

# The handshakes: key alone, then TLS and key, each HANDSHAKES connections.
handshakes=200
cat >"$d/handshakes.py" <<'PY'
import hashlib, hmac, os, socket, ssl, sys
port, key_file, ca, n = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
key = open(key_file, "rb").read()
ctx = None
if ca != "-":
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_verify_locations(ca)
def read(s, want):
    b = b""
    while len(b) < want:
        got = s.recv(want - len(b))
        if not got:
            raise SystemExit("the device closed the connection")
        b += got
    return b
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    if ctx:
        s = ctx.wrap_socket(s, server_hostname="127.0.0.1")
    c = read(s, 40)
    nd, nh = c[8:40], os.urandom(32)
    s.sendall(b"PLAUTH01" + nh + hmac.new(key, b"perflink-host-auth" + nd + nh, hashlib.sha256).digest())
    md = read(s, 32)
    if not hmac.compare_digest(md, hmac.new(key, b"perflink-device-auth" + nd + nh, hashlib.sha256).digest()):
        raise SystemExit("the device's proof does not check")
    s.close()
PY
handshake_cost() { # mode: perflinkd's CPU us per connection
	local mode=$1 dopt=(--link-tcp-key-file "$d/key") ca=- d0 d1
	if [ "$mode" = tls ]; then
		dopt+=(--link-tcp-tls-cert "$d/tls.pem" --link-tcp-tls-key "$d/tls.key")
		ca=$d/tls.pem
	fi
	start_daemon "${dopt[@]}"
	d0=$(cpu_ns "$dpid")
	python3 "$d/handshakes.py" "$port" "$d/key" "$ca" "$handshakes"
	sleep 0.2
	d1=$(cpu_ns "$dpid")
	status | grep -q "\"auth_passed\":$handshakes," ||
		{ echo "not every handshake passed ($mode):" >&2; status >&2; exit 1; }
	kill -TERM "$dpid"; wait "$dpid" || true; dpid=
	awk -v n=$((d1 - d0)) -v c="$handshakes" 'BEGIN { printf "%.1f", n / 1e3 / c }'
}
echo
hk=$(handshake_cost key) ht=$(handshake_cost tls)
echo "perflinkd's CPU per connection ($handshakes handshakes each, a Python host):"
awk -v k="$hk" -v t="$ht" 'BEGIN {
	printf "key    %8.1f us\ntls    %8.1f us  (%.1fx)\n", k, t, t / k }'
