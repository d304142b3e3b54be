#!/bin/bash
# One budget for the whole command (rlthrottle(1) DESCRIPTION; issue 21 item 8): under the
# launcher, a command that forks N workers, each downloading from a local server, gets RATE in
# all; with --per-process each worker gets RATE (N x RATE); a keyed rule (key=peer/24) is the
# command's too, its busiest keys in the command's summary. RLT_CONNS=1 admits one connection
# across two processes of the command. --stats writes one line for the command, its units the
# sum of the workers'. The command's segments (/dev/shm/rlthrottle.cmd-LAUNCHERPID-START*) are
# there while it runs and gone after it ends: normally, when the command is killed (SIGKILL),
# and when the launcher gets SIGTERM. A launcher killed by SIGKILL leaves them: `shm list` says
# its launcher is gone, and `shm rm NAME` removes them all.
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
need_lib
need_bin source pull
need_cmd python3
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
FRONT=()
[ -n "${UNDER_SECCOMP:-}" ] && FRONT=(--seccomp)

N=3
RATE=524288   # 512 KiB/s
BURST=65536
SECS=2

segs_of() { ls /dev/shm 2>/dev/null | grep -E "^rlthrottle\.cmd-$1-[0-9]+(\.|\$)"; }

# workers MODE...: N pulls at once under the launcher (options MODE), each for SECS seconds;
# prints the total received. The stats go to $T/stats.MODE.json.
workers() {
	local tag=$1; shift
	start_srv "src-$tag" source -D $((SECS + 3)) -c "$N"
	local port=$SRV_PORT cmd="" i
	for i in $(seq "$N"); do cmd="$cmd $ITEST_BIN/pull -p $port -D $SECS -x & "; done
	rm -f "$T/stats.$tag.json"
	"$RLTHROTTLE" "${FRONT[@]}" "$@" -d "${RATE}B/s burst=${BURST}B${KEYED:-}" --stats "$T/stats.$tag.json" \
		-- sh -c "$cmd wait" >"$T/pull.$tag.out" 2>"$T/pull.$tag.err" ||
		{ show "$T/pull.$tag.err"; fail "the workers' command failed ($tag)"; }
	[ "$(grep -c 'recv=' "$T/pull.$tag.out")" = "$N" ] || { show "$T/pull.$tag.out" "$T/pull.$tag.err"; fail "not $N workers' results ($tag)"; }
	awk -F'recv=' '{ split($2, a, " "); s += a[1] } END { print s }' "$T/pull.$tag.out"
}

# --- the rate: one budget, then one per process ---
shared=$(workers shared)
per=$(workers per --per-process)
expect=$((RATE * SECS + BURST))
info "$N workers for ${SECS}s at ${RATE}B/s: the command as one: $shared bytes; --per-process: $per bytes (one budget: about $expect)"
assert_range "one budget for the command: bytes over ${SECS}s / (RATE x ${SECS}s + burst)" 0.6 1.5 "$(calc "$shared / $expect")"
assert_range "--per-process: bytes / (N x (RATE x ${SECS}s + burst))" 0.6 1.5 "$(calc "$per / ($N * $expect)")"

# --- --stats: one line for the command, the workers' bytes in it ---
lines=$(wc -l <"$T/stats.shared.json")
assert_eq "summary lines for the command" 1 "$lines"
units=$(python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline())["rules"]; print(sum(x["units"] for x in r if x["variable"] == "RLT_RECV"))' "$T/stats.shared.json")
assert_eq "the command's RLT_RECV units = the workers' bytes" "$shared" "$units"
assert_ge "summary lines under --per-process (one per process)" "$N" "$(wc -l <"$T/stats.per.json")"

# --- a keyed rule is the command's too: one table of keys, every worker's peer the same key ---
keyed=$(KEYED=" key=peer/24" workers keyed)
info "the same with key=peer/24: $keyed bytes"
assert_range "key=peer/24, one budget per key for the command: bytes / (RATE x ${SECS}s + burst)" 0.6 1.5 "$(calc "$keyed / $expect")"
busiest=$(python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline())["rules"][0]; print(" ".join("%s=%d" % (k["key"], k["units"]) for k in r.get("busiest", [])))' "$T/stats.keyed.json")
assert_eq "the command's busiest keys (the workers' bytes under 127.0.0.0/24)" "127.0.0.0/24=$keyed" "$busiest"

