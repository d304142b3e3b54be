#!/bin/bash
# A shell's background job under --seccomp outlives the command's first process: `sh -c 'job &'`
# returns at once, and the job then execs. Each exec needs the launcher (it injects the new
# image); before, the launcher left when the first process ended, and the job's exec failed
# with EPERM ("sleep: Operation not permitted"). Now the launcher is the command's subreaper
# and serves until its last process has ended: the job's exec runs, throttled (a static busybox
# nc uploading 2 MiB at 1 MiB/s after 1 MiB of burst), every byte arrives, and the exit status
# is still the first process's.
source "$(dirname "$0")/../integration/lib.sh"
need_lib
need_cmd busybox python3
L=$(dirname "$RLT_LIB")/rlthrottle
n=$((2 * 1048576))
head -c $n /dev/urandom >"$T/f.bin"

# the plain case: a background sleep execs after the shell has exited
out=$(timeout 10 "$L" --seccomp -- busybox sh -c '(sleep 0.3; busybox true && echo job-ran) & echo bg; exit 3' 2>&1 | cat; echo "${PIPESTATUS[0]}")
assert_eq "a background job's exec after the shell ended: output and status" "bg job-ran 3" "$(echo $out)"

port=$(free_port)
bg sink python3 "$(dirname "$0")/sha_sink.py" "$port"
spid=$LAST_PID
wait_port "$port"
t0=$(date +%s%N)
timeout 20 "$L" --seccomp -u 1MiB/s -- busybox sh -c "(sleep 0.3; exec busybox nc 127.0.0.1 $port <'$T/f.bin') & exit 0" \
	>"$T/up.out" 2>"$T/up.err"
st=$?
t1=$(date +%s%N)
wait_pid "$spid" 10 || fail "the sink did not finish"
show "$T/sink.out" "$T/up.err"
assert_eq "the launcher's status (the shell's)" 0 "$st"
assert_eq "bytes the background job uploaded" $n "$(kv bytes "$T/sink.out")"
assert_eq "every byte as sent" "$(sha256sum <"$T/f.bin" | cut -d' ' -f1)" "$(kv sha "$T/sink.out")"
# 1 MiB after the burst at 1 MiB/s: the job is throttled
assert_range "upload time (s): throttled" 0.7 3 "$(kv secs "$T/sink.out")"
# the launcher waited for the job (it served its exec), and no longer than that
assert_range "launcher's time (s): until the job ended" 1.0 6 "$(calc "($t1 - $t0) / 1e9")"
exit 0
