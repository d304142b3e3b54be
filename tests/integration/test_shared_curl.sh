#!/bin/bash
# 4 independent curl processes download 1 MiB each under one shared RLT_RECV="1MiB/s" budget
# (default burst: 1 MiB): 4 MiB in all, of which 3 MiB paced at 1 MiB/s for the four together.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin fnv
need_cmd curl python3
name=itest-curl-$$
trap 'rm -f /dev/shm/rlthrottle.$name; cleanup' EXIT
mkdir -p "$T/www"
"$ITEST_BIN/fnv" -g 1048576 >"$T/www/f.bin"
http_dir http "$T/www"
port=$HTTP_PORT
pids=""
t0=$(now_ns)
for i in 1 2 3 4; do
	RLT_RECV="1MiB/s scope=shared:$name" throttled curl -sS -o "$T/got$i.bin" "http://127.0.0.1:$port/f.bin" 2>"$T/curl$i.err" &
	pids="$pids $!"
done
for p in $pids; do wait "$p" || fail "a curl failed: $(cat "$T"/curl*.err)"; done
t1=$(now_ns)
for i in 1 2 3 4; do sha256_eq "$T/www/f.bin" "$T/got$i.bin"; done
MIN_SPAN_S=2 assert_rate "4 curls together" $((3 * 1048576)) $((t1 - t0)) 1048576 0.7 1.3
