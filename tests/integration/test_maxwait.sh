#!/bin/bash
# max-wait: a delay longer than max-wait fails with the rule's errno, no later than about max-wait;
# a shorter delay is simply waited out.
# fronts: preload seccomp
# parallel-safe: bound, no rate (a call over max-wait fails within 0.5-0.6 s, not after the delay of 1-5 s)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink blast acceptor conn
start_srv usink sink -u -c 2 -i 3000
spid=$LAST_PID
RLT_SEND="1kB/s burst=1kB max-wait=300ms" throttled "$ITEST_BIN/blast" -u -p "$SRV_PORT" -S "1000 1000 sleep:800 1000" >"$T/u.out" 2>"$T/u.err" || fail "blast failed"
wait_pid "$spid" 10
show "$T/u.out"
f() { step_status "$T/u.out" "$1"; }
t() { step_took "$T/u.out" "$1"; }
assert_eq "datagram 1" OK "$(f 1)"
assert_eq "datagram 2 (needs 1 s > max-wait)" ENOBUFS "$(f 2)"
assert_le "datagram 2 failed within (ms)" 600 "$(t 2)"
assert_eq "datagram 3 (needs <= 200 ms)" OK "$(f 3)"
assert_eq "datagrams received" 2 "$(kv msgs "$T/usink.out")"

start_srv acc acceptor -D 30
RLT_CONNECT="1/5s burst=1 max-wait=200ms errno=ETIMEDOUT" throttled "$ITEST_BIN/conn" -p "$SRV_PORT" -S "open open" >"$T/c.out" 2>&1 || fail "conn failed"
show "$T/c.out"
assert_eq "connect 2 (needs 5 s > max-wait), custom errno" ETIMEDOUT "$(step_status "$T/c.out" 2)"
assert_le "connect 2 failed within (ms)" 500 "$(step_took "$T/c.out" 2)"
