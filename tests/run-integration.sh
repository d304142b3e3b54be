#!/bin/sh
# make integration / make reliability: runs every tests/$ITEST_SUITE/test_*.sh (ITEST_SUITE is
# integration by default, or reliability) in sorted order, each under `timeout 120`, with
# RLT_LIB=$BUILD/librlthrottle.so and ITEST_BIN=$BUILD/itest.
#
# The front matrix: a test declares the fronts it runs under in a comment line
#   # fronts: preload seccomp
#   # fronts: preload (why not seccomp: ...)      one front only: the reason is required
# and is run once per front: unset UNDER_SECCOMP for preload, UNDER_SECCOMP=1 for seccomp (the
# `throttled` helper of lib.sh picks the front from it), reported as NAME[preload] and
# NAME[seccomp]. A line `# xfail-seccomp: REASON` marks the seccomp run as a known drift between
# the fronts: its failure is reported as XFAIL (not a pass), and its success as XPASS, which
# fails the suite so that the mark cannot outlive the drift. With `# xfail-seccomp-on: ERE` the
# failure is XFAIL only if its FAIL: line matches ERE (the known drift, not another failure);
# a test puts its drifting check last, so that everything before it is still checked. In the
# integration suite every test must declare its fronts; a reliability test without the line runs
# once, as NAME.
#
# The budget: `make integration` (part of `make test`) leaves out the runs a test marks
# `# matrix-only: seccomp (why)` (a slow test whose other front is run already); `make matrix`
# (ITEST_MATRIX=1) runs every declared run, the whole matrix; `make matrix-rest`
# (ITEST_MATRIX=rest) only the runs `make integration` leaves out (CI, after make test).
#
# Runs at once: a test that measures no rate says so in a line `# parallel-safe: WHY`. It asserts
# counts, statuses, bytes or output ("counts only"), or at most a generous bound on a time that is
# no rate ("bound, no rate": a deadline held, a wait ended by its signal, timeout or close, a call
# refused at once rather than after a delay), several times what a quiet machine takes, or only
# that a paced transfer takes at least the time its rate allows ("floor": load only lengthens
# it): load beside it cannot break it (each is checked passing three times beside two busy
# loops). WHY says which, and what is bounded; a bare `# parallel-safe` is "counts only". The
# other runs are the rate tests: they assert a rate, or how long at most a paced transfer takes
# (or both ways). They go first (they are the long path), ITEST_RATE_JOBS at a time (2 by
# default: a paced test spends its time asleep in the throttle, and its bounds are those of a
# rate, 0.7-1.3 or so, which a neighbour that mostly sleeps too does not move;
# ITEST_RATE_JOBS=1 runs them one at a time); parallel-safe runs fill
# the other places, ITEST_JOBS runs at a time in all (3 by default: two rate runs and one
# parallel-safe run, or more of those when the rate runs are done; ITEST_JOBS=1 runs everything
# one after another). A rate test whose pass hangs on another process answering in time (a
# Redis restarted mid-run) says so in a line `# rate-alone: WHY`: no other rate run goes beside
# it (parallel-safe runs still do, as when the rate runs went one at a time); such runs go
# before the other rate runs. Each kind goes longest first, by the times of the last run.
# ITEST_RATE_ALONE=1 runs each rate run with nothing of ours beside it. A parallel-safe test keeps
# to what is its own: its temporary directory ($T), ports found free, shared-scope names with its
# pid in them.
# ITEST_SUITE may name both suites ("integration reliability": one queue, as make test runs
# them); ITEST_STAGES names make targets run as parallel-safe runs beside them, and
# ITEST_RATE_STAGES make targets run as rate runs (make test's other stages: labels such as
# make:unit, logs in stage.TARGET.log).
#
# Prints one line per run as it ends (PASS/FAIL/SKIP/XFAIL/XPASS label (seconds): reason; a
# failure also prints the tail of its log, whole in its file) and a closing count line, then the
# ten slowest runs (every run's time, slowest first, in $BUILD/itest-logs/SUITE.times); exits
# non-zero if any run failed or passed unexpectedly. A test skips with exit 77 (only for a
# capability this machine lacks).
# ITEST_FILTER=PATTERN runs only the runs whose label (NAME[front]) contains PATTERN;
# ITEST_EXCLUDE=PATTERN leaves out those whose label contains it; ITEST_FRONTS="seccomp" (or
# "preload") runs only that front's runs of the declared ones.
# Each run's full output is kept in $BUILD/itest-logs/NAME.FRONT.log (NAME.log without a front);
# a failure prints its tail.
set -u
BUILD=${BUILD:-build}
# (as given, for the make stages: BUILD=build/clang stays the directory make knows by that name)
make_build=$BUILD
suites=${ITEST_SUITE:-integration}
# the name of this run in its closing lines: integration, reliability, or both joined by +
suite=$(echo $suites | tr ' ' '+')
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$BUILD/itest-logs"
BUILD=$(cd "$BUILD" && pwd)
RLT_LIB=$BUILD/librlthrottle.so
ITEST_BIN=$BUILD/itest
export RLT_LIB ITEST_BIN
logs=$BUILD/itest-logs
want_fronts=${ITEST_FRONTS:-preload seccomp}

