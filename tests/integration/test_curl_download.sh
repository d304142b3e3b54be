#!/bin/bash
# curl downloads a 4 MiB file from a local HTTP server under RLT_RECV=1MiB/s (default burst: one
# second of the rate). Rate within 0.7-1.3 of the target after the burst, and the file exact.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin fnv
need_cmd curl python3
mkdir -p "$T/www"
"$ITEST_BIN/fnv" -g $((4 * 1048576)) >"$T/www/f.bin"
http_dir http "$T/www"
port=$HTTP_PORT
t0=$(now_ns)
RLT_RECV="1MiB/s" throttled curl -sS -o "$T/got.bin" -w '%{size_download} %{time_total}\n' \
	"http://127.0.0.1:$port/f.bin" >"$T/curl.out" 2>"$T/curl.err" || { show "$T/curl.err"; fail "curl failed"; }
t1=$(now_ns)
sha256_eq "$T/www/f.bin" "$T/got.bin"
info "curl says: $(cat "$T/curl.out")"
# 4 MiB, of which the first 1 MiB is the burst: 3 MiB paced at 1 MiB/s.
MIN_SPAN_S=2 assert_rate "curl download" $((3 * 1048576)) $((t1 - t0)) 1048576 0.7 1.3
