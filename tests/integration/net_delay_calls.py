# net_delay_calls.py CASE: one receive call's behaviour under RLT_NET's latency (set by the
# test to 50ms) against a server in this process's own thread (not under the condition: it
# only sends). Prints "ok CASE ..." or raises. Cases: peek, dontwait, waitall, eof, reset,
# resetwaitall, rcvtimeo,
# threads, dup, fork, swap, oneshot, splice, stdio, listen.
import os, socket, struct, sys, threading, time

LAT = 0.05
case = sys.argv[1]
# 1 MiB, known: the pattern repeats every 256 bytes (made so, not byte by byte: 0.2 s a case)
blob = bytes((i * 7 + 3) & 0xff for i in range(256)) * 4096


def server(act):
    """A listener whose one connection `act(conn)` serves, in a thread; the client socket."""
    srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)

    def run():
        c, _ = srv.accept()
        act(c)
    threading.Thread(target=run, daemon=True).start()
    s = socket.create_connection(srv.getsockname())
    return s


def read_to_reset(s, out):
    """Receives after `out` until the reset (an end fails); all of it is the 64 KiB sent."""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                raise SystemExit("an end, not a reset, after %d bytes" % len(out))
            out += d
    except ConnectionResetError:
        pass
    assert bytes(out) == blob[:65536], len(out)
    return out


def read_all(s, n=65536):
    out = bytearray()
    while True:
        d = s.recv(n)
        if not d:
            return bytes(out)
        out += d


if case == "peek":
    # a peek waits for its data like a receive (DUR after it was sent), and leaves it there;
    # FIONREAD counts it
    sent = []
    s = server(lambda c: (time.sleep(0.2), sent.append(time.monotonic()), c.sendall(b"hello"),
                          time.sleep(1)))
    p = s.recv(5, socket.MSG_PEEK)
    ms = (time.monotonic() - sent[0]) * 1000
    assert p == b"hello"[:len(p)] and p, p
    import fcntl, termios
    inq = struct.unpack("i", fcntl.ioctl(s.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]
    assert inq == len(p), (inq, p)  # FIONREAD: the bytes due, which the line holds
    got = s.recv(5)
    assert got.startswith(p), (p, got)
    assert ms >= LAT * 1000 - 1, ms
    print("ok peek ms_after_send=%d" % ms)
elif case == "dontwait":
    # MSG_DONTWAIT on a blocking socket: EAGAIN while the data is held (it reached the host,
    # it is not due), the data once due
    sent = []
    s = server(lambda c: (time.sleep(0.2), sent.append(time.monotonic()), c.sendall(b"x" * 100),
                          time.sleep(1)))
    while not sent:
        time.sleep(0.001)
    time.sleep(0.01)
    try:
        s.recv(100, socket.MSG_DONTWAIT)
        raise SystemExit("data before it was due")
    except BlockingIOError:
        pass
    time.sleep(max(0, sent[0] + LAT + 0.01 - time.monotonic()))
    got = s.recv(100, socket.MSG_DONTWAIT)
    assert got == b"x" * 100, got
    print("ok dontwait")
elif case == "waitall":
    # MSG_WAITALL gets all it asked for, from pieces sent 100 ms apart
    def act(c):
        c.sendall(blob[:300000]); time.sleep(0.1); c.sendall(blob[300000:600000]); time.sleep(1)
    s = server(act)
    got = s.recv(600000, socket.MSG_WAITALL)
    assert got == blob[:600000], len(got)
    print("ok waitall bytes=%d" % len(got))
elif case == "eof":
    # the end after the data: every byte, then b"" (and again b"")
    s = server(lambda c: (c.sendall(blob), c.close()))
    got = read_all(s)
    assert got == blob, len(got)
    assert s.recv(10) == b""
    print("ok eof bytes=%d" % len(got))
elif case == "reset":
    # a reset after the data: the data first, then ECONNRESET
    def act(c):
        c.sendall(blob[:65536]); time.sleep(0.02)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)); c.close()
    s = server(act)
    time.sleep(0.2)  # the data and the reset have both reached the host
    out = read_to_reset(s, bytearray())
    print("ok reset bytes=%d" % len(out))
