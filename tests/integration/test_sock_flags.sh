#!/bin/bash
# Issue 17 rows 4-6: the flags a program passes are the kernel's to interpret, and a call the
# throttle must not reshape goes through whole. Under RLT_RECV="1MiB/s" and
# RLT_SEND="4MiB/s burst=64KiB" (sockflags.c, one process, loopback):
#  - recvmsg(MSG_ERRQUEUE|MSG_DONTWAIT) with stream data waiting: -1 EAGAIN, the 5 bytes left
#    for the next recv (row 4);
#  - recv(fd, NULL, 100, MSG_TRUNC) on TCP: 100, the bytes discarded (row 5);
#  - two send(MSG_ZEROCOPY) of 512 KiB: completion ids 0..1, as without the throttle (row 6;
#    before: 0..24, each send cut into pieces, each piece a completion of its own).
# Rows 4 and 5 held under the preload before; their failures were the system-call front's.
# fronts: preload seccomp
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sockflags
export RLT_RECV="1MiB/s" RLT_SEND="4MiB/s burst=64KiB"
assert_eq "MSG_ERRQUEUE with stream data waiting" "errqueue=-1/EAGAIN then=5" \
	"$(throttled "$ITEST_BIN/sockflags" errqueue)"
assert_eq "MSG_TRUNC with no buffer" "trunc=100/- left=0" "$(throttled "$ITEST_BIN/sockflags" trunc)"
out=$(throttled "$ITEST_BIN/sockflags" zerocopy)
[ "$out" = "zerocopy unsupported" ] && skip "SO_ZEROCOPY unsupported here"
assert_eq "MSG_ZEROCOPY completions" "zerocopy ids=0..1 sent=1048576" "$out"
