#!/bin/bash
# The preload's execl, execlp and execle (hook_exec.c builds the array from the list): each runs
# the program with its arguments, and execle with the environment given after the list's NULL.
# fronts: preload (the execl* hooks are the preload's; the seccomp front runs libc's own)
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_lib
need_bin forker
for call in execl execlp execle; do
	prog=/bin/sh
	[ $call = execlp ] && prog=sh
	RLT_SEND=1MiB/s throttled "$ITEST_BIN/forker" $call $prog -c 'echo "args=$0 env=${FORKER-unset}"' \
		>"$T/$call.out" 2>"$T/$call.err" || { show "$T/$call.err"; fail "$call: failed"; }
	env=unset
	[ $call = execle ] && env=execle
	assert_eq "$call: argument list and environment" "args=$prog env=$env" "$(cat "$T/$call.out")"
done
