#!/bin/bash
# Issue 17 row 16: a keyed rule's busiest keys in `rlthrottle stats` (JSON and Prometheus) do not
# wait for the next call: a client sends 200 KiB to one peer in a moment under
# RLT_SEND="10MiB/s key=peer" and then stays idle; 0.3 s later the view lists that peer with its
# 204800 bytes (before: "busiest":[] and no rlthrottle_key_* sample until a new call, the
# table scanned once a second, at a call, before that call's own key was in it).
# fronts: preload seccomp
# parallel-safe: bound, no rate (the idle peer's 204800 bytes are in the view 0.3 s after its last call, not at a next call)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
RLT=$(dirname "$RLT_LIB")/rlthrottle
need_bin sink
# the peer: reads its one connection to the end
start_srv sink sink
port=$SRV_PORT
RLT_SEND="10MiB/s key=peer" bg cli throttled python3 -c '
import socket, sys, time
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
c.sendall(b"x" * 204800)
open(sys.argv[2], "w").write("sent\n")
time.sleep(6)' "$port" "$T/sent"
CLI=$(prog_pid "$LAST_PID")
wait_file "$T/sent"
sleep 0.3
"$RLT" stats "$CLI" --format json >"$T/stats.json" 2>&1 || { show "$T/stats.json"; fail "stats"; }
"$RLT" stats "$CLI" --format prometheus >"$T/stats.prom" 2>&1 || { show "$T/stats.prom"; fail "stats prometheus"; }
info "busiest: $(grep -o '"busiest":\[[^]]*\]' "$T/stats.json")"
assert_match "stats json: the idle peer among the busiest" '"busiest":\[\{"key":"127.0.0.1","units":204800' \
	"$(cat "$T/stats.json")"
assert_match "prometheus: the idle peer's key sample" \
	'rlthrottle_key_units_total\{[^}]*key="127.0.0.1"\} 204800' "$(cat "$T/stats.prom")"
