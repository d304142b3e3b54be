#!/bin/bash
# rlthrottle(7) BEHAVIOUR fork(): the child has its own budgets, starting where the parent's stood. The parent
# spends its whole burst (100 KiB at 100 KiB/s), forks, then parent and child each send 200 KiB at
# once: each takes ~2 s (own budget, starting empty). Shared budget: ~4 s; a fresh child: ~1 s.
# Under --seccomp the fork is made by the handler inside the program, as under the preload.
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink forker
how=$(front)
start_srv sink sink -n 2
spid=$LAST_PID
RLT_SEND="100KiB/s burst=100KiB" throttled "$ITEST_BIN/forker" fork -p "$SRV_PORT" -P 102400 -n 204800 >"$T/f.out" 2>"$T/f.err" ||
	{ show "$T/f.out" "$T/f.err"; fail "$how: forker failed"; }
wait_pid "$spid" 20 || fail "$how: sink did not finish"
show "$T/f.out" "$T/sink.out"
for who in parent child; do
	ns=$(grep "^who=$who " "$T/f.out" | sed 's/.*elapsed_ns=\([0-9]*\).*/\1/')
	assert_range "$how, $who: seconds to send 200 KiB after the fork" 1.4 2.8 "$(calc "$ns / 1e9")"
done
got=$(grep '^conn=' "$T/sink.out" | sed 's/.*bytes=\([0-9]*\).*/\1/' | sort -n | tr '\n' ' ')
assert_eq "$how: bytes per connection" "204800 307200 " "$got"
