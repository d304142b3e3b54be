#!/bin/bash
# A wait with a timeout on a throttled socket (poll, ppoll, select, pselect, epoll_wait) reports
# it ready only when its budget allows the call, and returns by the caller's timeout (issue 17
# row 14; rlthrottle(7) BEHAVIOUR). An event loop (waitdue: wait 20 ms, then one non-blocking
# call) at 2 KiB/s: the call after a ready report never sleeps (< 20 ms; before, it slept for
# the budget, half a piece: ~60 ms and more), a round (wait and call) ends by its timeout (at
# most 3 rounds more than 20 ms late, for a loaded machine; before, every ready round was), the
# waits time out while the budget is short (they did not: the kernel had data), data moves at
# the rate, and the loop does not spin.
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
need_lib
need_bin waitdue
check() { # LABEL OUTFILE RATE
	local out=$2
	info "$1: $(cat "$out")"
	[ -n "$(kv bytes "$out")" ] || fail "$1: no figures"
	assert_le "$1 longest non-blocking call (ns)" 20000000 "$(kv call_max_ns "$out")"
	# a loaded machine may deschedule a few rounds; before, every ready round was late
	assert_le "$1 rounds ended over 20 ms past their timeout" 3 "$(kv late "$out")"
	assert_le "$1 latest round past its timeout (ns)" 250000000 "$(kv over_max_ns "$out")"
	assert_ge "$1 waits that timed out while the budget was short" 10 "$(kv timeouts "$out")"
	# the burst (1 KiB) and the rate after it
	local el; el=$(kv elapsed_ns "$out")
	MIN_SPAN_S=1 assert_rate "$1" "$(( $(kv bytes "$out") - 1024 ))" "$el" 2048 0.7 1.3
	assert_cpu "$1" "$(kv cpu_ns "$out")" "$el" 0.2
}
# epoll_et: an edge-triggered reader that takes a short read for "drained" (as nginx does);
# before, it was handed one piece with budget left and never told again (512 bytes in 1.5 s)
for w in poll ppoll select pselect epoll epoll_et; do
	RLT_RECV="2KiB/s burst=1KiB" throttled "$ITEST_BIN/waitdue" -w "$w" -d recv -t 20 -s 1.5 \
		>"$T/$w.recv.out" 2>"$T/$w.recv.err" || { show "$T/$w.recv.err"; fail "$w recv: waitdue failed"; }
	check "$w recv" "$T/$w.recv.out"
done
for w in poll epoll; do
	RLT_SEND="2KiB/s burst=1KiB" throttled "$ITEST_BIN/waitdue" -w "$w" -d send -t 20 -s 1.5 \
		>"$T/$w.send.out" 2>"$T/$w.send.err" || { show "$T/$w.send.err"; fail "$w send: waitdue failed"; }
	check "$w send" "$T/$w.send.out"
done
