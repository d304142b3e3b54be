#!/bin/bash
# --seccomp leaves files and pipes alone: read() and write() on an fd below the socket band are
# not trapped. Reading a 100 MiB file (128 KiB reads, timed inside the reading program so that
# the launcher's start-up is not counted) under --seccomp with send and receive rules in force
# must not be more than 3x slower than without; the figure is printed, and beside it the whole
# command `cat FILE >/dev/null` (start-up included) and a pipe (cat | wc -c), not gated. The
# gated figure runs on one CPU, best of 5 rounds; the same on any CPU is printed too.
# fronts: seccomp (the filter's test of the fd for files and pipes)
. "$(dirname "$0")/lib.sh"
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$RLTHROTTLE" ] || fail "launcher not built: $RLTHROTTLE"
need_cmd cat wc

head -c $((100 * 1024 * 1024)) /dev/zero >"$T/big"
cat "$T/big" >/dev/null # into the page cache

best() { # best of 3 wall times in ns of "$@"
	local b="" i t0 t1 d
	for i in 1 2 3; do
		t0=$(now_ns)
		"$@" >/dev/null || return 1
		t1=$(now_ns)
		d=$((t1 - t0))
		if [ -z "$b" ] || [ "$d" -lt "$b" ]; then b=$d; fi
	done
	echo "$b"
}

need_bin fileread
reads=$(((100 * 1024 * 1024 + 131071) / 131072))
# Five rounds, each the plain read then the read under --seccomp, so that a stretch when this
# shared machine is slow falls on both; the figure is the best plain time against the best
# time under --seccomp (not the best round's ratio, which would favour a slow plain run).
paired() { # "ratio plain_ns seccomp_ns" of "$@" (a CPU pinning prefix, or nothing)
	local bp="" bq="" i p q
	for i in 1 2 3 4 5; do
		p=$("$@" "$ITEST_BIN/fileread" "$T/big" | sed -n 's/.*elapsed_ns=\([0-9]*\).*/\1/p')
		q=$("$@" "$RLTHROTTLE" --seccomp -d 1MiB/s -u 1MiB/s -- "$ITEST_BIN/fileread" "$T/big" |
			sed -n 's/.*elapsed_ns=\([0-9]*\).*/\1/p')
		[ -n "$p" ] && [ -n "$q" ] || return 1
		if [ -z "$bp" ] || [ "$p" -lt "$bp" ]; then bp=$p; fi
		if [ -z "$bq" ] || [ "$q" -lt "$bq" ]; then bq=$q; fi
	done
	echo "$(calc "$bq / $bp") $bp $bq"
}
PIN="taskset -c $(($(nproc) - 1))"
command -v taskset >/dev/null || PIN=""
set -- $(paired $PIN)
[ $# -eq 3 ] || fail "file read failed"
ratio=$1 rplain=$2 rsec=$3
set -- $(paired)
[ $# -eq 3 ] || fail "file read failed"
uratio=$1 uplain=$2 usec=$3
plain=$(best cat "$T/big") || fail "plain cat failed"
sec=$(best "$RLTHROTTLE" --seccomp -d 1MiB/s -u 1MiB/s -- cat "$T/big") || fail "cat under --seccomp failed"
got=$("$RLTHROTTLE" --seccomp -d 1MiB/s -u 1MiB/s -- cat "$T/big" | wc -c)
assert_eq "bytes read under --seccomp" $((100 * 1024 * 1024)) "$got"
pplain=$(best bash -c "cat '$T/big' | wc -c") || fail "plain pipe read failed"
psec=$(best "$RLTHROTTLE" --seccomp -d 1MiB/s -u 1MiB/s -- bash -c "cat '$T/big' | wc -c") || fail "pipe read under --seccomp failed"
echo "figure: 100 MiB file read (128 KiB reads, timed in the program, ${PIN:-not pinned}, best of 5 rounds each): plain $(calc "$rplain / 1e6") ms, --seccomp $(calc "$rsec / 1e6") ms, ratio $ratio"
echo "figure: the same on any CPU, not gated: plain $(calc "$uplain / 1e6") ms, --seccomp $(calc "$usec / 1e6") ms, ratio $uratio"
echo "figure: cost per read under --seccomp: $(calc "($rsec - $rplain) / $reads / 1e3") us pinned, $(calc "($usec - $uplain) / $reads / 1e3") us on any CPU"
echo "figure: cat FILE >/dev/null (start-up included), not gated: plain $(calc "$plain / 1e6") ms, --seccomp $(calc "$sec / 1e6") ms, ratio $(calc "$sec / $plain")"
echo "figure: 100 MiB through a pipe (cat | wc -c), not gated: plain $(calc "$pplain / 1e6") ms, --seccomp $(calc "$psec / 1e6") ms, ratio $(calc "$psec / $pplain")"
assert_le "slowdown of a file read under --seccomp" 3 "$ratio"
