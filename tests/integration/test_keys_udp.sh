#!/bin/bash
# fronts: preload seccomp
# matrix-only: seccomp (make test keeps the keys under --seccomp in test_keys_nginx, test_keys_conns and test_keys_dryrun; the whole matrix runs in CI after it)
# Issue 11, rlthrottle(7) RULES `key` on unconnected datagram sockets: the key is each datagram's address.
# Send: one python3 socket throttled with RLT_SEND="20msg/s burst=1 key=peer" sends in turn to
# receivers on 127.0.0.2 and 127.0.0.3 (offered 40/s each): each destination gets ~20/s, on its
# own budget (one shared budget would give each 10/s). Receive: a python3 receiver throttled
# with RLT_RECV="20msg/s burst=1 key=peer", fed in turn from 127.0.0.2 and 127.0.0.3 (40/s
# each): each source is taken at ~20/s. Rates over ~2 s, +-20% (a datagram's slot is 50 ms).
# The two halves run at once (python3 starts slowly on a loaded machine).
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
IO=$ITEST_DIR/keys_io.py
N=45 # datagrams a key passes: 44 slots of 50 ms after the first, 2.2 s

# the send's receivers (not throttled), and the throttled receiver; each stops after 2N
bg rx python3 "$IO" udp-sink "$T/ports" $((2 * N)) 127.0.0.2 127.0.0.3
rx=$LAST_PID
RLT_RECV="20msg/s burst=1 key=peer" bg trx throttled python3 "$IO" udp-sink "$T/tport" $((2 * N)) 127.0.0.1
trx=$LAST_PID
wait_file "$T/ports"
wait_file "$T/tport"
read -r p2 p3 <"$T/ports"
RLT_SEND="20msg/s burst=1 key=peer" bg tx throttled python3 "$IO" udp-send "127.0.0.2:$p2" "127.0.0.3:$p3" $N 40
tx=$LAST_PID
python3 "$IO" udp-blast "$(cat "$T/tport")" 127.0.0.2 127.0.0.3 $((N + 15)) 40 >"$T/blast.out" 2>&1 ||
	{ show "$T/blast.out"; fail "the sources failed"; }
wait_pid "$tx" 10 || { show "$T/tx.err"; fail "the sender did not finish"; }
wait_pid "$rx" 10 || { show "$T/rx.out" "$T/rx.err"; fail "the send's receivers did not finish"; }
wait_pid "$trx" 10 || { show "$T/trx.out" "$T/trx.err"; fail "the throttled receiver did not finish"; }
for a in 2 3; do
	out=$(grep "addr=127.0.0.$a " "$T/rx.out")
	assert_eq "datagrams sent to 127.0.0.$a" $N "$(kv msgs "$out")"
	MIN_SPAN_S=1.5 assert_rate "send to 127.0.0.$a (msg/s)" $((N - 1)) "$(kv span_ns "$out")" 20 0.8 1.2
done
for a in 2 3; do
	out=$(grep "addr=127.0.0.$a " "$T/trx.out")
	[ -n "$out" ] || { show "$T/trx.out" "$T/trx.err"; fail "nothing from 127.0.0.$a"; }
	n=$(kv msgs "$out")
	assert_range "datagrams received from 127.0.0.$a" $((N - 5)) $((N + 5)) "$n"
	MIN_SPAN_S=1.5 assert_rate "receive from 127.0.0.$a (msg/s)" $((n - 1)) "$(kv span_ns "$out")" 20 0.8 1.2
done
