#!/bin/sh
# make bench, the preload part: prints tables (not pass/fail) of rlthrottle beside trickle, measured
# in one run on loopback. Run as: BUILD=build sh tests/bench/preload.sh
#   (a) rate accuracy, upload and download, 100 KiB/s .. 1 GiB/s (measured at the receiver,
#       after a 1 s warm-up, over BENCH_SECS seconds, default 4)
#   (b) connect rate accuracy at 10/s, 100/s, 1000/s
#   (c) CPU used by a sender (and an epoll receiver) held at 1 MiB/s
#   (d) overhead when no rule binds: 1-byte TCP ping-pong round trips per second
#   (e) ns per write() on /dev/null and on a matched TCP socket; the pass-through (a call that is
#       not ours: /dev/null, a pipe, an unmatched socket) and a conforming call, ns over plain,
#       pinned to one CPU (BENCH_BASELINE_LIB=path adds a "before" column; BENCH_CALLS)
#   (f) a conforming 1-byte send() on TCP and on UDP (issue 21): plain and preloaded with a rule
#       that never binds, pinned to CPU 0, 8 alternating runs, median ns per call and the ratio;
#       the paired difference and the hook alone (libnullsys.so) beside it
#       (BENCH_BASELINE_LIB adds its rows; BENCH_SEND_CALLS); and, with valgrind, the user-space
#       instructions per call of each (BENCH_IR_CALLS); beside them the floor of that promise
#       (a clock read and a compare-and-swap, callcost -m clock)
# BENCH_QUICK=1 shortens every measurement (for a smoke run); BENCH_ONLY="a c" runs only those parts. Needs the helpers built from
# tests/integration/*.c ($BUILD/itest) and the library; trickle is optional.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

SECS=${BENCH_SECS:-4}
ROUNDS=20000
if [ -n "${BENCH_QUICK:-}" ]; then SECS=1; ROUNDS=2000; fi

. "$(dirname "$0")/common.sh"
bench_need preload sink source blast pull conn acceptor pingpong callcost
[ -f "$LIB" ] || { echo "bench/preload: $LIB not built"; exit 1; }
HAVE_TRICKLE=0
command -v trickle >/dev/null 2>&1 && HAVE_TRICKLE=1
bench_setup rlt-bench
pct() { awk -v a="$1" -v t="$2" 'BEGIN { if (a == "" || t == 0) print "n/a"; else printf "%+.1f%%", (a / t - 1) * 100 }'; }
# callcost_run PIN CALLS LIBS RULE MODE: one run of callcost (CALLS calls of MODE, under PIN, the
# libraries LIBS preloaded with RLT_SEND=RULE, or plain for none): prints "ns low_ns paired_ns
# paired_ratio"
callcost_run() {
	local p=-p d r
	case $3 in *nullsys*) p="" ;; esac
	if [ -z "$3" ]; then
		$1 "$BIN/callcost" -m "$5" $p -n "$2" >"$T/cc.out" 2>&1
	else
		$1 env LD_PRELOAD="$3" RLT_SEND="$4" "$BIN/callcost" -m "$5" $p -n "$2" >"$T/cc.out" 2>&1
	fi
	d=$(kv paired_ns "$T/cc.out"); r=$(kv paired_ratio "$T/cc.out")
	echo "$(kv ns "$T/cc.out") $(kv low_ns "$T/cc.out") ${d:-x} ${r:-x}"
}
# col K RUNS: the median of the K-th figure of each run's "ns low_ns paired_ns paired_ratio"
col() { echo "$2" | tr ' ' '\n' | grep . | awk -v k="$1" '(NR - 1) % 4 == k - 1' | tr '\n' ' ' | median; }

