#!/bin/bash
# `rlthrottle top` against a running curl download under RLT_RECV="1MiB/s" (rlthrottle(1) COMMANDS): --once
# shows the rule, --json gives a rate over the last seconds within 10% of the limit, and in a
# real terminal (tmux, fixed size) the table renders and `q` quits it (the pane's process ends);
# at 80x24 every line fits, the rate achieved shows, a long RULE is cut with an ellipsis, and
# the keys s (sort) and + (interval) and the option -d act. The curl's page is removed when it
# exits.
# fronts: preload (the page under --seccomp, of a static program: test_top_seccomp)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin fnv
need_cmd curl python3 tmux
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
mkdir -p "$T/www"
"$ITEST_BIN/fnv" -g $((14 * 1048576)) >"$T/www/f.bin"
http_dir http "$T/www"
port=$HTTP_PORT
bg curl env LD_PRELOAD="$RLT_LIB" RLT_RECV="1MiB/s" RLT_SEND="64KiB/s port=1-65535 family=inet" curl -sS -o "$T/got.bin" "http://127.0.0.1:$port/f.bin"
cpid=$LAST_PID
# the burst (1 MiB) goes in the first second; seconds 2.. are paced
sleep 4.6
kill -0 "$cpid" 2>/dev/null || { show "$T/curl.err"; fail "curl ended early"; }
cpage=$(page_of "$cpid") && [ -e "$cpage" ] || fail "no page for curl ($cpid) in /dev/shm"

"$RLTHROTTLE" top --once "$cpid" >"$T/once.txt" 2>"$T/once.err" || { show "$T/once.err"; fail "top --once failed"; }
show "$T/once.txt"
grep -q "RECV *1MiB/s *1.00 MiB/s" "$T/once.txt" || fail "top --once does not show the rule and its limit"
grep -q $'\033' "$T/once.txt" && fail "top --once to a file wrote escape codes"
# stdout not a terminal: one frame even without --once
timeout 5 "$RLTHROTTLE" top "$cpid" >"$T/plain.txt" 2>&1 || fail "top to a pipe did not end by itself"
grep -q "RECV" "$T/plain.txt" || fail "top to a pipe printed no table"

"$RLTHROTTLE" top --json "$cpid" >"$T/top.json" 2>"$T/json.err" || { show "$T/json.err"; fail "top --json failed"; }
read -r lim rate last <<<"$(python3 - "$T/top.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = [r for p in d["processes"] for r in p["rules"] if r["variable"] == "RLT_RECV"][0]
h = r["history"]
print(r["limit_units_per_second"], sum(h[-3:]) / 3, r["rate_last_second"])
PY
)"
info "limit $lim B/s; last 3 s $rate B/s; last second $last B/s"
assert_eq "limit (B/s)" 1048576 "$lim"
assert_range "rate over the last 3 whole seconds (B/s)" 943718 1153434 "$rate"
assert_range "rate over the last second (B/s)" 891289 1205862 "$last"

# a real terminal: tmux on a private socket, 200x30
sock=$T/tmux.sock
# top_in_tmux COLS ROWS WHAT ARGS...: `rlthrottle top ARGS` in a COLS x ROWS tmux, once it shows
# its table (6 s at most; WHAT names the run in the failure).
top_in_tmux() {
	local i=0 cols=$1 rows=$2 what=$3
	shift 3
	tmux -S "$sock" new-session -d -x "$cols" -y "$rows" "$RLTHROTTLE top $*" || fail "tmux did not start"
	while ! tmux -S "$sock" capture-pane -p 2>/dev/null | grep -q "RECV"; do
		[ $i -ge 60 ] && { tmux -S "$sock" capture-pane -p; tmux -S "$sock" kill-server; fail "$what rendered no table"; }
		sleep 0.1; i=$((i + 1))
	done
}
# top_quits: q ends top and its tmux session (2 s at most)
top_quits() {
	local i=0
	tmux -S "$sock" send-keys q
	while tmux -S "$sock" has-session 2>/dev/null; do
		[ $i -ge 40 ] && { tmux -S "$sock" kill-server; fail "top did not quit on q"; }
		sleep 0.05; i=$((i + 1))
	done
}
top_in_tmux 200 30 "top in tmux" "$cpid"
sleep 1.2 # a second frame
tmux -S "$sock" capture-pane -p >"$T/screen.txt"
show "$T/screen.txt"
grep -q "LIMIT" "$T/screen.txt" || fail "no heading on the screen"
grep -q "RECV *1MiB/s *1.00 MiB/s" "$T/screen.txt" || fail "the rule is not on the screen"
top_quits
info "q quit top (the tmux session ended with it)"

# 80x24, as a terminal opens: the rate of the last second shows, nothing wraps
top_in_tmux 80 24 "top at 80x24" -d 0.5 "$cpid"
sleep 1.2
tmux -S "$sock" capture-pane -p >"$T/s80.txt"
show "$T/s80.txt"
grep -q "every 0.5s" "$T/s80.txt" || fail "top -d 0.5: the title does not say every 0.5s"
grep -q "LAST 1s" "$T/s80.txt" || fail "no LAST 1s column at 80 columns"
grep -Eq "RECV +1MiB/s +1.00 MiB/s +[0-9.]+ (KiB|MiB)/s" "$T/s80.txt" || fail "the rate achieved is not on the 80-column screen"
grep -Eq "SEND +64KiB/s por(…|~) " "$T/s80.txt" || fail "the long RULE is not cut with an ellipsis"
wide=$(python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")))' "$T/s80.txt")
assert_le "widest line at 80 columns (characters)" 80 "$wide"
# screen_shows ERE: the screen shows ERE within 3 s
screen_shows() {
	local i=0
	until tmux -S "$sock" capture-pane -p | grep -Eq "$1"; do
		[ $i -ge 60 ] && return 1
		sleep 0.05; i=$((i + 1))
	done
}
tmux -S "$sock" send-keys s
screen_shows "by rate" || fail "s did not change the sort"
tmux -S "$sock" send-keys +
screen_shows "every 1s" || fail "+ did not double the interval"
top_quits
info "80x24: the rate shows, RULE cut with an ellipsis, s and + act"

kill "$cpid"; wait_pid "$cpid" 5
[ -e "$cpage" ] && fail "curl's page is still there after it was killed by SIGTERM"
info "curl's page removed at its end"
exit 0
