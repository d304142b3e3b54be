#!/bin/bash
# `rlthrottle stats` on running processes (rlthrottle(1) COMMANDS) and the pages' life and trust:
#  - prometheus output passes `promtool check metrics` (which refuses malformed samples: checked
#    first), names and labels of rlthrottle(1) COMMANDS, json parses;
#  - a PID that is not a throttled process of ours: one line, status 2;
#  - the page is removed at exit; a stale page (pid gone, or another start time) is cleaned;
#  - a page of the wrong mode is refused, and (as root) another user cannot read ours;
#  - a FIFO planted under a page's name hangs no reader.
# fronts: preload (the pages' life and trust are the core's; under --seccomp see test_top_seccomp)
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3 promtool
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle

# the checker itself: it must refuse what the format forbids
printf '# TYPE a counter\na{x="1" 5\n' | promtool check metrics >/dev/null 2>&1 && fail "promtool accepted an unclosed label set"
printf '# TYPE a counter\na{x="1"} five\n' | promtool check metrics >/dev/null 2>&1 && fail "promtool accepted a value that is not a number"
printf '# TYPE a counter\na{x="1"} 5\na{x="1"} 6\n' | promtool check metrics >/dev/null 2>&1 && fail "promtool accepted a duplicate series"
printf '# TYPE a counter\n# TYPE a gauge\na 5\n' | promtool check metrics >/dev/null 2>&1 && fail "promtool accepted two TYPE lines"
info "promtool refuses 4 malformed expositions"

bg sleeper env LD_PRELOAD="$RLT_LIB" RLT_SEND="1MiB/s; 100msg/s action=reject" RLT_ACCEPT="20/s" RLT_CONNS=7 sleep 30
spid=$LAST_PID
page=$(wait_page "$spid" 5) || fail "no page for the preloaded sleep ($spid)"
info "page: $page ($(stat -c '%a %U %s' "$page"))"
assert_eq "page mode" 600 "$(stat -c %a "$page")"

"$RLTHROTTLE" stats "$spid" --format prometheus >"$T/prom.txt" 2>"$T/prom.err" || { show "$T/prom.err"; fail "stats --format prometheus failed"; }
show "$T/prom.txt"
promtool check metrics <"$T/prom.txt" >"$T/promtool.out" 2>&1 || { show "$T/promtool.out"; fail "promtool refused our exposition"; }
info "promtool check metrics: ok"
for m in bytes_total messages_total connections_total calls_total delayed_total rejected_total \
	delay_seconds_total would_delay_total would_delay_seconds_total would_reject_total \
	limit_bytes_per_second limit_messages_per_second limit_connections_per_second \
	limit_open_connections waiting_threads; do
	grep -q "^# TYPE rlthrottle_$m " "$T/prom.txt" || fail "no TYPE line for rlthrottle_$m"
	grep -q "^# HELP rlthrottle_$m " "$T/prom.txt" || fail "no HELP line for rlthrottle_$m"
done
L="pid=\"$spid\",comm=\"sleep\""
grep -qx "rlthrottle_limit_bytes_per_second{$L,var=\"RLT_SEND\",rule=\"1MiB/s\",action=\"delay\"} 1048576" "$T/prom.txt" || fail "no limit sample for RLT_SEND 1MiB/s"
grep -qx "rlthrottle_limit_messages_per_second{$L,var=\"RLT_SEND\",rule=\"100msg/s action=reject\",action=\"reject\"} 100" "$T/prom.txt" || fail "no limit sample for RLT_SEND 100msg/s"
grep -qx "rlthrottle_limit_connections_per_second{$L,var=\"RLT_ACCEPT\",rule=\"20/s\",action=\"delay\"} 20" "$T/prom.txt" || fail "no limit sample for RLT_ACCEPT 20/s"
grep -qx "rlthrottle_limit_open_connections{$L,var=\"RLT_CONNS\",rule=\"7\",action=\"reject\"} 7" "$T/prom.txt" || fail "no limit sample for RLT_CONNS"
# one unit per family: a byte rule's units in bytes_total only, a message rule's in messages_total
grep -q "^rlthrottle_messages_total{.*rule=\"1MiB/s\"" "$T/prom.txt" && fail "a byte rule in messages_total"
grep -q "^rlthrottle_bytes_total{.*rule=\"100msg/s" "$T/prom.txt" && fail "a message rule in bytes_total"
grep -q "^rlthrottle_limit_connections_per_second{.*RLT_CONNS" "$T/prom.txt" && fail "RLT_CONNS's count given as a rate"
"$RLTHROTTLE" stats all --format prometheus | promtool check metrics >/dev/null 2>&1 || fail "stats all: promtool refused it"

