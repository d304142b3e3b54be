#!/bin/bash
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
# Issue 11: key=peer/24 (IPv4 /24, IPv6 /64) and key=port. A python server on [::] (both
# families) throttled with RLT_ACCEPT="5/s burst=1 key=peer/24 action=reject": 127.0.0.2 and
# 127.0.0.3 share one budget (one /24), 127.1.0.2 and ::1 have one each; every client tries
# 20 connections a second for 2 s. Then a client throttled with RLT_CONNECT="5/s burst=1
# key=port action=reject" connects to two ports in turn: a budget per port.
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
need_ipv6
D=2
cat >"$T/server.py" <<'PY'
import socket, sys, time, collections
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", 0)); s.listen(512)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.settimeout(0.5)
got, shed, end = collections.Counter(), 0, time.time() + float(sys.argv[2])
while time.time() < end:
    try:
        c, a = s.accept()
    except socket.timeout:
        continue
    except ConnectionAbortedError:
        shed += 1
        continue
    addr = a[0][7:] if a[0].startswith("::ffff:") else a[0]
    got[addr] += 1
    c.close()
for k in sorted(got): print("accepted %s %d" % (k, got[k]))
print("shed %d" % shed, flush=True)
PY
cat >"$T/clients.py" <<'PY'
import socket, sys, threading, time
port, secs = int(sys.argv[1]), float(sys.argv[2])
def client(src):
    fam = socket.AF_INET6 if ":" in src else socket.AF_INET
    dst = "::1" if fam == socket.AF_INET6 else "127.0.0.1"
    t0 = time.time(); nxt = t0; n = 0
    while time.time() < t0 + secs and n < 100:
        s = socket.socket(fam); s.bind((src, 0)); s.settimeout(1)
        try: s.connect((dst, port)); s.recv(1)
        except OSError: pass
        s.close(); n += 1; nxt += 0.05
        time.sleep(max(0, nxt - time.time()))
ts = [threading.Thread(target=client, args=(a,)) for a in sys.argv[3:]]
for t in ts: t.start()
for t in ts: t.join()
PY
RLT_ACCEPT="5/s burst=1 key=peer/24 action=reject" bg server throttled python3 "$T/server.py" "$T/port" $((D + 2))
spid=$LAST_PID
wait_file "$T/port" 10
port=$(cat "$T/port")
timeout 20 python3 "$T/clients.py" "$port" "$D" 127.0.0.2 127.0.0.3 127.1.0.2 ::1 ||
	fail "clients failed"
wait_pid "$spid" 10 || { show "$T/server.err"; fail "server did not end"; }
sed 's/^/info: server: /' "$T/server.out"
n() { awk -v a="$1" '$1 == "accepted" && $2 == a { print $3 }' "$T/server.out"; }
lo=$(calc "0.7 * (1 + 5 * $D)"); hi=$(calc "1.3 * (1 + 5 * $D) + 1")
pair=$(( $(n 127.0.0.2) + $(n 127.0.0.3) ))
assert_range "127.0.0.0/24 (two clients, one budget of 5/s)" "$lo" "$hi" "$pair"
assert_range "127.1.0.0/24 (its own budget)" "$lo" "$hi" "$(n 127.1.0.2)"
assert_range "::1 (its /64's own budget)" "$lo" "$hi" "$(n ::1)"

# key=port: a budget per remote port
cat >"$T/connect.py" <<'PY'
import socket, sys, time
ls = [socket.socket() for _ in range(2)]
for l in ls: l.bind(("127.0.0.1", 0)); l.listen(256)
ports = [l.getsockname()[1] for l in ls]
ok = {p: 0 for p in ports}; t0 = time.time(); nxt = t0; i = 0
while time.time() < t0 + float(sys.argv[1]) and i < 200:
    p = ports[i % 2]; s = socket.socket()
    try: s.connect(("127.0.0.1", p)); ok[p] += 1
    except ConnectionRefusedError: pass
    s.close(); i += 1; nxt += 0.025
    time.sleep(max(0, nxt - time.time()))
print(" ".join(str(ok[p]) for p in ports))
PY
read -r a b <<<"$(RLT_CONNECT="5/s burst=1 key=port action=reject" throttled timeout 20 python3 "$T/connect.py" "$D")"
info "key=port: port 1 connected $a, port 2 connected $b (each tried 20/s)"
assert_range "first port (its own 5/s)" "$lo" "$hi" "$a"
assert_range "second port (its own 5/s)" "$lo" "$hi" "$b"
