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
#   - perflink-host --sysroot (live, at the run's end) and perflink-host
#     export --sysroot name them from the debug file, in stacks.folded and
#     in the pprof profile (function, file and line); so does the
#     unstripped program at its device path under a sysroot;
#   - a debug file whose build-id differs is refused (said once) and the
#     frames stay module+offset.
# The same program linked at its address (nopie_renderer: load bias 0,
# code at 0x400000 on x86_64) runs beside it: its offsets are addresses of
# the file's vaddr space too, and are named alike. So is a C++ program's
# hidden code (cxx_hidden_renderer, where there is a C++ compiler; "-"
# otherwise), its names demangled as the device would show them.
#
# usage: test_sampler_symbols.sh PERFLINKD PERFLINK PERFLINK_HOST SHIM
#        SYMBOLS_RENDERER OTHER_RENDERER NOPIE_RENDERER CXX_RENDERER|-
set -u
perflinkd=$1 perflink=$2 host=$3 shim=$4 renderer=$5 other=$6 nopie=$7 cxx=$8

. "$(dirname "$0")/tcp_link_lib.sh"
scratch_dir symbols

for tool in strip objcopy readelf; do
	command -v $tool >/dev/null || { missing "$tool is installed (binutils)"; finish; exit; }
done
build_id_of() { readelf -n "$1" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p' | head -n 1; }

# The device's programs: stripped, beside nothing that could name them
# (the device's libdw would find a debug file beside one, or in
# /usr/lib/debug); their debug parts filed by build-id in the sysroot.
sysroot=$d/sysroot
mkdir -p "$d/debug"
device_copy() { # BUILT NAME: $d/NAME stripped, its debug file in the sysroot; its build-id
	strip --strip-all -o "$d/$2" "$1"
	objcopy --only-keep-debug "$1" "$d/debug/$2.debug"
	bid=$(build_id_of "$d/$2")
	check "the stripped $2 keeps its build-id ($bid) and has no symbol table" \
		"[ -n '$bid' ] && [ '$bid' = '$(build_id_of "$1")' ] &&
		 ! readelf -S '$d/$2' | grep -q '\\.symtab'"
	mkdir -p "$sysroot/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)"
	cp "$d/debug/$2.debug" \
		"$sysroot/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug"
}
device_copy "$renderer" symbols_renderer
id=$bid
device_copy "$nopie" nopie_renderer
nopie_id=$bid
[ "$cxx" = - ] || device_copy "$cxx" cxx_hidden_renderer

start_daemon_tcp
# with the sysroot: the names are made at the run's end
start_host_tcp --sysroot "$sysroot"
# libtestswap.so is found beside the renderers that were built
for prog in symbols_renderer nopie_renderer; do
	env -u DEBUGINFOD_URLS LD_LIBRARY_PATH="$(dirname "$renderer")" LD_PRELOAD="$shim" \
		PERFLINK_SAMPLE=1 PERFLINK_SAMPLE_HZ=200 PERFLINK_SAMPLE_WINDOW=1 \
		PERFLINK_SAMPLE_OUT="$d/$prog.txt" PERFLINK_SOCKET="$d/producers" \
		"$d/$prog" 2 >"$d/$prog.out" 2>&1
	rrc=$?
	check "the stripped $prog ran under the sampler: $(tail -n 1 "$d/$prog.out")" \
		'[ $rrc -eq 0 ] && [ -s "$d/$prog.txt" ]'
done
if [ "$cxx" != - ]; then
	env -u DEBUGINFOD_URLS LD_LIBRARY_PATH="$(dirname "$renderer")" LD_PRELOAD="$shim" \
		PERFLINK_SAMPLE=1 PERFLINK_SAMPLE_HZ=200 PERFLINK_SAMPLE_WINDOW=1 \
		PERFLINK_SAMPLE_OUT="$d/cxx.txt" PERFLINK_SOCKET="$d/producers" \
		"$d/cxx_hidden_renderer" 2 - >"$d/cxx.out" 2>&1
	rrc=$?
	check "the stripped cxx_hidden_renderer ran under the sampler: $(tail -n 1 "$d/cxx.out")" \
		'[ $rrc -eq 0 ] && [ -s "$d/cxx.txt" ]'
	check "on the device its hot code is cxx_hidden_renderer+0x..., no C++ name" \
		"grep -q 'cxx_hidden_renderer+0x' '$d/cxx.txt.folded' && ! grep -q 'plrender' '$d/cxx.txt.folded'"
fi
for _ in $(seq 50); do
	[ "$(grep -c '"comm":"nopie_renderer"' "$d/host/telemetry/render_window.jsonl" 2>/dev/null || echo 0)" -ge 2 ] && break
	sleep 0.1
done
sleep 1
kill -TERM "$hpid"
wait "$hpid"
hrc=$?
hpid=
check "perflink-host exits 0 on SIGTERM" "[ $hrc -eq 0 ]"

windows=$d/host/telemetry/render_window.jsonl
# "BUSY INNERMOST_IN_PROGRAM LOWEST_OFFSET listed|not-listed" of PROGRAM's windows
device_frames() { # PROGRAM BUILD_ID
	python3 - "$windows" "$1" "$d/$1" "$2" 2>&1 <<'PY'
import json, re, sys
path, name, program, build_id = sys.argv[1:5]
busy = offset = 0
lowest = None
listed = True
for text in open(path, encoding="utf-8"):
    w = json.loads(text)
    if w.get("comm") != name:
        continue
    named = {m["name"]: m for m in w.get("modules", [])}
    for line in w["folded"].splitlines():
        frames, count = line.rsplit(" ", 1)
        inner = frames.split(";")[-1]
        busy += int(count)
        m = re.fullmatch(r"(.*)\+0x([0-9a-f]+)", inner)
        if m and m.group(1) == name:
            offset += int(count)
            lowest = min(lowest or 1 << 64, int(m.group(2), 16))
            mod = named.get(name)
            listed &= bool(mod) and mod.get("build_id") == build_id and mod.get("path") == program
        if "hot_a" in frames or "hot_b" in frames:
            listed = False  # the device cannot know these names
print(busy, offset, hex(lowest or 0), "listed" if listed else "not-listed")
PY
}
set -- $(device_frames symbols_renderer "$id")
echo "# device, symbols_renderer: busy samples, innermost in symbols_renderer+0x..., the lowest offset, build-id listed: $*"
check "on the device, the hot functions are symbols_renderer+0xOFFSET (${2:-0} of ${1:-0} busy samples) and each window lists the program with its path and build-id" \
	"[ '${4:-}' = listed ] && [ '${2:-0}' -ge \$(( ${1:-1} * 8 / 10 )) ] && [ '${1:-0}' -ge 100 ]"
set -- $(device_frames nopie_renderer "$nopie_id")
echo "# device, nopie_renderer: $*"
check "a program linked at its address: its offsets are its own addresses (lowest ${3:-?}, past 0x400000; ${2:-0} of ${1:-0} busy samples), listed with its build-id" \
	"[ '${4:-}' = listed ] && [ '${2:-0}' -ge \$(( ${1:-1} * 8 / 10 )) ] && [ '${1:-0}' -ge 100 ] &&
	 [ \$((${3:-0})) -ge \$((0x400000)) ]"
python3 "$(dirname "$0")/../conformance/telemetry_fields.py" \
	"$(dirname "$0")/../../docs/wire.md" "$d/host/telemetry" render_window >"$d/fields.out" 2>&1
frc=$?
check "every render_window line carries the time and ids docs/wire.md names" '[ $frc -eq 0 ]'
diag "$d/fields.out"

# What the folded stacks' innermost frames of PROGRAM ("PROGRAM (PID);...")
# are, weighted by their counts: "HOT_A HOT_B LEFT BUSY" (LEFT: still
# PROGRAM+0x...)
shares() { # FILE [PROGRAM]
	awk -v prog="${2:-symbols_renderer}" 'index($0, prog " (") == 1 {
	       n = $NF; $NF = ""; sub(/ $/, ""); k = split($0, f, ";"); inner = f[k]; busy += n
	       if (inner == "hot_a") a += n; else if (inner == "hot_b") b += n
	       else if (index(inner, prog "+0x") == 1) left += n }
	     END { print a + 0, b + 0, left + 0, busy + 0 }' "$1"
}
set -- $(shares "$d/host/stacks.folded" nopie_renderer)
check "live: perflink-host --sysroot named nopie_renderer's hot_a and hot_b ($1 and $2 of $4), none left ($3)" \
	"[ $4 -ge 100 ] && [ $3 -eq 0 ] && [ $1 -ge \$(( $4 * 55 / 100 )) ] && [ $2 -ge \$(( $4 * 22 / 100 )) ]"
