#!/usr/bin/env bash
# The two libraries as an application gets them: `meson install` into a
# scratch root, then programs compiled with nothing but what pkg-config
# says of the installed copies, run against those copies.
#   - host/examples/reply_app against the installed libperflink-host, run by
#     test_host_lib (a device played over TCP) in place of the build's own;
#   - a producer that opens with no daemon listening gets the documented
#     -ENOENT from the installed libperflink;
#   - each installed library exports its API and nothing else.
#
#   install_pkgconfig.sh BUILD_ROOT SOURCE_ROOT TEST_HOST_LIB [SANITIZE]
#
# SANITIZE: the build's b_sanitize; a sanitized library needs programs built
# with the same runtime, so they are compiled with -fsanitize=SANITIZE too.
set -u
build=$1 src=$2 test_host_lib=$3 sanitize=${4:-none}
cflags=""
[ "$sanitize" != none ] && cflags="-fsanitize=$sanitize"
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $*"; }
check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@" >"$work/out" 2>&1; then ok "$what"; else not_ok "$what"; sed 's/^/# /' "$work/out"; fi
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dest=$work/root

echo "TAP version 13"
check "meson install into a scratch root" meson install -C "$build" --no-rebuild --destdir "$dest" --quiet
pc_dir=$(dirname "$(find "$dest" -name perflink.pc | head -n1)")
check "perflink.pc and perflink-host.pc are installed" test -f "$pc_dir/perflink.pc" -a -f "$pc_dir/perflink-host.pc"
export PKG_CONFIG_PATH=$pc_dir PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_LIBDIR=$pc_dir
libdir=$(pkg-config --variable=libdir perflink) # inside the scratch root
export LD_LIBRARY_PATH=$libdir

# shellcheck disable=SC2046,SC2086 # pkg-config's words and $cflags are separate arguments
check "reply_app compiles against the installed header and library" \
	cc $cflags -o "$work/reply_app" "$src/host/examples/reply_app.c" \
	$(pkg-config --cflags --libs perflink-host)
check "reply_app loads the installed libperflink-host" \
	sh -c "ldd '$work/reply_app' | grep -q '$libdir/libperflink-host.so'"
check "test_host_lib passes with the installed reply_app" "$test_host_lib" "$work/reply_app"

cat >"$work/producer.c" <<'EOF'
#include <perflink.h>
#include <errno.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	struct pl_producer_options o = { .socket_path = argv[1], .frame_bytes = 4096 };
	struct pl_producer *p;
	int r = argc == 2 ? pl_producer_open(&p, &o) : -EINVAL;

	printf("pl_producer_open: %d (API %d)\n", r, PERFLINK_API_VERSION);
	return r == -ENOENT ? 0 : 1;
}
EOF
# shellcheck disable=SC2046,SC2086
check "a producer compiles against the installed libperflink" \
	cc $cflags -o "$work/producer" "$work/producer.c" $(pkg-config --cflags --libs perflink)
check "with no daemon, the installed libperflink says -ENOENT" "$work/producer" "$work/no-such-socket"

for lib in perflink:pl_ perflink-host:plh_; do
	name=${lib%%:*} prefix=${lib#*:}
	so=$libdir/lib$name.so
	extra=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v "^$prefix" | grep -v '^_init$\|^_fini$' || true)
	if [ -f "$so" ] && [ -z "$extra" ]; then
		ok "lib$name.so exports only $prefix* functions"
	else
		not_ok "lib$name.so exports only $prefix* functions"
		echo "$extra" | sed 's/^/# also: /'
	fi
done
echo "1..$n"
exit $failed
