#!/bin/bash
# --seccomp on a static program: busybox wget (busybox-static) downloads from a local HTTP
# server under -d 1MiB/s. The bytes arrive exactly, and the rate after the burst is the rule's;
# the same without --seccomp: the launcher takes the system-call front for a static COMMAND.
# fronts: seccomp (busybox-static: a static program the preload cannot enter)
. "$(dirname "$0")/lib.sh"
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$RLTHROTTLE" ] || fail "launcher not built: $RLTHROTTLE"
need_cmd busybox python3 sha256sum
file /bin/busybox 2>/dev/null | grep -q static || info "busybox may not be static here (still a test of --seccomp)"

head -c 4000000 /dev/urandom >"$T/f.bin"
http_dir http "$T"
port=$HTTP_PORT

t0=$(now_ns)
"$RLTHROTTLE" --seccomp -d 1MiB/s --stats "$T/st.json" -- busybox wget -q -O "$T/out.bin" "http://127.0.0.1:$port/f.bin" 2>"$T/wget.err" ||
	{ show "$T/wget.err"; fail "busybox wget under --seccomp failed"; }
t1=$(now_ns)
sha256_eq "$T/f.bin" "$T/out.bin"
show "$T/st.json"
units=$(grep -o '"units":[0-9]*' "$T/st.json" | head -1 | cut -d: -f2)
# the body plus the HTTP header (a few hundred bytes)
assert_range "bytes charged" 4000000 4002000 "$units"
# 1 MiB/s with a 1 MiB burst: (4000000 - 1048576) / 1048576 = 2.8 s
MIN_SPAN_S=2 assert_rate "download after the burst" "$((units - 1048576))" "$((t1 - t0))" 1048576 0.8 1.1

# Issue 17 row 13: without --seccomp, a static COMMAND gets the system-call front by itself (it
# used to run at full speed, unthrottled and silent), with one info line under RLT_LOG=info
rm -f "$T/out.bin"
t0=$(now_ns)
RLT_LOG=info "$RLTHROTTLE" -d 1MiB/s -- busybox wget -q -O "$T/out.bin" "http://127.0.0.1:$port/f.bin" 2>"$T/auto.err" ||
	{ show "$T/auto.err"; fail "busybox wget under the launcher (no --seccomp) failed"; }
t1=$(now_ns)
show "$T/auto.err"
sha256_eq "$T/f.bin" "$T/out.bin"
assert_match "the launcher says it took the system-call front" "static binary: throttled through the system-call front" "$(cat "$T/auto.err")"
MIN_SPAN_S=2 assert_rate "download after the burst, no --seccomp given" "$((4000000 - 1048576))" "$((t1 - t0))" 1048576 0.8 1.1
