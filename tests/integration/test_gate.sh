#!/bin/bash
# The preload's gate (issue 10): a send or receive hook lets a call that is surely not ours
# straight through before doing anything else, from a few bits kept in the fd table. What it
# must still throttle: an fd first seen on its first call (a socket inherited over exec), a
# number that was a file and is now a socket, a datagram socket with no peer sending to a
# matched address, a socket connected anew to a matched peer, a copy (dup2) of a matched one.
# Under --seccomp the same cases go through the same gate, in the handler.
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink
need_cmd python3
start_srv tcp sink -x
P=$SRV_PORT
spid=$LAST_PID
U=$(free_port); Q=$(free_port)
[ "$U" != "$Q" ] || Q=$(free_port)
export RLT_SEND="200kB/s burst=20kB port=$P; 200kB/s burst=20kB port=$U"
# fd 3 is made by this shell, which does not load the library
exec 3<>"/dev/tcp/127.0.0.1/$P" || fail "cannot connect to the sink"
throttled python3 "$ITEST_DIR/gate.py" "$P" "$U" "$Q" >"$T/out" 2>"$T/err" ||
	{ show "$T/out" "$T/err"; fail "gate.py failed"; }
exec 3>&-
wait_pid "$spid" 10
show "$T/out"
# under the system-call front a socket never takes a file's number: it is moved into the band
# (fds from 512), where its reads and writes trap; the preload's table must follow the reuse
if [ "$(front)" = preload ]; then
	assert_eq "the socket took the file's number" 1 "$(awk '$1 == "reused" { print $2 }' "$T/out")"
else
	assert_eq "the socket went to the band, not the file's number" 0 \
		"$(awk '$1 == "reused" { print $2 }' "$T/out")"
fi
# 200 kB at 200 kB/s after a 20 kB burst: 0.9 s; unthrottled: milliseconds
for p in inherited unconnected_matched reconnected_matched dup; do
	s=$(awk -v p=$p '$1 == p { print $2 }' "$T/out")
	assert_range "$p: seconds (throttled)" 0.7 4 "$s"
done
for p in devnull unconnected_unmatched connected_unmatched; do
	s=$(awk -v p=$p '$1 == p { print $2 }' "$T/out")
	assert_range "$p: seconds (not throttled)" 0 0.5 "$s"
done
