#!/usr/bin/env python3
"""tfo_client.py: connections made by TCP Fast Open (sendto with MSG_FASTOPEN), not connect().

  tfo_client.py PORT N BYTES [sendmsg]
      opens N sockets to 127.0.0.1:PORT, each connected by one sendto(data, MSG_FASTOPEN,
      addr) (or sendmsg) of BYTES bytes, keeps them open until the end; prints one line per
      socket, "ok SENT SECONDS" or "err ERRNO_NAME", then "done".
"""
import errno
import socket
import sys
import time


def main():
    port, n, size = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    use_msg = len(sys.argv) > 4 and sys.argv[4] == "sendmsg"
    addr = ("127.0.0.1", port)
    keep = []
    for _ in range(n):
        s = socket.socket()
        keep.append(s)
        t0 = time.monotonic()
        try:
            data = b"x" * size
            if use_msg:
                sent = s.sendmsg([data], [], socket.MSG_FASTOPEN, addr)
            else:
                sent = s.sendto(data, socket.MSG_FASTOPEN, addr)
            print("ok %d %.3f" % (sent, time.monotonic() - t0), flush=True)
        except OSError as e:
            print("err %s" % errno.errorcode.get(e.errno, e.errno), flush=True)
    print("done", flush=True)
    for s in keep:
        s.close()


main()
