#!/bin/bash
# --seccomp: signals (SA_RESTART) arrive while a big send is held by the supervisor. The
# kernel withdraws the notification and restarts the call as a new one; it must take over
# what the first one had: nothing charged twice (units == bytes), no byte sent twice (the sink
# gets the stream exactly), and the handler runs.
. "$(dirname "$0")/lib.sh"
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$RLTHROTTLE" ] || fail "launcher not built: $RLTHROTTLE"
need_bin sink sigdelay

start_srv sink sink
spid=$LAST_PID
n=600000
"$RLTHROTTLE" --seccomp -u "200KiB/s" --stats "$T/st.json" -- "$ITEST_BIN/sigdelay" -p "$SRV_PORT" -n $n -r -i 150 >"$T/sd.out" 2>"$T/sd.err" ||
	{ show "$T/sd.out" "$T/sd.err"; fail "sigdelay failed"; }
wait_pid "$spid" 10 || fail "sink did not finish"
show "$T/sd.out" "$T/sink.out" "$T/st.json"
assert_eq "send result" $n "$(kv result "$T/sd.out")"
assert_ge "handlers run" 3 "$(kv handlers "$T/sd.out")"
assert_eq "bytes received" $n "$(kv bytes "$T/sink.out")"
assert_eq "stream intact" "$(kv fnv "$T/sd.out")" "$(kv fnv "$T/sink.out")"
units=$(grep -o '"units":[0-9]*' "$T/st.json" | head -1 | cut -d: -f2)
assert_eq "bytes charged (none twice)" $n "$units"
# 600000 B at 200 KiB/s after a 200 KiB burst: 1.9 s; a wait served twice would be longer
el=$(kv elapsed_ns "$T/sd.out")
assert_range "send took (s)" 1.5 2.6 "$(calc "$el / 1e9")"

# a receive with MSG_WAITALL, held while signals arrive
start_srv src source -n $n
spid=$LAST_PID
"$RLTHROTTLE" --seccomp -d "200KiB/s" --stats "$T/st2.json" -- "$ITEST_BIN/sigdelay" -R -p "$SRV_PORT" -n $n -r -i 150 >"$T/sr.out" 2>"$T/sr.err" ||
	{ show "$T/sr.out" "$T/sr.err"; fail "sigdelay -R failed"; }
wait_pid "$spid" 10
show "$T/sr.out" "$T/st2.json"
assert_eq "recv result" $n "$(kv result "$T/sr.out")"
assert_eq "received stream intact" "$(kv fnv "$T/src.out")" "$(kv fnv "$T/sr.out")"
units=$(grep -o '"units":[0-9]*' "$T/st2.json" | head -1 | cut -d: -f2)
assert_eq "bytes charged on receive (none twice)" $n "$units"
