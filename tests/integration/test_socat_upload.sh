#!/bin/bash
# socat uploads a 3 MiB file to a sink under RLT_SEND="1MiB/s burst=256KiB"; the sink's checksum
# equals the file's, and the rate at the receiver is within 0.7-1.3 of the target.
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
need_lib
need_bin fnv sink
need_cmd socat
n=$((3 * 1048576))
"$ITEST_BIN/fnv" -g $n >"$T/up.bin"
want=$(kv fnv "$("$ITEST_BIN/fnv" "$T/up.bin")")
start_srv sink sink
spid=$LAST_PID
RLT_SEND="1MiB/s burst=256KiB" throttled socat -u "OPEN:$T/up.bin" "TCP:127.0.0.1:$SRV_PORT" 2>"$T/socat.err" ||
	{ show "$T/socat.err"; fail "socat failed"; }
wait_pid "$spid" 20 || fail "sink did not finish"
assert_eq "bytes received" $n "$(kv bytes "$T/sink.out")"
assert_eq "checksum" "$want" "$(kv fnv "$T/sink.out")"
MIN_SPAN_S=2 assert_rate "socat upload" $((n - 262144)) "$(kv elapsed_ns "$T/sink.out")" 1048576 0.7 1.3
