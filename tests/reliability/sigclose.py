"""sigclose.py [N] [SECONDS]: socket(), connect() to a listener of its own (a thread accepts and
closes), close(), N times (default 3000) or for SECONDS (default 4), while SIGALRM arrives every
1 ms (Python's handlers have no SA_RESTART, and PEP 475 does not retry close). Prints
iterations=N close_interrupted=E handlers=H (E: socket.close() raised InterruptedError)."""
import socket, signal, sys, time
n = {"h": 0}
def h(s, f): n["h"] += 1
signal.signal(signal.SIGALRM, h)
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(4096)
port = l.getsockname()[1]
import threading
def acc():
    while True:
        try:
            c, _ = l.accept(); c.close()
        except InterruptedError: continue
        except OSError: return
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
t = threading.Thread(target=acc, daemon=True); t.start()
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGALRM])
signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)
errs = 0; iters = 0; end = time.time() + (float(sys.argv[2]) if len(sys.argv) > 2 else 4)
while time.time() < end and iters < (int(sys.argv[1]) if len(sys.argv) > 1 else 3000):
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", port))
    except InterruptedError:
        pass
    try:
        s.close()
    except InterruptedError:
        errs += 1
    iters += 1
signal.setitimer(signal.ITIMER_REAL, 0, 0)
print("iterations=%d close_interrupted=%d handlers=%d" % (iters, errs, n["h"]))
