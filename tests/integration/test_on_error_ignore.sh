#!/bin/bash
# rlthrottle(7) RULES: RLT_ON_ERROR=ignore runs the program; the bad rule is ignored with a warning that names
# the variable; good rules in other variables still apply.
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink blast
rc=0
RLT_ON_ERROR=ignore RLT_SEND="1000/s" throttled sh -c 'echo RAN' >"$T/out" 2>"$T/err" || rc=$?
assert_eq "exit status with RLT_ON_ERROR=ignore" 0 "$rc"
assert_eq "program output" RAN "$(cat "$T/out")"
err=$(cat "$T/err")
assert_match "warning" 'rlthrottle.*RLT_SEND' "$err"

# The bad RLT_RECV is dropped, the good RLT_SEND still throttles: 1.5 MiB at 1 MiB/s, burst 256 KiB.
RLT_ON_ERROR=ignore RLT_RECV="garbage" RLT_SEND="1MiB/s burst=256KiB" do_send ign -n 1572864
assert_rate "send with another variable ignored" $((1572864 - 262144)) "$(kv elapsed_ns "$S_OUT")" 1048576 0.7 1.3
