#!/bin/bash
# A Go program (static, raw system calls; its netpoller: non-blocking sockets in an
# edge-triggered epoll, waited on by whichever thread is free) receives under RLT_RECV and sends
# under RLT_SEND: a non-blocking call the budget does not allow gets EAGAIN, and the wait wakes
# the goroutine when it does (rlthrottle(7) BEHAVIOUR). At the rate, every byte equal, no spin.
# Its dials under RLT_CONNECT complete at the rate, none slept in; under RLT_NET latency they
# complete late, and a stream comes whole.
# (The same with spinning goroutines and signals: tests/reliability/test_signal_go.sh, which
# caught the waits' filter on one thread only: the netpoller's thread never trapped a wait.)
# fronts: seccomp (why: a static Go binary: the preload cannot reach it)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin source sink
need_gonb
rate=1048576 burst=65536
n=$((2 * rate + burst))
start_srv src source -n $n
spid=$LAST_PID
RLT_RECV="1MiB/s burst=64KiB" timeout -k 2 30 "$(dirname "$RLT_LIB")/rlthrottle" --seccomp -- \
	"$GONB" recv "127.0.0.1:$SRV_PORT" >"$T/recv.out" 2>"$T/recv.err" ||
	{ show "$T/recv.out" "$T/recv.err"; fail "gonb recv failed"; }
wait_pid "$spid" 20 || fail "source did not finish"
assert_eq "recv bytes" "$n" "$(kv bytes "$T/recv.out")"
assert_eq "recv checksum" "$(kv fnv "$T/src.out")" "$(kv fnv "$T/recv.out")"
MIN_SPAN_S=1.5 assert_rate "recv" $((n - burst)) "$(kv elapsed_ns "$T/recv.out")" $rate 0.7 1.3
assert_cpu "recv" "$(kv cpu_ns "$T/recv.out")" "$(kv elapsed_ns "$T/recv.out")" 0.2

start_srv snk sink
spid=$LAST_PID
RLT_SEND="1MiB/s burst=64KiB" timeout -k 2 30 "$(dirname "$RLT_LIB")/rlthrottle" --seccomp -- \
	"$GONB" send "127.0.0.1:$SRV_PORT" $n >"$T/send.out" 2>"$T/send.err" ||
	{ show "$T/send.out" "$T/send.err"; fail "gonb send failed"; }
wait_pid "$spid" 20 || fail "sink did not finish"
assert_eq "send bytes" "$n" "$(kv bytes "$T/send.out")"
assert_eq "send bytes at the sink" "$n" "$(kv bytes "$T/snk.out")"
assert_eq "send checksum" "$(kv fnv "$T/send.out")" "$(kv fnv "$T/snk.out")"
MIN_SPAN_S=1.5 assert_rate "send" $((n - burst)) "$(kv elapsed_ns "$T/send.out")" $rate 0.7 1.3
assert_cpu "send" "$(kv cpu_ns "$T/send.out")" "$(kv elapsed_ns "$T/send.out")" 0.2

# dials NAME LAUNCHER_ARGS...: gonb dials 9 connections at once to a listener that keeps them,
# under the launcher with those arguments; NAME.out holds gonb's line.
dials() {
	local name=$1
	shift
	bg "lst_$name" python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64); print(s.getsockname()[1], flush=True)
s.settimeout(15); kept = [s.accept()[0] for _ in range(9)]; time.sleep(1)'
	local lpid=$LAST_PID
	wait_file "$T/lst_$name.out" 10
	timeout -k 2 30 "$(dirname "$RLT_LIB")/rlthrottle" --seccomp "$@" -- \
		"$GONB" dial "127.0.0.1:$(cat "$T/lst_$name.out")" 9 >"$T/$name.out" 2>"$T/$name.err" ||
		{ show "$T/$name.out" "$T/$name.err"; fail "gonb dial ($name) failed"; }
	wait_pid "$lpid" 20 || fail "the listener ($name) did not end"
	assert_eq "connections dialled ($name)" 9 "$(kv dialled "$T/$name.out")"
}

# connects: the netpoller's non-blocking connects are held until RLT_CONNECT allows each (9 at
# once under 4/s, burst 1: the last about 2 s after the first), never slept in
dials dial -c "4/s burst=1"
# (8 intervals of 250 ms: 2 s; a completion told to the netpoller before its time ended at 1.76 s)
assert_range "last connection (s)" 1.85 3.5 "$(calc "$(kv elapsed_ns "$T/dial.out") / 1e9")"
assert_cpu "dial" "$(kv cpu_ns "$T/dial.out")" "$(kv elapsed_ns "$T/dial.out")" 0.2

# RLT_NET latency on the netpoller (issue 18): 9 dials at once complete 100 ms late (each
# socket held whole until its completion is due), and a stream comes whole through the delay
dials ldial --net "latency=100ms"
assert_range "last connection under latency=100ms (s)" 0.095 1.5 "$(calc "$(kv elapsed_ns "$T/ldial.out") / 1e9")"
n=262144
start_srv src2 source -n $n
spid=$LAST_PID
timeout -k 2 30 "$(dirname "$RLT_LIB")/rlthrottle" --seccomp --net "latency=50ms" -- \
	"$GONB" recv "127.0.0.1:$SRV_PORT" >"$T/lrecv.out" 2>"$T/lrecv.err" ||
	{ show "$T/lrecv.out" "$T/lrecv.err"; fail "gonb recv under latency failed"; }
wait_pid "$spid" 20 || fail "source did not finish"
assert_eq "recv bytes under latency" "$n" "$(kv bytes "$T/lrecv.out")"
assert_eq "recv checksum under latency" "$(kv fnv "$T/src2.out")" "$(kv fnv "$T/lrecv.out")"
assert_ge "recv under latency=50ms (s)" 0.05 "$(calc "$(kv elapsed_ns "$T/lrecv.out") / 1e9")"
assert_cpu "recv under latency" "$(kv cpu_ns "$T/lrecv.out")" "$(kv elapsed_ns "$T/lrecv.out")" 0.3
