#!/bin/sh
# make bench, the network-conditions part (issue 18; rlthrottle(7) NETWORK CONDITIONS): prints
# tables (not pass/fail), measured in one run on loopback. Run as: BUILD=build sh tests/bench/net.sh
#   (a) latency beside a reference that delays in the network's place: 1-byte round trips
#       (rtt_ping.c against pingpong's echo) under RLT_NET="latency=DUR" with the preload and
#       with `rlthrottle --seccomp --net`, and through the reference, for DUR 5, 20, 100 ms;
#       p10/p50/p90/p99 (ms), the median's distance to DUR and to the reference's median.
#       The reference: `tc netem` in a network namespace the bench makes, on its loopback, for
#       one direction only (a prio qdisc, netem on one band, a u32 filter on the server's source
#       port), where the kernel has netem, prio and u32; else delay_relay.c, a relay in the
#       manner of toxiproxy's latency toxic that holds each chunk from the server DUR, with
#       rlthrottle's due time and distributions (see its header). The part says which.
#   (b) jitter: the same with "latency=10ms jitter=3ms", dist=uniform and dist=normal, and the
#       percentiles the distribution itself gives, side by side
#   (c) a stream's pieces: an 8-byte stamp every 2 ms, each piece's one-way delay under
#       latency=50ms, beside the reference (how rlthrottle times a stream's chunks)
#   (d) the cost of a call no condition matches: a 1-byte TCP send (callcost -m tcp), plain,
#       preloaded without RLT_NET, and with RLT_NET set to conditions on another port or peer,
#       each with and without a send rule that never binds; ns per call over alternating runs
#       pinned to one CPU, the paired difference, and (with valgrind) user-space instructions
#       per call; then ns per call under --seccomp, without --net and with one on another port
# BENCH_QUICK=1 shortens every measurement; BENCH_NET_REF=relay or netem picks the reference.
# The whole part takes about a minute.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

