#!/bin/sh
# The sampler walks a stack whose caller's library was unmapped under it
# (test/preload/unmapped_caller.c): the program is unchanged (status and
# output as bare), the walk stops at the return address into the gone
# library, counts the sample cut short, and records no frame outside the
# process's code (no "[unknown]" caller made of a stale address).
#
#   test_sampler_unmapped.sh PRELOAD_LIB PROGRAM LIB
lib=$1 prog=$2 unmapped_lib=$3
. "$(dirname "$0")/tap_lib.sh"

tmp_dir unmapped
shim_free_env

"$prog" 1 "$unmapped_lib" >"$dir/bare.out" 2>&1
check "bare: the program runs and exits 0" [ $? -eq 0 ]
check "bare: the library is gone from /proc/self/maps while its call is on the stack" \
	grep -q '^unmapped yes' "$dir/bare.out"

LD_PRELOAD=$lib PERFLINK_SAMPLE=1 PERFLINK_SAMPLE_HZ=500 PERFLINK_SAMPLE_WINDOW=60 \
PERFLINK_SAMPLE_OUT="$dir/report.txt" timeout -s KILL 60 \
	"$prog" 3 "$unmapped_lib" >"$dir/out" 2>"$dir/err"
rc=$?
check "under the sampler: exit status 0 as bare (got $rc)" [ $rc -eq 0 ]
check "under the sampler: the same output, and no message" \
	sh -c "grep -q '^unmapped yes swaps [1-9]' '$dir/out' && [ ! -s '$dir/err' ]"
sed 's/^/# /' "$dir/err"

head=$(grep '^==== ' "$dir/report.txt" | tail -n 1)
echo "# $head"
samples=$(echo "$head" | sed -n 's/.* of \([0-9]*\) samples.*/\1/p')
cut=$(echo "$head" | sed -n 's/.*, \([0-9]*\) cut short.*/\1/p')
busy=$(awk '{ s += $NF } END { print s + 0 }' "$dir/report.txt.folded" 2>/dev/null)
check "samples taken: ${samples:-0}, busy ${busy:-0}" [ "${busy:-0}" -ge 100 ]
# every busy sample's stack runs through the unmapped library
check "walks stopped at the gone library are counted cut short: ${cut:-0} of ${busy:-0} busy" \
	[ "${cut:-0}" -ge $((busy * 9 / 10)) ]
sed 's/^/#   /' "$dir/report.txt.folded" | sort -t' ' -k2 -rn | head -n 5
check "no frame made of a stale address ([unknown])" \
	sh -c "! grep -q 'unknown' '$dir/report.txt.folded'"
check "the callback is the outermost frame of the busy stacks" \
	sh -c "awk '\$1 !~ /^spin_after_close(;|\$)/ { bad = 1 } END { exit bad }' '$dir/report.txt.folded'"
tap_end
