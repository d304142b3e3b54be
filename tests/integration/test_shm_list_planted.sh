#!/bin/bash
# Issue 17, minor: `rlthrottle shm list` says what a name under /dev/shm is when it is not a
# segment: a symbolic link another user planted there was shown as "uid 0 mode 0000 (not
# readable by us)"; it is "a symbolic link of uid N, not a segment", and `shm rm` removes it.
# fronts: preload (the launcher's own command: no program is throttled)
# parallel-safe
. "$(dirname "$0")/lib.sh"
RLT=$(dirname "$RLT_LIB")/rlthrottle
name=itest-planted-$$
trap 'rm -f /dev/shm/rlthrottle.$name; cleanup' EXIT
ln -s /etc/passwd "/dev/shm/rlthrottle.$name"
chown -h nobody "/dev/shm/rlthrottle.$name" 2>/dev/null || true
owner=$(stat -c %u "/dev/shm/rlthrottle.$name" 2>/dev/null || echo 0)
"$RLT" shm list >"$T/list" 2>&1 || { show "$T/list"; fail "shm list failed"; }
line=$(grep -- "^$name " "$T/list")
info "listed: $line"
assert_match "the planted link is said to be one" "a symbolic link of uid $owner, not a segment" "$line"
"$RLT" shm rm "$name" || fail "shm rm of the planted link failed"
[ -e "/dev/shm/rlthrottle.$name" ] || [ -L "/dev/shm/rlthrottle.$name" ] && fail "the link is still there"
exit 0
