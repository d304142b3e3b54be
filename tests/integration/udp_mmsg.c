/* udp_mmsg N: sends N numbered datagrams with sendmmsg, in batches of 50, from one UDP socket to
 * another on 127.0.0.1, and reads each batch back with recvmmsg (non-blocking: on loopback a
 * datagram is queued when sendmmsg returns). Prints "received K sum S" (S: the sum of the
 * numbers received), so that a loss condition's drops show, and the same seed gives the same
 * S (test_net_loss.sh).
 * udp_mmsg late udp|tcp: a connected pair on 127.0.0.1 (a datagram pair, or a TCP connection),
 * two sends of 6 and 4 bytes (one of 10 on TCP), then one blocking recvmmsg of 2 messages
 * (MSG_WAITFORONE): prints
 * "late n=N bytes=B after_ms=T", T from the sends to its return (test_net_latency_mmsg.sh). */
#include "itest.h"

#define BATCH 50

/* A connected pair on 127.0.0.1: *s sends, *r receives (a datagram pair, or a TCP connection). */
static int pair(int stream, int *s, int *r)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	int type = stream ? SOCK_STREAM : SOCK_DGRAM;
	int l = socket(AF_INET, type, 0);

	*s = socket(AF_INET, type, 0);
	*r = l;
	if (l < 0 || *s < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) != 0 || (stream && listen(l, 1) != 0) ||
	    connect(*s, (struct sockaddr *)&a, sizeof a) != 0 ||
	    (stream && (*r = accept(l, NULL, NULL)) < 0)) {
		perror("udp_mmsg: pair");
		return -1;
	}
	return 0;
}

static int sliced(void)
{
	struct iovec io[2] = {{"abcdef", 6}, {"ghij", 4}};
	struct mmsghdr v[2];
	char b[32];
	int s, r, got = 0;

	if (pair(1, &s, &r) != 0)
		return 1;
	memset(v, 0, sizeof v);
	for (int i = 0; i < 2; i++)
		v[i].msg_hdr = (struct msghdr){.msg_iov = &io[i], .msg_iovlen = 1};
	uint64_t t0 = now_ns();
	int n = sendmmsg(s, v, 2, 0);
	long ms = (long)((now_ns() - t0) / 1000000u);
	for (int k; got < 10 && (k = (int)recv(r, b, sizeof b, 0)) > 0;)
		got += k;
	printf("sliced sent=%d bytes=%d ms=%ld\n", n, got, ms);
	return n == 2 ? 0 : 1;
}

static int late(int stream)
{
	char in[2][16];
	struct iovec io[2] = {{in[0], sizeof in[0]}, {in[1], sizeof in[1]}};
	struct mmsghdr v[2];
	int s, r;

	if (pair(stream, &s, &r) != 0)
		return 1;
	memset(v, 0, sizeof v);
	for (int i = 0; i < 2; i++)
		v[i].msg_hdr = (struct msghdr){.msg_iov = &io[i], .msg_iovlen = 1};
	uint64_t t0 = now_ns();
	/* a stream in one send: two could come to the line as two pieces, the second due later */
	if (stream ? send(s, "abcdefghij", 10, 0) != 10
	           : send(s, "abcdef", 6, 0) != 6 || send(s, "ghij", 4, 0) != 4) {
		perror("udp_mmsg late: send");
		return 1;
	}
	int n = recvmmsg(r, v, 2, MSG_WAITFORONE, NULL);
	long ms = (long)((now_ns() - t0) / 1000000u);
	unsigned bytes = 0;
	for (int i = 0; i < n; i++)
		bytes += v[i].msg_len;
	printf("late n=%d bytes=%u after_ms=%ld\n", n, bytes, ms);
	return n > 0 ? 0 : 1;
}

static int share(int n, long ms)
{
	int s, r, delayed = 0;
	char b[16];

	if (pair(0, &s, &r) != 0)
		return 1;
	for (int i = 0; i < n; i++) {
		uint64_t t0 = now_ns();
		if (send(s, "x", 1, 0) != 1 || recv(r, b, sizeof b, 0) != 1) {
			perror("udp_mmsg share");
			return 1;
		}
		delayed += (long)((now_ns() - t0) / 1000000u) >= ms;
	}
	printf("share delayed=%d of=%d\n", delayed, n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "late"))
		return late(!strcmp(argv[2], "tcp"));
	if (argc > 1 && !strcmp(argv[1], "sliced"))
		return sliced();
	if (argc > 3 && !strcmp(argv[1], "share"))
		return share(atoi(argv[2]), atol(argv[3]));
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	int r = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0), s = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	static char out[BATCH][16], in[BATCH][16];
	struct mmsghdr sv[BATCH], rv[BATCH];
	struct iovec so[BATCH], ri[BATCH];
	long received = 0, sum = 0;

	if (r < 0 || s < 0 || bind(r, (struct sockaddr *)&a, sizeof a) != 0 ||
	    getsockname(r, (struct sockaddr *)&a, &al) != 0) {
		perror("udp_mmsg: socket");
		return 1;
	}
	for (int base = 0; base < n; base += BATCH) {
		int k = n - base < BATCH ? n - base : BATCH;
		memset(sv, 0, sizeof sv);
		for (int i = 0; i < k; i++) {
			int len = snprintf(out[i], sizeof out[i], "%d", base + i);
			so[i] = (struct iovec){out[i], (size_t)len};
			sv[i].msg_hdr = (struct msghdr){.msg_name = &a, .msg_namelen = sizeof a,
			                                .msg_iov = &so[i], .msg_iovlen = 1};
		}
		if (sendmmsg(s, sv, (unsigned)k, 0) != k) {
			perror("udp_mmsg: sendmmsg");
			return 1;
		}
		for (;;) {
			memset(rv, 0, sizeof rv);
			for (int i = 0; i < BATCH; i++) {
				ri[i] = (struct iovec){in[i], sizeof in[i] - 1};
				rv[i].msg_hdr = (struct msghdr){.msg_iov = &ri[i], .msg_iovlen = 1};
			}
			int got = recvmmsg(r, rv, BATCH, 0, NULL);
			if (got < 0 && errno == EAGAIN)
				break;
			if (got < 0) {
				perror("udp_mmsg: recvmmsg");
				return 1;
			}
			for (int i = 0; i < got; i++) {
				in[i][rv[i].msg_len] = '\0';
				sum += atol(in[i]);
				received++;
			}
		}
	}
	printf("received %ld sum %ld\n", received, sum);
	return 0;
}
