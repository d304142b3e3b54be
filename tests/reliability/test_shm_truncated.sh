#!/bin/bash
# A shared segment cut short (os.truncate by its owner) or extended: `rlthrottle shm list` calls
# the first truncated and lists the second as usable, "longer than expected", never as a segment
# of another version; a new process refuses the truncated one (it would die of SIGBUS) with a
# message that says so, and uses the longer one.
# parallel-safe
source "$(dirname "$0")/../integration/lib.sh"
need_lib
need_bin acceptor conn
LAUNCHER=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$LAUNCHER" ] || fail "launcher not built: $LAUNCHER"
cut=itest-cut-$$ long=itest-long-$$
trap '"$LAUNCHER" shm rm "$cut" "$long" >/dev/null 2>&1; cleanup' EXIT
start_srv acc acceptor -D 20 -T 30
for n in "$cut" "$long"; do
	RLT_CONNECT="100/s scope=shared:$n" pre "$ITEST_BIN/conn" -p "$SRV_PORT" -n 3 >"$T/mk_$n.out" 2>&1 ||
		fail "creating $n: $(cat "$T/mk_$n.out")"
	[ -f "/dev/shm/rlthrottle.$n" ] || fail "no segment /dev/shm/rlthrottle.$n"
done
size=$(stat -c %s "/dev/shm/rlthrottle.$cut")
info "segments made, $size bytes each"
python3 -c 'import os, sys; os.truncate(sys.argv[1], int(sys.argv[2]))' "/dev/shm/rlthrottle.$cut" $((size - 64))
python3 -c 'import os, sys; os.truncate(sys.argv[1], int(sys.argv[2]))' "/dev/shm/rlthrottle.$long" $((size + 8192))

list=$("$LAUNCHER" shm list) || fail "shm list failed: $list"
lc=$(printf '%s\n' "$list" | grep "^$cut ")
ll=$(printf '%s\n' "$list" | grep "^$long ")
info "list: $lc"
info "list: $ll"
assert_match "shm list: the cut segment" "truncated" "$lc"
assert_nomatch "shm list: the cut segment is not listed as usable" 'RLT_CONNECT' "$lc"
assert_match "shm list: the longer segment" "longer than expected" "$ll"
assert_match "shm list: the longer segment keeps its rule" 'RLT_CONNECT token' "$ll"
assert_nomatch "shm list: no other version" "not of this version|another layout" "$ll"

rc=0
RLT_CONNECT="100/s scope=shared:$cut" pre "$ITEST_BIN/conn" -p "$SRV_PORT" -n 3 >"$T/cut.out" 2>"$T/cut.err" || rc=$?
info "cut: status $rc: $(cat "$T/cut.err")"
assert_eq "joining the cut segment: status" 125 "$rc"
assert_match "joining the cut segment: message" "is truncated .*SIGBUS" "$(cat "$T/cut.err")"
rc=0
RLT_CONNECT="100/s scope=shared:$long" pre "$ITEST_BIN/conn" -p "$SRV_PORT" -n 3 >"$T/long.out" 2>"$T/long.err" || rc=$?
info "long: status $rc: $(cat "$T/long.out") $(cat "$T/long.err")"
assert_eq "joining the longer segment: status" 0 "$rc"
assert_eq "joining the longer segment: connections" 3 "$(kv ok "$T/long.out")"

for n in 100 0; do
	python3 -c 'import os, sys; os.truncate(sys.argv[1], int(sys.argv[2]))' "/dev/shm/rlthrottle.$cut" $n
	lc=$("$LAUNCHER" shm list | grep "^$cut ")
	info "list: $lc"
	assert_match "shm list: the segment cut to $n bytes" "truncated" "$lc"
	assert_nomatch "shm list: cut to $n bytes is not a rights problem" "not readable" "$lc"
done
