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
wait_port "$port" 10
sleep 0.3
kill -0 "$npid" 2>/dev/null || { show "$T/nginx.err" "$T/ngx/logs/error.log"; fail "nginx did not start"; }
[ -e "/dev/shm/rlthrottle.$name" ] || fail "no segment /dev/shm/rlthrottle.$name"
workers=$(ps -o pid= --ppid "$npid" | tr -d ' ' | tr '\n' ' ')
info "nginx master $npid, workers: $workers"
cpu0=0; for w in $workers; do cpu0=$(calc "$cpu0 + $(proc_cpu_s "$w")"); done
t0=$(now_ns)
hey -z 3s -c 32 -t 20 -disable-keepalive "http://127.0.0.1:$port/" >"$T/hey.out" 2>&1 || { show "$T/hey.out"; fail "hey failed"; }
t1=$(now_ns)
cpu1=0; for w in $workers; do [ -e "/proc/$w/stat" ] && cpu1=$(calc "$cpu1 + $(proc_cpu_s "$w")"); done
grep -E 'Requests/sec|\[200\]' "$T/hey.out" | sed 's/^/info: hey: /'
log=$T/ngx/logs/access.log
[ -s "$log" ] || { show "$T/ngx/logs/error.log"; fail "nginx logged no request"; }
nw=$(awk '{ print $1 }' "$log" | sort -u | wc -l)
total=$(awk '{ print $1, $2 }' "$log" | sort -u | wc -l)
info "$nw workers served $total connections"
wall=$(calc "($t1 - $t0) / 1e9")
assert_ge "connections accepted in total over $wall s" "$(calc "0.7 * 50 * ($wall - 0.5)")" "$total"
# one budget for all four workers: what one worker alone may take, not four times it
assert_le "connections accepted in total (one shared budget of 50/s)" "$(calc "1.3 * (5 + 50 * $wall) + 2")" "$total"
assert_cpu "nginx workers" "$(calc "($cpu1 - $cpu0) * 1e9")" $((t1 - t0)) 0.5
