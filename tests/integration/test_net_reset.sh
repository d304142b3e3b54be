#!/bin/bash
# rlthrottle(7) NETWORK CONDITIONS: reset after=1MB ends curl's download near 1 MB with exit 56
# (ECONNRESET), and the server sees a reset (a real RST: its send fails ECONNRESET);
# connect=refuse ends curl with exit 7 without a connection reaching the server; p=50% resets
# about half of 40 connections, the same ones under one seed.
# fronts: preload seccomp
# parallel-safe: counts only (bytes before a reset, connections reset under p=50% and one seed, curl's statuses)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd curl python3
port=$(free_port)
# a one-shot HTTP server: 64 MB after the headers (more than the sockets' buffers hold), and
# what became of its sends
bg srv python3 -c '
import socket, sys
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(4)
c, _ = l.accept(); c.recv(4096)
body = b"x" * (64 << 20)
try:
    c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body))
    for i in range(0, len(body), 65536):
        c.sendall(body[i:i + 65536])
    c.recv(1)  # a reset that came after the last send is told here
    r = "completed"
except ConnectionResetError:
    r = "reset"
except BrokenPipeError:
    r = "broken pipe"
open(sys.argv[2], "w").write(r + "\n")' "$port" "$T/srv.result"
wait_port "$port"
rc=0
RLT_NET="reset after=1MB" RLT_STATS="$T/stats" throttled curl -sS -o "$T/got" -w '%{size_download}\n' \
	"http://127.0.0.1:$port/" >"$T/curl.out" 2>"$T/curl.err" || rc=$?
info "curl: exit $rc, $(cat "$T/curl.out") bytes; $(cat "$T/curl.err")"
assert_eq "curl's exit status under reset after=1MB" 56 "$rc"
got=$(stat -c %s "$T/got")
assert_range "bytes curl wrote before the reset" 900000 1000000 "$got"
wait_file "$T/srv.result"
assert_eq "what the server saw" reset "$(cat "$T/srv.result")"
resets=$(sed -n 's/.*"resets":\([0-9]*\).*/\1/p' "$T/stats" | sort -n | tail -1)
assert_eq "resets counted in RLT_STATS" 1 "$resets"

# connect=refuse: curl fails at once (7); the server never sees a connection
port2=$(free_port)
bg srv2 python3 "$ITEST_DIR/seen_server.py" "$port2" "$T/srv2.seen"
wait_file "$T/srv2.seen"
rc=0
RLT_NET="connect=refuse port=$port2" throttled curl -sS -o /dev/null "http://127.0.0.1:$port2/" 2>"$T/curl2.err" || rc=$?
info "curl: exit $rc; $(cat "$T/curl2.err")"
assert_eq "curl's exit status under connect=refuse" 7 "$rc"
sleep 0.2
assert_eq "what the server saw (no connection accepted)" listening "$(cat "$T/srv2.seen")"

# p=50%: about half of 40 connections are reset, the same ones under one seed
port3=$(free_port)
bg srv3 python3 -c '
import socket, sys
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(64)
while True:
    c, _ = l.accept()
    try:
        c.sendall(b"y" * 1000)
    except OSError:
        pass
    c.close()' "$port3"
wait_port "$port3"
PCLIENT='
import socket, sys
out = ""
for i in range(40):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    try:
        n = 0
        while True:
            b = s.recv(4096)
            if not b: break
            n += len(b)
        out += "k" if n == 1000 else "?"
    except ConnectionResetError:
        out += "r"
    s.close()
print(out)'
a=$(RLT_NET="reset p=50% seed=9" throttled python3 -c "$PCLIENT" "$port3") || fail "p= client failed"
b=$(RLT_NET="reset p=50% seed=9" throttled python3 -c "$PCLIENT" "$port3") || fail "p= client failed"
info "reset p=50%: $a"
resets=$(printf '%s' "$a" | tr -cd r | wc -c)
assert_range "connections reset under p=50%" 10 30 "$resets"
assert_eq "connections neither reset nor whole" 0 "$(printf '%s' "$a" | tr -cd '?' | wc -c)"
assert_eq "the same connections reset under one seed" "$a" "$b"
