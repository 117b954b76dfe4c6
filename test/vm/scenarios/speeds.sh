# High speed and SuperSpeed: the same stream over dummy_hcd at each speed;
# the gadget's descriptors for both must work and the link must use the
# speed's packet size (512 and 1024 bytes) for padding.
run_at() {
	speed=$1 packet=$2
	perflink stream --setup-gadget --frames 100 --payload-bytes 393216 --fps 20 \
		--timeout 60 >/tmp/device.out 2>&1 &
	device=$!
	perflink-host --reply echo --timeout 60 >/tmp/host.out 2>&1
	host_rc=$?
	wait $device
	device_rc=$?
	echo "--- $speed: device exit $device_rc, host exit $host_rc"
	cat /tmp/device.out /tmp/host.out
	[ $host_rc -eq 0 ] && [ $device_rc -eq 0 ] &&
		grep -q "link: up over usb, $packet-byte packets" /tmp/device.out &&
		grep -q "connected: $packet-byte packets" /tmp/host.out
}
run_at high-speed 512 || exit 1
rmmod dummy_hcd || exit 1
insmod /modules/dummy_hcd.ko is_super_speed=1 || exit 1
run_at SuperSpeed 1024
