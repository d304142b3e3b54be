/* callcost: nanoseconds per write() call on /dev/null and on a connected TCP loopback socket
 * (drained by a thread of this process), optionally with idle sockets open.
 *
 *   callcost [-n CALLS] [-i IDLE_SOCKETS]
 * Output: devnull_ns=X socket_ns=Y (median of 5 rounds each)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

static void *drain(void *arg)
{
	int fd = *(int *)arg;
	static char b[1 << 16];
	for (;;) {
		ssize_t r = read(fd, b, sizeof b);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) break;
	}
	return NULL;
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

static double time_writes(int fd, long n)
{
	double r[5];
	char c = 'x';
	for (int k = 0; k < 5; k++) {
		uint64_t t0 = now_ns();
		for (long i = 0; i < n; i++)
			if (write(fd, &c, 1) != 1) { perror("callcost: write"); exit(1); }
		r[k] = (double)(now_ns() - t0) / (double)n;
	}
	qsort(r, 5, sizeof r[0], cmp);
	return r[2];
}

int main(int argc, char **argv)
{
	long n = 200000;
	int opt, idle = 0;
	while ((opt = getopt(argc, argv, "n:i:")) != -1) {
		switch (opt) {
		case 'n': n = atol(optarg); break;
		case 'i': idle = atoi(optarg); break;
		default: fprintf(stderr, "usage: callcost [-n CALLS] [-i IDLE_SOCKETS]\n"); return 2;
		}
	}
	alarm(120);
	for (int i = 0; i < idle; i++)
		if (socket(AF_INET, SOCK_STREAM, 0) < 0) { perror("socket"); return 1; }
	int dn = open("/dev/null", O_WRONLY);
	if (dn < 0) { perror("/dev/null"); return 1; }
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	socklen_t len = sizeof a;
	if (bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 1) < 0) { perror("bind"); return 1; }
	getsockname(l, (struct sockaddr *)&a, &len);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(c, (struct sockaddr *)&a, sizeof a) < 0) { perror("connect"); return 1; }
	int s = accept(l, NULL, NULL);
	pthread_t th;
	pthread_create(&th, NULL, drain, &s);
	double d = time_writes(dn, n);
	double k = time_writes(c, n / 4);
	close(c);
	pthread_join(th, NULL);
	printf("devnull_ns=%.1f socket_ns=%.1f\n", d, k);
	return 0;
}
