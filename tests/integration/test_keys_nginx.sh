#!/bin/bash
# fronts: preload seccomp
# Issue 11: per-client budgets. nginx (one worker) throttled with RLT_ACCEPT="10/s burst=1
# key=peer"; three clients bound to 127.0.0.2, .3 and .4 each try 40 connections a second for
# 3 s: each is admitted at 10/s +-10%, independently of the others (without the key the three
# share one 10/s). The worker's page shows the three keys tracked; its RLT_STATS (preloaded: one
# summary per process) lists them as tracked and busiest. Under --seccomp the summary is the
# command's, whose first process (the master) keys nothing: its keys are not checked there.
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd nginx python3
port=$(free_port)
nginx_conf 1 "$port"
# the access log names the client
sed -i 's/log_format rlt .*/log_format rlt "\$pid \$remote_addr \$msec \$status";/' "$T/ngx/nginx.conf"
# as root, the worker would run as nobody, who cannot write the summary into $T
[ "$(id -u)" = 0 ] && sed -i '1i user root;' "$T/ngx/nginx.conf"
RLT_ACCEPT="10/s burst=1 key=peer" RLT_STATS="$T/stats.%p.json" bg nginx throttled \
	nginx -p "$T/ngx/" -c "$T/ngx/nginx.conf" -e "$T/ngx/logs/error.log"
npid=$LAST_PID
wait_port "$port" 10
sleep 0.3
kill -0 "$npid" 2>/dev/null || { show "$T/nginx.err" "$T/ngx/logs/error.log"; fail "nginx did not start"; }
master=$(prog_pid "$npid")
worker=$(ps -o pid= --ppid "$master" | tr -d ' ' | head -1)

# Each client opens a connection every 25 ms and sends its request; it does not wait for the
# answer (a connection waits in the listen queue until the worker accepts it).
cat >"$T/clients.py" <<'PY'
import socket, sys, threading, time
port, secs = int(sys.argv[1]), 3.0
t0 = time.time()
print("start %.3f" % t0, flush=True)
held = []
def client(src):
    n, nxt = 0, t0
    while time.time() < t0 + secs and n < 200:
        s = socket.socket()
        s.bind((src, 0))
        s.settimeout(2)
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        except OSError as e:
            print("client %s: %s" % (src, e), flush=True)
        held.append(s)
        n += 1
        nxt += 0.025
        time.sleep(max(0, nxt - time.time()))
    print("client %s tried %d" % (src, n), flush=True)
ts = [threading.Thread(target=client, args=(a,)) for a in ("127.0.0.2", "127.0.0.3", "127.0.0.4")]
for t in ts: t.start()
for t in ts: t.join()
time.sleep(0.2)
PY
timeout 20 python3 "$T/clients.py" "$port" >"$T/clients.out" 2>&1 || { show "$T/clients.out"; fail "clients failed"; }
sed 's/^/info: /' "$T/clients.out"
start=$(awk '/^start/ { print $2 }' "$T/clients.out")
# the live view (SPEC §7): keys tracked and evicted, in top and in the JSON snapshot
LAUNCHER=$(dirname "$RLT_LIB")/rlthrottle
assert_match "top shows the worker's keys" "keys: $worker RLT_ACCEPT rule 0: 3 tracked of 4096, 0 evicted" \
	"$("$LAUNCHER" top --once "$worker")"
json=$("$LAUNCHER" stats "$worker" --format json)
assert_match "stats --format json shows them" '"keys":4096,"keys_tracked":3,"keys_evicted":0' "$json"
# the busiest keys (the page's, refreshed once a second while calls come)
prom=$("$LAUNCHER" stats "$worker" --format prometheus)
for a in 127.0.0.2 127.0.0.3 127.0.0.4; do
	assert_match "stats json: $a among the busiest" "{\"key\":\"$a\",\"units\":[1-9]" "$json"
	assert_match "prometheus: $a's units" \
		"rlthrottle_key_units_total{pid=\"$worker\",var=\"RLT_ACCEPT\",rule=\"10/s burst=1 key=peer\",key=\"$a\"} [1-9]" "$prom"
done
if command -v promtool >/dev/null; then
	chk=$(promtool check metrics <<<"$prom" 2>&1) || fail "promtool check metrics: $chk"
fi
assert_match "top names the busiest" "keys: $worker RLT_ACCEPT rule 0: 3 tracked of 4096, 0 evicted; busiest 127.0.0." \
	"$("$LAUNCHER" top --once "$worker")"
kill -TERM "$npid"
wait_pid "$npid" 10 >/dev/null 2>&1 || true
log=$T/ngx/logs/access.log
[ -s "$log" ] || { show "$T/ngx/logs/error.log"; fail "nginx logged no request"; }
for a in 127.0.0.2 127.0.0.3 127.0.0.4; do
	# admissions during the clients' 3 s: the rate between the first and the last
	read -r n span <<<"$(awk -v a="$a" -v s="$start" '$2 == a && $3 <= s + 3.0 {
		n++; if (!lo || $3 < lo) lo = $3; if ($3 > hi) hi = $3 }
		END { printf "%d %.3f\n", n, hi - lo }' "$log")"
	rate=$(calc "($n - 1) / $span")
	info "client $a: $n admitted over $span s: $rate/s"
	assert_range "client $a admitted per second (10/s, its own budget)" 9 11 "$rate"
	assert_ge "client $a admitted in 3 s" 27 "$n"
done
[ "$(front)" = seccomp ] && exit 0
stats=$T/stats.$worker.json
wait_file "$stats" 5 || { ls "$T"; fail "the worker wrote no RLT_STATS"; }
info "stats: $(tr -d '\n' <"$stats")"
assert_match "three keys tracked" '"keys":4096,"keys_tracked":3,"keys_evicted":0' "$(cat "$stats")"
for a in 127.0.0.2 127.0.0.3 127.0.0.4; do
	assert_match "busiest keys list $a" "\"key\":\"$a\",\"units\":" "$(cat "$stats")"
done
