#!/bin/bash
# Issue 9, threads that share a stream socket, with python: 4 threads each sendall() 16 lines of
# 4000 bytes on one socket under RLT_SEND=100KiB/s. Every line arrives whole and once, the
# lines received are exactly those sent (sha256 of the sorted lines), at the rule's rate.
# Under the preload and under --seccomp.
. "$(dirname "$0")/../integration/lib.sh"
need_lib
need_bin lines
need_cmd python3
t=4 n=16 l=4000 burst=102400
total=$((t * n * l))
"$ITEST_BIN/lines" gen -t $t -n $n -l $l >"$T/lines.txt"
want=$(sort "$T/lines.txt" | sha256sum | cut -d' ' -f1)
py=$(dirname "$0")/thread_lines.py
for how in preload seccomp; do
	start_srv "recv_$how" lines recv -t $t -n $n -l $l -o "$T/$how.bin"
	rpid=$LAST_PID
	UNDER_SECCOMP=$([ "$how" = seccomp ] && echo 1) RLT_SEND="100KiB/s" \
		throttled python3 "$py" "$T/lines.txt" "$SRV_PORT" $t >"$T/send_$how.out" 2>"$T/send_$how.err" ||
		{ show "$T/send_$how.out" "$T/send_$how.err"; fail "$how: python sender failed"; }
	wait_pid "$rpid" 20 || fail "$how: receiver did not finish"
	r=$T/recv_$how.out
	show "$T/send_$how.out" "$r"
	assert_eq "$how: bytes received" $total "$(kv bytes "$r")"
	assert_eq "$how: lines torn" 0 "$(kv torn "$r")"
	assert_eq "$how: lines whole" $((t * n)) "$(kv whole "$r")"
	assert_eq "$how: lines missing, duplicated" "0 0" "$(kv missing "$r") $(kv dups "$r")"
	assert_eq "$how: sha256 of the sorted lines" "$want" "$(sort "$T/$how.bin" | sha256sum | cut -d' ' -f1)"
	MIN_SPAN_S=1 assert_rate "$how: rate after the burst" $((total - burst)) "$(kv elapsed_ns "$r")" 102400 0.75 1.3
done
