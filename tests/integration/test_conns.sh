#!/bin/bash
# RLT_CONNS=3: a 4th connection while 3 are open is refused (ECONNREFUSED, the default reject);
# after one closes a new one succeeds. With action=delay the 4th waits until one closes.
# Accepted sockets count too.
# fronts: preload seccomp
# parallel-safe: bound, no rate (a delayed connect waits for a close made at 0.8 s: 0.6-2.5 s)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin acceptor conn
start_srv acc acceptor -D 60 -T 90
step() { step_status "$2" "$1"; }
RLT_CONNS=3 throttled "$ITEST_BIN/conn" -p "$SRV_PORT" -S "open open open open close open open" >"$T/c.out" 2>"$T/c.err" || fail "conn failed"
show "$T/c.out"
for i in 1 2 3; do assert_eq "open $i" OK "$(step $i "$T/c.out")"; done
assert_eq "open 4 (3 open)" ECONNREFUSED "$(step 4 "$T/c.out")"
assert_eq "open 5 (after a close)" OK "$(step 5 "$T/c.out")"
assert_eq "open 6 (3 open again)" ECONNREFUSED "$(step 6 "$T/c.out")"

RLT_CONNS="3 action=delay" throttled "$ITEST_BIN/conn" -p "$SRV_PORT" -S "open open open closeafter:800 open" >"$T/d.out" 2>"$T/d.err" || fail "conn failed"
show "$T/d.out"
assert_eq "delayed open 4" OK "$(step 4 "$T/d.out")"
took=$(sed -n '/^step open 4 /s/.*took_ms=\([0-9.]*\).*/\1/p' "$T/d.out")
assert_range "open 4 waited for the close (ms)" 600 2500 "$took"

# accepted sockets count: a server holding its accepted sockets, RLT_CONNS=2, 4 clients.
SRV_THROTTLED=1 RLT_CONNS=2 start_srv hold acceptor -H -v -D 1.5
apid=$LAST_PID
"$ITEST_BIN/conn" -p "$SRV_PORT" -n 4 >/dev/null 2>&1
wait_pid "$apid" 20 || fail "acceptor did not finish"
show "$T/hold.out"
assert_eq "accepted while holding (RLT_CONNS=2)" 2 "$(kv accepted "$T/hold.out")"
assert_ge "refused accepts" 1 "$(kv failed "$T/hold.out")"
