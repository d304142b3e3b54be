#!/bin/bash
# rlthrottle set on a running sender (RLT_SEND=1MiB/s burst=16KiB): set to 256KiB/s mid-transfer
# and back to 1MiB/s. Each phase's rate, measured at the receiver over 2 s or more, within 5% of
# its limit; every byte arrives (sha256). Under UNDER_SECCOMP=1 the sender runs under
# `rlthrottle --seccomp` (the handler inside it applies the set).
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix-rest, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/set_lib.sh"
need_lib
need_cmd python3 sha256sum
start_download "1MiB/s burst=16KiB" 6
sleep 2.5
t1=$(now_ns) # a phase ends before its set is asked for, and the next is measured from later
set_send 1 "256KiB/s burst=16KiB"
t1b=$(now_ns) # applied by now: the next phase is measured from a margin after
info "set: $(cat "$T/set1.out")"
sleep 2.5
t2=$(now_ns)
set_send 2 "1MiB/s burst=16KiB"
t2b=$(now_ns)
finish_download
t3=$(tail -1 "$T/samples" | cut -d' ' -f1)
[ -n "${KEEP_SAMPLES:-}" ] && cp "$T/samples" "$KEEP_SAMPLES"
margin=100000000 # ns after a set has answered before its phase is measured
t0=$(python3 "$P" first "$T/samples")
r1=$(python3 "$P" rate $((t0 + margin)) "$t1" "$T/samples")
r2=$(python3 "$P" rate $((t1b + margin)) "$t2" "$T/samples")
r3=$(python3 "$P" rate $((t2b + margin)) "$t3" "$T/samples")
assert_phases 95 "$r1" "$r2" "$r3"
