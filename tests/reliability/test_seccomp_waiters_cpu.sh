#!/bin/bash
# The launcher's cost while 400 calls wait for their budget (issue 9: a launcher that answered
# every call once used 47% of a core here). Under --seccomp the launcher takes no part in a
# call: over 3 s of 400 threads each in one 20 kB send at 50 KiB/s it must use under 2% of a
# core, and a signal to a held thread still reaches its handler within the bound (N/2 ms: 400
# waiters, 200 ms; + slack).
# parallel-safe: bound, no rate (the launcher's CPU time over 3 s, under 2% of a core; a signal reaches its handler within 400 ms)
source "$(dirname "$0")/../integration/lib.sh"
need_lib
need_cmd python3
L=$(dirname "$RLT_LIB")/rlthrottle
N=${WAITERS:-400}

port=$(free_port)
bg sink python3 -c 'import selectors,socket,sys
l=socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(1024); l.setblocking(False)
sel=selectors.DefaultSelector(); sel.register(l, selectors.EVENT_READ)
while True:
    for k, _ in sel.select():
        if k.fileobj is l:
            c, _ = l.accept(); c.setblocking(False); sel.register(c, selectors.EVENT_READ)
        else:
            try: d = k.fileobj.recv(65536)
            except BlockingIOError: continue
            if not d: sel.unregister(k.fileobj); k.fileobj.close()' "$port"
wait_port "$port"
cat >"$T/waiters.py" <<'PY'
import os, signal, socket, sys, threading, time
n, port, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
# the C-level handler writes to the wakeup pipe; the Python one would wait for the send to
# end, as the throttle restarts it (ERESTARTNOINTR: no EINTR for Python to see)
r, w = os.pipe()
os.set_blocking(w, False)
signal.set_wakeup_fd(w)
signal.signal(signal.SIGUSR1, lambda *a: None)
def woken():
    os.read(r, 1)
    t = time.monotonic()
    with open(out + ".sig", "w") as f: f.write("%.6f" % t)
threading.Thread(target=woken, daemon=True).start()
def send(s):
    try: s.sendall(bytes(20000))
    except OSError: pass
ts = [threading.Thread(target=send, args=(s,), daemon=True) for s in socks]
for t in ts: t.start()
with open(out + ".tmp", "w") as f: f.write(str(os.getpid()))
os.rename(out + ".tmp", out)
threading.Timer(6, lambda: os._exit(0)).start()
try: socket.create_connection(("127.0.0.1", port)).sendall(bytes(2000000))  # held too
except OSError as e: print("main thread's send:", e, file=sys.stderr, flush=True)
os._exit(0)
PY
export RLT_SEND="50KiB/s"
opt=--seccomp max=2
bg load "$L" "$opt" -- python3 "$T/waiters.py" "$N" "$port" "$T/pid"
launcher=$LAST_PID
wait_file "$T/pid" 10
sleep 0.5
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
c0=$(cpu "$launcher"); t0=$(now_ns)
sleep 3
c1=$(cpu "$launcher"); t1=$(now_ns)
hz=$(getconf CLK_TCK)
pct=$(calc "100 * ($c1 - $c0) / $hz / (($t1 - $t0) / 1e9)")
info "$N threads waiting for their budget: the launcher ($opt) used ${pct}% of a core over 3 s"
# the main thread, in its own held send, takes a process signal: its handler must run
sent=$(python3 -c 'import os,sys,time; t=time.monotonic(); os.kill(int(sys.argv[1]), 10); print("%.6f" % t)' "$(cat "$T/pid")") ||
	fail "the command ended early: $(cat "$T/load.err")"
i=0
while [ ! -s "$T/pid.sig" ]; do
	[ $i -ge 60 ] && fail "the handler did not run within 3 s: $(cat "$T/load.err")"
	sleep 0.05; i=$((i + 1))
done
lat=$(calc "($(cat "$T/pid.sig") - $sent) * 1000")
info "a signal to the process reached its handler in ${lat} ms"
wait_pid "$launcher" 10 || fail "the command did not end"
assert_le "the launcher's CPU (% of a core, $opt)" "$max" "$pct"
assert_le "the handler's latency (ms)" $((N / 2 + 200)) "$lat"
exit 0
