#!/bin/bash
# redis://USER:PASSWORD@HOST:PORT/NAME: a redis-server with requirepass and an ACL user (both
# started here). Two processes share one budget through it, with the default user's password
# and with the ACL user's; a wrong password is an outage (the fallback applies) whose log line
# does not hold the password; no log line, RLT_STATS, `--check` output or error shows it.
# rate-alone: Redis is restarted mid-run and the client must see it back with one outage line: with another rate run beside it, a slow first reply once made a second one
source "$(dirname "$0")/../integration/lib.sh"
need_lib
need_bin acceptor conn
need_cmd redis-server redis-cli
LAUNCHER=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$LAUNCHER" ] || fail "launcher not built: $LAUNCHER"
pw="Pa:ss@w/rd;%x$$"        # as Redis knows it
pw_url="Pa:ss@w/rd%3B%25x$$" # as a rule writes it: ';' and '%' escaped
apw="Ap9-$$-pw"
rport=$(free_port)
start_redis() {
	bg redis redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no --requirepass "$pw" --user app on ">$apw" '~*' '+@all'
	rpid=$LAST_PID
	wait_port "$rport"
}
start_redis
redis-cli -p "$rport" --no-auth-warning -a "$pw" ping | grep -q PONG || fail "redis with requirepass does not answer"
start_srv acc acceptor -D 30 -T 40
no_secret() { # WHAT FILE...
	local what=$1; shift
	if cat "$@" | grep -F -e "$pw" -e "Pa:ss" -e "$pw_url" -e "$apw" >/dev/null; then
		fail "$what shows a password: $(cat "$@" | grep -F -e "Pa:ss" -e "$apw" | head -3)"
	fi
	info "$what: no password (ok)"
}

for who in default acl; do
	if [ $who = default ]; then url="redis://:$pw_url@127.0.0.1:$rport/itest-$$-$who"
	else url="redis://app:$apw@127.0.0.1:$rport/itest-$$-$who"; fi
	rule="20/s burst=1 scope=$url fallback=allow"
	t0=$(now_ns)
	for i in 1 2; do
		bg "${who}_$i" env LD_PRELOAD="$RLT_LIB" RLT_LOG=debug RLT_STATS="$T/${who}_$i.json" \
			RLT_CONNECT="$rule" "$ITEST_BIN/conn" -p "$SRV_PORT" -D 2
		eval "p$i=\$LAST_PID"
	done
	for i in 1 2; do
		rc=0
		eval "wait_pid \$p$i 20" || rc=$?
		[ $rc -eq 124 ] && fail "$who: client $i hung"
		[ $rc -eq 0 ] || fail "$who: client $i exited $rc: $(head -c 300 "$T/${who}_$i.err")"
	done
	t1=$(now_ns)
	ok=$(( $(kv ok "$T/${who}_1.out") + $(kv ok "$T/${who}_2.out") ))
	info "$who: $(cat "$T/${who}_1.out") / $(cat "$T/${who}_2.out")"
	assert_eq "$who: outage lines" 0 "$(cat "$T/${who}_1.err" "$T/${who}_2.err" | grep -c 'does not answer')"
	# one budget of 20/s for both (fallback=allow would let each run unthrottled)
	MIN_SPAN_S=1.5 assert_rate "$who: 2 processes under one budget" "$ok" $((t1 - t0)) 20 0.6 1.4
	keys=$(redis-cli -p "$rport" --no-auth-warning -a "$pw" --scan --pattern "rlthrottle:{itest-$$-$who}*" | wc -l)
	assert_ge "$who: keys in redis" 1 "$keys"
	assert_match "$who: stats name the masked URL" ':\*\*\*@127\.0\.0\.1' "$(cat "$T/${who}_1.json")"
	no_secret "$who: logs and stats" "$T/${who}_1.err" "$T/${who}_2.err" "$T/${who}_1.json" "$T/${who}_2.json"
done

# Redis restarted: the reconnect authenticates again (the ACL user's rule, fallback=deny)
bg again env LD_PRELOAD="$RLT_LIB" \
	RLT_CONNECT="20/s burst=1 errno=EPERM fallback=deny scope=redis://app:$apw@127.0.0.1:$rport/itest-$$-r" \
	"$ITEST_BIN/conn" -p "$SRV_PORT" -D 3
cpid=$LAST_PID
sleep 1
kill -KILL "$rpid"; wait "$rpid" 2>/dev/null
sleep 0.5
start_redis
wait_pid "$cpid" 20 || fail "restart: the client did not finish well: $(cat "$T/again.err")"
info "restart: $(cat "$T/again.out"); $(cat "$T/again.err")"
assert_eq "restart: outage lines" 1 "$(grep -c 'does not answer' "$T/again.err")"
assert_eq "restart: recovery lines" 1 "$(grep -c 'answers again' "$T/again.err")"
calls=$(redis-cli -p "$rport" --no-auth-warning -a "$pw" info commandstats |
	sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p' | tr -d '\r')
assert_ge "restart: leases from the new server" 5 "${calls:-0}"
no_secret "restart: log" "$T/again.err"

# a wrong password: an outage, the fallback applies, the line says why without the password
rule="1000/s errno=EPERM fallback=deny scope=redis://app:Pa:ss-wrong@127.0.0.1:$rport/itest-$$-w"
RLT_CONNECT="$rule" RLT_STATS="$T/wrong.json" pre "$ITEST_BIN/conn" -p "$SRV_PORT" -n 20 \
	>"$T/wrong.out" 2>"$T/wrong.err"
info "wrong password: $(cat "$T/wrong.out"); $(cat "$T/wrong.err")"
assert_match "wrong password: every call gets fallback=deny" 'errs=EPERM:20' "$(cat "$T/wrong.out")"
assert_match "wrong password: the outage line says why" 'does not answer \(AUTH refused: WRONGPASS' "$(cat "$T/wrong.err")"
no_secret "wrong password: log and stats" "$T/wrong.err" "$T/wrong.json"

# --check: the server answers with the right password, not with a wrong one; neither is shown
out=$(RLT_CONNECT="10/s scope=redis://app:$apw@127.0.0.1:$rport/x" "$LAUNCHER" --check 2>&1) ||
	fail "--check failed: $out"
printf '%s\n' "$out" >"$T/check1"
info "--check: $out"
assert_match "--check: the server answers after AUTH" "redis 127.0.0.1:$rport answers" "$out"
assert_match "--check: the URL is masked" 'scope=redis://app:\*\*\*@127' "$out"
out=$(RLT_CONNECT="10/s scope=redis://:Pa:ss-wrong@127.0.0.1:$rport/x" "$LAUNCHER" --check 2>&1) ||
	fail "--check failed: $out"
printf '%s\n' "$out" >"$T/check2"
info "--check: $out"
assert_match "--check: a wrong password does not answer" "does not answer \(AUTH refused" "$out"
# a bad rule quotes itself masked
rc=0
RLT_CONNECT="10/s scope=redis://app:$apw@127.0.0.1:$rport/x burst=oops" "$LAUNCHER" --check >"$T/check3" 2>&1 || rc=$?
assert_eq "--check of a bad rule: status" 2 "$rc"
info "--check of a bad rule: $(cat "$T/check3")"
grep -q "Pa:ss-wrong" "$T/check2" && fail "--check shows the wrong password"
no_secret "--check" "$T/check1" "$T/check2" "$T/check3"
