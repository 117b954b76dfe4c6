# Sourced by both conformance tests (test_wire_host.sh over TCP, the vm
# scenario conformance_usb over USB): what wire_host saw and what the
# device's status says after the frames, the HELLOs, the COMMANDs and the
# hostile messages, checked the same way on both transports.
# Needs: check DESCRIPTION CONDITION, get NAME (a line of wire_host's
# output), $frames, $st (the status JSON), $prc and $producer_out (the
# producer's exit status and output file).
wire_checks() {
	check "$(get frames) of $frames frames came, every message checked ($(get messages) messages, $(get bad) bad)" \
		'[ "$(get frames)" = $frames ] && [ "$(get bad)" = 0 ]'
	check "sequence numbers from 0, +1 each" '[ "$(get sequence_ok)" = 1 ]'
	check "padding zero to the packet size" '[ "$(get padding_ok)" = 1 ]'
	check "telemetry: $(get telemetry) messages of JSON lines" \
		'[ "$(get telemetry)" -ge 1 ] && [ "$(get telemetry_lines_ok)" = 1 ]'
	check "PINGs answered at once by PONGs carrying the PING's time: $(get pongs), slowest $(get max_pong_ms) ms" \
		'[ "$(get pongs)" -ge 3 ] && [ "$(get pong_time_ok)" = 1 ] &&
		 awk "BEGIN { exit !($(get max_pong_ms) < 500) }"'
	# with what perflinkd did with the host's replies, to tell a reply its
	# producer had no room for (replies_ring_full) from one lost
	check "the producer got every echo back: $(cat "$producer_out"); perflinkd: $(echo "$st" |
		grep -o '"replies_[a-z_]*":[0-9]*' | tr '\n' ' ')" \
		"[ $prc -eq 0 ] && grep -q 'replies $frames bad_replies 0' '$producer_out'"
	for reason in bad_header_check bad_checksum bad_flags bad_version bad_padding; do
		check "status counts the hostile message rejected as $reason" \
			"echo '$st' | grep -q '\"$reason\":1[,}]'"
	done
	check "and the REPLY to a frame never sent as replies_never_sent" \
		"echo '$st' | grep -q '\"replies_never_sent\":1[,}]'"
	check "the host is still the host after all of it" "echo '$st' | grep -q '\"state\":\"up\"'"
	check "the device's first message is its HELLO, with wire_version and commands" \
		'[ "$(get device_hello_ok)" = 1 ]'
	check "status shows the host's HELLO: wire_host 1" \
		"echo '$st' | grep -q '\"host\":{\"program\":\"wire_host\",\"version\":\"1\",\"wire_version\":1'"
	check "COMMAND ping and link_diag answered ok, and link_diag sent a link_diag line" \
		'[ "$(get ping_ok)" = 1 ] && [ "$(get link_diag_ok)" = 1 ] && [ "$(get link_diag_on_command)" = 1 ]'
	check "an unknown and a malformed COMMAND answered not ok, and counted" \
		"[ \"\$(get unknown_refused)\" = 1 ] && [ \"\$(get malformed_refused)\" = 1 ] &&
		 echo '$st' | grep -q '\"commands_unknown\":1,\"commands_malformed\":1'"
}
