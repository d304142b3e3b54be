# sigsendall.py PORT INTERVAL_S FILE: socket.sendall of FILE's bytes while SIGALRM arrives every
# INTERVAL_S seconds (setitimer), its handler writing a byte to /dev/null. Prints one line per
# sendall return: "sendall returned handlers=N".
import socket
import sys

import alarms

port, interval, path = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
data = open(path, "rb").read()
s = socket.create_connection(("127.0.0.1", port))
alarms.start(interval)
s.sendall(data)
alarms.stop()
print("sendall returned handlers=%d" % alarms.handlers, flush=True)
s.close()
