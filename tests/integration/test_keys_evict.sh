#!/bin/bash
# fronts: preload seccomp
# matrix-only: seccomp (slow: nginx or a table churned; the preload's run is in make test)
# Issue 11: keys=N bounds the table. A python server preloaded with RLT_ACCEPT="4/s burst=1
# key=peer keys=K action=reject" and 8 clients (127.0.0.2-9) taking turns, 20 tries a second
# each for 2 s. With keys=8 every client keeps its key: each is admitted at its own 4/s. With
# keys=4 the table is one set (exact LRU) and turn-taking evicts each key before its client
# comes back: the documented bound (an evicted client starts with a fresh budget) is that a
# client is then admitted up to every try, never fewer than its own budget gives; the summary
# counts the replacements. The server's VmRSS stays flat, and the table's mapping is the size
# keytab.h states (keys=1048576: 72.5 MiB).
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
D=2
cat >"$T/server.py" <<'PY'
import os, socket, sys, time, collections
def rss():
    for l in open("/proc/self/status"):
        if l.startswith("VmRSS:"): return int(l.split()[1])
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(512)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
got, shed, end, r1 = collections.Counter(), 0, time.time() + float(sys.argv[2]), None
start = last = None
s.settimeout(0.2)
# until the clients have been gone for half a second (or the time is up)
while time.time() < end and not (last and time.time() > last + 0.5):
    if start and r1 is None and time.time() > start + 0.5: r1 = rss()
    try: c, a = s.accept()
    except socket.timeout: continue
    except ConnectionAbortedError: shed += 1; last = time.time(); continue
    start = start or time.time(); last = time.time()
    got[a[0]] += 1; c.close()
for k in sorted(got): print("accepted %s %d" % (k, got[k]))
print("shed %d rss_kb %d %d" % (shed, r1 or 0, rss()), flush=True)
PY
cat >"$T/clients.py" <<'PY'
import socket, sys, time
port, secs, srcs = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
t0 = time.time(); nxt = t0; i = 0
while time.time() < t0 + secs and i < 1000:
    s = socket.socket(); s.bind((srcs[i % len(srcs)], 0)); s.settimeout(1)
    try: s.connect(("127.0.0.1", port)); s.recv(1)
    except OSError: pass
    s.close(); i += 1; nxt += 1.0 / (20 * len(srcs))
    time.sleep(max(0, nxt - time.time()))
print("tries %d" % i)
PY
clients="127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5 127.0.0.6 127.0.0.7 127.0.0.8 127.0.0.9"
run() { # KEYS
		rm -f "$T/port"
	bg server env LD_PRELOAD="$RLT_LIB" RLT_ACCEPT="4/s burst=1 key=peer keys=$1 action=reject" \
		RLT_STATS="$T/stats.$1.json" python3 "$T/server.py" "$T/port" $((D + 5))
	spid=$LAST_PID
	wait_file "$T/port" 10
	timeout 20 python3 "$T/clients.py" "$(cat "$T/port")" "$D" $clients >"$T/clients.out" ||
		fail "clients failed"
	wait_pid "$spid" 10 || { show "$T/server.err"; fail "server did not end"; }
	sed "s/^/info: keys=$1: server: /" "$T/server.out" "$T/clients.out"
	info "keys=$1: stats: $(tr -d '\n' <"$T/stats.$1.json" | sed 's/.*"keys":/"keys":/')"
}
n() { awk -v a="$1" '$1 == "accepted" && $2 == a { print $3 }' "$T/server.out"; }
own_lo=$(calc "0.7 * (1 + 4 * $D)"); own_hi=$(calc "1.3 * (1 + 4 * $D) + 1")

run 8
for c in $clients; do assert_range "keys=8: $c (its own 4/s)" "$own_lo" "$own_hi" "$(n "$c")"; done
assert_match "keys=8: nothing replaced" '"keys_tracked":8,"keys_evicted":0,"keys_expired":0' "$(cat "$T/stats.8.json")"

run 4
tries=$(( $(awk '/^tries/ { print $2 }' "$T/clients.out") / 8 ))
for c in $clients; do
	assert_range "keys=4: $c (a fresh budget after each eviction: up to every try)" "$own_lo" "$((tries + 1))" "$(n "$c")"
done
st=$(tr -d "\n" <"$T/stats.4.json")
assert_match "keys=4: four tracked" '"keys":4,"keys_tracked":4,' "$st"
ev=$(sed 's/.*"keys_evicted":\([0-9]*\).*/\1/' <<<"$st")
assert_ge "keys=4: keys evicted (turn-taking: nearly every call)" $((tries * 8 / 2)) "$ev"
read -r r1 r2 <<<"$(awk '/rss_kb/ { print $4, $5 }' "$T/server.out")"
assert_le "keys=4: server VmRSS growth over the run (kB)" 2048 $((r2 - r1))

# the mapping is what keytab.h states: 72 bytes a key, 4 a set of 8, a 192-byte head
vmsize() { pre "$@" python3 -c 'print([l.split()[1] for l in open("/proc/self/status") if l.startswith("VmSize:")][0])'; }
small=$(vmsize RLT_ACCEPT="5/s key=peer keys=4")
big=$(vmsize RLT_ACCEPT="5/s key=peer keys=1048576")
info "VmSize keys=4: $small kB, keys=1048576: $big kB"
assert_range "keys=1048576 maps 72.5 MiB more than keys=4 (kB)" 73700 74800 $((big - small))

# A fork's child does not scan the table (only when an insert was cut off by the fork): bash
# forks for each command substitution, and a scan of keys=1048576 took 0.4 s a fork (before:
# 4.1 s for these 10; after: 0.07 s).
t0=$(now_ns)
pre RLT_ACCEPT="5/s key=peer keys=1048576" bash -c 'for i in 1 2 3 4 5 6 7 8 9 10; do x=$(echo hi); done'
took=$(calc "($(now_ns) - $t0) / 1e9")
assert_le "10 forks of bash under keys=1048576 (s)" 1.5 "$took"
