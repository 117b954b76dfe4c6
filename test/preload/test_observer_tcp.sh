#!/bin/sh
# perflinkd's own observation never delays a frame (TAP). A target whose
# mmap lock is contended (mmap_lock_holder: a PSS read of it waits for the
# lock for 100 ms and more) is named to the resource sampler with PSS every
# second, the tracer runs too, and a producer sends 30 frames a second
# over the TCP link to perflink-host. No two frames' device send times may
# be more than 100 ms apart: the modules read /proc on threads of their
# own, and the event loop only moves frames. The PSS reads themselves must
# have waited: the test checks that they did, or it proves nothing.
#
# usage: test_observer_tcp.sh PERFLINKD PERFLINK PERFLINK_HOST FRAME_PRODUCER
#        MMAP_LOCK_HOLDER
set -u
perflinkd=$1 perflink=$2 host=$3 producer=$4 holder=$5
frames=150

. "$(dirname "$0")/tcp_link_lib.sh"
scratch_dir observer-tcp

# 3 GiB of small pages: each mprotect of it walks 786,432 entries
"$holder" 3072 >"$d/holder.out" 2>&1 &
opid=$!
for _ in $(seq 300); do
	grep -q '^ready' "$d/holder.out" && break
	sleep 0.1
done
check "the lock holder is ready: $(cat "$d/holder.out")" "grep -q '^ready' '$d/holder.out'"

disk=$(awk '$4 > 0 && $3 !~ /^(loop|ram|zram|dm-)/ {print $3; exit}' /proc/diskstats)
start_daemon_tcp --trace --trace-out "$d/trace.csv" --trace-disk "${disk:-sda}" \
	--resources --resources-out "$d/resources.jsonl" --resources-pids "$opid" \
	--resources-pss-interval 1
start_host_tcp

PERFLINK_SOCKET="$d/producers" "$producer" --socket "$d/producers" --frames $frames \
	--bytes 65536 --fps 30 --wait-replies 10 >"$d/producer.out" 2>&1
prc=$?
check "the producer got every frame's echo back: $(cat "$d/producer.out")" \
	"[ $prc -eq 0 ] && grep -q 'replies $frames bad_replies 0' '$d/producer.out'"
st=$(status)
kill -TERM "$hpid"
wait "$hpid"
hpid=

module() { # the module, then a key of its stats
	echo "$st" | python3 -c 'import json, sys
m = json.load(sys.stdin)["modules"][sys.argv[1]]
print(m["stats"][sys.argv[2]] if m["running"] else "not-running")' "$1" "$2" 2>/dev/null
}
pss_max=$(module resources sampler_ms_max)
check "the resource sampler's reads of the target waited for its lock ($pss_max ms at most)" \
	"python3 -c 'import sys; sys.exit(not float(sys.argv[1]) >= 100)' '$pss_max'"
ticks=$(module tracer ticks)
check "and the tracer ran beside it ($ticks ticks)" "[ '$ticks' != not-running ] && [ '$ticks' -gt 10 ]"

gaps=$(python3 - "$d/host/frames.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
t = sorted(int(r["device_send_ns"]) for r in rows)
gaps = [(b - a) / 1e6 for a, b in zip(t, t[1:])]
print(len(rows), "%.1f" % max(gaps) if gaps else "none")
PY
)
check "every frame reached the host's frames.csv, sent at most 100 ms after the one before (frames, largest gap ms: $gaps)" \
	"python3 -c 'import sys; n, g = sys.argv[1].split(); sys.exit(not (int(n) == $frames and float(g) <= 100))' '$gaps'"
finish
