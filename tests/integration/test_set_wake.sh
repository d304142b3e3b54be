#!/bin/bash
# A sender blocked in one 1 MiB send at RLT_SEND=10KiB/s is set to 10MiB/s: the waiting send
# notices within a wait slice and the whole MiB has arrived within 0.5 s of the set (at 10KiB/s
# it would take 100 s). The new rate is 1024 times the first: the budget moves to a new state
# (rlt_state_carry). Bytes exact.
# fronts: preload (set on a preloaded process; a set under --seccomp: test_set_rate, test_set_connect)
# parallel-safe: bound, no rate (the last byte within 0.5 s of the set, where 10KiB/s would take 100 s)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/set_lib.sh"
need_lib
need_cmd python3 sha256sum
head -c 1048576 /dev/urandom >"$T/f.bin"
RLT_SEND="10KiB/s" bg srv pre python3 -c '
import os, socket, sys
data = open(sys.argv[2], "rb").read()
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
open(sys.argv[1] + ".pid", "w").write("%d\n" % os.getpid())
open(sys.argv[1] + ".tmp", "w").write("%d\n" % s.getsockname()[1]); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
c, _ = s.accept(); c.sendall(data); c.close()' "$T/port" "$T/f.bin"
wait_file "$T/port"
bg cli python3 "$P" fetch "$(cat "$T/port")" "$T/got.bin" "$T/samples"
cli=$LAST_PID
wait_file "$T/samples.first"
sleep 0.5
kill -0 "$cli" 2>/dev/null || fail "the transfer ended before the set (not throttled?)"
t1=$(now_ns)
"$RLT" set "$(cat "$T/port.pid")" RLT_SEND "10MiB/s" >"$T/set.out" 2>&1 || { show "$T/set.out"; fail "set failed"; }
info "set: $(cat "$T/set.out")"
wait_pid "$cli" 10 || fail "the receiver did not finish"
t2=$(tail -1 "$T/samples" | cut -d' ' -f1)
[ "$(sha256sum <"$T/f.bin")" = "$(sha256sum <"$T/got.bin")" ] || fail "bytes differ (sha256)"
assert_le "ms from the set to the last byte" 500 $(((t2 - t1) / 1000000))
