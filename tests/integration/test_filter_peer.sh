#!/bin/bash
# peer= filters: peer=127.0.0.2 does not throttle traffic to 127.0.0.1 but does to 127.0.0.2;
# a prefix (127.0.0.0/8) matches.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink blast
n=$((10 * 1048576))
RLT_SEND="100kB/s peer=127.0.0.2" do_send other -n $n
assert_fast "to 127.0.0.1 under peer=127.0.0.2" "$(kv elapsed_ns "$B_OUT")" 2
SINK_ARGS="-h 127.0.0.2" RLT_SEND="1MiB/s burst=128KiB peer=127.0.0.2" do_send same -h 127.0.0.2 -n 1572864
assert_rate "to 127.0.0.2 under peer=127.0.0.2" $((1572864 - 131072)) "$(kv elapsed_ns "$S_OUT")" 1048576 0.7 1.3
RLT_SEND="1MiB/s burst=128KiB peer=127.0.0.0/8" do_send prefix -n 1572864
assert_rate "to 127.0.0.1 under peer=127.0.0.0/8" $((1572864 - 131072)) "$(kv elapsed_ns "$S_OUT")" 1048576 0.7 1.3
