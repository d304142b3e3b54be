#!/bin/sh
# make bench, the publishing part (rlthrottle(1) COMMANDS). Prints figures; not a pass/fail gate.
#   (a) ns per conforming charge+settle (bench_charge): counting off, counting privately
#       (RLT_STATS), counting into the published page; beside the same program built against
#       BENCH_BASELINE (a tree of the previous release with build/librlt.a built, e.g. a
#       worktree of main), when given. Fastest of 5 alternating runs of each.
#   (b) ns per write() of one byte on a matched TCP socket
#       (callcost: the whole hook, the real call included), this tree's library publishing
#       beside BENCH_BASELINE's library with RLT_STATS on: the same comparison end to end, where
#       the system call's own cost and its noise dwarf a few ns.
#   (c) `rlthrottle top` refreshing every second over 100 preloaded sleepers, in a tmux pane:
#       its CPU time over 10 s, as a share of one core.
# Run as: BUILD=build [BENCH_BASELINE=/path/to/main-tree] sh tests/bench/publish.sh
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/common.sh"
bench_setup rlt-bench-pub
src=$(cd "$(dirname "$0")" && pwd)/bench_charge.c

echo "(a) ns per conforming charge+settle, one token rule that never binds (fastest of 5 runs)"
runs="$BUILD/bench/bench_charge"
if [ -n "${BENCH_BASELINE:-}" ] && [ -f "$BENCH_BASELINE/build/librlt.a" ]; then
	if ${CC:-cc} -std=c11 -O2 -D_GNU_SOURCE -I"$BENCH_BASELINE/include" -I"$BENCH_BASELINE/src" -pthread \
		-o "$T/bench_charge_base" "$src" "$BENCH_BASELINE/build/librlt.a" -lm 2>"$T/cc.err"; then
		runs="$T/bench_charge_base $runs"
	else
		echo "  (the baseline did not build: $(head -1 "$T/cc.err"))"
	fi
else
	echo "  (no BENCH_BASELINE: this tree only)"
fi
for i in 1 2 3 4 5; do
	for b in $runs; do
		case $b in *_base) "$b" baseline ;; *) "$b" "this tree" ;; esac
	done
done >"$T/charge.out"
for who in baseline "this tree"; do
	for m in stats-off stats-private published; do
		v=$(grep "^$who *mode=$m " "$T/charge.out" | sed 's/.*ns=//' | sort -g | head -1)
		[ -n "$v" ] && printf '  %-10s %-14s %6.2f ns\n' "$who" "$m" "$v"
	done
done
pub=$(grep 'this tree.*published' "$T/charge.out" | sed 's/.*ns=//' | sort -g | head -1)
priv=$(grep 'baseline.*stats-private' "$T/charge.out" | sed 's/.*ns=//' | sort -g | head -1)
off=$(grep 'this tree.*stats-off' "$T/charge.out" | sed 's/.*ns=//' | sort -g | head -1)
[ -n "$priv" ] && echo "  published vs the baseline's RLT_STATS counting: $(calc "$pub - $priv") ns a call"
echo "  published vs counting off (RLT_PUBLISH=0, no RLT_STATS): $(calc "$pub - $off") ns a call"

echo "(b) ns per 1-byte write() on a matched TCP socket, end to end (fastest of 3 runs, each a median of 5)"
cc_best() { local b="" v i; for i in 1 2 3; do v=$("$@" 2>/dev/null | sed -n 's/.*socket_ns=\([0-9.]*\).*/\1/p'); [ -n "$v" ] && { [ -z "$b" ] || fle "$v" "$b"; } && b=$v; done; echo "${b:-n/a}"; }
fle() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }
if [ -x "$BUILD/itest/callcost" ]; then
	if [ -n "${BENCH_BASELINE:-}" ] && [ -f "$BENCH_BASELINE/build/librlthrottle.so" ]; then
		echo "  baseline, RLT_STATS on:        $(cc_best env LD_PRELOAD="$BENCH_BASELINE/build/librlthrottle.so" RLT_SEND=16GB/s RLT_STATS="$T/st.json" "$BUILD/itest/callcost" -n 100000) ns"
	fi
	echo "  this tree, published:          $(cc_best env LD_PRELOAD="$LIB" RLT_SEND=16GB/s "$BUILD/itest/callcost" -n 100000) ns"
	echo "  this tree, RLT_PUBLISH=0:      $(cc_best env LD_PRELOAD="$LIB" RLT_SEND=16GB/s RLT_PUBLISH=0 "$BUILD/itest/callcost" -n 100000) ns"
else
	echo "  (callcost not built)"
fi

echo "(c) rlthrottle top over 100 throttled processes: CPU share of one core over 10 s"
if ! command -v tmux >/dev/null; then echo "  (no tmux)"; exit 0; fi
for i in $(seq 1 100); do
	env LD_PRELOAD="$LIB" RLT_SEND="1MiB/s" RLT_RECV="2MiB/s" sleep 40 &
	PIDS="$PIDS $!"
done
i=0; while [ "$(ls /dev/shm | grep -c '^rlthrottle-')" -lt 100 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
echo "  pages: $(ls /dev/shm | grep -c '^rlthrottle-')"
sock=$T/tmux.sock
tmux -S "$sock" new-session -d -x 200 -y 60 "$RLT top"
tpid=$(tmux -S "$sock" display -p '#{pane_pid}')
sleep 1
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
c0=$(ticks "$tpid"); t0=$(date +%s%N)
sleep 10
c1=$(ticks "$tpid"); t1=$(date +%s%N)
hz=$(getconf CLK_TCK)
echo "  top (pid $tpid): $(calc "($c1 - $c0) / $hz") s of CPU in $(calc "($t1 - $t0) / 1e9") s: $(calc "100 * ($c1 - $c0) / $hz / (($t1 - $t0) / 1e9)")% of a core"
tmux -S "$sock" send-keys q
sleep 0.3
tmux -S "$sock" kill-server 2>/dev/null
exit 0
