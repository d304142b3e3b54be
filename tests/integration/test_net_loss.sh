#!/bin/bash
# rlthrottle(7) NETWORK CONDITIONS: loss=P% drops each datagram sent with probability P (dir=out
# here, matched per datagram by its address: port!=53), near its share over 4000 datagrams; the same seed drops the same datagrams on every run,
# another seed others; RLT_STATS counts the drops; sendmmsg and recvmmsg lose messages the same
# way; a stream is never cut by loss.
# fronts: preload seccomp
# parallel-safe: counts only (datagrams a seeded loss= drops, the same under one seed; RLT_STATS's count)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
N=4000
run() { # SEED OUT
	RLT_NET="loss=10% dir=out seed=$1 port!=53" RLT_STATS="$T/stats.$1.$2" throttled python3 "$ITEST_DIR/net_udp.py" $N >"$T/$2" 2>"$T/$2.err" ||
		{ show "$T/$2.err"; fail "net_udp.py failed"; }
}
python3 "$ITEST_DIR/net_udp.py" $N >"$T/plain"
assert_eq "datagrams received without a condition" $N "$(wc -w <"$T/plain")"
run 7 a
run 7 b
run 8 c
got=$(wc -w <"$T/a")
info "loss=10%: $got of $N received"
assert_range "datagrams received under loss=10%" 3400 3800 "$got"
cmp -s "$T/a" "$T/b" || fail "seed=7 dropped different datagrams on two runs"
info "seed=7: the same $got datagrams on both runs"
cmp -s "$T/a" "$T/c" && fail "seed=7 and seed=8 dropped the same datagrams"
dropped=$(sed -n 's/.*"dropped":\([0-9]*\).*/\1/p' "$T/stats.7.a" | sort -n | tail -1)
assert_eq "drops counted in RLT_STATS" $((N - got)) "$dropped"
# sendmmsg and recvmmsg: each message drawn as a datagram of its own, both ways
need_bin udp_mmsg
plain=$("$ITEST_BIN/udp_mmsg" $N)
assert_eq "udp_mmsg without a condition" "received $N sum $((N * (N - 1) / 2))" "$plain"
for dir in out in; do
	m1=$(RLT_NET="loss=10% dir=$dir seed=3" throttled "$ITEST_BIN/udp_mmsg" $N) || fail "udp_mmsg failed"
	m2=$(RLT_NET="loss=10% dir=$dir seed=3" throttled "$ITEST_BIN/udp_mmsg" $N) || fail "udp_mmsg failed"
	info "sendmmsg/recvmmsg, loss=10% dir=$dir: $m1"
	assert_range "datagrams received by recvmmsg (dir=$dir)" 3400 3800 "$(echo "$m1" | awk '{ print $2 }')"
	assert_eq "the same seed, the same drops (dir=$dir)" "$m1" "$m2"
done
# a stream under loss=100%: every byte arrives
head -c 200000 /dev/urandom >"$T/blob"
port=$(free_port)
bg srv python3 -c '
import socket, sys
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(1)
c, _ = l.accept(); c.sendall(open(sys.argv[2], "rb").read()); c.close()' "$port" "$T/blob"
wait_port "$port"
RLT_NET="loss=100%" throttled python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
out = open(sys.argv[2], "wb")
while True:
    b = s.recv(65536)
    if not b: break
    out.write(b)' "$port" "$T/blob.got" || fail "stream client failed"
sha256_eq "$T/blob" "$T/blob.got"
