#!/bin/bash
# A connect() waiting for its slot under RLT_CONNECT=1/20s (the second attempt: 20 s away) is set
# to 100/s: it goes within 2 s of the set (a loaded machine: some 10 ms on a quiet one), not 20 s later. Under UNDER_SECCOMP=1 the program
# runs under --seccomp: the handler's wait sees the set, as the preload's does.
# fronts: preload seccomp
# parallel-safe: bound, no rate (the connect goes within 2 s of the set; 10 ms on a quiet machine)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
RLT=$(dirname "$RLT_LIB")/rlthrottle
need_bin sink
# the server: takes both connections (the client sends nothing)
start_srv srv sink -n 2
port=$SRV_PORT
RLT_CONNECT="1/20s" bg cli throttled python3 -c '
import os, socket, sys, time
print("pid", os.getpid(), flush=True)
a = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
print("first", time.time_ns(), flush=True)
b = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
print("second", time.time_ns(), flush=True)' "$port"
cli=$LAST_PID
for _ in $(seq 200); do grep -q first "$T/cli.out" && break; sleep 0.05; done
grep -q first "$T/cli.out" || { show "$T/cli.err"; fail "the first connect did not happen"; }
sleep 0.5
t1=$(now_ns)
"$RLT" set "$(kv pid "$(sed 's/ /=/' "$T/cli.out")")" RLT_CONNECT "100/s" >"$T/set.out" 2>&1 || { show "$T/set.out"; fail "set failed"; }
info "set: $(cat "$T/set.out")"
wait_pid "$cli" 25 || fail "the client did not finish"
t2=$(kv second "$(sed 's/ /=/' "$T/cli.out")")
assert_le "ms from the set to the second connect" 2000 $(((t2 - t1) / 1000000))
