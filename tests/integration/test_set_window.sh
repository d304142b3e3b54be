#!/bin/bash
# rlthrottle set on a fixed window (RLT_SEND=1MiB/s algo=fixed-window): a download set to
# 256KiB/s mid-transfer, then back. A fixed window sends its limit in a burst at each window's
# start (CLOCK_MONOTONIC multiples of the period), so a phase is measured over whole windows:
# between half-windows, the bytes of the bursts in between, within 10% of the limit; every byte
# arrives (sha256). Under UNDER_SECCOMP=1 the handler applies the set.
# fronts: preload seccomp
# matrix-only: seccomp (slow: whole 1 s windows per phase; its seccomp run is in make matrix-rest)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/set_lib.sh"
need_lib
need_cmd python3 sha256sum
start_download "1MiB/s algo=fixed-window" 7
sleep 3.1
t1=$(now_ns)
set_send 1 "256KiB/s algo=fixed-window"
t1b=$(now_ns)
info "set: $(cat "$T/set1.out")"
sleep 4.1
t2=$(now_ns)
set_send 2 "1MiB/s algo=fixed-window"
finish_download
t0=$(python3 "$P" first "$T/samples")
read -r n1 r1 < <(python3 "$P" windows "$t0" "$t1" "$T/samples")
read -r n2 r2 < <(python3 "$P" windows "$t1b" "$t2" "$T/samples")
info "phase rates (B/s): 1MiB/s -> $r1 over $n1 windows, 256KiB/s -> $r2 over $n2 windows"
assert_ge "phase 1 whole windows" 1 "$n1"
assert_ge "phase 2 whole windows" 2 "$n2"
assert_range "phase 1 rate" $((MiB * 90 / 100)) $((MiB * 110 / 100)) "$r1"
assert_range "phase 2 rate" $((256 * KiB * 90 / 100)) $((256 * KiB * 110 / 100)) "$r2"