BUILD=${BUILD:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 1
LIB=$BUILD/librlthrottle.so
RLT=$BUILD/rlthrottle
BIN=$BUILD/itest
PING=$BUILD/bench/rtt_ping
RELAY=$BUILD/bench/delay_relay
for b in "$BIN/pingpong" "$BIN/callcost" "$PING" "$RELAY" "$RLT"; do
	[ -x "$b" ] || { echo "bench/net: $b not built (make bench builds it)"; exit 1; }
done
[ -f "$LIB" ] || { echo "bench/net: $LIB not built"; exit 1; }
. "$(dirname "$0")/common.sh"
bench_setup rlt-bench-net

# round trips per latency (ms): enough for a p99, and the part within about a minute
declare -A ROUNDS=([0]=200 [5]=200 [20]=100 [100]=30)
JDUR=10 JJIT=3 JROUNDS=200
SDUR=50 SPIECES=100
CALLS=80000 SCALLS=40000
RUNS=6
if [ -n "${BENCH_QUICK:-}" ]; then ROUNDS=([0]=50 [5]=50 [20]=25 [100]=10); JROUNDS=40; SPIECES=30; CALLS=20000; SCALLS=10000; RUNS=2; fi

waitfile() { local i=0; while [ ! -s "$1" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done; }
waitp() { local i=0; while kill -0 "$1" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done; wait "$1" 2>/dev/null; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "" }'; }

# ----- the reference: netem where the kernel has it, else the relay -----

# Without root, a user namespace makes us root in the new network namespace.
US=""; [ "$(id -u)" = 0 ] || US=-r
REF=relay
WHY=""
if ! command -v unshare >/dev/null || ! command -v tc >/dev/null || ! command -v ip >/dev/null; then
	WHY="no unshare, tc or ip"
elif ! unshare $US -n sh -c 'ip link set lo up && tc qdisc add dev lo root netem delay 1ms' >"$T/netem.err" 2>&1; then
	WHY="no netem here: $(tr '\n' ' ' <"$T/netem.err" | head -c 160)"
elif ! unshare $US -n sh -c 'ip link set lo up && tc qdisc add dev lo root handle 1: prio &&
	tc qdisc add dev lo parent 1:3 handle 30: netem delay 1ms &&
	tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip sport 9 0xffff flowid 1:3' >"$T/netem.err" 2>&1; then
	WHY="netem, but no prio qdisc or u32 filter to delay one direction: $(tr '\n' ' ' <"$T/netem.err" | head -c 160)"
else
	REF=netem
fi
# BENCH_NET_REF=relay|netem: that reference whatever the probe found (netem where it failed
# shows what fails)
case ${BENCH_NET_REF:-} in
relay|netem) [ "$BENCH_NET_REF" != "$REF" ] && WHY="BENCH_NET_REF=$BENCH_NET_REF; the probe: ${WHY:-netem works}"; REF=$BENCH_NET_REF ;;
esac

# srv KIND N: the server, one connection: pingpong's echo (rtt) or rtt_ping's stream of N
# pieces (stream); sets PORT and SPID
srv() {
	rm -f "$T/pp.port"
	if [ "$1" = stream ]; then
		"$PING" -S -P "$T/pp.port" -n "$2" >/dev/null 2>"$T/pp.err" &
	else
		"$BIN/pingpong" server -P "$T/pp.port" >/dev/null 2>"$T/pp.err" &
	fi
	SPID=$!
	PIDS="$PIDS $SPID"
	waitfile "$T/pp.port"
	PORT=$(cat "$T/pp.port" 2>/dev/null)
}

# rtt HOW DUR_MS JIT_MS DIST N [KIND]: one connection's N round trips (KIND rtt, the default),
# or the one-way delays of a stream of N pieces (KIND stream); prints rtt_ping's line
rtt() {
	local how=$1 dur=$2 jit=$3 dist=$4 n=$5 kind=${6:-rtt} cond cargs="-n $5"
	cond="latency=${dur}ms"
	[ "$jit" != 0 ] && cond="$cond jitter=${jit}ms dist=$dist"
	[ "$kind" = stream ] && cargs="-s"
	if [ "$how" = netem ]; then
		# the server and the client in a namespace of their own; netem on its loopback holds
		# what the server sends (source port PORT), so only the answers are delayed
		local q="netem delay $((dur * 1000))us"
		[ "$jit" != 0 ] && q="$q $((jit * 1000))us"
		[ "$jit" != 0 ] && [ "$dist" = normal ] && q="$q distribution normal"
		[ "$dur" = 0 ] && q=""
		local server=("$BIN/pingpong" server)
		[ "$kind" = stream ] && server=("$PING" -S -n "$n")
		unshare $US -n bash -c '
			ip link set lo up || exit 1
			t=$1 ping=$2 q=$3 cargs=$4; shift 4
			"$@" -P "$t/ns.port" >/dev/null 2>&1 & sp=$!
			i=0; while [ ! -s "$t/ns.port" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
			port=$(cat "$t/ns.port"); rm -f "$t/ns.port"
			if [ -n "$q" ]; then
				tc qdisc add dev lo root handle 1: prio &&
				tc qdisc add dev lo parent 1:3 handle 30: $q &&
				tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip sport "$port" 0xffff flowid 1:3 ||
					{ kill $sp; exit 1; }
			fi
			"$ping" -p "$port" $cargs; r=$?
			wait $sp
			exit $r' rtt "$T" "$PING" "$q" "$cargs" "${server[@]}" 2>"$T/rtt.err"
		return
	fi
	srv "$kind" "$n"
	local sp=$SPID
	case $how in
	plain) "$PING" -p "$PORT" $cargs ;;
	preload) env LD_PRELOAD="$LIB" RLT_NET="$cond" "$PING" -p "$PORT" $cargs ;;
	seccomp) "$RLT" --seccomp --net "$cond" -- "$PING" -p "$PORT" $cargs ;;
	relay)
		rm -f "$T/relay.port"
		"$RELAY" -P "$T/relay.port" -u "$PORT" -d $((dur * 1000000)) -j $((jit * 1000000)) \
			-D "${dist:-uniform}" -T 120 2>"$T/relay.err" &
		PIDS="$PIDS $!"
		waitfile "$T/relay.port"
		"$PING" -p "$(cat "$T/relay.port")" $cargs
		;;
	esac 2>"$T/rtt.err"
	waitp "$sp"
}

