#!/bin/bash
# A redis:// scope whose endpoint answers what no Redis would: a multi-bulk header of
# *2147483647 (then elements without end), a bulk of $2147483647 (then bytes without end), an
# endless nesting of *1, a status line that never ends, a reply dripping a byte every 10 ms.
# hiredis 0.14 allocated gigabytes for these and spun on the program's thread. Whatever the
# endpoint answers, a throttled call waits no longer than about the 50 ms bound (the fallback
# then applies), the program's memory stays bounded and it does not spin.
source "$(dirname "$0")/../integration/lib.sh"
need_lib
need_bin acceptor
need_cmd python3
cat >"$T/fake.py" <<'PY'
import socket, sys, threading, time
portfile, modes = sys.argv[1], sys.argv[2:]
answers = {
    "array": (b"*2147483647\r\n", b":1\r\n" * 16384),
    "bulk": (b"$2147483647\r\n", b"x" * 65536),
    "nest": (b"", b"*1\r\n" * 16384),
    "line": (b"+", b"A" * 65536),
    "drip": (b"", b""),
}
def drip(c):
    # a well-formed answer, one byte every 10 ms: slower than any reply may take
    ans = b"*4\r\n:1\r\n:0\r\n:-1\r\n$1\r\nx\r\n"
    for i in range(2000):
        c.sendall(ans[i % len(ans):i % len(ans) + 1])
        time.sleep(0.01)
def serve(c, mode):
    head, tail = answers[mode]
    try:
        c.recv(65536)  # the first request (AUTH or SCRIPT LOAD): answer it without end
        if mode == "drip":
            drip(c)
        c.sendall(head)
        end = time.monotonic() + 20
        while time.monotonic() < end:
            c.sendall(tail)
    except OSError:
        pass
    finally:
        c.close()
def listen(s, mode):
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c, mode), daemon=True).start()
lines = []
for mode in modes:  # one port for each way of answering
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    lines.append("%s=%d" % (mode, s.getsockname()[1]))
    threading.Thread(target=listen, args=(s, mode), daemon=True).start()
open(portfile + ".tmp", "w").write(" ".join(lines) + "\n")
import os; os.rename(portfile + ".tmp", portfile)
while True:
    time.sleep(60)
PY
cat >"$T/client.py" <<'PY'
import socket, sys, time
port, secs = int(sys.argv[1]), float(sys.argv[2])
n, worst, start = 0, 0.0, time.monotonic()
while time.monotonic() - start < secs:
    t = time.monotonic()
    c = socket.create_connection(("127.0.0.1", port))
    worst = max(worst, time.monotonic() - t)
    c.close()
    n += 1
    time.sleep(0.01)
rss = [l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
import os; cpu = sum(os.times()[:2])
print("calls=%d worst_ms=%.1f hwm_kb=%s cpu_s=%.3f" % (n, worst * 1000, rss, cpu))
PY
start_srv acc acceptor -D 60 -T 80
acc_port=$SRV_PORT
modes="array bulk nest line drip"
bg fake python3 "$T/fake.py" "$T/fake.port" $modes
# the client's own footprint without a redis rule, to measure growth against
base=$(pre python3 "$T/client.py" "$acc_port" 0.2)
base_kb=$(kv hwm_kb "$base")
info "no redis rule: $base"
wait_file "$T/fake.port"
pids=""
for mode in $modes; do # one client per way of answering, side by side
	fport=$(kv "$mode" "$T/fake.port")
	bg "cl_$mode" env LD_PRELOAD="$RLT_LIB" \
		RLT_CONNECT="1000/s fallback=allow scope=redis://127.0.0.1:$fport/itest-$$" \
		python3 "$T/client.py" "$acc_port" 1
	pids="$pids $mode:$LAST_PID"
done
# watch them: a client that grows past 300 MB or outlives 10 s is stopped here, not left to take
# the machine's memory
for i in $(seq 200); do
	left=0
	for mp in $pids; do
		mode=${mp%%:*} cpid=${mp##*:}
		kill -0 "$cpid" 2>/dev/null || continue
		left=1
		kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$cpid/status" 2>/dev/null)
		[ "${kb:-0}" -gt 307200 ] && fail "$mode: the throttled program was stopped: RSS $kb kB"
	done
	[ $left = 0 ] && break
	sleep 0.05
done
for mp in $pids; do
	mode=${mp%%:*} cpid=${mp##*:}
	kill -0 "$cpid" 2>/dev/null &&
		fail "$mode: the throttled program was stopped: still running after 10 s (cpu $(proc_cpu_s "$cpid") s)"
	wait "$cpid" 2>/dev/null
	out=$(cat "$T/cl_$mode.out")
	info "$mode: $out; $(head -c 300 "$T/cl_$mode.err")"
	assert_ge "$mode: calls made in 1 s (10 ms apart)" 25 "$(kv calls "$out")"
	assert_le "$mode: the slowest call (ms)" 200 "$(kv worst_ms "$out")"
	assert_le "$mode: memory growth over the plain client (kB)" 102400 $(( $(kv hwm_kb "$out") - base_kb ))
	assert_le "$mode: CPU seconds in 1 s" 0.7 "$(kv cpu_s "$out")"
	assert_match "$mode: the outage is logged" 'does not answer \((refused a reply|no whole reply in time)' "$(cat "$T/cl_$mode.err")"
done
