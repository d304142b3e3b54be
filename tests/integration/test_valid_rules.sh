#!/bin/bash
# rlthrottle(7) RULES: every form the grammar allows is accepted: the program runs, exits 0, and nothing is
# printed at the default log level. Also: no variables at all = the library is inert.
# fronts: preload seccomp
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_lib
ok() { # VAR VALUE
	local rc=0
	( export "$1=$2"; throttled sh -c 'echo RAN' ) >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 0 ] && [ "$(cat "$T/out")" = RAN ] || fail "$1=\"$2\" rejected: status $rc, stderr: $(cat "$T/err")"
	[ -s "$T/err" ] && fail "$1=\"$2\": unexpected stderr: $(cat "$T/err")"
	info "accepted $1=\"$2\""
}
ok RLT_CONNECT "10/s"
ok RLT_CONNECT "120/min"
ok RLT_CONNECT "5/100ms"
ok RLT_CONNECT "1/2h"
ok RLT_CONNECT "2.5/s burst=5 action=reject errno=EPERM"
ok RLT_ACCEPT "50/s algo=leaky burst=10"
ok RLT_ACCEPT "100/s algo=fixed-window port=8000-9000"
ok RLT_SEND "1MiB/s"
ok RLT_SEND "8Mbit/s"
ok RLT_SEND "300msg/s algo=sliding-log"
ok RLT_SEND "100kB/s algo=sliding-window family=all"
ok RLT_SEND "1GB/s burst=64KiB max-wait=250ms peer=::1 scope=connection"
ok RLT_SEND "10kbit/s peer=127.0.0.0/8 port=80"
ok RLT_SEND "1.5MB/s; 100msg/s family=unix"
ok RLT_RECV "1GiB/s; 10kB/s peer=10.0.0.0/8"
ok RLT_RECV "64KiB/500ms action=reject errno=EAGAIN family=inet"
ok RLT_RECV "1Gbit/s algo=token"
ok RLT_CONNS "50"
ok RLT_CONNS "3 action=delay"
ok RLT_STATS "$T/st.%p.json"
ok RLT_LOG "error"
ok RLT_ON_ERROR "exit"
# --seccomp refuses RLT_INHERIT=0 by design (its filter stays with what the command executes)
[ "$(front)" = preload ] && ok RLT_INHERIT "0"
rc=0
throttled sh -c 'echo RAN' >"$T/out" 2>"$T/err" || rc=$?
assert_eq "no variables: status" 0 "$rc"
assert_eq "no variables: stderr" "" "$(cat "$T/err")"
