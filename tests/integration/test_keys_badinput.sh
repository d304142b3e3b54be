#!/bin/bash
# fronts: preload (the loader's own refusals; the launcher's, --seccomp's included, are run here too)
# Issue 11, rlthrottle(7) RULES `key`, `keys`, `action=dry-run`: each bad value ends the process before main
# with status 125 and one line that names the variable and the wrong part; the launcher's own
# run says the same with 125, and --check with 2.
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_lib
LAUNCHER=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$LAUNCHER" ] || fail "launcher not built: $LAUNCHER"

check_bad() { # VAR VALUE PART: PART is what the line must point at
	local var=$1 val=$2 part=$3 rc=0 out err lines
	env LD_PRELOAD="$RLT_LIB" "$var=$val" /bin/echo RAN >"$T/out" 2>"$T/err" || rc=$?
	out=$(cat "$T/out"); err=$(cat "$T/err"); lines=$(wc -l <"$T/err")
	assert_eq "$var=\"$val\": status" 125 "$rc"
	assert_eq "$var=\"$val\": the program did not run" "" "$out"
	assert_eq "$var=\"$val\": lines on stderr" 1 "$lines"
	assert_match "$var=\"$val\": names the variable and quotes the rule" \
		"^rlthrottle: $var=\"$(printf '%s' "$val" | sed 's/[][\.*^$/]/\\&/g')\": " "$err"
	case $err in *"$part"*) ;; *) fail "$var=\"$val\": the line does not point at '$part': $err" ;; esac
	info "$var=\"$val\" -> 125: $err"
	# the launcher checks before anything runs: the same line
	rc=0
	env "$var=$val" "$LAUNCHER" -- /bin/echo RAN >"$T/out" 2>"$T/err" || rc=$?
	assert_eq "launcher $var=\"$val\": status" 125 "$rc"
	assert_eq "launcher $var=\"$val\": the same line" "$err" "$(cat "$T/err")"
	rc=0
	env "$var=$val" "$LAUNCHER" --check >"$T/out" 2>"$T/err" || rc=$?
	assert_eq "--check $var=\"$val\": status" 2 "$rc"
}

check_bad RLT_ACCEPT "10/s key=peer/33" 'key: prefix "/33" is not in 1..32 for IPv4'
check_bad RLT_ACCEPT "10/s key=peer/24,129" 'key: prefix "/129" is not in 1..128 for IPv6'
check_bad RLT_RECV "1MiB/s key=bogus" 'key: unknown "bogus" (peer, peer/P4, peer/P4,P6, port)'
check_bad RLT_SEND "1MiB/s key=peer keys=0" 'keys: "0" is not a count in 1..1048576'
check_bad RLT_SEND "1MiB/s key=peer keys=1048577" 'keys: "1048577" is not a count in 1..1048576'
check_bad RLT_CONNECT "10/s keys=100" 'keys applies only with key='
check_bad RLT_CONNS "2 key=peer/0" 'key: prefix "/0" is not in 1..32 for IPv4'
check_bad RLT_SEND "1MiB/s key=peer scope=connection" 'key does not apply to scope=connection'
check_bad RLT_RECV "1MiB/s action=dryrun" 'action: unknown "dryrun" (delay, reject, dry-run)'

# What this build cannot enforce yet is refused at load, never accepted and ignored: RLT_CONNS
# per key in shared scope.
refused() { # LAUNCHER-ARGS... -- : the variable is in the environment
	local rc=0
	"$LAUNCHER" "$@" /bin/echo RAN >"$T/out" 2>"$T/err" || rc=$?
	assert_eq "$*: status" 125 "$rc"
	assert_eq "$*: the program did not run" "" "$(cat "$T/out")"
	assert_eq "$*: lines on stderr" 1 "$(wc -l <"$T/err")"
	info "refused: $(cat "$T/err")"
}
# and what is built runs under either front: keys on every variable (RLT_CONNS with delay
# too), dry-run on every variable
for front in "" --seccomp; do
	for v in 'RLT_ACCEPT=10/s key=peer' 'RLT_CONNECT=10/s key=port' 'RLT_CONNS=2 key=peer action=delay' \
		'RLT_SEND=1MiB/s key=peer' 'RLT_RECV=1MiB/s key=port' \
		'RLT_RECV=100KiB/s action=dry-run' 'RLT_SEND=100KiB/s action=dry-run' \
		'RLT_CONNS=2 action=dry-run' 'RLT_CONNS=2 key=peer action=dry-run'; do
		out=$(env "$v" "$LAUNCHER" $front -- /bin/echo RAN 2>&1) || fail "$v ${front:-(preload)}: $out"
		assert_eq "$v ${front:-(preload)}: runs" RAN "$out"
	done
done
# shared scope keys RLT_CONNECT and RLT_ACCEPT; a count per key in a segment is not built
RLT_CONNS="2 key=peer action=reject scope=shared:itest-badkeys-$$" refused --
assert_match "shared RLT_CONNS per key says why" \
	'RLT_CONNS with key= is supported in scope=process only by this build \(a count per key in a shared segment is not built yet\)' \
	"$(cat "$T/err")"
[ -e "/dev/shm/rlthrottle.itest-badkeys-$$" ] && fail "a refused rule made its segment"
# and what it can is shown by --check in canonical form
out=$(RLT_ACCEPT="10/s burst=1 key=peer/24" "$LAUNCHER" --check)
assert_eq "--check shows the keyed rule" \
	"RLT_ACCEPT: 10/s algo=token burst=1 action=delay errno=ECONNABORTED scope=process family=inet key=peer/24,64 keys=4096" "$out"
# key= in a redis:// scope is built (test_keys_redis): accepted, shown by --check in canonical
# form (the server need not answer: the fallback is named)
rp=$(free_port)
out=$(RLT_ACCEPT="10/s burst=1 key=peer scope=redis://127.0.0.1:$rp/kb-$$" "$LAUNCHER" --check)
assert_match "--check shows the keyed redis rule" \
	"^RLT_ACCEPT: 10/s algo=token burst=1 action=delay errno=ECONNABORTED scope=redis://127.0.0.1:$rp/kb-$$ fallback=local family=inet key=peer keys=4096 " "$out"
