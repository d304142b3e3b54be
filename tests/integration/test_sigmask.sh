#!/bin/bash
# A program's signal mask stays its own: a signal it blocks with sigprocmask or pthread_sigmask
# is held and pending until it unblocks it, and the mask it reads back is the one it set. Under
# the system-call front these calls are trapped (SIGSYS must stay deliverable), and the mask the
# kernel restores when the handler returns is the one that counts: a mask set inside the
# handler was undone, and the blocked signal ran at once.
# fronts: preload seccomp
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_bin sigmask
RLT_SEND="1MiB/s" throttled "$ITEST_BIN/sigmask" >"$T/out" 2>"$T/err" || { show "$T/out" "$T/err"; fail "sigmask failed"; }
show "$T/out"
assert_eq "checks failed" 0 "$(grep -c '^FAIL' "$T/out")"
assert_eq "checks passed" 10 "$(grep -c '^ok' "$T/out")"
