#!/bin/bash
# RLT_CONNS's connections open now, as `rlthrottle stats` shows them (issue 19 item 6): a python
# server under RLT_CONNS=5 (and a second rule, 8 in a shared scope) holds 3 accepted
# connections, then 2 after one closes, then none; the prometheus gauge
# rlthrottle_open_connections and the JSON's `open` follow for both rules, beside the limits,
# and promtool is clean.
# fronts: preload seccomp
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3 promtool
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle

# The server: accepts, holds each connection until its peer closes, and writes how many it holds
# to $T/held after every change.
cat >"$T/srv.py" <<'PY'
import os, selectors, socket, sys, time
out, portfile = sys.argv[1], sys.argv[2]
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(16)
sel = selectors.DefaultSelector(); sel.register(ls, selectors.EVENT_READ)
held = 0
def note():
    with open(out + ".tmp", "w") as f: f.write("%d\n" % held)
    os.rename(out + ".tmp", out)
note()
with open(portfile + ".tmp", "w") as f: f.write("%d\n" % ls.getsockname()[1])
os.rename(portfile + ".tmp", portfile)
end = time.monotonic() + 30
while time.monotonic() < end:
    for key, _ in sel.select(0.2):
        if key.fileobj is ls:
            c, _ = ls.accept(); sel.register(c, selectors.EVENT_READ); held += 1
        else:
            if not key.fileobj.recv(100):
                sel.unregister(key.fileobj); key.fileobj.close(); held -= 1
        note()
PY
shm=itest-gauge-$$
trap 'rm -f /dev/shm/rlthrottle.$shm; cleanup' EXIT
RLT_CONNS="5; 8 scope=shared:$shm" bg srv throttled python3 "$T/srv.py" "$T/held" "$T/srv.port"
wait_file "$T/srv.port" 20
port=$(cat "$T/srv.port")
spid=$(prog_pid "$LAST_PID")
[ -n "$spid" ] || fail "no pid for the throttled server"

# The client (not throttled): opens 3 connections, closes one when $T/close appears, holds the
# others until $T/done appears.
cat >"$T/cli.py" <<'PY'
import os, socket, sys, time
port, d = int(sys.argv[1]), sys.argv[2]
cs = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
end = time.monotonic() + 30
while not os.path.exists(d + "/close") and time.monotonic() < end: time.sleep(0.05)
cs.pop().close()
while not os.path.exists(d + "/done") and time.monotonic() < end: time.sleep(0.05)
PY
bg cli python3 "$T/cli.py" "$port" "$T"

# until_held N: the server holds N connections (its own count), bounded
until_held() {
	local i=0
	while [ "$(cat "$T/held" 2>/dev/null)" != "$1" ]; do
		[ $i -ge 200 ] && fail "the server never held $1 connections (holds $(cat "$T/held"))"
		sleep 0.05; i=$((i + 1))
	done
}
# gauge_is N: the exposition's gauge for the rule is N, promtool clean, and the JSON agrees
gauge_is() {
	"$RLTHROTTLE" stats "$spid" --format prometheus >"$T/prom.txt" 2>"$T/prom.err" ||
		{ show "$T/prom.err"; fail "stats --format prometheus failed"; }
	promtool check metrics <"$T/prom.txt" >"$T/promtool.out" 2>&1 ||
		{ show "$T/prom.txt" "$T/promtool.out"; fail "promtool refused our exposition"; }
	grep -q '^# TYPE rlthrottle_open_connections gauge$' "$T/prom.txt" ||
		{ show "$T/prom.txt"; fail "no gauge TYPE line for rlthrottle_open_connections"; }
	local got lim
	got=$(sed -n 's/^rlthrottle_open_connections{.*var="RLT_CONNS",rule="5".*} \([0-9]*\)$/\1/p' "$T/prom.txt")
	lim=$(sed -n 's/^rlthrottle_limit_open_connections{.*var="RLT_CONNS",rule="5".*} \([0-9]*\)$/\1/p' "$T/prom.txt")
	[ -n "$got" ] || { show "$T/prom.txt"; fail "no rlthrottle_open_connections sample for RLT_CONNS=5"; }
	assert_eq "rlthrottle_open_connections" "$1" "$got"
	assert_eq "rlthrottle_limit_open_connections" 5 "$lim"
	got=$(sed -n 's/^rlthrottle_open_connections{.*var="RLT_CONNS",rule="8 scope=shared:[^"]*".*} \([0-9]*\)$/\1/p' "$T/prom.txt")
	assert_eq "rlthrottle_open_connections, shared scope" "$1" "$got"
	"$RLTHROTTLE" stats "$spid" >"$T/st.json" || fail "stats (json) failed"
	python3 - "$T/st.json" "$1" <<'PY' || { show "$T/st.json"; fail "stats json: open is not $1"; }
import json, sys
d = json.load(open(sys.argv[1]))
r = [r for r in d["processes"][0]["rules"] if r["variable"] == "RLT_CONNS"]
assert len(r) == 2 and [x["open"] for x in r] == [int(sys.argv[2])] * 2, r
assert [x["limit_open"] for x in r] == [5, 8], r
PY
	info "open connections: $1 under both rules (prometheus gauge and json), limits 5 and 8, promtool clean"
}

until_held 3
gauge_is 3
touch "$T/close"
until_held 2
gauge_is 2
touch "$T/done"
until_held 0
gauge_is 0
