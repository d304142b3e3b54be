#!/bin/bash
# port= filters (remote port for send/recv/connect): N-M containing the port throttles, a range
# that does not contain it does not, a single N matches exactly.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink blast
n=1572864
start_srv s1 sink
spid=$LAST_PID; p=$SRV_PORT
RLT_SEND="1MiB/s burst=128KiB port=$((p - 1))-$((p + 1))" throttled "$ITEST_BIN/blast" -p "$p" -n $n >"$T/b1.out" || fail "blast failed"
wait_pid "$spid" 20
assert_eq "bytes" $n "$(kv bytes "$T/s1.out")"
assert_rate "port range containing the port" $((n - 131072)) "$(kv elapsed_ns "$T/s1.out")" 1048576 0.7 1.3

start_srv s2 sink
spid=$LAST_PID; p=$SRV_PORT
if [ "$p" -lt 60000 ]; then r="$((p + 1))-$((p + 100))"; else r="1-$((p - 1))"; fi
RLT_SEND="100kB/s port=$r" throttled "$ITEST_BIN/blast" -p "$p" -n $((8 * n)) >"$T/b2.out" || fail "blast failed"
wait_pid "$spid" 20
assert_eq "bytes" $((8 * n)) "$(kv bytes "$T/s2.out")"
assert_fast "port range $r not containing $p" "$(kv elapsed_ns "$T/b2.out")" 2

start_srv s3 sink
spid=$LAST_PID; p=$SRV_PORT
RLT_SEND="1MiB/s burst=128KiB port=$p" throttled "$ITEST_BIN/blast" -p "$p" -n $n >"$T/b3.out" || fail "blast failed"
wait_pid "$spid" 20
assert_rate "port=$p exactly" $((n - 131072)) "$(kv elapsed_ns "$T/s3.out")" 1048576 0.7 1.3
