# The shipped unit under a real systemd (PID 1: Debian's, run.sh with
# PERFLINK_VM_INIT=systemd), this build installed as meson installs it, in
# the mode SYSTEMD_MODE names: default (USB, the gadget made and bound
# outside perflinkd), tcp, setup-gadget (perflinkd makes the gadget), user
# (its own user, over TCP, with the tracer), user-usb (its own user, USB on
# a gadget bound outside it, re-arming), user-setup-gadget (its own user on
# the gadget it made, re-arming, the root cleanup process removing the
# gadget at stop). Everything a user does is taken
# from docs/perflinkd.md "Under systemd": the mode's row of the table gives
# the settings written to the config file, the drop-ins copied (with the
# commands shown there; the mode's own drop-in only after a start without
# it has failed as the docs say) and the systemd-analyze security score.
# Checked: `systemctl start` returns with the unit active (Type=notify: only
# after READY=1), a producer's frames reach a perflink-host and its acks
# come back, the score, `systemctl stop` stops it cleanly, and as its own
# user the running daemon's ids and capabilities in /proc/PID/status.
# check and wait_link_up; the gadget made outside perflinkd (lib/gadget.sh)
# for the default mode, perflinkd makes it in setup-gadget
. /scenarios/lib/perflinkd.sh
. /etc/perflink-vm-install
mode=${SYSTEMD_MODE:-default}
case "$mode" in
default) dropins=none ;;
tcp) dropins='`link-tcp.conf`' GADGET=none ;;
setup-gadget) dropins='`link-setup-gadget.conf`' GADGET=none ;;
user) dropins='`link-tcp.conf`, `user.conf`' GADGET=none ;;
# the gadget bound outside perflinkd, its functionfs mounted for the user
user-usb) dropins='`user.conf`' FFS_MOUNT_OPTS=uid=65534,gid=65534 ;;
user-setup-gadget) dropins='`link-setup-gadget.conf`, `user.conf`' GADGET=none ;;
*) echo "systemd_unit: no mode '$mode'"; exit 1 ;;
esac
perflinkd=$PERFLINK_VM_sbindir/perflinkd
perflink=$PERFLINK_VM_bindir/perflink
status() { "$perflink" status --json 2>/dev/null; }
cell() { echo "$row" | awk -F'|' -v n="$1" '{ gsub(/^ +| +$/, "", $n); print $n }'; }

# The mode's row: | mode | in perflinkd.conf | drop-ins | score |
row=$(awk -F'|' -v want="$dropins" 'NF == 6 { d = $4; gsub(/^ +| +$/, "", d); if (d == want) print }' \
	/scenarios/lib/perflinkd.md)
check "docs/perflinkd.md has one row for drop-ins $dropins: $(cell 2)" \
	'[ -n "$row" ] && [ "$(echo "$row" | wc -l)" -eq 1 ]'
[ $failed -eq 0 ] || exit 1
conf=$("$perflinkd" --help | sed -n 's/.*--config FILE.*(default: \([^,]*\),.*/\1/p')
mkdir -p "$(dirname "$conf")"
cell 3 | tr ',' '\n' | sed 's/^ *`//; s/` *$//' >"$conf"
if [ "$mode" = user ]; then
	# and the tracer, whose capabilities perflinkd keeps as the user: it
	# must still read root's writer's /proc/PID/io
	printf '%s\n' "trace = yes" "trace-hz = 20" "trace-names = plvictim" >>"$conf"
	# (a script's comm is its file name; printf is the shell's own, so
	# the writes are the script's)
	printf '%s\n' '#!/bin/sh' 's=$(head -c 65536 /dev/zero | tr "\\0" x)' \
		'while :; do printf "%s" "$s" >/tmp/w.bin; sleep 0.02; done' >/tmp/plvictim
	chmod 755 /tmp/plvictim
	/tmp/plvictim &
	victim=$!
fi
if [ "$mode" = user-usb ] || [ "$mode" = user-setup-gadget ]; then
	# the host is stopped below: offered afresh after 1 s, not 2
	echo "link-deadline = 1" >>"$conf"
fi
echo "# $conf:"; sed 's/^/#   /' "$conf"
# the gadget's owner's part before perflinkd starts (lib/gadget.sh)
gadget_make || exit 1
files=$(cell 4 | tr -d '`,' | sed 's/^none$//')
# the drop-ins as docs/perflinkd.md says, with this build's DATADIR
add_dropin() {
	mkdir -p /etc/systemd/system/perflinkd.service.d
	cp "$PERFLINK_VM_datadir/perflink/systemd/$1" /etc/systemd/system/perflinkd.service.d/
	systemctl daemon-reload
}
journal() { journalctl -u perflinkd -o cat --no-pager | tail -n +$((journal_skip + 1)); }
journal_skip=0
# Without the mode's own drop-in (the last named), the start must fail as
# the docs say it does: the unit alone does not allow the mode.
last=
for f in $files; do
	[ -z "$last" ] || add_dropin "$last"
	last=$f
