#!/bin/bash
# A non-blocking accept or connect never sleeps (issue 17; rlthrottle(7) THROTTLED CALLS): an
# event loop (python's selectors: epoll) keeps turning while RLT_ACCEPT or RLT_CONNECT holds new
# connections back. The server's accept() fails with EAGAIN while the rate does not allow one,
# the connection staying in the kernel's queue, and its wait reports the listener when it does;
# the client's connect() starts the attempt at once and its wait reports the completion when the
# rate allows it. Either way the rate holds, every connection gets through, no accept() or
# connect() call takes over 100 ms (the old build slept 250 ms in each), an existing connection
# is answered within 150 ms throughout, and the loop does not spin.
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3

# the unthrottled clients: one connection that pings all along, then a crowd of `n` at once
cat >"$T/crowd.py" <<'PY'
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
ping = socket.create_connection(("127.0.0.1", port)); ping.settimeout(5)
time.sleep(0.3)
crowd = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
worst = 0; end = time.time() + 2.5
while time.time() < end:
    s = time.monotonic(); ping.send(b"p"); assert ping.recv(16) == b"p"
    worst = max(worst, time.monotonic() - s); time.sleep(0.02)
for c in crowd:
    c.settimeout(10); c.send(b"hello"); assert c.recv(16) == b"hello", "a connection of the crowd was not served"
print("served=%d worst_ping_ms=%d" % (n, worst * 1000))
PY

# accept: 1 ping connection + 12 at once under 4/s (burst 1): 12 intervals of 250 ms
# the throttled server: accept_loop.py, on epoll
RLT_ACCEPT="4/s burst=1" bg server throttled python3 "$ITEST_DIR/accept_loop.py" "$T/port" 13 epoll
spid=$LAST_PID
wait_file "$T/port" 10
python3 "$T/crowd.py" "$(cat "$T/port")" 12 >"$T/crowd.out" 2>"$T/crowd.err" ||
	{ show "$T/crowd.err" "$T/server.err"; fail "the crowd's clients failed"; }
wait_pid "$spid" 20 || { show "$T/server.err"; fail "the server did not end"; }
out=$(cat "$T/server.out")
info "server: $out; clients: $(cat "$T/crowd.out")"
assert_eq "connections accepted" 13 "$(kv accepted "$out")"
assert_eq "crowd served" 12 "$(kv served "$T/crowd.out")"
# 12 intervals of 250 ms after the first: 3 s at the rate
assert_range "accept span (ms)" 2400 4500 $(($(kv last_ms "$out") - $(kv first_ms "$out")))
assert_le "longest accept() call (ms)" 100 "$(kv max_call_ms "$out")"
assert_le "longest ping round trip while accepts are held (ms)" 150 "$(kv worst_ping_ms "$T/crowd.out")"
assert_le "server CPU (ms) over a ~3.5 s run" 1500 "$(kv cpu_ms "$out")"

# connect: 9 non-blocking connects at once under 4/s (burst 1), to an unthrottled listener
cat >"$T/listener.py" <<'PY'
import os, socket, sys, time
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(64)
open(sys.argv[1] + ".tmp", "w").write(str(srv.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
srv.settimeout(15); kept = []
for _ in range(int(sys.argv[2])):
    c, _ = srv.accept(); kept.append(c)
time.sleep(1)
PY
cat >"$T/client.py" <<'PY'
import errno, os, selectors, socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
sel = selectors.DefaultSelector(); took = []; done = []
t0 = time.monotonic()
for _ in range(n):
    s = socket.socket(); s.setblocking(False)
    c = time.monotonic(); rc = s.connect_ex(("127.0.0.1", port)); took.append(time.monotonic() - c)
    assert rc in (0, errno.EINPROGRESS), "connect_ex: %s" % os.strerror(rc)
    sel.register(s, selectors.EVENT_WRITE)
end = time.time() + 15
while len(done) < n and time.time() < end:
    for k, _ in sel.select(timeout=1):
        assert k.fileobj.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
        done.append(time.monotonic() - t0); sel.unregister(k.fileobj)
cpu = sum(os.times()[:2])
print("connected=%d last_ms=%d max_call_ms=%d cpu_ms=%d" %
      (len(done), max(done) * 1000 if done else 0, max(took) * 1000, cpu * 1000))
PY
rm -f "$T/lport"
bg listener python3 "$T/listener.py" "$T/lport" 9
lpid=$LAST_PID
wait_file "$T/lport" 10
RLT_CONNECT="4/s burst=1" throttled python3 "$T/client.py" "$(cat "$T/lport")" 9 >"$T/client.out" 2>"$T/client.err" ||
	{ show "$T/client.err"; fail "the non-blocking client failed"; }
wait_pid "$lpid" 20 || fail "the listener did not end"
out=$(cat "$T/client.out")
info "client: $out"
assert_eq "connections completed" 9 "$(kv connected "$out")"
# 8 intervals of 250 ms after the first: the last completes about 2 s after the first connect()
assert_range "last completion (ms)" 1600 3500 "$(kv last_ms "$out")"
assert_le "longest connect() call (ms)" 100 "$(kv max_call_ms "$out")"
assert_le "client CPU (ms)" 1500 "$(kv cpu_ms "$out")"

# a refused attempt is held as a completed one: a client that retries at once (epoll, one
# registration taken out and put back per attempt) still makes its attempts at the rate
cat >"$T/retry.py" <<'PY'
import errno, os, selectors, socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
sel = selectors.DefaultSelector(); refused = 0
t0 = time.monotonic()
for _ in range(n):
    s = socket.socket(); s.setblocking(False)
    rc = s.connect_ex(("127.0.0.1", port))
    if rc == errno.EINPROGRESS:
        sel.register(s, selectors.EVENT_WRITE)
        assert sel.select(timeout=5), "no completion in 5 s"
        rc = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        sel.unregister(s)
    refused += rc == errno.ECONNREFUSED
    s.close()
print("refused=%d span_ms=%d" % (refused, (time.monotonic() - t0) * 1000))
PY
closed=$(free_port)
RLT_CONNECT="4/s burst=1" throttled python3 "$T/retry.py" "$closed" 8 >"$T/retry.out" 2>"$T/retry.err" ||
	{ show "$T/retry.err"; fail "the retrying client failed"; }
info "retry: $(cat "$T/retry.out")"
assert_eq "attempts refused" 8 "$(kv refused "$T/retry.out")"
# 7 intervals of 250 ms
assert_range "8 refused attempts span (ms)" 1400 3500 "$(kv span_ms "$T/retry.out")"
exit 0
