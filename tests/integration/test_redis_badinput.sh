#!/bin/bash
# redis:// scopes that cannot work: a URL without a port and a port out of range are parse
# errors (status 125); an unreachable server (a closed port on 127.0.0.1) gets the fallback at
# once, without hanging, and `rlthrottle --check` says it does not answer.
# fronts: preload seccomp
# parallel-safe: bound, no rate (50 calls with Redis unreachable within 1 s: no hang)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin acceptor conn
LAUNCHER=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$LAUNCHER" ] || fail "launcher not built: $LAUNCHER"
for bad in "redis://127.0.0.1/x:needs a port" "redis://127.0.0.1:70000/x:not in 1..65535" \
           "redis://127.0.0.1:0/x:not in 1..65535" "redis://127.0.0.1:6379:needs a NAME" \
           "redis://127.0.0.1:6379/a/b:must not contain"; do
	scope=${bad%:*}; want=${bad##*:}
	rc=0
	RLT_CONNECT="10/s scope=$scope" throttled /bin/echo RAN >"$T/out" 2>"$T/err" || rc=$?
	assert_eq "$scope: status" 125 "$rc"
	assert_match "$scope: message" "RLT_CONNECT=.*$want" "$(cat "$T/err")"
done
rc=0
RLT_CONNS="5 scope=redis://127.0.0.1:6379/x" throttled /bin/echo RAN >"$T/out" 2>"$T/err" || rc=$?
assert_eq "RLT_CONNS with a redis scope: status" 125 "$rc"
assert_match "RLT_CONNS with a redis scope: message" 'cannot have a redis:// scope' "$(cat "$T/err")"

closed=$(free_port)
start_srv acc acceptor -D 30 -T 40
t0=$(now_ns)
RLT_CONNECT="1000/s errno=EPERM fallback=deny scope=redis://127.0.0.1:$closed/x" throttled \
	"$ITEST_BIN/conn" -p "$SRV_PORT" -n 50 >"$T/deny.out" 2>"$T/deny.err"
t1=$(now_ns)
info "deny: $(cat "$T/deny.out")"
assert_eq "unreachable, fallback=deny: admitted" 0 "$(kv ok "$T/deny.out")"
assert_match "unreachable, fallback=deny: errno" 'errs=EPERM:50' "$(cat "$T/deny.out")"
assert_fast "50 calls with redis unreachable" $((t1 - t0)) 1
RLT_CONNECT="1000/s fallback=allow scope=redis://127.0.0.1:$closed/x" throttled \
	"$ITEST_BIN/conn" -p "$SRV_PORT" -n 50 >"$T/allow.out" 2>"$T/allow.err"
assert_eq "unreachable, fallback=allow: admitted" 50 "$(kv ok "$T/allow.out")"

out=$(RLT_CONNECT="10/s scope=redis://127.0.0.1:$closed/x" "$LAUNCHER" --check) || fail "--check failed"
info "--check: $out"
assert_match "--check says the server does not answer" "redis 127.0.0.1:$closed does not answer" "$out"
if command -v redis-server >/dev/null; then
	rport=$(free_port)
	bg redis redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --daemonize no
	wait_port "$rport"
	out=$(RLT_CONNECT="10/s scope=redis://127.0.0.1:$rport/x" "$LAUNCHER" --check) || fail "--check failed"
	assert_match "--check says the server answers" "redis 127.0.0.1:$rport answers" "$out"
fi
# the log lines
assert_eq "one log line for the outage" 1 "$(grep -c 'does not answer' "$T/deny.err")"
