#!/bin/bash
# A child that runs in its parent's memory until it execs (vfork, posix_spawn: CPython's
# subprocess) must not change the parent's state (issue 9). Its close_range(3, ~0) used to clear
# the parent's fd table: with RLT_CONNS=2 the parent could open a third connection after one
# subprocess.run, and a connection-scope budget started again from a full burst.
# Under the preload and under --seccomp (the same hooks, inside the program).
. "$(dirname "$0")/../integration/lib.sh"
need_lib
need_bin acceptor sink fdlife
need_cmd python3

cat >"$T/conns.py" <<'PY'
import errno, socket, subprocess, sys
port = int(sys.argv[1])
def dial():
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", port))
        return s, "OK"
    except OSError as e:
        s.close()
        return None, errno.errorcode.get(e.errno, "E?")
a, ra = dial()
b, rb = dial()
out = ["open1=" + ra, "open2=" + rb]
subprocess.run(["/bin/true"], check=True)  # vfork; the child calls close_range(3, ~0)
out.append("after_run=" + dial()[1])
subprocess.run(["/bin/true"], stdout=subprocess.PIPE, check=True)  # and dup2 onto 1
out.append("after_pipe=" + dial()[1])
subprocess.run(["/bin/true"], close_fds=False, check=True)  # posix_spawn
out.append("after_spawn=" + dial()[1])
a.close()
out.append("after_close=" + dial()[1])
print(" ".join(out))
PY

cat >"$T/scope.py" <<'PY'
import socket, subprocess, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
t0 = time.monotonic()
s.sendall(b"x" * 40960)  # the burst (20 KiB), then 20 KiB at 20 KiB/s: about 1 s
t1 = time.monotonic()
subprocess.run(["/bin/true"], check=True)
t2 = time.monotonic()
s.sendall(b"y" * 20480)  # the budget goes on where it stood: about 1 s more
t3 = time.monotonic()
s.close()
print("phase1_ms=%.0f run_ms=%.0f phase2_ms=%.0f" % ((t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3))
PY

start_srv acc acceptor -H -D 30 -T 40
acc_port=$SRV_PORT
for front in preload seccomp; do
	if [ $front = seccomp ]; then export UNDER_SECCOMP=1; else unset UNDER_SECCOMP; fi

	RLT_CONNS=2 throttled python3 "$T/conns.py" "$acc_port" >"$T/conns_$front.out" 2>"$T/conns_$front.err" ||
		{ show "$T/conns_$front.err"; fail "$front: python (subprocess) failed"; }
	out=$(cat "$T/conns_$front.out")
	info "$front python: $out"
	assert_eq "$front: open1" OK "$(kv open1 "$out")"
	assert_eq "$front: open2" OK "$(kv open2 "$out")"
	assert_eq "$front: a 3rd connection after subprocess.run (RLT_CONNS=2)" ECONNREFUSED "$(kv after_run "$out")"
	assert_eq "$front: ... after a run with a pipe (dup2 in the child)" ECONNREFUSED "$(kv after_pipe "$out")"
	assert_eq "$front: ... after posix_spawn" ECONNREFUSED "$(kv after_spawn "$out")"
	assert_eq "$front: after closing one of the two" OK "$(kv after_close "$out")"

	RLT_CONNS=2 throttled "$ITEST_BIN/fdlife" -p "$acc_port" vfork >"$T/vfork_$front.out" 2>"$T/vfork_$front.err" ||
		{ show "$T/vfork_$front.err"; fail "$front: fdlife vfork failed"; }
	out=$(cat "$T/vfork_$front.out")
	info "$front C vfork (close, dup2, dup, F_DUPFD, close_range, closefrom in the child): $out"
	assert_eq "$front: a 3rd connection after the vfork child" ECONNREFUSED "$(kv open3 "$out")"

	# and a child with memory of its own whose fork ran no handlers (_Fork) still keeps
	# its own table true: the file at its closed socket's number is a file
	RLT_CONNS=2 RLT_SEND=64KiB/s throttled "$ITEST_BIN/fdlife" -p "$acc_port" -f "$T/rawfork_$front" rawfork \
		>"$T/rawfork_$front.out" 2>"$T/rawfork_$front.err" || { show "$T/rawfork_$front.err"; fail "$front: fdlife rawfork failed"; }
	out=$(cat "$T/rawfork_$front.out")
	info "$front _Fork child: $out"
	assert_le "$front: _Fork child: 256 KiB to a file at a closed socket's number (ms)" 500 "$(kv write_ms "$out")"
	# each process counts its own (rlthrottle(7) BEHAVIOUR: the child's budgets are its own), under --seccomp
	# too: the handler makes the fork and the child takes its state as its own
	assert_eq "$front: _Fork child: a connection in place of the closed one" OK "$(kv child_open1 "$out")"
	assert_eq "$front: _Fork child: a 3rd one (RLT_CONNS=2)" ECONNREFUSED "$(kv child_open2 "$out")"
	assert_eq "$front: _Fork's parent: a 3rd connection" ECONNREFUSED "$(kv parent_open3 "$out")"

	start_srv "sink_$front" sink -T 20
	spid=$LAST_PID
	RLT_SEND="20KiB/s scope=connection" throttled python3 "$T/scope.py" "$SRV_PORT" >"$T/scope_$front.out" 2>"$T/scope_$front.err" ||
		{ show "$T/scope_$front.err"; fail "$front: python (scope) failed"; }
	wait_pid "$spid" 10 || fail "$front: sink did not finish"
	out=$(cat "$T/scope_$front.out")
	info "$front connection scope: $out"
	assert_eq "$front: bytes at the sink" 61440 "$(kv bytes "$T/sink_$front.out")"
	assert_range "$front: 40 KiB before subprocess.run (ms)" 700 3000 "$(kv phase1_ms "$out")"
	assert_range "$front: 20 KiB after it, from an empty bucket (ms)" 700 3000 "$(kv phase2_ms "$out")"
done
