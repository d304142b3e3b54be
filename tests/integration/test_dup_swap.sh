#!/bin/bash
# Issue 17 row 1: a paced send stays on the socket it started on. A C program sends 2 MiB on
# connection A in one send() under RLT_SEND="1MiB/s burst=64KiB" (2 s of pieces); 0.5 s in,
# another thread dup2()s connection B's fd onto A's number. Peer A gets every byte (sha256),
# peer B none (before: A got about 1.5 MB and B got A's other 0.5 MB: the pieces after the swap
# went to whatever the fd number was then).
# The same for a send that goes whole but waits (the hooks' short way, rlt_pre_send_charge:
# RLT_PRE_SEND_WAIT): under RLT_SEND="64KiB/s burst=64KiB" a 64 KiB send takes the burst, the
# next 64 KiB send (one charge, whole) waits 1 s, and the dup2 comes 0.5 s into that wait (before:
# the second send went to peer B).
# fronts: preload seccomp
# parallel-safe: bytes only (the dup2 comes 0.5 s into a paced wait of 1 s or more)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin dupswap
need_cmd python3 sha256sum
head -c $((2 * 1048576)) /dev/urandom >"$T/f.bin"
# swap RULE FILE FIRST: dupswap under RLT_SEND=RULE, the swap at 500 ms; peer A gets all of
# FILE, peer B nothing
swap() {
	rm -f "$T/porta" "$T/portb" "$T/a.bin" "$T/b.bin"
	file_sink sinka "$T/porta" "$T/a.bin"
	SA=$LAST_PID
	file_sink sinkb "$T/portb" "$T/b.bin"
	SB=$LAST_PID
	wait_file "$T/porta"
	wait_file "$T/portb"
	RLT_SEND="$1" throttled "$ITEST_BIN/dupswap" "$(cat "$T/porta")" "$(cat "$T/portb")" \
		"$2" 500 ${3-} >"$T/out" 2>"$T/err" || { show "$T/out" "$T/err"; fail "dupswap failed"; }
	wait_pid "$SA" 10 || fail "sink A did not end"
	wait_pid "$SB" 10 || fail "sink B did not end"
	info "$(cat "$T/out"); peer A got $(stat -c %s "$T/a.bin") B, peer B got $(stat -c %s "$T/b.bin") B"
	assert_match "the send" "sent=$(stat -c %s "$2") " "$(cat "$T/out")"
	assert_eq "bytes peer B got" 0 "$(stat -c %s "$T/b.bin")"
	assert_eq "peer A's bytes (sha256)" "$(sha256sum <"$2")" "$(sha256sum <"$T/a.bin")"
}
swap "1MiB/s burst=64KiB" "$T/f.bin"
head -c $((128 * 1024)) "$T/f.bin" >"$T/w.bin"
swap "64KiB/s burst=64KiB" "$T/w.bin" 65536
