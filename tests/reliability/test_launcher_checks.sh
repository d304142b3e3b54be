#!/bin/bash
# The launcher checks what the run will check, and honours what the library honours (issue 9,
# "Also"): --check reports a bad RLT_LOG, RLT_INHERIT or RLT_ON_ERROR (status 2, one line naming
# the variable); RLT_ON_ERROR=ignore leaves a bad rule out with a warning (preload and --seccomp)
# instead of exiting 125; RLT_LOG=error silences that warning; --help and --version take no
# value and no other argument (status 125, one line).
# parallel-safe
source "$(dirname "$0")/../integration/lib.sh"
need_lib
L=$(dirname "$RLT_LIB")/rlthrottle

# run NAME CMD...: runs CMD, keeps its status, stdout and stderr in $T/NAME.{rc,out,err}.
run() {
	local name=$1; shift
	timeout 20 "$@" >"$T/$name.out" 2>"$T/$name.err"
	echo $? >"$T/$name.rc"
}
lines() { grep -c . "$1" || true; }

# --check and the settings
for bad in "RLT_LOG=bogus" "RLT_LOG=verbose" "RLT_INHERIT=2" "RLT_ON_ERROR=maybe"; do
	var=${bad%%=*}
	run chk env "$bad" "$L" --check -u 1MiB/s
	assert_eq "--check with $bad: status" 2 "$(cat "$T/chk.rc")"
	assert_eq "--check with $bad: lines on stderr" 1 "$(lines "$T/chk.err")"
	grep -q "^rlthrottle: $var=" "$T/chk.err" || fail "--check with $bad: the line does not name $var: $(cat "$T/chk.err")"
	# the real run agrees
	run real env "$bad" "$L" -- true
	assert_eq "the run with $bad: status" 125 "$(cat "$T/real.rc")"
done
# --seccomp honours it (a later image's handler passes every call)
run chk env RLT_INHERIT=0 "$L" --seccomp --check -u 1MiB/s
assert_eq "--seccomp --check with RLT_INHERIT=0: status" 0 "$(cat "$T/chk.rc")"
run chk env RLT_INHERIT=0 "$L" --check -u 1MiB/s
assert_eq "--check with RLT_INHERIT=0 (preload): status" 0 "$(cat "$T/chk.rc")"

# RLT_ON_ERROR=ignore: the bad rule is left out with one warning, the good one applies, the
# command runs and its status is the launcher's.
for front in "" "--seccomp"; do
	what="RLT_ON_ERROR=ignore ${front:-preload}"
	run ign env RLT_ON_ERROR=ignore RLT_LOG=info RLT_SEND="1000/s; 2MiB/s" "$L" $front -- sh -c 'exit 7'
	assert_eq "$what: status (the command's)" 7 "$(cat "$T/ign.rc")"
	assert_eq "$what: warnings" 1 "$(grep -c 'RLT_SEND="1000/s".*rule ignored' "$T/ign.err")"
	grep -q "RLT_SEND: 2097152B/s" "$T/ign.err" || fail "$what: the good rule is not in force: $(cat "$T/ign.err")"
	grep -q 'rlthrottle\[0\]' "$T/ign.err" && fail "$what: a line says pid 0: $(cat "$T/ign.err")"
	run ign env RLT_ON_ERROR=ignore RLT_LOG=error RLT_SEND="1000/s; 2MiB/s" "$L" $front -- sh -c 'exit 7'
	assert_eq "$what, RLT_LOG=error: status" 7 "$(cat "$T/ign.rc")"
	assert_eq "$what, RLT_LOG=error: lines on stderr" 0 "$(lines "$T/ign.err")"
done
run chk env RLT_ON_ERROR=ignore RLT_SEND="1000/s; 2MiB/s" "$L" --check
assert_eq "--check with RLT_ON_ERROR=ignore and a bad rule: status" 2 "$(cat "$T/chk.rc")"
grep -q 'rule ignored' "$T/chk.err" || fail "--check does not say the rule would be ignored: $(cat "$T/chk.err")"
# in the units it was written in (issue 19)
grep -q "RLT_SEND: 2MiB/s algo=token burst=2MiB " "$T/chk.out" || fail "--check does not print the good rule: $(cat "$T/chk.out")"

# Blanks and empty rules, the same in every variable and in both the launcher and the library
run gap env RLT_LOG=" warn" RLT_SEND=";1MiB/s" LD_PRELOAD="$RLT_LIB" sh -c 'exit 5'
assert_eq "preload: RLT_LOG=\" warn\" RLT_SEND=\";1MiB/s\": status" 5 "$(cat "$T/gap.rc")"
assert_eq "preload: RLT_LOG=\" warn\" RLT_SEND=\";1MiB/s\": stderr" "" "$(cat "$T/gap.err")"
run gap env RLT_LOG="info " RLT_SEND=";1MiB/s;; 2MiB/s ;" "$L" --check
assert_eq "--check of \";1MiB/s;; 2MiB/s ;\": status" 0 "$(cat "$T/gap.rc")"
assert_eq "--check of \";1MiB/s;; 2MiB/s ;\": rules" 2 "$(lines "$T/gap.out")"
run gap env RLT_SEND=" ; " RLT_INHERIT=" 1" "$L" -- sh -c 'exit 4'
assert_eq "RLT_SEND=\" ; \" is unset: status" 4 "$(cat "$T/gap.rc")"
many=$(for i in $(seq 17); do printf '%d/s port=%d;' $i $i; done)
run gap env RLT_CONNECT="$many" "$L" --check
assert_eq "17 rules: status" 2 "$(cat "$T/gap.rc")"
grep -q "at most 16" "$T/gap.err" || fail "17 rules: the error does not give the limit: $(cat "$T/gap.err")"

# --help and --version
for args in "--help=foo" "--version=1" "--version extra" "--help extra" "-V -- true" "-h -u 1MiB/s"; do
	run opt "$L" $args
	assert_eq "rlthrottle $args: status" 125 "$(cat "$T/opt.rc")"
	assert_eq "rlthrottle $args: lines on stderr" 1 "$(lines "$T/opt.err")"
	assert_eq "rlthrottle $args: stdout" "" "$(cat "$T/opt.out")"
done
run opt "$L" --help
assert_eq "rlthrottle --help: status" 0 "$(cat "$T/opt.rc")"
run opt "$L" --version
assert_eq "rlthrottle --version: status" 0 "$(cat "$T/opt.rc")"
grep -q '^rlthrottle [0-9]' "$T/opt.out" || fail "--version prints: $(cat "$T/opt.out")"
exit 0
