/* delay_relay: the reference that delays in the network's place, for the network-conditions part
 * of make bench (tests/bench/net.sh) where the kernel has no netem. A TCP relay on loopback in
 * the manner of toxiproxy's latency toxic: each chunk it reads from the server is held DUR, then
 * passed to the client; what the client sends goes on at once. So a round trip grows by DUR, as
 * under rlthrottle's latency, which delays what arrives, not what leaves.
 *
 *   delay_relay -P PORTFILE -u UPSTREAM_PORT [-d DUR_NS] [-j JITTER_NS] [-D uniform|normal]
 *               [-s SEED] [-T SECONDS]
 * Listens on 127.0.0.1 (an ephemeral port, written to PORTFILE), accepts one connection,
 * connects to 127.0.0.1:UPSTREAM_PORT, relays until either side ends; at most SECONDS
 * (default 120).
 *
 * A chunk is what one read of the server's side returns, stamped with the kernel's receive time
 * of its last byte (SO_TIMESTAMPNS), the same stamp rlthrottle takes (preload/net_latency.c
 * head_arrival). Its due time mirrors src/net_cond.c rlt__net_latency_due: DUR plus a jitter
 * drawn per chunk, uniform over [-J, J] in whole nanoseconds, or normal by Irwin-Hall (twelve
 * 20-bit uniforms less six, times J: J is one deviation, cut at six), a negative delay counted
 * as none; and a chunk is never due before the one ahead of it, so a stream is not reordered.
 * The random sequence is this program's own (xorshift64*): the same distributions, other draws.
 * Single process, one poll loop, no threads.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 256
#define CHUNK 16384

struct chunk {
	uint64_t due;
	size_t len;
	char data[CHUNK];
};

/* the chunks read from the server, not yet passed on: a ring, oldest at head */
static struct chunk ring[SLOTS];
static unsigned head, count;

static uint64_t dur, jit, rng_state;
static int normal;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t draw(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint64_t due_of(uint64_t arrived, uint64_t floor)
{
	int64_t delay = (int64_t)dur, j = (int64_t)jit;
	if (j > 0 && !normal) {
		delay += (int64_t)(draw() % (uint64_t)(2 * j + 1)) - j;
	} else if (j > 0) {
		int64_t sum = 0;
		for (int k = 0; k < 12; k++)
			sum += (int64_t)(draw() >> 44);
		delay += (int64_t)(((__int128)(sum - 6 * 1048576) * j) / 1048576);
	}
	uint64_t due = arrived + (delay > 0 ? (uint64_t)delay : 0);
	return due > floor ? due : floor;
}

/* The kernel's receive time of what recvmsg returned, on CLOCK_MONOTONIC; now if none. */
static uint64_t arrival(struct msghdr *m, uint64_t now)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		struct timespec ts, wall;
		memcpy(&ts, CMSG_DATA(c), sizeof ts);
		clock_gettime(CLOCK_REALTIME, &wall);
		int64_t ago = ((int64_t)wall.tv_sec - ts.tv_sec) * 1000000000 + (wall.tv_nsec - ts.tv_nsec);
		return ago > 0 && (uint64_t)ago < now ? now - (uint64_t)ago : now;
	}
	return now;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int listen_on(const char *portfile)
{
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof a;
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 4) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &len) < 0)
		return -1;
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", portfile);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%d\n", ntohs(a.sin_port));
	if (fclose(f) != 0 || rename(tmp, portfile) != 0)
		return -1;
	return l;
}

static int relay(int cl, int up)
{
	static char buf[CHUNK];
	char cbuf[CMSG_SPACE(sizeof(struct timespec))];
	uint64_t last_due = 0;
	int up_eof = 0, cl_eof = 0;

	for (;;) {
		uint64_t now = mono_ns();
		/* pass on what is due */
		while (count > 0 && ring[head].due <= now) {
			if (write_all(cl, ring[head].data, ring[head].len) < 0)
				return 1;
			head = (head + 1) % SLOTS;
			count--;
		}
		if (up_eof && count == 0) {
			shutdown(cl, SHUT_WR);
			up_eof = 2;
		}
		if (up_eof == 2 && cl_eof)
			return 0;
		struct pollfd p[2] = {{.fd = cl_eof ? -1 : cl, .events = POLLIN},
		                      {.fd = up_eof || count == SLOTS ? -1 : up, .events = POLLIN}};
		struct timespec to, *tp = NULL;
		if (count > 0) {
			uint64_t wait = ring[head].due - now;
			to.tv_sec = (time_t)(wait / 1000000000u);
			to.tv_nsec = (long)(wait % 1000000000u);
			tp = &to;
		}
		int r = ppoll(p, 2, tp, NULL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return 1;
		if (p[0].revents) {
			ssize_t n = recv(cl, buf, sizeof buf, 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				cl_eof = 1;
				shutdown(up, SHUT_WR);
			} else if (write_all(up, buf, (size_t)n) < 0) {
				return 1;
			}
		}
		if (p[1].revents) {
			struct chunk *c = &ring[(head + count) % SLOTS];
			struct iovec iov = {c->data, CHUNK};
			struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			                   .msg_controllen = sizeof cbuf};
			ssize_t n = recvmsg(up, &m, 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				up_eof = 1;
				continue;
			}
			c->len = (size_t)n;
			c->due = last_due = due_of(arrival(&m, mono_ns()), last_due);
			count++;
		}
	}
}

int main(int argc, char **argv)
{
	int opt, upport = -1, secs = 120, one = 1;
	const char *portfile = NULL;
	uint64_t seed = 1;
	while ((opt = getopt(argc, argv, "P:u:d:j:D:s:T:")) != -1) {
		switch (opt) {
		case 'P': portfile = optarg; break;
		case 'u': upport = atoi(optarg); break;
		case 'd': dur = strtoull(optarg, NULL, 10); break;
		case 'j': jit = strtoull(optarg, NULL, 10); break;
		case 'D':
			if (!strcmp(optarg, "normal"))
				normal = 1;
			else if (strcmp(optarg, "uniform"))
				goto usage;
			break;
		case 's': seed = strtoull(optarg, NULL, 10); break;
		case 'T': secs = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (!portfile || upport <= 0 || upport > 65535 || secs <= 0 || jit > (1ull << 40))
		goto usage;
	/* xorshift has one fixed point, 0: any other seed will do */
	rng_state = seed * 0x9e3779b97f4a7c15ull + 1;
	alarm((unsigned)secs);
	int l = listen_on(portfile);
	if (l < 0) {
		perror("delay_relay: listen");
		return 1;
	}
	int cl = accept(l, NULL, NULL);
	if (cl < 0) {
		perror("delay_relay: accept");
		return 1;
	}
	close(l);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)upport)};
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	int up = socket(AF_INET, SOCK_STREAM, 0);
	if (up < 0 || connect(up, (struct sockaddr *)&a, sizeof a) < 0) {
		perror("delay_relay: connect");
		return 1;
	}
	setsockopt(cl, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(up, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(up, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
	return relay(cl, up);
usage:
	fprintf(stderr, "usage: delay_relay -P PORTFILE -u UPSTREAM_PORT [-d DUR_NS] [-j JITTER_NS] "
	                "[-D uniform|normal] [-s SEED] [-T SECONDS]\n");
	return 2;
}
