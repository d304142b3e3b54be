/* rtt_ping: round trips of one byte on one TCP loopback connection, each timed alone, for the
 * network-conditions part of make bench (tests/bench/net.sh).
 *
 *   rtt_ping -p PORT [-n ROUNDS] [-w WARMUP]
 * Connects to 127.0.0.1:PORT (an echo of each byte: tests/integration/pingpong.c's server, or
 * delay_relay in front of it), makes WARMUP round trips it does not count (default 3: the
 * first ones pay for the connection's slow paths), then ROUNDS timed ones (default 100).
 *
 *   rtt_ping -S -P PORTFILE [-n COUNT] [-i INTERVAL_US]     a stream's server
 *   rtt_ping -s -p PORT                                      its client
 * The one-way delay of a stream's pieces: the server, once the client's first byte came, sends
 * COUNT (default 60) 8-byte pieces, each its CLOCK_MONOTONIC at sending, one every INTERVAL_US
 * (default 2000), then closes; the client reads to the end and times each piece from its stamp
 * (one host, one clock). So each piece arrives while those before it may still wait.
 *
 * Output of a client, one line, milliseconds: n= conn_ms= min_ms= p10_ms= p50_ms= p90_ms=
 * p99_ms= max_ms= mean_ms= (percentiles by nearest rank).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS 100000

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* nearest rank: the smallest value with at least p of the sample at or below it */
static double pct_ms(const uint64_t *v, long n, double p)
{
	long k = (long)(p * (double)n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return (double)v[k - 1] / 1e6;
}

static int round_trip(int fd)
{
	char b = 'x';
	ssize_t r;
	while ((r = send(fd, &b, 1, 0)) < 0 && errno == EINTR) {}
	if (r != 1)
		return -1;
	while ((r = recv(fd, &b, 1, 0)) < 0 && errno == EINTR) {}
	return r == 1 ? 0 : -1;
}

static int stream_server(const char *portfile, long count, long interval_us)
{
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof a;
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 4) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &len) < 0) {
		perror("rtt_ping: listen");
		return 1;
	}
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", portfile);
	FILE *f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", ntohs(a.sin_port)) < 0 || fclose(f) != 0 || rename(tmp, portfile) != 0) {
		perror("rtt_ping: port file");
		return 1;
	}
	int c = accept(l, NULL, NULL);
	char go;
	if (c < 0 || recv(c, &go, 1, 0) != 1) {
		perror("rtt_ping: accept");
		return 1;
	}
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	uint64_t next = now_ns();
	for (long i = 0; i < count; i++) {
		struct timespec ts = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
		uint64_t stamp = now_ns();
		if (send(c, &stamp, sizeof stamp, MSG_NOSIGNAL) != (ssize_t)sizeof stamp) {
			perror("rtt_ping: send");
			return 1;
		}
		next += (uint64_t)interval_us * 1000u;
	}
	close(c);
	return 0;
}

/* The stream's client: each piece's delay from its stamp to the read that completed it. */
static long stream_client(int fd, uint64_t *d)
{
	char buf[8 * 1024];
	size_t have = 0;
	long n = 0;
	if (send(fd, "g", 1, 0) != 1)
		return -1;
	for (;;) {
		ssize_t r = recv(fd, buf + have, sizeof buf - have, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return n;
		uint64_t now = now_ns();
		have += (size_t)r;
		size_t off = 0;
		for (; have - off >= 8 && n < MAX_ROUNDS; off += 8) {
			uint64_t stamp;
			memcpy(&stamp, buf + off, sizeof stamp);
			d[n++] = now > stamp ? now - stamp : 0;
		}
		memmove(buf, buf + off, have - off);
		have -= off;
	}
}

int main(int argc, char **argv)
{
	static uint64_t rtt[MAX_ROUNDS];
	int opt, port = -1, one = 1, serve = 0, stream = 0;
	long rounds = -1, warm = 3, interval_us = 2000;
	const char *portfile = NULL;
	while ((opt = getopt(argc, argv, "p:n:w:SsP:i:")) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'n': rounds = atol(optarg); break;
		case 'w': warm = atol(optarg); break;
		case 'S': serve = 1; break;
		case 's': stream = 1; break;
		case 'P': portfile = optarg; break;
		case 'i': interval_us = atol(optarg); break;
		default: goto usage;
		}
	}
	alarm(120);
	if (serve) {
		if (!portfile || interval_us < 0)
			goto usage;
		return stream_server(portfile, rounds < 0 ? 60 : rounds, interval_us);
	}
	if (rounds < 0)
		rounds = 100;
	if (port <= 0 || port > 65535 || rounds < 1 || rounds > MAX_ROUNDS || warm < 0)
		goto usage;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	uint64_t t0 = now_ns();
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		perror("rtt_ping: connect");
		return 1;
	}
	uint64_t conn = now_ns() - t0;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (stream) {
		rounds = stream_client(fd, rtt);
		if (rounds <= 0) {
			fprintf(stderr, "rtt_ping: the stream failed or was empty\n");
			return 1;
		}
		warm = 0;
	}
	for (long i = 0; i < warm; i++)
		if (round_trip(fd) < 0) {
			fprintf(stderr, "rtt_ping: warm-up round trip %ld failed\n", i);
			return 1;
		}
	double sum = 0;
	for (long i = 0; i < rounds; i++) {
		if (stream) {
			sum += (double)rtt[i];
			continue;
		}
		uint64_t t = now_ns();
		if (round_trip(fd) < 0) {
			fprintf(stderr, "rtt_ping: round trip %ld failed\n", i);
			return 1;
		}
		rtt[i] = now_ns() - t;
		sum += (double)rtt[i];
	}
	close(fd);
	qsort(rtt, (size_t)rounds, sizeof rtt[0], cmp);
	printf("n=%ld conn_ms=%.3f min_ms=%.3f p10_ms=%.3f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f "
	       "max_ms=%.3f mean_ms=%.3f\n",
	       rounds, (double)conn / 1e6, (double)rtt[0] / 1e6, pct_ms(rtt, rounds, 0.10),
	       pct_ms(rtt, rounds, 0.50), pct_ms(rtt, rounds, 0.90), pct_ms(rtt, rounds, 0.99),
	       (double)rtt[rounds - 1] / 1e6, sum / (double)rounds / 1e6);
	return 0;
usage:
	fprintf(stderr, "usage: rtt_ping -p PORT [-n ROUNDS (1..%d)] [-w WARMUP] | "
	                "rtt_ping -S -P PORTFILE [-n COUNT] [-i INTERVAL_US] | rtt_ping -s -p PORT\n",
	        MAX_ROUNDS);
	return 2;
}
