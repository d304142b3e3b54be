#!/bin/bash
# --seccomp covers a command's threads and child processes (the filter is inherited): a shell
# forks two blast processes, each sending on two connections from two threads. Each process has
# its own budget (rlthrottle(7) BEHAVIOUR; the shell spent nothing of its own before the fork), shared by its
# threads: the two streams of a process together go at the rule's rate, the whole tree at twice
# it (with --per-process; the launcher's one budget for the command, its default, would give
# once: test_command_budget), and every byte arrives intact.
# fronts: seccomp (the filter inherited by a shell's children and their threads)
. "$(dirname "$0")/lib.sh"
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$RLTHROTTLE" ] || fail "launcher not built: $RLTHROTTLE"
need_bin sink blast

start_srv sink sink -n 4
spid=$LAST_PID
n=600000
t0=$(now_ns)
"$RLTHROTTLE" --seccomp --per-process -u 400KiB/s --stats "$T/st.%p.json" -- sh -c \
	"'$ITEST_BIN/blast' -p $SRV_PORT -k 2 -n $n >'$T/b1.out' & '$ITEST_BIN/blast' -p $SRV_PORT -k 2 -n $n >'$T/b2.out'; wait" ||
	fail "the command failed"
t1=$(now_ns)
wait_pid "$spid" 20 || fail "sink did not finish"
show "$T/b1.out" "$T/b2.out" "$T/sink.out" "$T"/st.*.json
assert_eq "bytes received" $((4 * n)) "$(kv bytes "$T/sink.out")"
fnv=$(kv fnv "$T/b1.out")
assert_eq "every connection's stream intact" 4 "$(grep -c "^conn=.*fnv=$fnv" "$T/sink.out")"
# each process's summary in a file of its own (%p): the shell's, and each blast's
units=$(cat "$T"/st.*.json | grep -o '"units":[0-9]*' | cut -d: -f2 | awk '{ s += $1 } END { print s }')
assert_eq "bytes charged (threads and processes, summed over the summaries)" $((4 * n)) "$units"
# each process: 1,200,000 bytes at 400 KiB/s after its 400 KiB burst, 1.93 s, side by side
MIN_SPAN_S=1.5 assert_rate "send rate of the whole tree after the bursts" "$((4 * n - 2 * 409600))" "$((t1 - t0))" $((2 * 409600)) 0.8 1.1
