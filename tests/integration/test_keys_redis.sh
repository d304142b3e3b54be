#!/bin/bash
# fronts: preload seccomp
# matrix-only: seccomp (slow: nginx or a table churned; the preload's run is in make test)
# Issue 11: per-client budgets across processes through Redis. A redis-server this test starts
# on a free loopback port; nginx with 2 workers, each preloaded with RLT_ACCEPT="10/s burst=1
# key=peer scope=redis://127.0.0.1:PORT/NAME"; three clients bound to 127.0.0.2, .3 and .4
# each try 40 connections a second for 3 s (the driver of test_keys_nginx.sh): each is
# admitted at 10/s +-10%, independently, by the two workers together. Redis holds one key per
# client, "rlthrottle:{NAME}:gcra:k:ADDR", with a PTTL, and they go by themselves once idle.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/keys_nginx.sh"
need_lib
need_cmd nginx python3 redis-server redis-cli
rport=$(free_port)
bg redis redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --daemonize no
wait_port "$rport"
name=itest-keys-$$
port=$(free_port)
keys_nginx_conf 2 "$port"
bg nginx env LD_PRELOAD="$RLT_LIB" RLT_STATS="$T/stats.%p.json" \
	RLT_ACCEPT="10/s burst=1 key=peer scope=redis://127.0.0.1:$rport/$name" \
	nginx -p "$T/ngx/" -c "$T/ngx/nginx.conf" -e "$T/ngx/logs/error.log"
npid=$LAST_PID
nginx_up "$port"

keys_clients "$port"

# While the workers still serve the queue: one Redis key per client, and nothing else.
rcli() { redis-cli -p "$rport" "$@" | tr -d '\r'; }
keys=$(rcli --scan --pattern "rlthrottle:{$name}:*" | sort | tr '\n' ' ')
info "redis keys: $keys"
assert_eq "one Redis key per client" \
	"rlthrottle:{$name}:gcra:k:127.0.0.2 rlthrottle:{$name}:gcra:k:127.0.0.3 rlthrottle:{$name}:gcra:k:127.0.0.4 " "$keys"
for a in 127.0.0.2 127.0.0.3 127.0.0.4; do
	pttl=$(rcli pttl "rlthrottle:{$name}:gcra:k:$a")
	info "PTTL of $a: $pttl ms"
	assert_range "the key of $a expires (PTTL, ms)" 1 5000 "$pttl"
done
workers=$(ps -o pid= --ppid "$npid" | tr -d ' ')
kill -TERM "$npid"
wait_pid "$npid" 10 >/dev/null 2>&1 || true
# each worker's RLT_STATS: the keys its lease table tracked, and the busiest
for w in $workers; do
	wait_file "$T/stats.$w.json" 5
	info "worker $w stats: $(tr -d '\n' <"$T/stats.$w.json" | grep -o '"keys":[^]]*]')"
	assert_match "worker $w tracks keys, none evicted" '"keys":4096,"keys_tracked":[1-3],"keys_evicted":0' \
		"$(cat "$T/stats.$w.json")"
done
# Idle now: each key goes a second after its budget is full again (the script's PX).
for i in $(seq 1 60); do
	[ -z "$(rcli --scan --pattern "rlthrottle:{$name}:*")" ] && break
	sleep 0.1
done
left=$(rcli --scan --pattern "rlthrottle:{$name}:*" | tr '\n' ' ')
info "keys left after $((i / 10)).$((i % 10)) s idle: '$left'"
assert_eq "the idle keys expired by themselves" "" "$left"

log=$T/ngx/logs/access.log
[ -s "$log" ] || { show "$T/ngx/logs/error.log"; fail "nginx logged no request"; }
info "workers that admitted: $(awk '{ print $1 }' "$log" | sort | uniq -c | tr '\n' ' ')"
keys_client_rates "its own budget, both workers" 33
calls=$(rcli info commandstats | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p')
info "EVALSHA calls: $calls"
