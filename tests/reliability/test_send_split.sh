#!/bin/bash
# Issue 9: only a send larger than what can go whole is split. One blocking send of 200000 bytes
# under RLT_SEND="100KiB/s burst=20KiB" still goes out in pieces, paced from its first byte
# (charged whole it would wait 1.75 s for the bucket, then arrive at once); and a 40000-byte send
# under "100KiB/s max-wait=100ms" (within the burst, but not within what max-wait lets it wait
# for whole) is split too, so it is delayed, never refused. Bytes exact. Under the preload and
# under --seccomp.
. "$(dirname "$0")/../integration/lib.sh"
need_lib
need_bin lines
for how in preload seccomp; do
	sec=$([ "$how" = seccomp ] && echo 1)
	# larger than the burst: pieces, the first at once
	l=200000
	start_srv "recv_big_$how" lines recv -t 1 -n 1 -l $l
	rpid=$LAST_PID
	UNDER_SECCOMP=$sec RLT_SEND="100KiB/s burst=20KiB" \
		throttled "$ITEST_BIN/lines" send -p "$SRV_PORT" -t 1 -n 1 -l $l >"$T/big_$how.out" 2>&1 ||
		{ show "$T/big_$how.out"; fail "$how: sender failed"; }
	wait_pid "$rpid" 20 || fail "$how: receiver did not finish"
	r=$T/recv_big_$how.out
	show "$T/big_$how.out" "$r"
	assert_eq "$how, send > burst: bytes, whole, torn" "$l 1 0" "$(kv bytes "$r") $(kv whole "$r") $(kv torn "$r")"
	assert_le "$how, send > burst: first byte after (ms)" 500 "$(kv first_ms "$r")"
	# half of it, 100000 bytes: (100000 - 20480) / 102400 = 0.78 s
	assert_range "$how, send > burst: half of it after (ms)" 550 1400 "$(kv half_ms "$r")"
	MIN_SPAN_S=1.2 assert_rate "$how, send > burst: rate after the burst" $((l - 20480)) "$(kv elapsed_ns "$r")" 102400 0.75 1.3

	# within the burst, beyond max-wait: split, delayed, never ENOBUFS
	l=40000 n=6
	start_srv "recv_mw_$how" lines recv -t 1 -n $n -l $l
	rpid=$LAST_PID
	UNDER_SECCOMP=$sec RLT_SEND="100KiB/s max-wait=100ms" \
		throttled "$ITEST_BIN/lines" send -p "$SRV_PORT" -t 1 -n $n -l $l >"$T/mw_$how.out" 2>&1 ||
		{ show "$T/mw_$how.out"; fail "$how: sender failed under max-wait (a send refused?)"; }
	wait_pid "$rpid" 20 || fail "$how: receiver did not finish"
	r=$T/recv_mw_$how.out
	show "$T/mw_$how.out" "$r"
	assert_eq "$how, max-wait: bytes, whole, errors" "$((l * n)) $n 0" "$(kv bytes "$r") $(kv whole "$r") $(kv errors "$T/mw_$how.out")"
	MIN_SPAN_S=1 assert_rate "$how, max-wait: rate after the burst" $((l * n - 102400)) "$(kv elapsed_ns "$r")" 102400 0.75 1.3
done
