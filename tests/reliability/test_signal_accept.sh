#!/bin/bash
# Issue 9: a python3 server in a blocking accept() throttled by RLT_ACCEPT while SIGALRM
# arrives every 3 ms (its handler writes to /dev/null). A connection accepted for a call
# that then ends for the signal must go to the restarted accept, not be dropped:
# all 30 clients are served, each once. Both fronts.
# parallel-safe
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/signals.sh"
PY=$(dirname "$0")/sigaccept.py

for front in seccomp preload; do
	port=$(free_port)
	RLT_ACCEPT="20/s burst=1" run_front $front python3 "$PY" "$port" 30 >"$T/$front.out" 2>"$T/$front.err" &
	spid=$!
	BG_PIDS="$BG_PIDS $spid"
	wait_port "$port"
	python3 -c '
import socket, sys, time
for i in range(30):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.sendall(b"client %d\n" % i)
    s.close()' "$port" 2>"$T/client-$front.err" || { show "$T/client-$front.err"; fail "$front: a client failed"; }
	wait_pid $spid 15 || { show "$T/$front.out" "$T/$front.err"; fail "$front: the server did not get all 30 clients"; }
	show "$T/$front.out" "$T/$front.err"
	assert_eq "$front: lines" 30 "$(kv lines "$T/$front.out")"
	assert_eq "$front: distinct clients" 30 "$(kv distinct "$T/$front.out")"
	if [ $front = seccomp ]; then assert_ge "$front: handlers run" 50 "$(kv handlers "$T/$front.out")"; fi
done
