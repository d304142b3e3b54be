#!/bin/bash
# rlthrottle(7) RULES: a bad rule in any variable ends the process with status 125, after exactly one line on
# stderr that starts with "rlthrottle:" and names the variable; the program's main never runs.
# fronts: preload seccomp
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_lib

check_bad() { # VAR VALUE
	local var=$1 val=$2 rc=0
	( export "$var=$val"; throttled sh -c 'echo RAN' ) >"$T/out" 2>"$T/err" || rc=$?
	local out err lines
	out=$(cat "$T/out"); err=$(cat "$T/err"); lines=$(wc -l <"$T/err")
	[ "$rc" = 125 ] || fail "$var=\"$val\": exit status $rc, expected 125 (stderr: $err)"
	[ -z "$out" ] || fail "$var=\"$val\": the program ran (stdout: $out)"
	[ "$lines" = 1 ] || fail "$var=\"$val\": expected exactly one line on stderr, got $lines: $err"
	case $err in rlthrottle:*) ;; *) fail "$var=\"$val\": stderr does not start with 'rlthrottle:': $err" ;; esac
	case $err in *"$var"*) ;; *) fail "$var=\"$val\": stderr does not name $var: $err" ;; esac
	info "$var=\"$val\" -> 125: $err"
}

# The example from rlthrottle(7) RULES: a bare rate for bytes or messages.
check_bad RLT_SEND "1000/s"
check_bad RLT_RECV "1000/s"
err=$(cat "$T/err")
assert_match "bare-unit message mentions the unit" 'unit' "$err"

# One bad rule per variable.
check_bad RLT_CONNECT "abc"
check_bad RLT_CONNECT "10/s algo=bogus"
check_bad RLT_ACCEPT "10/fortnight"
check_bad RLT_ACCEPT "/s"
check_bad RLT_SEND "1MiB/s burst=lots"
check_bad RLT_SEND "1MiB/s nosuchkey=1"
check_bad RLT_RECV "1MiB/s action=explode"
check_bad RLT_RECV "1MiB/s peer=300.1.2.3"
check_bad RLT_CONNS "many"
check_bad RLT_CONNS "-3"

# Bad values of the keys (rlthrottle(7) RULES table).
check_bad RLT_SEND "1MiB/s family=carrier-pigeon"
check_bad RLT_SEND "1MiB/s port=70000"
check_bad RLT_SEND "1MiB/s max-wait=forever"
check_bad RLT_SEND "1MiB/s errno=ENOTANERRNO"
check_bad RLT_SEND "1MiB/s scope=galaxy"
check_bad RLT_SEND "1MiB/s algo=sliding-log"          # sliding-log: calls and messages only
check_bad RLT_SEND "2000000msg/s algo=sliding-log"    # over the 1,000,000 entries of the log
check_bad RLT_RECV "10kB/s peer=10.0.0.0/99"
check_bad RLT_CONNECT "10/s;bogus"                     # one good rule and one bad one
check_bad RLT_SEND "1MiB/s burst=1MiB burst"
