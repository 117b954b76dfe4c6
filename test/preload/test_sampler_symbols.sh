#!/bin/sh
# Names for a stripped program (TAP). The renderer with its hot functions
# static (symbols_renderer: hot_a 60% and hot_b 30% of the render
# thread's CPU) is stripped, as a device image ships it; its debug part
# (objcopy --only-keep-debug) goes under a sysroot's
# usr/lib/debug/.build-id/xx/rest.debug. The stripped copy runs under the
# shim's sampler, its windows go through perflinkd over TCP to
# perflink-host --out:
#   - on the device, the hot functions can only be module+offset, and each
#     window lists its modules with their build-ids (the program's is the
#     one readelf sees in the file);
#   - perflink-host export --sysroot names them from the debug file, in
#     stacks.folded and in the pprof profile (function, file and line);
#   - a debug file whose build-id differs is refused (said once) and the
#     frames stay module+offset.
#
# usage: test_sampler_symbols.sh PERFLINKD PERFLINK PERFLINK_HOST SHIM
#        SYMBOLS_RENDERER OTHER_RENDERER
set -u
perflinkd=$1 perflink=$2 host=$3 shim=$4 renderer=$5 other=$6

. "$(dirname "$0")/tcp_link_lib.sh"
scratch_dir symbols

for tool in strip objcopy readelf; do
	command -v $tool >/dev/null || { missing "$tool is installed (binutils)"; finish; exit; }
done
build_id_of() { readelf -n "$1" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p' | head -n 1; }

# the device's program: stripped, beside nothing that could name it (the
# device's libdw would find a debug file beside it, or in /usr/lib/debug)
mkdir -p "$d/debug"
strip --strip-all -o "$d/symbols_renderer" "$renderer"
objcopy --only-keep-debug "$renderer" "$d/debug/symbols_renderer.debug"
id=$(build_id_of "$d/symbols_renderer")
check "the stripped copy keeps its build-id ($id) and has no symbol table" \
	"[ -n '$id' ] && [ '$id' = '$(build_id_of "$renderer")' ] &&
	 ! readelf -S '$d/symbols_renderer' | grep -q '\\.symtab'"

start_daemon_tcp
start_host_tcp
# libtestswap.so is found beside the renderer that was built
env -u DEBUGINFOD_URLS LD_LIBRARY_PATH="$(dirname "$renderer")" LD_PRELOAD="$shim" PERFLINK_SAMPLE=1 \
	PERFLINK_SAMPLE_HZ=200 PERFLINK_SAMPLE_WINDOW=1 PERFLINK_SAMPLE_OUT="$d/render.txt" \
	PERFLINK_SOCKET="$d/producers" "$d/symbols_renderer" 2 >"$d/renderer.out" 2>&1
rrc=$?
check "the stripped renderer ran under the sampler: $(tail -n 1 "$d/renderer.out")" \
	'[ $rrc -eq 0 ] && [ -s "$d/render.txt" ]'
for _ in $(seq 50); do
	[ "$(wc -l <"$d/host/telemetry/render_window.jsonl" 2>/dev/null || echo 0)" -ge 2 ] && break
	sleep 0.1
done
sleep 1
kill -TERM "$hpid"
wait "$hpid"
hrc=$?
hpid=
check "perflink-host exits 0 on SIGTERM" "[ $hrc -eq 0 ]"

windows=$d/host/telemetry/render_window.jsonl
device=$(python3 - "$windows" "$d/symbols_renderer" "$id" 2>&1 <<'PY'
import json, re, sys
path, program, build_id = sys.argv[1:4]
busy = offset = 0
listed = True
for text in open(path, encoding="utf-8"):
    w = json.loads(text)
    named = {m["name"]: m for m in w.get("modules", [])}
    for line in w["folded"].splitlines():
        frames, count = line.rsplit(" ", 1)
        inner = frames.split(";")[-1]
        busy += int(count)
        m = re.fullmatch(r"(.*)\+0x([0-9a-f]+)", inner)
        if m and m.group(1) == "symbols_renderer":
            offset += int(count)
            mod = named.get("symbols_renderer")
            listed &= bool(mod) and mod.get("build_id") == build_id and mod.get("path") == program
        if "hot_a" in frames or "hot_b" in frames:
            listed = False  # the device cannot know these names
print(busy, offset, "listed" if listed else "not-listed")
PY
)
echo "# device: busy samples, innermost in symbols_renderer+0x..., build-id listed: $device"
set -- $device
check "on the device, the hot functions are symbols_renderer+0xOFFSET (${2:-0} of ${1:-0} busy samples) and each window lists the program with its path and build-id" \
	"[ '${3:-}' = listed ] && [ '${2:-0}' -ge \$(( ${1:-1} * 8 / 10 )) ] && [ '${1:-0}' -ge 100 ]"
python3 "$(dirname "$0")/../conformance/telemetry_fields.py" \
	"$(dirname "$0")/../../docs/wire.md" "$d/host/telemetry" render_window >"$d/fields.out" 2>&1
frc=$?
check "every render_window line carries the time and ids docs/wire.md names" '[ $frc -eq 0 ]'
diag "$d/fields.out"

finish
