#!/bin/sh
# libperflink-preload.so exports its hooks and nothing else (TAP).
#   exports.sh LIB
lib=$1
allowed=" ioctl __ioctl_time64 cacheflush open open64 openat openat64 __open_2 __open64_2 "
allowed="$allowed __openat_2 __openat64_2 creat creat64 close close_range closefrom dup dup2 dup3 "
allowed="$allowed eglSwapBuffers eglSwapBuffersWithDamageKHR eglSwapBuffersWithDamageEXT glXSwapBuffers "
required="ioctl open openat creat close dup dup2 dup3"
# musl's crti.o gives every shared object a default-visibility _init and
# _fini (glibc's are hidden); the loader calls them through DT_INIT/DT_FINI
allowed="$allowed _init _fini "

if ! command -v nm >/dev/null 2>&1; then
	echo "1..0 # SKIP nm (binutils) is not installed"
	exit 0
fi
symbols=$(nm -D --defined-only "$lib" | awk '{ print $3 }' | sed 's/@.*//' | sort -u)
n=0
fail=0
for s in $symbols; do
	n=$((n + 1))
	case "$allowed" in
	*" $s "*) echo "ok $n - exported hook: $s" ;;
	*) echo "not ok $n - exported but not a hook: $s"; fail=1 ;;
	esac
done
for s in $required; do
	n=$((n + 1))
	if printf '%s\n' $symbols | grep -qx "$s"; then
		echo "ok $n - hook present: $s"
	else
		echo "not ok $n - hook missing: $s"
		fail=1
	fi
done
echo "1..$n"
exit $fail