# srv NAME PROG ARGS...: start a helper server, wait for its port file; sets PORT and SPID.
srv() {
	local name=$1 prog=$2 i=0; shift 2
	rm -f "$T/$name.port"
	${PIN_SRV:-} "$BIN/$prog" -P "$T/$name.port" "$@" >"$T/$name.out" 2>"$T/$name.err" &
	SPID=$!
	PIDS="$PIDS $SPID"
	while [ ! -s "$T/$name.port" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	PORT=$(cat "$T/$name.port" 2>/dev/null)
}
waitp() { local i=0; while kill -0 "$1" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done; wait "$1" 2>/dev/null; }

# bytes/s arriving after the 1 s warm-up, from a sink or pull output file
late_rate() { local b n; b=$(kv late_bytes "$1"); n=$(kv late_ns "$1"); [ -n "$n" ] && [ "$n" != 0 ] && calc "$b * 1e9 / $n"; }

# burst for the accuracy runs: 100 ms of the rate, at least 16 KiB. (The default, one second of
# the rate, cannot be drained within the 1 s warm-up at rates near the machine's ceiling and would
# show up as overshoot in the measured window.)
burst_kib() { local k=$(( $1 / 10240 )); [ $k -lt 16 ] && k=16; echo $k; }

# upload TOOL RATE_BPS: a sender for 1 + SECS seconds, measured at the sink
upload() {
	local tool=$1 rate=$2
	srv up sink -x -e 1000 -T 60
	local sp=$SPID
	case $tool in
	plain) "$BIN/blast" -p "$PORT" -D $((SECS + 1)) -s 65536 >"$T/b.out" 2>&1 ;;
	ours) env LD_PRELOAD="$LIB" RLT_SEND="${rate}B/s burst=$(burst_kib "$rate")KiB" "$BIN/blast" -p "$PORT" -D $((SECS + 1)) -s 65536 >"$T/b.out" 2>&1 ;;
	trickle) trickle -s -u $((rate / 1024)) "$BIN/blast" -p "$PORT" -D $((SECS + 1)) -s 65536 >"$T/b.out" 2>&1 ;;
	esac
	waitp "$sp"
	late_rate "$T/up.out"
}
# download TOOL RATE_BPS: an unthrottled source, a throttled reader for 1 + SECS seconds
download() {
	local tool=$1 rate=$2
	srv down source -D 60 -T 70
	local sp=$SPID
	case $tool in
	plain) "$BIN/pull" -p "$PORT" -D $((SECS + 1)) -e 1000 -x -m recv >"$T/p.out" 2>&1 ;;
	ours) env LD_PRELOAD="$LIB" RLT_RECV="${rate}B/s burst=$(burst_kib "$rate")KiB" "$BIN/pull" -p "$PORT" -D $((SECS + 1)) -e 1000 -x -m recv >"$T/p.out" 2>&1 ;;
	trickle) trickle -s -d $((rate / 1024)) "$BIN/pull" -p "$PORT" -D $((SECS + 1)) -e 1000 -x -m recv >"$T/p.out" 2>&1 ;;
	esac
	waitp "$sp"
	late_rate "$T/p.out"
}

want() { case " ${BENCH_ONLY:-a b c d e f} " in *" $1 "*) return 0 ;; esac; return 1; }

