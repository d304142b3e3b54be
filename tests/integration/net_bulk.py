# net_bulk.py serve FILE PORTFILE: a TCP server on loopback that sends FILE whole to each
# connection and closes it (one thread per connection; it ends 20 s after its last one).
# net_bulk.py read HOW PORT OUT: one download into OUT, read the way HOW says: block (blocking
# recv), epoll, poll, select (selectors, non-blocking), asyncio; prints ms=N (its time).
import os, socket, sys, threading, time


def serve(path, portfile):
    data = open(path, "rb").read()
    srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(16)
    open(portfile + ".tmp", "w").write(str(srv.getsockname()[1])); os.rename(portfile + ".tmp", portfile)

    def one(c):
        try:
            c.sendall(data)
        finally:
            c.close()
    srv.settimeout(20)
    while True:
        try:
            c, _ = srv.accept()
        except socket.timeout:
            break
        threading.Thread(target=one, args=(c,), daemon=True).start()


def by_selector(sel, s, out):
    s.setblocking(False)
    sel.register(s, __import__("selectors").EVENT_READ)
    while True:
        for _key, _ev in sel.select(timeout=10) or [(None, None)]:
            if _key is None:
                raise SystemExit("no readiness in 10 s")
            try:
                d = s.recv(65536)
            except BlockingIOError:
                continue
            if not d:
                return
            out.write(d)


def read(how, port, path):
    t = time.monotonic()
    out = open(path, "wb")
    if how == "asyncio":
        import asyncio

        async def main():
            r, w = await asyncio.open_connection("127.0.0.1", port)
            while True:
                d = await r.read(65536)
                if not d:
                    break
                out.write(d)
            w.close()
        asyncio.run(main())
    else:
        s = socket.create_connection(("127.0.0.1", port))
        if how == "block":
            while True:
                d = s.recv(65536)
                if not d:
                    break
                out.write(d)
        else:
            import selectors
            sel = {"epoll": selectors.EpollSelector, "poll": selectors.PollSelector,
                   "select": selectors.SelectSelector}[how]()
            by_selector(sel, s, out)
    out.close()
    print("ms=%d" % ((time.monotonic() - t) * 1000))


if sys.argv[1] == "serve":
    serve(sys.argv[2], sys.argv[3])
else:
    read(sys.argv[2], int(sys.argv[3]), sys.argv[4])
