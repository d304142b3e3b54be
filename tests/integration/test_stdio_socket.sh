#!/bin/bash
# Issue 17 row 3: C stdio on a socket is paced like write(): 3 MiB of text (no NUL: dprintf's
# %.*s) under RLT_SEND=1MiB/s (default burst: 2 s for the rest) through fwrite on an fdopen'ed
# socket, through dprintf, and through fwrite on stdout when stdout is a socket (bash's
# /dev/tcp, as inetd hands one). Each takes 1.6 s or more and every byte arrives (sha256).
# Before: 3 MiB in 0.00 s each (glibc's stdio writes with its internal __write).
# fronts: preload seccomp
# parallel-safe: floor (each transfer takes at least the 1.6 s its rate allows, which load only lengthens; no ceiling; bytes by sha256)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin stdiosend
need_cmd python3 sha256sum base64
head -c $((3 * 1048576 * 3 / 4)) /dev/urandom | base64 -w 0 >"$T/f.txt"
for mode in fdopen dprintf stdout; do
	file_sink "sink_$mode" "$T/port.$mode" "$T/got.$mode"
	SP=$LAST_PID
	wait_file "$T/port.$mode"
	port=$(cat "$T/port.$mode")
	if [ $mode = stdout ]; then
		RLT_SEND=1MiB/s throttled "$ITEST_BIN/stdiosend" stdout "$T/f.txt" \
			>/dev/tcp/127.0.0.1/"$port" 2>"$T/err.$mode" || { show "$T/err.$mode"; fail "$mode failed"; }
	else
		RLT_SEND=1MiB/s throttled "$ITEST_BIN/stdiosend" $mode "$T/f.txt" "$port" \
			2>"$T/err.$mode" || { show "$T/err.$mode"; fail "$mode failed"; }
	fi
	wait_pid "$SP" 10 || fail "$mode: the sink did not end"
	took=$(sed -n 's/.*took_ms=\([0-9]*\).*/\1/p' "$T/err.$mode")
	info "$mode: $(cat "$T/err.$mode")"
	assert_eq "$mode: bytes (sha256)" "$(sha256sum <"$T/f.txt")" "$(sha256sum <"$T/got.$mode")"
	assert_ge "$mode: ms for 3 MiB at 1MiB/s" 1600 "$took"
done