done
if [ -n "$last" ]; then
	case "$last" in
	link-tcp.conf) why="Address family not supported" ;;
	link-setup-gadget.conf) why="gadget: mounting functionfs: Operation not permitted" ;;
	user.conf) why="needs CAP_SETPCAP" ;;
	esac
	systemctl daemon-reload
	systemctl start perflinkd 2>/dev/null
	rc=$?
	check "without $last, systemctl start fails ($rc), the journal saying '$why'" \
		'[ $rc -ne 0 ] && journal | grep -q "$why"'
	[ $rc -ne 0 ] || journal | tail -n 5
	# Restart=on-failure would try again
	systemctl stop perflinkd
	systemctl reset-failed perflinkd 2>/dev/null
	journal_skip=$(journal | wc -l)
	add_dropin "$last"
fi
systemctl daemon-reload
check "systemd runs the unit meson installed ($(systemctl show -p FragmentPath --value perflinkd))" \
	'[ "$(systemctl show -p FragmentPath --value perflinkd)" = "$PERFLINK_VM_prefix/lib/systemd/system/perflinkd.service" ]'
check "with the drop-ins: ${files:-none} ($(systemctl show -p DropInPaths --value perflinkd))" \
	'[ "$(systemctl show -p DropInPaths --value perflinkd | wc -w)" -eq "$(echo $files | wc -w)" ]'
score=$(systemd-analyze security perflinkd.service 2>/dev/null |
	sed -n 's/.*Overall exposure level for perflinkd.service: \([0-9.]*\).*/\1/p')
check "systemd-analyze security: $score, as documented ($(cell 5))" \
	'[ -n "$score" ] && [ "$score" = "$(cell 5 | cut -d" " -f1)" ]'

check "perflinkd is not running before the start ($(systemctl is-active perflinkd))" \
	'[ "$(systemctl is-active perflinkd)" = inactive ]'
systemctl start perflinkd
rc=$?
check "systemctl start perflinkd returns 0 ($rc)" '[ $rc -eq 0 ]'
check "and the unit is active (READY=1 came): $(systemctl is-active perflinkd)" \
	'[ "$(systemctl is-active perflinkd)" = active ]'
pid=$(systemctl show -p MainPID --value perflinkd)
if [ "$GADGET" = external ]; then
	check "the gadget's owner binds it once perflinkd is ready" gadget_bind
fi

if [ "$mode" = tcp ] || [ "$mode" = user ]; then
	perflink-host --tcp 127.0.0.1:7370 --reply ack --out /tmp/host >/tmp/host.out 2>&1 &
else
	perflink-host --reply ack --out /tmp/host >/tmp/host.out 2>&1 &
fi
host=$!
check "perflink status: the link is up" wait_link_up
# a producer's N frames of 64 KiB, every one answered by the host. Acks,
# not echoes: on a loaded machine one 64 KiB echo of 40 never reached the
# producer though perflinkd had all 40 back (daemon_host_stall uses acks
# because echoes fill the producer's reply ring; not confirmed here)
answered() {
	frame_producer --socket /run/perflink/producers --frames $1 --bytes 65536 --fps 40 \
		--wait-replies 10 >/tmp/producer.out 2>&1 && grep -q "replies $1 bad_replies 0" /tmp/producer.out
}
check "a producer's frames reached the host and its acks came back" 'answered 40'
echo "# $(cat /tmp/producer.out)"
if [ "$mode" = setup-gadget ] || [ "$mode" = user-setup-gadget ]; then
	check "perflinkd made the gadget, its functionfs mounted only in the unit's namespace" \
		'[ -d "$gadget_dir/functions/ffs.perflink" ] && ! grep -q " $ffs_dir " /proc/mounts &&
		 grep -q " $ffs_dir " /proc/$pid/mounts'
