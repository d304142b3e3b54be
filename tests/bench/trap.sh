#!/bin/sh
# make bench, the system-call front inside the program (rlthrottle --seccomp) beside the plain
# program, in one run: prints figures, never fails.
# Run as: BUILD=build sh tests/bench/trap.sh
#   (a) busybox dd if=/dev/zero of=/dev/null bs=512 count=200000 (static; file I/O, never
#       trapped), rule never binding: seconds, median of 5 alternating runs
#   (b) a 1-byte TCP send from a static C program (trapprog sendcost: best of 5 rounds)
#   (c) redis-benchmark -c 1 ping: requests per second (redis-server plain, the client throttled)
#   (d) socat uploading at 200 MB/s (-u '200MB/s burst=4MB'): the rate after the first second at
#       the receiver (a small burst: with the default one, a second of the rate, a program that
#       can go only a little faster than 200 MB/s would still be spending it then), and
#       the launcher's CPU over 3 s of the transfer (plain: socat unlimited, what the machine does)
# BENCH_QUICK=1 shortens the measurements.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/common.sh"
RUNS=5
N=20000
[ -n "${BENCH_QUICK:-}" ] && RUNS=3 N=5000
bench_need trap trapprog sink
command -v busybox >/dev/null || { echo "bench/trap: busybox not installed"; exit 1; }
bench_setup rlt-bench-trap
NEVER="100GiB/s"
secs() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); calc "($t1 - $t0) / 1e9"; echo; }

echo "== the system-call front: busybox dd bs=512 count=200000, /dev/zero to /dev/null (s, median of $RUNS)"
: >"$T/dd.plain"; : >"$T/dd.trap"
for i in $(seq "$RUNS"); do
	secs busybox dd if=/dev/zero of=/dev/null bs=512 count=200000 >>"$T/dd.plain"
	secs "$RLT" --seccomp -u "$NEVER" -- busybox dd if=/dev/zero of=/dev/null bs=512 count=200000 >>"$T/dd.trap"
done
p=$(median <"$T/dd.plain"); t=$(median <"$T/dd.trap")
printf '%-28s %10s %10s\n' "" seconds "x plain"
printf '%-28s %10s %10s\n' plain "$p" 1
printf '%-28s %10s %10s\n' "--seccomp" "$t" "$(calc "$t / $p")"

echo
echo "== the system-call front: a 1-byte TCP send from a static C program (ns, best of 5 rounds of $N; median of $RUNS runs)"
: >"$T/s.plain"; : >"$T/s.trap"
for i in $(seq "$RUNS"); do
	"$BIN/trapprog" sendcost "$N" | tr ' ' '\n' | awk -F= '$1 == "send_ns" { print $2 }' >>"$T/s.plain"
	"$RLT" --seccomp -u "$NEVER" -- "$BIN/trapprog" sendcost "$N" | tr ' ' '\n' | awk -F= '$1 == "send_ns" { print $2 }' >>"$T/s.trap"
done
p=$(median <"$T/s.plain"); t=$(median <"$T/s.trap")
printf '%-28s %10s %10s\n' "" ns "x plain"
printf '%-28s %10s %10s\n' plain "$p" 1
printf '%-28s %10s %10s\n' "--seccomp" "$t" "$(calc "$t / $p")"

if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
	echo
	echo "== the system-call front: redis-benchmark -c 1 ping (requests/s, median of $RUNS)"
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no >/dev/null 2>&1 &
	PIDS="$PIDS $!"
	i=0; while ! redis-cli -p "$port" ping >/dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	rb() { "$@" redis-benchmark -p "$port" -c 1 -n "$N" -t ping -q 2>/dev/null | tr '\r' '\n' |
		awk '/PING_INLINE:/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+$/) { print $i; exit } }'; }
	: >"$T/r.plain"; : >"$T/r.trap"; : >"$T/r.ratio"
	for i in $(seq "$RUNS"); do
		rb env >>"$T/r.plain"
		rb "$RLT" --seccomp -u "$NEVER" -- >>"$T/r.trap"
		# each --seccomp run against the plain run just before it: other load on the
		# machine comes and goes, and moves the two medians apart more than the two runs
		calc "$(tail -1 "$T/r.trap") / $(tail -1 "$T/r.plain")" >>"$T/r.ratio"; echo >>"$T/r.ratio"
	done
	p=$(median <"$T/r.plain"); t=$(median <"$T/r.trap")
	printf '%-28s %10s %10s\n' "" "req/s" "x plain"
	printf '%-28s %10s %10s\n' plain "$p" 1
	printf '%-28s %10s %10s\n' "--seccomp" "$t" "$(calc "$t / $p")"
	printf '%-28s %10s %10s\n' "--seccomp, run by run" "" "$(median <"$T/r.ratio")"
fi

if command -v socat >/dev/null; then
	echo
	echo "== the system-call front: socat uploading at 200MB/s, burst 4MB (the rate after 1 s, over 4 s)"
	printf '%-28s %14s %9s %14s\n' "" "B/s after 1 s" "x 200MB/s" "launcher CPU %"
	hz=$(getconf CLK_TCK)
	truncate -s 1000000000 "$T/big" # reads as zeros, from the page cache's zero page
	for opt in plain --seccomp; do
		rm -f "$T/port"
		"$BIN/sink" -P "$T/port" -e 1000 -x >"$T/sink.out" 2>&1 &
		spid=$!
		PIDS="$PIDS $spid"
		i=0; while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
		# plain: socat alone, no limit (what this machine does without us)
		if [ "$opt" = plain ]; then
			timeout 8 socat -u OPEN:"$T/big" "TCP:127.0.0.1:$(cat "$T/port")" &
		else
			timeout 8 "$RLT" "$opt" -u "200MB/s burst=4MB" -- socat -u OPEN:"$T/big" "TCP:127.0.0.1:$(cat "$T/port")" &
		fi
		lpid=$!
		sleep 0.2
		l=$(pgrep -P "$lpid" | head -1) # timeout's child: the launcher (plain: socat)
		c0=$(awk '{ print $14 + $15 }' "/proc/$l/stat" 2>/dev/null || echo 0); t0=$(date +%s%N)
		sleep 3
		c1=$(awk '{ print $14 + $15 }' "/proc/$l/stat" 2>/dev/null || echo 0); t1=$(date +%s%N)
		wait "$spid" 2>/dev/null
		wait "$lpid" 2>/dev/null
		lb=$(kv late_bytes "$T/sink.out"); ln=$(kv late_ns "$T/sink.out")
		rate=$( [ -n "$lb" ] && [ "${ln:-0}" != 0 ] && calc "$lb * 1e9 / $ln" || echo -)
		cpu=$(calc "100 * ($c1 - $c0) / $hz / (($t1 - $t0) / 1e9)")
		[ "$opt" = plain ] && cpu="-"
		printf '%-28s %14s %9s %14s\n' "$opt" "$rate" "$( [ "$rate" != - ] && calc "$rate / 200000000" || echo -)" "$cpu"
	done
fi
