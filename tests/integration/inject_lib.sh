# Sourced by the test_inject_*.sh tests (issue 21): the injector's driver, the minimal blob and
# the static test program, and a reader for the blob's report lines.
#   injected ARGS...     injectrun -r $T/rep trapblob_min -- ARGS...
#   rep KEY [N]          KEY's value in the N-th report line (1 by default; the blob appends
#                        one line per image that exits)
INJ=$ITEST_BIN/injectrun
BLOB=$ITEST_BIN/trapblob_min
PROG=$ITEST_BIN/trapprog
need_bin injectrun trapblob_min trapprog trapprog_taken
need_cmd busybox
BB=$(command -v busybox)
file -L "$BB" 2>/dev/null | grep -q 'statically linked' || skip "busybox is not static (busybox-static)"
injected() { "$INJ" -r "$T/rep" "$BLOB" -- "$@"; }
rep() { sed -n "${2:-1}p" "$T/rep" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$1=//p"; }
