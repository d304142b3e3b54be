#!/bin/bash
# A blocking receive that waits for data holds no part of the budget: a process with 100
# threads blocked in read() on idle connections (thread-per-connection servers and clients)
# downloads on another connection at the full rate of RLT_RECV. Before, each idle read held a
# piece (10 ms of the rate) while it waited: 100 of them held a whole second of the budget and
# the busy download went at a third less. The receive is charged once its bytes are there,
# when every rule that applies admits any charge (token buckets that delay, no max-wait): one
# decision (src/pacing.c, RLT_PACE_AFTER) for both fronts (under --seccomp a parked receive held
# its piece until issue 10).
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
need_lib
need_bin acceptor source pull
start_srv idle acceptor -H -D 20 -T 30
iport=$SRV_PORT
n=$((2 * 1048576 + 65536))
SRC_ARGS="-n $n"
RLT_RECV="1MiB/s burst=64KiB" do_recv idle100 -b 65536 -I 100 -J "$iport"
# 2 MiB after the 64 KiB burst at 1 MiB/s: 2 s, from the first read (the wait for the first
# byte is counted: that is where the idle readers' pieces used to go)
MIN_SPAN_S=1.5 assert_rate "download beside 100 idle blocked readers" $((n - 65536)) "$(kv total_ns "$P_OUT")" 1048576 0.85 1.1
assert_cpu "receiver" "$(kv cpu_ns "$P_OUT")" "$(kv total_ns "$P_OUT")" 0.3
