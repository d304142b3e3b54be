#!/bin/bash
# kill -9 of the launcher under --seccomp (the front inside the program). The launcher takes no
# part in a call, so the command goes on throttled: a static busybox nc uploading 3 MiB at
# 1 MiB/s keeps its rate after the launcher's death, and every byte arrives. What needs the
# launcher is the next exec (the new image gets its handler from it): an exec after its death
# fails with EPERM instead of running an image that would die of SIGSYS at its first trapped
# call. A normal end still ends: `| cat` sees EOF, the exit status is the command's.
source "$(dirname "$0")/../integration/lib.sh"
need_lib
need_cmd busybox python3
need_bin trapprog
L=$(dirname "$RLT_LIB")/rlthrottle
n=$((3 * 1048576))
# the segments of a command whose launcher was killed stay (rlthrottle(1) DESCRIPTION): shown by
# `shm list` as its launcher gone, removed by name
forget_command() {
	local s
	for s in $(ls /dev/shm | sed -n "s/^rlthrottle\.\(cmd-$1-[0-9]*\)\$/\1/p"); do
		"$L" shm list | grep -q "^$s .*launcher $1, gone" || fail "shm list does not show $s as its launcher gone"
		"$L" shm rm "$s" || fail "shm rm $s"
		info "the command's segments left by the launcher's death: removed ($s)"
	done
}
head -c $n /dev/urandom >"$T/f.bin"

# the upload: 1 MiB of burst, then 2 MiB at 1 MiB/s: about 2 s, the launcher killed 0.5 s in
port=$(free_port)
bg sink python3 "$(dirname "$0")/sha_sink.py" "$port"
spid=$LAST_PID
wait_port "$port"
# (a background job's stdin is /dev/null: the file is redirected by the shell the launcher runs,
# which then execs nc: that exec is injected while the launcher lives)
bg up "$L" --seccomp -u 1MiB/s -- busybox sh -c "exec busybox nc 127.0.0.1 $port <'$T/f.bin'"
lpid=$LAST_PID
sleep 0.5
nc_pid=$(ps -o pid=,comm= --ppid "$lpid" | awk '$2 == "busybox" || $2 == "nc" { print $1; exit }')
[ -n "$nc_pid" ] || { ps -o pid=,comm=,args= --ppid "$lpid"; cat "$T/up.err"; }
[ -n "$nc_pid" ] || fail "no busybox child of the launcher"
kill -KILL "$lpid"
wait_pid "$lpid" 5
# the orphaned program goes on by itself
i=0
while kill -0 "$nc_pid" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
kill -0 "$nc_pid" 2>/dev/null && fail "busybox nc still running 10 s after the launcher's death"
wait_pid "$spid" 10 || fail "the sink did not finish"
show "$T/sink.out"
assert_eq "bytes received after the launcher's death" $n "$(kv bytes "$T/sink.out")"
assert_eq "every byte as sent" "$(sha256sum <"$T/f.bin" | cut -d' ' -f1)" "$(kv sha "$T/sink.out")"
# 2 MiB after the burst at 1 MiB/s: still throttled once the launcher is gone
assert_range "upload time (s): the rate held without the launcher" 1.6 4 "$(kv secs "$T/sink.out")"
forget_command "$lpid"

# an exec after the launcher's death: refused (EPERM), the program told, not killed
rm -f "$T/go"
bg ex "$L" --seccomp -u 1MiB/s -- "$ITEST_BIN/trapprog" waitexec "$T/go" /bin/true
lpid=$LAST_PID
sleep 0.3
ppid=$(ps -o pid=,comm= --ppid "$lpid" | awk '$2 == "trapprog" { print $1; exit }')
[ -n "$ppid" ] || fail "no trapprog child of the launcher"
kill -KILL "$lpid"
wait_pid "$lpid" 5
touch "$T/go"
i=0
while kill -0 "$ppid" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
show "$T/ex.out" "$T/ex.err"
assert_match "the exec after the launcher's death" "exec failed: errno=1 " "$(cat "$T/ex.out")"
forget_command "$lpid"

# A normal end: the status is the command's, a pipe after the launcher ends.
out=$(timeout 10 "$L" --seccomp -- sh -c 'echo hello; exit 3' | cat; echo "${PIPESTATUS[0]}")
assert_eq "normal end: output and status" "hello 3" "$(echo $out)"
out=$(timeout 10 "$L" --seccomp -- sh -c 'sleep 0.2 & echo bg' | cat; echo "${PIPESTATUS[0]}")
assert_eq "normal end with a background child: output and status" "bg 0" "$(echo $out)"
exit 0
