#!/bin/bash
# connect=timeout under a Go program (issue 18): Go dials without blocking (connect, then
# its netpoller waits in an edge-triggered epoll for the socket to become writable, then
# getsockopt(SO_ERROR)). net.DialTimeout with 10 s against a black hole of after=1s fails at
# 1 s with "connection timed out" (SO_ERROR's ETIMEDOUT, trapped on the socket), no attempt
# reaching the server; a dial to another port meanwhile is not held.
# fronts: seccomp (why: a static Go binary: the preload cannot reach it)
# parallel-safe: bound, no rate (a 1 s black hole, bounds of 0.9 to 3 s)
. "$(dirname "$0")/lib.sh"
need_lib
need_gonb
hole=$(free_port)
bg srv python3 "$ITEST_DIR/seen_server.py" "$hole" "$T/seen"
wait_file "$T/seen"
bg other python3 -c '
import socket, sys, time
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(8)
open(sys.argv[1] + ".t", "w").write(str(l.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".t", sys.argv[1])
while True:
    c, _ = l.accept(); c.close()' "$T/other_port"
wait_file "$T/other_port"
RLT=$(dirname "$RLT_LIB")/rlthrottle

rc=0
s=$(now_ns)
RLT_NET="connect=timeout after=1s port=$hole" "$RLT" --seccomp -- "$GONB" dial "127.0.0.1:$hole" 1 \
	>"$T/dial.out" 2>"$T/dial.err" || rc=$?
took=$(calc "($(now_ns) - $s) / 1e9")
info "gonb dial (DialTimeout 10 s) under after=1s: exit $rc after ${took} s: $(cat "$T/dial.err")"
assert_eq "the dial failed" 1 "$rc"
assert_match "Go's error" "connect: connection timed out" "$(cat "$T/dial.err")"
assert_range "failed at after=1s (s)" 0.9 3 "$took"
assert_eq "what the server saw (no attempt reached it)" listening "$(cat "$T/seen")"

rc=0
out=$(RLT_NET="connect=timeout after=5s port=$hole" "$RLT" --seccomp -- "$GONB" dial \
	"127.0.0.1:$(cat "$T/other_port")" 4 2>"$T/dial2.err") || rc=$?
info "gonb dial to another port: exit $rc: $out $(cat "$T/dial2.err")"
assert_eq "dials to another port" 4 "$(kv dialled "$out")"
assert_le "their time (ms)" 1000 $(($(kv elapsed_ns "$out") / 1000000))
exit 0