if [ "$cxx" != - ]; then
	draw=$(awk 'index($0, "cxx_hidden_renderer (") == 1 && $(NF - 1) ~ /;plrender::Scene::draw\(unsigned_long\)$/ { n += $NF } END { print n + 0 }' "$d/host/stacks.folded")
	long=$(grep -c '^cxx_hidden_renderer (.*;plrender::pipeline_stages::ShaderCompilationContext::compileAndLinkEverything(unsigned_long,_char_const\*,_double) ' "$d/host/stacks.folded")
	check "live: the C++ program's hidden functions named from its debug file, demangled (plrender::Scene::draw(unsigned long) innermost in $draw samples; the long name in $long stacks)" \
		"[ $draw -ge 50 ] && [ $long -ge 1 ] && ! grep -q '_ZN8plrender' '$d/host/stacks.folded'"
fi
set -- $(shares "$d/host/stacks.folded")
echo "# live, --sysroot: hot_a $1, hot_b $2, left as symbols_renderer+0x... $3, of $4 busy samples"
check "live: perflink-host --sysroot named hot_a and hot_b in stacks.folded ($1 and $2 of $4), none left as module+offset ($3)" \
	"[ $4 -ge 100 ] && [ $3 -eq 0 ] && [ $1 -ge \$(( $4 * 55 / 100 )) ] && [ $2 -ge \$(( $4 * 22 / 100 )) ]"
