# sigpartial.py PORT FILE MODE: sends FILE's bytes while one SIGALRM comes 0.5 s after the start.
# MODE sendall: socket.sendall, the handler raises; MODE send: a loop of socket.send that stops
# at the first return after the handler ran (which only sets a flag), counting what went.
# Prints "late_s=L sent=N" (L: from the signal to the end of the call; N: -1 when not known).
import signal
import socket
import sys
import time

port, path, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
data = open(path, "rb").read()
fired = False


class Alarm(Exception):
    pass


def on_alarm(signum, frame):
    global fired
    fired = True
    if mode == "sendall":
        raise Alarm()


signal.signal(signal.SIGALRM, on_alarm)
s = socket.create_connection(("127.0.0.1", port))
t0 = time.monotonic()
signal.setitimer(signal.ITIMER_REAL, 0.5)
sent = -1
try:
    if mode == "sendall":
        s.sendall(data)
    else:
        view = memoryview(data)
        sent = 0
        while sent < len(data) and not fired:
            sent += s.send(view[sent:])
except Alarm:
    pass
late = time.monotonic() - (t0 + 0.5)
print("late_s=%.3f sent=%d fired=%d" % (late, sent, fired), flush=True)
s.close()
