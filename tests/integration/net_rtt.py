# net_rtt.py PORT N block|loop: connects to an echo server, then N round trips of 4 bytes with
# blocking calls, or from an event loop (selectors, non-blocking); prints the connect's time,
# the round trips' median, min and max (ms) and the process's CPU time.
import socket, sys, time, statistics, os, selectors
port, n, how = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
t = time.monotonic(); s = socket.create_connection(("127.0.0.1", port)); conn_ms = (time.monotonic() - t) * 1000
rtts = []
if how == "block":
    for i in range(n):
        t = time.monotonic(); s.sendall(b"ping"); d = s.recv(16); rtts.append((time.monotonic() - t) * 1000)
else:
    s.setblocking(False); sel = selectors.DefaultSelector(); sel.register(s, selectors.EVENT_READ)
    for i in range(n):
        t = time.monotonic(); s.send(b"ping"); got = b""
        while not got:
            for k, _ in sel.select(timeout=2):
                try: got = s.recv(16)
                except BlockingIOError: pass
        rtts.append((time.monotonic() - t) * 1000)
print("conn_ms=%d median_ms=%d min_ms=%d max_ms=%d cpu_ms=%d" % (conn_ms, statistics.median(rtts), min(rtts), max(rtts), sum(os.times()[:2]) * 1000))
