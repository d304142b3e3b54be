#!/bin/bash
# Three processes under one redis://127.0.0.1:PORT/NAME budget of 30/s (a redis-server this test
# starts): together about 30/s, counted by the server; a few round trips per lease, not per call.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin acceptor conn
need_cmd redis-server redis-cli
rport=$(free_port)
bg redis redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --daemonize no
wait_port "$rport"
start_srv acc acceptor -D 30 -T 40 -v
apid=$LAST_PID
rule="30/s burst=5 scope=redis://127.0.0.1:$rport/itest-$$"
t0=$(now_ns)
pids=""
for i in 1 2 3; do
	RLT_CONNECT="$rule" bg "c$i" throttled "$ITEST_BIN/conn" -p "$SRV_PORT" -D 3 -t 2
	pids="$pids $LAST_PID"
done
for p in $pids; do wait_pid "$p" 20 || fail "a client did not finish"; done
t1=$(now_ns)
ok=0
for i in 1 2 3; do info "c$i: $(cat "$T/c$i.out")"; ok=$((ok + $(kv ok "$T/c$i.out"))); grep -q . "$T/c$i.err" && show "$T/c$i.err"; done
info "admitted $ok in all"
MIN_SPAN_S=2 assert_rate "3 processes under one redis budget" $((ok - 5)) $((t1 - t0)) 30 0.7 1.3
redis-cli -p "$rport" info commandstats | grep -E 'evalsha|script' | sed 's/^/info: redis: /'
calls=$(redis-cli -p "$rport" info commandstats | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p' | tr -d '\r')
# 30/s is under one unit per 10 ms: a lease is one unit here, so about one per call (plus
# each process's give-back at exit)
assert_le "EVALSHA calls" $((ok + 20)) "$calls"
