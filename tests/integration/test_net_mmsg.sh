#!/bin/bash
# RLT_NET reaches the batch calls (rlthrottle(7) NETWORK CONDITIONS): a recvmmsg under latency
# gets a datagram socket's and a TCP connection's data DUR later, as recv does; a sendmmsg on a
# stream under slice goes in the slice's pieces, as sendmsg does. The old build's recvmmsg read
# the kernel at once (0 ms under latency=300ms) and its sendmmsg sent whole (0 ms under
# slice=2 delay=50ms), on both fronts. Latency's p= on a datagram socket chooses each datagram
# (rlthrottle(7): "of datagrams"): the old build chose the socket, all 20 delayed or none.
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
# 6 bytes in 3 pieces and 4 in 2: three delays of 50 ms between pieces of one message
out=$(RLT_NET="slice=2 delay=50ms" throttled "$ITEST_BIN/udp_mmsg" sliced) || fail "sliced: $out"
info "sliced: $out"
assert_eq "sendmmsg: messages sent" 2 "$(kv sent "$out")"
assert_eq "sendmmsg: bytes received" 10 "$(kv bytes "$out")"
assert_range "sendmmsg in slices (ms)" 140 1500 "$(kv ms "$out")"
# 20 datagrams one at a time under latency=100ms p=50%: some delayed, some not (seed fixed)
out=$(RLT_NET="latency=100ms p=50% seed=7" throttled "$ITEST_BIN/udp_mmsg" share 20 80) || fail "share: $out"
info "share: $out"
assert_range "datagrams delayed of 20 under p=50%" 3 17 "$(kv delayed "$out")"
exit 0
