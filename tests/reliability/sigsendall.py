# sigsendall.py PORT INTERVAL_S FILE: socket.sendall of FILE's bytes while SIGALRM arrives every
# INTERVAL_S seconds (setitimer), its handler writing a byte to /dev/null. Prints one line per
# sendall return: "sendall returned handlers=N".
import os
import signal
import socket
import sys

port, interval, path = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
data = open(path, "rb").read()
devnull = os.open("/dev/null", os.O_WRONLY)
handlers = 0


def on_alarm(signum, frame):
    global handlers
    handlers += 1
    os.write(devnull, b"x")


signal.signal(signal.SIGALRM, on_alarm)
s = socket.create_connection(("127.0.0.1", port))
signal.setitimer(signal.ITIMER_REAL, interval, interval)
s.sendall(data)
signal.setitimer(signal.ITIMER_REAL, 0, 0)
print("sendall returned handlers=%d" % handlers, flush=True)
s.close()
