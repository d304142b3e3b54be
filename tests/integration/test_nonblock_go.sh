#!/bin/bash
# A Go program (static, raw system calls; its netpoller: non-blocking sockets in an
# edge-triggered epoll, waited on by whichever thread is free) receives under RLT_RECV and sends
# under RLT_SEND: a non-blocking call the budget does not allow gets EAGAIN, and the wait wakes
# the goroutine when it does (rlthrottle(7) BEHAVIOUR). At the rate, every byte equal, no spin.
# (The same with spinning goroutines and signals: tests/reliability/test_signal_go.sh, which
# caught the waits' filter on one thread only: the netpoller's thread never trapped a wait.)
# fronts: seccomp (why: a static Go binary: the preload cannot reach it)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin source sink
command -v go >/dev/null 2>&1 || skip "go is not installed"
# built in the build directory, its cache kept there (a second run builds nothing)
gdir=$(cd "$ITEST_BIN/.." && pwd)/go
mkdir -p "$gdir"
cp "$ITEST_DIR/gonb.go" "$gdir/"
(cd "$gdir" && GOCACHE=$gdir/cache GOPATH=$gdir/path GO111MODULE=off CGO_ENABLED=0 \
	timeout 100 go build -o gonb gonb.go) >"$T/build.log" 2>&1 ||
	{ show "$T/build.log"; fail "cannot build gonb.go"; }
rate=1048576 burst=65536
n=$((2 * rate + burst))
start_srv src source -n $n
spid=$LAST_PID
RLT_RECV="1MiB/s burst=64KiB" timeout -k 2 30 "$(dirname "$RLT_LIB")/rlthrottle" --seccomp -- \
	"$gdir/gonb" recv "127.0.0.1:$SRV_PORT" >"$T/recv.out" 2>"$T/recv.err" ||
	{ show "$T/recv.out" "$T/recv.err"; fail "gonb recv failed"; }
wait_pid "$spid" 20 || fail "source did not finish"
assert_eq "recv bytes" "$n" "$(kv bytes "$T/recv.out")"
assert_eq "recv checksum" "$(kv fnv "$T/src.out")" "$(kv fnv "$T/recv.out")"
MIN_SPAN_S=1.5 assert_rate "recv" $((n - burst)) "$(kv elapsed_ns "$T/recv.out")" $rate 0.7 1.3
assert_cpu "recv" "$(kv cpu_ns "$T/recv.out")" "$(kv elapsed_ns "$T/recv.out")" 0.2

start_srv snk sink
spid=$LAST_PID
RLT_SEND="1MiB/s burst=64KiB" timeout -k 2 30 "$(dirname "$RLT_LIB")/rlthrottle" --seccomp -- \
	"$gdir/gonb" send "127.0.0.1:$SRV_PORT" $n >"$T/send.out" 2>"$T/send.err" ||
	{ show "$T/send.out" "$T/send.err"; fail "gonb send failed"; }
wait_pid "$spid" 20 || fail "sink did not finish"
assert_eq "send bytes" "$n" "$(kv bytes "$T/send.out")"
assert_eq "send bytes at the sink" "$n" "$(kv bytes "$T/snk.out")"
assert_eq "send checksum" "$(kv fnv "$T/send.out")" "$(kv fnv "$T/snk.out")"
MIN_SPAN_S=1.5 assert_rate "send" $((n - burst)) "$(kv elapsed_ns "$T/send.out")" $rate 0.7 1.3
assert_cpu "send" "$(kv cpu_ns "$T/send.out")" "$(kv elapsed_ns "$T/send.out")" 0.2
