/* timeo: one blocking call on a socket with SO_RCVTIMEO or SO_SNDTIMEO set, to a server that
 * neither sends nor reads (acceptor -H).
 *
 *   timeo recv -p PORT -t MS            recv 1000 bytes: nothing comes
 *   timeo send -p PORT -t MS -n BYTES   send BYTES in one call: the peer does not read
 * Output: result=R errno=NAME elapsed_ns=NS (elapsed of the one call)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "itest.h"

int main(int argc, char **argv)
{
	int opt, port = -1;
	long ms = -1;
	size_t n = 16u << 20;

	while ((opt = getopt(argc, argv, "p:t:n:")) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 't': ms = atol(optarg); break;
		case 'n': n = (size_t)atol(optarg); break;
		default: goto usage;
		}
	}
	if (optind >= argc || port <= 0 || ms < 0)
		goto usage;
	const char *mode = argv[optind];
	int do_send = !strcmp(mode, "send");
	if (!do_send && strcmp(mode, "recv"))
		goto usage;
	alarm(60);

	int fd = dial_loopback(NULL, port);
	if (fd < 0) {
		perror("timeo: connect");
		return 1;
	}
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
	int small = 65536;
	if (setsockopt(fd, SOL_SOCKET, do_send ? SO_SNDTIMEO : SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
	    (do_send && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small) != 0)) {
		perror("timeo: setsockopt");
		return 1;
	}
	char *buf = calloc(1, do_send ? n : 1000);
	if (!buf)
		return 1;
	uint64_t t0 = now_ns();
	ssize_t r = do_send ? send(fd, buf, n, 0) : recv(fd, buf, 1000, 0);
	int e = r < 0 ? errno : 0;
	uint64_t t1 = now_ns();
	printf("result=%zd errno=%s elapsed_ns=%llu\n", r, e ? ename(e) : "none",
	       (unsigned long long)(t1 - t0));
	close(fd);
	return 0;
usage:
	fprintf(stderr, "usage: timeo recv|send -p PORT -t MS [-n BYTES]\n");
	return 2;
}
