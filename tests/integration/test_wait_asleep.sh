#!/bin/bash
# A thread asleep in epoll_wait from before the first time a budget is short (epollwake: an
# edge-triggered registration of a throttled socket, one thread waiting on it, another reading
# until EAGAIN). Under --seccomp the waits trap only from the first shortage on
# (docs/design/readiness.md): that first wait is not ours, and the event the budget holds back
# is taken out of its registration; the thread must be woken all the same (its wait returns
# EINTR once, and the next one is ours), or it sleeps for good and the reader stalls. At the
# rate, no stall, no spin; a wait with a timeout returns by it.
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
need_lib
need_bin epollwake
for t in -1 100; do
	RLT_RECV="2KiB/s burst=1KiB" throttled "$ITEST_BIN/epollwake" -t "$t" -s 1.5 \
		>"$T/$t.out" 2>"$T/$t.err" || { show "$T/$t.err"; fail "epollwake -t $t failed"; }
	out=$T/$t.out
	info "timeout $t: $(cat "$out")"
	[ -n "$(kv bytes "$out")" ] || fail "timeout $t: no figures"
	assert_eq "timeout $t: stalls (1 s without a wakeup)" 0 "$(kv stalls "$out")"
	el=$(kv elapsed_ns "$out")
	MIN_SPAN_S=1 assert_rate "timeout $t" "$(( $(kv bytes "$out") - 1024 ))" "$el" 2048 0.7 1.3
	assert_cpu "timeout $t" "$(kv cpu_ns "$out")" "$el" 0.2
	[ "$t" -ge 0 ] && assert_le "timeout $t: latest wait past its timeout (ns)" 250000000 \
		"$(kv over_max_ns "$out")"
done
exit 0
