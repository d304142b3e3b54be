#!/bin/bash
# A non-blocking call never sleeps (issue 17, "What to build"; rlthrottle(7) BEHAVIOUR): an event
# loop on an O_NONBLOCK socket (epoll level- and edge-triggered, poll) under RLT_RECV, then under
# RLT_SEND, gets EAGAIN when its budget does not allow a call, and its wait reports the socket
# ready when it does: the data moves at the rate, intact, no call takes over 2 ms, and the
# process does not spin (CPU < 0.2 of the wall time).
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
need_lib
need_bin source sink nbloop
rate=1048576 burst=65536
n=$((2 * rate + burst))
# check LABEL NBLOOP_OUT PEER_BYTES PEER_FNV
check() {
	local label=$1 out=$2
	assert_eq "$label bytes" "$n" "$(kv bytes "$out")"
	assert_eq "$label bytes at the peer" "$n" "$3"
	assert_eq "$label checksum" "$4" "$(kv fnv "$out")"
	MIN_SPAN_S=1.5 assert_rate "$label" $((n - burst)) "$(kv elapsed_ns "$out")" $rate 0.7 1.3
	info "$label: $(kv calls "$out") calls, $(kv eagain "$out") EAGAIN, $(kv waits "$out") waits, longest call $(calc "$(kv max_call_ns "$out") / 1e6") ms"
	# a call that sleeps for its budget takes up to 10 ms here (a piece: 10 ms of the rate):
	# on the old build 200 of ~200 calls of the edge-triggered loop did; a few over 2 ms (5%)
	# may be the scheduler of a loaded machine (a send on loopback also runs the receiver's
	# side of TCP)
	local calls lim
	calls=$(kv calls "$out"); lim=$((calls / 20 > 5 ? calls / 20 : 5))
	assert_le "$label calls over 2 ms" $lim "$(kv slow_calls "$out")"
	assert_cpu "$label" "$(kv cpu_ns "$out")" "$(kv elapsed_ns "$out")" 0.2
}
for w in epoll epollet poll; do
	label=recv_$w
	RLT_RECV="1MiB/s burst=64KiB" served "$label" source "-n $n" nbloop -r -w $w
	check "$label" "$CL_OUT" "$(kv sent "$SV_OUT")" "$(kv fnv "$SV_OUT")"
done
for w in epoll epollet poll; do
	label=send_$w
	RLT_SEND="1MiB/s burst=64KiB" served "$label" sink "" nbloop -s $n -w $w
	check "$label" "$CL_OUT" "$(kv bytes "$SV_OUT")" "$(kv fnv "$SV_OUT")"
done
# datagrams: 100 put in the receiver's buffer at once (small, so that they fit) under
# "50msg/s burst=20", received with a non-blocking recv: 80 over ~1.6 s, whole, no call sleeping
# for its slot
for w in epoll epollet poll; do
	label=udp_$w
	rm -f "$T/u.port"
	RLT_RECV="50msg/s burst=20" bg "$label" throttled "$ITEST_BIN/nbloop" -u -P "$T/u.port" -c 100 -w $w -b 8192
	upid=$LAST_PID
	wait_file "$T/u.port"
	"$ITEST_BIN/blast" -u -p "$(cat "$T/u.port")" -d 200 -c 100 -m sendto >"$T/blast_$w.out" || fail "blast failed"
	wait_pid "$upid" 20 || { show "$T/$label.out" "$T/$label.err"; fail "$label: receiver did not finish"; }
	out=$T/$label.out
	assert_eq "$label datagrams" 100 "$(kv msgs "$out")"
	assert_eq "$label checksum" "$(kv fnv "$T/blast_$w.out")" "$(kv fnv "$out")"
	MIN_SPAN_S=1 assert_rate "$label" 80 "$(kv elapsed_ns "$out")" 50 0.7 1.3
	info "$label: $(kv calls "$out") calls, $(kv eagain "$out") EAGAIN, longest call $(calc "$(kv max_call_ns "$out") / 1e6") ms"
	assert_le "$label calls over 2 ms" 5 "$(kv slow_calls "$out")"
	assert_cpu "$label" "$(kv cpu_ns "$out")" "$(kv elapsed_ns "$out")" 0.2
done
# the exception: a one-shot epoll registration is the program's to re-arm, so the waits cannot
# hold it; a non-blocking receive on it waits for one piece rather than fail with EAGAIN, which
# the re-armed registration would report ready again at once (a spin)
label=recv_oneshot
start_srv src_oneshot source -n $n
spid=$LAST_PID
out=$T/$label.out
RLT_RECV="1MiB/s burst=64KiB" throttled "$ITEST_BIN/nbloop" -p "$SRV_PORT" -r -w epolloneshot \
	>"$out" 2>"$T/$label.err" || { show "$out" "$T/$label.err"; fail "$label: nbloop failed"; }
wait_pid "$spid" 20 || fail "$label: source did not finish"
assert_eq "$label bytes" "$n" "$(kv bytes "$out")"
assert_eq "$label checksum" "$(kv fnv "$T/src_oneshot.out")" "$(kv fnv "$out")"
MIN_SPAN_S=1.5 assert_rate "$label" $((n - burst)) "$(kv elapsed_ns "$out")" $rate 0.7 1.3
info "$label: $(kv calls "$out") calls, $(kv eagain "$out") EAGAIN, $(kv waits "$out") waits"
assert_cpu "$label" "$(kv cpu_ns "$out")" "$(kv elapsed_ns "$out")" 0.2
