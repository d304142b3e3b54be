#!/bin/bash
# scope=connection gives each socket its own budget: 2 sockets sending at once move ~2x the rate
# in total; the default scope=process shares one budget: ~1x in total.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink blast
n=1572864
SINK_ARGS="-n 2" RLT_SEND="1MiB/s burst=128KiB scope=connection" do_send conn -k 2 -n $n
show "$S_OUT"
MIN_SPAN_S=0.8 assert_rate "2 sockets, scope=connection (target 2 x 1 MiB/s)" $((2 * (n - 131072))) "$(kv elapsed_ns "$S_OUT")" 2097152 0.7 1.3
for i in 0 1; do
	assert_eq "connection $i bytes" $n "$(grep "^conn=$i " "$S_OUT" | sed 's/.*bytes=\([0-9]*\).*/\1/')"
	assert_eq "connection $i checksum" "$(kv fnv "$B_OUT")" "$(grep "^conn=$i " "$S_OUT" | sed 's/.*fnv=\([0-9a-f]*\).*/\1/')"
done
SINK_ARGS="-n 2" RLT_SEND="1MiB/s burst=128KiB" do_send proc -k 2 -n $n
MIN_SPAN_S=2 assert_rate "2 sockets, scope=process (target 1 MiB/s in all)" $((2 * n - 131072)) "$(kv elapsed_ns "$S_OUT")" 1048576 0.7 1.3
