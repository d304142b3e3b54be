# A server that says what it saw: listens on 127.0.0.1:argv[1], writes "listening" to
# argv[2], then for each connection appends "accepted", answers a one-line HTTP response to
# what it sent (nothing when it sends nothing and closes) and closes it. For the tests that
# check a condition keeps a connection from the server (connect=refuse, connect=timeout).
import socket, sys

l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(8)
open(sys.argv[2], "w").write("listening\n")
while True:
    c, _ = l.accept()
    open(sys.argv[2], "a").write("accepted\n")
    c.settimeout(2)
    try:
        if c.recv(4096):
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
    except OSError:
        pass
    c.close()
