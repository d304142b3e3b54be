#!/bin/bash
# python3, 16 threads connecting as fast as they can under RLT_CONNECT=20/s for 3 s (python's
# sockets are SOCK_CLOEXEC). Default burst = one second = 20, so about 20 + 20*3 = 80 connect()s
# succeed; bounds 0.7-1.3.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin acceptor
need_cmd python3
start_srv acc acceptor -D 30 -T 40
cat >"$T/c.py" <<'PY'
import socket, sys, threading, time
port, dur = int(sys.argv[1]), float(sys.argv[2])
ok = [0]; errs = {}; lock = threading.Lock()
end = time.monotonic() + dur
def work():
    while time.monotonic() < end:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.close()
            with lock: ok[0] += 1
        except OSError as e:
            with lock: errs[e.errno] = errs.get(e.errno, 0) + 1
ts = [threading.Thread(target=work) for _ in range(16)]
t0 = time.monotonic()
for t in ts: t.start()
for t in ts: t.join()
print("ok=%d elapsed=%.3f errs=%s" % (ok[0], time.monotonic() - t0, errs))
PY
RLT_CONNECT="20/s" throttled python3 "$T/c.py" "$SRV_PORT" 3 >"$T/py.out" 2>"$T/py.err" || { show "$T/py.err"; fail "python failed"; }
info "python: $(cat "$T/py.out")"
ok=$(kv ok "$T/py.out")
el=$(kv elapsed "$T/py.out")
# expected: burst (20) + 20/s * elapsed (the last connect may run a little past 3 s)
exp=$(calc "20 + 20 * $el")
assert_range "successful connects (expected about $exp)" "$(calc "0.7 * $exp")" "$(calc "1.3 * $exp")" "$ok"
