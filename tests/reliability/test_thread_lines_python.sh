#!/bin/bash
# Issue 9, threads that share a stream socket, with python: 4 threads each sendall() 16 lines of
# 4000 bytes on one socket under RLT_SEND=100KiB/s. Every line arrives whole and once, the
# lines received are exactly those sent (sha256 of the sorted lines), at the rule's rate.
# Under the preload and under --seccomp.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lines_lib.sh"
need_lib
need_cmd python3
"$ITEST_BIN/lines" gen -t $t -n $n -l $l >"$T/lines.txt"
want=$(sort "$T/lines.txt" | sha256sum | cut -d' ' -f1)
py=$(dirname "$0")/thread_lines.py
for how in preload seccomp; do
	lines_recv "$how"
	UNDER_SECCOMP=$([ "$how" = seccomp ] && echo 1) RLT_SEND="100KiB/s" \
		throttled python3 "$py" "$T/lines.txt" "$SRV_PORT" $t >"$T/send_$how.out" 2>"$T/send_$how.err" ||
		{ show "$T/send_$how.out" "$T/send_$how.err"; fail "$how: python sender failed"; }
	lines_check "$how" "$T/send_$how.out" "$want"
done
