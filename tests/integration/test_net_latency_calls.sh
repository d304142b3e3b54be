#!/bin/bash
# RLT_NET's latency on a stream, call by call (rlthrottle(7) NETWORK CONDITIONS): the delay
# line answers every receive as the kernel would, DUR later. MSG_PEEK waits for the data and
# leaves it (FIONREAD counts it); MSG_DONTWAIT gets EAGAIN until it is due; MSG_WAITALL gets
# all it asks; the end and a reset come after the data held (a MSG_WAITALL receive that gets
# the data short leaves the reset to the next, which the old build told as an end); a blocking
# receive ends by its own SO_RCVTIMEO; two threads on one socket share every byte; a dup of the socket reads what
# the line holds; a forked child goes on with its parent's copy; a receive waiting while
# another thread dup2()s a second connection onto its fd number gets its own connection's
# bytes; an epoll one-shot registration, splice() after receives and C stdio (fdopen, fgets)
# get every byte in order; a listener's readiness stays its connections'. Before the line, a
# peek did not wait, a reset read as an end and SO_RCVTIMEO was not kept; dup, swap, oneshot,
# splice, stdio and listen each failed on a step of the line's making; the rest guard what the
# kernel did already. net_delay_calls.py has one case each.
# fronts: preload seccomp
# parallel-safe: bound, no rate (bytes and order; a reset told after the data; a peek waits at least the 50 ms; SO_RCVTIMEO of 0.3 s ends in 0.29-1.5 s; the one-shot loop ends in under 2 s; a receive 10 ms after the send gets EAGAIN, 40 ms before the data is due)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
for c in peek dontwait waitall eof reset resetwaitall rcvtimeo threads dup fork swap oneshot splice stdio listen; do
	RLT_NET="latency=50ms" throttled timeout 30 python3 "$ITEST_DIR/net_delay_calls.py" $c >"$T/$c.out" 2>"$T/$c.err" ||
		{ show "$T/$c.out" "$T/$c.err"; fail "$c"; }
	grep -q "^ok $c" "$T/$c.out" || { show "$T/$c.out" "$T/$c.err"; fail "$c: no ok"; }
	info "$(cat "$T/$c.out")"
done
exit 0
