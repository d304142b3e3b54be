# common.sh: sourced by the bench scripts: a scratch directory removed at the end, the
# background processes the script started (in PIDS) stopped by pid, and small readers.
# bench_setup NAME: after it, $T is the scratch directory.
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
bench_setup() {
	T=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
	trap cleanup EXIT
	trap 'exit 143' TERM INT HUP
}
# kv KEY FILE: the value of the last KEY=VALUE word in FILE
kv() { awk -v k="$1" '{ for (i = 1; i <= NF; i++) { n = index($i, "="); if (n && substr($i, 1, n - 1) == k) v = substr($i, n + 1) } } END { print v }' "$2"; }
calc() { awk "BEGIN { printf \"%.6g\", $* }"; }
