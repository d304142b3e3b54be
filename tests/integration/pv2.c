/* pv2: moves N bytes over a loopback TCP connection with pwritev2 (or, with -R, receives them
 * with preadv2), offset -1, in 16 KiB calls; -n makes them RWF_NOWAIT (EAGAIN: waits with
 * poll and tries again). Prints "bytes=B elapsed_ns=NS fnv=HEX".
 *   pv2 -p PORT -n BYTES [-R] [-w] */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "itest.h"

int main(int argc, char **argv)
{
	int opt, port = -1, recvmode = 0, flags = 0, fd;
	size_t n = 0, done = 0;
	static unsigned char buf[16384];
	uint64_t h = 0xcbf29ce484222325ull, t0;

	while ((opt = getopt(argc, argv, "p:n:Rw")) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'n': n = (size_t)strtoull(optarg, NULL, 10); break;
		case 'R': recvmode = 1; break;
		case 'w': flags = RWF_NOWAIT; break;
		default: return 2;
		}
	}
	if (port < 0 || !n)
		return 2;
	fd = dial_loopback("127.0.0.1", port);
	if (fd < 0) {
		perror("pv2: connect");
		return 1;
	}
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	t0 = now_ns();
	while (done < n) {
		size_t want = n - done < sizeof buf ? n - done : sizeof buf;
		struct iovec v = {buf, want};
		ssize_t r = recvmode ? preadv2(fd, &v, 1, -1, flags) : pwritev2(fd, &v, 1, -1, flags);
		if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct pollfd p = {fd, recvmode ? POLLIN : POLLOUT, 0};
			poll(&p, 1, 100);
			continue;
		}
		if (r < 0) {
			fprintf(stderr, "pv2: %s: %s\n", recvmode ? "preadv2" : "pwritev2", strerror(errno));
			return 1;
		}
		if (r == 0)
			break;
		for (ssize_t i = 0; i < r; i++) {
			h ^= buf[i];
			h *= 0x100000001b3ull;
		}
		done += (size_t)r;
	}
	printf("bytes=%zu elapsed_ns=%llu fnv=%016llx\n", done, (unsigned long long)(now_ns() - t0),
	       (unsigned long long)h);
	close(fd);
	return done == n ? 0 : 1;
}
