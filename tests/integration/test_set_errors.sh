#!/bin/bash
# rlthrottle set refuses, with one line on stderr and status 2, and changes nothing: a malformed
# rule (the same line as at start), an unknown pid, a process that is not throttled, a variable
# the process has no rule in, another algorithm, another scope, another user's process (as
# root: set run as nobody). Afterwards the sender still runs at its first rate (within 5%).
# fronts: preload (set on a preloaded process; a set under --seccomp: test_set_rate, test_set_connect)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/set_lib.sh"
need_lib
need_cmd python3
head -c $((1536 * KiB)) /dev/urandom >"$T/f.bin"
RLT_SEND="512KiB/s burst=16KiB" bg srv pre python3 "$P" serve "$T/port" "$T/f.bin"
wait_file "$T/port"
bg cli python3 "$P" fetch "$(cat "$T/port")" "$T/got.bin" "$T/samples"
cli=$LAST_PID
wait_file "$T/samples.first"
pid=$(cat "$T/port.pid")

# refused: NAME EXPECTED-ERE ARGS...
refused() {
	local name=$1 ere=$2 st=0
	shift 2
	"$@" >"$T/out" 2>"$T/err" || st=$?
	assert_eq "$name: status" 2 "$st"
	assert_eq "$name: lines on stderr" 1 "$(wc -l <"$T/err")"
	assert_eq "$name: stdout" "" "$(cat "$T/out")"
	assert_match "$name: why" "$ere" "$(cat "$T/err")"
}

# the same line as at start: compare with what the library says of the rule at load
RLT_SEND="1000/s" pre true 2>"$T/load.err"
refused "malformed rule" "$(sed 's/^rlthrottle\[[0-9]*\]: //; s/[][().*+?^$|]/./g' "$T/load.err" | head -1)" \
	"$RLT" set "$pid" RLT_SEND "1000/s"
true & dead=$!; wait "$dead"
refused "unknown pid" "$dead: no such process" "$RLT" set "$dead" RLT_SEND "1MiB/s"
bg plain sleep 20
refused "a process not throttled" "not a process throttled" "$RLT" set "$LAST_PID" RLT_SEND "1MiB/s"
refused "no such variable" "VAR is one of" "$RLT" set "$pid" RLT_SPEED "1MiB/s"
refused "a variable without a rule" "RLT_RECV: the process has no such rule" \
	"$RLT" set "$pid" RLT_RECV "1MiB/s"
refused "another algorithm" "different algorithm.*different rule, not a new rate" \
	"$RLT" set "$pid" RLT_SEND "1MiB/s algo=leaky"
refused "another scope" "different scope.*different rule" \
	"$RLT" set "$pid" RLT_SEND "1MiB/s scope=connection"
refused "rule #2 of one" "RLT_SEND#2: the process has 1 RLT_SEND rule" \
	"$RLT" set "$pid" "RLT_SEND#2" "1MiB/s"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	refused "another user's process" "another user" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$RLT" set "$pid" RLT_SEND "1MiB/s"
else
	info "another user's process: not checked (needs root and setpriv to act as nobody)"
fi
wait_pid "$cli" 20 || fail "the receiver did not finish"
t0=$(python3 "$P" first "$T/samples")
t1=$(tail -1 "$T/samples" | cut -d' ' -f1)
r=$(python3 "$P" rate $((t0 + 250000000)) "$t1" "$T/samples")
assert_range "rate after the refusals (B/s)" $((512 * KiB * 95 / 100)) $((512 * KiB * 105 / 100)) "$r"