echo "== rlthrottle preload benchmarks ($(nproc) cores; $(uname -r); ${SECS} s per measurement)"
[ $HAVE_TRICKLE = 1 ] || echo "(trickle not installed: its columns are n/a)"
if want a; then
echo
echo "(a) rate accuracy: achieved / target - 1, at the receiver, after 1 s, over ${SECS} s"
echo "    (64 KiB writes / reads; rlthrottle burst = 100 ms of the rate; trickle -s -u/-d, KB = 1024 B)"
echo "    ceiling without any limit on this machine: upload $(calc "$(upload plain 0) / 1048576") MiB/s, download $(calc "$(download plain 0) / 1048576") MiB/s"
printf '    %-12s | %-22s | %-22s | %-22s | %-22s\n' "target" "upload rlthrottle" "upload trickle" "download rlthrottle" "download trickle"
for spec in "100KiB 102400" "1MiB 1048576" "10MiB 10485760" "100MiB 104857600" "1GiB 1073741824"; do
	set -- $spec
	name=$1 rate=$2
	uo=$(upload ours "$rate")
	ut=n/a; [ $HAVE_TRICKLE = 1 ] && ut=$(upload trickle "$rate")
	do_=$(download ours "$rate")
	dt=n/a; [ $HAVE_TRICKLE = 1 ] && dt=$(download trickle "$rate")
	f() { [ -n "$1" ] && [ "$1" != n/a ] && printf '%s (%s MiB/s)' "$(pct "$1" "$rate")" "$(calc "$1 / 1048576")" || echo n/a; }
	printf '    %-12s | %-22s | %-22s | %-22s | %-22s\n' "$name/s" "$(f "$uo")" "$(f "$ut")" "$(f "$do_")" "$(f "$dt")"
done

fi
if want b; then
echo
echo "(b) connect rate: RLT_CONNECT=N/s, 4 threads connecting as fast as let, after 1 s, over ${SECS} s"
echo "    (trickle has no connect limit)"
printf '    %-10s | %-14s | %-10s\n' "target" "achieved/s" "error"
srv acc acceptor -D 600 -T 700
for r in 10 100 1000; do
	env LD_PRELOAD="$LIB" RLT_CONNECT="$r/s" "$BIN/conn" -p "$PORT" -t 4 -D $((SECS + 1)) -e 1000 >"$T/c.out" 2>&1
	ok=$(kv late_ok "$T/c.out"); ns=$(kv late_ns "$T/c.out")
	a=$( [ -n "$ns" ] && [ "$ns" != 0 ] && calc "$ok * 1e9 / $ns" )
	printf '    %-10s | %-14s | %-10s\n' "$r/s" "${a:-n/a}" "$(pct "$a" "$r")"
done
kill "$SPID" 2>/dev/null

fi
if want c; then
echo
echo "(c) CPU while held at 1 MiB/s: CPU-seconds (user+sys) per wall second of the throttled process"
printf '    %-34s | %-12s | %-12s\n' "work" "rlthrottle" "trickle"
cpu_send() { # TOOL BLASTFLAGS
	local tool=$1; shift
	srv cs sink -x -T 60
	local sp=$SPID
	case $tool in
	ours) env LD_PRELOAD="$LIB" RLT_SEND="1MiB/s" "$BIN/blast" -p "$PORT" -D "$SECS" -s 65536 "$@" >"$T/cb.out" 2>&1 ;;
	trickle) trickle -s -u 1024 "$BIN/blast" -p "$PORT" -D "$SECS" -s 65536 "$@" >"$T/cb.out" 2>&1 ;;
	esac
	waitp "$sp"
	calc "$(kv cpu_ns "$T/cb.out") / $(kv elapsed_ns "$T/cb.out")"
}
cpu_recv() { # TOOL PULLFLAGS
	local tool=$1; shift
	srv cr source -D 60 -T 70
	local sp=$SPID
	case $tool in
	ours) env LD_PRELOAD="$LIB" RLT_RECV="1MiB/s" "$BIN/pull" -p "$PORT" -D "$SECS" -x "$@" >"$T/cp.out" 2>&1 ;;
	trickle) trickle -s -d 1024 "$BIN/pull" -p "$PORT" -D "$SECS" -x "$@" >"$T/cp.out" 2>&1 ;;
	esac
	waitp "$sp"
	calc "$(kv cpu_ns "$T/cp.out") / $(kv total_ns "$T/cp.out")"
}
for w in "send:blocking write:" "send:non-blocking send + poll:-N -m send" "recv:blocking recv:-m recv" "recv:non-blocking recv + epoll:-N -m recv"; do
	kind=${w%%:*}; rest=${w#*:}; label=${rest%%:*}; flags=${rest#*:}
	o=$(cpu_$kind ours $flags)
	t=n/a; [ $HAVE_TRICKLE = 1 ] && t=$(cpu_$kind trickle $flags)
	printf '    %-34s | %-12s | %-12s\n' "$kind, $label" "$o" "$t"
done

fi
if want d; then
echo
# Client and server share one CPU: across two CPUs of this VM the wake-up latency swings the
# rate fivefold from run to run, and the figure would measure the scheduler, not us.
PIN=""
command -v taskset >/dev/null && PIN="taskset -c $(($(nproc) - 1))"
echo "(d) overhead when no rule binds: 1-byte TCP ping-pong, $((ROUNDS * 2)) round trips, 9 alternating"
echo "    runs, median round trips/s (client preloaded; rlthrottle with RLT_SEND=RLT_RECV=16GB/s;"
echo "    trickle -s -u/-d 2000000; client and server on one CPU: ${PIN:-not pinned})"
pp() { # TOOL
	PIN_SRV=$PIN srv pp pingpong server
	local sp=$SPID n=$((ROUNDS * 2))
	case $1 in
	plain) $PIN "$BIN/pingpong" client -p "$PORT" -n $n >"$T/pp.out" 2>&1 ;;
	ours) $PIN env LD_PRELOAD="$LIB" RLT_SEND="16GB/s" RLT_RECV="16GB/s" "$BIN/pingpong" client -p "$PORT" -n $n >"$T/pp.out" 2>&1 ;;
	trickle) $PIN trickle -s -u 2000000 -d 2000000 "$BIN/pingpong" client -p "$PORT" -n $n >"$T/pp.out" 2>&1 ;;
	esac
	waitp "$sp"
	kv rps "$T/pp.out"
}
P=""; O=""; R=""
for i in 1 2 3 4 5 6 7 8 9; do
	P="$P $(pp plain)"; O="$O $(pp ours)"
	[ $HAVE_TRICKLE = 1 ] && R="$R $(pp trickle)"
