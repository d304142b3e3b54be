# Sourced by the test_inject_*.sh tests (issue 21): the injector's driver, the minimal blob and
# the static test program, and a reader for the blob's report lines.
#   injected ARGS...     injectrun -r $T/rep trapblob_min -- ARGS...
#   injected_bg ARGS...  the same in the background (out, err in $T), once its program runs:
#                        LPID is the injector's pid, CPID the program's (both stopped at exit)
#   rep KEY [N]          KEY's value in the N-th report line (1 by default; the blob appends
#                        one line per image that exits)
INJ=$ITEST_BIN/injectrun
BLOB=$ITEST_BIN/trapblob_min
PROG=$ITEST_BIN/trapprog
need_bin injectrun trapblob_min trapprog trapprog_taken
need_cmd busybox
BB=$(command -v busybox)
file -L "$BB" 2>/dev/null | grep -q 'statically linked' || skip "busybox is not static (busybox-static)"
injected() { "$INJ" -r "$T/rep" "$BLOB" -- "$@"; }
injected_bg() {
	local i=0
	"$INJ" -r "$T/rep" "$BLOB" -- "$@" >"$T/out" 2>"$T/err" &
	LPID=$!
	BG_PIDS="$BG_PIDS $LPID"
	CPID=""
	while [ -z "$CPID" ] && [ $i -lt 100 ]; do
		CPID=$(ps -o pid= --ppid "$LPID" 2>/dev/null | tr -d ' ')
		sleep 0.05; i=$((i + 1))
	done
	[ -n "$CPID" ] || fail "the command did not start"
	BG_PIDS="$BG_PIDS $CPID"
}
rep() { sed -n "${2:-1}p" "$T/rep" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$1=//p"; }
