#!/bin/bash
# 8 processes start at once naming a new shared scope: they all agree on one segment with one
# creator, and share its budget exactly (1/h burst=8, action=reject: 8 connections in all).
# fronts: preload seccomp
# parallel-safe: counts only (8 connections in all under a segment named with its pid)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin acceptor conn
name=itest-race-$$
trap 'rm -f /dev/shm/rlthrottle.$name; cleanup' EXIT
start_srv acc acceptor -D 30 -T 40
apid=$LAST_PID
rule="1/h burst=8 action=reject scope=shared:$name"
mkfifo "$T/gate"
pids=""
for i in 1 2 3 4 5 6 7 8; do
	# each waits on the gate, then all exec conn in the same instant
	( read -r _ <"$T/gate"; RLT_CONNECT="$rule" throttled "$ITEST_BIN/conn" -p "$SRV_PORT" -n 3 ) >"$T/c$i.out" 2>"$T/c$i.err" &
	pids="$pids $!"
done
sleep 0.3
: >"$T/gate" # opens and closes the fifo: every reader gets EOF at once
st=0
for p in $pids; do wait_pid "$p" 20 || st=1; done
[ $st = 0 ] || { show "$T"/c*.err; fail "a process failed"; }
ok=0
for i in 1 2 3 4 5 6 7 8; do
	[ -s "$T/c$i.err" ] && { show "$T/c$i.err"; fail "process $i complained"; }
	ok=$((ok + $(kv ok "$T/c$i.out")))
done
assert_eq "connections admitted by the 8 processes together (one bucket of 8)" 8 "$ok"
hdr=$(python3 - "$name" <<'PY'
import struct, sys
d = open("/dev/shm/rlthrottle." + sys.argv[1], "rb").read(64)
magic, layout, ready, creator = struct.unpack_from("<QIIi", d)
print("ready=%d creator=%d" % (ready, creator))
PY
)
info "segment: $hdr"
assert_eq "segment ready" 1 "$(kv ready "$hdr")"
ls /dev/shm | grep -c "^rlthrottle\.$name\$" >"$T/n"
assert_eq "segments named $name" 1 "$(cat "$T/n")"
