#!/bin/bash
# A blocking receive that waits for data holds no part of the budget: a process with 100
# threads blocked in read() on idle connections (thread-per-connection servers and clients)
# downloads on another connection at the full rate of RLT_RECV. Before, each idle read held a
# piece (10 ms of the rate) while it waited: 100 of them held a whole second of the budget and
# the busy download went at a third less. The receive is charged once its bytes are there,
# when every rule that applies admits any charge (token buckets that delay, no max-wait): one
# decision (src/pacing.c, RLT_PACE_AFTER) for both fronts, so the same test runs under the
# preload and under --seccomp (where a parked receive held its piece until issue 10).
. "$(dirname "$0")/lib.sh"
need_lib
need_bin acceptor source pull
n=$((2 * 1048576 + 65536))
for front in preload seccomp; do
	start_srv "idle_$front" acceptor -H -D 20 -T 30
	iport=$SRV_PORT
	SRC_ARGS="-n $n" UNDER_SECCOMP=$([ $front = seccomp ] && echo 1) RLT_RECV="1MiB/s burst=64KiB" \
		do_recv "idle100_$front" -b 65536 -I 100 -J "$iport"
	# 2 MiB after the 64 KiB burst at 1 MiB/s: 2 s, from the first read (the wait for the
	# first byte is counted: that is where the idle readers' pieces used to go)
	MIN_SPAN_S=1.5 assert_rate "$front: download beside 100 idle blocked readers" $((n - 65536)) \
		"$(kv total_ns "$P_OUT")" 1048576 0.85 1.1
	assert_cpu "$front: receiver" "$(kv cpu_ns "$P_OUT")" "$(kv total_ns "$P_OUT")" 0.3
done