[ -f "$RLT_LIB" ] || echo "$suite: warning: $RLT_LIB does not exist; every test will fail"

pass=0; fail=0; skipped=0; xfailed=0; failed=""; xfails=""; deferred=0
# the queues of runs, their results as they end, and the times of each
work=$(mktemp -d "$logs/.run.XXXXXX")
stop_runs() { for p in "$work"/*.pid; do [ -f "$p" ] && kill -TERM "$(cat "$p")" 2>/dev/null; done; }
trap 'rm -rf "$work"' EXIT
trap 'stop_runs; wait; exit 130' INT TERM

# record LABEL OUTCOME SECS LOG [XFAIL_REASON [XFAIL_ERE]]: print and count one run's result.
record() {
	label=$1 outcome=$2 secs=$3 log=$4 xreason=${5:-} xon=${6:-}
	case $outcome in
	pass)
		if [ -n "$xreason" ]; then
			fail=$((fail + 1)); failed="$failed $label"
			echo "XPASS $label (${secs}s): passed though marked xfail-seccomp ($xreason): the drift is gone, remove the mark"
		else
			pass=$((pass + 1))
			echo "PASS $label (${secs}s)"
		fi
		;;
	skip)
		skipped=$((skipped + 1))
		why=$(grep '^SKIP:' "$log" | tail -n 1 | sed 's/^SKIP: *//')
		echo "SKIP $label: ${why:-no reason given}"
		;;
	*)
		why=$outcome
		if [ -n "$xreason" ] && [ -n "$xon" ] && ! printf '%s\n' "$why" | grep -Eq -- "$xon"; then
			why="$why (not the known drift /$xon/ of its xfail-seccomp mark)"
			xreason=""
		fi
		if [ -n "$xreason" ]; then
			xfailed=$((xfailed + 1)); xfails="$xfails $label"
			echo "XFAIL $label (${secs}s): $why [known drift: $xreason]"
		else
			fail=$((fail + 1)); failed="$failed $label"
			echo "FAIL $label (${secs}s): $why"
			# a stage's log whole (less cmocka's line per passing test), a test's last lines
			case $label in
			make:*) grep -Ev '^\[ +(RUN|OK) +\]' "$log" | sed 's/^/    | /' ;;
			*) tail -n 15 "$log" | sed 's/^/    | /' ;;
			esac
		fi
		;;
	esac
}

# run_one T LABEL LOG FRONT XFAIL_REASON XFAIL_ERE: queue one run, among the parallel-safe ones
# if its test is marked so ($t_par), else among the rate runs (and its label in $work/alone if
# its test is marked rate-alone, $t_alone). FRONT "make" is a make target T.
run_one() {
	if [ -n "$t_par" ]; then q=$work/safe; else q=$work/rate; fi
	[ -z "$t_par" ] && [ -n "${t_alone:-}" ] && printf '%s\n' "$2" >>"$work/alone"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" >>"$q"
}

# exec_run T LOG FRONT RCFILE: run one test, its output into LOG, and leave "STATUS SECONDS" in
# RCFILE once it has ended (written whole: the runner polls for that file). The command runs in
# the background and is waited for, so that an interrupted runner can stop it by its pid.
exec_run() {
	t=$1 log=$2 front=$3
	t0=$(date +%s)
	if [ "$front" = make ]; then
		timeout -k 5 600 ${MAKE:-make} -s --no-print-directory BUILD="$make_build" "$t" >"$log" 2>&1 </dev/null &
	elif [ "$front" = seccomp ]; then
		UNDER_SECCOMP=1 timeout -k 5 120 bash "$t" >"$log" 2>&1 </dev/null &
	else
		env -u UNDER_SECCOMP timeout -k 5 120 bash "$t" >"$log" 2>&1 </dev/null &
	fi
	echo $! >"$4.pid"
	wait $!
	rc=$?
	rm -f "$4.pid"
	echo "$rc $(( $(date +%s) - t0 ))" >"$4.tmp"
	mv "$4.tmp" "$4"
}

