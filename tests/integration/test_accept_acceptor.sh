#!/bin/bash
# RLT_ACCEPT limits accept() and accept4() (with SOCK_NONBLOCK|SOCK_CLOEXEC kept on the accepted
# socket): 40/s, burst 1, clients hammering for ~3 s; the server counts what it accepted.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin acceptor conn
for m in accept "accept4 -f nonblock,cloexec"; do
	set -- $m
	label=$1
	SRV_THROTTLED=1 RLT_ACCEPT="40/s burst=1" start_srv "acc_$label" acceptor -m "$@" -D 2.5 -T 30
	apid=$LAST_PID
	bg "cli_$label" "$ITEST_BIN/conn" -p "$SRV_PORT" -t 8 -D 3.5 -T 30
	cpid=$LAST_PID
	# acceptor itself is the preloaded program here:
	wait_pid "$apid" 30 || fail "acceptor did not finish"
	wait_pid "$cpid" 30
	out=$T/acc_$label.out
	info "$label: $(cat "$out")"
	[ -s "$out" ] || { show "$T/acc_$label.err"; fail "$label: no acceptor output"; }
	MIN_SPAN_S=2 assert_rate "$label rate" "$(kv accepted "$out")" "$(kv elapsed_ns "$out")" 40 0.7 1.3
done
