#!/bin/bash
# UDP receive under RLT_RECV=100msg/s (burst 100): an unthrottled sender puts 250 datagrams in
# the receiver's buffer at once; the receiver gets them at ~100/s, whole, with recv, recvfrom,
# recvmsg and recvmmsg (each datagram counts as one message).
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin pull blast
for m in recvfrom recvmsg read recvmmsg; do
	rm -f "$T/p.port"
	RLT_RECV="100msg/s" bg "pull_$m" throttled "$ITEST_BIN/pull" -u -P "$T/p.port" -c 250 -i 3000 -m "$m" -b 8192
	ppid=$LAST_PID
	wait_file "$T/p.port"
	"$ITEST_BIN/blast" -u -p "$(cat "$T/p.port")" -d 1200 -c 250 -m sendto >"$T/blast_$m.out" || fail "blast failed"
	wait_pid "$ppid" 20 || fail "$m: receiver did not finish"
	out=$T/pull_$m.out
	info "$m: $(cat "$out")"
	assert_eq "$m: datagrams" 250 "$(kv msgs "$out")"
	assert_eq "$m: sizes (min)" 1200 "$(kv minsz "$out")"
	assert_eq "$m: sizes (max)" 1200 "$(kv maxsz "$out")"
	assert_eq "$m: checksum" "$(kv fnv "$T/blast_$m.out")" "$(kv fnv "$out")"
	MIN_SPAN_S=1 assert_rate "$m datagram rate" 150 "$(kv elapsed_ns "$out")" 100 0.7 1.3
done
