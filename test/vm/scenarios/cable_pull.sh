# Cable pull: while frames stream, the UDC is unbound and bound again 20
# times (what the host sees as a cable pulled and put back). Every reconnect
# must resume the stream; the device process's open fds and memory must not
# grow; no message may be corrupt.
# GADGET=external (lib/gadget.sh): the gadget is made and bound outside the
# device, as perflinkd's default expects, and the pulls are done at its UDC.
. /scenarios/lib/gadget.sh
pulls=${PULLS:-20}
# With transparent huge pages on "always", khugepaged folds a 2 MiB region of
# the process into a huge page at some point, and VmRSS jumps by 2 MiB that
# was never allocated: memory growth is measured with THP on madvise.
echo madvise > /sys/kernel/mm/transparent_hugepage/enabled
udc_file=$(gadget_udc_file)
gadget_make || exit 1
perflink stream $(gadget_device_args) --frames 100000 --payload-bytes 65536 --fps 20 \
	--timeout 120 >/tmp/device.out 2>&1 &
device=$!
gadget_bind || exit 1
perflink-host --reply echo --timeout 20 >/tmp/host.out 2>&1 &
host=$!
# configfs files always have a size: wait until the UDC name is really there
for i in $(seq 100); do [ -n "$(cat "$udc_file" 2>/dev/null)" ] && break; sleep 0.1; done
udc=$(cat "$udc_file")
sleep 2
for i in $(seq "$pulls"); do
	echo "" > "$udc_file"
	sleep 0.3
	echo "$udc" > "$udc_file"
	sleep 1.2
	echo "pull $i: fds $(ls /proc/$device/fd | wc -l), VmRSS $(awk '/VmRSS/ {print $2}' /proc/$device/status) kB"
	# the baseline is taken after the first reconnect, once every buffer
	# the link uses has been touched
	if [ "$i" -eq 1 ]; then
		fds_before=$(ls /proc/$device/fd | wc -l)
		rss_before=$(awk '/VmRSS/ {print $2}' /proc/$device/status)
	fi
done
sleep 2
fds_after=$(ls /proc/$device/fd | wc -l)
rss_after=$(awk '/VmRSS/ {print $2}' /proc/$device/status)
kill -TERM $device  # background jobs of a script ignore SIGINT
wait $device
device_rc=$?
wait $host
host_rc=$?
echo "--- device, exit $device_rc"
grep -v "link: \(up\|down\)" /tmp/device.out
echo "--- host, exit $host_rc"
grep -v "connected\|device gone" /tmp/host.out
connects=$(sed -n 's/.* connects \([0-9]*\).*/\1/p' /tmp/host.out)
downs=$(sed -n 's/.* link_downs \([0-9]*\).*/\1/p' /tmp/device.out)
malformed=$(sed -n 's/.* malformed \([0-9]*\).*/\1/p' /tmp/host.out)
bad=$(sed -n 's/.* bad_replies \([0-9]*\).*/\1/p' /tmp/device.out)
echo "pulls $pulls: host connects ${connects:-0}, device link downs ${downs:-0}," \
	"fds $fds_before -> $fds_after, VmRSS ${rss_before} -> ${rss_after} kB," \
	"malformed ${malformed:-?}, bad replies ${bad:-?}"
[ "${connects:-0}" -ge $((pulls + 1)) ] && [ "${downs:-0}" -ge "$pulls" ] &&
	[ "$fds_after" -eq "$fds_before" ] && [ "$rss_after" -le $((rss_before + 256)) ] &&
	[ "${malformed:-1}" -eq 0 ] && [ "${bad:-1}" -eq 0 ]
