#!/bin/bash
# One voice across the commands (rlthrottle(1) OPTIONS, issue 19): every subcommand answers --help on stdout
# with status 0, `rlthrottle help [CMD]` prints it too; usage errors of top, stats, set, shm
# and --check exit 2 while running a command keeps 125; --log, --no-inherit, --no-publish set
# their variables; --stats - is refused (stdout is the program's); a trickle or pv style bare
# number says what to write; --check prints rules in the units written, and says so when there
# are none; set takes the launcher's names for a variable.
# fronts: preload (the launcher's own arguments: no throttled call is made by most of it)
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_lib
R=$(dirname "$RLT_LIB")/rlthrottle

# --help and help CMD: stdout, status 0, nothing on stderr
for c in "" top stats set shm; do
	rc=0
	# shellcheck disable=SC2086
	$R $c --help >"$T/out" 2>"$T/err" || rc=$?
	assert_eq "rlthrottle $c --help status" 0 "$rc"
	[ -s "$T/err" ] && fail "rlthrottle $c --help wrote to stderr: $(cat "$T/err")"
	grep -q "usage: rlthrottle $c" "$T/out" || fail "rlthrottle $c --help: no usage line: $(head -2 "$T/out")"
	rc=0
	# shellcheck disable=SC2086
	$R help $c >"$T/out2" 2>"$T/err" || rc=$?
	assert_eq "rlthrottle help $c status" 0 "$rc"
	cmp -s "$T/out" "$T/out2" || fail "rlthrottle help $c differs from rlthrottle $c --help"
done
rc=0; $R help nosuch >/dev/null 2>"$T/err" || rc=$?
assert_eq "rlthrottle help nosuch status" 2 "$rc"

# usage errors: 2 for the subcommands and --check, 125 when running a command
usage_rc() { # EXPECTED ARGS...
	local want=$1 rc=0
	shift
	"$R" "$@" >/dev/null 2>"$T/err" </dev/null || rc=$?
	assert_eq "rlthrottle $* status" "$want" "$rc"
	[ "$(wc -l <"$T/err")" -ge 1 ] || fail "rlthrottle $*: nothing on stderr"
	head -1 "$T/err" | grep -q '^rlthrottle' || fail "rlthrottle $*: stderr does not start rlthrottle: $(cat "$T/err")"
}
usage_rc 2 top --bogus
usage_rc 2 stats --bogus
usage_rc 2 set 1
usage_rc 2 shm bogus
usage_rc 2 --check --bogus
usage_rc 2 --bogus --check
usage_rc 2 --check -d "1000/s"
usage_rc 125 --bogus -- true
usage_rc 125 -d "1000/s" -- true

# --stats -: refused, the command not run, and RLT_STATS=- likewise
usage_rc 125 --stats - -- sh -c 'echo RAN'
grep -q 'stderr' "$T/err" || fail "--stats - does not say what to write: $(cat "$T/err")"
rc=0; RLT_STATS=- pre sh -c 'echo RAN' >"$T/out" 2>"$T/err" || rc=$?
assert_eq "RLT_STATS=- status" 125 "$rc"
[ -e ./- ] && fail "RLT_STATS=- made a file named -"
[ -s "$T/out" ] && fail "RLT_STATS=- ran the program"

# a bare number (trickle -d 1024: KiB/s; pv -L 1M: bytes) says what to write instead
usage_rc 125 -d 1024 -- true
assert_match "-d 1024 suggests KiB/s" '1024KiB/s' "$(cat "$T/err")"
usage_rc 125 -u 1M -- true
assert_match "-u 1M suggests 1MiB/s" '1MiB/s' "$(cat "$T/err")"

# --log, --no-inherit, --no-publish: the variables the command sees
out=$($R --log info --no-inherit --no-publish -- sh -c 'echo "$RLT_LOG $RLT_INHERIT $RLT_PUBLISH"' 2>/dev/null)
assert_eq "--log --no-inherit --no-publish" "info 0 0" "$out"
usage_rc 125 --log loud -- true
assert_match "--log loud names RLT_LOG" 'RLT_LOG' "$(cat "$T/err")"
# --no-publish: no page while the command runs
# (--per-process: the launcher executes the command, so that $! is the throttled process;
# the same command without --no-publish shows that the check would see a page)
# (the command says when it runs: by then the library has made its page, or would have)
for flag in "" --no-publish; do
	rm -f "$T/up"
	# shellcheck disable=SC2086
	$R --per-process $flag -d 1MiB/s -- sh -c 'echo up >"$1"; sleep 3' sh "$T/up" &
	lp=$!
	wait_file "$T/up" 20
	got=yes; wait_page "$lp" 2 >/dev/null || got=no
	kill "$lp" 2>/dev/null; wait "$lp" 2>/dev/null
	[ -z "$flag" ] && [ $got = no ] && fail "without --no-publish: no page of $lp, running"
	[ -n "$flag" ] && [ $got = yes ] && fail "--no-publish: a page was published"
done

# --check: the units written, and a line when there is no rule
out=$($R --check -d 1MiB/s -u "2kB/s burst=4000B" -c 10/s)
assert_match "--check 1MiB/s" '^RLT_RECV: 1MiB/s .*burst=1MiB ' "$(echo "$out" | grep RLT_RECV)"
assert_match "--check 2kB/s" '^RLT_SEND: 2kB/s .*burst=4kB ' "$(echo "$out" | grep RLT_SEND)"
out=$($R --check)
assert_match "--check with no rule" '^no rules' "$out"

# set: the launcher's names (checked on a live process: each reaches its rule)
# a process that sends on loopback all the time, so that each set applies at once
cat >"$T/chatter.py" <<'PY'
import socket, sys, time
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
c = socket.create_connection(srv.getsockname()); a, _ = srv.accept()
open(sys.argv[1], "w").write("up")
end = time.time() + 30
while time.time() < end:
    c.send(b"x" * 1024); a.recv(65536); time.sleep(0.005)
PY
# (--per-process: the launcher executes the command, so that $! is the throttled process)
# (its page once python itself runs: python3 may be a script that execs it, and each exec
# makes the page again)
$R --per-process -d "1MiB/s" -u "1MiB/s" -- python3 "$T/chatter.py" "$T/chatter.up" &
sp=$!
wait_file "$T/chatter.up" 20
wait_page "$sp" 20 >/dev/null || fail "no page of the chatter ($sp) within 20 s"
for v in RLT_RECV recv -d --recv download rlt_recv; do
	$R set "$sp" "$v" 512KiB/s >"$T/out" 2>"$T/err" || fail "set $sp $v: $(cat "$T/err")"
done
$R set "$sp" upload "256KiB/s" >/dev/null 2>"$T/err" || fail "set upload: $(cat "$T/err")"
$R stats "$sp" >"$T/json"
grep -q '"rule":"256KiB/s"' "$T/json" || fail "set upload did not reach RLT_SEND: $(cat "$T/json")"
rc=0; $R set "$sp" sideways 1MiB/s 2>"$T/err" || rc=$?
assert_eq "set with an unknown VAR" 2 "$rc"
kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null || true
info "ok"
