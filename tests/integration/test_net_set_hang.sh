#!/bin/bash
# rlthrottle(7) NETWORK CONDITIONS: `rlthrottle set PID RLT_NET "reset port=P"` cuts a running
# program's connection at its next call (the server sees a reset), whether the program had a rule
# (the set brings the first condition) or RLT_NET set empty and no rule (it publishes a page for
# the set), and `hang after=SIZE` holds a
# blocking reader until its own SO_RCVTIMEO ends the call (EAGAIN), after exactly SIZE bytes, and
# with close= shuts the connection down (the reader gets the end of the stream, the server a FIN).
# fronts: preload seccomp
# parallel-safe: bound, no rate (the reader's own 1 s SO_RCVTIMEO ends it within 0.9-5 s)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
L="$(dirname "$RLT_LIB")/rlthrottle"
# a server that sends a line every 50 ms for up to 20 s, and says how its sends ended
server() { # PORT RESULT
	python3 -c '
import socket, sys, time
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(1)
c, _ = l.accept()
r = "completed"
try:
    for i in range(400):
        c.sendall(b"line %05d\n" % i)
        time.sleep(0.05)
except ConnectionResetError:
    r = "reset"
except BrokenPipeError:
    r = "broken pipe"
open(sys.argv[2], "w").write(r + "\n")' "$1" "$2"
}
# Two programs: one with a rule (RLT_RECV, far above what it reads: it publishes a page) and no
# RLT_NET, where the set brings the first condition; one with RLT_NET set but empty and no rule,
# which publishes a page for the set to reach.
CLIENT='
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
n = 0
try:
    while True:
        b = s.recv(100)
        if not b: break
        n += b.count(b"\n")
        if n == 5: open(sys.argv[2], "w").write("reading\n")
    print("eof after", n)
except ConnectionResetError:
    print("reset after", n)'
for mode in rule net; do
port=$(free_port)
bg srv server "$port" "$T/srv.result"
wait_port "$port"
rm -f "$T/cli.reading"
if [ $mode = rule ]; then
	RLT_RECV=1GiB/s bg cli throttled python3 -c "$CLIENT" "$port" "$T/cli.reading"
else
	RLT_NET= bg cli throttled python3 -c "$CLIENT" "$port" "$T/cli.reading"
fi
cli=$LAST_PID
wait_file "$T/cli.reading"
pid=$(prog_pid "$cli")
"$L" set "$pid" RLT_NET "reset port=$port" >"$T/set.out" 2>&1 || { show "$T/set.out"; fail "set refused ($mode)"; }
info "set ($mode): $(cat "$T/set.out")"
assert_match "set's answer ($mode)" "RLT_NET: reset p=100% port=$port family=inet" "$(cat "$T/set.out")"
wait_pid "$cli" 10 || true
out=$(cat "$T/cli.out")
info "client ($mode): $out"
assert_match "the client's end ($mode)" '^reset after [0-9]+$' "$out"
wait_file "$T/srv.result"
assert_eq "what the server saw ($mode)" reset "$(cat "$T/srv.result")"
rm -f "$T/srv.result"
done
# a bad set changes nothing and says why
rc=0
"$L" set "$pid" RLT_NET "reset after=x" >"$T/bad.out" 2>&1 || rc=$?
assert_eq "a bad set's status" 2 "$rc"
assert_match "a bad set's line" '^rlthrottle: RLT_NET="reset after=x": after: "x"' "$(cat "$T/bad.out")"

# hang after=25 bytes: the reader gets 25 bytes, then waits until its SO_RCVTIMEO (1 s) ends the
# call with EAGAIN
port2=$(free_port)
bg srv2 server "$port2" "$T/srv2.result"
wait_port "$port2"
t0=$(now_ns)
RLT_NET="hang after=25" throttled python3 -c '
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 1, 0))
got = b""
try:
    while True:
        b = s.recv(100)
        if not b: break
        got += b
except BlockingIOError:
    print("timed out after", len(got))' "$port2" >"$T/hang.out" 2>"$T/hang.err" || { show "$T/hang.err"; fail "hang client failed"; }
t1=$(now_ns)
info "hang: $(cat "$T/hang.out") in $(( (t1 - t0) / 1000000 )) ms"
assert_eq "the reader's end under hang after=25" "timed out after 25" "$(cat "$T/hang.out")"
assert_range "ms until the reader's own timeout" 900 5000 $(( (t1 - t0) / 1000000 ))

# hang after=5 close=1s: after 5 bytes nothing moves; 1 s later the connection is shut down (a
# FIN: the server's recv returns 0) and the blocked reader gets the end of the stream
port3=$(free_port)
bg srv3 python3 -c '
import socket, sys, time
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(1)
c, _ = l.accept(); c.sendall(b"hello")
t = time.time(); b = c.recv(10)
open(sys.argv[2], "w").write("%r %d\n" % (b, int((time.time() - t) * 1000)))' "$port3" "$T/srv3.result"
wait_port "$port3"
RLT_NET="hang after=5 close=1s" throttled python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
print(s.recv(100), s.recv(100))' "$port3" >"$T/close.out" 2>"$T/close.err" || { show "$T/close.err"; fail "close client failed"; }
assert_eq "the reader under hang after=5 close=1s" "b'hello' b''" "$(cat "$T/close.out")"
wait_file "$T/srv3.result"
read -r got ms <"$T/srv3.result"
info "server: recv $got after $ms ms"
assert_eq "what the server's recv got (a FIN)" "b''" "$got"
assert_range "ms until the FIN" 900 5000 "$ms"
