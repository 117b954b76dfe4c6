#!/usr/bin/env bash
# Fetch Debian's stock kernel package once and prepare it for the rig:
# unpack it (never install it), index its modules with depmod, and extract
# the ELF vmlinux from the xz-compressed vmlinuz so qemu boots it through
# PVH (about half the boot time under emulation, rig-notes.md).
#
# Prints the cache directory; it holds vmlinux, root/ (the unpacked package)
# and version. Cached in $PERFLINK_CACHE (default ~/.cache/perflink) so CI
# runs on the same machine reuse it; a new kernel package version makes a
# new entry.
set -euo pipefail

cache=${PERFLINK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/perflink}
# linux-image-amd64 is a metapackage: its dependency names the real package
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
if [ -z "$pkg" ]; then
	echo "kernel.sh: cannot resolve linux-image-amd64 (run apt-get update?)" >&2
	exit 1
fi
pkgver=$(apt-cache policy "$pkg" | awk '/Candidate:/ {print $2}')
dir="$cache/kernel/$pkg-$pkgver"

if [ -f "$dir/ready" ]; then
	echo "$dir"
	exit 0
fi

rm -rf "$dir"
mkdir -p "$dir/dl"
(cd "$dir/dl" && apt-get download -q "$pkg" >&2)
dpkg -x "$dir"/dl/*.deb "$dir/root"
rm -rf "$dir/dl"
version=$(ls "$dir/root/lib/modules" | head -n1)
echo "$version" >"$dir/version"
depmod -b "$dir/root" "$version"

# The vmlinuz is a bzImage whose payload is an xz stream; find the stream's
# magic and decompress from there (trailing garbage is expected and ignored).
vmlinuz="$dir/root/boot/vmlinuz-$version"
offset=$(grep -abo $'\xfd7zXZ\x00' "$vmlinuz" | head -n1 | cut -d: -f1)
if [ -n "$offset" ]; then
	tail -c +"$((offset + 1))" "$vmlinuz" | xz -dc 2>/dev/null >"$dir/vmlinux" || true
fi
if [ ! -s "$dir/vmlinux" ] || ! head -c 4 "$dir/vmlinux" | grep -q $'\x7fELF'; then
	# fall back to the compressed image: slower to boot, same kernel
	cp "$vmlinuz" "$dir/vmlinux"
fi
touch "$dir/ready"
echo "$dir"
