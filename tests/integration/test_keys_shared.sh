#!/bin/bash
# fronts: preload (it reads each nginx worker's own RLT_STATS, which --seccomp writes once for the command; keys under --seccomp: test_keys_nginx, test_keys_conns)
# Issue 11: per-client budgets in shared scope. nginx with two workers, both preloaded with
# RLT_ACCEPT="10/s burst=1 key=peer scope=shared:NAME": the table of keys is in the segment, so
# three clients bound to 127.0.0.2, .3 and .4, each trying 40 connections a second for 3 s, are
# each admitted at 10/s +-10% across both workers (each worker alone would admit 10/s more). Each
# worker's RLT_STATS shows the segment's counts (three keys). A process whose rule disagrees
# with the segment's (another keys=, another key=) is refused at load: status 125, one line.
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd nginx python3
name=itest-keys-$$
trap 'rm -f /dev/shm/rlthrottle.$name; cleanup' EXIT
rule="10/s burst=1 key=peer scope=shared:$name"
port=$(free_port)
nginx_conf 2 "$port"
# the access log names the client
sed -i 's/log_format rlt .*/log_format rlt "\$pid \$remote_addr \$msec \$status";/' "$T/ngx/nginx.conf"
# as root, the worker would run as nobody, who cannot write the summary into $T
[ "$(id -u)" = 0 ] && sed -i '1i user root;' "$T/ngx/nginx.conf"
bg nginx env LD_PRELOAD="$RLT_LIB" RLT_ACCEPT="$rule" RLT_STATS="$T/stats.%p.json" \
	nginx -p "$T/ngx/" -c "$T/ngx/nginx.conf" -e "$T/ngx/logs/error.log"
npid=$LAST_PID
wait_port "$port" 10
sleep 0.3
kill -0 "$npid" 2>/dev/null || { show "$T/nginx.err" "$T/ngx/logs/error.log"; fail "nginx did not start"; }
workers=$(ps -o pid= --ppid "$npid" | tr -d ' ' | sort -n | tr '\n' ' ')
assert_eq "nginx workers" 2 "$(echo $workers | wc -w)"

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
for a in 127.0.0.2 127.0.0.3 127.0.0.4; do
	# admissions during the clients' 3 s, by both workers: the rate between the first and the last
	read -r n span <<<"$(awk -v a="$a" -v s="$start" '$2 == a && $3 <= s + 3.0 {
		n++; if (!lo || $3 < lo) lo = $3; if ($3 > hi) hi = $3 }
		END { printf "%d %.3f\n", n, hi - lo }' "$log")"
	rate=$(calc "($n - 1) / $span")
	info "client $a: $n admitted over $span s: $rate/s"
	assert_range "client $a admitted per second (10/s, its own budget across both workers)" 9 11 "$rate"
	assert_ge "client $a admitted in 3 s" 27 "$n"
done
for w in $workers; do
	stats=$T/stats.$w.json
	wait_file "$stats" 5 || { ls "$T"; fail "worker $w wrote no RLT_STATS"; }
	info "stats of $w: $(tr -d '\n' <"$stats")"
	# the segment's counts, whichever worker inserted the key
	assert_match "worker $w: three keys tracked in the segment" \
		'"keys":4096,"keys_tracked":3,"keys_evicted":0' "$(cat "$stats")"
done
