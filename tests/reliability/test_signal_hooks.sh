#!/bin/bash
# A SIGALRM handler (every 200 us) sends 1 byte on the throttled socket the main loop is sending
# on (send() is async-signal-safe). Under every algorithm and scope nothing may hang (the
# handler may interrupt the thread's own decision: the engine lock must not wait for itself),
# and every byte counted as sent arrives once. Before the fix: sliding-window, sliding-log and
# scope=connection with either hung within the first second.
# parallel-safe
source "$(dirname "$0")/../integration/lib.sh"
need_lib
need_bin sigsend

shm="rlt-sig-$$"
trap 'rm -f "/dev/shm/rlthrottle.$shm"; cleanup' EXIT

run() {
	local rule=$1 out rc
	out=$(RLT_SEND="$rule" timeout -s KILL 10 env LD_PRELOAD="$RLT_LIB" "$ITEST_BIN/sigsend" -t 1000 -i 200)
	rc=$?
	[ $rc -eq 137 ] && fail "RLT_SEND=\"$rule\": hung (killed after 10 s): $out"
	info "RLT_SEND=\"$rule\": $out"
	[ $rc -eq 0 ] || fail "RLT_SEND=\"$rule\": bytes lost or added (status $rc)"
	case $out in *" handler_sent=0 "*) fail "RLT_SEND=\"$rule\": the handler never sent" ;; esac
}

run "2MB/s algo=sliding-window"
run "20000msg/s algo=sliding-log"
run "2MB/s algo=fixed-window"
run "2MB/s algo=token"
run "2MB/s algo=leaky"
run "2MB/s algo=sliding-window scope=connection"
run "20000msg/s algo=sliding-log scope=connection"
run "2MB/s algo=sliding-window scope=shared:$shm"
info "no hang, every byte once, under every algorithm and scope"
