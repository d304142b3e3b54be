#!/bin/bash
# `rlthrottle top` on an nginx (1 worker forked from a master) under RLT_ACCEPT="20/s", hammered
# by hey without keep-alive: the worker publishes its own page (a fork's child), and top shows
# the rule with an accept rate within 10% of the limit over the last whole seconds.
# fronts: preload (a page per forked worker made by the preload's fork handler)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd nginx hey python3
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
port=$(free_port)
nginx_conf 1 "$port"
bg nginx env LD_PRELOAD="$RLT_LIB" RLT_ACCEPT="20/s" nginx -p "$T/ngx/" -c "$T/ngx/nginx.conf" -e "$T/ngx/logs/error.log"
npid=$LAST_PID
wait_port "$port" 10
sleep 0.3
worker=$(ps -o pid= --ppid "$npid" | tr -d ' ' | head -1)
[ -n "$worker" ] || { show "$T/ngx/logs/error.log"; fail "no nginx worker"; }
info "nginx master $npid, worker $worker"
bg hey hey -z 6s -c 8 -t 20 -disable-keepalive "http://127.0.0.1:$port/"
sleep 4.3
"$RLTHROTTLE" top --once >"$T/once.txt" 2>&1 || { show "$T/once.txt"; fail "top --once failed"; }
show "$T/once.txt"
grep -Eq "^$worker +nginx +ACCEPT +20/s +20 conn/s" "$T/once.txt" || fail "top does not show the worker's RLT_ACCEPT rule and limit"
grep -Eq "^$npid +nginx +ACCEPT" "$T/once.txt" || fail "top does not show the master"
"$RLTHROTTLE" top --json "$worker" >"$T/top.json" || fail "top --json failed"
read -r lim rate <<<"$(python3 - "$T/top.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = [r for p in d["processes"] for r in p["rules"] if r["variable"] == "RLT_ACCEPT"][0]
print(r["limit_units_per_second"], sum(r["history"][-2:]) / 2)
PY
)"
info "worker: limit $lim conn/s, last 2 s $rate conn/s"
assert_eq "limit (conn/s)" 20 "$lim"
assert_range "accept rate over the last 2 whole seconds" 18 22 "$rate"
exit 0