# finish ID: count and print the result of run ID, which has ended.
finish() {
	IFS=$tab read -r t label log front xr xo <"$work/$1.run"
	read -r rc secs <"$work/$1.rc"
	echo "$secs $label" >>"$work/times"
	case $rc in
	0) record "$label" pass "$secs" "$log" "$xr" "$xo" ;;
	77) record "$label" skip "$secs" "$log" ;;
	124 | 137) record "$label" "timed out after $secs s" "$secs" "$log" "$xr" "$xo" ;;
	*)
		why=$(grep '^FAIL:' "$log" | tail -n 1 | sed 's/^FAIL: *//')
		[ -n "$why" ] || why="exit status $rc: $(tail -n 1 "$log")"
		record "$label" "$why" "$secs" "$log" "$xr" "$xo"
		;;
	esac
}

# launch ID QUEUE N: start the Nth run of QUEUE (rate or safe) as run ID.
launch() {
	sed -n "$3p" "$work/$2" >"$work/$1.run"
	IFS=$tab read -r t label log front xr xo <"$work/$1.run"
	exec_run "$t" "$log" "$front" "$work/$1.rc" &
}

# run_all: every queued run, a rate run at a time, up to ITEST_JOBS runs at once; each result is
# printed as its run ends. (Polled: sh has no `wait -n`, and a pipe from a test would also wait
# for whatever the test left running.)
tab=$(printf '\t')
run_all() {
	jobs=${ITEST_JOBS:-3} alone=${ITEST_RATE_ALONE:-} rjobs=${ITEST_RATE_JOBS:-2}
	nr=$(cat "$work/rate" 2>/dev/null | wc -l) ns=$(cat "$work/safe" 2>/dev/null | wc -l)
	ir=0 is=0 id=0 running="" rates="" arun=""
	while [ "$ir" -lt "$nr" ] || [ "$is" -lt "$ns" ] || [ -n "$running" ]; do
		still="" busy=0 rbusy=0
		for r in $running; do
			if [ -f "$work/$r.rc" ]; then
				finish "$r"
				[ "$r" = "$arun" ] && arun=""
			else
				still="$still $r"; busy=$((busy + 1))
				case " $rates " in *" $r "*) rbusy=$((rbusy + 1)) ;; esac
			fi
		done
		running=$still
		# the next rate run, and whether it goes with no other rate run beside it (rate-alone)
		nalone=""
		if [ "$ir" -lt "$nr" ] && [ -s "$work/alone" ]; then
			nlabel=$(sed -n "$((ir + 1))p" "$work/rate" | cut -f 2)
			grep -Fxq -- "$nlabel" "$work/alone" && nalone=1
		fi
		if [ "$ir" -lt "$nr" ] && [ "$rbusy" -lt "$rjobs" ] && [ "$busy" -lt "$jobs" ] &&
			[ -z "$arun" ] && { [ -z "$nalone" ] || [ "$rbusy" -eq 0 ]; } &&
			{ [ -z "$alone" ] || [ "$busy" -eq 0 ]; }; then
			ir=$((ir + 1)) id=$((id + 1)) rates="$rates $id"
			[ -n "$nalone" ] && arun=$id
			launch "$id" rate "$ir"
		elif [ "$is" -lt "$ns" ] && [ "$busy" -lt "$jobs" ] &&
			{ [ -z "$alone" ] || { [ "$ir" -ge "$nr" ] && [ "$rbusy" -eq 0 ]; }; }; then
			is=$((is + 1)) id=$((id + 1))
			launch "$id" safe "$is"
		else
			sleep 0.1
			continue
		fi
		running="$running $id"
	done
	wait
}

selected() {
	if [ -n "${ITEST_FILTER:-}" ]; then
		case $1 in *"$ITEST_FILTER"*) ;; *) return 1 ;; esac
	fi
	if [ -n "${ITEST_EXCLUDE:-}" ]; then
		case $1 in *"$ITEST_EXCLUDE"*) return 1 ;; esac
	fi
	return 0
}

start=$(date +%s)
for st in ${ITEST_STAGES:-} ${ITEST_RATE_STAGES:-}; do
	t_par="" t_alone=""
	case " ${ITEST_STAGES:-} " in *" $st "*) t_par=1 ;; esac
	selected "make:$st" && run_one "$st" "make:$st" "$logs/stage.$st.log" make "" ""
