# Sends the lines of `lines gen` (argv[1]) on one blocking TCP connection to 127.0.0.1:argv[2]
# from argv[3] threads, thread t sending the t-th share of the lines, one sendall a line, all
# threads started together. Prints sent=BYTES.
import socket
import sys
import threading

lines = open(sys.argv[1], "rb").read().splitlines(keepends=True)
port, nthreads = int(sys.argv[2]), int(sys.argv[3])
per = len(lines) // nthreads
sock = socket.create_connection(("127.0.0.1", port))
start = threading.Barrier(nthreads)


def sender(t):
    start.wait()
    for line in lines[t * per:(t + 1) * per]:
        sock.sendall(line)


threads = [threading.Thread(target=sender, args=(t,)) for t in range(nthreads)]
for th in threads:
    th.start()
for th in threads:
    th.join()
sock.close()
print("sent=%d" % sum(len(l) for l in lines[:per * nthreads]))
