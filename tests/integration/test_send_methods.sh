#!/bin/bash
# rlthrottle(7) RULES/§4: every send entry point is throttled: write, send, sendto, sendmsg, sendmmsg, writev,
# sendfile, and splice from a pipe, on a blocking TCP socket. 2.5 MiB at 2 MiB/s, burst 512 KiB:
# 1 s paced; bytes exact.
# Under --seccomp sendfile is made for the program, piece by piece, from a duplicate of its file,
# and the offset it passed is moved on as the kernel would.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix-rest, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink blast
n=$((5 * 524288))
how=$(front)
for m in write send sendto sendmsg sendmmsg writev sendfile splice; do
	RLT_SEND="2MiB/s burst=512KiB" do_send "$how-$m" -n $n -s 32768 -m "$m"
	MIN_SPAN_S=0.7 assert_rate "$how, $m" $((n - 524288)) "$(kv elapsed_ns "$S_OUT")" 2097152 0.7 1.3
done