row() { # LABEL1 LABEL2 LINE [DUR_MS] [REF_P50]: one table row
	local line=$3 dur=${4:-} ref=${5:-} p50 d r
	p50=$(echo "$line" | sed -n 's/.*p50_ms=\([0-9.]*\).*/\1/p')
	if [ -z "$p50" ]; then
		printf '    %-8s %-10s (failed: %s)\n' "$1" "$2" "$(tr '\n' ' ' <"$T/rtt.err" | head -c 120)"
		return
	fi
	d=""; [ -n "$dur" ] && d=$(awk -v a="$p50" -v b="$dur" 'BEGIN { printf "%+.3f", a - b }')
	r=""; [ -n "$ref" ] && r=$(awk -v a="$p50" -v b="$ref" 'BEGIN { x = a - b; printf "%+.3f %s", x, (x < 1 && x > -1) ? "(within 1 ms)" : "(OFF by more than 1 ms)" }')
	printf '    %-8s %-10s %4s %8s %8s %8s %8s %9s  %s\n' "$1" "$2" "$(echo "$line" | sed -n 's/^n=\([0-9]*\).*/\1/p')" \
		"$(echo "$line" | sed -n 's/.*p10_ms=\([0-9.]*\).*/\1/p')" "$p50" \
		"$(echo "$line" | sed -n 's/.*p90_ms=\([0-9.]*\).*/\1/p')" \
		"$(echo "$line" | sed -n 's/.*p99_ms=\([0-9.]*\).*/\1/p')" "$d" "$r"
}
p50_of() { echo "$1" | sed -n 's/.*p50_ms=\([0-9.]*\).*/\1/p'; }

echo "== rlthrottle network conditions beside a reference ($(nproc) cores; $(uname -r); load $(cut -d' ' -f1-3 /proc/loadavg))"
if [ "$REF" = netem ]; then
	echo "reference: tc netem on the loopback of a network namespace made for it, one direction"
	echo "    (prio + netem on one band + a u32 filter on the server's port): the answers wait DUR${WHY:+ ($WHY)}"
else
	echo "reference: delay_relay (tests/bench/delay_relay.c), each chunk from the server held DUR, as"
	echo "    toxiproxy's latency toxic; netem not used: $WHY"
fi

echo
echo "(a) latency: 1-byte round trips on one TCP connection (rtt_ping), ms; p50-DUR: the median's"
echo "    distance to DUR; vs ref: to the reference's median (asked: within 1 ms)"
printf '    %-8s %-10s %4s %8s %8s %8s %8s %9s  %s\n' "latency" "path" "n" "p10" "p50" "p90" "p99" "p50-DUR" "vs ref"
row 0 plain "$(rtt plain 0 0 "" ${ROUNDS[0]})"
row 0 "$REF" "$(rtt $REF 0 0 "" ${ROUNDS[0]})"
for dur in 5 20 100; do
	ref=$(rtt $REF $dur 0 "" ${ROUNDS[$dur]})
	rp=$(p50_of "$ref")
	row "${dur}ms" "$REF" "$ref" "$dur"
	row "${dur}ms" preload "$(rtt preload $dur 0 "" ${ROUNDS[$dur]})" "$dur" "$rp"
	row "${dur}ms" seccomp "$(rtt seccomp $dur 0 "" ${ROUNDS[$dur]})" "$dur" "$rp"
done

