#!/bin/bash
# rlthrottle(7) NETWORK CONDITIONS: latency times what arrives by the kernel's receive
# timestamps (SO_TIMESTAMPNS), which it turns on itself; a program sees no control message it
# did not ask for (issue 18). A UDP receiver under latency=50ms reads each datagram with
# recvmsg and room for control data: none comes (the old build gave it an SCM_TIMESTAMPNS per
# datagram). A receiver that turned SO_TIMESTAMPNS on itself keeps getting its stamps, and a
# TCP stream under latency gives none either. A socket on an earlier one's fd number asks for
# its own timestamps (the old build left it without: its data was timed when first seen).
# fronts: preload seccomp
# parallel-safe: counts only (control messages per datagram; the delay is test_net_latency's)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
cat >"$T/udp.py" <<'PY'
import socket, sys
SO_TIMESTAMPNS = SCM_TIMESTAMPNS = 35  # Linux's; python's socket module has no name for them
own = sys.argv[1] == "own"
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); r.bind(("127.0.0.1", 0))
if own:
    r.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(r.getsockname())
r.settimeout(5)
stamps = other = got = 0
for i in range(3):
    s.send(b"d%d" % i)
    data, anc, flags, addr = r.recvmsg(100, 256)
    got += data == b"d%d" % i
    for level, kind, _ in anc:
        if level == socket.SOL_SOCKET and kind == SCM_TIMESTAMPNS:
            stamps += 1
        else:
            other += 1
# a stream too
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(1)
c = socket.create_connection(l.getsockname()); a, _ = l.accept()
a.sendall(b"stream")
c.settimeout(5)
sdata, sanc, _, _ = c.recvmsg(100, 256)
print("got=%d stamps=%d other=%d stream=%s stream_cmsgs=%d" % (got, stamps, other, sdata.decode(), len(sanc)))
PY
# a socket on the fd number of an earlier one gets its own timestamps: a datagram that came
# 400 ms before the receive is due at once under latency=200ms (timed by its arrival, not by
# when the receive first saw it: 200 ms later)
cat >"$T/reuse.py" <<'PY'
import socket, time
def pair():
    r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); r.bind(("127.0.0.1", 0))
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.connect(r.getsockname())
    r.settimeout(5)
    return r, s
r, s = pair(); s.send(b"a"); r.recv(10); fd = r.fileno(); r.close(); s.close()
r, s = pair()
s.send(b"b"); time.sleep(0.4)
t = time.monotonic(); r.recvmsg(10, 256)
print("same_fd=%d took_ms=%d" % (r.fileno() == fd, (time.monotonic() - t) * 1000))
PY
RLT_NET="latency=200ms" throttled python3 "$T/reuse.py" >"$T/reuse.out" 2>"$T/reuse.err" ||
	{ show "$T/reuse.err"; fail "the reuse receiver failed"; }
info "reuse: $(cat "$T/reuse.out")"
assert_eq "the second socket on the first one's fd number" 1 "$(kv same_fd "$T/reuse.out")"
assert_le "a datagram 400 ms old under latency=200ms: the receive (ms)" 100 "$(kv took_ms "$T/reuse.out")"

for who in lib own; do
	RLT_NET="latency=50ms" throttled python3 "$T/udp.py" $who >"$T/$who.out" 2>"$T/$who.err" ||
		{ show "$T/$who.err"; fail "the receiver ($who) failed"; }
	info "$who: $(cat "$T/$who.out")"
	assert_eq "$who: datagrams received" 3 "$(kv got "$T/$who.out")"
	assert_eq "$who: other control messages" 0 "$(kv other "$T/$who.out")"
	assert_eq "$who: the stream's data" stream "$(kv stream "$T/$who.out")"
	assert_eq "$who: the stream's control messages" 0 "$(kv stream_cmsgs "$T/$who.out")"
done
assert_eq "timestamps the receiver did not ask for" 0 "$(kv stamps "$T/lib.out")"
assert_eq "timestamps the receiver asked for itself" 3 "$(kv stamps "$T/own.out")"
exit 0
