#!/usr/bin/env python3
"""rate_phases.py: a sender and a receiver whose rates are measured by phases, at the receiver.

  rate_phases.py serve PORTFILE FILE [HOLD GOFILE]
                                         listen on 127.0.0.1, write its pid (PORTFILE.pid) and
                                         the port, send FILE to the first client, close; with
                                         HOLD, after HOLD bytes it writes PORTFILE.held and waits
                                         (bounded, 30 s) for GOFILE before sending the rest in
                                         1 KiB sends
  rate_phases.py fetch PORT OUT SAMPLES  receive everything into OUT; SAMPLES gets one line
                                         "t_ns total" per receive (CLOCK_REALTIME, as date +%s%N);
                                         SAMPLES.first appears at the first byte
  rate_phases.py rate FROM_NS TO_NS SAMPLES...
                                         bytes per second received between two instants: for
                                         each receiver, between its first and last samples
                                         inside (so that the bytes of one receive are not cut in
                                         two by an edge); the receivers' rates added
  rate_phases.py total FROM_NS TO_NS SAMPLES...
                                         bytes per second received between two instants by all
                                         the receivers together (each counted to its last sample
                                         at or before each instant)
  rate_phases.py first SAMPLES           the time of the first byte
  rate_phases.py after FROM_NS SAMPLES   the time of the first receive after an instant (or 0)
"""
import bisect
import os
import socket
import sys
import time


def serve(portfile, path, hold=None, gofile=None):
    data = open(path, "rb").read()
    hold = len(data) if hold is None else int(hold)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    # the pid of the throttled program itself (under a launcher, its parent is another
    # process), for `rlthrottle set`
    with open(portfile + ".pid", "w") as f:
        f.write("%d\n" % os.getpid())
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % s.getsockname()[1])
    os.rename(portfile + ".tmp", portfile)
    c, _ = s.accept()
    for i in range(0, hold, 65536):
        c.sendall(data[i:min(i + 65536, hold)])
    if hold < len(data):
        open(portfile + ".held", "w").write("1\n")
        for _ in range(3000):
            if os.path.exists(gofile):
                break
            time.sleep(0.01)
        for i in range(hold, len(data), 1024):
            c.sendall(data[i:i + 1024])
    c.close()


def fetch(port, out, samples):
    s = socket.create_connection(("127.0.0.1", int(port)))
    got, total, lines = [], 0, []
    while True:
        b = s.recv(65536)
        if not b:
            break
        if not got:
            open(samples + ".first", "w").write("1\n")
        got.append(b)
        total += len(b)
        lines.append("%d %d\n" % (time.time_ns(), total))
    open(out, "wb").write(b"".join(got))
    open(samples, "w").write("".join(lines))


def load(path):
    ts, tot = [], []
    for line in open(path):
        t, n = line.split()
        ts.append(int(t))
        tot.append(int(n))
    return ts, tot


def rate(t_from, t_to, paths):
    t_from, t_to = int(t_from), int(t_to)
    total = 0.0
    for p in paths:
        ts, tot = load(p)
        i = bisect.bisect_left(ts, t_from)
        j = bisect.bisect_right(ts, t_to) - 1
        if j <= i or ts[j] - ts[i] < (t_to - t_from) // 2:
            print("0")
            return
        total += (tot[j] - tot[i]) * 1e9 / (ts[j] - ts[i])
    print("%.0f" % total)


def total(t_from, t_to, *paths):
    t_from, t_to = int(t_from), int(t_to)
    moved = 0
    for p in paths:
        ts, tot = load(p)
        upto = lambda t: tot[bisect.bisect_right(ts, t) - 1] if bisect.bisect_right(ts, t) else 0
        moved += upto(t_to) - upto(t_from)
    print("%.0f" % (moved * 1e9 / (t_to - t_from)))


def first(path):
    print(load(path)[0][0])


def after(t_from, path):
    ts, _ = load(path)
    i = bisect.bisect_right(ts, int(t_from))
    print(ts[i] if i < len(ts) else 0)


def windows(lo, hi, path):
    """A fixed window's rate inside [lo, hi] (realtime ns): the bytes received between the
    half-windows around the window starts (CLOCK_MONOTONIC multiples of 1 s), per second, and
    how many whole windows that spans: "windows bytes_per_second"."""
    lo, hi = int(lo), int(hi)
    off = time.time_ns() - time.monotonic_ns()  # the window starts, in the samples' clock
    ts, tot = load(path)
    at = lambda t: tot[bisect.bisect_right(ts, t) - 1] if bisect.bisect_right(ts, t) else 0
    W = 10**9
    k = (lo - off + W // 2 + W - 1) // W  # the first start with its half-window after lo
    m = (hi - off - W // 2) // W          # the last start whose burst has begun before hi - W/2
    if m <= k:
        print(0, 0)
        return
    a, b = k * W + off - W // 2, m * W + off - W // 2
    print(m - k, (at(b) - at(a)) * W // (b - a))


if __name__ == "__main__":
    {"serve": serve, "fetch": fetch, "first": first, "after": after, "total": total, "windows": windows}.get(
        sys.argv[1], lambda *a: rate(a[0], a[1], a[2:]))(*sys.argv[2:])
