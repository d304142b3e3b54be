#!/bin/bash
# A close frees its RLT_CONNS slot for a connect waiting for one, promptly. Under --seccomp
# close is not notified (a notified close could fail with EINTR, test_close_signal.sh): the
# supervisor looks for closed sockets while a connect waits (every 10 ms). RLT_CONNS=2
# (action=delay): 2 connections open, a third connect waits, a thread closes the first after
# 300 ms: the third connects within 50 ms of that close. Both fronts.
. "$(dirname "$0")/../integration/lib.sh"
need_lib
need_bin closeintr
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
for front in preload seccomp; do
	case $front in
	preload) run=(env LD_PRELOAD="$RLT_LIB") ;;
	seccomp) run=("$RLTHROTTLE" --seccomp --) ;;
	esac
	for round in 1 2 3; do
		RLT_CONNS="2 action=delay" timeout -k 2 20 "${run[@]}" "$ITEST_BIN/closeintr" -w 300 wake >"$T/$front.$round.out" 2>"$T/$front.$round.err" ||
			{ show "$T/$front.$round.out" "$T/$front.$round.err"; fail "$front: closeintr wake failed"; }
		out=$(cat "$T/$front.$round.out")
		info "$front round $round: $out"
		assert_eq "$front: the third connection" OK "$(kv open3 "$out")"
		assert_range "$front: the third connect returned after the close (ms)" 0 50 "$(kv wake_ms "$out")"
	done
done
