#!/bin/sh
# make bench, the pictures (issue 19 item 8): PNG files under $BUILD/bench/, drawn by gnuplot.
# Prints where it wrote each one; never fails the bench (a missing tool is one line, status 0).
# Run as: BUILD=build sh tests/bench/plots.sh   (run.sh calls it last)
#   rate.png      a download throttled to 1 MiB/s over time, rlthrottle beside trickle at the
#                 same limit: one curl each from a local HTTP server (python3 -m http.server),
#                 the bytes curl has written sampled every 100 ms, the rate between samples
#   overhead.png  ns per 1-byte call on a TCP socket: plain, preloaded, trickle, --seccomp
#                 (callcost, a dynamic program), and a static program's send(): plain and
#                 --seccomp (trapprog). Read from what preload.sh,
#                 seccomp.sh and trap.sh printed in this run ($BUILD/bench/*.txt, which run.sh
#                 keeps); measured here, briefly, only when those are missing.
# BENCH_QUICK=1 shortens the downloads (4 s instead of 8).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
BUILD=${BUILD:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 0
OUT=$BUILD/bench
BIN=$BUILD/itest
RLT=$BUILD/rlthrottle
SECS=8
[ -n "${BENCH_QUICK:-}" ] && SECS=4
mkdir -p "$OUT" || exit 0
command -v gnuplot >/dev/null 2>&1 || { echo "plots: gnuplot not installed (Debian: gnuplot-nox): no pictures"; exit 0; }
. "$(dirname "$0")/common.sh"
bench_setup rlt-bench-plots
# pngcairo draws smoother text and lines; png (libgd) is the fallback
TERM_PNG="pngcairo size 880,480 font 'sans,11'"
echo 'set terminal pngcairo' | gnuplot >/dev/null 2>&1 || TERM_PNG="png size 880,480"

# ----- rate over time -----
# sample DATAFILE SECONDS CMD...: runs CMD, prints "seconds bytes" every 100 ms (DATAFILE's size,
# on a fixed schedule from CMD's start) until CMD ends or SECONDS pass; then stops CMD.
cat >"$T/sample.py" <<'PY'
import os, subprocess, sys, time
data, secs, cmd = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
t0 = time.monotonic()
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("0.000 0", flush=True)
k = 0
while True:
    k += 1
    time.sleep(max(0.0, t0 + k * 0.1 - time.monotonic()))
    t = time.monotonic() - t0
    try:
        n = os.path.getsize(data)
    except OSError:
        n = 0
    print("%.3f %d" % (t, n), flush=True)
    if p.poll() is not None or t >= secs:
        break
if p.poll() is None:
    p.terminate()
    p.wait()
PY
# rates FILE: "seconds MiB/s" between consecutive samples (at the later one)
rates() { awk 'NR > 1 && $1 > t { printf "%.3f %.4f\n", $1, ($2 - b) / ($1 - t) / 1048576 } { t = $1; b = $2 }' "$1"; }
rate_plot() {
	local port i=0
	command -v curl >/dev/null && command -v python3 >/dev/null || { echo "plots: rate.png needs curl and python3"; return 1; }
	[ -x "$RLT" ] || { echo "plots: $RLT not built"; return 1; }
	truncate -s 1G "$T/big" # reads as zeros: the server's disk is not what is measured
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	python3 -m http.server "$port" --bind 127.0.0.1 --directory "$T" >/dev/null 2>&1 &
	PIDS="$PIDS $!"
	while ! curl -s -o /dev/null "http://127.0.0.1:$port/" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	local url="http://127.0.0.1:$port/big" ok=0
	rm -f "$T/ours.bin"
	python3 "$T/sample.py" "$T/ours.bin" "$SECS" "$RLT" -d 1MiB/s -- curl -s -o "$T/ours.bin" "$url" >"$T/ours.samples"
	rates "$T/ours.samples" >"$T/ours.rate"
	[ -s "$T/ours.rate" ] && ok=1
	local tplot=""
	if command -v trickle >/dev/null 2>&1; then
		rm -f "$T/trickle.bin"
		python3 "$T/sample.py" "$T/trickle.bin" "$SECS" trickle -s -d 1024 curl -s -o "$T/trickle.bin" "$url" >"$T/trickle.samples"
		rates "$T/trickle.samples" >"$T/trickle.rate"
		[ -s "$T/trickle.rate" ] && tplot="'$T/trickle.rate' using 1:2 with lines lw 2 lc rgb '#d95f02' title 'trickle -s -d 1024 (KB = 1024 B): mean after 1 s TMEAN MiB/s', "
	else
		echo "plots: trickle not installed: rate.png shows rlthrottle alone"
	fi
	[ $ok = 1 ] || { echo "plots: no samples from the rlthrottle download"; return 1; }
	# the mean after the first second (rlthrottle's burst: one second of the rate)
	local mo mt=""
	mo=$(awk '$1 > 1 { n++; s += $2 } END { if (n) printf "%.3f", s / n }' "$T/ours.rate")
	[ -s "$T/trickle.rate" ] && mt=$(awk '$1 > 1 { n++; s += $2 } END { if (n) printf "%.3f", s / n }' "$T/trickle.rate")
	tplot=${tplot/TMEAN/$mt}
	gnuplot >"$T/gp.err" 2>&1 <<GP || { cat "$T/gp.err"; return 1; }
set terminal $TERM_PNG
set output '$OUT/rate.png'
set title "curl downloading from a local HTTP server, limited to 1 MiB/s\n(received bytes sampled every 100 ms; the rate between samples)"
set xlabel 'time since curl started (s)'
set ylabel 'download rate (MiB/s)'
set xrange [0:$SECS]
set yrange [0:3.5]
set grid
set key below left Left reverse
set label 1 "{/:Bold <}- rlthrottle's burst: 1 MiB (one second of the rate, the default) in the first 0.1 s, off this scale" at 0.12,3.3 left font ',9'
plot '$T/ours.rate' using 1:2 with lines lw 2 lc rgb '#1b9e77' title 'rlthrottle -d 1MiB/s: mean after 1 s $mo MiB/s', \
     ${tplot}1 with lines dt 2 lw 2 lc rgb 'black' title 'target: 1 MiB/s'
GP
	cp "$T/ours.rate" "$OUT/rate-rlthrottle.dat"
	[ -s "$T/trickle.rate" ] && cp "$T/trickle.rate" "$OUT/rate-trickle.dat"
	echo "plots: wrote $OUT/rate.png (data: $OUT/rate-rlthrottle.dat${mt:+, $OUT/rate-trickle.dat})"
}

# ----- overhead -----
# field TEXT COLUMN: the COLUMN-th '|'-separated field of the first line starting with TEXT
# (after the indentation), blanks trimmed
field() { awk -F'|' -v t="$1" -v c="$2" '{ l = $0; sub(/^ +/, "", l) } index(l, t) == 1 { v = $c; gsub(/ /, "", v); print v; exit }' "$3"; }
# after HEADER COL LABEL FILE: in the table after the line containing HEADER, the value in
# whitespace-separated column COL of the row whose label (the line less its last columns) is LABEL
after() {
	awk -v h="$1" -v c="$2" -v lab="$3" '
		index($0, h) { on = 1; next }
		on && /^(==|$)/ { exit }
		on { n = split($0, w, " +"); l = $0; sub(/ +[^ ]+ +[^ ]+ *$/, "", l); sub(/^ +/, "", l)
		     if (l == lab) { print $(NF - 2 + c); exit } }' "$4"
}
num() { case $1 in '' | *[!0-9.]*) return 1 ;; esac; }
overhead_plot() {
	local p0 pl tr p1 sc s0 s1 src=""
	local pre=$OUT/preload.txt sec=$OUT/seccomp.txt trp=$OUT/trap.txt
	if [ -s "$pre" ] && [ -s "$sec" ]; then
		p0=$(field "no library" 3 "$pre"); pl=$(field "rlthrottle, RLT_SEND=16GB/s" 3 "$pre")
		tr=$(field "trickle -s -u 2000000" 3 "$pre")
		p1=$(awk '$1 == "plain" { print $3; exit }' "$sec")
		sc=$(awk '/^--seccomp -u 10GB\/s/ { print $NF; exit }' "$sec")
		src="make bench: preload.sh (e), seccomp.sh, trap.sh"
	fi
	if ! num "${p0:-}" || ! num "${pl:-}" || ! num "${p1:-}" || ! num "${sc:-}"; then
		[ -x "$BIN/callcost" ] || { echo "plots: overhead.png: no bench output and $BIN/callcost not built"; return 1; }
		"$BIN/callcost" -n 40000 >"$T/c0" 2>&1
		env LD_PRELOAD="$BUILD/librlthrottle.so" RLT_SEND=16GB/s "$BIN/callcost" -n 40000 >"$T/c1" 2>&1
		"$RLT" --seccomp -u 10GB/s -- "$BIN/callcost" -n 40000 >"$T/c2" 2>&1
		tr=""; command -v trickle >/dev/null && trickle -s -u 2000000 -d 2000000 "$BIN/callcost" -n 40000 >"$T/c3" 2>&1 && tr=$(kv socket_ns "$T/c3")
		p0=$(kv socket_ns "$T/c0"); pl=$(kv socket_ns "$T/c1"); p1=$p0; sc=$(kv socket_ns "$T/c2")
		src="a short run of plots.sh: no bench output to read"
	fi
	if [ -s "$trp" ]; then
		s0=$(after "1-byte TCP send" 1 plain "$trp"); s1=$(after "1-byte TCP send" 1 --seccomp "$trp")
	fi
	if { ! num "${s0:-}" || ! num "${s1:-}"; } && [ -x "$BIN/trapprog" ]; then
		s0=$(kv send_ns <("$BIN/trapprog" sendcost 20000) 2>/dev/null)
		s1=$(kv send_ns <("$RLT" --seccomp -u 100GiB/s -- "$BIN/trapprog" sendcost 20000) 2>/dev/null)
	fi
	{
		# two runs of the plain program when the figures come from two scripts: each is the
		# baseline of the bars after it (the machine's load moves between them)
		if [ "$p1" != "$p0" ]; then echo "\"plain (preload.sh)\" $p0 1"; else echo "\"plain\" $p0 1"; fi
		echo "\"preloaded\" $pl 2"
		num "${tr:-}" && echo "\"trickle\" $tr 3"
		[ "$p1" != "$p0" ] && echo "\"plain (seccomp.sh)\" $p1 1"
		echo "\"--seccomp\" $sc 4"
	} >"$T/dyn.dat"
	: >"$T/static.dat"
	num "${s0:-}" && num "${s1:-}" && {
		echo "\"plain\" $s0 1"
		echo "\"--seccomp\" $s1 4"
	} >"$T/static.dat"
	local right=""
	[ -s "$T/static.dat" ] && right="
set title \"send() of 1 byte, a static program (trapprog sendcost)\"
set autoscale y
stats '$T/static.dat' using 2 nooutput
set yrange [0:STATS_max * 1.15]
set xrange [-0.6:$(($(wc -l <"$T/static.dat") - 1)).6]
plot '$T/static.dat' using 0:2:3:xtic(1) with boxes lc variable notitle, \\
     '' using 0:2:(sprintf('%.0f', \$2)) with labels offset 0,0.8 notitle"
	gnuplot >"$T/gp.err" 2>&1 <<GP || { cat "$T/gp.err"; return 1; }
set terminal $(echo "$TERM_PNG" | sed 's/880,480/1000,480/') noenhanced
set output '$OUT/overhead.png'
set multiplot layout 1,2 title "Cost of one call on a TCP socket whose rule never binds, ns per call\n(from $src)" font ',12'
set style fill solid 0.85 border -1
set boxwidth 0.7
set grid ytics
set ylabel 'ns per call'
set xtics rotate by -20 font ',9'
set linetype 1 lc rgb '#7f7f7f'
set linetype 2 lc rgb '#1b9e77'
set linetype 3 lc rgb '#d95f02'
set linetype 4 lc rgb '#7570b3'
set linetype 5 lc rgb '#e7298a'
set title "write() of 1 byte, a dynamic program (callcost)"
set autoscale y
stats '$T/dyn.dat' using 2 nooutput
set yrange [0:STATS_max * 1.15]
set xrange [-0.6:$(($(wc -l <"$T/dyn.dat") - 1)).6]
plot '$T/dyn.dat' using 0:2:3:xtic(1) with boxes lc variable notitle, \
     '' using 0:2:(sprintf('%.0f', \$2)) with labels offset 0,0.8 notitle
$right
unset multiplot
GP
	cp "$T/dyn.dat" "$OUT/overhead-dynamic.dat"
	[ -s "$T/static.dat" ] && cp "$T/static.dat" "$OUT/overhead-static.dat"
	echo "plots: wrote $OUT/overhead.png (from $src)"
}

rate_plot || echo "plots: rate.png not drawn"
overhead_plot || echo "plots: overhead.png not drawn"
exit 0