done
for tf in $(for s in $suites; do ls "$here"/$s/test_*.sh 2>/dev/null; done | LC_ALL=C sort); do
	name=$(basename "$tf" .sh)
	# (a test none of whose runs is selected is not read)
	selected "$name" || selected "$name[preload]" || selected "$name[seccomp]" || continue
	decl=$(grep -m 1 '^# fronts:' "$tf" | sed 's/^# fronts: *//')
	t_par=$(grep -m 1 '^# parallel-safe' "$tf")
	t_alone=$(grep -m 1 '^# rate-alone' "$tf")
	# (sh has no local variables: these two are the test's, apart from run_one's and record's)
	t_xreason=$(grep -m 1 '^# xfail-seccomp:' "$tf" | sed 's/^# xfail-seccomp: *//')
	t_xon=$(grep -m 1 '^# xfail-seccomp-on:' "$tf" | sed 's/^# xfail-seccomp-on: *//')
	t_only=$(grep -m 1 '^# matrix-only:' "$tf" | sed 's/^# matrix-only: *//; s/(.*//')
	if [ -z "$decl" ]; then
		selected "$name" || continue
		log=$logs/$name.log
		if [ "$tf" != "${tf#"$here"/integration/}" ]; then
			echo "no '# fronts:' line" >"$log"
			record "$name" "declares no fronts: add '# fronts: preload seccomp' (or one front and why)" 0 "$log"
		else
			run_one "$tf" "$name" "$log" default "" ""
		fi
		continue
	fi
	# the fronts are the words before the reason, which starts at a parenthesis
	fronts=$(printf '%s\n' "$decl" | sed 's/(.*//')
	bad=""
	for f in $fronts; do
		case $f in preload | seccomp) ;; *) bad="unknown front '$f'" ;; esac
	done
	set -- $fronts
	[ $# -eq 1 ] && ! printf '%s\n' "$decl" | grep -q '(.*[a-z]' && bad="one front and no reason why"
	[ $# -eq 0 ] && bad="no front named"
	if [ -n "$bad" ]; then
		selected "$name" || continue
		echo "# fronts: $decl" >"$logs/$name.log"
		record "$name" "bad '# fronts:' line: $bad" 0 "$logs/$name.log"
		continue
	fi
	for f in $fronts; do
		case " $want_fronts " in *" $f "*) ;; *) continue ;; esac
		selected "$name[$f]" || continue
		if [ -z "${ITEST_MATRIX:-}" ]; then
			case " $t_only " in *" $f "*) deferred=$((deferred + 1)); continue ;; esac
		elif [ "$ITEST_MATRIX" = rest ]; then
			case " $t_only " in *" $f "*) ;; *) continue ;; esac
		fi
		x=""
		[ "$f" = seccomp ] && x=$t_xreason
		run_one "$tf" "$name[$f]" "$logs/$name.$f.log" "$f" "$x" "$t_xon"
	done
done
# the longest runs first, by the times of the last run (a run not in them first of all): the
# queue then ends with short runs, which fill the places the long ones leave
if [ -s "$logs/$suite.times" ]; then
	for q in rate safe; do
		[ -s "$work/$q" ] || continue
		awk -F '\t' 'NR == FNR { split($0, f, " "); t[f[2]] = f[1]; next }
			{ printf "%d\t%d\t%s\n", ($2 in t) ? t[$2] : 100000, FNR, $0 }' \
			"$logs/$suite.times" "$work/$q" | sort -t "$tab" -k1,1nr -k2,2n | cut -f 3- >"$work/$q.sorted"
		mv "$work/$q.sorted" "$work/$q"
	done
fi
# the rate-alone runs before every other rate run: one started later waits for the rate runs
# beside it to end, and their place stands empty meanwhile (about 7 s of make test's rate path)
if [ -s "$work/alone" ] && [ -s "$work/rate" ]; then
	awk -F '\t' 'NR == FNR { a[$0] = 1; next } ($2 in a) { print; next } { rest[++n] = $0 }
		END { for (i = 1; i <= n; i++) print rest[i] }' "$work/alone" "$work/rate" >"$work/rate.sorted"
	mv "$work/rate.sorted" "$work/rate"
fi
run_all
echo "$suite: total time $(( $(date +%s) - start ))s; logs in $logs"
if [ -s "$work/times" ]; then
	# this run's times, and the last ones of runs it left out (a filtered run forgets no time)
	touch "$logs/$suite.times"
	awk 'NR == FNR { t[$2] = $1; next } !($2 in t) { t[$2] = $1 } END { for (l in t) print t[l], l }' \
		"$work/times" "$logs/$suite.times" 2>/dev/null | sort -k1,1nr -k2 >"$work/times.all"
	mv "$work/times.all" "$logs/$suite.times"
	echo "$suite: the slowest runs (all in $logs/$suite.times):"
	sort -k1,1nr "$work/times" | head -n 10 | awk '{ printf "%6ds %s\n", $1, $2 }'
fi
[ -n "$failed" ] && echo "failed $suite tests:$failed"
[ -n "$xfails" ] && echo "known drifts (xfail-seccomp):$xfails"
echo "$suite: $pass passed, $fail failed, $xfailed xfailed, $skipped skipped"
[ "$deferred" -eq 0 ] || echo "$suite: $deferred runs marked matrix-only left to make matrix"
[ "$fail" -eq 0 ]
