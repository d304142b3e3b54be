#!/bin/bash
# --seccomp: signals (SA_RESTART) arrive while a big send is held by the handler. The call
# ends at the first one with what it moved so far, as a blocking call in the kernel does, so
# that the handler runs; the program sends the rest. Nothing charged twice (units == bytes),
# no byte sent twice or lost (the sink gets the stream exactly).
# fronts: seccomp (a call held by the SIGSYS handler ended for the program's signal handler)
# parallel-safe: bound, no rate (a signal at 150 ms ends the first call within 0.1-0.5 s; units and bytes exact)
. "$(dirname "$0")/lib.sh"
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$RLTHROTTLE" ] || fail "launcher not built: $RLTHROTTLE"
need_bin sink sigdelay

start_srv sink sink
spid=$LAST_PID
n=600000
"$RLTHROTTLE" --seccomp -u "200KiB/s" --stats "$T/st.json" -- "$ITEST_BIN/sigdelay" -p "$SRV_PORT" -n $n -r -k -i 150 >"$T/sd.out" 2>"$T/sd.err" ||
	{ show "$T/sd.out" "$T/sd.err"; fail "sigdelay failed"; }
wait_pid "$spid" 10 || fail "sink did not finish"
show "$T/sd.out" "$T/sink.out" "$T/st.json"
assert_range "send result (ended at a signal)" 1 $((n - 1)) "$(kv result "$T/sd.out")"
assert_eq "bytes the calls returned" $n "$(kv total "$T/sd.out")"
assert_ge "handlers run" 1 "$(kv handlers "$T/sd.out")"
assert_eq "bytes received" $n "$(kv bytes "$T/sink.out")"
assert_eq "stream intact" "$(kv fnv "$T/sd.out")" "$(kv fnv "$T/sink.out")"
units=$(grep -o '"units":[0-9]*' "$T/st.json" | head -1 | cut -d: -f2)
assert_eq "bytes charged (none twice)" $n "$units"
# the first signal comes 150 ms in: the call ends within a piece (10 ms) of it
el=$(kv elapsed_ns "$T/sd.out")
assert_range "first call took (s)" 0.1 0.5 "$(calc "$el / 1e9")"

# a receive with MSG_WAITALL, held while signals arrive
start_srv src source -n $n
spid=$LAST_PID
"$RLTHROTTLE" --seccomp -d "200KiB/s" --stats "$T/st2.json" -- "$ITEST_BIN/sigdelay" -R -p "$SRV_PORT" -n $n -r -k -i 150 >"$T/sr.out" 2>"$T/sr.err" ||
	{ show "$T/sr.out" "$T/sr.err"; fail "sigdelay -R failed"; }
wait_pid "$spid" 10
show "$T/sr.out" "$T/st2.json"
assert_range "recv result (ended at a signal)" 1 $((n - 1)) "$(kv result "$T/sr.out")"
assert_eq "bytes the receives returned" $n "$(kv total "$T/sr.out")"
assert_eq "received stream intact" "$(kv fnv "$T/src.out")" "$(kv fnv "$T/sr.out")"
units=$(grep -o '"units":[0-9]*' "$T/st2.json" | head -1 | cut -d: -f2)
assert_eq "bytes charged on receive (none twice)" $n "$units"
