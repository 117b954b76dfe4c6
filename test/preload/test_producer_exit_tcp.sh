#!/bin/sh
# Producers that keep every frame and exit right after their last commit,
# over the TCP link, every part real (TAP): frame_producer
# --keep-every-frame -> perflinkd --link-tcp -> perflink-host. Each reads
# its stats and closes at once (--wait-replies 0), while its last frames
# are still in its ring or waiting for the link's room (issue 16:
# "committed 512 sent 509 not_sent 0 lost 0", 3 frames in no column, and
# frames the host never got). Every committed frame must be counted once
# in the producer's stats, and reach the host or be counted not sent where
# `perflink status` shows it; perflinkd's status, the host and the
# producers must agree.
#
# 1. $producers producers in a row, each $frames frames of 256 KiB as fast
#    as the link takes them: each exit is a chance for the window.
# 2. The window held open: with no host the link has no room at all; a
#    producer commits 4 frames, which wait, and closes. While it closes, a
#    host connects.
# 3. No host at all: a producer leaves 4 frames that cannot go anywhere.
#
# With "tls", the link runs inside TLS 1.3 with a pre-shared key, as the
# issue was seen both ways.
#
# usage: test_producer_exit_tcp.sh PERFLINKD PERFLINK PERFLINK_HOST FRAME_PRODUCER [tls]
set -u
perflinkd=$1 perflink=$2 host=$3 producer=$4 mode=${5:-tcp}
producers=20 frames=50
total=$((producers * frames))

. "$(dirname "$0")/tcp_link_lib.sh"
scratch_dir producer-exit
if [ "$mode" = tls ]; then
	head -c 32 /dev/urandom >"$d/key" && chmod 600 "$d/key"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=perflink producer exit" -addext "subjectAltName=IP:127.0.0.1" \
		-keyout "$d/tls.key" -out "$d/tls.pem" 2>"$d/openssl.err" && chmod 600 "$d/tls.key"
	start_daemon_tcp --link-tcp-key-file "$d/key" --link-tcp-tls-cert "$d/tls.pem" \
		--link-tcp-tls-key "$d/tls.key"
	host_tls="--tcp-key $d/key --tls-ca $d/tls.pem"
else
	start_daemon_tcp
	host_tls=
fi

# acks, not echoes: nobody reads the replies of a producer that left
# ($host_tls unquoted: options, or none)
"$host" --tcp "127.0.0.1:$port" $host_tls --reply ack --frames $total --timeout 10 \
	--out "$d/host" >"$d/host.out" 2>&1 &
hpid=$!
wait_link_up
check "the host connected: link up ($mode)" 'status | grep -q "\"state\":\"up\""'

# A producer that keeps every frame, 256 KiB each as fast as the link takes
# them, and reads its stats and closes right after its last commit.
exit_at_once() { # output file, frames
	"$producer" --socket "$d/producers" --frames "$2" --bytes 262144 --fps 100000 \
		--wait-replies 0 --keep-every-frame >"$1" 2>&1
}
# Up to 10 s for the host to be gone.
wait_link_down() {
	for _ in $(seq 100); do
		status | grep -q '"state":"up"' || break
		sleep 0.1
	done
}
# Waits for the host: its exit status in hrc, the rows of its frames.csv
# in got.
host_done() { # its --out directory
	wait "$hpid"
	hrc=$?
	hpid=
	got=$(tail -n +2 "$1/frames.csv" 2>/dev/null | wc -l)
}
# A column of frame_producer's line (0 when it has none).
column() { # name, line
	v=$(echo "$2" | sed -n "s/.* $1 \([0-9]*\).*/\1/p")
	echo "${v:-0}"
}
# Adds a producer's line to the totals; bad names the first that does not
# count each of its frames once.
bad= sent_total=0 in_flight_total=0 not_sent_total=0
tally() { # its output file, its frames
	line=$(grep '^frames ' "$1")
	committed=$(column committed "$line") queued=$(column queued "$line")
	sent=$(column sent "$line") held=$(column held "$line")
	not_sent=$(column not_sent "$line") lost=$(column lost "$line")
	# what perflinkd had not taken when the producer read its stats
	in_flight=$((committed - sent - held - not_sent))
	in_flight_total=$((in_flight_total + in_flight))
	sent_total=$((sent_total + sent))
	not_sent_total=$((not_sent_total + not_sent))
	if [ -z "$line" ] || [ "$committed" -ne "$2" ] || [ "$lost" -ne 0 ] ||
	   [ "$held" -ne 0 ] || [ $((sent + not_sent + queued)) -ne "$committed" ]; then
		[ -n "$bad" ] || bad="$(basename "$1"): ${line:-$(cat "$1")}"
	fi
}

