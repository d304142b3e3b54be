#!/bin/bash
# --seccomp's own failures: exit 125 with one line on stderr, and the command never runs
# (bad options and rules; seccomp forbidden or missing; ptrace refused, as under a restricted
# ptrace_scope or a container profile: simulated with an outer seccomp filter). And the command's own status comes back: its exit
# code, 128+signal, 127 when not found.
# fronts: seccomp (the launcher's --seccomp failures and exit statuses)
# parallel-safe
. "$(dirname "$0")/lib.sh"
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$RLTHROTTLE" ] || fail "launcher not built: $RLTHROTTLE"
need_bin denysys

own_failure() { # WHAT CMD...: exit 125, one line, the command did not run
	local what=$1 rc=0; shift
	"$@" >"$T/o.out" 2>"$T/o.err" || rc=$?
	show "$T/o.err"
	assert_eq "$what: exit status" 125 "$rc"
	assert_eq "$what: lines on stderr" 1 "$(wc -l <"$T/o.err")"
	assert_nomatch "$what: the command ran" RAN "$(cat "$T/o.out")"
}
own_failure "bad rule" "$RLTHROTTLE" --seccomp -d "1000/s" -- echo RAN
own_failure "bad option" "$RLTHROTTLE" --seccomp --bogus -- echo RAN
own_failure "bad RLT_LOG" env RLT_LOG=loud "$RLTHROTTLE" --seccomp -d 1MiB/s -- echo RAN
own_failure "seccomp forbidden (EPERM)" "$ITEST_BIN/denysys" seccomp 1 "$RLTHROTTLE" --seccomp -d 1MiB/s -- echo RAN
assert_match "message" "seccomp is forbidden" "$(cat "$T/o.err")"
own_failure "no seccomp (ENOSYS)" "$ITEST_BIN/denysys" seccomp 38 "$RLTHROTTLE" --seccomp -d 1MiB/s -- echo RAN
assert_match "message" "no seccomp" "$(cat "$T/o.err")"
own_failure "ptrace forbidden (EPERM)" "$ITEST_BIN/denysys" ptrace 1 "$RLTHROTTLE" --seccomp -d 1MiB/s -- echo RAN
assert_match "message" "ptrace is not allowed" "$(cat "$T/o.err")"
# a Redis server named, not given by its address: there is no resolver inside the program, so
# it is an outage that says why (and the rule's fallback applies: deny refuses the connect)
RLT_LOG=warn "$RLTHROTTLE" --seccomp -c "10/s scope=redis://redis.invalid:6379/x fallback=deny errno=EPERM" -- \
	python3 -c 'import socket
try: socket.socket().connect(("127.0.0.1", 9))
except OSError as e: print("connect errno", e.errno)' >"$T/rn.out" 2>"$T/rn.err"
show "$T/rn.out" "$T/rn.err"
assert_eq "redis server by name: the connect refused by fallback=deny" "connect errno 1" "$(cat "$T/rn.out")"
assert_match "redis server by name: says to give its address" "given by its address" "$(cat "$T/rn.err")"

rc=0; "$RLTHROTTLE" --seccomp -d 1MiB/s -- sh -c 'exit 7' || rc=$?
assert_eq "the command's exit status" 7 "$rc"
rc=0; "$RLTHROTTLE" --seccomp -d 1MiB/s -- sh -c 'kill -TERM $$' || rc=$?
assert_eq "killed by SIGTERM: 128+15" 143 "$rc"
rc=0; "$RLTHROTTLE" --seccomp -d 1MiB/s -- no-such-command-here 2>"$T/nf.err" || rc=$?
assert_eq "command not found" 127 "$rc"
out=$("$RLTHROTTLE" --seccomp -d 1MiB/s -- echo RAN)
assert_eq "a command that runs" RAN "$out"
# stdin closed: the command still finds fd 0 closed (the filter's listener, which may take it
# in the child, is not the command's)
out=$("$RLTHROTTLE" --seccomp -d 1MiB/s -- sh -c 'if [ -e /proc/self/fd/0 ]; then echo open; else echo closed; fi' <&- 2>"$T/c0.err") ||
	{ show "$T/c0.err"; fail "--seccomp with stdin closed failed"; }
assert_eq "fd 0 of the command when the launcher's stdin is closed" closed "$out"
