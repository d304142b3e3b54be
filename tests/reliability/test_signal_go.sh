#!/bin/bash
# Issue 9: a Go program (static, raw system calls: the --seccomp front) uploads 3 MB at 1 MiB/s
# in 256 KiB writes while SIGUSR1 arrives every 2 ms (os/signal) and two spinning goroutines
# are preempted by the runtime's SIGURG. Every byte arrives once (sha256), and no write fails:
# a call may be restarted for a signal only in the thread the kernel gave it to (answering a
# restart to another thread hands Go "errno 512/513", which a first design did).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/signals.sh"
command -v go >/dev/null 2>&1 || skip "go is not installed"

src=$(cd "$(dirname "$0")" && pwd)/goupload.go
mkdir -p "$T/go"
cp "$src" "$T/go/"
(cd "$T/go" && GOFLAGS=-mod=mod GOCACHE=$T/gocache GOPATH=$T/gopath GO111MODULE=auto \
	timeout 120 go build -o goupload goupload.go) >"$T/build.log" 2>&1 ||
	{ show "$T/build.log"; fail "cannot build goupload.go"; }

sink_to sink "$T/out"
rc=0
t0=$(now_ns)
RLT_SEND="1MiB/s burst=64KiB" timeout -k 2 20 "$RLTHROTTLE" --seccomp -- "$T/go/goupload" \
	"127.0.0.1:$PEER_PORT" 3000000 >"$T/go.out" 2>"$T/go.err" || rc=$?
t1=$(now_ns)
wait_pid "$PEER_PID" 10 || fail "the peer did not see the end"
show "$T/go.out" "$T/go.err"
[ $rc -eq 0 ] || fail "goupload exited $rc"
assert_eq "bytes written" 3000000 "$(kv wrote "$T/go.out")"
assert_eq "sha256 received" "$(kv sha256 "$T/go.out")" "$(sha256sum <"$T/out" | cut -d' ' -f1)"
assert_ge "signals seen" 20 "$(kv signals "$T/go.out")"
# 3 MB at 1 MiB/s after a 64 KiB burst: 2.8 s
assert_range "took (s)" 2.3 6 "$(calc "($t1 - $t0) / 1e9")"
