#!/bin/sh
# make bench, the injector part (issue 21, "start by measuring"): prints figures, not pass/fail.
# Run as: BUILD=build sh tests/bench/inject.sh
#   (b) start-up: ms per `busybox true` plain and under the injector (the minimal blob), and
#       `busybox dd if=/dev/zero of=/dev/null bs=512 count=200000` plain and injected (its calls
#       are let through by the filter: what the filter alone costs)
#   1-byte TCP send: plain, injected (sendto trapped, made by the handler), today's --seccomp
#   (c) a Go program (tests/inject/gotrap.go: GC, goroutines, SIGURG preemption, 30 SIGUSR1 by
#       os/signal, getppid and UDP sendto) and busybox sh running injected: the blob's counts;
#       and Go without the blob keeping SIGSYS out of its masks (-n): how it dies
# BENCH_QUICK=1 shortens the measurements.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/common.sh"
RUNS=200
[ -n "${BENCH_QUICK:-}" ] && RUNS=40
bench_need inject injectrun trapblob_min
command -v busybox >/dev/null || { echo "bench/inject: busybox not installed"; exit 1; }
bench_setup rlt-bench-inject
BB=$(command -v busybox)
INJ="$BIN/injectrun $BIN/trapblob_min --"
ns() { date +%s%N; }

# Alternating single runs of busybox true, plain and injected (the machine's load changes from
# second to second): the median of each, in ms ($EPOCHREALTIME: no fork to read the clock).
median_ms() { median | awk '{ printf "%.3f", $1 / 1000 }'; }
echo "== (b) start-up: ms per run, median of $RUNS alternating runs"
: >"$T/plain"; : >"$T/inj"; : >"$T/sup"
for ((i = 0; i < RUNS; i++)); do
	a=${EPOCHREALTIME/[.,]/}; "$BB" true >/dev/null 2>&1; b=${EPOCHREALTIME/[.,]/}
	$INJ "$BB" true >/dev/null 2>&1; c=${EPOCHREALTIME/[.,]/}
	RLT_SEND=16GB/s "$BUILD/rlthrottle" --seccomp -- "$BB" true >/dev/null 2>&1; d=${EPOCHREALTIME/[.,]/}
	echo $((b - a)) >>"$T/plain"; echo $((c - b)) >>"$T/inj"; echo $((d - c)) >>"$T/sup"
done
plain=$(median_ms <"$T/plain"); inj=$(median_ms <"$T/inj"); sup=$(median_ms <"$T/sup")
printf '  %-40s %8.3f ms\n' "busybox true" "$plain"
printf '  %-40s %8.3f ms  (+%.3f ms)\n' "busybox true, injected" "$inj" "$(calc "$inj - $plain")"
printf '  %-40s %8.3f ms  (+%.3f ms)\n' "busybox true, today's --seccomp" "$sup" "$(calc "$sup - $plain")"
t0=$(ns); "$BB" dd if=/dev/zero of=/dev/null bs=512 count=200000 2>/dev/null; t1=$(ns)
t2=$(ns); $INJ "$BB" dd if=/dev/zero of=/dev/null bs=512 count=200000 2>/dev/null; t3=$(ns)
t4=$(ns); "$BB" dd if=/dev/zero of=/dev/null bs=512 count=200000 2>/dev/null; t5=$(ns)
d0=$(calc "(($t1 - $t0) + ($t5 - $t4)) / 2e9"); d1=$(calc "($t3 - $t2) / 1e9")
printf '  %-40s %8.3f s\n' "dd bs=512 count=200000, plain" "$d0"
printf '  %-40s %8.3f s  (%.2fx; its calls let through)\n' "dd, injected" "$d1" "$(calc "$d1 / $d0")"

echo "== 1-byte TCP send and raw getppid, ns per call (trapprog sendcost: best of 5 rounds of $((RUNS * 100)); 3 alternating runs)"
printf '  %-44s %s\n' "run" "getppid_ns send_ns"
for r in 1 2 3; do
	printf '  %-44s %s\n' "plain" "$("$BIN/trapprog" sendcost $((RUNS * 100)) 2>&1)"
	printf '  %-44s %s\n' "injected (both trapped)" "$($INJ "$BIN/trapprog" sendcost $((RUNS * 100)) 2>&1)"
	[ -x "$BUILD/rlthrottle" ] && printf '  %-44s %s\n' "today's --seccomp, RLT_SEND=16GB/s" \
		"$(RLT_SEND=16GB/s "$BUILD/rlthrottle" --seccomp -- "$BIN/trapprog" sendcost $((RUNS * 100)) 2>&1)"
done

echo "== (c) injected Go and busybox: what the minimal blob's handler counted"
if command -v go >/dev/null 2>&1; then
	mkdir -p "$BUILD/go"
	cp "$(dirname "$0")/../inject/gotrap.go" "$BUILD/go/"
	if (cd "$BUILD/go" && GOFLAGS=-mod=mod GOCACHE=$BUILD/go/cache GOPATH=$BUILD/go/path \
		GO111MODULE=auto CGO_ENABLED=0 timeout 300 go build -o gotrap gotrap.go) >"$T/go.log" 2>&1; then
		rc=0
		t0=$(ns)
		timeout 60 "$BIN/injectrun" -r "$T/rep" "$BIN/trapblob_min" -- "$BUILD/go/gotrap" \
			>"$T/go.out" 2>&1 || rc=$?
		t1=$(ns)
		echo "  gotrap injected: exit $rc, $(calc "($t1 - $t0) / 1e6") ms"
		sed 's/^/    /' "$T/go.out"
		sed 's/^/    /' "$T/rep"
		t0=$(ns); "$BUILD/go/gotrap" >/dev/null 2>&1; t1=$(ns)
		echo "  gotrap plain: $(calc "($t1 - $t0) / 1e6") ms"
		rc=0
		timeout 60 "$BIN/injectrun" -n "$BIN/trapblob_min" -- "$BUILD/go/gotrap" >"$T/go.out" 2>&1 || rc=$?
		echo "  gotrap injected, SIGSYS not kept out of its masks (-n): exit $rc: $(head -n 1 "$T/go.out")"
	else
		echo "  (cannot build gotrap.go: $(tail -n 1 "$T/go.log"))"
	fi
else
	echo "  (go not installed)"
fi
rm -f "$T/rep"
rc=0
timeout 60 "$BIN/injectrun" -r "$T/rep" "$BIN/trapblob_min" -- "$BB" sh -c \
	'i=0; while [ $i -lt 300 ]; do i=$((i + 1)); echo x >/dev/null; done; trap "" USR1; exec busybox true' \
	>"$T/bb.out" 2>&1 || rc=$?
echo "  busybox sh (a loop, then exec busybox true: the second image injected): exit $rc"
sed 's/^/    /' "$T/rep" "$T/bb.out"
