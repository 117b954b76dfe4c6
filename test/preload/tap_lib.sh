# TAP for the preload suite's shell tests: source it, call check, end with
# tap_end.
#   check WHAT COMMAND...   ok if COMMAND succeeds
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n - $*"; }
check() { what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }
tap_end() { echo "1..$n"; exit $fail; }

# The sampler's shell tests: a scratch folder in $dir, removed at exit (a
# test with more to clean up sets its own trap afterwards), and no shim
# or sampler setting inherited from the caller, so that only the commands
# that set them get them.
#   tmp_dir NAME
# (tcp_link_lib.sh, for the TCP tests, has its own scratch_dir in $d.)
tmp_dir() {
	dir=$(mktemp -d "${TMPDIR:-/tmp}/pl-$1.XXXXXX") || exit 1
	trap 'rm -rf "$dir"' EXIT
}
shim_free_env() {
	unset LD_PRELOAD PERFLINK_SAMPLE PERFLINK_SAMPLE_OUT PERFLINK_SAMPLE_HZ \
		PERFLINK_SAMPLE_THREAD PERFLINK_SAMPLE_SIGNAL PERFLINK_SAMPLE_WINDOW \
		PERFLINK_SAMPLE_MAX_BYTES
}

# The GL tests' private X server: Xvfb on a display it picks itself
# (-displayfd: no clash with another test's or the machine's), killed at
# exit, when $dir goes too; DISPLAY exported. Call after tmp_dir.
start_xvfb() {
	Xvfb -displayfd 3 -screen 0 1024x768x24 -nolisten tcp 3>"$dir/display" >/dev/null 2>&1 &
	xvfb=$!
	trap 'kill $xvfb 2>/dev/null; rm -rf "$dir"' EXIT
	i=0
	while [ ! -s "$dir/display" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	DISPLAY=:$(head -n 1 "$dir/display")
	export DISPLAY
}
