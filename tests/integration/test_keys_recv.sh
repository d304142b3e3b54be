#!/bin/bash
# fronts: preload seccomp
# matrix-only: seccomp (slow; the keyed charge under --seccomp runs in test_keys_nginx, test_keys_conns and test_keys_dryrun: make matrix runs this one)
# Issue 11, rlthrottle(7) RULES `key` on RLT_RECV: a python3 receiver throttled with RLT_RECV="1MiB/s
# key=peer" takes two 3 MiB uploads at once, from 127.0.0.2 and 127.0.0.3. Each is read at its
# own 1 MiB/s (+-15%, measured after its 1 MiB burst, over ~2 s): independent budgets (the two
# together > 1.6 MiB/s, where one shared budget would give them 1 MiB/s). Every byte arrives
# (sha256).
. "$(dirname "$0")/lib.sh"
. "$ITEST_DIR/keys_io.sh"
need_lib
mkdir "$T/in"
RLT_RECV="1MiB/s key=peer" bg sink throttled python3 "$IO" sink "$T/port" "$T/in" 2 $MIB
spid=$LAST_PID
wait_file "$T/port"
port=$(cat "$T/port")
for a in 2 3; do
	bg "put$a" python3 "$IO" put "$port" "127.0.0.$a" "$T/file"
done
wait_pid "$spid" 15 || { show "$T/sink.out" "$T/sink.err" "$T/put2.err" "$T/put3.err"; fail "receiver did not finish"; }
KEYED_SUM=0
for a in 2 3; do
	out=$(grep "addr=127.0.0.$a " "$T/sink.out")
	[ -n "$out" ] || { show "$T/sink.out" "$T/sink.err"; fail "no upload from 127.0.0.$a"; }
	keyed_rate "127.0.0.$a upload" "$out" "$T/file" "$T/in/127.0.0.$a" $MIB
done
assert_ge "the two uploads together (B/s): independent budgets" $((MIB * 16 / 10)) "$KEYED_SUM"
