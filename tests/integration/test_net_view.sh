#!/bin/bash
# The network conditions in the live view (issue 18; rlthrottle(1) COMMANDS): `stats` shows a
# process's RLT_NET conditions and what they did in a `net` object (as the RLT_STATS summary
# does), the prometheus form has a counter per figure and a sample per condition (and passes
# `promtool check metrics`), `top` a line per process, and a `set` of RLT_NET shows at once.
# fronts: preload seccomp
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3 promtool
R=$(dirname "$RLT_LIB")/rlthrottle
cat >"$T/udp.py" <<'PY'
import socket, time
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); r.bind(("127.0.0.1", 0))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end = time.time() + 15
while time.time() < end:
    s.sendto(b"x", r.getsockname()); time.sleep(0.005)
PY
RLT_NET="loss=50% seed=7; slice=100" bg udp throttled python3 "$T/udp.py"
pid=$(prog_pid "$LAST_PID")
[ -n "$pid" ] || fail "no throttled python"
wait_page "$pid" 10 >/dev/null || fail "no page of $pid"
# datagrams go every 5 ms: a second is some 100 drops
i=0
# (stats may find no page for a moment: python3 may be a script that execs python, and each
# exec makes the page again)
while [ $i -lt 100 ]; do
	d=0
	"$R" stats "$pid" >"$T/s.json" 2>"$T/s.err" &&
		d=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["processes"][0].get("net", {}).get("dropped", 0))' "$T/s.json")
	[ "$d" -ge 20 ] && break
	sleep 0.1; i=$((i + 1))
done
[ "$d" -ge 20 ] || { show "$T/s.err" "$T/s.json"; fail "stats $pid: no 20 drops in 10 s"; }
python3 - "$T/s.json" <<'PY' || { show "$T/s.json"; fail "stats: no right net object"; }
import json, sys
n = json.load(open(sys.argv[1]))["processes"][0]["net"]
assert n["conditions"] == ["loss=50% seed=7", "slice=100"], n
assert n["dropped"] >= 20 and n["resets"] == 0 and n["hangs"] == 0, n
print("net:", n)
PY
info "stats: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["processes"][0]["net"])' "$T/s.json")"
"$R" stats --format prometheus "$pid" >"$T/m.txt" || fail "stats --format prometheus failed"
promtool check metrics <"$T/m.txt" >"$T/promtool.out" 2>&1 || { show "$T/promtool.out"; fail "promtool refused the metrics"; }
dm=$(awk '/^rlthrottle_net_dropped_total\{/ { print $2 }' "$T/m.txt")
assert_ge "rlthrottle_net_dropped_total" 20 "$dm"
assert_eq "condition samples" 2 "$(grep -c '^rlthrottle_net_condition{' "$T/m.txt")"
grep -q 'condition="slice=100"} 1' "$T/m.txt" || { show "$T/m.txt"; fail "no sample for slice=100"; }
"$R" top --once "$pid" >"$T/top.txt" 2>&1 || { show "$T/top.txt"; fail "top --once failed"; }
assert_match "top's net line" "^net: $pid python3: loss=50% seed=7; slice=100 \\(dropped [0-9]+," "$(grep '^net:' "$T/top.txt")"
# a set shows at once (the page's text is the process's own, rewritten by the set)
"$R" set "$pid" RLT_NET "loss=10%" >"$T/set.out" 2>&1 || { show "$T/set.out"; fail "set RLT_NET failed"; }
"$R" stats "$pid" >"$T/s2.json" || fail "stats after set failed"
python3 - "$T/s2.json" <<'PY' || { show "$T/s2.json"; fail "stats: the set's conditions not shown"; }
import json, sys
n = json.load(open(sys.argv[1]))["processes"][0]["net"]
assert n["conditions"] == ["loss=10%"], n
PY
info "after set: conditions [loss=10%]"
exit 0
