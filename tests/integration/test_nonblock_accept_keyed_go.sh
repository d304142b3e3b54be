#!/bin/bash
# A Go server (static; its accept loop on the netpoller: a non-blocking listener in an
# edge-triggered epoll) under RLT_ACCEPT="4/s burst=1 key=peer" (issue 17): a crowd of 8
# connections from one client is handed over at the client's rate from the accept queue of
# ours, and a client with another key (127.0.0.2) is accepted at once, not behind the crowd
# (the old build slept in the accept, so the other client waited for the whole crowd). Each
# connection of the crowd sent its request before it was accepted: Go reads right after the
# accept, and is answered only once the connection is handed over.
# fronts: seccomp (why: a static Go binary: the preload cannot reach it)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
need_gonb
n=8
RLT_ACCEPT="4/s burst=1 key=peer" bg server "$(dirname "$RLT_LIB")/rlthrottle" --seccomp -- \
	"$GONB" serve "$T/port" $((n + 2))
spid=$LAST_PID
wait_file "$T/port" 10
python3 "$ITEST_DIR/accept_crowd.py" "$(cat "$T/port")" "$n" >"$T/crowd.out" 2>"$T/crowd.err" ||
	{ show "$T/crowd.err" "$T/server.err"; fail "the clients failed"; }
wait_pid "$spid" 25 || { show "$T/server.err"; fail "the server did not end"; }
out=$(cat "$T/server.out")
info "server: $out; clients: $(cat "$T/crowd.out")"
assert_eq "connections accepted" $((n + 2)) "$(kv accepted "$out")"
assert_eq "crowd served" "$n" "$(kv served "$T/crowd.out")"
span=$(($(kv last_ms "$out") - $(kv first_ms "$out")))
# the ping at once, the crowd 8 intervals of 250 ms after it
assert_range "span of the accepts (ms)" $((n * 250 - 250)) $((n * 250 + 1500)) "$span"
assert_range "the other client answered (ms after the crowd)" 400 1000 "$(kv other_ms "$T/crowd.out")"
assert_le "longest ping round trip while the crowd waits (ms)" 150 "$(kv worst_ping_ms "$T/crowd.out")"
assert_le "server CPU (ms)" 1500 "$(kv cpu_ms "$out")"
exit 0
