#!/bin/bash
# rlthrottle(7) NETWORK CONDITIONS: connect=timeout is a black hole for a non-blocking connect
# too (curl's, Go's, an event loop's): no attempt reaches the server, the connect is told
# EINPROGRESS, the waits report nothing until `after`, and then SO_ERROR (or a second
# connect) says ETIMEDOUT. So curl's own --connect-timeout ends it when it is shorter (exit 28
# at 1 s), and `after` when it is (curl fails at 2 s); the old build let
# the attempt through to the server (curl exit 0 at once). A dup of the socket says the same
# (the old build's SO_ERROR through the dup said 0), and a socket closed in the hole leaves
# nothing to the next socket at its number.
# fronts: preload seccomp
# parallel-safe: bound, no rate (each wait is a second or two; the bounds allow 0.5 s of load)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd curl python3
port=$(free_port)
bg srv python3 "$ITEST_DIR/seen_server.py" "$port" "$T/seen"
wait_file "$T/seen"

# curl's own --connect-timeout (1 s) is shorter than the black hole's (5 s): curl ends it
rc=0
s=$(now_ns)
RLT_NET="connect=timeout after=5s port=$port" throttled curl -sS -o /dev/null --connect-timeout 1 \
	"http://127.0.0.1:$port/" 2>"$T/curl1.err" || rc=$?
took=$(calc "($(now_ns) - $s) / 1e9")
info "curl --connect-timeout 1: exit $rc after ${took} s; $(cat "$T/curl1.err")"
assert_eq "curl's exit status (its own connect timeout)" 28 "$rc"
assert_range "curl ended by its --connect-timeout 1 (s)" 0.9 1.8 "$took"

# the black hole's after=2s is shorter than curl's 10 s: ETIMEDOUT at 2 s
rc=0
s=$(now_ns)
RLT_NET="connect=timeout after=2s port=$port" RLT_STATS="$T/stats" throttled curl -sS -o /dev/null \
	--connect-timeout 10 "http://127.0.0.1:$port/" 2>"$T/curl2.err" || rc=$?
took=$(calc "($(now_ns) - $s) / 1e9")
info "curl --connect-timeout 10 under after=2s: exit $rc after ${took} s; $(cat "$T/curl2.err")"
# SO_ERROR says ETIMEDOUT: curl's "timeout" status (without it, 7: "Couldn't connect")
assert_eq "curl's exit status under connect=timeout after=2s" 28 "$rc"
assert_range "curl told ETIMEDOUT at after=2s (s)" 1.9 2.8 "$took"
timeouts=$(sed -n 's/.*"connects_timed_out":\([0-9]*\).*/\1/p' "$T/stats" | sort -n | tail -1)
assert_eq "timeouts counted in RLT_STATS" 1 "$timeouts"

# an event loop (python selectors: epoll) connecting without blocking: EINPROGRESS at once,
# no readiness before after=1s, then SO_ERROR = ETIMEDOUT; a second connect() says so too
cat >"$T/loop.py" <<'PY'
import errno, selectors, socket, sys, time
port = int(sys.argv[1])
out = []
for how in ("so_error", "connect"):
    s = socket.socket(); s.setblocking(False)
    t0 = time.monotonic()
    rc = s.connect_ex(("127.0.0.1", port))
    call_ms = (time.monotonic() - t0) * 1000
    sel = selectors.DefaultSelector(); sel.register(s, selectors.EVENT_WRITE)
    early = sel.select(timeout=0.5)
    ready = sel.select(timeout=3)
    ready_ms = (time.monotonic() - t0) * 1000
    if how == "so_error":
        err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    else:
        err = s.connect_ex(("127.0.0.1", port))
    out.append("%s_rc=%s %s_call_ms=%d %s_early=%d %s_ready=%d %s_ready_ms=%d %s_err=%s" % (
        how, errno.errorcode.get(rc, rc), how, call_ms, how, len(early), how, len(ready),
        how, ready_ms, how, errno.errorcode.get(err, err)))
    s.close()