done
mp=$(echo "$P" | median); mo=$(echo "$O" | median); mr=$(echo "$R" | median)
printf '    %-12s | %-14s | %-10s | %-26s\n' "client" "round trips/s" "ratio" "added ns per round trip"
printf '    %-12s | %-14s | %-10s | %-26s\n' "plain" "$mp" "1" "0"
printf '    %-12s | %-14s | %-10s | %-26s\n' "rlthrottle" "$mo" "$(calc "$mo / $mp")" "$(calc "1e9 / $mo - 1e9 / $mp")"
if [ -n "$mr" ]; then
	printf '    %-12s | %-14s | %-10s | %-26s\n' "trickle" "$mr" "$(calc "$mr / $mp")" "$(calc "1e9 / $mr - 1e9 / $mp")"
fi
echo "    runs: plain$P; rlthrottle$O${R:+; trickle$R}"

fi
if want e; then
echo
echo "(e) ns per write() call (median of 5 rounds): /dev/null, and a matched TCP socket drained by a thread"
printf '    %-40s | %-12s | %-12s\n' "setup" "/dev/null" "TCP socket"
cc_row() { # LABEL CMD...
	local label=$1; shift
	"$@" >"$T/cc.out" 2>&1
	printf '    %-40s | %-12s | %-12s\n' "$label" "$(kv devnull_ns "$T/cc.out")" "$(kv socket_ns "$T/cc.out")"
}
N=400000; [ -n "${BENCH_QUICK:-}" ] && N=40000
cc_row "no library" "$BIN/callcost" -n $N
cc_row "rlthrottle, RLT_SEND=16GB/s" env LD_PRELOAD="$LIB" RLT_SEND="16GB/s" "$BIN/callcost" -n $N
cc_row "rlthrottle, 200 idle sockets open" env LD_PRELOAD="$LIB" RLT_SEND="16GB/s" "$BIN/callcost" -n $N -i 200
if [ $HAVE_TRICKLE = 1 ]; then
	cc_row "trickle -s -u 2000000" trickle -s -u 2000000 -d 2000000 "$BIN/callcost" -n $N
	cc_row "trickle, 200 idle sockets open" trickle -s -u 2000000 -d 2000000 "$BIN/callcost" -n $N -i 200
