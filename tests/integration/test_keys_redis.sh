#!/bin/bash
# fronts: preload (it reads each nginx worker's own RLT_STATS, which --seccomp writes once for the command; keys under --seccomp: test_keys_nginx, test_keys_conns)
# Issue 11: per-client budgets across processes through Redis. A redis-server this test starts
# on a free loopback port; nginx with 2 workers, each preloaded with RLT_ACCEPT="10/s burst=1
# key=peer scope=redis://127.0.0.1:PORT/NAME"; three clients bound to 127.0.0.2, .3 and .4
# each try 40 connections a second for 3 s (the driver of test_keys_nginx.sh): each is
# admitted at 10/s +-10%, independently, by the two workers together. Redis holds one key per
# client, "rlthrottle:{NAME}:gcra:k:ADDR", with a PTTL, and they go by themselves once idle.
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd nginx python3 redis-server redis-cli
rport=$(free_port)
bg redis redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --daemonize no
wait_port "$rport"
name=itest-keys-$$
port=$(free_port)
nginx_conf 2 "$port"
# the access log names the client
sed -i 's/log_format rlt .*/log_format rlt "\$pid \$remote_addr \$msec \$status";/' "$T/ngx/nginx.conf"
# as root, the workers would run as nobody, who cannot write the summary into $T
[ "$(id -u)" = 0 ] && sed -i '1i user root;' "$T/ngx/nginx.conf"
bg nginx env LD_PRELOAD="$RLT_LIB" RLT_STATS="$T/stats.%p.json" \
	RLT_ACCEPT="10/s burst=1 key=peer scope=redis://127.0.0.1:$rport/$name" \
	nginx -p "$T/ngx/" -c "$T/ngx/nginx.conf" -e "$T/ngx/logs/error.log"
npid=$LAST_PID
wait_port "$port" 10
sleep 0.3
kill -0 "$npid" 2>/dev/null || { show "$T/nginx.err" "$T/ngx/logs/error.log"; fail "nginx did not start"; }

# Each client opens a connection every 25 ms and sends its request; it does not wait for the
# answer (a connection waits in the listen queue until a worker accepts it).
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
for a in 127.0.0.2 127.0.0.3 127.0.0.4; do
	# admissions during the clients' 3 s: the rate between the first and the last
	read -r n span <<<"$(awk -v a="$a" -v s="$start" '$2 == a && $3 <= s + 3.0 {
		n++; if (!lo || $3 < lo) lo = $3; if ($3 > hi) hi = $3 }
		END { printf "%d %.3f\n", n, hi - lo }' "$log")"
	rate=$(calc "($n - 1) / $span")
	info "client $a: $n admitted over $span s: $rate/s"
	assert_range "client $a admitted per second (10/s, its own budget, both workers)" 9 11 "$rate"
	assert_ge "client $a admitted in 3 s" 27 "$n"
	assert_le "client $a admitted in 3 s" 33 "$n"
done
calls=$(rcli info commandstats | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p')
info "EVALSHA calls: $calls"
