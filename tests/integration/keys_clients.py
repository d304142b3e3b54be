# keys_clients.py PORT: three clients, bound to 127.0.0.2, .3 and .4, each open a connection to
# 127.0.0.1:PORT every 25 ms for 3 s and send a request without waiting for the answer (a
# connection waits in the listen queue until a worker accepts it). Prints "start T" (when they
# began, time.time()) and each client's tries; the connections stay open until the end.
import socket, sys, threading, time
port, secs = int(sys.argv[1]), 3.0
t0 = time.time()
print("start %.3f" % t0, flush=True)
held = []
def client(src):
    n, nxt = 0, t0
    while time.time() < t0 + secs and n < 200:
        s = socket.socket()
        s.bind((src, 0))
        s.settimeout(2)
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        except OSError as e:
            print("client %s: %s" % (src, e), flush=True)
        held.append(s)
        n += 1
        nxt += 0.025
        time.sleep(max(0, nxt - time.time()))
    print("client %s tried %d" % (src, n), flush=True)
ts = [threading.Thread(target=client, args=(a,)) for a in ("127.0.0.2", "127.0.0.3", "127.0.0.4")]
for t in ts: t.start()
for t in ts: t.join()
time.sleep(0.2)