fi

# The pass-through (issue 10): what a call that is not ours costs over the same call without
# the library, measured as the issue states it: CALLS 1-byte writes in one process pinned to one
# CPU, 5 runs alternating plain and preloaded, the median of each. RLT_SEND is set, so the hook
# has to decide: a file, a pipe and a unix socket (the default family=inet) are not ours. The
# matched row is the conforming call (look-up, clock, the engine's atomic) on the same socket.
# BENCH_BASELINE_LIB=path: a library built from another commit, run in the same rounds, so that
# before and after are side by side on one machine at one time.
CALLS=${BENCH_CALLS:-2000000}; [ -n "${BENCH_QUICK:-}" ] && CALLS=200000
CPU=$(($(nproc) - 1))
PINCPU=""; command -v taskset >/dev/null && PINCPU="taskset -c $CPU"
BASE=${BENCH_BASELINE_LIB:-}
[ -z "$BASE" ] || [ -f "$BASE" ] || { echo "    BENCH_BASELINE_LIB=$BASE: no such file"; BASE=""; }
echo
echo "    pass-through: ns per write() over plain ($CALLS calls pinned to one CPU: ${PINCPU:-not pinned}; 5 alternating"
echo "    runs, median; in brackets the same of each run's 10th-percentile 1000-call block, which
    leaves out the blocks the scheduler took the CPU from; then, paired, the median difference
    between 1000-call blocks through the hook and straight to the C library, alternating in one
    process, where what else the machine runs weighs on both alike)"
