#!/bin/sh
# Names under the sampler (test/preload/cxx_renderer.cpp): the report,
# its folded stacks and what goes to perflinkd name the hot C++ function as
# C++ reads it, plrender::Scene::draw(unsigned long), not
# _ZN8plrender5Scene4drawEm; and code of a stripped library that lies in
# no exported symbol (stripped_lib.c) as module+offset, not by the nearest
# exported symbol below it. A window without a busy sample is written, and
# says so.
#
#   test_sampler_cxx.sh PRELOAD_LIB PROGRAM STRIPPED_LIB
lib=$1 prog=$2 stripped=$3
. "$(dirname "$0")/tap_lib.sh"

tmp_dir cxx
shim_free_env

LD_PRELOAD=$lib PERFLINK_SAMPLE=1 PERFLINK_SAMPLE_HZ=500 PERFLINK_SAMPLE_WINDOW=60 \
PERFLINK_SAMPLE_OUT="$dir/report.txt" "$prog" 2 "$stripped" >"$dir/out" 2>"$dir/err"
check "the C++ program runs under the sampler, no message" \
	sh -c "grep -q '^frames [1-9]' '$dir/out' && [ ! -s '$dir/err' ]"
sed -n '1,12s/^/# /p' "$dir/report.txt"
check "the report names plrender::Scene::draw(unsigned long)" \
	grep -q 'plrender::Scene::draw(unsigned long)' "$dir/report.txt"
# (a folded line's frames cannot hold a space: the count follows one)
check "the folded stacks too" grep -q ';plrender::Scene::draw(unsigned_long) ' "$dir/report.txt.folded"
# a name whose mangled form is longer than the sampler keeps a name:
# demangled whole first, then cut, never cut mangled
check "the long name demangled too: plrender::pipeline_stages::ShaderCompilationContext::..." \
	grep -q 'plrender::pipeline_stages::ShaderCompilationContext::' "$dir/report.txt"
check "no mangled name of the program's left" \
	sh -c "! grep -q '_ZN8plrender' '$dir/report.txt' '$dir/report.txt.folded'"
check "the stripped library's static code is not named stripped_tiny, which ends before it" \
	sh -c "! grep -q 'stripped_tiny' '$dir/report.txt'"
check "it is named by module and offset" grep -q 'libplstripped-s.so+0x' "$dir/report.txt"
# 1 s rendering, then 3.5 s asleep, a window a second: the quiet seconds
# are windows too, not a gap
LD_PRELOAD=$lib PERFLINK_SAMPLE=1 PERFLINK_SAMPLE_HZ=200 PERFLINK_SAMPLE_WINDOW=1 \
PERFLINK_SAMPLE_OUT="$dir/quiet.txt" "$prog" 1 - 3.5 >"$dir/qout" 2>"$dir/qerr"
check "a run that renders 1 s and sleeps 3.5 s: status 0, no message" \
	sh -c "grep -q '^frames [1-9]' '$dir/qout' && [ ! -s '$dir/qerr' ]"
sed 's/^/# /' "$dir/quiet.txt" | grep -E '^# (====|--)' | head -n 12
windows=$(grep -c '^==== ' "$dir/quiet.txt")
quiet=$(grep -c '^-- no busy sample in this window (the render thread used no CPU time)$' "$dir/quiet.txt")
check "a window every second: $windows" [ "$windows" -ge 4 ]
check "the quiet ones written, saying so: $quiet" [ "$quiet" -ge 2 ]
check "each of them with its count of samples" \
	sh -c "[ \$(grep -B2 '^-- no busy sample' '$dir/quiet.txt' | grep -c '^==== .* of 0 samples ====$') -eq $quiet ]"
tap_end