# --- RLT_CONNS=1 across two processes of the command ---
cat >"$T/hold.py" <<'EOF'
import socket, sys, time
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    print("connected", flush=True)
    time.sleep(float(sys.argv[2]))
except OSError as e:
    print("refused", e.errno, flush=True)
EOF
cat >"$T/listen.py" <<'EOF'
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); __import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(30)
EOF
bg lst python3 "$T/listen.py" "$T/lst.port"
wait_file "$T/lst.port"
lport=$(cat "$T/lst.port")
# the second connects while the first holds its connection (it waits for the first's word,
# bounded, rather than a fixed time a loaded machine may outrun)
conns() {
	rm -f "$T/first.out"
	"$RLTHROTTLE" "${FRONT[@]}" "$@" -n 1 -- sh -c \
		"python3 $T/hold.py $lport 4 >$T/first.out & i=0
		while ! grep -q . $T/first.out 2>/dev/null && [ \$i -lt 200 ]; do sleep 0.05; i=\$((i + 1)); done
		python3 $T/hold.py $lport 0; kill \$! 2>/dev/null; wait; cat $T/first.out" 2>&1
}
out=$(conns)
info "RLT_CONNS=1, the command as one: $(echo $out)"
assert_eq "connections admitted across the command" 1 "$(grep -c '^connected' <<<"$out")"
assert_eq "connections refused across the command" 1 "$(grep -c '^refused' <<<"$out")"
out=$(conns --per-process)
info "RLT_CONNS=1, --per-process: $(echo $out)"
assert_eq "connections admitted with --per-process" 2 "$(grep -c '^connected' <<<"$out")"

# --- the segments: there while the command runs, gone after it ends ---
# run_bg: the launcher in the background with a command that sleeps; its segments seen.
run_bg() {
	bg "$1" "$RLTHROTTLE" "${FRONT[@]}" -d 1MiB/s -u 1MiB/s -- sleep 20
	LPID=$LAST_PID
	local i=0
	while [ "$(segs_of "$LPID" | wc -l)" -lt 3 ]; do
		[ $i -ge 200 ] && { segs_of "$LPID"; show "$T/$1.err"; fail "the command's segments did not appear ($1)"; }
		sleep 0.05; i=$((i + 1))
	done
	info "$1: launcher $LPID, segments: $(segs_of "$LPID" | tr '\n' ' ')"
	CPID=$(ps -o pid= --ppid "$LPID" | awk '{ print $1; exit }')
	[ -n "$CPID" ] || fail "no command under launcher $LPID"
}
gone() {
	[ -z "$(segs_of "$1")" ] || { segs_of "$1"; fail "segments of launcher $1 left after $2"; }
	info "no segment left after $2 (ok)"
}

"$RLTHROTTLE" "${FRONT[@]}" -d 1MiB/s -- sh -c 'exit 3'
assert_eq "the launcher's status is the command's" 3 "$?"

run_bg killed
kill -KILL "$CPID"
wait_pid "$LPID" 10
st=$?
assert_eq "status when the command is killed (128 + SIGKILL)" 137 "$st"
gone "$LPID" "SIGKILL of the command"

run_bg termed
kill -TERM "$LPID"
wait_pid "$LPID" 10
st=$?
assert_eq "status after SIGTERM to the launcher (the command ends of it)" 143 "$st"
kill -0 "$CPID" 2>/dev/null && fail "the command outlived SIGTERM to its launcher"
gone "$LPID" "SIGTERM to the launcher"

# the launcher itself killed: what is left is shown and removed by name
run_bg orphaned
kill -KILL "$LPID"
wait_pid "$LPID" 10
kill -KILL "$CPID" 2>/dev/null
name=$(segs_of "$LPID" | grep -E '^rlthrottle\.cmd-[0-9]+-[0-9]+$' | sed 's/^rlthrottle\.//')
[ -n "$name" ] || fail "no command segment left after SIGKILL of the launcher (expected one)"
list=$("$RLTHROTTLE" shm list)
assert_match "shm list says the launcher is gone" "^$name .*launcher $LPID, gone" "$list"
"$RLTHROTTLE" shm rm "$name" || fail "shm rm $name failed"
gone "$LPID" "shm rm $name"
exit 0
