#!/bin/bash
# A close frees its RLT_CONNS slot for a connect waiting for one, promptly. RLT_CONNS=2
# (action=delay): 2 connections open, a third connect waits, a thread closes the first after
# 200 ms: the third connects within 50 ms of that close. And an fd number that refers to
# another socket (dup2 over it) gets that socket's rules: under
# RLT_SEND="64KiB/s port=A", 128 KiB written to a fd learnt as A's and then replaced by a
# connection to B go at once, and the other way round take about a second. Both fronts.
. "$(dirname "$0")/../integration/lib.sh"
need_lib
need_bin closeintr
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
for front in preload seccomp; do
	case $front in
	preload) run=(env LD_PRELOAD="$RLT_LIB") ;;
	seccomp) run=("$RLTHROTTLE" --seccomp --) ;;
	esac
	for round in 1 2; do
		RLT_CONNS="2 action=delay" timeout -k 2 20 "${run[@]}" "$ITEST_BIN/closeintr" -w 200 wake >"$T/$front.$round.out" 2>"$T/$front.$round.err" ||
			{ show "$T/$front.$round.out" "$T/$front.$round.err"; fail "$front: closeintr wake failed"; }
		out=$(cat "$T/$front.$round.out")
		info "$front round $round: $out"
		assert_eq "$front: the third connection" OK "$(kv open3 "$out")"
		assert_range "$front: the third connect returned after the close (ms)" 0 50 "$(kv wake_ms "$out")"
	done
	pa=$(free_port)
	pb=$(free_port)
	[ "$pa" != "$pb" ] || pb=$((pa + 1))
	RLT_SEND="64KiB/s port=$pa" timeout -k 2 20 "${run[@]}" "$ITEST_BIN/closeintr" -a "$pa" -b "$pb" -B 131072 reuse \
		>"$T/reuse_$front.out" 2>"$T/reuse_$front.err" || { show "$T/reuse_$front.out" "$T/reuse_$front.err"; fail "$front: closeintr reuse failed"; }
	out=$(cat "$T/reuse_$front.out")
	info "$front: $out"
	assert_le "$front: 128 KiB to B at a number learnt as A's (ms)" 400 "$(kv to_b_ms "$out")"
	assert_range "$front: 128 KiB to A at a number learnt as B's (ms)" 700 3000 "$(kv to_a_ms "$out")"
done
