#!/bin/bash
# RLT_NET reaches preadv2 and pwritev2 on a socket (rlthrottle(7) NETWORK CONDITIONS): with
# offset -1 they are a readv and a writev (RWF_NOWAIT: a non-blocking receive and send), so
# latency, slice, hang, reset and loss apply to them as to readv and writev. The old build
# handed them to the kernel whenever no rate rule applied: every condition was escaped, on
# both fronts (0 ms under latency=300ms, 10 bytes in one piece under slice=2, the data moved
# under hang, past reset after=4B and through loss=100%). netcalls.c has the other calls (the
# audit's matrix); this test keeps the ones that escaped.
#
# A loss matched by the source (peer=, port=) on a datagram socket without a peer: the old build
# knew a datagram's source only when the call asked for it (recvfrom with an address, recvmsg
# with a name), so recv, read, readv and a recvmsg without a name dropped nothing under
# "loss=100% port!=53"; now each such receive learns its datagram's source. A latency with
# peer= or port= on such a socket applied to no datagram (0 ms, recvfrom too): now each
# datagram is matched by its source, which the peek for its arrival learns (poll reports it
# then too).
# fronts: preload seccomp
# parallel-safe: bound, no rate: a delay's lower bound, and an upper bound 10 times it
. "$(dirname "$0")/lib.sh"
need_lib
need_bin netcalls
# run CALL COND RLT_NET: the helper's line, in $out
run() {
	out=$(RLT_NET="$3" throttled timeout 20 "$ITEST_BIN/netcalls" "$1" "$2" 2>&1) || fail "$1 $2: $out"
	info "$out"
}
# the sender (peer 127.0.0.1) or the receiver (peer 127.0.0.2) alone gets the condition
S=peer=127.0.0.1 R=peer=127.0.0.2
for w in pwritev2 pwritev2_nowait; do
	run $w slice "slice=2 delay=50ms $S"
	if [ $w = pwritev2 ]; then
		# 10 bytes in 5 pieces, 4 delays between them
		assert_eq "$w slice: the other end got" 10 "$(kv got "$out")"
		assert_range "$w slice: took (ms)" 190 2000 "$(kv ms "$out")"
	else # a non-blocking send moves one piece
		assert_eq "$w slice: moved, and the other end got" "2 2" "$(kv ret "$out") $(kv got "$out")"
	fi
	run $w hang "hang $S"
	assert_eq "$w hang: the call" "-1 EAGAIN" "$(kv ret "$out") $(kv err "$out")"
	assert_eq "$w hang: the other end got" -1 "$(kv got "$out")"
	[ $w = pwritev2 ] && assert_range "$w hang: waited its SO_SNDTIMEO (ms)" 280 3000 "$(kv ms "$out")"
	run $w reset "reset after=4B $S"
	assert_le "$w reset: moved" 4 "$(kv moved "$out")"
	assert_eq "$w reset: the last call" ECONNRESET "$(kv err "$out")"
	run $w loss "loss=100% $S"
	assert_eq "$w loss: the send said" 10 "$(kv ret "$out")"
	assert_eq "$w loss: the other end got" -1 "$(kv got "$out")"
done
# sendfile keeps its conditions behind the fast path for sockets none applies to
run sendfile slice "slice=2 delay=50ms $S"
assert_eq "sendfile slice: the other end got" 10 "$(kv got "$out")"
assert_range "sendfile slice: took (ms)" 190 2000 "$(kv ms "$out")"
run sendfile slice "slice=2 delay=50ms peer=127.0.0.9"
assert_le "sendfile, a condition for another peer: took (ms)" 150 "$(kv ms "$out")"
for r in preadv2 preadv2_nowait; do
	run $r latency "latency=300ms $R"
	if [ $r = preadv2 ]; then
		assert_eq "$r latency: got" 10 "$(kv ret "$out")"
		assert_range "$r latency: returned after the send (ms)" 280 3000 "$(kv ms "$out")"
		run $r ulatency "latency=300ms $R"
		assert_eq "$r latency (UDP): got" 10 "$(kv ret "$out")"
		assert_range "$r latency (UDP): returned after the send (ms)" 280 3000 "$(kv ms "$out")"
	else
		assert_eq "$r latency: before it is due" "-1 EAGAIN" "$(kv ret "$out") $(kv err "$out")"
	fi
	run $r slice "slice=2 $R"
	assert_eq "$r slice: one receive got" 2 "$(kv ret "$out")"
	run $r hang "hang $R"
	assert_eq "$r hang: the call" "-1 EAGAIN" "$(kv ret "$out") $(kv err "$out")"
	[ $r = preadv2 ] && assert_range "$r hang: waited its SO_RCVTIMEO (ms)" 280 3000 "$(kv ms "$out")"
	run $r reset "reset after=4B $R"
	assert_le "$r reset: moved" 4 "$(kv moved "$out")"
	assert_eq "$r reset: the last call" ECONNRESET "$(kv err "$out")"
	run $r loss "loss=100% $R"
	assert_eq "$r loss: the datagram dropped" "-1 EAGAIN" "$(kv ret "$out") $(kv err "$out")"
done
for r in recv read readv recvmsg recvmmsg; do
	for m in peer=127.0.0.2 "port!=53"; do
		run $r uloss "loss=100% $m"
		assert_eq "$r loss $m (unconnected): the datagram dropped" "-1 EAGAIN" "$(kv ret "$out") $(kv err "$out")"
	done
	# a source the matcher does not name: delivered
	run $r uloss "loss=100% peer=127.0.0.9"
	assert_eq "$r loss peer=127.0.0.9 (unconnected): delivered" 10 "$(kv ret "$out")"
done
for r in recv recvfrom read poll; do
	for m in peer=127.0.0.2 "port!=53"; do
		run $r ulatency_open "latency=300ms $m"
		assert_range "$r latency $m (unconnected): returned after the send (ms)" 280 3000 "$(kv ms "$out")"
	done
	run $r ulatency_open "latency=300ms peer=127.0.0.9"
	assert_le "$r latency peer=127.0.0.9 (unconnected): not delayed (ms)" 250 "$(kv ms "$out")"
done
exit 0
