#!/bin/bash
# Issue 17 row 10: a published page is the image's. `sh -c 'exec sleep 6'` under the preload with
# RLT_INHERIT=0, and a static program exec'd (busybox), are not throttled: the page goes at the
# exec, so `rlthrottle stats PID` does not list them and `rlthrottle set PID ...` says the
# process is not throttled, status 2 (before: listed as throttled, set answered "pending", 0).
# A throttled image exec'd publishes its own page; a failed exec keeps this image's page. Under
# --seccomp a static program exec'd is throttled (the handler is put into it), so it has a page.
# fronts: preload seccomp
# parallel-safe: statuses only (pages of its own pids, what stats and set answer)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd busybox python3
RLT=$(dirname "$RLT_LIB")/rlthrottle

# page_of PID: the page's path for PID, or nothing
page_of() { ls /dev/shm/ 2>/dev/null | grep -E "^rlthrottle-$(id -u)-$1-" | head -1; }
# exec_done PID COMM [page]: wait (5 s at most) until PID has exec'd COMM, and with "page" until
# the new image has published its page too (its constructor, just after the exec)
exec_done() {
	local i=0
	while [ "$(cat "/proc/$1/comm" 2>/dev/null)" != "$2" ] || { [ -n "${3:-}" ] && [ -z "$(page_of "$1")" ]; }; do
		[ $i -ge 100 ] && { info "pid $1: no exec of $2${3:+ with a page} within 5 s"; return 0; }
		sleep 0.05; i=$((i + 1))
	done
}

# not_throttled NAME PID: stats and set both say so, status 2, and no page is left
not_throttled() {
	"$RLT" stats "$2" >"$T/$1.stats" 2>&1
	local rs=$?
	"$RLT" set "$2" RLT_SEND 2MiB/s >"$T/$1.set" 2>&1
	local rc=$?
	show "$T/$1.stats" "$T/$1.set"
	assert_eq "$1: page left" "" "$(page_of "$2")"
	assert_eq "$1: status of stats" 2 "$rs"
	assert_eq "$1: status of set" 2 "$rc"
	assert_match "$1: set says" "not a process throttled" "$(cat "$T/$1.set")"
}

RLT_INHERIT=0 RLT_SEND=1MiB/s bg noinherit throttled sh -c 'exec sleep 6'
P1=$(prog_pid "$LAST_PID")
exec_done "$P1" sleep
not_throttled noinherit "$P1"

RLT_SEND=1MiB/s bg static throttled sh -c 'exec busybox sleep 6'
P2=$(prog_pid "$LAST_PID")
if [ "$(front)" = seccomp ]; then
	exec_done "$P2" busybox page
	[ -n "$(page_of "$P2")" ] || fail "a static program exec'd under --seccomp has no page"
else
	exec_done "$P2" busybox
	not_throttled static "$P2"
fi

# inherited: the new image's own page, and set reaches it
RLT_SEND=1MiB/s bg inherit throttled sh -c 'exec sleep 6'
P3=$(prog_pid "$LAST_PID")
exec_done "$P3" sleep page
[ -n "$(page_of "$P3")" ] || fail "an exec'd throttled program has no page"
"$RLT" stats "$P3" >"$T/inherit.stats" 2>&1 || { show "$T/inherit.stats"; fail "stats of a throttled exec"; }

# a failed exec: this image goes on, published
printf 'not a program\n' >"$T/bad.bin"
chmod +x "$T/bad.bin"
RLT_SEND=1MiB/s bg failed throttled python3 -c '
import os, sys, time
try:
    os.execv(sys.argv[1], [sys.argv[1]])
except OSError as e:
    print("exec failed:", e.errno, flush=True)
time.sleep(5)' "$T/bad.bin"
P4=$(prog_pid "$LAST_PID")
wait_file "$T/failed.out"
[ -n "$(page_of "$P4")" ] || fail "the page went with an exec that failed"
"$RLT" stats "$P4" >"$T/failed.stats" 2>&1 || { show "$T/failed.stats"; fail "stats after a failed exec"; }
"$RLT" set "$P4" RLT_SEND 2MiB/s >"$T/failed.set" 2>&1
assert_eq "status of set after a failed exec" 0 $?
