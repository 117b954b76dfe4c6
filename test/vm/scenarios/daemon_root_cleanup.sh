# perflinkd as its own user on a gadget it made itself (link-setup-gadget),
# with trace-enable-delayacct: the two things only root may undo at exit.
# perflinkd drops to 65534:65534 and leaves them to its root cleanup process
# (daemon/core/root_cleanup.h), which must hold uid 0 with CAP_SYS_ADMIN
# alone and no descriptor of perflinkd's but its pipe. Checked: the link
# works as the user and re-arms through a host that stops reading (ep0
# opened again as the user on functionfs mounted for it, the UDC written
# through the descriptor opened as root); after SIGTERM the gadget is gone,
# functionfs unmounted, kernel.task_delayacct 0 again and the cleanup
# process gone; and after a SIGKILL of perflinkd the same. Before the root
# cleanup process, perflinkd refused `user` with link-setup-gadget.
. /scenarios/lib/perflinkd.sh
GADGET=setup
uid=65534
gid=65534
field() { sed -n "s/^$1:[[:space:]]*//p" /proc/$2/status | tr -s ' \t' ' ' | sed 's/ $//'; }
# the cleanup process: perflinkd's child of that name
cleanup_pid() {
	for s in /proc/[0-9]*/stat; do
		read -r pid comm state ppid rest <"$s" 2>/dev/null || continue
		[ "$ppid" = "$daemon" ] && [ "$comm" = "(perflinkd-root)" ] && { echo "$pid"; return; }
	done
}
gone() { for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done; return 1; }
start() {
	echo 0 >/proc/sys/kernel/task_delayacct
	rm -rf /tmp/perflinkd /tmp/pl
	mkdir -m 700 /tmp/perflinkd
	mkdir -m 755 /tmp/pl
	perflinkd --foreground --link --link-setup-gadget --link-deadline 1 --user $uid:$gid \
		--trace --trace-enable-delayacct --trace-names plnothing --trace-out /tmp/pl/io.csv \
		--control-socket /tmp/perflinkd/control >/tmp/daemon.out 2>&1 &
	daemon=$!
}

start
perflink-host --reply ack --seconds 60 --stall-after 20 --stall-seconds 4 \
	--out /tmp/host >/tmp/host.out 2>&1 &
hpid=$!
check "the link comes up with perflinkd as uid $uid on the gadget it made" wait_link_up
cpid=$(cleanup_pid)
grep -E "^(Uid|Cap[A-Za-z]*|NoNewPrivs):" /proc/$daemon/status | sed 's/^/# perflinkd /'
grep -E "^(Uid|Gid|Groups|Cap[A-Za-z]*|NoNewPrivs):" /proc/${cpid:-0}/status 2>/dev/null |
	sed 's/^/# cleanup /'
check "perflinkd runs as $uid:$gid with the tracer's capabilities only" \
	'[ "$(field Uid $daemon)" = "$uid $uid $uid $uid" ] &&
	 [ "$(field Gid $daemon)" = "$gid $gid $gid $gid" ] &&
	 [ "$(field CapEff $daemon)" = 0000000000080004 ] &&
	 [ "$(field CapBnd $daemon)" = 0000000000080004 ]'
check "its root cleanup process $cpid: uid 0, no group, CAP_SYS_ADMIN alone, no_new_privs" \
	'[ -n "$cpid" ] && [ "$(field Uid $cpid)" = "0 0 0 0" ] && [ -z "$(field Groups $cpid)" ] &&
	 [ "$(field CapEff $cpid)" = 0000000000200000 ] &&
	 [ "$(field CapPrm $cpid)" = 0000000000200000 ] &&
	 [ "$(field CapBnd $cpid)" = 0000000000200000 ] &&
	 [ "$(field CapInh $cpid)" = 0000000000000000 ] && [ "$(field NoNewPrivs $cpid)" = 1 ]'
