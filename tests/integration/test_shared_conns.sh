#!/bin/bash
# RLT_CONNS in a shared scope stays right when a process holding connections is SIGKILLed and
# when connections are inherited across fork:
#  - process A opens 3 connections under "3 scope=shared:NAME" and is killed holding them; B
#    is refused while A lives, then gets its connections once A is gone (its slots came back);
#  - a forking server (python's ForkingTCPServer: the parent accepts, the child serves and
#    closes, the parent closes its copy) under "2 scope=shared:NAME" serves 6 clients one after another: every
#    connection is held and closed in two processes (a child counts what it inherits as its
#    own), the count must not fall below 0 (it used to wrap round and refuse everything), and
#    once the clients are done both slots are free again.
# fronts: preload seccomp
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd socat python3
need_bin acceptor conn
name=itest-conns-$$
trap 'rm -f /dev/shm/rlthrottle.$name /dev/shm/rlthrottle.$name-fork; cleanup' EXIT
start_srv acc acceptor -H -D 20 -T 30
rule="3 scope=shared:$name"

RLT_CONNS="$rule" bg a throttled "$ITEST_BIN/conn" -p "$SRV_PORT" -S "open open open sleep:20000"
apid=$LAST_PID
for i in $(seq 1 100); do [ "$(grep -c -- '-> OK' "$T/a.out" 2>/dev/null)" = 3 ] && break; sleep 0.05; done
assert_eq "A's connections" 3 "$(grep -c -- '-> OK' "$T/a.out")"
RLT_CONNS="$rule" throttled "$ITEST_BIN/conn" -p "$SRV_PORT" -S "open" >"$T/b1.out" 2>&1 || fail "conn B failed"
assert_eq "B while A holds 3" 1 "$(grep -c -- '-> ECONNREFUSED' "$T/b1.out")"
kill -KILL "$(prog_pid "$apid")" # A itself (under --seccomp, not its launcher)
wait_pid "$apid" 5
sleep 0.2 # slots of the dead are looked for at most every 100 ms
RLT_CONNS="$rule" throttled "$ITEST_BIN/conn" -p "$SRV_PORT" -S "open open open" >"$T/b2.out" 2>&1 || fail "conn B failed"
show "$T/b2.out"
assert_eq "B after A was killed: connections" 3 "$(grep -c -- '-> OK' "$T/b2.out")"

port=$(free_port)
cat >"$T/fsrv.py" <<'PY'
import socketserver, sys
class H(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.sendall(b"hi\n")
# the child serves and closes the connection itself (shutdown_request), then the parent
# closes its copy: two closes of one connection, in two processes
class S(socketserver.ForkingTCPServer):
    allow_reuse_address = True
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
RLT_CONNS="2 scope=shared:$name-fork" bg fsrv throttled python3 "$T/fsrv.py" "$port"
wait_port "$port"
ok=0
for i in 1 2 3 4 5 6; do
	got=$(socat -T 2 - "TCP:127.0.0.1:$port" </dev/null 2>/dev/null)
	[ "$got" = hi ] && ok=$((ok + 1))
	sleep 0.1
done
assert_eq "clients served one after another by a forking server under 2 shared slots" 6 "$ok"
seg=$("$(dirname "$RLT_LIB")/rlthrottle" shm list 2>/dev/null | grep -- "$name-fork" | head -1)
info "segment: $seg"
# The clients are done (their processes ended, the slots they held are taken back when needed):
# a new process gets both slots.
RLT_CONNS="2 scope=shared:$name-fork" throttled "$ITEST_BIN/conn" -p "$SRV_PORT" -S "open open" >"$T/p.out" 2>&1 || fail "conn failed"
show "$T/p.out"
assert_eq "both slots free once every client is done" 2 "$(grep -c -- '-> OK' "$T/p.out")"
