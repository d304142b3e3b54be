#!/bin/sh
# make integration / make reliability: runs every tests/$ITEST_SUITE/test_*.sh (ITEST_SUITE is
# integration by default, or reliability) in sorted order, each under `timeout 120`, with
# RLT_LIB=$BUILD/librlthrottle.so and ITEST_BIN=$BUILD/itest.
# Prints one line per test (PASS/FAIL/SKIP name: reason) and a closing count line; exits non-zero
# if any test failed. A test skips with exit 77 (only for a capability this machine lacks).
# ITEST_FILTER=PATTERN runs only the tests whose name contains PATTERN; ITEST_EXCLUDE=PATTERN
# leaves out those whose name contains it.
# Each test's full output is kept in $BUILD/itest-logs/NAME.log; a failure prints its tail.
set -u
BUILD=${BUILD:-build}
suite=${ITEST_SUITE:-integration}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$BUILD/itest-logs"
BUILD=$(cd "$BUILD" && pwd)
RLT_LIB=$BUILD/librlthrottle.so
ITEST_BIN=$BUILD/itest
export RLT_LIB ITEST_BIN
logs=$BUILD/itest-logs

[ -f "$RLT_LIB" ] || echo "$suite: warning: $RLT_LIB does not exist; every test will fail"

pass=0; fail=0; skipped=0; failed=""
start=$(date +%s)
for t in $(ls "$here"/$suite/test_*.sh 2>/dev/null | LC_ALL=C sort); do
	name=$(basename "$t" .sh)
	if [ -n "${ITEST_FILTER:-}" ]; then
		case $name in *"$ITEST_FILTER"*) ;; *) continue ;; esac
	fi
	if [ -n "${ITEST_EXCLUDE:-}" ]; then
		case $name in *"$ITEST_EXCLUDE"*) continue ;; esac
	fi
	log=$logs/$name.log
	t0=$(date +%s)
	timeout -k 5 120 bash "$t" >"$log" 2>&1 </dev/null
	rc=$?
	secs=$(( $(date +%s) - t0 ))
	case $rc in
	0)
		pass=$((pass + 1))
		echo "PASS $name (${secs}s)"
		;;
	77)
		skipped=$((skipped + 1))
		why=$(grep '^SKIP:' "$log" | tail -n 1 | sed 's/^SKIP: *//')
		echo "SKIP $name: ${why:-no reason given}"
		;;
	*)
		fail=$((fail + 1))
		failed="$failed $name"
		if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
			why="timed out after 120 s"
		else
			why=$(grep '^FAIL:' "$log" | tail -n 1 | sed 's/^FAIL: *//')
			[ -n "$why" ] || why="exit status $rc: $(tail -n 1 "$log")"
		fi
		echo "FAIL $name (${secs}s): $why"
		tail -n 15 "$log" | sed 's/^/    | /'
		;;
	esac
done
echo "$suite: total time $(( $(date +%s) - start ))s; logs in $logs"
[ -n "$failed" ] && echo "failed $suite tests:$failed"
echo "$suite: $pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
