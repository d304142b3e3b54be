#!/bin/bash
# --seccomp traps a class of data calls only when a rule may apply to it: a command with no
# receive rule pays no signal per receive, one with no send rule none per send (trap_abi.h
# RLT_TRAP_SENDS, RLT_TRAP_RECVS). Shown by what still throttles:
#   - a command with only a send rule: its upload is throttled, its download (busybox wget) is
#     not, and is exact;
#   - a program that sets RLT_RECV itself for what it runs (env ... busybox wget), under a
#     launcher whose command had no receive rule: the new image stacks the receive calls'
#     filter, so the download is throttled at its rule (before, it went unthrottled: the
#     launcher's filter had no receive trap to give it).
# fronts: seccomp (the filter's classes are the system-call front's)
. "$(dirname "$0")/lib.sh"
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$RLTHROTTLE" ] || fail "launcher not built: $RLTHROTTLE"
need_cmd busybox python3 sha256sum

head -c 3000000 /dev/urandom >"$T/f.bin"
http_dir http "$T"
port=$HTTP_PORT

# only a send rule: the download is not the rule's, and runs at the machine's speed
t0=$(now_ns)
"$RLTHROTTLE" --seccomp -u 100KiB/s -- busybox wget -q -O "$T/a.bin" "http://127.0.0.1:$port/f.bin" 2>"$T/a.err" ||
	{ show "$T/a.err"; fail "busybox wget under --seccomp -u failed"; }
t1=$(now_ns)
sha256_eq "$T/f.bin" "$T/a.bin"
assert_range "download with only a send rule (s): not throttled" 0 1.5 "$(calc "($t1 - $t0) / 1e9")"

# RLT_RECV set by the program for what it runs: 3000000 B at 1 MiB/s after 1 MiB of burst
t0=$(now_ns)
"$RLTHROTTLE" --seccomp -u 100KiB/s -- busybox env RLT_RECV=1MiB/s busybox wget -q -O "$T/b.bin" \
	"http://127.0.0.1:$port/f.bin" 2>"$T/b.err" ||
	{ show "$T/b.err"; fail "busybox wget with its own RLT_RECV failed"; }
t1=$(now_ns)
show "$T/b.err"
sha256_eq "$T/f.bin" "$T/b.bin"
MIN_SPAN_S=1 assert_rate "download under the image's own RLT_RECV" "$((3000000 - 1048576))" "$((t1 - t0))" 1048576 0.7 1.15
