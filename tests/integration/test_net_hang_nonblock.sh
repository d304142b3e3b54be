#!/bin/bash
# RLT_NET's hang on an event loop (issue 18; rlthrottle(7) NETWORK CONDITIONS): once the hang
# begins, a non-blocking receive gets EAGAIN and the wait reports nothing, though the peer goes
# on sending: the loop sleeps instead of spinning (the old build's selector said "readable"
# again and again, and each receive got EAGAIN). Its close= then ends the connection, and the
# wait reports the end of the stream. python's selectors (epoll) and select.poll, both fronts.
# fronts: preload seccomp
# parallel-safe: bound, no rate (no byte while hung; the end at the close= 3 s after the start: 2.8-4.5 s; CPU time)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
cat >"$T/peer.py" <<'PY'
import os, socket, sys, time
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
open(sys.argv[1] + ".tmp", "w").write(str(srv.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
srv.settimeout(10); c, _ = srv.accept(); c.settimeout(0.2)
end = time.time() + 8
while time.time() < end:
    try:
        c.send(b"x" * 1024)
    except socket.timeout:
        pass
    except OSError:
        break
    time.sleep(0.01)
PY
cat >"$T/loop.py" <<'PY'
import os, select, selectors, socket, sys, time
port, how = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port)); s.setblocking(False)
t0 = time.monotonic()
if how == "epoll":
    sel = selectors.EpollSelector(); sel.register(s, selectors.EVENT_READ)
    wait = lambda: sel.select(timeout=0.5)
else:
    p = select.poll(); p.register(s, select.POLLIN)
    wait = lambda: p.poll(500)
got = 0; late_eagain = 0; eof = None; late_bytes = 0
while time.monotonic() - t0 < 8:
    if not wait():
        continue
    try:
        d = s.recv(65536)
    except BlockingIOError:
        late_eagain += time.monotonic() - t0 > 1.3
        continue
    if not d:
        eof = time.monotonic() - t0
        break
    got += len(d)
    late_bytes += len(d) * (1.3 < time.monotonic() - t0 < 2.8)
print("got=%d late_bytes=%d late_eagain=%d eof_ms=%d cpu_ms=%d" % (got, late_bytes, late_eagain,
      (eof or 0) * 1000, sum(os.times()[:2]) * 1000))
PY
for how in epoll poll; do
	rm -f "$T/port"
	bg peer python3 "$T/peer.py" "$T/port"
	ppid=$LAST_PID
	wait_file "$T/port" 10
	RLT_NET="hang after=1s close=2s" throttled python3 "$T/loop.py" "$(cat "$T/port")" $how \
		>"$T/$how.out" 2>"$T/$how.err" || { show "$T/$how.err"; fail "$how: the loop failed"; }
	out=$(cat "$T/$how.out")
	info "$how: $out"
	kill "$ppid" 2>/dev/null; wait "$ppid" 2>/dev/null
	assert_ge "$how: bytes before the hang" 10240 "$(kv got "$out")"
	# (from 1.3 s to 2.8 s: the close at 3 s lets the kernel hand over what it holds)
	assert_eq "$how: bytes while hung" 0 "$(kv late_bytes "$out")"
	# a woken loop told EAGAIN once a look (each set's) at the most; the old build: thousands
	assert_le "$how: receives told EAGAIN while hung" 5 "$(kv late_eagain "$out")"
	# hung at 1 s, closed 2 s later
	assert_range "$how: end of stream (ms)" 2800 4500 "$(kv eof_ms "$out")"
	assert_le "$how: CPU (ms) over ~3 s" 1000 "$(kv cpu_ms "$out")"
done
exit 0
