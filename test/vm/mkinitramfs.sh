#!/usr/bin/env bash
# Build the rig's initramfs: busybox, the kernel modules the scenarios need
# (with their dependencies, in load order), the given programs with the
# shared libraries they link, and the scenario scripts.
#
#   mkinitramfs.sh KERNEL_DIR OUT.cpio [PROGRAM...] [-- FILE...]
#
# PROGRAMs go into /usr/bin; FILEs, this machine's, keep their own paths
# (what a system program finds by a path compiled into it: GStreamer's
# plugins and its gst-plugin-scanner). Both come with their libraries.
#
# PERFLINK_VM_ROOT: a root to build on (systemd-root.sh's: Debian's systemd,
# for scenarios run under systemd as PID 1). PERFLINK_VM_INSTALL: a build
# directory installed into the VM as `meson install` installs it (prefix and
# all: the unit, the init script, the example config, perflinkd).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kdir=$1
out=$2
shift 2
version=$(cat "$kdir/version")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# mktemp makes it 0700, and it becomes the VM's /: other users could not
# reach any path (a scenario runs perflinkd as its own user)
chmod 0755 "$stage"
if [ -n "${PERFLINK_VM_ROOT:-}" ]; then
	cp -a "$PERFLINK_VM_ROOT/." "$stage/"
fi

mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,tmp,run,lib,lib64,usr/bin,usr/lib,scenarios,modules}
cp /bin/busybox "$stage/bin/busybox"
install -m 0755 "$here/init" "$stage/init"
cp "$here"/scenarios/*.sh "$stage/scenarios/"
mkdir -p "$stage/scenarios/lib"
cp "$here"/scenarios/lib/*.sh "$here"/../conformance/wire_checks.sh "$stage/scenarios/lib/"
# what systemd_unit does is read from the docs, as a user would
cp "$here"/../../docs/perflinkd.md "$stage/scenarios/lib/"

# Module set: USB gadget over dummy_hcd, V4L2 vivid, CUSE. dummy_hcd runs at
# high speed by default; scenarios that want SuperSpeed reload it.
modules="configfs libcomposite usb_f_fs dummy_hcd vivid cuse"
: >"$stage/etc/modules.order"
for m in $modules; do
	modprobe -d "$kdir/root" -S "$version" --show-depends "$m" 2>/dev/null |
		awk '$1 == "insmod" {print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
	base=$(basename "$ko")
	cp "$ko" "$stage/modules/$base"
	echo "/modules/$base" >>"$stage/etc/modules.order"
done

# Programs and their shared libraries, at the same paths as on this machine.
copy_libs() {
	ldd "$1" 2>/dev/null | awk '/=> \// {print $3} /^\t\/lib/ {print $1}' |
		while read -r lib; do
			mkdir -p "$stage$(dirname "$lib")"
			# not through a link of PERFLINK_VM_ROOT's (an absolute
			# one names this machine's file)
			rm -f "$stage$lib"
			cp -L "$lib" "$stage$lib"
			# a library of the build tree is found through the
			# program's $ORIGIN-relative run path, which /usr/bin
			# breaks: put it where the loader always looks too
			case "$lib" in
			/lib/* | /usr/lib/* | /lib64/*) ;;
			*) cp -L "$lib" "$stage/usr/lib/$(basename "$lib")" ;;
			esac
		done
}
programs=()
files=()
while [ $# -gt 0 ]; do
	if [ "$1" = -- ]; then
		shift
		files=("$@")
		break
	fi
	programs+=("$1")
	shift
done
for prog in "${programs[@]}"; do
	install -m 0755 "$prog" "$stage/usr/bin/$(basename "$prog")"
	copy_libs "$prog"
done
for f in "${files[@]}"; do
	mkdir -p "$stage$(dirname "$f")"
	rm -f "$stage$f"
	cp -L "$f" "$stage$f"
	copy_libs "$f"
done
if [ -n "${PERFLINK_VM_INSTALL:-}" ]; then
	meson install -C "$PERFLINK_VM_INSTALL" --no-rebuild --quiet --destdir "$stage" >&2
	# where this build installs (the scenario follows docs/perflinkd.md
	# with these): /etc/perflink-vm-install, PERFLINK_VM_prefix=... lines
	meson introspect "$PERFLINK_VM_INSTALL" --buildoptions | python3 -c '
import json, os, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
for k in ("prefix", "bindir", "sbindir", "sysconfdir", "datadir"):
    print("PERFLINK_VM_%s=%s" % (k, os.path.join(o["prefix"], o[k])))' >"$stage/etc/perflink-vm-install"
	. "$stage/etc/perflink-vm-install"
	for prog in "$stage$PERFLINK_VM_bindir"/* "$stage$PERFLINK_VM_sbindir"/*; do
		copy_libs "$prog"
	done
fi

# /dev/console must exist before devtmpfs is mounted, or /init has no output
(cd "$stage" && mknod -m 600 dev/console c 5 1 && find . | cpio -o -H newc --quiet) >"$out"
