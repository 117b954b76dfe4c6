# Not a test: records the replay fixture test/fixtures/replay/compaction-vm
# (see its README.md). Memory is fragmented (fragmem frees every other page
# of 830 MB), then thpvictim populates THP memory in one thread, compacting,
# while its main thread waits in D for the mmap lock. The recording, cut to
# the victim, fragmem and pid 1, goes to the console as a base64 tar
# between REC-BEGIN and REC-END.
# run.sh record_compaction fragmem thpvictim BUILD/daemon/perflink
echo 1 > /proc/sys/kernel/task_delayacct
fragmem 830 >/tmp/frag.out & f=$!
n=0
while ! grep -q fragmented /tmp/frag.out && [ $n -lt 200 ]; do usleep 100000; n=$((n+1)); done
perflink record-proc --out /tmp/rec --hz 10 --seconds 9 >/tmp/rec.out 2>&1 & r=$!
usleep 800000
thpvictim 128 6 & v=$!
echo "victim $v fragmem $f"
wait $v
wait $r
cat /tmp/rec.out
echo 0 > /proc/sys/kernel/task_delayacct
grep -E "compact_stall|compact_success|compact_fail|thp_fault" /proc/vmstat
cd /tmp/rec || exit 1
for s in [0-9][0-9][0-9][0-9]; do
	for d in $s/[0-9]*; do
		p=${d#$s/}
		[ "$p" = "$v" ] || [ "$p" = "$f" ] || [ "$p" = 1 ] || rm -rf "$d"
	done
done
cd /tmp && tar czf rec.tgz rec && echo "REC-BEGIN $(wc -c < rec.tgz)" && base64 rec.tgz && echo REC-END
kill $f
true
