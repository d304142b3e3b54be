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

/* What a transfer's calls gave. */
struct xfer {
	long calls, eintr;
	uint64_t moved;
	int offset_ok;
};

/* The handler on SIGALRM, and the ticker thread started with SIGALRM blocked in it alone. */
static pthread_t start_ticker(int restart)
{
	on_signal(SIGALRM, on_sig, restart);
	return thread_without(SIGALRM, ticker);
}

/* The transfers return 1 when it completed, 0 when a call failed, -1 for exit status 2 (a file
 * that cannot be read or written). */

/* -m send: FILE's bytes in calls of chunk (0: all). */
static int do_send(int s, const char *file, size_t chunk, struct xfer *x)
{
	int fd = open(file, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		return -1;
	size_t n = (size_t)st.st_size;
	char *buf = malloc(n ? n : 1);
	if (read(fd, buf, n) != (ssize_t)n)
		return -1;
	while (x->moved < n) {
		size_t want = n - x->moved;
		if (chunk && want > chunk)
			want = chunk;
		ssize_t r = send(s, buf + x->moved, want, 0);
		x->calls++;
		if (r < 0 && errno == EINTR) {
			x->eintr++;
			continue;
		}
		if (r <= 0) {
			fprintf(stderr, "sigio: send: %s\n", strerror(errno));
			return 0;
		}
		x->moved += (uint64_t)r;
	}
	return 1;
}

/* -m recv (MSG_WAITALL) or idle: into FILE until EOF. */
static int do_recv(int s, const char *file, size_t chunk, int waitall, struct xfer *x)
{
	int out = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600), ok = 1;
	size_t c = chunk ? chunk : 1 << 20;
	char *buf = malloc(c);
	if (out < 0 || !buf)
		return -1;
	for (;;) {
		ssize_t r = recv(s, buf, c, waitall ? MSG_WAITALL : 0);
		x->calls++;
		if (r < 0 && errno == EINTR) {
			x->eintr++;
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
			return -1;
		x->moved += (uint64_t)r;
	}
	close(out);
	return ok;
}

/* -m sendfile (an offset of ours) or sendfilepos (the file position): all of FILE; each call's
 * offset must agree with the bytes returned. */
static int do_sendfile(int s, const char *file, size_t chunk, int pos, struct xfer *x)
{
	int fd = open(file, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		return -1;
	off_t off = 0;
	while (x->moved < (uint64_t)st.st_size) {
		size_t want = (size_t)((uint64_t)st.st_size - x->moved);
		if (chunk && want > chunk)
			want = chunk;
		off_t before = off;
		ssize_t r = pos ? sendfile(s, fd, NULL, want) : sendfile(s, fd, &off, want);
		x->calls++;
		if (r < 0 && errno == EINTR) {
			x->eintr++;
			if (!pos && off != before)
				x->offset_ok = 0; /* nothing moved: the offset stays */
			continue;
		}
		if (r <= 0) {
			fprintf(stderr, "sigio: sendfile: %s\n", strerror(errno));
			return 0;
		}
		x->moved += (uint64_t)r;
		off_t now = pos ? lseek(fd, 0, SEEK_CUR) : off;
		if ((uint64_t)now != x->moved) {
			fprintf(stderr, "sigio: after %ld calls, %s %lld but %llu bytes returned\n",
			        x->calls, pos ? "file position" : "offset", (long long)now,
			        (unsigned long long)x->moved);
			x->offset_ok = 0;
		}
	}
	return 1;
}

int main(int argc, char **argv)
{
	const char *mode = NULL, *file = NULL;
	int opt, port = -1, restart = 0, ok;
	size_t chunk = 0;
	struct xfer x = { .offset_ok = 1 };

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
	pthread_t th = start_ticker(restart);

	if (!strcmp(mode, "send"))
		ok = do_send(s, file, chunk, &x);
	else if (!strcmp(mode, "recv") || !strcmp(mode, "idle"))
		ok = do_recv(s, file, chunk, !strcmp(mode, "recv"), &x);
	else if (!strcmp(mode, "sendfile") || !strcmp(mode, "sendfilepos"))
		ok = do_sendfile(s, file, chunk, !strcmp(mode, "sendfilepos"), &x);
	else
		return 2;
	if (ok < 0)
		return 2;
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
	       x.calls, x.eintr, (unsigned long long)x.moved, (int)handlers, n ? lat_us[n - 1] : 0,
	       n ? lat_us[n / 2] : 0, x.offset_ok);
	return ok && x.offset_ok ? 0 : 1;
}
