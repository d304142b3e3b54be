#!/bin/bash
# Every algorithm end to end on message units: a UDP sender sends 200 B datagrams as fast as it is
# let for 2.5 s under RLT_SEND="100msg/s algo=X" (default burst). Counts within bounds per algo:
#   token: 100 at once then 100/s (~350); leaky: evenly spaced, no burst (~251);
#   fixed-window / sliding-window / sliding-log: 100 per window (250..400).
# And the shape in the first 950 ms: token passes its burst at once; leaky never passes a burst;
# sliding-log never passes more than 100 in any second.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink blast
D=2.5
for a in token leaky fixed-window sliding-window sliding-log; do
	SINK_ARGS="-u -i 1600 -e 950" RLT_SEND="100msg/s algo=$a" do_send "$a" -u -d 200 -D $D -m sendto
	got=$(kv msgs "$S_OUT")
	assert_eq "$a: datagrams received = sent" "$(kv msgs "$B_OUT")" "$got"
	early=$(kv early_msgs "$S_OUT")
	info "$a: $got datagrams in $D s, $early in the first 950 ms"
	case $a in
	token)
		assert_range "$a: count" 175 455 "$got"
		assert_ge "$a: in the first 950 ms (burst of 100 + pacing)" 100 "$early" ;;
	leaky)
		assert_range "$a: count" 175 330 "$got"
		assert_le "$a: in the first 950 ms (no burst: ~95)" 125 "$early" ;;
	sliding-log)
		assert_range "$a: count" 175 330 "$got"
		assert_le "$a: in the first 950 ms (exact: <= 100 per second)" 100 "$early" ;;
	*)
		assert_range "$a: count" 175 440 "$got" ;;
	esac
done
