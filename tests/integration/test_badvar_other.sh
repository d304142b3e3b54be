#!/bin/bash
# rlthrottle(7) RULES "Other variables": a bad value of RLT_LOG, RLT_ON_ERROR or RLT_INHERIT is an error too
# (never guessed at): status 125, one line that names the variable, main does not run.
# fronts: preload seccomp
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_lib
for pair in "RLT_LOG=chatty" "RLT_ON_ERROR=shrug" "RLT_INHERIT=maybe"; do
	var=${pair%%=*}
	rc=0
	( export "$pair"; throttled sh -c 'echo RAN' ) >"$T/out" 2>"$T/err" || rc=$?
	err=$(cat "$T/err")
	[ "$rc" = 125 ] || fail "$pair: exit status $rc, expected 125 (stderr: $err)"
	[ -s "$T/out" ] && fail "$pair: the program ran"
	[ "$(wc -l <"$T/err")" = 1 ] || fail "$pair: expected one line on stderr, got: $err"
	assert_match "$pair message" "^rlthrottle:.*$var" "$err"
done
