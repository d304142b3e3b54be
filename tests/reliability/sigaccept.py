# sigaccept.py PORT N: a server that accepts N connections (blocking accept) and reads one
# line from each, while SIGALRM arrives every 3 ms (setitimer) and its handler writes a byte to
# /dev/null. Prints "lines=L distinct=D handlers=H".
import socket
import sys

import alarms

port, n = int(sys.argv[1]), int(sys.argv[2])
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", port))
l.listen(64)
print("listening", flush=True)
alarms.start(0.003)
lines = []
while len(lines) < n:
    c, _ = l.accept()
    buf = b""
    while not buf.endswith(b"\n"):
        b = c.recv(100)
        if not b:
            break
        buf += b
    lines.append(buf)
    c.close()
alarms.stop()
print("lines=%d distinct=%d handlers=%d" % (len(lines), len(set(lines)), alarms.handlers), flush=True)
