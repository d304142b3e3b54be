#!/bin/bash
# rlthrottle(7) BEHAVIOUR exec: a program exec'd by a throttled one is throttled by the same rules (plain exec and
# fork+exec), unless RLT_INHERIT=0 (under --seccomp the exec'd program gets a handler that
# passes every call through).
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink blast forker
n=$((1572864))
for mode in exec forkexec; do
	start_srv "sink_$mode" sink
	spid=$LAST_PID
	RLT_SEND="1MiB/s burst=128KiB" throttled "$ITEST_BIN/forker" $mode "$ITEST_BIN/blast" -p "$SRV_PORT" -n $n >"$T/$mode.out" 2>"$T/$mode.err" ||
		{ show "$T/$mode.err"; fail "$mode: failed"; }
	wait_pid "$spid" 20
	assert_eq "$mode: bytes" $n "$(kv bytes "$T/sink_$mode.out")"
	assert_eq "$mode: checksum" "$(kv fnv "$T/$mode.out")" "$(kv fnv "$T/sink_$mode.out")"
	assert_rate "$mode: exec'd program" $((n - 131072)) "$(kv elapsed_ns "$T/sink_$mode.out")" 1048576 0.7 1.3
done
# RLT_INHERIT=0: under --seccomp a later image gets a handler that passes every call through
for mode in exec forkexec; do
	start_srv "sinkni_$mode" sink
	spid=$LAST_PID
	RLT_INHERIT=0 RLT_SEND="1MiB/s burst=128KiB" throttled "$ITEST_BIN/forker" $mode "$ITEST_BIN/blast" -p "$SRV_PORT" -n $((8 * n)) >"$T/ni_$mode.out" 2>"$T/ni_$mode.err" ||
		{ show "$T/ni_$mode.err"; fail "RLT_INHERIT=0 $mode: failed"; }
	wait_pid "$spid" 20
	assert_eq "RLT_INHERIT=0 $mode: bytes" $((8 * n)) "$(kv bytes "$T/sinkni_$mode.out")"
	# 12 MiB under a 1 MiB/s rule would take ~12 s: finishing within 2 s means not throttled
	assert_fast "RLT_INHERIT=0 $mode: exec'd program" "$(kv elapsed_ns "$T/ni_$mode.out")" 2
done
