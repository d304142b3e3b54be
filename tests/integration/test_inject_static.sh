#!/bin/bash
# fronts: preload (why: it tests the injector itself, tools/launcher/inject.c, which no front uses yet)
# Issue 21, item 3: the handler's blob injected at the exec of a program that has no loader (a
# static C program, busybox-static) traps the filter's calls (the blob's counts), and leaves the
# program its own /proc/self/exe, argv and auxv. A program that maps the blob's window itself,
# or a launcher that may not ptrace, fail in one line with status 125.
# parallel-safe
. "$(dirname "$0")/lib.sh"
. "$ITEST_DIR/inject_lib.sh"

rc=0
injected "$PROG" calls 50 >"$T/out" 2>"$T/err" || rc=$?
show "$T/out" "$T/err" "$T/rep"
assert_eq "static C program's status" 0 "$rc"
assert_eq "its output" "ok 50" "$(cat "$T/out")"
assert_eq "report lines" 1 "$(wc -l <"$T/rep")"
# each of the 50 rounds: a raw getppid and glibc's getppid(), and a write to fd 600
assert_eq "getppid trapped" 100 "$(rep getppid)"
assert_eq "write on fd >= 512 trapped" 50 "$(rep write)"
assert_eq "exit_group trapped" 1 "$(rep exit_group)"
assert_eq "first image" 1 "$(rep first)"
assert_eq "its /proc/self/exe" "$PROG" "$(rep exe)"

rm -f "$T/rep"
rc=0
injected "$BB" sh -c 'for i in 1 2 3; do echo $i >/dev/null; done; echo done' >"$T/out" 2>"$T/err" || rc=$?
show "$T/out" "$T/err" "$T/rep"
assert_eq "busybox's status" 0 "$rc"
assert_eq "its output" done "$(cat "$T/out")"
assert_eq "busybox's exit_group trapped" 1 "$(rep exit_group)"
assert_eq "its writes below fd 512 not trapped" 0 "$(rep write)"

# The launcher exits with the command's status, 128 + the signal that killed it.
rc=0
injected "$BB" sh -c 'kill -TERM $$' >"$T/out" 2>"$T/err" || rc=$?
assert_eq "killed by SIGTERM: the launcher's status" 143 "$rc"

# What the program sees of itself, plain and injected: the same, word for word.
"$PROG" self a 'b c' >"$T/plain" 2>&1
injected "$PROG" self a 'b c' >"$T/inj" 2>&1 || fail "trapprog self failed injected: $(cat "$T/inj")"
show "$T/inj"
diff "$T/plain" "$T/inj" >"$T/diff" || { show "$T/diff"; fail "the program sees itself differently injected"; }
assert_eq "AT_ENTRY is its _start" entry_is_start=1 "$(grep entry_is_start "$T/inj")"
assert_eq "argv kept" "argv[3]=b c" "$(grep 'argv\[3\]' "$T/inj")"
injected "$BB" readlink /proc/self/exe >"$T/exe" 2>&1
assert_eq "busybox's /proc/self/exe" "$BB" "$(cat "$T/exe")"

# The window taken by the program: a clear error, status 125, the program not run.
rc=0
injected "$ITEST_BIN/trapprog_taken" calls 1 >"$T/out" 2>"$T/err" || rc=$?
show "$T/out" "$T/err"
assert_eq "window taken: status" 125 "$rc"
assert_eq "window taken: one line" 1 "$(wc -l <"$T/err")"
assert_match "window taken: the message" "0x5a5a00000000.* is taken" "$(cat "$T/err")"
assert_eq "window taken: the program did not run" "" "$(cat "$T/out")"

# No ptrace, no seccomp (a filter that answers them EPERM, as a container's may): one line, 125.
rc=0
"$PROG" deny ptrace "$INJ" "$BLOB" -- "$PROG" calls 1 >"$T/out" 2>"$T/err" || rc=$?
show "$T/out" "$T/err"
assert_eq "ptrace denied: status" 125 "$rc"
assert_eq "ptrace denied: the message" \
	"injectrun: ptrace is not allowed here (PTRACE_SEIZE: Operation not permitted)" "$(cat "$T/err")"
assert_eq "ptrace denied: the program did not run" "" "$(cat "$T/out")"
rc=0
"$PROG" deny seccomp "$INJ" "$BLOB" -- "$PROG" calls 1 >"$T/out" 2>"$T/err" || rc=$?
show "$T/out" "$T/err"
assert_eq "seccomp denied: status" 125 "$rc"
assert_eq "seccomp denied: one line" 1 "$(wc -l <"$T/err")"
assert_match "seccomp denied: the message, the blob's own after it" \
	"^injectrun: the handler's init failed: Operation not permitted \(seccomp\(SET_MODE_FILTER\) failed\)" "$(cat "$T/err")"
assert_eq "seccomp denied: the program did not run" "" "$(cat "$T/out")"

# Already traced: under strace -f the launcher's child is traced already, PTRACE_SEIZE fails.
if command -v strace >/dev/null 2>&1; then
	rc=0
	strace -f -o /dev/null "$INJ" "$BLOB" -- "$PROG" calls 1 >"$T/out" 2>"$T/err" || rc=$?
	show "$T/out" "$T/err"
	assert_eq "no ptrace: status" 125 "$rc"
	assert_match "no ptrace: the message" "^injectrun: ptrace is not allowed here" "$(cat "$T/err")"
	assert_eq "no ptrace: one line" 1 "$(wc -l <"$T/err")"
fi
echo "PASS"
