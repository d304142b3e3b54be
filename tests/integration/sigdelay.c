/* sigdelay: one big blocking send (or a MSG_WAITALL recv) that the throttle must delay, with
 * signals arriving during the delay. Checks: the handler ran, the call did not fail with EINTR and
 * returned the whole count (rlthrottle(7) BEHAVIOUR: the delay goes on after the handler).
 *
 *   sigdelay [-h HOST] -p PORT -n BYTES [-R] [-r] [-k] [-s alrm|usr1] [-i MS] [-T SECONDS]
 *   -R   receive (recv MSG_WAITALL of BYTES) instead of send
 *   -r   install the handler with SA_RESTART (default: without)
 *   -k   the kernel's way: the call may end at a signal with what it moved so far (a count
 *        short of BYTES, not 0), the rest then moved by the calls that follow
 *   -i   a signal every MS ms (default 200), from a helper thread, to the process
 * Output: result=N errno=NAME handlers=K elapsed_ns=NS fnv=HEX
 * Exit 0 when result == BYTES (with -k: 0 < result <= BYTES and total == BYTES) and
 * handlers >= 2 (-k: 1); 1 otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"


static volatile sig_atomic_t handlers;
static atomic_int stop;
static int sig = SIGALRM, interval_ms = 200, tlimit = 30;
static pid_t mypid;

static void on_sig(int s)
{
	(void)s;
	handlers++;
}

static void *ticker(void *arg)
{
	(void)arg;
	uint64_t end = now_ns() + (uint64_t)tlimit * 1000000000u;
	while (!atomic_load(&stop)) {
		struct timespec ts = { interval_ms / 1000, (interval_ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
		if (atomic_load(&stop)) break;
		kill(mypid, sig);
		if (now_ns() > end) {
			fprintf(stderr, "sigdelay: time limit\n");
			_exit(3);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int opt, port = -1, restart = 0, recvmode = 0, kernel_way = 0;
	size_t n = 0;
	const char *host = "127.0.0.1";
	while ((opt = getopt(argc, argv, "h:p:n:Rrks:i:T:")) != -1) {
		switch (opt) {
		case 'h': host = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'n': n = (size_t)strtoull(optarg, NULL, 10); break;
		case 'R': recvmode = 1; break;
		case 'r': restart = 1; break;
		case 'k': kernel_way = 1; break;
		case 's': sig = !strcmp(optarg, "usr1") ? SIGUSR1 : SIGALRM; break;
		case 'i': interval_ms = atoi(optarg); break;
		case 'T': tlimit = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: sigdelay [-h HOST] -p PORT -n BYTES [-R] [-r] [-s alrm|usr1] [-i MS]\n");
			return 2;
		}
	}
	if (port < 0 || n == 0 || n > PAT_LEN || interval_ms < 1) return 2;
	mypid = getpid();
	unsigned char *pat = malloc(PAT_LEN), *buf = malloc(n);
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (size_t i = 0; i < PAT_LEN; i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		pat[i] = (unsigned char)(x >> 24);
	}
	on_signal(sig, on_sig, restart);

	int fd = dial_loopback(host, port);
	if (fd < 0) { perror("sigdelay: connect"); return 1; }

	/* the ticker thread must not take the signal itself */
	pthread_t th = thread_without(sig, ticker);

	uint64_t t0 = now_ns();
	errno = 0;
	ssize_t r = recvmode ? recv(fd, buf, n, MSG_WAITALL) : send(fd, pat, n, 0);
	int e = r < 0 ? errno : 0;
	uint64_t t1 = now_ns();
	atomic_store(&stop, 1);
	pthread_join(th, NULL);

	/* whatever the first call did, finish the transfer so the peer sees the whole stream */
	size_t done = r > 0 ? (size_t)r : 0;
	while (done < n) {
		ssize_t w = recvmode ? recv(fd, buf + done, n - done, 0) : send(fd, pat + done, n - done, 0);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) break;
		done += (size_t)w;
	}
	uint64_t h = 0xcbf29ce484222325ull;
	const unsigned char *p = recvmode ? buf : pat;
	for (size_t i = 0; i < done; i++) { h ^= p[i]; h *= 0x100000001b3ull; }
	close(fd);
	const char *en = e ? strerrorname_np(e) : "none";
	printf("result=%zd errno=%s handlers=%d elapsed_ns=%llu fnv=%016llx total=%zu\n", r, en ? en : "E?",
	       (int)handlers, (unsigned long long)(t1 - t0), (unsigned long long)h, done);
	if (kernel_way)
		return (r > 0 && done == n && handlers >= 1) ? 0 : 1;
	return (r == (ssize_t)n && handlers >= 2) ? 0 : 1;
}