check "the run's stderr names the frames it named" \
	"grep -q 'debug files named [1-9][0-9]* of the [0-9]* module+offset frames' '$d/host.out'"

# export of a copy of the recording, from its telemetry alone
again() { # a name: a fresh copy of the recording as $d/NAME
	rm -rf "${d:?}/$1"
	mkdir -p "$d/$1"
	cp -r "$d/host/telemetry" "$d/$1/"
}
again bare
"$host" export "$d/bare" >"$d/bare.out" 2>&1
set -- $(shares "$d/bare/stacks.folded")
check "export without a sysroot: the hot frames stay symbols_renderer+0xOFFSET ($3 of $4)" \
	"[ $4 -ge 100 ] && [ $1 -eq 0 ] && [ $3 -ge \$(( $4 * 8 / 10 )) ]"

again good
"$host" export --sysroot "$sysroot" "$d/good" >"$d/good.out" 2>&1
grc=$?
set -- $(shares "$d/good/stacks.folded")
check "export --sysroot: exit 0, hot_a $1 and hot_b $2 of $4 busy samples named, none left" \
	"[ $grc -eq 0 ] && [ $4 -ge 100 ] && [ $3 -eq 0 ] && [ $1 -ge \$(( $4 * 55 / 100 )) ] &&
	 [ $2 -ge \$(( $4 * 22 / 100 )) ]"
