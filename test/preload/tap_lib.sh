# TAP for the preload suite's shell tests: source it, call check, end with
# tap_end.
#   check WHAT COMMAND...   ok if COMMAND succeeds
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n - $*"; }
check() { what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }
tap_end() { echo "1..$n"; exit $fail; }
