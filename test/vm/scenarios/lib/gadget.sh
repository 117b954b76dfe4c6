# Sourced by scenarios: the USB gadget made and bound the way an init script
# or a vendor's gadget service does it, outside perflinkd (perflinkd's
# default, link-setup-gadget = no). With GADGET=external a scenario runs the
# device this way; otherwise the device makes the gadget itself
# (--setup-gadget), and these functions only say where it is.
#
#   gadget_device_args   the device's arguments for the chosen set-up
#   gadget_make          (external) the configfs gadget and the functionfs
#                        mount, before the device starts
#   gadget_bind          (external) bind the UDC once the device has written
#                        its descriptors (binding earlier fails)
#   gadget_udc_file      the configfs UDC file of the gadget
GADGET=${GADGET:-setup}
gadget_dir=/sys/kernel/config/usb_gadget/perflink
ffs_dir=/dev/ffs-perflink

gadget_udc_file() { echo "$gadget_dir/UDC"; }

gadget_device_args() {
	if [ "$GADGET" = external ]; then
		echo "--ffs-dir $ffs_dir"
	else
		echo "--setup-gadget"
	fi
}

gadget_make() {
	[ "$GADGET" = external ] || return 0
	mkdir -p "$gadget_dir/strings/0x409" "$gadget_dir/configs/c.1/strings/0x409" \
		"$gadget_dir/functions/ffs.perflink" || return 1
	# a vendor's own ids, not perflink's defaults: a host must find the
	# device by its interface (docs/wire.md "Finding the device on USB")
	echo 0x1209 >"$gadget_dir/idVendor"
	echo 0x7e57 >"$gadget_dir/idProduct"
	echo "perflink rig" >"$gadget_dir/strings/0x409/manufacturer"
	echo "external gadget" >"$gadget_dir/strings/0x409/product"
	echo "rig-1" >"$gadget_dir/strings/0x409/serialnumber"
	echo "perflink" >"$gadget_dir/configs/c.1/strings/0x409/configuration"
	ln -s "$gadget_dir/functions/ffs.perflink" "$gadget_dir/configs/c.1/" || return 1
	mkdir -p "$ffs_dir"
	# FFS_MOUNT_OPTS: e.g. uid=65534,gid=65534 for a device that runs as its
	# own user (docs/perflinkd.md "Running as its own user")
	mount -t functionfs ${FFS_MOUNT_OPTS:+-o "$FFS_MOUNT_OPTS"} perflink "$ffs_dir"
}

gadget_bind() {
	[ "$GADGET" = external ] || return 0
	udc=$(ls /sys/class/udc | head -n 1)
	for _ in $(seq 100); do
		echo "$udc" >"$gadget_dir/UDC" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "gadget: could not bind $udc" >&2
	return 1
}
