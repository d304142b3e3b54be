#!/bin/bash
# Issue 9: a blocking call the throttle delays, while SIGALRM (no SA_RESTART, the handler writes
# to /dev/null) comes every 50 or 5 ms. Before: under --seccomp the call was CONTINUEd when its
# slot came with a signal already pending, and the kernel's own connect failed with EINTR (11 of
# 12). Now: it is answered a restart and comes back paid, so 0 EINTR at 50 ms (at most 1 allowed,
# for the kernel's own connect on a loaded machine); at 5 ms at most 2 of 12, the kernel's own window (a signal between the call and our receiving it: see the design
# note in docs/DESIGN.md). Neither delayed twice nor charged twice: the rate holds. Whole
# sends after a delay likewise, bytes exact. Both fronts.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/signals.sh"
need_bin sigconnect

port=$(free_port)
bg listener python3 -c 'import socket,sys,time
l=socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(1024); time.sleep(60)' "$port"
wait_port "$port"
# the expected stream of the sends: byte k is 'a' + k % 26
python3 -c 'import sys; sys.stdout.buffer.write(bytes(97 + k % 26 for k in range(20000)))' >"$T/expect"

for front in seccomp preload; do
	for us in 50000 5000; do
		label="$front-connect-$((us / 1000))ms"
		t0=$(now_ns)
		RLT_CONNECT="5/s burst=1" run_front $front "$ITEST_BIN/sigconnect" -p "$port" -m connect \
			-n 12 -i $us >"$T/$label.out" 2>"$T/$label.err" || fail "$label: $(cat "$T/$label.err")"
		t1=$(now_ns)
		info "$label: $(cat "$T/$label.out") in $(calc "($t1 - $t0) / 1e9") s"
		# the kernel's own connect may be interrupted too, once the throttle let it go: on a
		# loaded machine a loopback handshake can leave it asleep for the signal (seen: 1 of
		# 12 at 50 ms, under the preload, with two CI runs on 2 cores)
		max=1; [ $us -lt 50000 ] && max=2
		assert_le "$label: connects failed with EINTR" $max "$(kv eintr "$T/$label.out")"
		assert_eq "$label: connects failed otherwise" 0 "$(kv other "$T/$label.out")"
		# 12 at 5/s after a burst of 1: 2.2 s; delayed or charged twice: 4.4 s
		assert_range "$label: took (s)" 1.6 3.4 "$(calc "($t1 - $t0) / 1e9")"

		label="$front-send-$((us / 1000))ms"
		sink_to "sink-$label" "$T/out-$label"
		t0=$(now_ns)
		RLT_SEND="20000B/s burst=2000B" run_front $front "$ITEST_BIN/sigconnect" -p "$PEER_PORT" \
			-m send -n 10 -b 2000 -i $us >"$T/$label.out" 2>"$T/$label.err" ||
			fail "$label: $(cat "$T/$label.err")"
		t1=$(now_ns)
		wait_pid "$PEER_PID" 10 || fail "$label: the peer did not see the end"
		info "$label: $(cat "$T/$label.out") in $(calc "($t1 - $t0) / 1e9") s"
		assert_le "$label: sends failed with EINTR" $max "$(kv eintr "$T/$label.out")"
		assert_eq "$label: sends failed otherwise or short" 0 "$(kv other "$T/$label.out")"
		n=$(kv moved "$T/$label.out")
		head -c "$n" "$T/expect" >"$T/expect-$label"
		same_bytes "$label" "$T/expect-$label" "$T/out-$label"
		# 20000 bytes at 20000/s after a burst of 2000: 0.9 s; charged twice: 1.8 s
		[ "$n" -ge 16000 ] && assert_range "$label: took (s)" 0.6 1.6 "$(calc "($t1 - $t0) / 1e9")"
	done
done
exit 0
