#!/bin/bash
# rlthrottle set on a fixed window (RLT_SEND=1MiB/s algo=fixed-window): a download set to
# 256KiB/s mid-transfer, then back. A fixed window sends its limit in a burst at each window's
# start (CLOCK_MONOTONIC multiples of the period), so a phase is measured over whole windows:
# between half-windows, the bytes of the bursts in between, within 10% of the limit; every byte
# arrives (sha256). Under UNDER_SECCOMP=1 the supervisor applies the set.
# fronts: preload seccomp
# matrix-only: seccomp (slow: whole 1 s windows per phase; its seccomp run is in make matrix)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3 sha256sum
RLT=$(dirname "$RLT_LIB")/rlthrottle
P=$ITEST_DIR/rate_phases.py
KiB=1024 MiB=1048576
head -c $((7 * MiB)) /dev/urandom >"$T/f.bin"
RLT_SEND="1MiB/s algo=fixed-window" bg srv throttled python3 "$P" serve "$T/port" "$T/f.bin"
wait_file "$T/port"
bg cli python3 "$P" fetch "$(cat "$T/port")" "$T/got.bin" "$T/samples"
cli=$LAST_PID
pid=$(cat "$T/port.pid")
wait_file "$T/samples.first"
sleep 3.1
t1=$(now_ns)
"$RLT" set "$pid" RLT_SEND "256KiB/s algo=fixed-window" >"$T/set1.out" 2>&1 ||
	{ show "$T/set1.out"; fail "set to 256KiB/s failed"; }
t1b=$(now_ns)
info "set: $(cat "$T/set1.out")"
sleep 4.1
t2=$(now_ns)
"$RLT" set "$pid" RLT_SEND "1MiB/s algo=fixed-window" >"$T/set2.out" 2>&1 ||
	{ show "$T/set2.out"; fail "set back to 1MiB/s failed"; }
wait_pid "$cli" 20 || fail "the receiver did not finish"
[ "$(sha256sum <"$T/f.bin")" = "$(sha256sum <"$T/got.bin")" ] || fail "bytes differ (sha256)"
# The bytes received between the half-windows around the window starts inside [FROM, TO]
# (realtime ns), per window: "windows bytes_per_second".
cat >"$T/windows.py" <<'PY'
import bisect, sys, time
lo, hi, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
off = time.time_ns() - time.monotonic_ns()  # the window starts, in the samples' clock
ts, tot = [], []
for line in open(path):
    t, n = line.split()
    ts.append(int(t)); tot.append(int(n))
def at(t):  # bytes received by t
    i = bisect.bisect_right(ts, t) - 1
    return tot[i] if i >= 0 else 0
W = 10**9
k = (lo - off + W // 2 + W - 1) // W  # the first window start with its half-window after lo
m = (hi - off - W // 2) // W          # the last start whose burst has begun before hi - W/2
if m <= k:
    print(0, 0); sys.exit()
a, b = k * W + off - W // 2, m * W + off - W // 2
print(m - k, (at(b) - at(a)) * W // (b - a))
PY
t0=$(python3 "$P" first "$T/samples")
read -r n1 r1 < <(python3 "$T/windows.py" "$t0" "$t1" "$T/samples")
read -r n2 r2 < <(python3 "$T/windows.py" "$t1b" "$t2" "$T/samples")
info "phase rates (B/s): 1MiB/s -> $r1 over $n1 windows, 256KiB/s -> $r2 over $n2 windows"
assert_ge "phase 1 whole windows" 1 "$n1"
assert_ge "phase 2 whole windows" 2 "$n2"
assert_range "phase 1 rate" $((MiB * 90 / 100)) $((MiB * 110 / 100)) "$r1"
assert_range "phase 2 rate" $((256 * KiB * 90 / 100)) $((256 * KiB * 110 / 100)) "$r2"
