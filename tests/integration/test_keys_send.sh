#!/bin/bash
# fronts: preload seccomp
# matrix-only: seccomp (make test keeps the keys under --seccomp in test_keys_nginx, test_keys_conns and test_keys_dryrun; the whole matrix runs in CI after it)
# Issue 11, rlthrottle(7) RULES `key` on RLT_SEND: a python3 server throttled with RLT_SEND="1MiB/s key=peer"
# sends a 3 MiB file to two clients (bound to 127.0.0.2 and 127.0.0.3) at once. Each gets its
# own 1 MiB/s (+-15%, measured after its 1 MiB burst, over ~2 s): independent budgets (the two
# together > 1.6 MiB/s, where one shared budget would give them 1 MiB/s). Every byte arrives
# (sha256).
. "$(dirname "$0")/lib.sh"
. "$ITEST_DIR/keys_io.sh"
need_lib
RLT_SEND="1MiB/s key=peer" bg server throttled python3 "$IO" serve "$T/port" "$T/file" 2
spid=$LAST_PID
wait_file "$T/port"
port=$(cat "$T/port")
for a in 2 3; do
	bg "get$a" python3 "$IO" get "$port" "127.0.0.$a" "$T/got$a" $MIB
	eval "g$a=\$LAST_PID"
done
for a in 2 3; do
	eval "wait_pid \$g$a 15" || { show "$T/get$a.out" "$T/get$a.err" "$T/server.err"; fail "client 127.0.0.$a did not finish"; }
done
wait_pid "$spid" 10 || { show "$T/server.err"; fail "server did not finish"; }
KEYED_SUM=0
for a in 2 3; do
	keyed_rate "127.0.0.$a download" "$(cat "$T/get$a.out")" "$T/file" "$T/got$a" $MIB
done
assert_ge "the two downloads together (B/s): independent budgets" $((MIB * 16 / 10)) "$KEYED_SUM"
