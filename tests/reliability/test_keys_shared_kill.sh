#!/bin/bash
# fronts: preload (the churners are preloaded directly; under --seccomp the handler runs the same insert, in the killed process too)
# Issue 11, "a process killed mid-update corrupts no entry": processes churn inserts into one
# small shared keyed table (keys=8: one set, every call a new key); rounds of three are started
# and SIGKILLed a moment after, for 4 s. A kill that lands inside an insert
# leaves the set's lock held by a dead process and a slot half written; the next insert takes
# the lock over and frees the slot (keys_repaired counts it). After the rounds the table still
# decides right: ten fresh keys are each let through once (a lock left held would send them all
# to the one overflow budget of burst 1), a key just used is rejected, by the same process and
# by another one.
# parallel-safe
. "$(dirname "$0")/../integration/lib.sh"
need_lib
need_bin keychurn
name=itest-keykill-$$
trap 'rm -f /dev/shm/rlthrottle.$name; cleanup' EXIT
# The second rule rejects the churners' calls after the keyed one inserted their key (and gives
# its budget back): their time goes to the table, not to the kernel's connect.
export RLT_CONNECT="1/s burst=1 key=peer keys=8 action=reject errno=EDQUOT scope=shared:$name;1/s burst=1 action=reject errno=EDQUOT peer=127.3.0.0/16"
port=$(free_port) # nothing listens: a connect let through ends in ECONNREFUSED at once
# Rounds of three churners, all SIGKILLed a moment after they all churn, for 4 s.
end=$(($(date +%s%N) + 4000000000)) kills=0
for round in $(seq 1 200); do
	[ "$(date +%s%N)" -ge "$end" ] && break
	pids=""
	for i in 1 2 3; do
		# niced: the loop that kills them must get the CPU on time
		nice -n 19 env LD_PRELOAD="$RLT_LIB" "$ITEST_BIN/keychurn" churn "$port" 8 \
			>"$T/churn.$i.out" 2>&1 &
		pids="$pids $!"
	done
	# killed once all three churn (bounded: 2 s), a little later each round
	for w in $(seq 1 200); do
		[ "$(grep -l churning "$T"/churn.[123].out 2>/dev/null | wc -l)" = 3 ] && break
		sleep 0.01
	done
	sleep "0.0$((RANDOM % 5))"
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	kills=$((kills + 3))
	for i in 1 2 3; do
		grep -qv churning "$T/churn.$i.out" && { show "$T/churn.$i.out"; fail "a churner failed"; }
	done
done
info "$kills churners killed in $round rounds"
out=$(RLT_STATS="$T/check.json" timeout 10 env LD_PRELOAD="$RLT_LIB" "$ITEST_BIN/keychurn" check "$port" 1) ||
	fail "check failed: $out"
stats=$(tr -d '\n' <"$T/check.json")
info "check: $out; stats: $stats"
assert_eq "ten fresh keys let through once each, the last one then rejected" \
	"fresh_ok=10 again=rejected" "$out"
assert_eq "another process on that key" rejected \
	"$(timeout 10 env LD_PRELOAD="$RLT_LIB" "$ITEST_BIN/keychurn" one "$port" 127.4.1.10)"
assert_match "the table holds 8 keys" '"keys_tracked":8' "$stats"
# the segment's counts: the churners' too (they spill when a holder is preempted, 2 cores)
count() { echo "$stats" | sed "s/.*\"$1\":\([0-9]*\).*/\1/"; }
info "set locks taken over from killed processes: $(count keys_repaired); calls spilled: $(count keys_spilled)"
