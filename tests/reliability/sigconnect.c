/* sigconnect: blocking calls the throttle delays while SIGALRM (no SA_RESTART) comes every US
 * microseconds; the handler writes one byte to /dev/null. rlthrottle(7) BEHAVIOUR: the throttle never makes a
 * call fail with EINTR itself.
 *
 *   sigconnect -p PORT -m connect|send [-n N] [-b BYTES] [-i US]
 *   connect  N blocking connects to 127.0.0.1:PORT, each socket closed after (default N 12).
 *   send     one connection, N blocking sends of BYTES bytes each (default 2000), byte k of
 *            the stream being 'a' + k % 26; the socket is shut down for writing at the end.
 * Output: one line
 *   ok=A eintr=B other=C moved=D signals=E
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "itest.h"

static int devnull = -1;
static volatile sig_atomic_t signals;

static void on_alarm(int sig)
{
	(void)sig;
	int e = errno;
	signals++;
	if (write(devnull, "x", 1) < 0) {
	}
	errno = e;
}

int main(int argc, char **argv)
{
	int port = 0, n = 12, us = 5000, opt;
	size_t bytes = 2000;
	const char *mode = "connect";
	unsigned long long ok = 0, eintr = 0, other = 0, moved = 0;

	while ((opt = getopt(argc, argv, "p:m:n:b:i:")) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'm': mode = optarg; break;
		case 'n': n = atoi(optarg); break;
		case 'b': bytes = (size_t)atol(optarg); break;
		case 'i': us = atoi(optarg); break;
		default: return 2;
		}
	}
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	char *buf = malloc(bytes ? bytes : 1);
	if (port <= 0 || devnull < 0 || !buf || n <= 0 || n > 10000)
		return 2;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm; /* no SA_RESTART: an interrupted call fails with EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = -1;
	if (strcmp(mode, "send") == 0) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
			return 2;
	}
	struct itimerval it = {{0, us}, {0, us}};
	setitimer(ITIMER_REAL, &it, NULL);
	unsigned long long k = 0;
	for (int i = 0; i < n; i++) {
		int rc;
		if (fd < 0) {
			int c = socket(AF_INET, SOCK_STREAM, 0);
			if (c < 0)
				return 2;
			rc = connect(c, (struct sockaddr *)&a, sizeof a);
			close(c);
		} else {
			for (size_t b = 0; b < bytes; b++)
				buf[b] = (char)('a' + (k + b) % 26);
			ssize_t w = send(fd, buf, bytes, MSG_NOSIGNAL);
			if (w > 0) {
				moved += (unsigned long long)w;
				k += (unsigned long long)w;
			}
			rc = w == (ssize_t)bytes ? 0 : -1;
			if (w >= 0 && w < (ssize_t)bytes)
				errno = EIO; /* a short send: counted as other */
		}
		if (rc == 0)
			ok++;
		else if (errno == EINTR)
			eintr++;
		else
			other++;
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	if (fd >= 0) {
		shutdown(fd, SHUT_WR);
		close(fd);
	}
	printf("ok=%llu eintr=%llu other=%llu moved=%llu signals=%d\n", ok, eintr, other, moved,
	       (int)signals);
	return 0;
}