"$RLTHROTTLE" stats "$spid" >"$T/st.json" || fail "stats (json) failed"
python3 - "$T/st.json" "$spid" <<'PY' || fail "stats json is not what it should be"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == 2, d.get("schema")
p = d["processes"]
assert len(p) == 1 and p[0]["pid"] == int(sys.argv[2]) and p[0]["comm"] == "sleep", p
rules = [(r["variable"], r["index"], r["rule"], r["action"]) for r in p[0]["rules"]]
assert rules == [("RLT_ACCEPT", 1, "20/s", "delay"), ("RLT_SEND", 1, "1MiB/s", "delay"),
                 ("RLT_SEND", 2, "100msg/s action=reject", "reject"), ("RLT_CONNS", 1, "7", "reject")], rules
assert all(len(r["history"]) == 60 for r in p[0]["rules"])
PY
info "stats json: the four rules, in order"

# a shared scope: one total over the processes that name it
shm=itest-pub-$$
bg sh1 env LD_PRELOAD="$RLT_LIB" RLT_SEND="1MiB/s scope=shared:$shm" sleep 20
sh1=$LAST_PID
bg sh2 env LD_PRELOAD="$RLT_LIB" RLT_SEND="1MiB/s scope=shared:$shm" sleep 20
sh2=$LAST_PID
wait_page "$sh1" 5 >/dev/null && wait_page "$sh2" 5 >/dev/null || fail "no pages for the shared-scope sleepers"
"$RLTHROTTLE" stats >"$T/all.json" || fail "stats (all) failed"
python3 - "$T/all.json" "$shm" <<'PY' || fail "no single total for shared:$shm"
import json, sys
d = json.load(open(sys.argv[1]))
t = [x for x in d["shared"] if x["scope"] == "shared:" + sys.argv[2]]
assert len(t) == 1 and t[0]["variable"] == "RLT_SEND", t
PY
"$RLTHROTTLE" top --once "$sh1" "$sh2" | grep -Eq "^total +shared:.* SEND +1MiB/s scope=shared:" || fail "top shows no total row for shared:$shm"
kill "$sh1" "$sh2"; wait_pid "$sh1" 5; wait_pid "$sh2" 5
"$RLTHROTTLE" shm rm "$shm" >/dev/null 2>&1
info "shared:$shm: one total over its 2 processes"

# not ours: one line, status 2
for arg in 1 999999999 "$((spid + 1000000))" abc "-5"; do
	"$RLTHROTTLE" stats "$arg" >"$T/bad.out" 2>"$T/bad.err"; rc=$?
	assert_eq "stats $arg: status" 2 "$rc"
	assert_eq "stats $arg: lines on stderr" 1 "$(wc -l <"$T/bad.err")"
	info "  $(cat "$T/bad.err")"
done
"$RLTHROTTLE" top --once 1 >/dev/null 2>"$T/bad.err"; assert_eq "top 1: status" 2 "$?"

# wrong mode: refused, not read
chmod 0644 "$page"
"$RLTHROTTLE" stats "$spid" >/dev/null 2>"$T/mode.err"; rc=$?
chmod 0600 "$page"
assert_eq "a page of mode 0644: status" 2 "$rc"
assert_match "a page of mode 0644: why" "mode 0644" "$(cat "$T/mode.err")"

