#!/bin/bash
# Three processes connect under one shared sliding-log budget (20/s); one is SIGKILLed in the
# middle of its calls. The other two go on (none hangs on the log's lock: it is a robust
# mutex) and the budget stays right: the server counts every connection, the killed process's
# included.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin acceptor conn
name=itest-kill-$$
trap 'rm -f /dev/shm/rlthrottle.$name; cleanup' EXIT
start_srv acc acceptor -D 30 -T 40 -v
apid=$LAST_PID
rule="20/s algo=sliding-log scope=shared:$name"
t0=$(now_ns)
for i in 1 2 3; do
	RLT_CONNECT="$rule" bg "c$i" throttled "$ITEST_BIN/conn" -p "$SRV_PORT" -D 4 -t 2 -e 2000
	eval "c$i=\$LAST_PID"
done
sleep 1.2
kill -KILL "$c2"
info "killed $c2 at 1.2 s"
for p in "$c1" "$c3"; do wait_pid "$p" 15 || fail "a survivor did not finish: hung after the kill?"; done
t1=$(now_ns)
for i in 1 3; do
	info "c$i: $(cat "$T/c$i.out")"
	late=$(kv late_ok "$T/c$i.out")
	assert_ge "c$i connections after the kill" 1 "$late"
done
kill -TERM "$apid"; wait_pid "$apid" 5
total=$(grep -c '^event OK' "$T/acc.out")
span=$(calc "($t1 - $t0) / 1e9")
# a sliding log never admits more than 20 in any second
assert_le "connections accepted over $span s" "$(calc "20 * ($span + 1)")" "$total"
assert_ge "connections accepted over $span s" "$(calc "0.6 * 20 * $span")" "$total"
awk '/^event OK/ { sub("at_ms=", "", $3); print $3 }' "$T/acc.out" | sort -n >"$T/times"
info "accept times (ms): $(tr '\n' ' ' <"$T/times")"
worst=$(awk '{ t[NR] = $1 } END { m = 0; for (i = 1; i <= NR; i++) { j = i; while (j <= NR && t[j] - t[i] < 900) j++; if (j - i > m) m = j - i }; print m }' "$T/times")
# (0.9 s: the server sees a connection a little after the client made it, by a varying lag)
assert_le "most connections in any 0.9 s (sliding-log 20/s)" 21 "$worst"