# 1.
hit=0
for i in $(seq $producers); do
	exit_at_once "$d/producer.$i.out" $frames
	before=$in_flight_total
	tally "$d/producer.$i.out" $frames
	[ $in_flight_total -gt "$before" ] && hit=$((hit + 1))
done
check "the window was hit: $hit of $producers producers read their stats with frames perflinkd had not taken yet ($in_flight_total frames)" \
	'[ $hit -ge 1 ]'
check "each producer's stats count every frame once: committed = sent + not_sent + queued, none held or lost${bad:+ (first wrong: $bad)}" \
	'[ -z "$bad" ]'
host_done "$d/host"
check "perflink-host took all $total frames and exited 0 (rc $hrc, frames.csv $got rows)" \
	"[ $hrc -eq 0 ] && [ $got -eq $total ] && grep -q '\"frames\": *$total[,}]' '$d/host/summary.json'"
# each producer's frames, by the producer number in the wire id's top 16
# bits: from 0 once each, in order, none missing
runs=$(tail -n +2 "$d/host/frames.csv" 2>/dev/null | cut -d, -f1 | awk -v n=$frames '
	{ p = int($1 / 281474976710656); f = $1 % 281474976710656
	  if (!(p in next_id)) { next_id[p] = 0; producers++ }
	  if (f != next_id[p]) wrong++
	  next_id[p] = f + 1 }
	END { for (p in next_id) if (next_id[p] != n) wrong++
	      printf "%d %d\n", producers, wrong }')
check "frames.csv: $producers producers, each one's frames 0 to $((frames - 1)) once, in order ($runs: producers, wrong)" \
	"[ '$runs' = '$producers 0' ]"
check "what the producers counted sent ($sent_total) or not yet taken ($in_flight_total) is what the host got ($got), none not sent ($not_sent_total)" \
	'[ $((sent_total + in_flight_total)) -eq "$got" ] && [ $not_sent_total -eq 0 ]'
st=$(status)
check "status: the link sent the $total frames and lost none" \
	"echo '$st' | grep -q '\"frames_sent\":$total,\"frames_held\":0,\"frames_replaced\":0,\"frames_lost\":0,'"
check "status: no producer left a frame behind unsent" \
	"echo '$st' | grep -q '\"frames_left_not_sent\":0,'"

# 2. The host left once it had its frames.
wait_link_down
exit_at_once "$d/last.out" 4 &
opid=$!
# until it is gone, or while it closes (in status, the one producer there,
# with a frame waiting)
for _ in $(seq 100); do
	kill -0 "$opid" 2>/dev/null || break
	status | grep -q '"frames_waited":[1-9]' && break
	sleep 0.05
done
check "no host: the producer's frames wait, and it is still closing" 'kill -0 "$opid" 2>/dev/null'
"$host" --tcp "127.0.0.1:$port" $host_tls --reply ack --frames 4 --timeout 5 \
	--out "$d/host2" >"$d/host2.out" 2>&1 &
hpid=$!
wait "$opid"
opid=
bad=
tally "$d/last.out" 4
check "its stats count each of its 4 frames once${bad:+ ($bad)}" '[ -z "$bad" ]'
host_done "$d/host2"
check "a host that connected while it closed got its 4 frames (rc $hrc, frames.csv $got rows)" \
	'[ $hrc -eq 0 ] && [ "$got" -eq 4 ]'
st=$(status)
check "status: the link sent $((total + 4)) frames, none left not sent" \
	"echo '$st' | grep -q '\"frames_sent\":$((total + 4)),' && echo '$st' | grep -q '\"frames_left_not_sent\":0,'"

# 3. No host comes: the producer closes after 2 s with its frames waiting.
wait_link_down
exit_at_once "$d/alone.out" 4
line=$(grep '^frames ' "$d/alone.out")
check "no host: the producer's 4 frames were queued, not taken, when it read its stats ($line)" \
	'[ "$(column committed "$line")" -eq 4 ] && [ "$(column queued "$line")" -eq 4 ]'
st=$(status)
check "and status counts the 4 it left not sent" \
	"echo '$st' | grep -q '\"frames_left_not_sent\":4,'"
finish
