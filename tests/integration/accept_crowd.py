# The clients of tests/integration/test_nonblock_accept_keyed.sh, unthrottled: one connection
# from 127.0.0.1 that pings all along, a crowd of argv[2] more from 127.0.0.1 at once, then,
# 0.5 s later, one from 127.0.0.2 (another key); every connection is then checked served.
# The ping goes on for most of the crowd's wait at 4/s.
# Prints the crowd served, the worst ping round trip while the crowd waits, and when the
# connection from 127.0.0.2 was answered (ms after the crowd connected).
import socket, sys, time

port, n = int(sys.argv[1]), int(sys.argv[2])
ping = socket.create_connection(("127.0.0.1", port)); ping.settimeout(5)
time.sleep(0.3)
t0 = time.monotonic()
crowd = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
for c in crowd:
    c.send(b"hello")  # sent at once: a read right after the accept finds it
worst, other, other_ms = 0, None, -1
end = time.time() + max(1.0, 0.2 * n)  # most of the crowd's wait at 4/s
while time.time() < end:
    if other is None and time.monotonic() - t0 > 0.5:
        other = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.2", 0))
        other.settimeout(5); other.send(b"other")
        assert other.recv(16) == b"other", "the other client was not served"
        other_ms = (time.monotonic() - t0) * 1000
    s = time.monotonic(); ping.send(b"p"); assert ping.recv(16) == b"p"
    worst = max(worst, time.monotonic() - s); time.sleep(0.02)
for c in crowd:
    c.settimeout(10)
    assert c.recv(16) == b"hello", "a connection of the crowd was not served"
print("served=%d worst_ping_ms=%d other_ms=%d" % (n, worst * 1000, other_ms))
