#!/bin/sh
# The shim's dlsym and GetProcAddress hooks (preload/lookup_hooks.c):
# - a renderer that finds eglSwapBuffers itself, with dlsym on a handle or
#   through glXGetProcAddressARB found with dlsym (test/preload/
#   lookup_renderer.c), is seen by the sampler: a report with render_stats,
#   fps as the program counts them, no "no frame swap" message;
# - dormant, the same lookups give the library's own function;
# - lookups that depend on the caller keep their meaning through the
#   shim: RTLD_NEXT from an interposer preloaded after it, RTLD_DEFAULT
#   from a library dlopened RTLD_LOCAL (test/preload/lookup_scope.c);
# - a GL plugin loaded RTLD_LOCAL with its libEGL.so.1 and calling
#   eglSwapBuffers by symbol (test/preload/gl_plugin.c) reaches the
#   shim's hook, which finds the real swap by soname: counted, and the
#   hook does not call itself.
#
#   test_lookup.sh PRELOAD_LIB LOOKUP_RENDERER SWAP_LIB LOOKUP_SCOPE LIBLOOKUPA NEXT_LIB GL_PLUGIN
lib=$1 renderer=$2 swap_lib=$3 scope=$4 liba=$5 next_lib=$6 gl_plugin=$7
. "$(dirname "$0")/tap_lib.sh"

tmp_dir lookup
shim_free_env

for mode in dlsym getproc; do
	LD_PRELOAD=$lib "$renderer" 1 $mode "$swap_lib" >"$dir/$mode.dormant" 2>&1
	check "$mode, dormant: the program's lookup gives the library's own swap ($(cat "$dir/$mode.dormant"))" \
		grep -q '^swap_from libtestswap.so frames [1-9]' "$dir/$mode.dormant"
	# 7 s: two render_stats periods of 5 s
	LD_PRELOAD=$lib PERFLINK_SAMPLE=1 PERFLINK_SAMPLE_HZ=200 PERFLINK_SAMPLE_WINDOW=60 \
	PERFLINK_SAMPLE_OUT="$dir/$mode.txt" "$renderer" 7 $mode "$swap_lib" >"$dir/$mode.out" 2>"$dir/$mode.err"
	check "$mode, sampling: status 0, no message ($(cat "$dir/$mode.err"))" \
		sh -c "grep -q '^swap_from .* frames [1-9]' '$dir/$mode.out' && [ ! -s '$dir/$mode.err' ]"
	check "$mode, sampling: the lookup gives the shim's hook ($(cat "$dir/$mode.out"))" \
		grep -q '^swap_from libperflink-preload.so ' "$dir/$mode.out"
	sed -n '1,3s/^/# /p' "$dir/$mode.txt" 2>/dev/null
	fps=$(sed -n 's/.* fps_after5 \([0-9.]*\)$/\1/p' "$dir/$mode.out")
	seen=$(sed -n 's/^render_stats fps=\([0-9.]*\) .*/\1/p' "$dir/$mode.txt" 2>/dev/null | tail -n 1)
	# render_stats at exit covers the sampler's last period, from 5 s to the
	# end, compared with the program's own rate over the same time (to a
	# tick: a busy machine's load may change over the run, and the whole
	# run's rate once differed by 35%); a swap the hooks missed would leave
	# no render_stats at all, or a fraction of the rate
	check "$mode, sampling: frames counted, render_stats fps ${seen:-none} against the program's ${fps:-none} from 5 s to the end" \
		awk -v a="${seen:-0}" -v b="${fps:-0}" 'BEGIN { exit !(b > 0 && a > b * 0.75 && a < b * 1.25) }'
done

# sampling from the first swap: the hook's first lookup of the real
# function is made while the shim's dlsym answers swap names
LD_PRELOAD=$lib PERFLINK_SAMPLE=1 PERFLINK_SAMPLE_HZ=200 PERFLINK_SAMPLE_WINDOW=60 \
PERFLINK_SAMPLE_OUT="$dir/plugin.txt" "$renderer" 7 plugin "$gl_plugin" >"$dir/plugin.out" 2>"$dir/plugin.err"
rc=$?
check "plugin, sampling: status 0 ($rc), frames swapped, no message ($(cat "$dir/plugin.err"))" \
	sh -c "[ $rc -eq 0 ] && grep -q '^swap_from libplglplugin.so frames [1-9]' '$dir/plugin.out' && [ ! -s '$dir/plugin.err' ]"
fps=$(sed -n 's/.* fps_after5 \([0-9.]*\)$/\1/p' "$dir/plugin.out")
seen=$(sed -n 's/^render_stats fps=\([0-9.]*\) .*/\1/p' "$dir/plugin.txt" 2>/dev/null | tail -n 1)
check "plugin, sampling: the hook's swaps counted, render_stats fps ${seen:-none} against the program's ${fps:-none} from 5 s to the end" \
	awk -v a="${seen:-0}" -v b="${fps:-0}" 'BEGIN { exit !(b > 0 && a > b * 0.75 && a < b * 1.25) }'
LD_PRELOAD=$lib "$renderer" 1 plugin "$gl_plugin" >"$dir/plugin.dormant" 2>&1
check "plugin, dormant: frames swapped ($(cat "$dir/plugin.dormant"))" \
	grep -q '^swap_from libplglplugin.so frames [1-9]' "$dir/plugin.dormant"

LD_PRELOAD="$lib $next_lib" PERFLINK_SAMPLE=1 PERFLINK_SAMPLE_OUT="$dir/scope.txt" \
	timeout -s KILL 30 "$scope" "$liba" >"$dir/scope.out" 2>&1
rc=$?
check "an RTLD_NEXT interposer preloaded after the shim finds the next getppid ($rc: $(cat "$dir/scope.out"))" \
	grep -q '^next ok ' "$dir/scope.out"
check "a library loaded RTLD_LOCAL finds its dependency's symbol with RTLD_DEFAULT" \
	grep -q ' default ok$' "$dir/scope.out"
LD_PRELOAD="$lib $next_lib" timeout -s KILL 30 "$scope" "$liba" >"$dir/scope.dormant" 2>&1
check "the same, dormant ($(cat "$dir/scope.dormant"))" grep -q '^next ok default ok$' "$dir/scope.dormant"
tap_end
