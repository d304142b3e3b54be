#!/bin/bash
# closefrom(3) (the C library closes through its own close_range, which no hook saw) must leave
# no socket behind in the fd table (issue 9): a file opened at a former socket's number is not
# throttled as that socket, and the RLT_CONNS slots of the closed connections are free again.
# Under the preload and under --seccomp (where closefrom is a close_range system call).
# parallel-safe: bound, no rate (256 KiB to a file in under 500 ms, not throttled; connections counted)
. "$(dirname "$0")/../integration/lib.sh"
need_lib
need_bin acceptor fdlife
start_srv acc acceptor -H -D 30 -T 40
for front in preload seccomp; do
	if [ $front = seccomp ]; then export UNDER_SECCOMP=1; else unset UNDER_SECCOMP; fi
	# 256 KiB to a file at 64 KiB/s would take 3 s if the file were taken for the socket
	RLT_CONNS=2 RLT_SEND=64KiB/s throttled "$ITEST_BIN/fdlife" -p "$SRV_PORT" -f "$T/file_$front" -b 262144 closefrom \
		>"$T/$front.out" 2>"$T/$front.err" || { show "$T/$front.err"; fail "$front: fdlife closefrom failed"; }
	out=$(cat "$T/$front.out")
	info "$front: $out"
	assert_eq "$front: the file got a former socket's number" 3 "$(kv file_fd "$out")"
	assert_eq "$front: bytes in the file" 262144 "$(stat -c %s "$T/file_$front")"
	assert_le "$front: 256 KiB written to the file, not throttled (ms)" 500 "$(kv write_ms "$out")"
	assert_eq "$front: 1st connection after closefrom (RLT_CONNS=2)" OK "$(kv open1 "$out")"
	assert_eq "$front: 2nd connection after closefrom" OK "$(kv open2 "$out")"
	assert_eq "$front: 3rd connection (2 open)" ECONNREFUSED "$(kv open3 "$out")"
done
