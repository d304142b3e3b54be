#!/bin/bash
# RLT_CONNS in a shared scope: a connection whose slot was taken at one fd, copied to a higher
# fd (dup2) and the first fd closed, then inherited by a fork's child. The child counts it as its
# own, so that two closes in two processes give back two holds: the count ends at 0. (The child
# looked for held connections only up to the fd that took the slot: it missed the copy, and the
# second close took the count below 0, which wrapped round and refused every connection.)
# fronts: preload seccomp
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
name=itest-dupfork-$$
trap 'rm -f /dev/shm/rlthrottle.$name; cleanup' EXIT
port=$(free_port)
RLT_LAUNCHER=$(dirname "$RLT_LIB")/rlthrottle RLT_CONNS="2 scope=shared:$name" \
	throttled python3 "$ITEST_DIR/conns_dupfork.py" "$port" "$name" >"$T/out" 2>"$T/err" ||
	{ show "$T/out" "$T/err"; fail "conns_dupfork.py failed"; }
show "$T/out"
assert_eq "open after the accept" 1 "$(awk '$1 == "accepted" { print $2 }' "$T/out")"
assert_eq "open after the copy, its first fd closed" 1 "$(awk '$1 == "moved" { print $2 }' "$T/out")"
assert_eq "open after the child closed its copy and ended" 1 \
	"$(awk '$1 == "child_closed" { print $2 }' "$T/out")"
assert_eq "open after the parent closed its own" 0 "$(awk '$1 == "parent_closed" { print $2 }' "$T/out")"
