#!/bin/bash
# --seccomp, action=reject: a rejected connect fails with ECONNREFUSED, or the rule's errno=;
# a send beyond a reject rule fails with ENOBUFS and leaves the budget as it was.
# fronts: seccomp (the handler answering with an errno in a static program; test_reject covers both fronts)
# parallel-safe: bound, no rate (a rejected connect fails within 200 ms, not after a delay)
. "$(dirname "$0")/lib.sh"
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$RLTHROTTLE" ] || fail "launcher not built: $RLTHROTTLE"
need_bin acceptor conn sink blast

start_srv acc acceptor -D 30
"$RLTHROTTLE" --seccomp -c "2/h burst=2 action=reject" -- "$ITEST_BIN/conn" -p "$SRV_PORT" -S "open open open open" >"$T/c.out" 2>"$T/c.err" || { show "$T/c.err"; fail "conn failed"; }
show "$T/c.out"
assert_steps connect "$T/c.out" OK OK ECONNREFUSED ECONNREFUSED
assert_le "rejected connect took (ms)" 200 "$(step_took "$T/c.out" 3)"

"$RLTHROTTLE" --seccomp -c "1/h burst=1 action=reject errno=EPERM" -- "$ITEST_BIN/conn" -p "$SRV_PORT" -S "open open" >"$T/c2.out" 2>&1 || fail "conn failed"
show "$T/c2.out"
assert_eq "connect with errno=EPERM, 1" OK "$(step_status "$T/c2.out" 1)"
assert_eq "connect with errno=EPERM, 2" EPERM "$(step_status "$T/c2.out" 2)"

start_srv sink sink
spid=$LAST_PID
"$RLTHROTTLE" --seccomp -u "10kB/h burst=10kB action=reject" -- "$ITEST_BIN/blast" -p "$SRV_PORT" -S "10000 1000" >"$T/s.out" 2>"$T/s.err" || fail "blast failed"
wait_pid "$spid" 10
show "$T/s.out"
assert_eq "send 1 (10000 B, the burst)" OK "$(step_status "$T/s.out" 1)"
assert_eq "send 2" ENOBUFS "$(step_status "$T/s.out" 2)"
assert_eq "bytes received" 10000 "$(kv bytes "$T/sink.out")"
