#!/bin/bash
# rlthrottle(7) NETWORK CONDITIONS: a bad RLT_NET (or --net) ends with status 125 after one line
# that names RLT_NET and the wrong part; the program never runs. --check prints the conditions
# as understood (0) or the same line (2).
# fronts: preload seccomp
# parallel-safe: statuses and lines only
. "$(dirname "$0")/lib.sh"
need_lib
L="$(dirname "$RLT_LIB")/rlthrottle"
check_bad() { # VALUE PART
	local rc=0
	( export RLT_NET="$1"; throttled sh -c 'echo RAN' ) >"$T/out" 2>"$T/err" || rc=$?
	assert_eq "RLT_NET=\"$1\": exit status" 125 "$rc"
	assert_eq "RLT_NET=\"$1\": stdout (the program must not run)" "" "$(cat "$T/out")"
	assert_eq "RLT_NET=\"$1\": lines on stderr" 1 "$(wc -l <"$T/err")"
	assert_match "RLT_NET=\"$1\": the line" "^rlthrottle: RLT_NET=\".*$2" "$(cat "$T/err")"
	info "$(cat "$T/err")"
}
check_bad "loss=5" 'loss: "5" is not a share'
check_bad "reset after=soon" 'after: "soon"'
check_bad "slice=10-1" 'inverted range'
check_bad "loss=1%; jitter=3ms" 'unknown condition "jitter"'
check_bad "latency=5ms port!=x" 'port: "x"'
rc=0
"$L" $(seccomp_opt | sed "s/^/ /;/^ $/d" | head -0) --net "hang close=0" -- sh -c 'echo RAN' >"$T/out" 2>"$T/err" || rc=$?
assert_eq "--net with a bad condition: exit status" 125 "$rc"
assert_match "--net's line" '^rlthrottle: RLT_NET="hang close=0": close' "$(cat "$T/err")"
out=$("$L" --net "loss=1% port!=53" --net "reset after=1MB" --check) || fail "--check refused good conditions"
assert_match "--check" 'RLT_NET: loss=1% dir=both p=100% port!=53 family=inet' "$out"
assert_match "--check" 'RLT_NET: reset after=1000000B p=100% family=inet' "$out"
rc=0
"$L" --net "loss=x" --check >/dev/null 2>&1 || rc=$?
assert_eq "--check with a bad condition" 2 "$rc"
