/* callcost: nanoseconds per write() call on /dev/null and on a connected TCP loopback socket
 * (drained by a thread of this process), optionally with idle sockets open.
 *
 *   callcost [-n CALLS] [-i IDLE_SOCKETS]
 * Output: devnull_ns=X socket_ns=Y (median of 5 rounds each)
 *
 *   callcost -m devnull|pipe|unix|tcp|udp [-p] [-n CALLS]
 * One target, one timed run of CALLS 1-byte writes (after a warm-up of CALLS/20), nothing else
 * running in the process, so that it can be pinned to one CPU (the bench runs it 5 times
 * alternating with and without the library): a pipe and a unix stream socketpair are drained
 * by this thread, one read for every DRAIN writes, so their cost is the write's plus 1/DRAIN
 * of a read. tcp and udp are 1-byte send()s on a connected loopback socket (TCP_NODELAY off,
 * as a program leaves it), drained the same way by this thread from the accepted socket, or
 * from the bound receiver with one recvmmsg of DRAIN datagrams. With -p (not under libnullsys.so, whose read would leave the C library's writes
 * undrained), then as many calls again in pairs of blocks, one through the program's write, one
 * straight to the C library's. Output: ns=X (the whole run), low_ns=Y (the 10th percentile of
 * its blocks of BLOCK calls: a block the scheduler took the CPU from is left out), paired_ns=Z
 * (the median difference within a pair, per call: what the preload adds to the C library's
 * write, with what the machine runs besides weighing on both alike) and paired_ratio=R (the
 * median of the pairs' ratios, the hook's block over the C library's)
 *
 *   callcost -m clock [-n CALLS]
 * The floor of a conforming call (rlthrottle(7): a clock read and an atomic update per rule):
 * CALLS reads of CLOCK_MONOTONIC, each followed by a compare-and-swap, timed in the same
 * blocks. Output: ns=X low_ns=Y as above.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
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

#define BLOCK 1000
#define DRAIN 32 /* writes between two reads: a unix socket holds far more 1-byte messages */

/* The write the loop makes: the program's (through the preload's hook when it is loaded), or
 * the C library's own, found in libc.so.6 by handle, which no preload stands in front of. */
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*send_fn)(int, const void *, size_t, int);
static write_fn wr = write;
static send_fn sd = send;
static int use_send, dgram; /* tcp and udp: send(); udp: drained by recvmmsg */

static void drain_n(int rd)
{
	char b[DRAIN];
	if (dgram) {
		struct mmsghdr mv[DRAIN];
		struct iovec iv[DRAIN];
		for (int i = 0; i < DRAIN; i++) {
			iv[i] = (struct iovec){b + i, 1};
			mv[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iv[i], .msg_iovlen = 1}};
		}
		for (int got = 0; got < DRAIN;) {
			int r = recvmmsg(rd, mv, (unsigned)(DRAIN - got), 0, NULL);
			if (r <= 0) { perror("callcost: recvmmsg"); exit(1); }
			got += r;
		}
		return;
	}
	for (size_t got = 0; got < DRAIN;) {
		ssize_t r = read(rd, b, DRAIN - got);
		if (r <= 0) { perror("callcost: read"); exit(1); }
		got += (size_t)r;
	}
}

static void writes(int fd, int rd, long n)
{
	static unsigned long written; /* across calls: what a block leaves is drained by the next */
	char c = 'x';
	for (long i = 0; i < n; i++) {
		if ((use_send ? sd(fd, &c, 1, 0) : wr(fd, &c, 1)) != 1) {
			perror("callcost: write");
			exit(1);
		}
		if (rd >= 0 && ++written % DRAIN == 0)
			drain_n(rd);
	}
}

/* A connected loopback pair of `type`: *fd sends, *rd receives. */
static int loopback_pair(int type, int *fd, int *rd)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	int l = socket(AF_INET, type, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &len) < 0 ||
	    (type == SOCK_STREAM && listen(l, 1) < 0))
		return -1;
	*fd = socket(AF_INET, type, 0);
	if (*fd < 0 || connect(*fd, (struct sockaddr *)&a, sizeof a) < 0)
		return -1;
	if (type == SOCK_DGRAM) {
		*rd = l;
		return 0;
	}
	*rd = accept(l, NULL, NULL);
	close(l);
	return *rd < 0 ? -1 : 0;
}

/* One clock read and one compare-and-swap on a word of this process's, as a conforming charge
 * makes them; the sum keeps the compiler from dropping the reads. */
static void clock_reads(long n)
{
	static _Atomic uint64_t word;
	for (long i = 0; i < n; i++) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t old = atomic_load_explicit(&word, memory_order_relaxed);
		atomic_compare_exchange_weak_explicit(&word, &old, old + (uint64_t)ts.tv_nsec,
		                                      memory_order_relaxed, memory_order_relaxed);
	}
}

