#!/bin/bash
# Under scope=connection a socket's first I/O takes a connection block. A SIGALRM handler
# (every 200 us) makes a new socket (socketpair) and sends 1 byte on it while the main loop
# does the same with 64 bytes: the handler's first I/O may interrupt the main loop's own. Before
# the fix the block arena's mutex deadlocked within a second; now nothing hangs and every byte
# arrives once.
# parallel-safe
source "$(dirname "$0")/../integration/lib.sh"
need_lib
need_bin sigsend

for rule in "10MB/s scope=connection family=all" \
            "10MB/s algo=sliding-window scope=connection family=all"; do
	out=$(RLT_SEND="$rule" timeout -s KILL 10 env LD_PRELOAD="$RLT_LIB" "$ITEST_BIN/sigsend" -n -t 1500 -i 200)
	rc=$?
	[ $rc -eq 137 ] && fail "RLT_SEND=\"$rule\": hung (killed after 10 s): $out"
	info "RLT_SEND=\"$rule\": $out"
	[ $rc -eq 0 ] || fail "RLT_SEND=\"$rule\": bytes lost or added (status $rc)"
done
info "no hang, every byte once"
