# Sourced by the TCP link tests (test_e2e_tcp.sh, test_keep_every_frame_tcp.sh,
# test_producer_exit_tcp.sh, test/daemon/test_tcp_auth.sh;
# test_daemon_gone.sh takes only check):
# TAP checks, a scratch directory, a perflinkd with its link on a free local
# TCP port, and a perflink-host to it (start_host_tcp). Needs $perflinkd and
# $perflink set, $d (from scratch_dir or the test's own), and $st (the last
# status) for finish; sets $dpid and $port.

n=0 failed=0
check() { # description, then a shell condition
	n=$((n + 1))
	if eval "$2"; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		failed=$((failed + 1))
	fi
}
diag() { sed 's/^/# /' "$@"; }
# a tool scripts/deps installs that is missing: a failed check, not a skip
missing() { # what is missing
	n=$((n + 1))
	echo "not ok $n - $1"
	failed=$((failed + 1))
}

# $d, made afresh, and removed at exit after the processes whose pids are in
# $dpid (perflinkd), $hpid (the host), $ppid (a producer), $opid (another)
# are stopped.
dpid= hpid= ppid= opid=
scratch_dir() { # a name for it
	d=$(mktemp -d "${TMPDIR:-/tmp}/pl-$1-XXXXXX")
	trap 'for pid in $hpid $ppid $opid $dpid; do kill "$pid" 2>/dev/null; done
	      wait 2>/dev/null; rm -rf "$d"' EXIT
}
status() { "$perflink" status --json --socket "$d/control" 2>/dev/null; }

# perflinkd --link-tcp 127.0.0.1:0 in the background, with any more
# options given; waits for its port (a failed check and exit when it never
# says one).
start_daemon_tcp() {
	: >"$d/empty.conf"
	"$perflinkd" --foreground --config "$d/empty.conf" --control-socket "$d/control" \
		--pidfile "" --link --link-tcp 127.0.0.1:0 "$@" 2>"$d/daemon.err" &
	dpid=$!
	port=
	for _ in $(seq 100); do
		port=$(status | sed -n 's/.*"tcp_port":\([0-9]*\).*/\1/p')
		[ -n "$port" ] && break
		sleep 0.1
	done
	check "perflinkd listens on a tcp port ($port)" '[ -n "$port" ]'
	[ -n "$port" ] || { diag "$d/daemon.err"; echo "1..$n"; exit 1; }
}

# Wait up to 10 s for a host to be admitted (the link up).
wait_link_up() {
	for _ in $(seq 100); do
		status | grep -q '"state":"up"' && break
		sleep 0.1
	done
}

# perflink-host --tcp (needs $host) to $port in the background, echoing
# replies, --out $d/host, with any more options given, its output in
# $d/host.out; waits for the link.
start_host_tcp() {
	"$host" --tcp "127.0.0.1:$port" --reply echo --out "$d/host" "$@" >"$d/host.out" 2>&1 &
	hpid=$!
	wait_link_up
	check "the host connected: link up" 'status | grep -q "\"state\":\"up\""'
}

# The plan, and on failure what each part said; the exit status.
finish() {
	if [ $failed -ne 0 ]; then
		echo "# --- daemon"; diag "$d/daemon.err"
		echo "# --- host"; diag "$d/host.out"
		echo "# --- summary"; diag "$d/host/summary.json" 2>/dev/null
		echo "# --- status"; echo "$st" | sed 's/^/# /'
	fi
	echo "1..$n"
	[ $failed -eq 0 ]
}