if command -v go >/dev/null; then
	go tool pprof -raw "$d/good/profile.pb.gz" >"$d/raw.txt" 2>&1
	go tool pprof -top -symbolize=none "$d/good/profile.pb.gz" >"$d/top.txt" 2>&1
	sed -n '/^Locations/,/^Mappings/p' "$d/raw.txt" | grep -E 'hot_a|hot_b' | sed 's/^/# /'
	# the device would give hot_a's innermost line: spin.h, inlined into it
	check "pprof: hot_a and hot_b are functions with a file and line, in the symbols_renderer mapping" \
		"grep -Eq '^ +[0-9]+: 0x0 M=[0-9]+ hot_a [a-z_]+\\.[ch]:[1-9][0-9]* ' '$d/raw.txt' &&
		 grep -Eq '^ +[0-9]+: 0x0 M=[0-9]+ hot_b [a-z_]+\\.[ch]:[1-9][0-9]* ' '$d/raw.txt' &&
		 grep -q 'symbols_renderer' '$d/raw.txt'"
	check "pprof: the symbols_renderer mapping carries its build-id" \
		"sed -n '/^Mappings/,\$p' '$d/raw.txt' | grep -q ' symbols_renderer $id '"
	check "pprof -top: hot_a is the hottest function ($(grep -m1 -E ' hot_[ab]$' "$d/top.txt"))" \
		"grep -E ' (hot_[ab]|symbols_renderer\\+0x[0-9a-f]+|render_frame|__clone3|start_thread)\$' '$d/top.txt' | head -n 1 | grep -q ' hot_a\$'"
else
	missing "go is installed (scripts/deps installs golang-go)"
fi

# report.html's flame graph and the trace's render samples take the same names
flame=$(python3 - "$d/good/report.html" 2>&1 <<'PY'
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script type="application/json" id="perflink-data">(.*?)</script>', page, re.S)
d = json.loads(m.group(1))
stacks = [s for p in d["flame"] for s in p["stacks"]]
inner = lambda name: sum(n for f, n in stacks if f.split(";")[-1] == name)
left = sum(n for f, n in stacks if re.search(r"(^|;)symbols_renderer\+0x", f))
print(inner("hot_a"), inner("hot_b"), left)
PY
)
set -- $flame
check "report.html's flame graph: hot_a $1, hot_b $2 samples innermost, ${3:-?} in stacks through symbols_renderer+0x" \
	"[ '${1:-0}' -ge 100 ] && [ '${2:-0}' -ge 30 ] && [ '${3:-x}' = 0 ]"
if command -v protoc >/dev/null; then
	protoc --decode=perfetto.protos.Trace --proto_path="$(dirname "$0")/../../host/export" \
		perfetto_subset.proto <"$d/good/trace.perfetto-trace" >"$d/trace.txt" 2>&1
	named=$(grep -c 'name: "hot_[ab]"' "$d/trace.txt")
	check "the trace's render samples are named hot_a and hot_b ($named), none symbols_renderer+0x" \
		"[ $named -ge 100 ] && ! grep -q 'name: \"symbols_renderer+0x' '$d/trace.txt'"
else
	missing "protoc is installed (scripts/deps installs protobuf-compiler)"
fi

again path
mkdir -p "$d/root2$(dirname "$d/symbols_renderer")"
cp "$renderer" "$d/root2$d/symbols_renderer" # unstripped, the same build-id
"$host" export --sysroot "$d/root2" "$d/path" >"$d/path.out" 2>&1
set -- $(shares "$d/path/stacks.folded")
check "export --sysroot with the program at its device path under it: named ($1 hot_a, $3 left)" \
	"[ $1 -ge \$(( $4 * 55 / 100 )) ] && [ $3 -eq 0 ]"

# a debug file of another build filed under this one's build-id
wrong=$d/wrong
mkdir -p "$wrong/.build-id/$(echo "$id" | cut -c1-2)"
objcopy --only-keep-debug "$other" "$wrong/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
again refused
"$host" export --debug-dir "$wrong" "$d/refused" >"$d/refused.out" 2>&1
rrc=$?
diag "$d/refused.out"
set -- $(shares "$d/refused/stacks.folded")
check "export --debug-dir with a debug file of another build-id: refused, the frames stay symbols_renderer+0x ($3 of $4), exit $rrc" \
	"[ $rrc -eq 0 ] && [ $1 -eq 0 ] && [ $2 -eq 0 ] && [ $3 -ge \$(( $4 * 8 / 10 )) ]"
check "and said so once" \
	"[ \$(grep -c 'its build-id is [0-9a-f]*, not symbols_renderer.s $id: not used' '$d/refused.out') -eq 1 ]"

finish