fds=$(ls -l /proc/${cpid:-0}/fd 2>/dev/null | awk 'NR > 1 { print $9, $11 }' | tr '\n' ';')
echo "# cleanup process fds: $fds"
check "it holds stderr, its pipe and the task_delayacct sysctl, nothing of perflinkd's" \
	'[ "$(ls /proc/$cpid/fd | wc -l)" -eq 3 ] && [ -e /proc/$cpid/fd/2 ] &&
	 ls -l /proc/$cpid/fd | grep -q "pipe:" && ls -l /proc/$cpid/fd | grep -q task_delayacct'
check "kernel.task_delayacct is on while perflinkd runs" \
	'[ "$(cat /proc/sys/kernel/task_delayacct)" = 1 ]'
check "functionfs is mounted for the user (ep0 owned by $uid)" \
	'[ "$(stat -c %u:%g $ffs_dir/ep0)" = "$uid:$gid" ]'
# 200 frames: the host stops reading after 20 for 4 s, past the 1 s
# deadline: perflinkd, as the user, drops and re-arms the gadget
frame_producer --socket /tmp/perflinkd/producers --frames 200 --bytes 65536 --fps 100 \
	--wait-replies 5 >/tmp/producer.out 2>&1
rearms=$(status | sed -n 's/.*"rearms":\([0-9]*\).*/\1/p')
check "perflinkd re-armed the gadget as the user ($rearms re-arms)" '[ "${rearms:-0}" -ge 1 ]'
check "and the host came back: $(grep -c 'connected:' /tmp/host.out) connections" \
	'wait_link_up && [ "$(grep -c "connected:" /tmp/host.out)" -ge 2 ]'
frame_producer --socket /tmp/perflinkd/producers --frames 20 --bytes 65536 --fps 40 \
	--wait-replies 10 >/tmp/after.out 2>&1
check "a producer's 20 frames all answered after it ($(cat /tmp/after.out))" \
	'grep -q "replies 20 bad_replies 0" /tmp/after.out'
check "perflinkd hit no permission error as the user" \
	'! grep -q "cannot turn kernel.task_delayacct back off\|Permission denied" /tmp/daemon.out'
kill -TERM $hpid
wait $hpid

kill -TERM $daemon
wait $daemon
rc=$?
check "perflinkd stops on SIGTERM with 0 ($rc)" '[ $rc -eq 0 ]'
check "the cleanup process exits after it" 'gone $cpid'
check "and removed the gadget: no $gadget_dir" '[ ! -e "$gadget_dir" ]'
check "functionfs is unmounted" '! grep -q " $ffs_dir " /proc/mounts'
check "kernel.task_delayacct is 0 again" '[ "$(cat /proc/sys/kernel/task_delayacct)" = 0 ]'
check "its log says so" 'grep -q "removed the gadget perflinkd made" /tmp/daemon.out &&
	 grep -q "turned kernel.task_delayacct back off" /tmp/daemon.out'
cp /tmp/daemon.out /tmp/daemon.first.out

# However perflinkd ends: SIGKILL leaves no chance to clean up itself
start
check "started again" wait_link_up
cpid=$(cleanup_pid)
kill -KILL $daemon
wait $daemon 2>/dev/null
check "after SIGKILL of perflinkd its cleanup process still removes the gadget" \
	'[ -n "$cpid" ] && gone $cpid && [ ! -e "$gadget_dir" ] && ! grep -q " $ffs_dir " /proc/mounts'
check "and turns kernel.task_delayacct off" '[ "$(cat /proc/sys/kernel/task_delayacct)" = 0 ]'

if [ $failed -ne 0 ]; then
	echo "--- perflinkd (first run)"; cat /tmp/daemon.first.out
	echo "--- perflinkd"; cat /tmp/daemon.out
	echo "--- host"; cat /tmp/host.out
	echo "--- producer"; cat /tmp/producer.out
fi
echo "root cleanup: $failed failed"
[ $failed -eq 0 ]