elif case == "resetwaitall":
    # a reset 20 ms after the data, read by one MSG_WAITALL receive asking for more: the data
    # comes short (as the kernel's), and the next receive is told the reset, not an end
    def act(c):
        c.sendall(blob[:65536]); time.sleep(0.02)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)); c.close()
    s = server(act)
    d = s.recv(131072, socket.MSG_WAITALL)
    assert d == blob[:len(d)], len(d)
    out = read_to_reset(s, bytearray(d))
    print("ok resetwaitall bytes=%d" % len(out))
elif case == "rcvtimeo":
    # a blocking receive with SO_RCVTIMEO that nothing reaches ends by it (EAGAIN)
    s = server(lambda c: time.sleep(2))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 0, 300000))
    t = time.monotonic()
    try:
        s.recv(10)
        raise SystemExit("a receive returned")
    except BlockingIOError:
        pass
    ms = (time.monotonic() - t) * 1000
    assert 290 <= ms <= 1500, ms
    print("ok rcvtimeo ms=%d" % ms)
elif case == "threads":
    # two threads reading one socket: every byte reaches one of them
    big = blob * 4
    s = server(lambda c: (c.sendall(big), c.close()))
    counts = [0, 0]

    def reader(i):
        while True:
            d = s.recv(50000)
            if not d:
                return
            counts[i] += len(d)
    ts = [threading.Thread(target=reader, args=(i,)) for i in range(2)]
    [t.start() for t in ts]
    [t.join(20) for t in ts]
    assert sum(counts) == len(big), counts
    print("ok threads bytes=%d split=%s" % (sum(counts), counts))
elif case == "dup":
    # half through the socket's fd, the rest through a dup of it: the line is the socket's
    s = server(lambda c: (c.sendall(blob), c.close()))
    first = s.recv(100000)
    while len(first) < 100000:
        first += s.recv(100000 - len(first))
    d = socket.socket(fileno=os.dup(s.fileno()))
    s.close()
    got = first + read_all(d)
    assert got == blob, len(got)
    print("ok dup bytes=%d" % len(got))
elif case == "fork":
    # a forked child goes on with what its parent held back: the parent reads a part, the
    # child the rest (its copy of the delay line, then the kernel's)
    s = server(lambda c: (c.sendall(blob), c.close()))
    time.sleep(0.2)  # all of it reached the host
    first = s.recv(1000)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        rest = read_all(s)
        os.write(w, b"1" if first + rest == blob else b"0")
        os._exit(0)
    os.close(w)
    ok = os.read(r, 1)
    os.waitpid(pid, 0)
    assert ok == b"1", ok
    print("ok fork")
elif case == "swap":
    # a blocking receive waiting for its data while another thread dup2()s a second
    # connection onto its fd number: it gets its own connection's bytes (the fd is not the
    # socket), and the number then reads the other's
    a = server(lambda c: (time.sleep(0.3), c.sendall(b"A" * 1000), time.sleep(1)))
    b = server(lambda c: (c.sendall(b"B" * 1000), time.sleep(1)))
    got = []
    t = threading.Thread(target=lambda: got.append(a.recv(1000, socket.MSG_WAITALL)))
    t.start()
    time.sleep(0.15)
    os.dup2(b.fileno(), a.fileno())
    t.join(5)
    assert got and got[0] == b"A" * 1000, got[0][:20] if got else "none"
    rest = a.recv(1000, socket.MSG_WAITALL)
    assert rest == b"B" * 1000, rest[:20]
    print("ok swap")
