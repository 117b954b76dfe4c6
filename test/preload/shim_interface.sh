#!/bin/sh
# What libperflink-preload.so shows the dynamic loader (TAP):
#   shim_interface.sh exports LIB
#       it exports its hooks and nothing else
#   shim_interface.sh needed LIB [SANITIZE]
#       it needs nothing but the C library. It is loaded into every process
#       it is set for, dormant or not, and every library it names costs each
#       of those processes a load at start (issue 16, bench/preload_exec);
#       what a tool needs beyond libc is loaded when that tool is switched
#       on (the sampler's libunwind, in libperflink-sampler.so). SANITIZE:
#       the build's b_sanitize; a sanitized shim needs its sanitizer's
#       runtime by design, so there is nothing to check.
what=$1 lib=$2 sanitize=${3:-none}

# check ALLOWED REQUIRED OK_TEXT NOT_OK_TEXT NAMES...: every name is one of
# ALLOWED (" a b c "), every one of REQUIRED is among the names
check() {
	allowed=$1 required=$2 ok_text=$3 not_ok_text=$4
	shift 4
	n=0
	fail=0
	for s in "$@"; do
		n=$((n + 1))
		case "$allowed" in
		*" $s "*) echo "ok $n - $ok_text: $s" ;;
		*) echo "not ok $n - $not_ok_text: $s"; fail=1 ;;
		esac
	done
	for s in $required; do
		n=$((n + 1))
		if printf '%s\n' "$@" | grep -qx "$s"; then
			echo "ok $n - present: $s"
		else
			echo "not ok $n - missing: $s"
			fail=1
		fi
	done
	echo "1..$n"
	exit $fail
}

case $what in
exports)
	allowed=" ioctl __ioctl_time64 cacheflush open open64 openat openat64 __open_2 __open64_2 "
	allowed="$allowed __openat_2 __openat64_2 creat creat64 close close_range closefrom dup dup2 dup3 "
	# the waits timed as NAME.wait stages (preload/hooks_wait.c)
	allowed="$allowed poll ppoll __poll_chk __ppoll_chk __ppoll64 select pselect __select64 __pselect64 "
	allowed="$allowed epoll_wait epoll_pwait epoll_pwait2 __epoll_pwait2_time64 epoll_ctl "
	allowed="$allowed eglSwapBuffers eglSwapBuffersWithDamageKHR eglSwapBuffersWithDamageEXT glXSwapBuffers "
	# glibc: the lookups that find swap functions (preload/lookup_hooks.c)
	allowed="$allowed dlsym glXGetProcAddress glXGetProcAddressARB eglGetProcAddress "
	required="ioctl open openat creat close dup dup2 dup3 poll ppoll select pselect epoll_wait epoll_pwait epoll_ctl"
	# musl's crti.o gives every shared object a default-visibility _init
	# and _fini (glibc's are hidden); the loader calls them through
	# DT_INIT/DT_FINI
	allowed="$allowed _init _fini "
	if ! command -v nm >/dev/null 2>&1; then
		echo "1..0 # SKIP nm (binutils) is not installed"
		exit 0
	fi
	check "$allowed" "$required" "exported hook" "exported but not a hook" \
		$(nm -D --defined-only "$lib" | awk '{ print $3 }' | sed 's/@.*//' | sort -u)
	;;
needed)
	# glibc: libc.so.6 (libdl and libpthread are in it since 2.34) and
	# the loader; musl: libc.so, which is its loader too
	allowed=" libc.so.6 libc.so ld-linux-x86-64.so.2 ld-linux-aarch64.so.1 ld.so.1 "
	if [ "$sanitize" != none ]; then
		echo "1..0 # SKIP built with -fsanitize=$sanitize: the shim needs that runtime"
		exit 0
	fi
	if ! command -v readelf >/dev/null 2>&1; then
		echo "1..0 # SKIP readelf (binutils) is not installed"
		exit 0
	fi
	needed=$(LC_ALL=C readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p')
	# the C library's name differs between glibc and musl: required is
	# whichever of them this shim names, and none at all is a failure
	libc=$(printf '%s\n' $needed | grep '^libc\.so' || echo libc.so)
	check "$allowed" "$libc" "needs the C library" "needs more than the C library" $needed
	;;
*)
	echo "usage: shim_interface.sh exports|needed LIB [SANITIZE]" >&2
	exit 2
	;;
esac
