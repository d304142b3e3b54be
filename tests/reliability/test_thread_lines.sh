#!/bin/bash
# Issue 9, threads that share a stream socket: 4 threads each send 16 lines of 4000 bytes (one
# call a line) on one blocking TCP socket under RLT_SEND=100KiB/s. A send no larger than the
# burst goes out as one real call, charged whole, so no line is torn by another thread's: every
# line arrives whole, once, and the lines received are exactly those sent (sha256 of the sorted
# lines). The rate after the burst stays the rule's. Under the preload (send, writev with three
# iovecs) and under --seccomp (write, sendmsg with three iovecs).
. "$(dirname "$0")/../integration/lib.sh"
need_lib
need_bin lines
t=4 n=16 l=4000 burst=102400
total=$((t * n * l))
want=$("$ITEST_BIN/lines" gen -t $t -n $n -l $l | sort | sha256sum | cut -d' ' -f1)
for run in preload:send preload:writev seccomp:write seccomp:sendmsg; do
	how=${run%%:*} m=${run#*:} label=${run/:/-}
	start_srv "recv_$label" lines recv -t $t -n $n -l $l -o "$T/$label.bin"
	rpid=$LAST_PID
	UNDER_SECCOMP=$([ "$how" = seccomp ] && echo 1) RLT_SEND="100KiB/s" \
		throttled "$ITEST_BIN/lines" send -p "$SRV_PORT" -t $t -n $n -l $l -m "$m" \
		>"$T/send_$label.out" 2>"$T/send_$label.err" ||
		{ show "$T/send_$label.out" "$T/send_$label.err"; fail "$label: sender failed"; }
	wait_pid "$rpid" 20 || fail "$label: receiver did not finish"
	r=$T/recv_$label.out
	show "$T/send_$label.out" "$r"
	assert_eq "$label: bytes received" $total "$(kv bytes "$r")"
	assert_eq "$label: lines torn" 0 "$(kv torn "$r")"
	assert_eq "$label: lines whole" $((t * n)) "$(kv whole "$r")"
	assert_eq "$label: lines missing, duplicated" "0 0" "$(kv missing "$r") $(kv dups "$r")"
	assert_eq "$label: sha256 of the sorted lines" "$want" "$(sort "$T/$label.bin" | sha256sum | cut -d' ' -f1)"
	MIN_SPAN_S=1 assert_rate "$label: rate after the burst" $((total - burst)) "$(kv elapsed_ns "$r")" 102400 0.75 1.3
done
