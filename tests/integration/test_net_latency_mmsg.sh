#!/bin/bash
# RLT_NET's latency reaches recvmmsg (rlthrottle(7) NETWORK CONDITIONS): what a datagram socket
# and a TCP connection receive through it comes DUR later, as through recv. The old build's
# recvmmsg read the kernel at once (0 ms under latency=300ms), on both fronts.
# fronts: preload seccomp
# parallel-safe: bound, no rate: a delay's lower bound, and an upper bound 10 times it
. "$(dirname "$0")/lib.sh"
need_lib
need_bin udp_mmsg
for kind in udp tcp; do
	out=$(RLT_NET="latency=300ms" throttled "$ITEST_BIN/udp_mmsg" late $kind) || fail "$kind: $out"
	info "$kind: $out"
	# a datagram each; the stream was sent in one piece
	[ $kind = udp ] && assert_eq "$kind: messages" 2 "$(kv n "$out")"
	assert_eq "$kind: bytes" 10 "$(kv bytes "$out")"
	assert_range "$kind: recvmmsg returned after the sends (ms)" 280 3000 "$(kv after_ms "$out")"
done
exit 0
