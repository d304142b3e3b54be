#!/bin/bash
# Issue 17 row 2: TCP Fast Open (sendto or sendmsg with MSG_FASTOPEN and an address, on a TCP
# socket not connected) is a connect: RLT_CONNECT="1/s burst=1 action=reject" lets 1 of 5
# through, RLT_CONNS="1 action=reject" holds 1 of 5 open, and the socket gets its peer for
# peer= rules (32 KiB under RLT_SEND="16KiB/s burst=4KiB peer=127.0.0.1" take 1.75 s). Before:
# 5 of 5 through both, and the send went unthrottled (0.00 s).
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
C="$ITEST_DIR/tfo_client.py"
bg srv python3 -c '
import socket, sys, threading, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(64)
open(sys.argv[1] + ".tmp", "w").write("%d\n" % s.getsockname()[1])
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
def drain(c):
    while c.recv(65536): pass
s.settimeout(30)
while True:
    c, _ = s.accept()
    threading.Thread(target=drain, args=(c,), daemon=True).start()' "$T/port"
wait_file "$T/port"
port=$(cat "$T/port")
for how in sendto sendmsg; do
	RLT_CONNECT="1/s burst=1 action=reject" throttled python3 "$C" "$port" 5 10 $how >"$T/c.$how" 2>&1
	show "$T/c.$how"
	assert_eq "$how: connections RLT_CONNECT let through" 1 "$(grep -c '^ok' "$T/c.$how")"
	assert_eq "$how: refused" 4 "$(grep -c '^err ECONNREFUSED' "$T/c.$how")"
	RLT_CONNS="1 action=reject" throttled python3 "$C" "$port" 5 10 $how >"$T/n.$how" 2>&1
	show "$T/n.$how"
	assert_eq "$how: connections RLT_CONNS holds open" 1 "$(grep -c '^ok' "$T/n.$how")"
done
RLT_SEND="16KiB/s burst=4KiB peer=127.0.0.1" throttled python3 "$C" "$port" 1 32768 >"$T/s" 2>&1
show "$T/s"
took=$(awk '/^ok 32768/ { print $3 }' "$T/s")
[ -n "$took" ] || fail "the send did not go whole"
assert_range "seconds for 32 KiB at 16KiB/s burst=4KiB to the peer" 1.4 3.5 "$took"
