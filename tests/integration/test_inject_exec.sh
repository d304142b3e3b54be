#!/bin/bash
# fronts: preload (why: it tests the injector itself, tools/launcher/inject.c, which no front uses yet)
# Issue 21, item 3: an exec inside the command asks the launcher (its socket) to attach first,
# and the new image is injected too: its own counts, the filter not stacked again (first=0).
# An exec that fails leaves the program running with its handler (the launcher detached). An
# exec after the launcher was killed fails with EPERM, and the program goes on: it does not die
# of SIGSYS in a new image that has the filter and no handler.
# parallel-safe
. "$(dirname "$0")/lib.sh"
. "$ITEST_DIR/inject_lib.sh"

# busybox sh execs busybox: the second image's counts
rc=0
injected "$BB" sh -c 'exec busybox sh -c "echo second"' >"$T/out" 2>"$T/err" || rc=$?
show "$T/out" "$T/err" "$T/rep"
assert_eq "busybox exec: status" 0 "$rc"
assert_eq "busybox exec: output" second "$(cat "$T/out")"
assert_eq "busybox exec: one report (the first image never exits)" 1 "$(wc -l <"$T/rep")"
assert_eq "busybox exec: the report is the second image's" 0 "$(rep first)"
assert_eq "busybox exec: its exit_group trapped" 1 "$(rep exit_group)"

# a static C program that execs itself, which execs busybox: three images, counts per image
rm -f "$T/rep"
rc=0
injected "$PROG" exec 5 "$PROG" exec 7 "$PROG" calls 3 >"$T/out" 2>"$T/err" || rc=$?
show "$T/out" "$T/err" "$T/rep"
assert_eq "exec chain: status" 0 "$rc"
assert_eq "exec chain: output" "ok 3" "$(cat "$T/out")"
assert_eq "exec chain: the last image's getppid" 6 "$(rep getppid)"
assert_eq "exec chain: the last image's writes on fd 600" 3 "$(rep write)"
assert_eq "exec chain: not the first image" 0 "$(rep first)"

# a failed exec: the launcher detaches; the program goes on trapped and counted
rm -f "$T/rep"
rc=0
injected "$PROG" exec 4 "$T/no-such-program" >"$T/out" 2>"$T/err" || rc=$?
show "$T/out" "$T/err" "$T/rep"
assert_eq "failed exec: status" 3 "$rc"
assert_eq "failed exec: its errno" "exec failed: errno=2 (No such file or directory)" "$(head -n 1 "$T/out")"
assert_eq "failed exec: the launcher detached" "tracer=0" "$(sed -n 2p "$T/out")"
assert_eq "failed exec: the image's getppid" 4 "$(rep getppid)"
assert_eq "failed exec: the execve trapped" 1 "$(rep execve)"
assert_eq "failed exec: not refused (the launcher attached)" 0 "$(rep refused_execs)"

# the launcher killed, then an exec: EPERM, and the program ends on its own
rm -f "$T/rep" "$T/go"
injected_bg "$PROG" waitexec "$T/go" "$BB" true
lpid=$LPID
cpid=$CPID
sleep 0.2
kill -KILL "$lpid"
wait "$lpid" 2>/dev/null
touch "$T/go"
i=0
while kill -0 "$cpid" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
kill -0 "$cpid" 2>/dev/null && fail "the command did not end after its exec was refused"
show "$T/out" "$T/rep"
assert_eq "launcher gone: the exec's errno" "exec failed: errno=1 (Operation not permitted)" "$(cat "$T/out")"
assert_eq "launcher gone: refused by the handler" 1 "$(rep refused_execs)"
assert_eq "launcher gone: the program ended by exit_group, not SIGSYS" 1 "$(rep exit_group)"
echo "PASS"
