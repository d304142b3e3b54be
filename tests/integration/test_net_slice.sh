#!/bin/bash
# rlthrottle(7) NETWORK CONDITIONS: slice=N-M makes each receive return at most N..M bytes (the
# short reads a real network makes): curl and python's http.client parse a download of 3 MB
# (curl) and 300 kB (http.client, 1-100 bytes a read) with every byte equal, and RLT_STATS
# counts the calls cut short; a MSG_WAITALL receive still gets all it asked for.
# fronts: preload seccomp
# parallel-safe: counts only (reads cut short; a duration's lower bound, which load only lengthens)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd curl python3
mkdir -p "$T/www"
head -c 3000000 /dev/urandom >"$T/www/big.bin"
head -c 300000 /dev/urandom >"$T/www/small.bin"
http_dir http "$T/www"
port=$HTTP_PORT
RLT_NET="slice=1-3000" RLT_STATS="$T/curl.stats" throttled curl -sS -o "$T/big.got" \
	"http://127.0.0.1:$port/big.bin" 2>"$T/curl.err" || { show "$T/curl.err"; fail "curl failed"; }
sha256_eq "$T/www/big.bin" "$T/big.got"
slices=$(sed -n 's/.*"slices":\([0-9]*\).*/\1/p' "$T/curl.stats" | sort -n | tail -1)
info "curl: $slices reads cut short"
assert_ge "curl's reads cut short (3 MB in at most 3000 bytes a read)" 1000 "${slices:-0}"
RLT_NET="slice=1-100 seed=3" RLT_STATS="$T/py.stats" throttled python3 -c '
import http.client, hashlib, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
c.request("GET", "/small.bin")
r = c.getresponse()
assert r.status == 200, r.status
open(sys.argv[2], "wb").write(r.read())' "$port" "$T/small.got" 2>"$T/py.err" || { show "$T/py.err"; fail "http.client failed"; }
sha256_eq "$T/www/small.bin" "$T/small.got"
slices=$(sed -n 's/.*"slices":\([0-9]*\).*/\1/p' "$T/py.stats" | sort -n | tail -1)
info "http.client: $slices reads cut short"
assert_ge "http.client's reads cut short (300 kB in at most 100 bytes a read)" 2000 "${slices:-0}"
# MSG_WAITALL: a blocking receive still gets all it asked for, in slices
RLT_NET="slice=1-10" RLT_STATS="$T/wa.stats" throttled python3 -c '
import http.client, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /small.bin HTTP/1.0\r\n\r\n")
head = b""
while not head.endswith(b"\r\n\r\n"):
    head += s.recv(1)
body = s.recv(300000, socket.MSG_WAITALL)
open(sys.argv[2], "wb").write(body)' "$port" "$T/wa.got" 2>"$T/wa.err" || { show "$T/wa.err"; fail "MSG_WAITALL client failed"; }
sha256_eq "$T/www/small.bin" "$T/wa.got"
slices=$(sed -n 's/.*"slices":\([0-9]*\).*/\1/p' "$T/wa.stats" | sort -n | tail -1)
assert_ge "the MSG_WAITALL receive's pieces (300 kB in at most 10 bytes)" 20000 "${slices:-0}"
# a send in slices with delay= between them: 200 kB in 1000-byte pieces 1 ms apart takes 0.2 s
head -c 200000 /dev/urandom >"$T/up.bin"
port2=$(free_port)
bg sink python3 -c '
import socket, sys
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(1)
c, _ = l.accept(); out = open(sys.argv[2], "wb")
while True:
    b = c.recv(65536)
    if not b: break
    out.write(b)
out.close(); open(sys.argv[2] + ".done", "w").write("done\n")' "$port2" "$T/up.got"
wait_port "$port2"
t0=$(now_ns)
RLT_NET="slice=1000 delay=1ms dir=out" throttled python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(open(sys.argv[2], "rb").read()); s.close()' "$port2" "$T/up.bin" || fail "sender failed"
t1=$(now_ns)
wait_file "$T/up.got.done"
sha256_eq "$T/up.bin" "$T/up.got"
ms=$(( (t1 - t0) / 1000000 ))
info "200 kB sent in 1000-byte slices 1 ms apart: $ms ms"
assert_ge "the send's duration (199 gaps of 1 ms)" 190 "$ms"
