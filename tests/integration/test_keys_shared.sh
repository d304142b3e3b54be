#!/bin/bash
# fronts: preload seccomp
# matrix-only: seccomp (slow: nginx or a table churned; the preload's run is in make test)
# Issue 11: per-client budgets in shared scope. nginx with two workers, both preloaded with
# RLT_ACCEPT="10/s burst=1 key=peer scope=shared:NAME": the table of keys is in the segment, so
# three clients bound to 127.0.0.2, .3 and .4, each trying 40 connections a second for 3 s, are
# each admitted at 10/s +-10% across both workers (each worker alone would admit 10/s more). Each
# worker's RLT_STATS shows the segment's counts (three keys). A process whose rule disagrees
# with the segment's (another keys=, another key=) is refused at load: status 125, one line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/keys_nginx.sh"
need_lib
need_cmd nginx python3
name=itest-keys-$$
trap 'rm -f /dev/shm/rlthrottle.$name; cleanup' EXIT
rule="10/s burst=1 key=peer scope=shared:$name"
port=$(free_port)
keys_nginx_conf 2 "$port"
bg nginx env LD_PRELOAD="$RLT_LIB" RLT_ACCEPT="$rule" RLT_STATS="$T/stats.%p.json" \
	nginx -p "$T/ngx/" -c "$T/ngx/nginx.conf" -e "$T/ngx/logs/error.log"
npid=$LAST_PID
nginx_up "$port"
workers=$(ps -o pid= --ppid "$npid" | tr -d ' ' | sort -n | tr '\n' ' ')
assert_eq "nginx workers" 2 "$(echo $workers | wc -w)"

keys_clients "$port"

assert_match "shm list: the limit is each key's" "^$name +RLT_ACCEPT token 10/s burst=1 per key " \
	"$("$(dirname "$RLT_LIB")/rlthrottle" shm list)"

# A second process naming the scope with another table size, or another key, is refused.
refused() { # RULE WHAT: WHAT is the part of the line that says what differs
	local rc=0
	env LD_PRELOAD="$RLT_LIB" RLT_ACCEPT="$1" /bin/echo RAN >"$T/out" 2>"$T/err" || rc=$?
	assert_eq "RLT_ACCEPT=\"$1\": status" 125 "$rc"
	assert_eq "RLT_ACCEPT=\"$1\": the program did not run" "" "$(cat "$T/out")"
	assert_eq "RLT_ACCEPT=\"$1\": lines on stderr" 1 "$(wc -l <"$T/err")"
	case $(cat "$T/err") in *"$2"*) ;; *) fail "RLT_ACCEPT=\"$1\": the line does not say '$2': $(cat "$T/err")" ;; esac
	info "refused: $(cat "$T/err")"
}
refused "10/s burst=1 key=peer keys=100 scope=shared:$name" \
	"keys=4096 there (the table's size, fixed at creation), keys=100 here"
refused "10/s burst=1 key=port scope=shared:$name" "key=peer there, key=port here"
refused "10/s burst=1 key=peer/24 scope=shared:$name" "key=peer/32,128 there, key=peer/24,64 here"
refused "10/s burst=1 scope=shared:$name" "key=peer there, key=(none) here"

kill -TERM "$npid"
wait_pid "$npid" 10 >/dev/null 2>&1 || true
log=$T/ngx/logs/access.log
[ -s "$log" ] || { show "$T/ngx/logs/error.log"; fail "nginx logged no request"; }
for w in $workers; do
	info "worker $w admitted $(awk -v w="$w" '$1 == w' "$log" | wc -l)"
done
assert_eq "both workers admitted connections" 2 "$(awk '{ print $1 }' "$log" | sort -u | wc -l)"
keys_client_rates "its own budget across both workers"
for w in $workers; do
	stats=$T/stats.$w.json
	wait_file "$stats" 5 || { ls "$T"; fail "worker $w wrote no RLT_STATS"; }
	info "stats of $w: $(tr -d '\n' <"$stats")"
	# the segment's counts, whichever worker inserted the key
	assert_match "worker $w: three keys tracked in the segment" \
		'"keys":4096,"keys_tracked":3,"keys_evicted":0' "$(cat "$stats")"
done
