# sha_sink.py PORT: accepts one connection on 127.0.0.1:PORT, reads it to the end and prints
# "bytes=N secs=S sha=HEX" (S counted from the accept), so that a test can check what an upload
# delivered and how long it took.
import hashlib
import socket
import sys
import time

l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1])))
l.listen(1)
c, _ = l.accept()
t0 = time.monotonic()
h = hashlib.sha256()
n = 0
while True:
    d = c.recv(65536)
    if not d:
        break
    h.update(d)
    n += len(d)
print("bytes=%d secs=%.3f sha=%s" % (n, time.monotonic() - t0, h.hexdigest()))
