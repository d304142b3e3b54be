#!/bin/bash
# RLT_CONNECT with 4 threads, blocking and non-blocking (SOCK_NONBLOCK + poll) connects, and IPv6:
# 40/s with burst 1 over 2.5 s: about 100 connects.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin acceptor conn
start_srv acc acceptor -D 60 -T 90
for flags in "" "-N"; do
	RLT_CONNECT="40/s burst=1" throttled "$ITEST_BIN/conn" -p "$SRV_PORT" -t 4 -D 2.5 $flags >"$T/c.out" 2>"$T/c.err" ||
		{ show "$T/c.err"; fail "conn failed"; }
	info "conn $flags: $(cat "$T/c.out")"
	assert_eq "failed connects ($flags)" 0 "$(kv fail "$T/c.out")"
	MIN_SPAN_S=2 assert_rate "connect rate $flags" "$(kv ok "$T/c.out")" "$(kv elapsed_ns "$T/c.out")" 40 0.7 1.3
done
# A connect to a non-matching kind of socket (unix) is not limited by RLT_CONNECT (family=inet).
rm -f "$T/u.sock"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1000); import time; time.sleep(30)' "$T/u.sock" &
BG_PIDS="$BG_PIDS $!"
wait_file "$T/u.sock"
t0=$(now_ns)
RLT_CONNECT="1/h burst=1 action=reject" throttled python3 -c '
import socket, sys
for i in range(20):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.close()
print("ok")' "$T/u.sock" >"$T/u.out" 2>"$T/u.err" || { show "$T/u.err"; fail "unix connects were refused under an inet rule"; }
assert_eq "20 unix connects under RLT_CONNECT=1/h" ok "$(cat "$T/u.out")"
