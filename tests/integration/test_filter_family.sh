#!/bin/bash
# family=: the default (inet) leaves unix sockets alone; family=unix throttles a unix socket and
# not TCP; family=all throttles both.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink blast
n=1572864
unix_send() { # LABEL BYTES -- rules come from the environment
	start_srv "$1" sink -U "$T/$1.sock"
	local spid=$LAST_PID
	throttled "$ITEST_BIN/blast" -U "$T/$1.sock" -n "$2" >"$T/b_$1.out" 2>"$T/b_$1.err" || { show "$T/b_$1.err"; fail "$1: blast failed"; }
	wait_pid "$spid" 20
	assert_eq "$1: bytes" "$2" "$(kv bytes "$T/$1.out")"
	assert_eq "$1: checksum" "$(kv fnv "$T/b_$1.out")" "$(kv fnv "$T/$1.out")"
}
RLT_SEND="100kB/s" unix_send def $((8 * n))
assert_fast "unix socket under a default (inet) rule" "$(kv elapsed_ns "$T/b_def.out")" 2
RLT_SEND="1MiB/s burst=128KiB family=unix" unix_send fu $n
assert_rate "unix socket under family=unix" $((n - 131072)) "$(kv elapsed_ns "$T/fu.out")" 1048576 0.7 1.3
RLT_SEND="1MiB/s burst=128KiB family=all" unix_send fa $n
assert_rate "unix socket under family=all" $((n - 131072)) "$(kv elapsed_ns "$T/fa.out")" 1048576 0.7 1.3
RLT_SEND="100kB/s family=unix" do_send tcp_fu -n $((8 * n))
assert_fast "TCP under family=unix" "$(kv elapsed_ns "$B_OUT")" 2
RLT_SEND="1MiB/s burst=128KiB family=all" do_send tcp_fa -n $n
assert_rate "TCP under family=all" $((n - 131072)) "$(kv elapsed_ns "$S_OUT")" 1048576 0.7 1.3
