#!/bin/bash
# A connect() that only asks how a non-blocking attempt went (APR, and so `ab`: EINPROGRESS, then
# connect() again for 0, EALREADY or EISCONN) is not a new attempt (issue 9): it used to be
# charged, so RLT_CONNECT=100/s let such a client make 50 connections a second. Only a call that
# starts an attempt is charged, and takes an RLT_CONNS slot; a socket whose attempt failed starts
# a new one with its next connect(), which is charged again.
# ab against nginx, a C client (connect, poll, connect again), and a C client retrying a refused
# port on one socket; under the preload and under --seccomp.
. "$(dirname "$0")/../integration/lib.sh"
need_lib
need_bin fdlife acceptor
need_cmd nginx ab python3

# units RLT_VAR FILE: the units charged by the first rule of RLT_VAR in an RLT_STATS summary
units() {
	python3 - "$1" "$2" <<'PY'
import json, sys
var, path = sys.argv[1], sys.argv[2]
text = open(path).read()
doc, _ = json.JSONDecoder().raw_decode(text[text.find("{"):])
found = []
def walk(o):
    if isinstance(o, dict):
        if o.get("variable") == var: found.append(o)
        for v in o.values(): walk(v)
    elif isinstance(o, list):
        for v in o: walk(v)
walk(doc)
print(found[0]["units"] if found else "")
PY
}

# fdlife50 TAG WHAT FDLIFE_ARGS...: 60 connections of fdlife (under $front) at RLT_CONNECT=50/s,
# statistics in $T/TAG_$front.json: each connection charged once, at 50/s. Its report in out.
fdlife50() {
	local tag=$1 what=$2
	shift 2
	RLT_STATS="$T/${tag}_$front.json" RLT_CONNECT="50/s burst=1" throttled "$ITEST_BIN/fdlife" -n 60 "$@" \
		>"$T/${tag}_$front.out" 2>"$T/${tag}_$front.err" || { show "$T/${tag}_$front.err"; fail "$front: fdlife $what failed"; }
	out=$(cat "$T/${tag}_$front.out")
	info "$front $what: $out"
	assert_eq "$front $what: connects charged for 60" 60 "$(units RLT_CONNECT "$T/${tag}_$front.json")"
	assert_rate "$front $what: connects/s at RLT_CONNECT=50/s" 59 "$(kv elapsed_ns "$out")" 50 0.85 1.15
}

port=$(free_port)
nginx_conf 1 "$port"
bg nginx nginx -p "$T/ngx/" -c "$T/ngx/nginx.conf" -e "$T/ngx/logs/error.log"
wait_port "$port"
start_srv acc acceptor -D 60 -T 60
acc_port=$SRV_PORT
refused=$(free_port)

for front in preload seccomp; do
	if [ $front = seccomp ]; then export UNDER_SECCOMP=1; else unset UNDER_SECCOMP; fi

	# ab: 200 requests, one connection each, 4 at a time, at 100 connections/s
	RLT_STATS="$T/ab_$front.json" RLT_CONNECT="100/s burst=1" throttled ab -n 200 -c 4 "http://127.0.0.1:$port/" \
		>"$T/ab_$front.out" 2>"$T/ab_$front.err" || { show "$T/ab_$front.out" "$T/ab_$front.err"; fail "$front: ab failed"; }
	info "$front ab: $(grep -E 'Complete requests|Failed requests|Time taken' "$T/ab_$front.out" | tr -s ' ' | tr '\n' ';')"
	assert_eq "$front: ab complete requests" 200 "$(awk '/^Complete requests/ { print $3 }' "$T/ab_$front.out")"
	assert_eq "$front: ab failed requests" 0 "$(awk '/^Failed requests/ { print $3 }' "$T/ab_$front.out")"
	# ab starts one connection more than it needs (201 for 200 requests, 402 charges before)
	n=$(units RLT_CONNECT "$T/ab_$front.json")
	assert_range "$front: connects charged for 200 requests" 200 204 "$n"
	took=$(awk '/^Time taken for tests/ { print $5 }' "$T/ab_$front.out")
	# one connection a request: the first goes at once (burst 1), the others at 100/s
	assert_rate "$front: ab requests/s at RLT_CONNECT=100/s" 199 "$(calc "$took * 1e9")" 100 0.85 1.15

	# the C client: EINPROGRESS, poll, connect again (and once more: EISCONN)
	fdlife50 c "C client" -p "$acc_port" -x check
	assert_eq "$front: C client connections" 60 "$(kv ok "$out")"

	# a completion check takes no RLT_CONNS slot: one at a time under RLT_CONNS=1 all succeed
	RLT_CONNS=1 throttled "$ITEST_BIN/fdlife" -p "$acc_port" -n 20 -x check >"$T/n_$front.out" 2>&1 ||
		{ show "$T/n_$front.out"; fail "$front: fdlife check (RLT_CONNS) failed"; }
	assert_eq "$front: connections one at a time under RLT_CONNS=1" 20 "$(kv ok "$T/n_$front.out")"

	# a refused port, one socket: each round an attempt (charged) and a check (not): 60 charged
	fdlife50 r "retry" -p "$refused" retry
	assert_eq "$front: completion checks made" 60 "$(kv checks "$out")"
done