print(" ".join(out))
PY
RLT_NET="connect=timeout after=1s port=$port" throttled python3 "$T/loop.py" "$port" >"$T/loop.out" 2>"$T/loop.err" ||
	{ show "$T/loop.err"; fail "the event loop failed"; }
out=$(cat "$T/loop.out")
info "event loop: $out"
for how in so_error connect; do
	assert_eq "$how: connect_ex" EINPROGRESS "$(kv ${how}_rc "$out")"
	assert_le "$how: connect_ex call (ms)" 100 "$(kv ${how}_call_ms "$out")"
	assert_eq "$how: readiness in the first 0.5 s" 0 "$(kv ${how}_early "$out")"
	assert_eq "$how: readiness by 3 s" 1 "$(kv ${how}_ready "$out")"
	assert_range "$how: readiness at after=1s (ms)" 950 1800 "$(kv ${how}_ready_ms "$out")"
	assert_eq "$how: the outcome" ETIMEDOUT "$(kv ${how}_err "$out")"
done
assert_eq "what the server saw (no attempt reached it)" listening "$(cat "$T/seen")"

# a dup of the socket in the black hole is the same socket: held as long, then SO_ERROR on the
# dup says ETIMEDOUT (the old build: 0, the program then took the unconnected socket for a
# connected one); a socket closed in the hole leaves nothing to the next at its number
cat >"$T/dup.py" <<'PY'
import errno, select, socket, sys, time
port, other = int(sys.argv[1]), int(sys.argv[2])
E = lambda e: errno.errorcode.get(e, e)
s = socket.socket(); s.setblocking(False); s.connect_ex(("127.0.0.1", port))
t0 = time.monotonic(); d = s.dup()
early = len(select.select([], [d], [], 0.3)[1])
ready = len(select.select([], [d], [], 3)[1])
out = "dup_early=%d dup_ready=%d dup_ms=%d dup_err=%s" % (early, ready, (time.monotonic() - t0) * 1000, E(d.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)))
s.close(); d.close()
s = socket.socket(); s.setblocking(False); fd = s.fileno(); s.connect_ex(("127.0.0.1", port)); s.close()
t = socket.socket(); t.setblocking(False); t.connect_ex(("127.0.0.1", other)); t0 = time.monotonic()
ready = len(select.select([], [t], [], 3)[1])
print(out, "reuse_same_fd=%d reuse_ms=%d reuse_err=%s" % (t.fileno() == fd, (time.monotonic() - t0) * 1000, E(t.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR))))
PY
bg other python3 -c '
import socket, sys, os
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(8)
open(sys.argv[1] + ".t", "w").write(str(l.getsockname()[1])); os.rename(sys.argv[1] + ".t", sys.argv[1])
while True:
    c, _ = l.accept(); c.close()' "$T/other_port"
wait_file "$T/other_port"
RLT_NET="connect=timeout after=1s port=$port" throttled python3 "$T/dup.py" "$port" "$(cat "$T/other_port")" \
	>"$T/dup.out" 2>"$T/dup.err" || { show "$T/dup.err"; fail "the dup case failed"; }
out=$(cat "$T/dup.out")
info "dup: $out"
assert_eq "dup: readiness in the first 0.3 s" 0 "$(kv dup_early "$out")"
assert_eq "dup: readiness by 3 s" 1 "$(kv dup_ready "$out")"
assert_range "dup: readiness at after=1s (ms)" 950 1800 "$(kv dup_ms "$out")"
assert_eq "dup: SO_ERROR through the dup" ETIMEDOUT "$(kv dup_err "$out")"
assert_eq "the next socket took the closed one's number" 1 "$(kv reuse_same_fd "$out")"
assert_le "it connects to another port at once (ms)" 500 "$(kv reuse_ms "$out")"
assert_eq "its outcome" 0 "$(kv reuse_err "$out")"

# the same server answers a connection without the condition: the test sees a connection
throttled curl -sS -o /dev/null "http://127.0.0.1:$port/" || fail "curl without the condition failed"
sleep 0.2
assert_match "what the server saw then" accepted "$(cat "$T/seen")"
exit 0
