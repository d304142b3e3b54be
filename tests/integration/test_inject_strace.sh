#!/bin/bash
# fronts: preload (why: it tests the injector itself, tools/launcher/inject.c, which no front uses yet)
# parallel-safe: counts only (the calls strace sees)
# Issue 21, item 3: the launcher detaches after the injection, so a tracer can attach to the
# injected program as usual: strace -p sees its trapped calls (as SIGSYS) and the program ends
# with every call answered.
. "$(dirname "$0")/lib.sh"
. "$ITEST_DIR/inject_lib.sh"
need_cmd strace

injected_bg "$PROG" loop 2000
lpid=$LPID
cpid=$CPID
sleep 0.3
assert_eq "no tracer after the injection" 0 "$(awk '/^TracerPid:/ { print $2 }' /proc/$cpid/status)"
timeout 1 strace -f -p "$cpid" -e trace=getppid -o "$T/strace" 2>"$T/strace.err"
wait_pid "$lpid" 10 || fail "the command did not end"
show "$T/out" "$T/err" "$T/rep" "$T/strace.err"
assert_eq "its output" "loop 200" "$(cat "$T/out")"
assert_ge "getppid calls strace saw" 20 "$(grep -c 'getppid()' "$T/strace")"
assert_ge "SIGSYS strace saw" 20 "$(grep -c 'SIGSYS {si_signo=SIGSYS, si_code=SYS_SECCOMP' "$T/strace")"
assert_eq "every getppid trapped" 200 "$(rep getppid)"
echo "PASS"
