# keys_nginx.sh: what the per-client nginx tests share (sourced after lib.sh): an nginx whose
# access log names each request's worker and client, three clients at 40 connections a second
# (keys_clients.py), and each client's admission rate read from the log.

# keys_nginx_conf WORKERS PORT: nginx_conf, its log line "PID CLIENT TIME STATUS", and (as
# root) workers that run as root, so that they can write their RLT_STATS into $T.
keys_nginx_conf() {
	nginx_conf "$1" "$2"
	sed -i 's/log_format rlt .*/log_format rlt "\$pid \$remote_addr \$msec \$status";/' "$T/ngx/nginx.conf"
	[ "$(id -u)" = 0 ] && sed -i '1i user root;' "$T/ngx/nginx.conf"
	return 0
}

# keys_clients PORT: runs the three clients; sets `start` (when they began).
keys_clients() {
	timeout 20 python3 "$ITEST_DIR/keys_clients.py" "$1" >"$T/clients.out" 2>&1 ||
		{ show "$T/clients.out"; fail "clients failed"; }
	sed 's/^/info: /' "$T/clients.out"
	start=$(awk '/^start/ { print $2 }' "$T/clients.out")
}

# keys_client_rates WHAT [MAX]: from nginx's access log (nginx stopped), each client admitted
# at 10/s +-10% during the clients' 3 s (the rate between its first and last admission), and at
# least 27 (at most MAX when given) in all.
keys_client_rates() {
	local log=$T/ngx/logs/access.log a n span rate
	[ -s "$log" ] || { show "$T/ngx/logs/error.log"; fail "nginx logged no request"; }
	for a in 127.0.0.2 127.0.0.3 127.0.0.4; do
		read -r n span <<<"$(awk -v a="$a" -v s="$start" '$2 == a && $3 <= s + 3.0 {
			n++; if (!lo || $3 < lo) lo = $3; if ($3 > hi) hi = $3 }
			END { printf "%d %.3f\n", n, hi - lo }' "$log")"
		rate=$(calc "($n - 1) / $span")
		info "client $a: $n admitted over $span s: $rate/s"
		assert_range "client $a admitted per second (10/s, $1)" 9 11 "$rate"
		assert_ge "client $a admitted in 3 s" 27 "$n"
		[ -z "${2:-}" ] || assert_le "client $a admitted in 3 s" "$2" "$n"
	done
}
