#!/bin/bash
# Another preloaded library whose constructor connects and sends before (or after) ours is
# initialised (libfaketime-style): no crash, no deadlock, the program runs, the data arrives.
# fronts: preload (the order of LD_PRELOAD libraries and their constructors: the preload's own start-up)
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink
CC=${CC:-cc}
command -v "$CC" >/dev/null || CC=cc
cat >"$T/ctor.c" <<'C'
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
__attribute__((constructor)) static void early_connect(void)
{
	const char *p = getenv("CTOR_PORT");
	if (!p) return;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)atoi(p));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
		static const char msg[] = "hello from a constructor\n";
		ssize_t w = send(fd, msg, sizeof msg - 1, 0);
		(void)w;
	}
	close(fd);
}
C
$CC -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -shared -fPIC -o "$T/ctor.so" "$T/ctor.c" || fail "cannot build the constructor library"
for order in "$T/ctor.so $RLT_LIB" "$RLT_LIB $T/ctor.so"; do
	start_srv sink sink
	spid=$LAST_PID
	rc=0
	CTOR_PORT=$SRV_PORT RLT_CONNECT="100/s" RLT_SEND="1MiB/s" RLT_CONNS=10 \
		timeout 10 env LD_PRELOAD="$order" sh -c 'echo RAN' >"$T/out" 2>"$T/err" || rc=$?
	wait_pid "$spid" 5
	[ $rc -eq 124 ] && fail "LD_PRELOAD=\"$order\": deadlocked (killed after 10 s)"
	[ $rc -eq 0 ] || { show "$T/err"; fail "LD_PRELOAD=\"$order\": exit status $rc"; }
	assert_eq "program output ($order)" RAN "$(cat "$T/out")"
	assert_eq "bytes from the constructor ($order)" 25 "$(kv bytes "$T/sink.out")"
done
