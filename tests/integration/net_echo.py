# net_echo.py PORTFILE: a TCP echo server on loopback (one thread per connection), its port
# written to PORTFILE; it ends 20 s after its last connection came.
import socket, sys, threading, os
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(16)
open(sys.argv[1]+".tmp","w").write(str(srv.getsockname()[1])); os.rename(sys.argv[1]+".tmp", sys.argv[1])
def serve(c):
    while True:
        d = c.recv(65536)
        if not d: break
        c.sendall(d)
srv.settimeout(20)
while True:
    try: c, _ = srv.accept()
    except socket.timeout: break
    threading.Thread(target=serve, args=(c,), daemon=True).start()
