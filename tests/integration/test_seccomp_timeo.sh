#!/bin/bash
# SO_RCVTIMEO and SO_SNDTIMEO are honoured when the handler makes the call for the program
# (a stream receive under a RECV rule, a send larger than a piece under a SEND rule), as the
# kernel honours them under the preload: a receive from a peer that sends nothing fails with
# EAGAIN after the timeout, and a send to a peer that reads nothing returns what went out.
# The server holds each connection open for 4 s without a byte either way.
# fronts: seccomp (SO_RCVTIMEO/SO_SNDTIMEO on calls the handler makes for a static program)
# parallel-safe: bound, no rate (a 400 ms SO_*TIMEO ends the call within 0.3-1.5 s)
. "$(dirname "$0")/lib.sh"
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$RLTHROTTLE" ] || fail "launcher not built: $RLTHROTTLE"
need_lib
need_bin acceptor timeo

check() { # WHAT OUTFILE: the call timed out after ~400 ms
	local what=$1 out=$2 r e ns
	r=$(kv result "$out")
	e=$(kv errno "$out")
	ns=$(kv elapsed_ns "$out")
	[ -n "$ns" ] || { show "$out"; fail "$what: no result"; }
	assert_range "$what: seconds until the call gave up (SO_*TIMEO 400 ms)" 0.3 1.5 "$(calc "$ns / 1e9")"
	if [ "$3" = recv ]; then
		assert_eq "$what: result" "-1 EAGAIN" "$r $e"
	else
		fle 1 "$r" && fle "$r" $((16 * 1024 * 1024 - 1)) ||
			fail "$what: a send that timed out returns what went out, got result=$r errno=$e"
		info "$what: $r bytes went out before the timeout (ok)"
	fi
}

for mode in recv send; do
	start_srv acc acceptor -H -D 4
	"$RLTHROTTLE" --seccomp -d 1MiB/s -u 64MiB/s -- "$ITEST_BIN/timeo" $mode -p "$SRV_PORT" -t 400 >"$T/s.out" 2>"$T/s.err" ||
		{ show "$T/s.out" "$T/s.err"; fail "timeo $mode under --seccomp failed"; }
	show "$T/s.out"
	check "--seccomp $mode" "$T/s.out" $mode
	RLT_RECV=1MiB/s RLT_SEND=64MiB/s pre "$ITEST_BIN/timeo" $mode -p "$SRV_PORT" -t 400 >"$T/p.out" 2>"$T/p.err" ||
		{ show "$T/p.out" "$T/p.err"; fail "timeo $mode under the preload failed"; }
	show "$T/p.out"
	check "preload $mode" "$T/p.out" $mode
done
