#!/bin/bash
# nginx (epoll + accept4, 2 worker processes forked from a master) under RLT_ACCEPT="50/s burst=5",
# hammered by hey without keep-alive for 3 s. Each worker has its own budget (rlthrottle(7) BEHAVIOUR: a forked
# child has its own budgets), so each worker accepts at most ~50/s, and together at least ~50/s.
# The workers must not spin while they wait.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd nginx hey
port=$(free_port)
nginx_conf 2 "$port"
RLT_ACCEPT="50/s burst=5" bg nginx throttled nginx -p "$T/ngx/" -c "$T/ngx/nginx.conf" -e "$T/ngx/logs/error.log"
npid=$LAST_PID
nginx_up "$port"
workers=$(nginx_workers)
info "nginx master $(prog_pid "$npid"), workers: $workers"
nginx_hammer "$port" 16
log=$T/ngx/logs/access.log
# per worker: distinct connections and the time span over which they were accepted
awk '{ if (!($1 SUBSEP $2 in seen)) { seen[$1 SUBSEP $2] = 1; n[$1]++ }
       if (!($1 in lo) || $3 < lo[$1]) lo[$1] = $3; if ($3 > hi[$1]) hi[$1] = $3 }
     END { for (p in n) printf "%s %d %.3f\n", p, n[p], hi[p] - lo[p] }' "$log" >"$T/per_worker"
total=0
while read -r pid cnt span; do
	info "worker $pid: $cnt connections over $span s"
	lim=$(calc "1.3 * (5 + 50 * $span) + 2")
	assert_le "worker $pid connections (one budget of 50/s)" "$lim" "$cnt"
	total=$((total + cnt))
done <"$T/per_worker"
wall=$(calc "($HEY_T1 - $HEY_T0) / 1e9")
assert_ge "connections accepted in total over $wall s" "$(calc "0.7 * 50 * ($wall - 0.5)")" "$total"
assert_le "connections accepted in total (2 workers)" "$(calc "1.3 * 2 * (5 + 50 * $wall)")" "$total"
assert_cpu "nginx workers" "$WORKERS_CPU_NS" $((HEY_T1 - HEY_T0)) 0.5
