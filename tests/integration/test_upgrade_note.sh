#!/bin/bash
# After an upgrade, a process started by the older rlthrottle publishes the older page layout:
# `stats`, `top` and `set` say so in one line (which layout, older or newer, restart it) rather
# than call the page bad or stay silent. The older page is made here as that version wrote its
# first words (magic, layout 3) for a live process of ours.
# fronts: preload (the readers' side only: no throttled call is made)
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
R=$(dirname "$RLT_LIB")/rlthrottle

bg sleeper sleep 30
sp=$LAST_PID
page=$(python3 - "$sp" <<'PY'
import os, struct, sys
pid = int(sys.argv[1])
start = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[19]
path = "/dev/shm/rlthrottle-%d-%d-%s" % (os.geteuid(), pid, start)
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
os.write(fd, struct.pack("<QII", 0x31425550544c52, 3, 0) + b"\0" * 16368)
os.close(fd)
print(path)
PY
) || fail "could not make the older page"

rc=0; "$R" stats "$sp" >"$T/out" 2>"$T/err" || rc=$?
info "stats $sp -> $rc: $(cat "$T/err")"
assert_eq "stats PID of an older page: status" 2 "$rc"
assert_eq "stats PID: lines on stderr" 1 "$(wc -l <"$T/err")"
assert_match "stats PID says which layout and what to do" "layout 3.*older rlthrottle.*restart" "$(cat "$T/err")"

rc=0; "$R" stats >"$T/all" 2>"$T/err" || rc=$?
assert_eq "stats (all): status" 0 "$rc"
# (other processes of this user may publish other layouts too: the first is named, the rest counted)
assert_match "stats (all) says it left one out" "left out: [0-9]+: publishes page layout [0-9]+, this rlthrottle reads" "$(cat "$T/err")"
assert_eq "stats (all): one line" 1 "$(wc -l <"$T/err")"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/all" || fail "stats (all) is not JSON"

"$R" top --once >"$T/top" 2>&1 || fail "top --once failed"
assert_match "top says it left one out" "left out: [0-9]+: publishes page layout [0-9]+" "$(cat "$T/top")"

rc=0; "$R" set "$sp" recv 1MiB/s >"$T/out" 2>"$T/err" || rc=$?
assert_eq "set on an older page: status" 2 "$rc"
assert_match "set says so" "layout 3.*restart" "$(cat "$T/err")"
rm -f "$page"
info "ok"
