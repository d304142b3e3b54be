#!/bin/bash
# A thread sends in a loop; the main thread forks 300 children, one after another, that each
# send one byte on the same socket. A child inherits the memory as the fork found it: an engine
# lock the sending thread held then must be free in the child, which has no such thread. Before
# the fix about 1 child in 75 hung forever under sliding-window. Every child is waited for at
# most 2 s (then killed and counted as hung).
# parallel-safe
source "$(dirname "$0")/../integration/lib.sh"
need_lib
need_bin forkbusy

# Rates the loop never reaches: it decides (takes the lock) all the time and a child never waits
# for budget, so a child that takes long is one stuck on a lock.
for rule in "200MB/s algo=sliding-window" "1000000msg/s algo=sliding-log"; do
	out=$(RLT_SEND="$rule" timeout -s KILL 25 env LD_PRELOAD="$RLT_LIB" "$ITEST_BIN/forkbusy" -n 300 -w 2000)
	rc=$?
	info "RLT_SEND=\"$rule\": $out"
	[ $rc -eq 137 ] && fail "RLT_SEND=\"$rule\": the parent itself hung (killed after 25 s)"
	case $out in *" hung=0 "*) ;; *) fail "RLT_SEND=\"$rule\": children hung" ;; esac
	[ $rc -eq 0 ] || fail "RLT_SEND=\"$rule\": bytes lost or added (status $rc)"
done
info "300 forks beside a sending thread: none hung, every byte once"