echo
echo "(b) jitter: latency=${JDUR}ms jitter=${JJIT}ms, $JROUNDS round trips each, ms; 'expected': the"
echo "    distribution's own percentiles (uniform over DUR +- J; normal, J a deviation), before what"
echo "    the path itself adds (the 0 rows above); the reference draws from the same distributions"
echo "    ($([ "$REF" = netem ] && echo "netem's: its uniform, and its normal table" || echo "delay_relay: uniform in whole ns, normal by Irwin-Hall, as src/net_cond.c; its own draws"))"
printf '    %-8s %-10s %4s %8s %8s %8s %8s\n' "dist" "path" "n" "p10" "p50" "p90" "p99"
for dist in uniform normal; do
	# uniform: DUR + J (2p - 1); normal: DUR + J z(p)
	printf '    %-8s %-10s %4s %s\n' $dist expected "" "$(awk -v d=$JDUR -v j=$JJIT -v dist=$dist 'BEGIN {
		split("0.10 0.50 0.90 0.99", p, " "); split("-1.28155 0 1.28155 2.32635", z, " ")
		for (i = 1; i <= 4; i++) printf "%8.3f ", dist == "uniform" ? d + j * (2 * p[i] - 1) : d + j * z[i] }')"
	row $dist "$REF" "$(rtt $REF $JDUR $JJIT $dist $JROUNDS)"
	row $dist preload "$(rtt preload $JDUR $JJIT $dist $JROUNDS)"
	row $dist seccomp "$(rtt seccomp $JDUR $JJIT $dist $JROUNDS)"
done

echo
# How a stream's pieces are timed: rlthrottle's delay line (preload/net_line.c) takes the
# data from the kernel as it comes, each read stamped with its last byte's arrival, and hands
# each piece on DUR after it; the reference holds each piece from its own arrival too.
echo "(c) a stream's pieces: the server sends an 8-byte stamp every 2 ms ($SPIECES pieces), the client"
echo "    reads to the end; one-way delay of each piece, ms, under latency=${SDUR}ms (each piece"
echo "    reaches the program DUR after its host: p10..p99 near DUR, as the reference)"
printf '    %-8s %-10s %4s %8s %8s %8s %8s %9s  %s\n' "latency" "path" "n" "p10" "p50" "p90" "p99" "p50-DUR" "vs ref"
row 0 plain "$(rtt plain 0 0 "" $SPIECES stream)"
ref=$(rtt $REF $SDUR 0 "" $SPIECES stream)
rp=$(p50_of "$ref")
row "${SDUR}ms" "$REF" "$ref" "$SDUR"
row "${SDUR}ms" preload "$(rtt preload $SDUR 0 "" $SPIECES stream)" "$SDUR" "$rp"
row "${SDUR}ms" seccomp "$(rtt seccomp $SDUR 0 "" $SPIECES stream)" "$SDUR" "$rp"

