#!/bin/sh
# The sampler soak for as long as you like (default 10 minutes): threads
# that malloc, free, dlopen and dlclose without pause, the render thread
# sampled at 1 kHz, a report every second. Prints TAP; exits non-zero on a
# hang, a crash, no samples or a malformed report. The preload suite runs
# the same for 10 s (test preload_sampler_soak).
#
#   bench/sampler_soak.sh [SECONDS] [BUILD_DIR] [THREADS]
seconds=${1:-600}
build=${2:-build}
threads=${3:-4}
here=$(dirname "$0")
for f in "$build/preload/libperflink-preload.so" "$build/test/soak" "$build/test/libsoakdl.so"; do
	if [ ! -e "$f" ]; then
		echo "sampler_soak: $f is missing: build first (ninja -C $build)" >&2
		exit 2
	fi
done
exec sh "$here/../test/preload/test_sampler_soak.sh" "$(realpath "$build/preload/libperflink-preload.so")" \
	"$(realpath "$build/test/soak")" "$(realpath "$build/test/libsoakdl.so")" "$seconds" "$threads"
