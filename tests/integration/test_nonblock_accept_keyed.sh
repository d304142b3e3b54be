#!/bin/bash
# A non-blocking accept never sleeps under a rule that depends on who connects (issue 17;
# rlthrottle(7) THROTTLED CALLS): with RLT_ACCEPT="4/s burst=1 key=peer", a crowd of 12
# connections from one client waits in the accept queue of ours and is handed over at the
# client's rate, while an event loop (epoll, poll and select) keeps turning: no accept() call
# takes over 100 ms (the old build slept 250 ms in each), the ping of a served connection is
# answered within 150 ms, and a client with another key (127.0.0.2) is accepted at once rather
# than behind the crowd. Each connection of the crowd sent its request at once, before it was
# accepted: it is answered, and only once handed over.
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3

# kind, crowd size: epoll with 12, poll and select with 4
run() {
	local kind=$1 n=$2
	rm -f "$T/port"
	RLT_ACCEPT="4/s burst=1 key=peer" bg server throttled python3 "$ITEST_DIR/accept_loop.py" "$T/port" $((n + 2)) "$kind"
	local spid=$LAST_PID
	wait_file "$T/port" 10
	python3 "$ITEST_DIR/accept_crowd.py" "$(cat "$T/port")" "$n" >"$T/crowd.out" 2>"$T/crowd.err" ||
		{ show "$T/crowd.err" "$T/server.err"; fail "$kind: the clients failed"; }
	wait_pid "$spid" 20 || { show "$T/server.err"; fail "$kind: the server did not end"; }
	local out
	out=$(cat "$T/server.out")
	info "$kind server: $out; clients: $(cat "$T/crowd.out")"
	assert_eq "$kind: connections accepted" $((n + 2)) "$(kv accepted "$out")"
	assert_eq "$kind: crowd served" "$n" "$(kv served "$T/crowd.out")"
	# the ping connection went at once, at first_ms; the crowd's first 250 ms after it, at
	# 4/s; the last of the crowd n intervals after the ping
	local span=$(($(kv last_ms "$out") - $(kv first_ms "$out")))
	assert_range "$kind: span of the accepts (ms)" $((n * 250 - 250)) $((n * 250 + 1500)) "$span"
	assert_le "$kind: longest accept() call (ms)" 100 "$(kv max_call_ms "$out")"
	assert_le "$kind: longest ping round trip while the crowd waits (ms)" 150 "$(kv worst_ping_ms "$T/crowd.out")"
	# another key goes at once: 0.5 s after the crowd came, long before the crowd is through
	assert_range "$kind: the other client answered (ms after the crowd)" 400 1000 "$(kv other_ms "$T/crowd.out")"
	assert_le "$kind: server CPU (ms)" 1500 "$(kv cpu_ms "$out")"
}
run epoll 12
run poll 4
run select 4
exit 0