echo "    not matched: RLT_SEND=16GB/s; matched: RLT_SEND=\"16GB/s family=unix\" (a conforming call)"
[ -n "$BASE" ] && echo "    before: $BASE"
one() { callcost_run "$PINCPU" "$CALLS" "$1" "$2" "$3"; } # PRELOADS RULE MODE
over() { # RUNS_OURS RUNS_PLAIN (each "ns low_ns paired_ns ..."): "+X (+Y) +Z"
	awk -v o="$(col 1 "$1")" -v p="$(col 1 "$2")" -v om="$(col 2 "$1")" -v pm="$(col 2 "$2")" \
		-v d="$(col 3 "$1")" \
		'BEGIN { if (o == "" || p == "") print "n/a"; else printf "%+.1f (%+.1f)%s", o - p, om - pm, d == "" || d == "x" ? "" : sprintf(" %+.1f", d) }'
}
# pass_table EXTRA: the table, each library preloaded before EXTRA (a library or nothing)
pass_table() {
	local extra=$1 row mode rest rule label P A B pl pm
	if [ -n "$BASE" ]; then
		printf '    %-30s | %-18s | %-26s | %-26s\n' "write() on" "plain ns" "before: + ns" "after: + ns"
	else
		printf '    %-30s | %-18s | %-26s\n' "write() on" "plain ns" "rlthrottle: + ns"
	fi
	for row in "devnull:16GB/s:/dev/null" "pipe:16GB/s:a pipe" "unix:16GB/s:a unix socket, not matched" \
		"unix:16GB/s family=unix:a unix socket, matched"; do
		mode=${row%%:*}; rest=${row#*:}; rule=${rest%%:*}; label=${rest#*:}
		P=""; A=""; B=""
		for i in 1 2 3 4 5; do
			P="$P $(one "$extra" "$rule" "$mode")"
			[ -n "$BASE" ] && B="$B $(one "$BASE${extra:+ $extra}" "$rule" "$mode")"
			A="$A $(one "$LIB${extra:+ $extra}" "$rule" "$mode")"
		done
		pl=$(col 1 "$P"); pm=$(col 2 "$P")
		if [ -n "$BASE" ]; then
			printf '    %-30s | %-18s | %-26s | %-26s\n' "$label" "$pl ($pm)" "$(over "$B" "$P")" "$(over "$A" "$P")"
		else
			printf '    %-30s | %-18s | %-26s\n' "$label" "$pl ($pm)" "$(over "$A" "$P")"
		fi
	done
}
pass_table ""
# The same with the kernel taken out: libnullsys.so's write and read return at once, so the
# difference is the hook's own instructions, which a system call of a microsecond or more and
# its swings hide. (After a real system call the hook also runs with colder caches and branch
# predictors than in this loop: the figures above are the ones a program sees.)
NULLSYS=$BUILD/bench/libnullsys.so
if [ -f "$NULLSYS" ]; then
	echo
	echo "    the hook alone: the same, with write() and read() that enter no kernel (libnullsys.so)"
	pass_table "$NULLSYS"
else
	echo "    ($NULLSYS not built: make $NULLSYS for the hook alone)"
fi
fi
if want f; then
echo
# rlthrottle(7) BEHAVIOUR: a call that conforms costs a clock read and an atomic update per matching rule. Issue
# 21 asks for a conforming 1-byte TCP send at most 1.05x plain, UDP too. One process pinned to
# CPU 0 sends 1-byte datagrams or stream writes on loopback and drains them itself (one read,
# or one recvmmsg, per 32 sends), so that nothing else is scheduled between two sends.
SCALLS=${BENCH_SEND_CALLS:-400000}; [ -n "${BENCH_QUICK:-}" ] && SCALLS=40000
PIN0=""; command -v taskset >/dev/null && PIN0="taskset -c 0"
RULE="100GiB/s"
NULLSYS=$BUILD/bench/libnullsys.so
BASE=${BENCH_BASELINE_LIB:-}
[ -z "$BASE" ] || [ -f "$BASE" ] || { echo "    BENCH_BASELINE_LIB=$BASE: no such file"; BASE=""; }
echo "(f) a conforming 1-byte send(): ns per call, plain and preloaded (RLT_SEND=$RULE, never binding;"
echo "    RLT_STATS unset, the live page on as by default), $SCALLS calls pinned to one CPU (${PIN0:-not pinned}),"
echo "    8 alternating runs, median; paired: the median difference of 1000-call blocks through the"
echo "    hook and straight to the C library in one process, and the median ratio of the two (what"
echo "    the machine's swings from run to run cannot move); hook alone: the same runs with a send"
echo "    that enters no kernel (libnullsys.so), preloaded less plain"
[ -n "$BASE" ] && echo "    before: $BASE"
sone() { callcost_run "$PIN0" "$SCALLS" "$1" "$RULE" "$2"; } # LIBS MODE
firsts() { echo "$1" | tr ' ' '\n' | grep . | awk 'NR % 4 == 1 { printf " %s", $1 }'; }
echo "    (in brackets: the same of each run's 10th-percentile 1000-call block, which leaves out the"
echo "    blocks the scheduler took the CPU from)"
printf '    %-4s %-11s | %-18s | %-18s | %-15s | %-10s | %-12s | %-10s\n' "send" "library" "plain ns" "ns" "ratio" "paired +ns" "paired ratio" "hook alone"
for mode in tcp udp; do
	P=""; A=""; B=""; NP=""; NA=""; NB=""
	for i in 1 2 3 4 5 6 7 8; do
		P="$P $(sone "" $mode)"
		[ -n "$BASE" ] && B="$B $(sone "$BASE" $mode)"
		A="$A $(sone "$LIB" $mode)"
		if [ -f "$NULLSYS" ]; then
			NP="$NP $(sone "$NULLSYS" $mode)"
			[ -n "$BASE" ] && NB="$NB $(sone "$BASE $NULLSYS" $mode)"
			NA="$NA $(sone "$LIB $NULLSYS" $mode)"
		fi
	done
	pl=$(col 1 "$P"); pll=$(col 2 "$P"); npl=$(col 1 "$NP")
	srow() { # LABEL RUNS NULLRUNS
		local o ol no
		o=$(col 1 "$2"); ol=$(col 2 "$2"); no=$(col 1 "$3")
		printf '    %-4s %-11s | %-18s | %-18s | %-15s | %-10s | %-12s | %-10s\n' "$mode" "$1" "$pl ($pll)" "$o ($ol)" \
			"$(calc "$o / $pl") ($(calc "$ol / $pll"))" "$(col 3 "$2")" "$(col 4 "$2")" \
			"$([ -n "$no" ] && calc "$no - $npl" || echo n/a)"
	}
	[ -n "$BASE" ] && srow before "$B" "$NB"
	srow rlthrottle "$A" "$NA"
	echo "    $mode runs, ns: plain$(firsts "$P"); rlthrottle$(firsts "$A")${B:+; before$(firsts "$B")}"
	eval "plain_low_$mode=\$pll"
done
# The floor rlthrottle(7) promises a conforming call (a clock read and an atomic update per
# matching rule), measured the same way: what 1.05x of a plain send leaves room for, beside it.
F=""
for i in 1 2 3 4 5 6 7 8; do F="$F $($PIN0 "$BIN/callcost" -m clock -n "$SCALLS" | tr ' ' '\n' | sed -n 's/^low_ns=//p')"; done
fl=$(echo "$F" | median)
echo "    the floor: one CLOCK_MONOTONIC read and one compare-and-swap, $fl ns (median of 8 runs'"
echo "    10th-percentile blocks); 5% of the plain send's 10th-percentile block: tcp $(calc "${plain_low_tcp:-0} * 0.05") ns,"
echo "    udp $(calc "${plain_low_udp:-0} * 0.05") ns"
# The same calls counted in instructions (valgrind's callgrind, user space only), which what
# else the machine runs cannot move: the figure to compare two builds by on a shared machine
# (perf's hardware counters are not there in every VM). Marginal: a run of 2N calls less one
# of N, per call, so that loading and setting up the library cancel out.
if command -v valgrind >/dev/null 2>&1; then
	IRN=${BENCH_IR_CALLS:-10000}
	ir() { # LIBS MODE N: instructions of a whole run
		env ${1:+LD_PRELOAD="$1"} RLT_SEND="$RULE" valgrind --tool=callgrind \
			--callgrind-out-file=/dev/null "$BIN/callcost" -m "$2" -n "$3" 2>&1 >/dev/null |
			sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
	}
	ir_call() { # LIBS MODE: instructions per call (N and 2N calls, each with its warm-up of 1/20)
		local a b
		a=$(ir "$1" "$2" "$IRN"); b=$(ir "$1" "$2" $((IRN * 2)))
		[ -n "$a" ] && [ -n "$b" ] && calc "($b - $a) / ($IRN * 1.05)" || echo n/a
	}
	echo
	echo "    user-space instructions per send() (callgrind; the kernel's are not counted), and what the"
	echo "    library adds"
	printf '    %-4s %-11s | %-12s | %-12s\n' "send" "library" "instructions" "added"
	for mode in tcp udp; do
		ip=$(ir_call "" $mode)
		printf '    %-4s %-11s | %-12s | %-12s\n' "$mode" "plain" "$ip" "0"
		for row in ${BASE:+"before:$BASE"} "rlthrottle:$LIB"; do
			il=$(ir_call "${row#*:}" $mode)
			printf '    %-4s %-11s | %-12s | %-12s\n' "$mode" "${row%%:*}" "$il" \
				"$([ "$il" != n/a ] && [ "$ip" != n/a ] && calc "$il - $ip" || echo n/a)"
		done
	done
else
	echo "    (valgrind not installed: no instruction counts)"
fi
fi
echo
echo "== end of preload benchmarks"
