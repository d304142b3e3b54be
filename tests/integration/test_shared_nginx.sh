#!/bin/bash
# nginx with 4 worker processes under one shared RLT_ACCEPT budget (scope=shared:NAME), hammered
# by hey without keep-alive: the workers together accept about 50/s (each alone would take 50/s:
# compare test_accept_nginx.sh), and they do not spin while they wait.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd nginx hey
name=itest-ngx-$$
trap 'rm -f /dev/shm/rlthrottle.$name; cleanup' EXIT
port=$(free_port)
nginx_conf 4 "$port"
RLT_ACCEPT="50/s burst=5 scope=shared:$name" bg nginx throttled nginx -p "$T/ngx/" -c "$T/ngx/nginx.conf" -e "$T/ngx/logs/error.log"
npid=$LAST_PID
nginx_up "$port"
[ -e "/dev/shm/rlthrottle.$name" ] || fail "no segment /dev/shm/rlthrottle.$name"
workers=$(nginx_workers)
info "nginx master $(prog_pid "$npid"), workers: $workers"
nginx_hammer "$port" 32
log=$T/ngx/logs/access.log
nw=$(awk '{ print $1 }' "$log" | sort -u | wc -l)
total=$(awk '{ print $1, $2 }' "$log" | sort -u | wc -l)
info "$nw workers served $total connections"
wall=$(calc "($HEY_T1 - $HEY_T0) / 1e9")
assert_ge "connections accepted in total over $wall s" "$(calc "0.7 * 50 * ($wall - 0.5)")" "$total"
# one budget for all four workers: what one worker alone may take, not four times it
assert_le "connections accepted in total (one shared budget of 50/s)" "$(calc "1.3 * (5 + 50 * $wall) + 2")" "$total"
assert_cpu "nginx workers" "$WORKERS_CPU_NS" $((HEY_T1 - HEY_T0)) 0.5
