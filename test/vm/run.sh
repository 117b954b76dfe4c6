#!/usr/bin/env bash
# Boot the rig and run one scenario: Debian's stock kernel under qemu with an
# initramfs built from the build tree. Exit status is the scenario's.
#
#   run.sh SCENARIO [PROGRAM...] [-- FILE...]
#
# Programs are copied into /usr/bin, files (this machine's) at their own
# paths, each with its shared libraries (mkinitramfs.sh).
#
# PERFLINK_VM_LOG names a file that receives the whole console output.
# PERFLINK_VM_VARS="NAME=VALUE ..." sets variables for the scenario (values
# without spaces), e.g. BENCH_FRAMES=5000 for bench_link.
# PERFLINK_VM_INIT=systemd boots Debian's systemd as PID 1 (systemd-root.sh)
# and runs the scenario as a unit; PERFLINK_VM_INSTALL=BUILD_DIR installs that
# build into the VM as `meson install` does (mkinitramfs.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scenario=$1
shift
kdir=$("$here/kernel.sh")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

init_args=""
if [ "${PERFLINK_VM_INIT:-}" = systemd ]; then
	PERFLINK_VM_ROOT=$("$here/systemd-root.sh")
	export PERFLINK_VM_ROOT
	# systemd's own lines only when something fails
	init_args=" perflink.init=systemd systemd.show_status=error"
fi
"$here/mkinitramfs.sh" "$kdir" "$work/initramfs.cpio" "$@"

# Software emulation by default: nested KVM inside this workplace's VMs
# failed (emulation failure with the default CPU model, an MSR assertion with
# -cpu host), while TCG boots the same kernel in seconds. PERFLINK_VM_KVM=1
# tries KVM where it works.
accel="tcg,thread=multi"
cpu=""
if [ -n "${PERFLINK_VM_KVM:-}" ] && [ -w /dev/kvm ]; then
	accel=kvm
	cpu="-cpu host"
fi
log=${PERFLINK_VM_LOG:-$work/console.log}
vars=""
for v in ${PERFLINK_VM_VARS:-}; do
	vars="$vars perflink.var.$v"
done
# The scenario's time limit counts from the boot. A boot that shows no sign
# of the rig's init within boot_s (normally it comes in seconds; under TCG
# on a loaded 2-core machine the kernel once stayed silent for the whole
# 300 s) is killed and booted once more: that is the emulator failing, not
# the scenario, and the scenario then still has to pass.
boot_s=${PERFLINK_VM_BOOT_TIMEOUT:-120}
boot() {
	local qpid i
	timeout "${PERFLINK_VM_TIMEOUT:-300}" qemu-system-x86_64 \
		-accel "$accel" $cpu -smp 2 -m 1024 -nographic -no-reboot -nic none \
		-kernel "$kdir/vmlinux" -initrd "$work/initramfs.cpio" \
		-append "console=ttyS0 panic=-1 quiet loglevel=3 perflink.scenario=$scenario$init_args$vars" \
		</dev/null >"$log" 2>&1 &
	qpid=$!
	for ((i = 0; i < boot_s * 10; i++)); do
		grep -q "PERFLINK-RIG: kernel" "$log" && break
		kill -0 "$qpid" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q "PERFLINK-RIG: kernel" "$log" && kill -0 "$qpid" 2>/dev/null; then
		kill "$qpid" 2>/dev/null || true
		wait "$qpid" || true
		return 1
	fi
	wait "$qpid" || true
}
if ! boot; then
	echo "run.sh: no sign of the rig's init ${boot_s} s after the boot began" \
		"(console: $(tail -n 2 "$log" | tr -d '\r\033' | tr '\n' ' ')); booting once more" >&2
	boot || true
fi
# show the scenario's output (not the firmware's) to the test log
sed -n '/PERFLINK-RIG: kernel/,$p' "$log" | tr -d '\r'
rc=$(sed -n 's/.*PERFLINK-RESULT: rc=\([0-9]*\).*/\1/p' "$log" | tail -n1)
if [ -z "$rc" ]; then
	echo "run.sh: the VM gave no result (timeout or crash); console log follows" >&2
	tail -n 40 "$log" >&2
	exit 1
fi
exit "$rc"
