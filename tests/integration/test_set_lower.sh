#!/bin/bash
# Issue 17 row 7: `rlthrottle set` lowering a rate and a burst mid-transfer carries the budget
# over as a share of the burst (rlthrottle(1) COMMANDS): 1MiB/s (burst 1 MiB, empty while sending) set to
# 200KiB/s burst=16KiB goes on at the new rate at once: at least 300 KB in the next 3 s and no
# gap over 0.7 s (a 64 KiB send waiting at the set goes at the new rate: 0.32 s). Before: 31-73
# KB and a ~5 s stall, paying off the old burst at the new rate. Every byte arrives (sha256).
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/set_lib.sh"
need_lib
need_cmd python3 sha256sum
set_during_download "1MiB/s" 4 1.5 "200KiB/s burst=16KiB" 3
moved=$((PER_S * 3)) # bytes per second over the 3 s -> bytes
gap=$(awk -v a="$T1" -v b="$T2" 'BEGIN { p = a } $1 > a && $1 <= b { if ($1 - p > g) g = $1 - p; p = $1 }
	END { if (b - p > g) g = b - p; printf "%d\n", g / 1000000 }' "$T/samples")
info "after the set: $moved B in 3 s, longest gap ${gap} ms"
assert_ge "bytes in the 3 s after lowering" 300000 "$moved"
assert_le "longest gap after lowering (ms)" 700 "$gap"
