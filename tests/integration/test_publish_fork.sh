#!/bin/bash
# Pages across fork (rlthrottle(1) COMMANDS with §4): a fork's child publishes its own page, counting from
# zero, and removes it at its exit (exit() or _exit: a forking server's children, subshells),
# leaving the parent's; a child of a fork that ran no atfork
# handlers (a raw fork system call) has the parent's page mapped, and its exit must not remove
# the parent's page either (it used to: the exit path trusted the preload's owner pid, which
# such a child takes over at its first close). An exec replaces the page with the new program's.
# fronts: preload (the preload's fork and exec handling of its page)
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
export RLTHROTTLE
cat >"$T/forks.py" <<'PY'
import ctypes, os, socket, sys, time
# a page by its exact name (uid-pid-start): an earlier process of a pid may have left one
def path(pid):
    st = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[19]
    return "/dev/shm/rlthrottle-%d-%d-%s" % (os.geteuid(), pid, st)
page = os.path.exists
me = path(os.getpid())
assert page(me), "no page of the parent"
a, b = socket.socketpair()
a.send(b"x" * 1000)                      # counted in the parent's page
pid = os.fork()
if pid == 0:
    ok = page(path(os.getpid())) and page(me)
    sys.exit(0 if ok else 3)             # exit(): its own page goes
kid = path(pid)                          # alive or a zombie: /proc/PID/stat is there
_, st = os.waitpid(pid, 0)
assert os.WEXITSTATUS(st) == 0, "fork child: no page of its own"
assert not page(kid), "fork child's page left after its exit"
assert page(me), "the parent's page went with its fork child"
libc = ctypes.CDLL(None, use_errno=True)
pid = libc.syscall(57)                   # SYS_fork on x86_64: no atfork handlers run
if pid == 0:
    s = socket.socket(); s.close()       # a hook that takes over the preload's owner pid
    sys.exit(0)
os.waitpid(pid, 0)
assert page(me), "a raw fork child's exit removed the parent's page"
# _exit, as a forking server's child (socketserver) and a shell's subshell end: no handlers run,
# so the page went only with the _exit hook; a page left per child fills /dev/shm
kids = []
for i in range(20):
    pid = os.fork()
    if pid == 0:
        os._exit(0 if page(path(os.getpid())) else 3)
    kids.append(path(pid))
    _, st = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(st) == 0, "fork child: no page of its own"
left = [k for k in kids if page(k)]
assert not left, "pages left by %d of 20 children that ended with os._exit" % len(left)
assert page(me), "the parent's page went with a child's _exit"
# a vfork child (posix_spawn, subprocess) whose exec fails ends with _exit: it shares the
# parent's memory and page, which must stay
import subprocess
try:
    subprocess.Popen(["/nonexistent/rlt-itest-program"])
except FileNotFoundError:
    pass
assert page(me), "a vfork child's failed exec removed the parent's page"
print("ok", me)
sys.stdout.flush()
time.sleep(0.2)
PY
[ "$(uname -m)" = x86_64 ] || skip "the raw fork system call number is x86_64's"
RLT_SEND="1MiB/s" pre python3 "$T/forks.py" >"$T/out" 2>"$T/err" || { show "$T/out" "$T/err"; fail "fork checks failed"; }
show "$T/out"
mine=$(awk '{ print $2 }' "$T/out")
case "$mine" in /dev/shm/rlthrottle-*) ;; *) fail "no page path printed: $mine" ;; esac
[ -e "$mine" ] && fail "the parent's page is left after its exit"
info "fork child: own page, removed at its exit; raw fork child: parent's page kept"

# a shell's subshells end with _exit too
# (each prints its pid and start time, field 22 of its stat)
RLT_SEND="1MiB/s" pre sh -c 'for i in 1 2 3 4 5 6 7 8; do (echo $(sh -c "set -- \$(cat /proc/\$PPID/stat); echo \$PPID \${22}")) ; done' >"$T/sub.out" 2>&1 ||
	{ show "$T/sub.out"; fail "subshells failed"; }
while read -r p st; do
	[ -n "$st" ] || fail "subshell line without a start time: $p"
	[ -e "/dev/shm/rlthrottle-$(id -u)-$p-$st" ] && fail "subshell $p left its page"
done <"$T/sub.out"
info "$(wc -l <"$T/sub.out") subshells ended with _exit: no page left"

# exec in the same process (same pid, same start time): the new program's page replaces the old
RLT_SEND="1MiB/s" pre python3 -c '
import os
os.environ["RLT_SEND"] = "2MiB/s"
os.execvp("sh", ["sh", "-c", "echo $$; \"$0\" stats $$", os.environ["RLTHROTTLE"]])' >"$T/exec.out" 2>"$T/exec.err" ||
	{ show "$T/exec.err"; fail "exec: stats of the new program failed"; }
grep -q '"rule":"2MiB/s"' "$T/exec.out" || { show "$T/exec.out"; fail "exec: the page does not hold the new program's rule"; }
grep -q '"rule":"1MiB/s"' "$T/exec.out" && fail "exec: the old program's rule is still published"
info "exec: the page holds the new program's rule"
exit 0