fi
if [ "$mode" = user ] || [ "$mode" = user-usb ] || [ "$mode" = user-setup-gadget ]; then
	grep -E '^(Uid|Gid|Groups|Cap[A-Za-z]*|NoNewPrivs):' /proc/$pid/status | sed 's/^/# /'
	field() { sed -n "s/^$1:[[:space:]]*//p" /proc/$pid/status | tr -s ' \t' ' ' | sed 's/ $//'; }
	caps=0000000000080004 # CAP_DAC_READ_SEARCH, CAP_SYS_PTRACE: the tracer's
	[ "$mode" = user ] || caps=0000000000000000 # the USB link needs none
	if [ "$mode" = user-setup-gadget ]; then
		# the part that stays root to remove the gadget at stop: the
		# main process's child (daemon/core/root_cleanup.h)
		cleanup=
		for s in /proc/[0-9]*/stat; do
			read -r p comm st ppid rest <"$s" 2>/dev/null || continue
			[ "$ppid" = "$pid" ] && [ "$comm" = "(perflinkd-root)" ] && cleanup=$p
		done
		grep -E '^(Uid|Cap[A-Za-z]*|NoNewPrivs):' /proc/${cleanup:-0}/status 2>/dev/null |
			sed 's/^/# perflinkd-root /'
		cfield() { sed -n "s/^$1:[[:space:]]*//p" /proc/$cleanup/status | tr -s ' \t' ' ' | sed 's/ $//'; }
		check "its root cleanup process ${cleanup:-(none)}: uid 0, CAP_SYS_ADMIN alone, no_new_privs" \
			'[ -n "$cleanup" ] && [ "$(cfield Uid)" = "0 0 0 0" ] &&
			 [ "$(cfield CapEff)" = 0000000000200000 ] && [ "$(cfield CapBnd)" = 0000000000200000 ] &&
			 [ "$(cfield NoNewPrivs)" = 1 ]'
	fi
	check "perflinkd runs as nobody: Uid $(field Uid), Gid $(field Gid), Groups $(field Groups)" \
		'[ "$(field Uid)" = "65534 65534 65534 65534" ] &&
		 [ "$(field Gid)" = "65534 65534 65534 65534" ] && [ "$(field Groups)" = 65534 ]'
	check "CapEff, CapPrm and CapBnd exactly $caps ($(field CapEff) $(field CapPrm) $(field CapBnd))" \
		'[ "$(field CapEff)" = $caps ] && [ "$(field CapPrm)" = $caps ] && [ "$(field CapBnd)" = $caps ]'
	check "CapInh and CapAmb empty, NoNewPrivs 1" \
		'[ "$(field CapInh)" = 0000000000000000 ] && [ "$(field CapAmb)" = 0000000000000000 ] &&
		 [ "$(field NoNewPrivs)" = 1 ]'
fi
if [ "$mode" = user ]; then
	for _ in $(seq 50); do
		[ "$(awk -F, '$3 == "plvictim" && $6 + 0 > 0' /var/log/perflink/io_trace.csv 2>/dev/null |
			wc -l)" -ge 5 ] && break
		sleep 0.2
	done
	check "the tracer reads root's writer's /proc/PID/io as nobody (rows with written kB)" \
		'[ "$(awk -F, "\$3 == \"plvictim\" && \$6 + 0 > 0" /var/log/perflink/io_trace.csv | wc -l)" -ge 5 ]'
	kill $victim
fi
if [ "$mode" = user-usb ] || [ "$mode" = user-setup-gadget ]; then
	# the host stops taking data: at the deadline perflinkd, as nobody,
	# offers the gadget afresh through the UDC file it opened as root
	kill -STOP $host
	frame_producer --socket /run/perflink/producers --frames 100 --bytes 65536 --fps 50 \
		--wait-replies 0 >/tmp/stalled.out 2>&1 &
	stalled=$!
	rearms=0
	for _ in $(seq 50); do
		rearms=$(status | sed -n 's/.*"rearms":\([0-9]*\).*/\1/p')
		[ "${rearms:-0}" -ge 1 ] && break
		sleep 0.2
	done
	kill -CONT $host
	wait $stalled
	check "perflinkd offered the gadget afresh while the host was stopped ($rearms re-arms)" \
		'[ "${rearms:-0}" -ge 1 ]'
	check "and the host connected again" wait_link_up
	check "a new producer's frames all answered after it" 'answered 20'
	echo "# $(cat /tmp/producer.out)"
	check "the host saw two connections: $(grep -c "connected:" /tmp/host.out)" \
		'[ "$(grep -c "connected:" /tmp/host.out)" -ge 2 ]'
fi
st=$(status)
kill -TERM $host
wait $host

t0=$(date +%s)
systemctl stop perflinkd
rc=$?
stop_s=$(($(date +%s) - t0))
check "systemctl stop perflinkd returns 0 ($rc), in $stop_s s (SIGKILL comes at 10 s)" \
	'[ $rc -eq 0 ] && [ $stop_s -lt 10 ] && [ "$(systemctl is-active perflinkd)" = inactive ]'
# perflinkd says "stopped" only on its way to exit 0; systemd counts a
# death by SIGTERM as success too, and forgets the exit status of an
# inactive unit, so the journal tells
check "perflinkd stopped itself cleanly (journal: 'stopped', then deactivated successfully)" \
	'journal | grep -qx "perflinkd: stopped" &&
	 journal | grep -q "perflinkd.service: Deactivated successfully" &&
	 ! journal | grep -q "Failed with result\|code=killed\|status=[1-9]"'
if [ "$mode" = setup-gadget ]; then
	check "and removed the gadget it made" '[ ! -e "$gadget_dir" ]'
fi
if [ "$mode" = user-setup-gadget ]; then
	for _ in $(seq 50); do [ -e "$gadget_dir" ] || break; sleep 0.1; done
	check "its root cleanup process removed the gadget after it" \
		'[ ! -e "$gadget_dir" ] && journal | grep -q "removed the gadget perflinkd made"'
fi
if [ $failed -ne 0 ]; then
	echo "--- journal"; journal
	echo "--- host"; cat /tmp/host.out
	echo "--- status"; echo "$st"
	echo "--- producer"; cat /tmp/producer.out
fi
echo "perflinkd.service under systemd, mode $mode: $failed failed"
[ $failed -eq 0 ]
