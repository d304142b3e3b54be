# An event-loop server on a non-blocking listener (selectors: epoll, poll or select, by
# argv[3]): echoes every connection, and says how many it accepted, over what span, how long
# its longest accept() call took, when the first connection from 127.0.0.2 was accepted, and
# its CPU. Writes its port to argv[1] once it listens; ends when argv[2] connections came and
# went, or after 20 s. For test_nonblock_accept_keyed.sh and test_nonblock_accept_connect.sh.
import os, selectors, socket, sys, time

want, kind = int(sys.argv[2]), sys.argv[3]
sel = {"epoll": selectors.EpollSelector, "poll": selectors.PollSelector,
       "select": selectors.SelectSelector}[kind]()
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(64); srv.setblocking(False)
open(sys.argv[1] + ".tmp", "w").write(str(srv.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
sel.register(srv, selectors.EVENT_READ)
took, at, other = [], [], None
open_, t0, end = 0, time.monotonic(), time.time() + 20
while (len(at) < want or open_) and time.time() < end:
    for k, _ in sel.select(timeout=1):
        if k.fileobj is srv:
            while True:
                s = time.monotonic()
                try:
                    c, peer = srv.accept()
                except BlockingIOError:
                    took.append(time.monotonic() - s)
                    break
                took.append(time.monotonic() - s)
                at.append(time.monotonic() - t0)
                if peer[0] == "127.0.0.2" and other is None:
                    other = at[-1]
                c.setblocking(False); sel.register(c, selectors.EVENT_READ); open_ += 1
        else:
            try:
                d = k.fileobj.recv(4096)
            except BlockingIOError:
                continue
            if d:
                k.fileobj.send(d)
            else:
                sel.unregister(k.fileobj); k.fileobj.close(); open_ -= 1
cpu = sum(os.times()[:2])
print("accepted=%d first_ms=%d last_ms=%d max_call_ms=%d other_ms=%d cpu_ms=%d" %
      (len(at), at[0] * 1000 if at else -1, at[-1] * 1000 if at else -1, max(took) * 1000,
       other * 1000 if other is not None else -1, cpu * 1000))
