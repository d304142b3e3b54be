/* conn: makes TCP connections and reports how many succeeded, how many failed (by errno), and when.
 *
 *   conn [-4|-6] [-h HOST] -p PORT (-n N | -D SECONDS) [-t THREADS] [-N] [-e MS] [-T SECONDS]
 *        each attempt: socket, connect, close. -N: SOCK_NONBLOCK connect + poll.
 *        -e MS: also count successes after the first MS ms (late_ok, late_ns) for a steady rate.
 *   conn [-4|-6] [-h HOST] -p PORT -S SCRIPT
 *        steps: "open" (connect a new socket and keep it), "close" (close the oldest kept one),
 *        "closeafter:MS" (a thread closes the oldest kept one MS ms from now), "sleep:MS".
 *        Each open prints: step open N -> OK|ERRNAME at_ms=.. took_ms=..
 * Output (rate mode): ok=N fail=M elapsed_ns=NS late_ok=L late_ns=LN errs=NAME:COUNT,...
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
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

static struct sockaddr_storage addr;
static socklen_t addrlen;
static int fam = AF_INET, nonblock;
static long long total = -1;
static double duration;
static uint64_t t_start, deadline, early_ns;
static atomic_llong next_idx, ok, late_ok;
static atomic_int errcount[256];
static _Atomic uint64_t last_ok;

static int do_connect(int *fdp)
{
	int fd = socket(fam, SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0), 0);
	if (fd < 0) return errno;
	int e = 0;
	if (connect(fd, (struct sockaddr *)&addr, addrlen) < 0) {
		e = errno;
		if (e == EINPROGRESS) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			if (poll(&p, 1, 10000) != 1) e = ETIMEDOUT;
			else {
				socklen_t el = sizeof e;
				e = 0;
				getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
			}
		}
	}
	if (e || !fdp) close(fd);
	else *fdp = fd;
	return e;
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		if (total >= 0) {
			if (atomic_fetch_add(&next_idx, 1) >= total) break;
		} else if (now_ns() >= deadline) break;
		int e = do_connect(NULL);
		if (!e) {
			uint64_t t = now_ns();
			atomic_fetch_add(&ok, 1);
			if (early_ns && t - t_start >= early_ns) atomic_fetch_add(&late_ok, 1);
			uint64_t prev = atomic_load(&last_ok);
			while (t > prev && !atomic_compare_exchange_weak(&last_ok, &prev, t)) {}
		} else atomic_fetch_add(&errcount[e & 255], 1);
	}
	return NULL;
}

#define MAXKEEP 1024
static int kept[MAXKEEP];
static int nkept;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void close_oldest(void)
{
	pthread_mutex_lock(&mu);
	if (nkept > 0) {
		close(kept[0]);
		memmove(kept, kept + 1, (size_t)(nkept - 1) * sizeof kept[0]);
		nkept--;
	}
	pthread_mutex_unlock(&mu);
}

static void *closer(void *arg)
{
	long ms = (long)(intptr_t)arg;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
	close_oldest();
	uint64_t t = now_ns();
	printf("step closed at_ms=%.1f\n", (double)(t - t_start) / 1e6);
	fflush(stdout);
	return NULL;
}

static int run_script(const char *script)
{
	char *s = strdup(script), *save = NULL;
	int nopen = 0;
	pthread_t th[64];
	int nth = 0;
	t_start = now_ns();
	for (char *tok = strtok_r(s, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (!strcmp(tok, "open")) {
			int fd = -1;
			uint64_t t = now_ns();
			int e = do_connect(&fd);
			uint64_t t2 = now_ns();
			nopen++;
			if (!e) {
				pthread_mutex_lock(&mu);
				if (nkept < MAXKEEP) kept[nkept++] = fd;
				pthread_mutex_unlock(&mu);
			}
			printf("step open %d -> %s at_ms=%.1f took_ms=%.1f\n", nopen, e ? ename(e) : "OK",
			       (double)(t - t_start) / 1e6, (double)(t2 - t) / 1e6);
		} else if (!strcmp(tok, "close")) {
			close_oldest();
			printf("step close\n");
		} else if (!strncmp(tok, "closeafter:", 11) && nth < 64) {
			pthread_create(&th[nth++], NULL, closer, (void *)(intptr_t)atol(tok + 11));
		} else if (!strncmp(tok, "sleep:", 6)) {
			long ms = atol(tok + 6);
			struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
			while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
		} else {
			fprintf(stderr, "conn: bad step %s\n", tok);
			return 2;
		}
		fflush(stdout);
	}
	for (int i = 0; i < nth; i++) pthread_join(th[i], NULL);
	free(s);
	printf("pid=%d done\n", (int)getpid());
	return 0;
}

int main(int argc, char **argv)
{
	int opt, threads = 1, port = -1, tlimit = 60;
	const char *host = NULL, *script = NULL;
	while ((opt = getopt(argc, argv, "46h:p:n:D:t:Ne:S:T:")) != -1) {
		switch (opt) {
		case '4': fam = AF_INET; break;
		case '6': fam = AF_INET6; break;
		case 'h': host = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'n': total = atoll(optarg); break;
		case 'D': duration = atof(optarg); break;
		case 't': threads = atoi(optarg); break;
		case 'N': nonblock = 1; break;
		case 'e': early_ns = strtoull(optarg, NULL, 10) * 1000000u; break;
		case 'S': script = optarg; break;
		case 'T': tlimit = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: conn [-4|-6] [-h HOST] -p PORT (-n N|-D SEC|-S SCRIPT) [-t THREADS] [-N] [-e MS]\n");
			return 2;
		}
	}
	if (port < 0 || threads < 1 || threads > 256 || (total < 0 && duration <= 0 && !script)) {
		fprintf(stderr, "conn: need -p and one of -n, -D, -S\n");
		return 2;
	}
	alarm((unsigned)tlimit);
	addrlen = loopback_addr(&addr, fam, host, NULL, port);
	if (!addrlen) return 2;
	if (script) return run_script(script);

	t_start = now_ns();
	deadline = t_start + (uint64_t)(duration * 1e9);
	pthread_t th[256];
	for (int i = 0; i < threads; i++) pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
	uint64_t t1 = now_ns();
	long long fail = 0;
	char errs[2048] = "";
	size_t off = 0;
	for (int e = 0; e < 256; e++) {
		int c = atomic_load(&errcount[e]);
		if (!c) continue;
		fail += c;
		off += (size_t)snprintf(errs + off, sizeof errs - off, "%s%s:%d", off ? "," : "", ename(e), c);
		if (off >= sizeof errs) break;
	}
	uint64_t lo = atomic_load(&last_ok);
	unsigned long long late_ns = early_ns && lo > t_start + early_ns ? lo - t_start - early_ns : 0;
	printf("pid=%d ok=%lld fail=%lld elapsed_ns=%llu late_ok=%lld late_ns=%llu errs=%s\n", (int)getpid(),
	       (long long)atomic_load(&ok), fail, (unsigned long long)(t1 - t_start), (long long)atomic_load(&late_ok),
	       late_ns, off ? errs : "none");
	return 0;
}
