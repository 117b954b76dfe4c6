#!/usr/bin/env bash
# Fetch Debian's systemd and what it needs at run time once, and unpack them
# (never install them) into a root that the rig's initramfs is built on when
# a scenario runs under systemd as PID 1 (run.sh with PERFLINK_VM_INIT=
# systemd, test/vm/README.md).
#
# Prints the root's directory. Cached in $PERFLINK_CACHE (default
# ~/.cache/perflink) under systemd/, keyed by the resolved package list with
# versions: a new systemd (or library) version makes a new entry, as
# kernel.sh does for the kernel.
set -euo pipefail

cache=${PERFLINK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/perflink}
# systemd and its Depends/Pre-Depends in Debian 12 (the first alternative of
# each, resolved once with apt-cache depends; one apt-cache call per package
# took minutes, for every run). dpkg -x runs no maintainer scripts, so what
# only they use is left out: debconf (and its perl-base) and dpkg (with tar,
# install-info). A systemd that needs more fails to boot: add it here.
packages=(
	systemd libsystemd-shared libsystemd0 libudev1 mount
	libc6 libgcc-s1 gcc-12-base libcrypt1
	libacl1 libapparmor1 libaudit1 libaudit-common libcap2 libcap-ng0
	libblkid1 libmount1 libfdisk1 libsmartcols1 libuuid1
	libcryptsetup12 libdevmapper1.02.1 dmsetup libargon2-1 libjson-c5
	libgcrypt20 libgpg-error0 libssl3 libp11-kit0 libffi8
	libip4tc2 libkmod2 libseccomp2 libselinux1 libpcre2-8-0 libpam0g
	liblz4-1 liblzma5 libzstd1
)
list=$(apt-cache policy "${packages[@]}" 2>/dev/null |
	awk '/^[^ ].*:$/ { p = $1; sub(":$", "", p) } /Candidate:/ { print p "=" $2 }' | sort)
if [ "$(echo "$list" | grep -cv '=(none)$')" -ne ${#packages[@]} ]; then
	echo "systemd-root.sh: cannot resolve systemd's packages (run apt-get update?)" >&2
	exit 1
fi
key=$(echo "$list" | sha256sum | cut -c1-16)
dir="$cache/systemd/$key"

if [ -f "$dir/ready" ]; then
	echo "$dir/root"
	exit 0
fi

rm -rf "$dir"
mkdir -p "$dir/dl" "$dir/root/usr"/{bin,sbin,lib,lib64} "$dir/root/etc"
echo "$list" >"$dir/packages"
# Debian 12's merged /usr, as debootstrap makes it
for d in bin sbin lib lib64; do ln -s "usr/$d" "$dir/root/$d"; done
(cd "$dir/dl" && apt-get download -q $(echo "$list" | tr '\n' ' ') >&2)
for deb in "$dir"/dl/*.deb; do
	rm -rf "$dir/x"
	dpkg -x "$deb" "$dir/x"
	tar -C "$dir/x" -cf - . | tar -C "$dir/root" -xf - --keep-directory-symlink
done
rm -rf "$dir/dl" "$dir/x" "$dir/root/usr/share"/{doc,man,info,locale,lintian,bash-completion,zsh}
# What a package's postinst (or base-passwd) would make: the users the
# scenarios need; systemd-sysusers adds its own at boot.
cat >"$dir/root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
EOF
cat >"$dir/root/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
touch "$dir/ready"
echo "$dir/root"
