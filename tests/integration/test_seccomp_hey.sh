#!/bin/bash
# --seccomp on a Go program: hey -disable-keepalive against a local nginx, under -c 20/s. Go's
# runtime makes raw system calls (no libc) and preempts its threads with signals all the time.
# fronts: seccomp (hey is a Go program: raw system calls the preload cannot see)
. "$(dirname "$0")/lib.sh"
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$RLTHROTTLE" ] || fail "launcher not built: $RLTHROTTLE"
need_cmd hey nginx

port=$(free_port)
mkdir -p "$T/ng/logs" "$T/ng/tmp"
cat >"$T/ng/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
error_log $T/ng/logs/error.log;
pid $T/ng/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $T/ng/tmp;
  proxy_temp_path $T/ng/tmp;
  fastcgi_temp_path $T/ng/tmp;
  uwsgi_temp_path $T/ng/tmp;
  scgi_temp_path $T/ng/tmp;
  server { listen 127.0.0.1:$port; location / { return 200 "ok\n"; } }
}
CONF
bg nginx nginx -p "$T/ng" -c "$T/ng/nginx.conf"
wait_port "$port"

t0=$(now_ns)
"$RLTHROTTLE" --seccomp -c 20/s --stats "$T/st.json" -- hey -disable-keepalive -z 3s -c 4 "http://127.0.0.1:$port/" >"$T/hey.out" 2>&1 ||
	{ show "$T/hey.out"; fail "hey under --seccomp failed"; }
t1=$(now_ns)
show "$T/st.json"
ok=$(awk '/\[200\]/ { print $2 }' "$T/hey.out")
info "hey: ${ok:-0} responses 200"
grep -q "Error distribution" "$T/hey.out" && { show "$T/hey.out"; fail "hey saw errors"; }
units=$(grep -o '"units":[0-9]*' "$T/st.json" | head -1 | cut -d: -f2)
assert_eq "connects charged = requests answered" "$ok" "$units"
# 20/s with a burst of 20: after the burst, 20 per second
MIN_SPAN_S=2.5 assert_rate "connect rate after the burst" "$((ok - 20))" "$((t1 - t0))" 20 0.8 1.15
