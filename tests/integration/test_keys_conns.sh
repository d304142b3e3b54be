#!/bin/bash
# fronts: preload seccomp
# parallel-safe: counts only (connections served and refused per address; a close is given 0.3 s to be seen)
# Issue 11: RLT_CONNS="2 key=peer": at most 2 connections open per client address. python's
# ThreadingTCPServer, throttled, holds each connection open until its client says bye. From
# 127.0.0.2 a third connection at once is refused (taken off the queue and closed) while
# 127.0.0.3 still gets its two; after one of .2's closes, .2 gets one again.
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
cat >"$T/server.py" <<'PY'
import os, socketserver, sys
class H(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            d = self.request.recv(100)
            if not d or d.startswith(b"bye"): return
            self.request.sendall(b"ok\n")
class S(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
s = S(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
PY
cat >"$T/client.py" <<'PY'
import socket, sys
port = int(sys.argv[1]); conns = {}
def open_(src):
    s = socket.socket(); s.bind((src, 0)); s.settimeout(3); s.connect(("127.0.0.1", port))
    try:
        s.sendall(b"hi\n"); r = s.recv(10)
    except OSError as e:
        r = b""
    return s, r == b"ok\n"
def step(name, src):
    s, ok = open_(src)
    print("%s %s %s" % (name, src, "served" if ok else "refused"), flush=True)
    if ok: conns.setdefault(src, []).append(s)
    else: s.close()
step("a1", "127.0.0.2"); step("a2", "127.0.0.2"); step("a3", "127.0.0.2")
step("b1", "127.0.0.3"); step("b2", "127.0.0.3"); step("b3", "127.0.0.3")
c = conns["127.0.0.2"].pop(); c.sendall(b"bye\n"); c.close()
import time; time.sleep(0.3)
step("a4", "127.0.0.2"); step("a5", "127.0.0.2")
PY
RLT_CONNS="2 key=peer" RLT_STATS="$T/stats.json" bg server throttled python3 "$T/server.py" "$T/port"
wait_file "$T/port" 10
timeout 20 python3 "$T/client.py" "$(cat "$T/port")" >"$T/client.out" 2>&1 || { show "$T/client.out" "$T/server.err"; fail "client failed"; }
sed 's/^/info: /' "$T/client.out"
assert_eq "what each connection got" \
	"a1 served a2 served a3 refused b1 served b2 served b3 refused a4 served a5 refused" \
	"$(awk '{ printf "%s%s %s", (NR > 1 ? " " : ""), $1, $3 }' "$T/client.out")"

# action=dry-run (rlthrottle(7) RULES): the same connections all served; the count goes on over the limit
# and what reject would have refused is counted: a3 and b3 (third of each address), then a4
# and a5 (.2 holds 3 after a3, 2 after one closes, so a4 and a5 find it at the limit).
kill "$LAST_PID" 2>/dev/null
rm -f "$T/port"
RLT_CONNS="2 key=peer action=dry-run" RLT_STATS="$T/dstats.json" bg dserver throttled \
	python3 "$T/server.py" "$T/port"
dpid=$LAST_PID
wait_file "$T/port" 10
timeout 20 python3 "$T/client.py" "$(cat "$T/port")" >"$T/dclient.out" 2>&1 || { show "$T/dclient.out" "$T/dserver.err"; fail "client failed (dry-run)"; }
assert_eq "dry-run: every connection served" \
	"a1 served a2 served a3 served b1 served b2 served b3 served a4 served a5 served" \
	"$(awk '{ printf "%s%s %s", (NR > 1 ? " " : ""), $1, $3 }' "$T/dclient.out")"
kill -TERM "$dpid"
# (the server's own line comes at its exit: the command's other processes, python3's pyenv
# shim among them, write theirs before)
rc=0; wait_pid "$dpid" 10 || rc=$?
[ "$rc" = 124 ] && fail "the dry-run server did not end on SIGTERM"
wait_file "$T/dstats.json" 5 || fail "no RLT_STATS from the dry-run server"
ds=$(tr -d '\n' <"$T/dstats.json")
info "dry-run stats: $ds"
assert_match "dry-run: 8 admitted, none refused" '"calls":8,"allowed":8,"delayed":0,"rejected":0' "$ds"
assert_match "dry-run: 4 that reject would have refused" '"would_delay":0,"would_delay_ns_total":0,"would_delay_ns_max":0,"would_reject":4' "$ds"
assert_match "dry-run: connections opened per key" '"busiest":\[\{"key":"127.0.0.2","units":5\},\{"key":"127.0.0.3","units":3\}\]' "$ds"
