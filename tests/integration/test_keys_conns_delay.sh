#!/bin/bash
# fronts: preload seccomp
# parallel-safe: bound, no rate (a held accept is served within 0.5 s of a close, and shed 0.4-1.0 s after a 500 ms max-wait)
# matrix-only: seccomp (make test keeps the keys under --seccomp in test_keys_nginx, test_keys_conns and test_keys_dryrun; the whole matrix runs in CI after it)
# Issue 11: RLT_CONNS="2 key=peer action=delay": a python server (four threads accepting on one
# listener, a thread per connection, each held open until its client says bye) admits at most
# two connections per client address at once. A third from 127.0.0.2 waits (its accept is held)
# until one of .2's two closes, and is served within 0.5 s of that close, while 127.0.0.3 is
# served at once meanwhile. With max-wait=500ms the third is shed (closed) after about 0.5 s.
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
cat >"$T/server.py" <<'PY'
import os, socket, sys, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(64)
def handle(c):
    with c:
        while True:
            d = c.recv(100)
            if not d or d.startswith(b"bye"): return
            c.sendall(b"ok\n")
def acceptor():
    while True:
        try:
            c, a = s.accept()
        except OSError as e:
            print("shed: %s" % e, flush=True)
            continue
        threading.Thread(target=handle, args=(c,), daemon=True).start()
ts = [threading.Thread(target=acceptor, daemon=True) for _ in range(4)]
for t in ts: t.start()
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
threading.Event().wait()
PY
# Prints, per connection, when it was served (its first answer) or failed, relative to the
# first connect; and when a1 was closed.
cat >"$T/client.py" <<'PY'
import socket, sys, threading, time
port, hold = int(sys.argv[1]), float(sys.argv[2])
t0 = time.time(); out = {}
def conn(name, src):
    s = socket.socket(); s.bind((src, 0)); s.settimeout(5)
    s.connect(("127.0.0.1", port))
    try:
        s.sendall(b"hi\n"); r = s.recv(10)
    except OSError:
        r = b""
    out[name] = ("served" if r == b"ok\n" else "failed", time.time() - t0)
    return s
a1 = conn("a1", "127.0.0.2"); a2 = conn("a2", "127.0.0.2")
th = threading.Thread(target=lambda: out.setdefault("sock", conn("a3", "127.0.0.2")))
th.start()
time.sleep(0.2)
b1 = conn("b1", "127.0.0.3")
time.sleep(max(0, hold - (time.time() - t0)))
closed = time.time() - t0
a1.sendall(b"bye\n"); a1.close()
th.join(8)
for n in ("a1", "a2", "a3", "b1"):
    st, at = out.get(n, ("none", -1))
    print("%s %s %.3f" % (n, st, at))
print("closed at %.3f" % closed, flush=True)
PY

run() { # LABEL RULE HOLD_S
	rm -f "$T/port"
	RLT_CONNS="$2" bg "server_$1" throttled python3 "$T/server.py" "$T/port"
	local spid=$LAST_PID
	wait_file "$T/port" 10 || { show "$T/server_$1.err"; fail "$1: server did not start"; }
	timeout 20 python3 "$T/client.py" "$(cat "$T/port")" "$3" >"$T/client_$1.out" 2>&1 ||
		{ show "$T/client_$1.out" "$T/server_$1.err"; fail "$1: client failed"; }
	kill "$spid" 2>/dev/null
	wait_pid "$spid" 5 >/dev/null 2>&1 || true
	sed "s/^/info: $1: /" "$T/client_$1.out"
}
at() { awk -v n="$2" '$1 == n { print $3 }' "$T/client_$1.out"; }
st() { awk -v n="$2" '$1 == n { print $2 }' "$T/client_$1.out"; }

# a third connection from one address waits for a close; another address does not
run delay "2 key=peer action=delay" 1.5
for n in a1 a2 a3 b1; do assert_eq "delay: $n" served "$(st delay $n)"; done
closed=$(at delay closed)
assert_le "delay: b1 (another address) served at once" 0.5 "$(calc "$(at delay b1) - 0.2")"
assert_ge "delay: a3 was not served before a1 closed" "$closed" "$(at delay a3)"
after=$(calc "$(at delay a3) - $closed")
info "delay: a3 served $after s after a1's close"
assert_le "delay: a3 served within 0.5 s of the close" 0.5 "$after"

# with max-wait, the third is shed after about max-wait
run maxwait "2 key=peer action=delay max-wait=500ms" 2
assert_eq "max-wait: a1" served "$(st maxwait a1)"
assert_eq "max-wait: b1" served "$(st maxwait b1)"
assert_eq "max-wait: a3 is shed" failed "$(st maxwait a3)"
waited=$(calc "$(at maxwait a3) - $(at maxwait a2)")
info "max-wait: a3 failed after $waited s"
assert_range "max-wait: a3 failed after about 500 ms" 0.4 1.0 "$waited"
assert_eq "max-wait: the server's accept failed once (RLT_CONNS' errno)" \
	"shed: [Errno 111] Connection refused" "$(cat "$T/server_maxwait.out")"