echo
# (d) Issue 18: without RLT_NET nothing of the conditions is installed; with it, every call of
# a socket asks whether a condition applies. What that asking costs a call none applies to.
PIN0=""; command -v taskset >/dev/null && PIN0="taskset -c 0"
RULE="100GiB/s"
echo "(d) the cost of a call no condition matches: a 1-byte TCP send() on loopback (callcost -m tcp,"
echo "    $CALLS calls, drained by one read per 32 sends), pinned to one CPU (${PIN0:-not pinned}),"
echo "    $RUNS alternating runs, median ns per call; paired: the median difference of 1000-call blocks"
echo "    through the hook and straight to the C library, in one process; RLT_SEND=$RULE never binds;"
echo "    instructions: user space, per call (callgrind); + by RLT_NET: over the same row without it"
OTHER="latency=5ms port=9"
# a row: plain, or "S|NET": preloaded, with RLT_SEND=$RULE when S is 1, with RLT_NET=NET when
# NET is not empty
WHICH=(plain "0|" "0|$OTHER" "1|" "1|$OTHER" "1|slice=1 dir=out peer=10.0.0.0/8")
envof() { # ROW: E, the env command line of the row (empty for plain)
	E=()
	[ "$1" = plain ] && return
	E=(env LD_PRELOAD="$LIB")
	[ "${1%%|*}" = 1 ] && E+=(RLT_SEND="$RULE")
	[ -n "${1#*|}" ] && E+=(RLT_NET="${1#*|}")
}
cone() { # ROW: "ns paired_ns" of one run
	envof "$1"
	$PIN0 "${E[@]}" "$BIN/callcost" -m tcp -p -n "$CALLS" >"$T/cc.out" 2>&1
	echo "$(kv ns "$T/cc.out") $(kv paired_ns "$T/cc.out")"
}
ir_call() { # ROW: user-space instructions per call, marginal (2N calls less N)
	command -v valgrind >/dev/null 2>&1 || { echo n/a; return; }
	local a b n=10000
	envof "$1"
	ir() {
		"${E[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BIN/callcost" -m tcp -n "$1" \
			2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
	}
	a=$(ir $n); b=$(ir $((n * 2)))
	[ -n "$a" ] && [ -n "$b" ] && calc "($b - $a) / ($n * 1.05)" || echo n/a
}
declare -A NS PD IR
for i in $(seq "$RUNS"); do
	for w in "${WHICH[@]}"; do
		set -- $(cone "$w")
		NS[$w]="${NS[$w]:-} ${1:-}"; PD[$w]="${PD[$w]:-} ${2:-}"
	done
done
printf '    %-9s | %-9s | %-33s | %-8s | %-10s | %-12s | %-12s\n' "library" "RLT_SEND" "RLT_NET" "ns" "paired +ns" "instructions" "+ by RLT_NET"
for w in "${WHICH[@]}"; do
	lib=preloaded rs=- rn=-
	case $w in
	plain) lib=plain ;;
	*) [ "${w%%|*}" = 1 ] && rs=$RULE; [ -n "${w#*|}" ] && rn="${w#*|}" ;;
	esac
	IR[$w]=$(ir_call "$w")
	d=""
	case $w in
	plain|*"|") ;;
	*) b=${IR[${w%%|*}|]:-n/a}; [ "$b" != n/a ] && [ "${IR[$w]}" != n/a ] && d=$(calc "${IR[$w]} - $b") ;;
	esac
	pd=$(echo "${PD[$w]}" | median)
	[ "$w" = plain ] && pd="-"
	printf '    %-9s | %-9s | %-33s | %-8s | %-10s | %-12s | %-12s\n' "$lib" "$rs" "$rn" "$(echo "${NS[$w]}" | median)" "$pd" "${IR[$w]}" "$d"
done
echo "    runs, ns: plain${NS[plain]}; RLT_SEND, no RLT_NET${NS[1|]}; RLT_SEND, $OTHER:${NS[1|$OTHER]}"

# --seccomp: every send is trapped; the handler asks the conditions as the preload does
sone() { # NET ("" or a condition)
	if [ -z "$1" ]; then
		$PIN0 "$RLT" --seccomp -u "$RULE" -- "$BIN/callcost" -m tcp -n "$SCALLS"
	else
		$PIN0 "$RLT" --seccomp -u "$RULE" --net "$1" -- "$BIN/callcost" -m tcp -n "$SCALLS"
	fi >"$T/sc.out" 2>&1
	kv ns "$T/sc.out"
}
SN=""; SP=""
for i in $(seq "$RUNS"); do
	SN="$SN $(sone "")"; SP="$SP $(sone "$OTHER")"
done
echo
printf '    %-44s | %-9s\n' "--seccomp -u $RULE, send() on a TCP socket" "ns ($SCALLS calls, $RUNS alternating runs)"
printf '    %-44s | %-9s\n' "no --net" "$(echo "$SN" | median)"
printf '    %-44s | %-9s\n' "--net \"$OTHER\"" "$(echo "$SP" | median)"
echo "    runs, ns: no --net$SN; --net$SP"
echo
echo "== end of network-conditions benchmarks (load $(cut -d' ' -f1-3 /proc/loadavg))"
