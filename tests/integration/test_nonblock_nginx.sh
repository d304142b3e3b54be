#!/bin/bash
# nginx (edge-triggered epoll, non-blocking sockets) serves a file to curl under RLT_SEND on
# nginx: a non-blocking send the budget does not allow fails with EAGAIN and the wait reports
# the socket writable when it does (rlthrottle(7) BEHAVIOUR), so the file still comes at the
# rate, every byte equal, with writev (sendfile off) and with sendfile, and the worker does not
# spin.
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
need_lib
need_bin fnv
need_cmd nginx curl
rate=1048576 burst=65536
size=$((3 * rate + burst))
mkdir -p "$T/www"
"$ITEST_BIN/fnv" -g $size >"$T/www/f.bin"
for sf in off on; do
	port=$(free_port)
	nginx_conf 1 "$port"
	sed -i "s|location / { return 200 \"ok\\\\n\"; }|location / { root $T/www; }\n        sendfile $sf;|" "$T/ngx/nginx.conf"
	# the worker reads the file in $T (mode 700): it keeps the test's user
	[ "$(id -u)" = 0 ] && sed -i '1i user root;' "$T/ngx/nginx.conf"
	grep -q "root $T/www" "$T/ngx/nginx.conf" || { show "$T/ngx/nginx.conf"; fail "nginx.conf: no root"; }
	RLT_SEND="1MiB/s burst=64KiB" bg nginx_$sf throttled nginx -p "$T/ngx/" -c "$T/ngx/nginx.conf" -e "$T/ngx/logs/error.log"
	npid=$LAST_PID
	nginx_up "$port" "nginx_$sf"
	worker=$(nginx_workers | cut -d' ' -f1)
	[ -n "$worker" ] || fail "sendfile $sf: no nginx worker"
	cpu0=$(proc_cpu_s "$worker")
	secs=$(curl -sf --max-time 30 -o "$T/got_$sf.bin" -w '%{time_total}' "http://127.0.0.1:$port/f.bin") ||
		{ show "$T/ngx/logs/error.log"; fail "sendfile $sf: curl failed"; }
	cpu1=$(proc_cpu_s "$worker")
	sha256_eq "$T/www/f.bin" "$T/got_$sf.bin"
	MIN_SPAN_S=1.5 assert_rate "sendfile $sf" $((size - burst)) "$(calc "$secs * 1e9")" $rate 0.7 1.3
	assert_cpu "sendfile $sf: nginx worker" "$(calc "($cpu1 - $cpu0) * 1e9")" "$(calc "$secs * 1e9")" 0.2
	kill "$npid" 2>/dev/null
	wait_pid "$npid" 10 || true
done
