#!/bin/bash
# Redis is killed in the middle of a run and started again on the same port. With each fallback:
# local keeps about the rate in each process, allow lets every call through, deny rejects with
# the rule's errno. Nothing hangs; one log line when Redis goes, one when it is back, under
# --seccomp too (the handler logs the outage as the preload does: the Redis calls are its own).
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
# rate-alone: Redis is killed and started again mid-run, and the client must see it back before its 4 s end (one outage line, one recovery line each): with another rate run beside it, it once did not
. "$(dirname "$0")/lib.sh"
need_lib
need_bin acceptor conn
need_cmd redis-server
rport=$(free_port)
start_redis() {
	bg redis redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --daemonize no
	rpid=$LAST_PID
	wait_port "$rport"
}
start_srv acc acceptor -D 60 -T 80
for fb in local allow deny; do
	start_redis
	rule="40/s burst=1 errno=EPERM fallback=$fb scope=redis://127.0.0.1:$rport/itest-$$-$fb"
	t0=$(now_ns)
	RLT_CONNECT="$rule" bg "c_$fb" throttled "$ITEST_BIN/conn" -p "$SRV_PORT" -D 4 -t 2
	cpid=$LAST_PID
	sleep 1
	kill -KILL "$rpid"; wait "$rpid" 2>/dev/null
	info "$fb: redis killed at 1 s"
	sleep 1.5
	start_redis
	info "$fb: redis started again at $(calc "($(now_ns) - $t0) / 1e9") s"
	wait_pid "$cpid" 20 || fail "$fb: the client hung"
	t1=$(now_ns)
	out=$(cat "$T/c_$fb.out"); info "$fb: $out"
	ok=$(kv ok "$out"); failed=$(kv fail "$out")
	assert_le "$fb: run time (s)" 6 "$(calc "($t1 - $t0) / 1e9")"
	case $fb in
	local)
		# 4 s at 40/s, the fallback enforcing the same rate alone in the gap
		assert_range "$fb: connections" 120 200 "$ok"
		assert_eq "$fb: failures" 0 "$failed" ;;
	allow)
		# ~1.5 s unthrottled: far more than the 160 the rule would allow
		assert_ge "$fb: connections" 400 "$ok"
		assert_eq "$fb: failures" 0 "$failed" ;;
	deny)
		assert_range "$fb: connections (redis up ~2.5 of 4 s)" 60 140 "$ok"
		assert_ge "$fb: calls rejected while redis was away" 10 "$failed"
		assert_match "$fb: rejected with the rule's errno" 'errs=EPERM:' "$out" ;;
	esac
	kill -KILL "$rpid"; wait "$rpid" 2>/dev/null
done
info "every fallback behaved as written"
# the log lines, one each way
for fb in local allow deny; do
	assert_eq "$fb: outage lines" 1 "$(grep -c 'does not answer' "$T/c_$fb.err")"
	assert_eq "$fb: recovery lines" 1 "$(grep -c 'answers again' "$T/c_$fb.err")"
	assert_match "$fb: the outage line names the fallback" "fallback=$fb until it does" "$(cat "$T/c_$fb.err")"
done