# another user: (root only) nobody may not read our page
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$RLTHROTTLE" stats "$spid" >/dev/null 2>"$T/other.err"; rc=$?
	assert_eq "another user's read: status" 2 "$rc"
	assert_match "another user's read: why" "another user" "$(cat "$T/other.err")"
	# a page named for that user but made by root: the file's owner is what counts
	cp "$page" "$T/copy"
	fake=/dev/shm/rlthrottle-65534-$spid-$(echo "$page" | sed 's/.*-//')
	mv "$page" "$T/moved"; cp "$T/moved" "$fake"; chmod 0600 "$fake"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$RLTHROTTLE" stats "$spid" >/dev/null 2>"$T/other2.err"; rc=$?
	rm -f "$fake"; mv "$T/moved" "$page"
	assert_eq "a page named for nobody, owned by root: status" 2 "$rc"
	info "  $(cat "$T/other2.err")"
else
	info "not root: the other-user checks are left out"
fi

# stale pages: a pid that is gone, and a live pid with another start time
dead=$(sh -c 'echo $$')
touch "/dev/shm/rlthrottle-$(id -u)-$dead-12345" "/dev/shm/rlthrottle-$(id -u)-$spid-1"
chmod 0600 "/dev/shm/rlthrottle-$(id -u)-$dead-12345" "/dev/shm/rlthrottle-$(id -u)-$spid-1"
"$RLTHROTTLE" stats >/dev/null || fail "stats (all) failed"
[ -e "/dev/shm/rlthrottle-$(id -u)-$dead-12345" ] && fail "the stale page of a dead pid was not removed"
[ -e "/dev/shm/rlthrottle-$(id -u)-$spid-1" ] && fail "the stale page of an earlier process with the same pid was not removed"
[ -e "$page" ] || fail "the live page was removed"
info "stale pages removed, the live one kept"

# a FIFO planted under the name of a live process (any user can, in /dev/shm) must not hang a
# reader: it is opened without blocking and refused for not being a page
sleep 30 &
fpid=$!
fstart=$(awk '{ print $22 }' "/proc/$fpid/stat")
fifo="/dev/shm/rlthrottle-$(id -u)-$fpid-$fstart"
mkfifo -m 0600 "$fifo" || fail "mkfifo $fifo"
timeout 10 "$RLTHROTTLE" stats "$fpid" >"$T/fifo.out" 2>"$T/fifo.err"; rc=$?
assert_eq "stats on a FIFO planted as a page: status (124: hung)" 2 "$rc"
timeout 10 "$RLTHROTTLE" stats >/dev/null 2>&1; rc=$?
[ "$rc" = 124 ] && fail "stats (all) hung on a FIFO planted as a page"
timeout 10 "$RLTHROTTLE" top --once >/dev/null 2>&1; rc=$?
[ "$rc" = 124 ] && fail "top --once hung on a FIFO planted as a page"
rm -f "$fifo"; kill "$fpid"; wait "$fpid" 2>/dev/null
info "a FIFO planted as a page: refused, nobody hangs ($(cat "$T/fifo.err"))"

# removed at exit: a preloaded program that exits normally (through exit(), not _exit(), which
# runs nothing of ours: such a page is stale and cleaned by the next reader, as above)
# (its page by the exact name: uid-pid-start)
env LD_PRELOAD="$RLT_LIB" RLT_SEND="1MiB/s" python3 -c 'import os, sys
st = open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19]
p = "/dev/shm/rlthrottle-%d-%d-%s" % (os.geteuid(), os.getpid(), st)
sys.exit(0 if os.path.exists(p) and print(p) is None else 1)' >"$T/short.out" || fail "the short program saw no page of its own"
short=$(cat "$T/short.out")
[ -e "$short" ] && fail "page $short left after exit"
info "page $short removed at exit"
# RLT_PUBLISH=0: no page
env LD_PRELOAD="$RLT_LIB" RLT_SEND="1MiB/s" RLT_PUBLISH=0 python3 -c 'import os
st = open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19]
p = "/dev/shm/rlthrottle-%d-%d-%s" % (os.geteuid(), os.getpid(), st)
print("page" if os.path.exists(p) else "none")' >"$T/nopub.out"
assert_eq "page under RLT_PUBLISH=0" none "$(cat "$T/nopub.out")"
exit 0
