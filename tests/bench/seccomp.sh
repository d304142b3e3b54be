#!/bin/sh
# make bench, the --seccomp part: prints figures (not pass/fail), measured in one run on loopback.
# Run as: BUILD=build sh tests/bench/seccomp.sh
#   (a) receive rate accuracy under --seccomp at 100 KiB/s, 1 MiB/s, 10 MiB/s, 100 MiB/s:
#       pull (a C client) reads from source; measured at the client after a 1 s warm-up (the
#       burst), over BENCH_SECS seconds (default 4); and busybox wget (static) at 1 MiB/s
#   (b) the cost of a system call: ns per write() on /dev/null (a file: never trapped) and on a
#       TCP socket a rule matches (trapped and charged), plain vs --seccomp
# BENCH_QUICK=1 shortens the measurements.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

. "$(dirname "$0")/common.sh"
SECS=${BENCH_SECS:-4}
CALLS=20000
if [ -n "${BENCH_QUICK:-}" ]; then SECS=1; CALLS=2000; fi
bench_need seccomp source pull callcost
[ -x "$RLT" ] || { echo "bench/seccomp: $RLT not built"; exit 1; }
bench_setup rlt-bench-seccomp

echo "== --seccomp: receive rate accuracy (pull, after a 1 s warm-up, about ${SECS} s)"
printf '%-12s %14s %14s %8s\n' rate target_B/s got_B/s ratio
for r in "100KiB/s 102400" "1MiB/s 1048576" "10MiB/s 10485760" "100MiB/s 104857600"; do
	set -- $r
	rm -f "$T/src.port"
	# the burst (one second of the rate) plus SECS seconds at the rate, then EOF
	"$BIN/source" -P "$T/src.port" -n $(($2 * (SECS + 1))) >"$T/src.out" 2>&1 &
	spid=$!
	PIDS="$PIDS $spid"
	waitfile "$T/src.port"
	"$RLT" --seccomp -d "$1" -- "$BIN/pull" -p "$(cat "$T/src.port")" -x -e 1000 -T $((SECS + 10)) \
		>"$T/pull.out" 2>"$T/pull.err" &
	ppid=$!
	wait "$ppid" 2>/dev/null
	wait "$spid" 2>/dev/null
	lb=$(kv late_bytes "$T/pull.out"); ln=$(kv late_ns "$T/pull.out")
	if [ -n "$lb" ] && [ -n "$ln" ] && [ "$ln" != 0 ]; then
		got=$(calc "$lb * 1e9 / $ln")
		printf '%-12s %14s %14s %8s\n' "$1" "$2" "$got" "$(calc "$got / $2")"
	else
		printf '%-12s %14s %14s\n' "$1" "$2" "(no measurement: $(tr '\n' ' ' <"$T/pull.out" | head -c 200))"
	fi
done

if command -v busybox >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then
	head -c 5000000 /dev/urandom >"$T/f.bin"
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	python3 -m http.server "$port" --bind 127.0.0.1 --directory "$T" >/dev/null 2>&1 &
	PIDS="$PIDS $!"
	i=0; while ! ss -Hltn "sport = :$port" | grep -q . && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	t0=$(date +%s%N)
	"$RLT" --seccomp -d 1MiB/s -- busybox wget -q -O "$T/o.bin" "http://127.0.0.1:$port/f.bin"
	t1=$(date +%s%N)
	echo "busybox wget (static), 5000000 B at 1MiB/s (1 MiB burst): $(calc "($t1 - $t0) / 1e9") s, expected $(calc "(5000000 - 1048576) / 1048576") s; rate after the burst $(calc "(5000000 - 1048576) * 1e9 / ($t1 - $t0)") B/s"
fi

echo
echo "== --seccomp: cost per system call (ns per write(), median of 5 rounds of $CALLS)"
"$BIN/callcost" -n "$CALLS" >"$T/plain.out"
"$RLT" --seccomp -c 1/s -- "$BIN/callcost" -n "$CALLS" >"$T/norule.out"
"$RLT" --seccomp -u 10GB/s -- "$BIN/callcost" -n "$CALLS" >"$T/rule.out"
printf '%-52s %14s %14s\n' "" "/dev/null" "TCP socket"
printf '%-52s %14s %14s\n' "plain" "$(kv devnull_ns "$T/plain.out")" "$(kv socket_ns "$T/plain.out")"
printf '%-52s %14s %14s\n' "--seccomp, no send rule" "$(kv devnull_ns "$T/norule.out")" "$(kv socket_ns "$T/norule.out")"
printf '%-52s %14s %14s\n' "--seccomp -u 10GB/s (socket: charged)" "$(kv devnull_ns "$T/rule.out")" "$(kv socket_ns "$T/rule.out")"
