#!/bin/bash
# IPv6 loopback (::1): send and receive are throttled, bytes exact; peer= filters take IPv6 forms.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_ipv6
need_bin sink blast source pull
n=$((5 * 524288))
SINK_ARGS="-6" RLT_SEND="2MiB/s burst=512KiB" do_send v6send -6 -n $n -m send
assert_rate "IPv6 send" $((n - 524288)) "$(kv elapsed_ns "$S_OUT")" 2097152 0.7 1.3
SRC_ARGS="-6 -n $n" RLT_RECV="2MiB/s burst=512KiB" do_recv v6recv -6 -m recv
assert_rate "IPv6 recv" $((n - 524288)) "$(kv elapsed_ns "$P_OUT")" 2097152 0.7 1.3
SINK_ARGS="-6" RLT_SEND="2MiB/s burst=512KiB peer=::1/128" do_send v6peer -6 -n $n -m write
assert_rate "IPv6 send, peer=::1/128" $((n - 524288)) "$(kv elapsed_ns "$S_OUT")" 2097152 0.7 1.3
SINK_ARGS="-6" RLT_SEND="100kB/s peer=127.0.0.1" do_send v6other -6 -n $((4 * n)) -m write
assert_fast "IPv6 send, peer=127.0.0.1 (does not match)" "$(kv elapsed_ns "$B_OUT")" 2
