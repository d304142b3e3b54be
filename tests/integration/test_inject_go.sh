#!/bin/bash
# fronts: preload (why: it tests the injector itself, tools/launcher/inject.c, which no front uses yet)
# Issue 21, items 3 and 4: a Go program (static, raw system calls) with the minimal blob injected
# runs its GC, goroutines and SIGURG preemption and receives 30 SIGUSR1 through os/signal: its
# rt_sigaction and rt_sigprocmask calls are trapped and answered with SIGSYS kept out of every
# mask, its own SIGSYS action kept aside. Its os/exec (a vfork'd child's trapped execve) runs a
# command that is injected in turn; an exec from a thread that is not the leader is injected.
# parallel-safe
. "$(dirname "$0")/lib.sh"
. "$ITEST_DIR/inject_lib.sh"
command -v go >/dev/null 2>&1 || skip "go is not installed"

# built in the build directory, its cache kept there (a second run builds nothing)
gdir=$(cd "$ITEST_BIN/.." && pwd)/go
mkdir -p "$gdir"
cp "$ITEST_DIR/../inject/gotrap.go" "$gdir/"
(cd "$gdir" && GOFLAGS=-mod=mod GOCACHE=$gdir/cache GOPATH=$gdir/path GO111MODULE=auto \
	CGO_ENABLED=0 timeout 100 go build -o gotrap gotrap.go) >"$T/build.log" 2>&1 ||
	{ show "$T/build.log"; fail "cannot build gotrap.go"; }

rc=0
timeout -k 2 60 "$INJ" -r "$T/rep" "$BLOB" -- "$gdir/gotrap" "$BB" echo hello >"$T/out" 2>"$T/err" || rc=$?
show "$T/out" "$T/err" "$T/rep"
assert_eq "Go's status" 0 "$rc"
assert_eq "SIGUSR1 received by os/signal" 30 "$(kv sigusr1 "$T/out")"
assert_eq "the spinning goroutine preempted (SIGURG)" 1 "$(kv preempted "$T/out")"
assert_ge "GC cycles" 1 "$(kv gc "$T/out")"
assert_eq "os/exec's command ran" '"ok:hello"' "$(kv exec "$T/out")"
# the reports: busybox's (the exec'd child, which exits first) and Go's
assert_eq "report lines" 2 "$(wc -l <"$T/rep")"
assert_eq "the exec'd child was injected" "0 $BB" "$(rep first 1) $(rep exe 1)"
assert_eq "Go's getppid trapped" 1000 "$(rep getppid 2)"
assert_eq "Go's UDP sendto trapped" 100 "$(rep sendto 2)"
assert_ge "Go's rt_sigaction trapped" 50 "$(rep rt_sigaction 2)"
assert_ge "Go's rt_sigprocmask trapped" 5 "$(rep rt_sigprocmask 2)"
assert_eq "Go's execve trapped" 1 "$(rep execve 2)"

# An execve from a thread that is not the group's leader (syscall.Exec on a locked thread): the
# new image (under the leader's pid) is injected.
rm -f "$T/rep"
rc=0
timeout -k 2 60 "$INJ" -r "$T/rep" "$BLOB" -- "$gdir/gotrap" -threadexec "$PROG" calls 2 >"$T/out" 2>"$T/err" || rc=$?
show "$T/out" "$T/err" "$T/rep"
assert_eq "thread exec: status" 0 "$rc"
assert_eq "thread exec: from a thread not the leader" false "$(kv leader "$T/out")"
assert_eq "thread exec: the new image's output" "ok 2" "$(tail -n 1 "$T/out")"
assert_eq "thread exec: the new image's getppid trapped" 4 "$(rep getppid)"

# Without SIGSYS kept out of its masks and its own SIGSYS action kept aside, Go dies of SIGSYS
# (what the stripping is for: the check that the test above could fail).
rc=0
timeout -k 2 60 "$INJ" -n "$BLOB" -- "$gdir/gotrap" >"$T/out" 2>"$T/err" || rc=$?
assert_eq "unstripped: Go dies of SIGSYS (exit 2 from its own handler or 159)" 1 \
	"$( [ "$rc" = 2 ] || [ "$rc" = 159 ] && echo 1 || echo "$rc")"
echo "PASS"
