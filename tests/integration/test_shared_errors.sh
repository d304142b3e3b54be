#!/bin/bash
# scope=shared:NAME refusals, each before main with status 125 and one clear line:
# different params than the segment's creator, a NAME that could escape /dev/shm, a segment
# that others may write. And `rlthrottle shm list` / `shm rm`.
# fronts: preload seccomp
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3
LAUNCHER=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$LAUNCHER" ] || fail "launcher not built: $LAUNCHER"
name=itest-err-$$
trap 'rm -f /dev/shm/rlthrottle.$name /dev/shm/rlthrottle.$name-w; cleanup' EXIT

run() { # VAR=RULE: runs /bin/echo RAN preloaded; sets rc, out, err
	rc=0
	( export "$@"; throttled /bin/echo RAN ) >"$T/out" 2>"$T/err" || rc=$?
	out=$(cat "$T/out"); err=$(cat "$T/err")
}

run RLT_CONNECT="10/s scope=shared:$name"
assert_eq "first process (creates the segment)" "0 RAN" "$rc $out"
run RLT_CONNECT="10/s scope=shared:$name"
assert_eq "same params again" "0 RAN" "$rc $out"

run RLT_CONNECT="20/s burst=3 scope=shared:$name"
assert_eq "different params: status" 125 "$rc"
assert_eq "different params: the program did not run" "" "$out"
assert_match "different params: names the variable and rule" 'RLT_CONNECT="20/s burst=3 scope=shared:' "$err"
assert_match "different params: says what differs" 'rate 10/s there, 20/s here; burst 10 there, 3 here' "$err"
assert_match "different params: says who wins" 'first process to name a scope sets its params' "$err"
run RLT_SEND="10msg/s scope=shared:$name"
assert_match "another unit" 'counts calls there, messages here' "$err"

for bad in "a/b" "../etc" ".." "." "x y"; do
	run RLT_CONNECT="10/s scope=shared:$bad"
	assert_eq "NAME \"$bad\": status" 125 "$rc"
	assert_match "NAME \"$bad\": a parse error naming the variable" '^rlthrottle: RLT_CONNECT=.*scope' "$err"
done

# a segment made by hand with mode 0666 (as an attacker sharing /dev/shm would)
python3 -c 'import os,sys; fd = os.open("/dev/shm/rlthrottle." + sys.argv[1], os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o666); os.fchmod(fd, 0o666); os.ftruncate(fd, 4096)' "$name-w"
run RLT_CONNECT="10/s scope=shared:$name-w"
assert_eq "writable by others: status" 125 "$rc"
assert_match "writable by others: refused" 'writable by others \(mode 0666\): refused' "$err"

list=$("$LAUNCHER" shm list) || fail "shm list failed"
info "shm list:"; printf '%s\n' "$list" | sed 's/^/info:   /'
assert_match "shm list shows the segment" "^$name +RLT_CONNECT token 10/s burst=10 +[0-9]+ " "$list"
assert_match "shm list shows the unreadable one" "^$name-w " "$list"
"$LAUNCHER" shm rm "$name" "$name-w" || fail "shm rm failed"
[ -e "/dev/shm/rlthrottle.$name" ] && fail "shm rm left the segment"
rc=0; "$LAUNCHER" shm rm "../x" 2>"$T/err" || rc=$?
assert_eq "shm rm of a bad NAME: status" 1 "$rc"
# after rm, the next process creates it afresh with its own params
run RLT_CONNECT="20/s burst=3 scope=shared:$name"
assert_eq "after shm rm, new params" "0 RAN" "$rc $out"
