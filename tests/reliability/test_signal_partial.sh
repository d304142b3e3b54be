#!/bin/bash
# A signal handler that runs during a throttled blocking call that already moved data ends the
# call with the count moved, as the kernel's own call would (SA_RESTART or not). Before: the
# preload finished the whole call first: python's sendall of 4 MB at 1 MiB/s, SIGALRM raising at
# 0.5 s, raised 3.3 s late (0.0 s under --seccomp); a C send of 2 MB returned 2 MB 1.6 s after
# its SA_RESTART handler. Now: within one piece's time, on both fronts, and the peer got exactly
# the prefix the program was told went (sha256). A call that moved nothing yet goes on waiting
# (rlthrottle(7) BEHAVIOUR: never EINTR of ours).
# parallel-safe: bound, no rate (a signal ends the call within 0.3-0.4 s; 0-4 ms on a quiet machine; bytes exact)
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/signals.sh"
need_bin sigpartial
PY=$(dirname "$0")/sigpartial.py

# is_prefix WHAT FULL PART: PART is the first bytes of FULL, and neither empty nor all of it.
is_prefix() {
	local n a b
	n=$(stat -c %s "$3")
	assert_range "$1: bytes the peer got" 1 $(($(stat -c %s "$2") - 1)) "$n"
	a=$(head -c "$n" "$2" | sha256sum | cut -d' ' -f1)
	b=$(sha256sum <"$3" | cut -d' ' -f1)
	[ "$a" = "$b" ] || fail "$1: the $n bytes the peer got are not the first $n sent"
	info "$1: the peer got the first $n bytes exactly (sha256 $b)"
}

random_file "$T/in4" 4194304
random_file "$T/in2" 2097152
for front in preload seccomp; do
	for mode in sendall send; do
		label="py-$front-$mode"
		sink_to "sink-$label" "$T/out-$label"
		RLT_SEND="1MiB/s burst=64KiB" front_ok -p "$label" $front python3 "$PY" "$PEER_PORT" \
			"$T/in4" $mode
		assert_eq "$label: handler ran" 1 "$(kv fired "$T/$label.out")"
		assert_le "$label: call ended after the signal (s)" 0.4 "$(kv late_s "$T/$label.out")"
		is_prefix "$label" "$T/in4" "$T/out-$label"
		[ $mode = send ] && assert_eq "$label: sent = received" \
			"$(stat -c %s "$T/out-$label")" "$(kv sent "$T/$label.out")"
	done
	for mode in send sendfile recv; do
		label="c-$front-$mode"
		if [ $mode = recv ]; then
			serve_file "src-$label" "$T/in2"
			RLT_RECV="1MiB/s burst=64KiB" run_front $front "$ITEST_BIN/sigpartial" recv \
				"$PEER_PORT" "$T/out-$label" 2097152 >"$T/$label.out" 2>"$T/$label.err" ||
				fail "$label: sigpartial exited $?"
		else
			sink_to "sink-$label" "$T/out-$label"
			RLT_SEND="1MiB/s burst=64KiB" run_front $front "$ITEST_BIN/sigpartial" $mode \
				"$PEER_PORT" "$T/in2" >"$T/$label.out" 2>"$T/$label.err" ||
				fail "$label: sigpartial exited $?"
			wait_pid "$PEER_PID" 10 || fail "$label: the peer did not see the end"
		fi
		show "$T/$label.out" "$T/$label.err"
		assert_eq "$label: handler ran" 1 "$(kv signals "$T/$label.out")"
		assert_le "$label: call ended after the signal (ms)" 300 "$(kv late_ms "$T/$label.out")"
		is_prefix "$label" "$T/in2" "$T/out-$label"
		assert_eq "$label: returned = moved" "$(stat -c %s "$T/out-$label")" \
			"$(kv ret "$T/$label.out")"
	done
done

# Nothing moved yet at the signal: the wait goes on and the call moves all of it. 256 B of burst
# spent first, then 512 B at 500 B/s: two pieces of 256 B, the first ~0.5 s away.
head -c 768 "$T/in2" >"$T/in768"
for front in preload seccomp; do
	label="c-$front-first"
	sink_to "sink-$label" "$T/out-$label"
	RLT_SEND="500B/s burst=256B" front_ok -p "$label" $front "$ITEST_BIN/sigpartial" first \
		"$PEER_PORT" "$T/in768"
	assert_eq "$label: handler ran" 1 "$(kv signals "$T/$label.out")"
	assert_eq "$label: returned (all of it)" 512 "$(kv ret "$T/$label.out")"
	same_bytes "$label" "$T/in768" "$T/out-$label"
done
