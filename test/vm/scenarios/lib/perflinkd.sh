# Sourced by scenarios that run perflinkd on the rig's gadget in its default
# set-up (made and bound outside it: lib/gadget.sh, GADGET=external), and
# check what they saw.
#
#   start_perflinkd ARGS...   make the gadget, start perflinkd --foreground
#                             --link ARGS (its pid in $daemon, its output in
#                             /tmp/daemon.out), bind the gadget; with
#                             PERFLINKD_USER=UID:GID perflinkd runs as that
#                             user (--user) on a functionfs mounted for it
#   status                    perflink status --json
#   wait_link_up              until status says the link is up (20 s at most)
#   check DESCRIPTION CONDITION   "ok - ..." or "not ok - ..." (counted in
#                             $failed), the condition evaluated
GADGET=external
. /scenarios/lib/gadget.sh
failed=0

check() {
	if eval "$2"; then echo "ok - $1"; else echo "not ok - $1"; failed=$((failed + 1)); fi
}

status() { perflink status --socket /tmp/perflinkd/control --json 2>/dev/null; }

start_perflinkd() {
	if [ -n "${PERFLINKD_USER:-}" ]; then
		FFS_MOUNT_OPTS="uid=${PERFLINKD_USER%%:*},gid=${PERFLINKD_USER##*:}"
		set -- --user "$PERFLINKD_USER" "$@"
	fi
	gadget_make || exit 1
	# its sockets in a directory only it may write to (perflinkd refuses /tmp)
	mkdir -m 700 /tmp/perflinkd
	perflinkd --foreground --link --control-socket /tmp/perflinkd/control "$@" \
		>/tmp/daemon.out 2>&1 &
	daemon=$!
	gadget_bind || exit 1
}

wait_link_up() {
	for _ in $(seq 100); do
		status | grep -q '"state":"up"' && return 0
		sleep 0.2
	done
	return 1
}
