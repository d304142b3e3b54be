#!/bin/bash
# A stream receive asks the kernel for what the budget allows now, and under a reject rule takes
# what there is rather than be refused for want of a whole piece (src/pacing.c, the half-piece
# rule: one decision for both fronts). RLT_RECV="1KiB/s burst=256B action=reject": a piece is
# 256 B. The first receive takes the burst; 50 ms later about 51 B have come back: the next
# receive returns those (1..255 B), under the preload and under --seccomp alike. Before issue
# 10 the --seccomp front of the time charged a whole piece and the call failed with the rule's errno (EAGAIN).
# fronts: preload seccomp
# parallel-safe: bound, no rate (what the budget gave back ~50 ms after the burst: 1-255 B, a whole piece taking 250 ms)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin source pull
front=$(front)
start_srv "src_$front" source -n 65536 -T 20
# the initial sleep lets the data arrive; the steps' sizes are the buffer asked for
RLT_RECV="1KiB/s burst=256B action=reject" \
	throttled "$ITEST_BIN/pull" -p "$SRV_PORT" -S "sleep:200 4096 sleep:50 4096" \
	>"$T/$front.out" 2>"$T/$front.err" || { show "$T/$front.out" "$T/$front.err"; fail "$front: pull failed"; }
show "$T/$front.out"
assert_eq "$front: first receive (the burst, one piece)" "256 OK" "$(step_result "$T/$front.out" 1) $(step_status "$T/$front.out" 1)"
assert_eq "$front: second receive succeeds" OK "$(step_status "$T/$front.out" 2)"
assert_range "$front: second receive, what the budget gave back in ~50 ms" 1 255 "$(step_result "$T/$front.out" 2)"
