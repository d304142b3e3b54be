#!/bin/bash
# Issue 9, threads that share a stream socket: 4 threads each send 16 lines of 4000 bytes (one
# call a line) on one blocking TCP socket under RLT_SEND=100KiB/s. A send no larger than the
# burst goes out as one real call, charged whole, so no line is torn by another thread's: every
# line arrives whole, once, and the lines received are exactly those sent (sha256 of the sorted
# lines). The rate after the burst stays the rule's. Under the preload (send, writev with three
# iovecs) and under --seccomp (write, sendmsg with three iovecs).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lines_lib.sh"
need_lib
want=$("$ITEST_BIN/lines" gen -t $t -n $n -l $l | sort | sha256sum | cut -d' ' -f1)
for run in preload:send preload:writev seccomp:write seccomp:sendmsg; do
	how=${run%%:*} m=${run#*:} label=${run/:/-}
	lines_recv "$label"
	UNDER_SECCOMP=$([ "$how" = seccomp ] && echo 1) RLT_SEND="100KiB/s" \
		throttled "$ITEST_BIN/lines" send -p "$SRV_PORT" -t $t -n $n -l $l -m "$m" \
		>"$T/send_$label.out" 2>"$T/send_$label.err" ||
		{ show "$T/send_$label.out" "$T/send_$label.err"; fail "$label: sender failed"; }
	lines_check "$label" "$T/send_$label.out" "$want"
done
