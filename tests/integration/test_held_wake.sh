#!/bin/bash
# A connect held by the throttle reaches a thread already asleep in epoll_wait when it is due
# (issue 17, 18): Go's netpoller and any event loop with a waiting thread sleep until their
# next timer, seconds away, while another thread connects without blocking and registers the
# socket. heldwake's waiter sleeps (10 s timeout) on an empty instance before the connect:
# under RLT_NET connect=timeout after=1s it is woken at 1 s (SO_ERROR ETIMEDOUT), under
# RLT_CONNECT=1/s (the second connect held) at about 1 s, connected. The old build woke it at
# its own 10 s timeout.
# fronts: preload seccomp
# parallel-safe: bound, no rate (one held connect each; the bounds allow 1.5 s of load)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin heldwake
need_cmd python3
bg srv python3 -c '
import socket, sys, time
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(16)
open(sys.argv[1] + ".t", "w").write(str(l.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".t", sys.argv[1])
kept = []
while True:
    c, _ = l.accept(); kept.append(c)' "$T/port"
wait_file "$T/port"
port=$(cat "$T/port")

RLT_NET="connect=timeout after=1s port=$port" throttled "$ITEST_BIN/heldwake" -p "$port" >"$T/hole.out" 2>"$T/hole.err" ||
	{ show "$T/hole.err"; fail "heldwake (connect=timeout) failed"; }
info "connect=timeout after=1s: $(cat "$T/hole.out")"
assert_range "woken at after=1s (ms)" 1000 2500 "$(kv woke_ms "$T/hole.out")"
assert_eq "the outcome" ETIMEDOUT "$(kv so_error "$T/hole.out")"

RLT_CONNECT="1/s burst=1" throttled "$ITEST_BIN/heldwake" -p "$port" -n 2 >"$T/rate.out" 2>"$T/rate.err" ||
	{ show "$T/rate.err"; fail "heldwake (RLT_CONNECT) failed"; }
info "RLT_CONNECT=1/s, the second connect: $(cat "$T/rate.out")"
assert_range "woken when the second connect is due (ms)" 900 2500 "$(kv woke_ms "$T/rate.out")"
assert_eq "the outcome" 0 "$(kv so_error "$T/rate.out")"
exit 0