elif case == "oneshot":
    # an epoll one-shot registration (the program re-arms it) under latency: the waits cannot
    # hold it, so the kernel keeps its data and readiness: every byte comes, the last without
    # waiting for the connection's end (the server holds it open 3 s)
    import select
    s = server(lambda c: (c.sendall(blob), time.sleep(3), c.close()))
    s.setblocking(False)
    ep = select.epoll()
    ep.register(s.fileno(), select.EPOLLIN | select.EPOLLONESHOT)
    out, t = bytearray(), time.monotonic()
    while len(out) < len(blob) and time.monotonic() - t < 10:
        if not ep.poll(5):
            raise SystemExit("no readiness in 5 s after %d bytes" % len(out))
        try:
            d = s.recv(65536)
        except BlockingIOError:
            d = None
        if d == b"":
            break
        if d:
            out += d
        ep.modify(s.fileno(), select.EPOLLIN | select.EPOLLONESHOT)
    ms = (time.monotonic() - t) * 1000
    assert bytes(out) == blob, len(out)
    assert ms < 2000, ms
    print("ok oneshot bytes=%d ms=%d" % (len(out), ms))
elif case == "splice":
    # receives, then splice() through a pipe (a proxy's way): splice reads the kernel, so the
    # line takes no more and hands on what it holds first: every byte, in order
    s = server(lambda c: (c.sendall(blob), c.close()))
    time.sleep(0.2)  # all of it reached the host
    out = bytearray(s.recv(1000))
    r, w = os.pipe()
    while True:
        n = os.splice(s.fileno(), w, 65536)
        if n == 0:
            break
        while n:
            d = os.read(r, n)
            out += d
            n -= len(d)
    assert bytes(out) == blob, len(out)
    print("ok splice bytes=%d" % len(out))
elif case == "stdio":
    # C stdio on the socket (fdopen, fgets through ctypes): glibc's FILE reads with its own
    # read, which must not miss what the line holds after a poll took it in
    import ctypes, select
    libc = ctypes.CDLL(None)
    libc.fdopen.restype = ctypes.c_void_p
    libc.fgets.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p]
    libc.fgets.restype = ctypes.c_char_p
    lines_ = b"".join(b"line %06d\n" % i for i in range(20000))
    s = server(lambda c: (c.sendall(lines_), c.close()))
    select.select([s], [], [], 5)  # the wait takes the data into the line
    f = libc.fdopen(os.dup(s.fileno()), b"r")
    buf, out = ctypes.create_string_buffer(64), bytearray()
    while libc.fgets(buf, 64, f):
        out += buf.value
    assert bytes(out) == lines_, len(out)
    print("ok stdio bytes=%d" % len(out))
elif case == "listen":
    # a listener under latency in an event loop (epoll, then poll): its readiness is its
    # connections' (no line of its own), each connection's data DUR late, every byte
    import selectors
    for kind in (selectors.EpollSelector, selectors.PollSelector):
        srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(8); srv.setblocking(False)
        sel = kind(); sel.register(srv, selectors.EVENT_READ)

        def client():
            c = socket.create_connection(srv.getsockname()); c.sendall(blob); c.close()
        for _ in range(3):
            threading.Thread(target=client, daemon=True).start()
        got, done, t, wakes = {}, 0, time.monotonic(), 0
        while done < 3 and time.monotonic() - t < 10:
            for key, _ in sel.select(timeout=5):
                wakes += 1
                if key.fileobj is srv:
                    c, _ = srv.accept(); c.setblocking(False); got[c] = bytearray()
                    sel.register(c, selectors.EVENT_READ)
                    continue
                try:
                    d = key.fileobj.recv(65536)
                except BlockingIOError:
                    continue
                if d:
                    got[key.fileobj] += d
                else:
                    sel.unregister(key.fileobj); done += 1
        assert done == 3 and all(bytes(v) == blob for v in got.values()), (done, [len(v) for v in got.values()])
        assert wakes < 2000, wakes  # no spin
        print("ok listen %s wakes=%d" % (kind.__name__, wakes))
else:
    raise SystemExit("no case " + case)
