#!/usr/bin/env python3
"""keys_io.py: the programs of the key= tests on send and receive (test_keys_send.sh,
test_keys_recv.sh, test_keys_udp.sh). Loopback only; every loop is bounded in count and time.

  serve PORTFILE FILE N          TCP: send FILE to each of N clients at once (one thread each)
  get PORT SRC OUT BURST         TCP: download from SRC into OUT
  sink PORTFILE OUTDIR N BURST   TCP: take N uploads at once, each into OUTDIR/<client address>
  put PORT SRC FILE              TCP: upload FILE from SRC
  udp-sink PORTFILE N ADDR...    UDP: take N datagrams on a socket on each ADDR (PORTFILE: their
                                 ports, in order)
  udp-send ADDR:PORT... N RATE   UDP: N datagrams to each ADDR:PORT, in turn, RATE a second
  udp-blast PORT SRC... N RATE   UDP: N datagrams from each SRC to 127.0.0.1:PORT, in turn

A TCP reader prints "addr=A bytes=B span_ns=S": the span from the moment its count passed BURST
(what the burst lets through at once) to its end, over which B - BURST bytes came. A UDP
receiver prints one such line per sender (with several sockets: per socket's own address) with
its datagram count and the span from its first datagram to its last (burst=1: n - 1 slots).
"""
import os
import select
import socket
import sys
import threading
import time

DEADLINE = time.monotonic() + 20  # nothing here runs longer


def write_port(path, port):
    with open(path + ".tmp", "w") as f:
        f.write("%d\n" % port)
    os.rename(path + ".tmp", path)


def listener(portfile, n):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(n)
    s.settimeout(10)
    write_port(portfile, s.getsockname()[1])
    return s


def read_all(conn, out, burst):
    """Reads conn to its end into out; returns (bytes, span_ns after the burst)."""
    total, t_burst = 0, None
    conn.settimeout(15)
    while time.monotonic() < DEADLINE:
        b = conn.recv(65536)
        if not b:
            break
        out.write(b)
        total += len(b)
        if t_burst is None and total >= burst:
            t_burst = time.monotonic_ns()
    end = time.monotonic_ns()
    return total, (end - t_burst) if t_burst else 0


def serve(portfile, path, n):
    data = open(path, "rb").read()
    s = listener(portfile, n)
    conns = [s.accept()[0] for _ in range(n)]
    ts = [threading.Thread(target=c.sendall, args=(data,)) for c in conns]
    for t in ts:
        t.start()
    for t in ts:
        t.join(15)
    for c in conns:
        c.close()


def get(port, src, out, burst):
    c = socket.socket()
    c.bind((src, 0))
    c.settimeout(5)
    c.connect(("127.0.0.1", port))
    with open(out, "wb") as f:
        total, span = read_all(c, f, burst)
    print("addr=%s bytes=%d span_ns=%d" % (src, total, span), flush=True)


def sink(portfile, outdir, n, burst):
    s = listener(portfile, n)
    lines = []

    def one(conn, addr):
        with open(os.path.join(outdir, addr), "wb") as f:
            total, span = read_all(conn, f, burst)
        conn.close()
        lines.append("addr=%s bytes=%d span_ns=%d" % (addr, total, span))

    ts = []
    for _ in range(n):
        conn, (addr, _port) = s.accept()
        t = threading.Thread(target=one, args=(conn, addr))
        t.start()
        ts.append(t)
    for t in ts:
        t.join(18)
    for line in sorted(lines):
        print(line, flush=True)


def put(port, src, path):
    c = socket.socket()
    c.bind((src, 0))
    c.settimeout(15)
    c.connect(("127.0.0.1", port))
    c.sendall(open(path, "rb").read())
    c.close()


def report(seen):
    for addr in sorted(seen):
        ts = seen[addr]
        print("addr=%s msgs=%d span_ns=%d" % (addr, len(ts), ts[-1] - ts[0]), flush=True)


def udp_sink(portfile, n, addrs):
    socks = []
    for a in addrs:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((a, 0))
        socks.append(s)
    with open(portfile + ".tmp", "w") as f:
        f.write(" ".join(str(s.getsockname()[1]) for s in socks) + "\n")
    os.rename(portfile + ".tmp", portfile)
    seen, left = {}, n
    while left > 0 and time.monotonic() < DEADLINE:
        r, _w, _x = select.select(socks, [], [], 5)
        if not r:
            break
        for s in r:
            _data, (src, _p) = s.recvfrom(2048)
            key = s.getsockname()[0] if len(socks) > 1 else src
            seen.setdefault(key, []).append(time.monotonic_ns())
            left -= 1
    report(seen)


def paced(n, rate, send_round):
    """send_round(i) for i in 0..n-1, rate rounds a second, until DEADLINE."""
    gap = 1.0 / rate
    nxt = time.monotonic()
    for i in range(n):
        send_round(i)
        nxt += gap
        d = nxt - time.monotonic()
        if d > 0:
            time.sleep(d)
        if time.monotonic() > DEADLINE:
            break


def udp_send(dests, n, rate):
    """One socket, unconnected: the destinations take turns (the key is each datagram's)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    dests = [(d.split(":")[0], int(d.split(":")[1])) for d in dests]

    def round_(i):
        for d in dests:
            s.sendto(b"d%05d" % i, d)
    paced(n, rate, round_)


def udp_blast(port, srcs, n, rate):
    socks = []
    for a in srcs:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((a, 0))
        socks.append(s)

    def round_(i):
        for s in socks:
            s.sendto(b"d%05d" % i, ("127.0.0.1", port))
    paced(n, rate, round_)


def main(a):
    if a[0] == "serve":
        serve(a[1], a[2], int(a[3]))
    elif a[0] == "get":
        get(int(a[1]), a[2], a[3], int(a[4]))
    elif a[0] == "sink":
        sink(a[1], a[2], int(a[3]), int(a[4]))
    elif a[0] == "put":
        put(int(a[1]), a[2], a[3])
    elif a[0] == "udp-sink":
        udp_sink(a[1], int(a[2]), a[3:])
    elif a[0] == "udp-send":
        udp_send(a[1:-2], int(a[-2]), float(a[-1]))
    elif a[0] == "udp-blast":
        udp_blast(int(a[1]), a[2:-2], int(a[-2]), float(a[-1]))
    else:
        sys.exit("keys_io.py: unknown mode %s" % a[0])


if __name__ == "__main__":
    main(sys.argv[1:])
