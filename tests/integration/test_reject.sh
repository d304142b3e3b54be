#!/bin/bash
# rlthrottle(7) RULES/§4 action=reject: the call fails at once with the rule's errno (connect ECONNREFUSED,
# accept ECONNABORTED, send ENOBUFS, recv EAGAIN, or errno=NAME), and the budget stays as it was.
# fronts: preload seccomp
# parallel-safe: bound, no rate (a rejected call fails within 200 ms, not after a delay)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin acceptor conn sink blast source pull

step() { step_status "$2" "$1"; }
took() { step_took "$2" "$1"; }

# connect: 2 allowed, then ECONNREFUSED, immediately (no delay).
start_srv acc acceptor -D 30
RLT_CONNECT="2/h burst=2 action=reject" throttled "$ITEST_BIN/conn" -p "$SRV_PORT" -S "open open open open" >"$T/c.out" 2>"$T/c.err" || fail "conn failed"
show "$T/c.out"
assert_steps connect "$T/c.out" OK OK ECONNREFUSED ECONNREFUSED
assert_le "rejected connect took (ms)" 200 "$(took 3 "$T/c.out")"

# errno=EPERM
RLT_CONNECT="1/h burst=1 action=reject errno=EPERM" throttled "$ITEST_BIN/conn" -p "$SRV_PORT" -S "open open" >"$T/c2.out" 2>&1 || fail "conn failed"
show "$T/c2.out"
assert_eq "connect with errno=EPERM, 1" OK "$(step 1 "$T/c2.out")"
assert_eq "connect with errno=EPERM, 2" EPERM "$(step 2 "$T/c2.out")"

# TCP send: ENOBUFS once the burst is spent.
start_srv sink sink
spid=$LAST_PID
RLT_SEND="10kB/h burst=10kB action=reject" throttled "$ITEST_BIN/blast" -p "$SRV_PORT" -S "10000 1000" >"$T/s.out" 2>"$T/s.err" || fail "blast failed"
wait_pid "$spid" 10
show "$T/s.out"
assert_eq "send 1 (10000 B, the burst)" OK "$(step 1 "$T/s.out")"
assert_eq "send 2" ENOBUFS "$(step 2 "$T/s.out")"
assert_eq "bytes received" 10000 "$(kv bytes "$T/sink.out")"

# UDP: a rejected datagram leaves the budget as it was: 6000 ok, 6000 rejected, 4000 still fits.
start_srv usink sink -u -c 2 -i 1500
spid=$LAST_PID
RLT_SEND="10kB/h burst=10kB action=reject" throttled "$ITEST_BIN/blast" -u -p "$SRV_PORT" -S "6000 6000 4000 1" >"$T/u.out" 2>"$T/u.err" || fail "blast failed"
wait_pid "$spid" 10
show "$T/u.out" "$T/usink.out"
assert_eq "datagram 1 (6000)" OK "$(step 1 "$T/u.out")"
assert_eq "datagram 2 (6000, over budget)" ENOBUFS "$(step 2 "$T/u.out")"
assert_eq "datagram 3 (4000, fits what is left)" OK "$(step 3 "$T/u.out")"
assert_eq "datagram 4 (1, nothing left)" ENOBUFS "$(step 4 "$T/u.out")"
assert_eq "bytes received" 10000 "$(kv bytes "$T/usink.out")"
assert_eq "datagrams received" 2 "$(kv msgs "$T/usink.out")"


# accept: 2 allowed, the 3rd call fails with ECONNABORTED and takes that connection off the queue
# (so the acceptor is not woken again and again for it).
SRV_THROTTLED=1 RLT_ACCEPT="2/h burst=2 action=reject" start_srv racc acceptor -v -D 1.5
apid=$LAST_PID
"$ITEST_BIN/conn" -p "$SRV_PORT" -n 3 >"$T/ac.out" 2>&1
wait_pid "$apid" 20 || fail "acceptor did not finish"
show "$T/racc.out"
assert_eq "accepted" 2 "$(kv accepted "$T/racc.out")"
assert_eq "rejected accept calls (one per shed connection)" 1 "$(kv failed "$T/racc.out")"
assert_eq "accept errno" ECONNABORTED:1 "$(kv errs "$T/racc.out")"

# recv: EAGAIN once the burst is spent (1000 B per hour: nothing refills during the test). The
# library may hand out the burst in several reads; in all exactly 1000 B, then EAGAIN.
start_srv src source -n 20000
spid=$LAST_PID
RLT_RECV="1000B/h burst=1000 action=reject" throttled "$ITEST_BIN/pull" -p "$SRV_PORT" -S "sleep:300 1000 1000 1000 1000 1000 1000 1000 1000" >"$T/r.out" 2>"$T/r.err" || fail "pull failed"
wait_pid "$spid" 10
show "$T/r.out"
got=0; first_fail=""
for i in 1 2 3 4 5 6 7 8; do
	st=$(step_status "$T/r.out" $i)
	if [ "$st" = OK ]; then
		[ -z "$first_fail" ] || fail "recv $i succeeded after a rejected recv"
		got=$((got + $(step_result "$T/r.out" $i)))
	else
		[ -n "$first_fail" ] || first_fail=$st
	fi
done
assert_eq "bytes received before the first reject (the burst)" 1000 "$got"
assert_eq "recv errno once the burst is spent" EAGAIN "$first_fail"
