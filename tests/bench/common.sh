# common.sh: sourced by the bench scripts: a scratch directory removed at the end, the
# background processes the script started (in PIDS) stopped by pid, the check that the helper
# programs are built, and small readers.
# The build's folder (BUILD, default build) and what the scripts run from it: BIN (the test
# helpers), RLT (the launcher), LIB (the preload).
BUILD=$(cd "${BUILD:-build}" && pwd) || exit 1
BIN=$BUILD/itest
RLT=$BUILD/rlthrottle
LIB=$BUILD/librlthrottle.so
unset RLT_CONNECT RLT_ACCEPT RLT_SEND RLT_RECV RLT_CONNS RLT_STATS RLT_LOG RLT_ON_ERROR RLT_INHERIT RLT_NET LD_PRELOAD
PIDS=""
cleanup() {
	local p
	for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done
	sleep 0.1
	for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
# bench_setup NAME: after it, $T is the scratch directory.
bench_setup() {
	T=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
	trap cleanup EXIT
	trap 'exit 143' TERM INT HUP
}
# kv KEY FILE: the value of the last KEY=VALUE word in FILE
kv() { awk -v k="$1" '{ for (i = 1; i <= NF; i++) { n = index($i, "="); if (n && substr($i, 1, n - 1) == k) v = substr($i, n + 1) } } END { print v }' "$2"; }
calc() { awk "BEGIN { printf \"%.6g\", $* }"; }
# bench_need WHO PROG...: each PROG is built under $BIN, or the script WHO ends saying which.
bench_need() {
	local who=$1 b
	shift
	for b in "$@"; do
		[ -x "$BIN/$b" ] || { echo "bench/$who: $BIN/$b not built (make $BIN/$b)"; exit 1; }
	done
}
# median: the middle one of the numbers on stdin (one a line, or several on a line); empty for none.
median() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "" }'; }
# waitfile PATH: wait (10 s at most) until PATH is a non-empty file (a helper's port file).
waitfile() { local i=0; while [ ! -s "$1" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done; }
