# The rig itself: the kernel paths the vm suite depends on are there.
# A scenario prints TAP on the console and exits non-zero on any failure.
n=0
fail=0
check() {
	n=$((n + 1))
	if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; fail=1; fi
}
check "configfs mounted" "grep -q ' /sys/kernel/config configfs' /proc/mounts"
check "dummy_hcd gives a UDC" "ls /sys/class/udc | grep -q dummy_udc"
check "vivid made V4L2 capture devices" "[ -c /dev/video0 ]"
check "cuse control device" "[ -c /dev/cuse ]"
check "native AIO present" "[ -f /proc/sys/fs/aio-max-nr ]"
check "PSI present" "[ -f /proc/pressure/io ]"
check "task_delayacct sysctl present" "[ -f /proc/sys/kernel/task_delayacct ]"
mkdir -p /sys/kernel/config/usb_gadget/smoke
cd /sys/kernel/config/usb_gadget/smoke
echo 0x1d6b > idVendor
echo 0x0104 > idProduct
mkdir -p configs/c.1 functions/ffs.smoke
ln -s functions/ffs.smoke configs/c.1/
# usb_f_fs registers the filesystem when its first instance is made
check "functionfs registered" "grep -q functionfs /proc/filesystems"
mkdir -p /dev/ffs-smoke
mount -t functionfs smoke /dev/ffs-smoke
check "functionfs mounts and exposes ep0" "[ -e /dev/ffs-smoke/ep0 ]"
echo "1..$n"
exit $fail