static int clock_floor(long n)
{
	long nb = n / BLOCK, k = 0;
	double *blk = calloc(nb > 0 ? (size_t)nb : 1, sizeof *blk);
	if (!blk) { perror("callcost"); return 1; }
	clock_reads(n / 20);
	uint64_t t0 = now_ns();
	for (long done = 0; done + BLOCK <= n && k < nb; done += BLOCK) {
		uint64_t b0 = now_ns();
		clock_reads(BLOCK);
		blk[k++] = (double)(now_ns() - b0) / BLOCK;
	}
	double all = (double)(now_ns() - t0) / (double)(k ? k * BLOCK : 1);
	qsort(blk, (size_t)k, sizeof *blk, cmp);
	printf("ns=%.2f low_ns=%.2f\n", all, k ? blk[k / 10] : all);
	free(blk);
	return 0;
}

static int one_target(const char *mode, long n, int paired)
{
	int fd, rd = -1, p[2];
	if (!strcmp(mode, "clock"))
		return clock_floor(n);
	if (!strcmp(mode, "devnull")) {
		fd = open("/dev/null", O_WRONLY);
	} else if (!strcmp(mode, "pipe")) {
		if (pipe(p) != 0) { perror("pipe"); return 1; }
		rd = p[0], fd = p[1];
	} else if (!strcmp(mode, "unix")) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, p) != 0) { perror("socketpair"); return 1; }
		rd = p[0], fd = p[1];
	} else if (!strcmp(mode, "tcp") || !strcmp(mode, "udp")) {
		use_send = 1;
		dgram = mode[0] == 'u';
		if (loopback_pair(dgram ? SOCK_DGRAM : SOCK_STREAM, &fd, &rd) != 0) {
			perror(mode);
			return 1;
		}
	} else {
		fprintf(stderr, "callcost: -m devnull|pipe|unix|tcp|udp|clock\n");
		return 2;
	}
	if (fd < 0) { perror(mode); return 1; }
	writes(fd, rd, n / 20);
	long nb = n / BLOCK, k = 0;
	double *blk = calloc(nb > 0 ? (size_t)nb : 1, sizeof *blk);
	if (!blk) { perror("callcost"); return 1; }
	uint64_t t0 = now_ns();
	for (long done = 0; done < n; done += BLOCK) {
		long m = n - done < BLOCK ? n - done : BLOCK;
		uint64_t b0 = now_ns();
		writes(fd, rd, m);
		if (m == BLOCK && k < nb)
			blk[k++] = (double)(now_ns() - b0) / (double)m;
	}
	double all = (double)(now_ns() - t0) / (double)n;
	qsort(blk, (size_t)k, sizeof *blk, cmp);
	printf("ns=%.2f low_ns=%.2f", all, k ? blk[k / 10] : all);
	/* Then blocks alternating the program's write and the C library's, in one process: what
	 * else the machine runs weighs on both of a pair alike, so the median difference shows a
	 * few ns where whole runs swing by hundreds. */
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	write_fn direct = libc && paired ? (write_fn)dlsym(libc, "write") : NULL;
	send_fn direct_send = libc && paired ? (send_fn)dlsym(libc, "send") : NULL;
	double *rat = calloc(nb > 0 ? (size_t)nb : 1, sizeof *rat);
	if (direct && direct_send && rat) {
		k = 0;
		for (long done = 0; done + 2 * BLOCK <= n && k < nb; done += 2 * BLOCK) {
			uint64_t a0 = now_ns();
			wr = write;
			sd = send;
			writes(fd, rd, BLOCK);
			uint64_t a1 = now_ns();
			wr = direct;
			sd = direct_send;
			writes(fd, rd, BLOCK);
			uint64_t a2 = now_ns();
			blk[k] = ((double)(a1 - a0) - (double)(a2 - a1)) / BLOCK;
			rat[k++] = a2 > a1 ? (double)(a1 - a0) / (double)(a2 - a1) : 1.0;
		}
		qsort(blk, (size_t)k, sizeof *blk, cmp);
		qsort(rat, (size_t)k, sizeof *rat, cmp);
		if (k) /* the pair's ratio too: the hook's block over the C library's, median */
			printf(" paired_ns=%.2f paired_ratio=%.4f", blk[k / 2], rat[k / 2]);
	}
	printf("\n");
	free(rat);
	free(blk);
	return 0;
}

int main(int argc, char **argv)
{
	long n = 200000;
	int opt, idle = 0;
	const char *mode = NULL;
	int paired = 0;
	while ((opt = getopt(argc, argv, "n:i:m:p")) != -1) {
		switch (opt) {
		case 'n': n = atol(optarg); break;
		case 'i': idle = atoi(optarg); break;
		case 'm': mode = optarg; break;
		case 'p': paired = 1; break;
		default:
			fprintf(stderr, "usage: callcost [-n CALLS] [-i IDLE_SOCKETS] "
			                "[-m devnull|pipe|unix|tcp|udp|clock [-p]]\n");
			return 2;
		}
	}
	alarm(120);
	if (mode)
		return one_target(mode, n, paired);
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
