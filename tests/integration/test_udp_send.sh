#!/bin/bash
# UDP datagrams: RLT_SEND=100msg/s (default burst 100): 250 datagrams of 1200 B take ~1.5 s, every
# datagram arrives whole (sizes preserved, never split), in order (checksum), with sendto and
# sendmmsg; and a byte rule with 3000 B datagrams: charged whole, never split.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink blast
for m in sendto sendmmsg send; do
	SINK_ARGS="-u -c 250 -i 3000" RLT_SEND="100msg/s" do_send "udp_$m" -u -d 1200 -c 250 -m "$m"
	assert_eq "$m: datagrams received" 250 "$(kv msgs "$S_OUT")"
	assert_eq "$m: smallest datagram" 1200 "$(kv minsz "$S_OUT")"
	assert_eq "$m: largest datagram" 1200 "$(kv maxsz "$S_OUT")"
	MIN_SPAN_S=1 assert_rate "$m datagram rate" 150 "$(kv elapsed_ns "$S_OUT")" 100 0.7 1.3
done
# 200 datagrams x 3000 B = 600 kB at 300 kB/s, burst 30 kB: ~1.9 s
SINK_ARGS="-u -c 200 -i 3000" RLT_SEND="300kB/s burst=30kB" do_send udp_bytes -u -d 3000 -c 200 -m sendto
assert_eq "byte rule: datagrams" 200 "$(kv msgs "$S_OUT")"
assert_eq "byte rule: smallest datagram" 3000 "$(kv minsz "$S_OUT")"
assert_eq "byte rule: largest datagram" 3000 "$(kv maxsz "$S_OUT")"
MIN_SPAN_S=1.2 assert_rate "byte rule rate" $((600000 - 30000)) "$(kv elapsed_ns "$S_OUT")" 300000 0.7 1.3
