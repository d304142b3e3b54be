#!/bin/bash
# Issue 17, "Also": preadv2 and pwritev2 on a socket (offset -1: the file position, which a socket
# has none of, so a readv and a writev) passed the preload unthrottled. 2 MiB each way, in
# 16 KiB calls, blocking and RWF_NOWAIT, under 1 MiB/s after a 256 KiB burst: about 1.75 s,
# every byte intact.
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
need_bin pv2 sink source
n=$((2 * 1048576))
for mode in block nowait; do
	w=""; [ $mode = nowait ] && w=-w
	start_srv "sink_$mode" sink
	spid=$LAST_PID
	RLT_SEND="1MiB/s burst=256KiB" throttled "$ITEST_BIN/pv2" -p "$SRV_PORT" -n $n $w >"$T/w_$mode.out" 2>"$T/w_$mode.err" ||
		{ show "$T/w_$mode.out" "$T/w_$mode.err"; fail "pwritev2 ($mode) failed"; }
	wait_pid "$spid" 20 || fail "sink did not finish"
	show "$T/w_$mode.out"
	assert_eq "pwritev2 ($mode): bytes at the sink" $n "$(kv bytes "$T/sink_$mode.out")"
	assert_eq "pwritev2 ($mode): stream intact" "$(kv fnv "$T/w_$mode.out")" "$(kv fnv "$T/sink_$mode.out")"
	assert_rate "pwritev2 ($mode): rate after the burst" $((n - 262144)) "$(kv elapsed_ns "$T/w_$mode.out")" 1048576 0.7 1.3

	start_srv "src_$mode" source -n $n
	spid=$LAST_PID
	RLT_RECV="1MiB/s burst=256KiB" throttled "$ITEST_BIN/pv2" -R -p "$SRV_PORT" -n $n $w >"$T/r_$mode.out" 2>"$T/r_$mode.err" ||
		{ show "$T/r_$mode.out" "$T/r_$mode.err"; fail "preadv2 ($mode) failed"; }
	wait_pid "$spid" 20
	show "$T/r_$mode.out"
	assert_eq "preadv2 ($mode): bytes" $n "$(kv bytes "$T/r_$mode.out")"
	assert_rate "preadv2 ($mode): rate after the burst" $((n - 262144)) "$(kv elapsed_ns "$T/r_$mode.out")" 1048576 0.7 1.3
done
