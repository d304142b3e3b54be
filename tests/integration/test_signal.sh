#!/bin/bash
# rlthrottle(7) BEHAVIOUR: a signal during a delay runs its handler; the throttle never fails a call with EINTR.
# A call that already moved data then returns that count, as the kernel's own blocking call
# does (SA_RESTART or not), and the calls that follow move the rest: every byte arrives, once.
# With and without SA_RESTART, SIGALRM and SIGUSR1, on send and on a MSG_WAITALL recv.
# fronts: preload seccomp
# parallel-safe: bound, no rate (a signal at 0.2 s ends the call within 1 s; unended it would go 2 s)
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink source sigdelay
n=30000
# moved_once LABEL: sigdelay's report: the interrupted call returned what it had moved (1..n),
# the calls after it moved the rest, none failed (EINTR), the handler ran.
moved_once() {
	assert_range "$1: call result (moved before the first signal)" 1 $n "$(kv result "$T/$1.out")"
	assert_eq "$1: total moved" $n "$(kv total "$T/$1.out")"
	assert_eq "$1: errno" none "$(kv errno "$T/$1.out")"
	assert_ge "$1: handler ran" 1 "$(kv handlers "$T/$1.out")"
}
for opts in "-s alrm" "-s alrm -r" "-s usr1"; do
	label="send$(echo "$opts" | tr -d ' -')"
	start_srv "sink_$label" sink
	spid=$LAST_PID
	rc=0
	RLT_SEND="10kB/s burst=10kB" throttled "$ITEST_BIN/sigdelay" -p "$SRV_PORT" -n $n -k $opts >"$T/$label.out" 2>"$T/$label.err" || rc=$?
	wait_pid "$spid" 10
	info "$label: $(cat "$T/$label.out")"
	moved_once "$label"
	# the first signal comes 200 ms in; before, the call went on for the whole 2 s of pacing
	assert_le "$label: seconds until the call returned" 1 "$(calc "$(kv elapsed_ns "$T/$label.out") / 1e9")"
	assert_eq "$label: bytes received" $n "$(kv bytes "$T/sink_$label.out")"
	assert_eq "$label: checksum" "$(kv fnv "$T/$label.out")" "$(kv fnv "$T/sink_$label.out")"
	assert_eq "$label: exit status" 0 "$rc"
done
for opts in "-s alrm" "-s usr1 -r"; do
	label="recv$(echo "$opts" | tr -d ' -')"
	start_srv "src_$label" source -n $n
	spid=$LAST_PID
	rc=0
	RLT_RECV="10kB/s burst=10kB" throttled "$ITEST_BIN/sigdelay" -R -p "$SRV_PORT" -n $n -k $opts >"$T/$label.out" 2>"$T/$label.err" || rc=$?
	wait_pid "$spid" 10
	info "$label: $(cat "$T/$label.out")"
	moved_once "$label"
	assert_eq "$label: checksum" "$(kv fnv "$T/src_$label.out")" "$(kv fnv "$T/$label.out")"
	assert_eq "$label: exit status" 0 "$rc"
done
