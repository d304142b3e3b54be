#!/bin/bash
# Publishing under --seccomp: a static busybox wget downloading at 1MiB/s publishes its own page
# from the handler inside it;
# `rlthrottle top --json` shows it with a rate within 10% of the limit, and the page goes when
# the process ends.
# fronts: seccomp (a static busybox wget: the page of the system-call front; the preload's is test_top's)
. "$(dirname "$0")/lib.sh"
need_cmd busybox python3
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$RLTHROTTLE" ] || fail "launcher not built: $RLTHROTTLE"
head -c $((7 * 1048576)) /dev/urandom >"$T/f.bin"
http_dir http "$T"
port=$HTTP_PORT
bg wget "$RLTHROTTLE" --seccomp -d 1MiB/s -- busybox wget -q -O "$T/out.bin" "http://127.0.0.1:$port/f.bin"
lpid=$LAST_PID
sleep 4.3
kill -0 "$lpid" 2>/dev/null || { show "$T/wget.err"; fail "the download ended early"; }
wpid=$(ps -o pid= --ppid "$lpid" | tr -d ' ' | while read -r p; do [ "$(cat /proc/$p/comm 2>/dev/null)" = busybox ] && echo "$p"; done | head -1)
[ -n "$wpid" ] || fail "no busybox child of the launcher"
wpage=$(wait_page "$wpid") || fail "no page of busybox ($wpid)"
"$RLTHROTTLE" top --json "$wpid" >"$T/top.json" 2>"$T/top.err" || { show "$T/top.err"; fail "top --json $wpid failed"; }
read -r pid lim rate <<<"$(python3 - "$T/top.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["processes"][0]
r = [r for r in p["rules"] if r["variable"] == "RLT_RECV"][0]
print(p["pid"], r["limit_units_per_second"], sum(r["history"][-2:]) / 2)
PY
)"
info "busybox $wpid: page of $pid, limit $lim B/s, last 2 s $rate B/s"
assert_eq "published by the process itself" "$wpid" "$pid"
assert_eq "limit (B/s)" 1048576 "$lim"
assert_range "rate over the last 2 whole seconds (B/s)" 943718 1153434 "$rate"
wait_pid "$lpid" 20 || fail "the download did not finish"
sha256_eq "$T/f.bin" "$T/out.bin"
[ -e "$wpage" ] && fail "the page of $wpid is still there after its end"
info "the process's page removed at its end"
exit 0
