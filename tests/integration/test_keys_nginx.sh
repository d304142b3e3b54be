#!/bin/bash
# fronts: preload seccomp
# Issue 11: per-client budgets. nginx (one worker) throttled with RLT_ACCEPT="10/s burst=1
# key=peer"; three clients bound to 127.0.0.2, .3 and .4 each try 40 connections a second for
# 3 s: each is admitted at 10/s +-10%, independently of the others (without the key the three
# share one 10/s). The worker's page shows the three keys tracked; its RLT_STATS (preloaded: one
# summary per process) lists them as tracked and busiest. Under --seccomp the summary is the
# command's, whose first process (the master) keys nothing: its keys are not checked there.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/keys_nginx.sh"
need_lib
need_cmd nginx python3
port=$(free_port)
keys_nginx_conf 1 "$port"
RLT_ACCEPT="10/s burst=1 key=peer" RLT_STATS="$T/stats.%p.json" bg nginx throttled \
	nginx -p "$T/ngx/" -c "$T/ngx/nginx.conf" -e "$T/ngx/logs/error.log"
npid=$LAST_PID
nginx_up "$port"
master=$(prog_pid "$npid")
worker=$(ps -o pid= --ppid "$master" | tr -d ' ' | head -1)

keys_clients "$port"
# the live view (rlthrottle(1) COMMANDS): keys tracked and evicted, in top and in the JSON snapshot
LAUNCHER=$(dirname "$RLT_LIB")/rlthrottle
assert_match "top shows the worker's keys" "keys: $worker RLT_ACCEPT rule 1: 3 tracked of 4096, 0 evicted" \
	"$("$LAUNCHER" top --once "$worker")"
json=$("$LAUNCHER" stats "$worker" --format json)
assert_match "stats --format json shows them" '"keys":4096,"keys_tracked":3,"keys_evicted":0' "$json"
# the busiest keys (the page's, refreshed every 5 ms while calls come)
prom=$("$LAUNCHER" stats "$worker" --format prometheus)
for a in 127.0.0.2 127.0.0.3 127.0.0.4; do
	assert_match "stats json: $a among the busiest" "{\"key\":\"$a\",\"units\":[1-9]" "$json"
	assert_match "prometheus: $a's units" \
		"rlthrottle_key_units_total{pid=\"$worker\",comm=\"nginx\",var=\"RLT_ACCEPT\",rule=\"10/s burst=1 key=peer\",action=\"delay\",key=\"$a\"} [1-9]" "$prom"
done
if command -v promtool >/dev/null; then
	chk=$(promtool check metrics <<<"$prom" 2>&1) || fail "promtool check metrics: $chk"
fi
assert_match "top names the busiest" "keys: $worker RLT_ACCEPT rule 1: 3 tracked of 4096, 0 evicted; busiest 127.0.0." \
	"$("$LAUNCHER" top --once "$worker")"
kill -TERM "$npid"
wait_pid "$npid" 10 >/dev/null 2>&1 || true
keys_client_rates "its own budget"
[ "$(front)" = seccomp ] && exit 0
stats=$T/stats.$worker.json
wait_file "$stats" 5 || { ls "$T"; fail "the worker wrote no RLT_STATS"; }
info "stats: $(tr -d '\n' <"$stats")"
assert_match "three keys tracked" '"keys":4096,"keys_tracked":3,"keys_evicted":0' "$(cat "$stats")"
for a in 127.0.0.2 127.0.0.3 127.0.0.4; do
	assert_match "busiest keys list $a" "\"key\":\"$a\",\"units\":" "$(cat "$stats")"
done
