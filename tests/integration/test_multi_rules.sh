#!/bin/bash
# rlthrottle(7) RULES: several rules in one variable (";"): every matching rule applies, the strictest wins;
# a rule whose filters do not match does not apply.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink blast
n=1572864
RLT_SEND="100MiB/s; 1MiB/s burst=128KiB" do_send both -n $n
assert_rate "two rules, the stricter binds" $((n - 131072)) "$(kv elapsed_ns "$S_OUT")" 1048576 0.7 1.3
RLT_SEND="100kB/s port=1-2; 2MiB/s burst=256KiB" do_send nomatch -n $((2 * n))
assert_rate "a non-matching rule is ignored" $((2 * n - 262144)) "$(kv elapsed_ns "$S_OUT")" 2097152 0.7 1.3
RLT_SEND="8Mbit/s burst=128KiB" do_send mbit -n $n
assert_rate "8Mbit/s = 1 MB/s" $((n - 131072)) "$(kv elapsed_ns "$S_OUT")" 1000000 0.7 1.3
RLT_SEND="256KiB/250ms burst=128KiB" do_send period -n $n
assert_rate "256KiB/250ms = 1 MiB/s" $((n - 131072)) "$(kv elapsed_ns "$S_OUT")" 1048576 0.7 1.3
