/* sigio: a transfer made of blocking calls while a signal whose handler makes a system call
 * (a 1-byte write to /dev/null) arrives every few milliseconds. Checks what a program can see:
 * the return values add up to the bytes that moved, EINTR comes only for a call that moved
 * nothing, never under SA_RESTART, and the handler runs soon after each signal is sent.
 *
 *   sigio -p PORT -m MODE -f FILE [-r] [-g] [-i USEC] [-c BYTES] [-T SECONDS]
 *   MODE send       send() FILE's bytes in calls of BYTES (-c, default all)
 *        recv       recv(MSG_WAITALL) of BYTES (-c) at a time into FILE until EOF
 *        sendfile   sendfile(sock, file, &off, BYTES) until all of FILE went
 *        sendfilepos sendfile(sock, file, NULL, BYTES): the file position moves
 *        idle       one recv() on a socket whose peer sends nothing for a while, then EOF
 *   -r   SA_RESTART on the handler (default: without)
 *   -i   a signal every USEC microseconds (default 2000), sent to the process (kill) by a
 *        thread that blocks it, so the thread doing the transfer takes it
 *   -g   sent to the thread doing the transfer itself (tgkill), not to the process
 * Output: calls=N eintr=E moved=BYTES handlers=H lat_max_us=L lat_p50_us=M offset_ok=0|1
 * Exit 0 when the transfer completed (and, for sendfile, the offsets agreed); 1 otherwise;
 * 3 on its own time limit (-T, default 20 s).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

#define LAT_MAX 65536

static atomic_uint_fast64_t sent_at; /* when the last signal was sent (0: taken) */
static atomic_int stop;
static uint32_t lat_us[LAT_MAX];
static atomic_uint nlat;
static volatile sig_atomic_t handlers;
static int devnull = -1, interval_us = 2000, tlimit = 20, to_thread;
static pid_t io_tid;

static void on_sig(int sig)
{
	int e = errno;
	uint64_t at = atomic_exchange(&sent_at, 0);
	char c = 'x';

	(void)sig;
	if (at) {
		unsigned i = atomic_fetch_add(&nlat, 1);
		if (i < LAT_MAX)
			lat_us[i] = (uint32_t)((now_ns() - at) / 1000);
	}
	handlers++;
	if (write(devnull, &c, 1) < 0)
		_exit(4);
	errno = e;
}

static void *ticker(void *arg)
{
	uint64_t end = now_ns() + (uint64_t)tlimit * 1000000000u;

	(void)arg;
	while (!atomic_load(&stop)) {
		struct timespec ts = {interval_us / 1000000, (interval_us % 1000000) * 1000L};
		nanosleep(&ts, NULL);
		if (now_ns() > end) {
			fprintf(stderr, "sigio: time limit\n");
			_exit(3);
		}
		/* one signal in flight at a time: the latency of each is its own */
		uint64_t zero = 0;
		if (atomic_compare_exchange_strong(&sent_at, &zero, now_ns())) {
			if (to_thread)
				tgkill(getpid(), io_tid, SIGALRM);
			else
				kill(getpid(), SIGALRM);
		}
	}
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *mode = NULL, *file = NULL;
	int opt, port = -1, restart = 0, ok = 1, offset_ok = 1;
	size_t chunk = 0;
	long calls = 0, eintr = 0;
	uint64_t moved = 0;

	while ((opt = getopt(argc, argv, "p:m:f:rgi:c:T:")) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'm': mode = optarg; break;
		case 'f': file = optarg; break;
		case 'r': restart = 1; break;
		case 'g': to_thread = 1; break;
		case 'i': interval_us = atoi(optarg); break;
		case 'c': chunk = (size_t)strtoull(optarg, NULL, 10); break;
		case 'T': tlimit = atoi(optarg); break;
		default: return 2;
		}
	}
	if (port < 0 || !mode || !file || interval_us < 100)
		return 2;
	devnull = open("/dev/null", O_WRONLY);
	io_tid = gettid();
	int s = dial_loopback("127.0.0.1", port);
	if (s < 0) {
		perror("sigio: connect");
		return 1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sig;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	pthread_t th;
	pthread_create(&th, NULL, ticker, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	if (!strcmp(mode, "send")) {
		int fd = open(file, O_RDONLY);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) != 0)
			return 2;
		size_t n = (size_t)st.st_size;
		char *buf = malloc(n ? n : 1);
		if (read(fd, buf, n) != (ssize_t)n)
			return 2;
		while (moved < n) {
			size_t want = n - moved;
			if (chunk && want > chunk)
				want = chunk;
			ssize_t r = send(s, buf + moved, want, 0);
			calls++;
			if (r < 0 && errno == EINTR) {
				eintr++;
				continue;
			}
			if (r <= 0) {
				fprintf(stderr, "sigio: send: %s\n", strerror(errno));
				ok = 0;
				break;
			}
			moved += (uint64_t)r;
		}
	} else if (!strcmp(mode, "recv") || !strcmp(mode, "idle")) {
		int out = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		size_t c = chunk ? chunk : 1 << 20;
		char *buf = malloc(c);
		if (out < 0 || !buf)
			return 2;
		for (;;) {
			ssize_t r = recv(s, buf, c, !strcmp(mode, "recv") ? MSG_WAITALL : 0);
			calls++;
			if (r < 0 && errno == EINTR) {
				eintr++;
				continue;
			}
			if (r < 0) {
				fprintf(stderr, "sigio: recv: %s\n", strerror(errno));
				ok = 0;
				break;
			}
			if (r == 0)
				break;
			if (write(out, buf, (size_t)r) != r)
				return 2;
			moved += (uint64_t)r;
		}
		close(out);
	} else if (!strcmp(mode, "sendfile") || !strcmp(mode, "sendfilepos")) {
		int pos = !strcmp(mode, "sendfilepos");
		int fd = open(file, O_RDONLY);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) != 0)
			return 2;
		off_t off = 0;
		while (moved < (uint64_t)st.st_size) {
			size_t want = (size_t)((uint64_t)st.st_size - moved);
			if (chunk && want > chunk)
				want = chunk;
			off_t before = off;
			ssize_t r = pos ? sendfile(s, fd, NULL, want) : sendfile(s, fd, &off, want);
			calls++;
			if (r < 0 && errno == EINTR) {
				eintr++;
				if (!pos && off != before)
					offset_ok = 0; /* nothing moved: the offset stays */
				continue;
			}
			if (r <= 0) {
				fprintf(stderr, "sigio: sendfile: %s\n", strerror(errno));
				ok = 0;
				break;
			}
			moved += (uint64_t)r;
			off_t now = pos ? lseek(fd, 0, SEEK_CUR) : off;
			if ((uint64_t)now != moved) {
				fprintf(stderr, "sigio: after %ld calls, %s %lld but %llu bytes returned\n",
				        calls, pos ? "file position" : "offset", (long long)now,
				        (unsigned long long)moved);
				offset_ok = 0;
			}
		}
	} else {
		return 2;
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	shutdown(s, SHUT_WR);
	close(s);

	unsigned n = atomic_load(&nlat);
	if (n > LAT_MAX)
		n = LAT_MAX;
	qsort(lat_us, n, sizeof lat_us[0], cmp_u32);
	printf("calls=%ld eintr=%ld moved=%llu handlers=%d lat_max_us=%u lat_p50_us=%u "
	       "offset_ok=%d\n",
	       calls, eintr, (unsigned long long)moved, (int)handlers, n ? lat_us[n - 1] : 0,
	       n ? lat_us[n / 2] : 0, offset_ok);
	return ok && offset_ok ? 0 : 1;
}
