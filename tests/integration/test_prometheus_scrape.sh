#!/bin/bash
# A real Prometheus (Debian's) scrapes what `rlthrottle stats --format prometheus` writes, the
# way the man page says to feed a textfile collector (written whole, then renamed), served on
# 127.0.0.1: the scrape succeeds (target up), and a query returns the curl's bytes, one unit per
# family, with the comm and action labels.
# fronts: preload (the exposition is the launcher's; the process's front does not change it)
# parallel-safe: its queries name its curl by pid (stats all lists every throttled process)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin fnv
need_cmd python3 curl prometheus
R=$(dirname "$RLT_LIB")/rlthrottle
mkdir -p "$T/www" "$T/metrics" "$T/prom"
"$ITEST_BIN/fnv" -g $((12 * 1048576)) >"$T/www/f.bin"
http_dir http "$T/www"
hport=$HTTP_PORT
bg curl "$R" --per-process -d 1MiB/s -- curl -sS -o "$T/got" "http://127.0.0.1:$hport/f.bin"
cpid=$LAST_PID
# --per-process: the launcher execs curl under the preload (no command to wait for), so the
# page's pid is the launcher's
C="comm=\"curl\",pid=\"$cpid\""

# the exposition, rewritten every 0.5 s as the man page says (whole, then renamed)
http_dir metrics "$T/metrics"
mport=$HTTP_PORT
cat >"$T/refresh.sh" <<SH
for i in \$(seq 60); do
	"$R" stats all --format prometheus >"$T/metrics/metrics.\$\$" 2>/dev/null &&
		mv "$T/metrics/metrics.\$\$" "$T/metrics/metrics"
	sleep 0.5
done
SH
bg refresh bash "$T/refresh.sh"
wait_port "$mport"

pport=$(free_port)
cat >"$T/prom/prometheus.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: rlthrottle
    metrics_path: /metrics
    static_configs:
      - targets: ["127.0.0.1:$mport"]
YML
bg prom prometheus --config.file="$T/prom/prometheus.yml" --storage.tsdb.path="$T/prom/data" \
	--web.listen-address="127.0.0.1:$pport"
wait_port "$pport" 20

q() { curl -sS --get "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1"; }
ok=""
for _ in $(seq 40); do
	out=$(q "rlthrottle_bytes_total{var=\"RLT_RECV\",$C,action=\"delay\"}" 2>/dev/null)
	if python3 -c 'import json,sys; r=json.loads(sys.argv[1])["data"]["result"]; sys.exit(0 if r and float(r[0]["value"][1]) > 1048576 else 1)' "$out" 2>/dev/null; then
		ok=1
		break
	fi
	sleep 0.5
done
[ -n "$ok" ] || { show "$T/prom.err"; fail "Prometheus has no rlthrottle_bytes_total for curl: $out"; }
info "Prometheus query: $out"
up=$(q 'up{job="rlthrottle"}')
python3 -c 'import json,sys; r=json.loads(sys.argv[1])["data"]["result"]; assert r and r[0]["value"][1] == "1", r' "$up" ||
	fail "the scrape target is not up: $up"
lim=$(q "rlthrottle_limit_bytes_per_second{var=\"RLT_RECV\",$C}")
python3 -c 'import json,sys; r=json.loads(sys.argv[1])["data"]["result"]; assert r and float(r[0]["value"][1]) == 1048576, r' "$lim" ||
	fail "the limit gauge is not 1048576 bytes a second: $lim"
# one unit per family: the byte rule is in no other unit's family
none=$(q "rlthrottle_messages_total{$C} or rlthrottle_connections_total{$C}")
python3 -c 'import json,sys; r=json.loads(sys.argv[1])["data"]["result"]; assert r == [], r' "$none" ||
	fail "curl's byte rule appears in the messages or connections family: $none"
kill "$cpid" 2>/dev/null
info "ok: scraped, queried (bytes, limit, up), one unit per family"
