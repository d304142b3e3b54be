#!/bin/bash
# RLT_NET's latency (issue 18; rlthrottle(7) NETWORK CONDITIONS): data and connection
# completions reach the program DUR after they reached its host, so each round trip of a
# request and its answer takes DUR more: blocking calls and an event loop (selectors: epoll,
# non-blocking, the wait held until the data is due, no spin), a connect, datagrams (each from
# its own arrival), jitter within DUR +- jitter; every byte of a stream arrives intact.
# fronts: preload seccomp
# parallel-safe: bound, no rate (a connect and round trips under latency=100ms or 50ms: at least the latency, at most 2-3 times it; no throughput measured)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
bg echo python3 "$ITEST_DIR/net_echo.py" "$T/port"
wait_file "$T/port" 10
port=$(cat "$T/port")

for how in block loop; do
	RLT_NET="latency=100ms" throttled python3 "$ITEST_DIR/net_rtt.py" "$port" 10 $how >"$T/$how.out" 2>"$T/$how.err" ||
		{ show "$T/$how.err"; fail "$how: round trips failed"; }
	out=$(cat "$T/$how.out")
	info "$how: $out"
	assert_range "$how: connect (ms)" 95 300 "$(kv conn_ms "$out")"
	assert_ge "$how: fastest round trip (ms)" 99 "$(kv min_ms "$out")"
	assert_range "$how: median round trip (ms)" 99 200 "$(kv median_ms "$out")"
	assert_le "$how: CPU (ms) over ~1 s of waiting" 1000 "$(kv cpu_ms "$out")"
done

# jitter: uniform within 100 +- 40 ms
RLT_NET="latency=100ms jitter=40ms seed=3" throttled python3 "$ITEST_DIR/net_rtt.py" "$port" 20 block >"$T/j.out" 2>"$T/j.err" ||
	{ show "$T/j.err"; fail "jitter: round trips failed"; }
out=$(cat "$T/j.out")
info "jitter: $out"
assert_ge "jitter: fastest (ms)" 59 "$(kv min_ms "$out")"
assert_le "jitter: slowest (ms) (140 and a loaded machine's scheduling)" 400 "$(kv max_ms "$out")"
assert_ge "jitter: spread (ms)" 20 $(($(kv max_ms "$out") - $(kv min_ms "$out")))

# datagrams: each held from its own arrival
cat >"$T/udp.py" <<'PY'
import os, socket, statistics, sys, time
if sys.argv[1] == "echo":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0))
    open(sys.argv[2] + ".tmp", "w").write(str(s.getsockname()[1])); os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    s.settimeout(10)
    try:
        while True:
            d, a = s.recvfrom(2048); s.sendto(d, a)
    except socket.timeout:
        pass
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.connect(("127.0.0.1", int(sys.argv[2]))); s.settimeout(5)
    r = []
    for i in range(10):
        t = time.monotonic(); s.send(b"%d" % i); assert s.recv(64) == b"%d" % i; r.append((time.monotonic() - t) * 1000)
    print("median_ms=%d min_ms=%d" % (statistics.median(r), min(r)))
PY
bg uecho python3 "$T/udp.py" echo "$T/uport"
wait_file "$T/uport" 10
RLT_NET="latency=50ms" throttled python3 "$T/udp.py" client "$(cat "$T/uport")" >"$T/u.out" 2>"$T/u.err" ||
	{ show "$T/u.err"; fail "datagrams: round trips failed"; }
info "datagrams: $(cat "$T/u.out")"
assert_ge "datagrams: fastest round trip (ms)" 49 "$(kv min_ms "$T/u.out")"
assert_le "datagrams: median round trip (ms)" 150 "$(kv median_ms "$T/u.out")"

# a stream's bytes: all of them, in order (1 MiB through the delay)
"$ITEST_BIN/fnv" -g 1048576 >"$T/blob" 2>/dev/null || head -c 1048576 /dev/urandom >"$T/blob"
python3 -c '
import socket, sys, os
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
open(sys.argv[2] + ".tmp", "w").write(str(s.getsockname()[1])); os.rename(sys.argv[2] + ".tmp", sys.argv[2])
s.settimeout(10); c, _ = s.accept(); c.sendall(open(sys.argv[1], "rb").read()); c.close()' "$T/blob" "$T/bport" &
BG_PIDS="$BG_PIDS $!"
wait_file "$T/bport" 10
RLT_NET="latency=20ms" throttled python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1]))); out = open(sys.argv[2], "wb")
while True:
    d = s.recv(65536)
    if not d: break
    out.write(d)' "$(cat "$T/bport")" "$T/got" || fail "the download failed"
sha256_eq "$T/blob" "$T/got"
exit 0
