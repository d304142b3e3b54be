#!/bin/bash
# With a rule that never binds (16GB/s) the library must not get in the way: 256 MiB over TCP
# loopback arrive intact and fast, with large writes, non-blocking sockets and sendfile.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
# parallel-safe: bound, no rate (256 MiB in under 10 s where no rule binds: 1.1 s at most beside two busy loops)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink blast
n=$((256 * 1048576))
for m in "write" "send -N" "sendfile"; do
	set -- $m
	label="$1$(echo "${2:-}" | tr -d ' -')"
	SINK_ARGS="-x" NOCHECK=1 RLT_SEND="16GB/s" RLT_RECV="16GB/s" do_send "$label" -n $n -s 262144 -m "$@"
	assert_eq "$label: bytes" $n "$(kv bytes "$S_OUT")"
	assert_fast "$label: 256 MiB" "$(kv elapsed_ns "$B_OUT")" 10
done
