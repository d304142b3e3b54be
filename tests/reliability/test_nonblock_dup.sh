#!/bin/bash
# O_NONBLOCK set with F_SETFL through a dup of a socket is the socket's: a send on the original
# fd is then non-blocking (what the budget allows now, at least one piece). Before: the preload
# took the original for blocking and one 8 MB send at 1 MiB/s slept ~8 s in the call. Now: it
# returns at once with a partial count, and the peer got exactly those bytes (sha256).
# parallel-safe: bound, no rate (a non-blocking send returns in under 150 ms; it slept ~8 s before)
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/signals.sh"
need_bin nbdup

random_file "$T/in" 8388608
sink_to sink "$T/out"
RLT_SEND="1MiB/s burst=64KiB" run_front preload "$ITEST_BIN/nbdup" "$PEER_PORT" "$T/in" \
	>"$T/nbdup.out" 2>"$T/nbdup.err" || fail "nbdup exited $?"
wait_pid "$PEER_PID" 10 || fail "the peer did not see the end"
show "$T/nbdup.out" "$T/nbdup.err"
assert_le "send took (ms)" 150 "$(kv took_ms "$T/nbdup.out")"
n=$(kv ret "$T/nbdup.out")
assert_range "send returned" 1 8388607 "$n"
head -c "$n" "$T/in" >"$T/sent"
same_bytes "what send said went" "$T/sent" "$T/out"
