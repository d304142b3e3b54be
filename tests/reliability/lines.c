/* lines: records on one stream socket shared by threads, and a receiver that checks each
 * record arrived whole (issue 9, "Threads that share a stream socket").
 *
 *   lines send -p PORT [-t THREADS] [-n LINES] [-l LEN] [-m send|write|writev|sendmsg]
 *   lines recv -P PORTFILE [-t THREADS] [-n LINES] [-l LEN] [-o FILE]
 *   lines gen [-t THREADS] [-n LINES] [-l LEN]
 * (options before or after the mode: start_srv puts -P first)
 *
 * A line is LEN bytes: "T<tt> S<ssssss> ", a payload that depends on (thread, sequence), and
 * " <fnv-1a 64 of what precedes, hex>\n". send: THREADS threads, started together, each send
 * LINES lines on one blocking TCP socket, one call a line (writev and sendmsg hand the line
 * over as three iovecs: header, payload, trailer); a short count is finished by further calls
 * and counted. Prints: sent= calls= shorts= errors= elapsed_ns=.
 * recv: accepts one connection, reads it to its end (at most 60 s), writes what arrived to
 * FILE, and prints: bytes= lines= whole= torn= dups= missing= first_ms= (accept to first
 * byte) half_ms= (accept to half of the expected bytes) elapsed_ns= (first byte to last).
 * A line is whole when it has LEN bytes, names a thread and sequence in range and its
 * checksum matches; every other newline-terminated stretch (and a tail without one) is torn.
 * gen: prints every line that send sends (for an exact comparison of the multiset).
 */
#include <pthread.h>
#include <sys/uio.h>

#include "itest.h"

#define HDR_LEN 12  /* "T00 S000000 " */
#define TAIL_LEN 18 /* " 0123456789abcdef\n" */
#define MAX_THREADS 64

static int nthreads = 4, nlines = 15, sock_fd = -1;
static size_t line_len = 4000;
static const char *method = "send";
static pthread_barrier_t start_line;
static _Atomic unsigned long long sent_bytes, calls, shorts, errors;

/* Line (t, s) into out (line_len bytes): returns where the payload starts (HDR_LEN). */
static void make_line(char *out, int t, int s)
{
	uint64_t x = 0x9E3779B97F4A7C15ull ^ ((uint64_t)t << 32) ^ (uint64_t)s;
	size_t pay = line_len - HDR_LEN - TAIL_LEN;

	snprintf(out, HDR_LEN + 1, "T%02d S%06d ", t, s);
	for (size_t i = 0; i < pay; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		out[HDR_LEN + i] = (char)('a' + (x >> 24) % 26);
	}
	uint64_t h = fnv_update(FNV_INIT, (const unsigned char *)out, HDR_LEN + pay);
	char tail[TAIL_LEN + 1];
	snprintf(tail, sizeof tail, " %016llx\n", (unsigned long long)h);
	memcpy(out + HDR_LEN + pay, tail, TAIL_LEN);
}

/* One call of the chosen method for bytes [off, len) of the line. */
static ssize_t one_call(const char *line, size_t off)
{
	size_t len = line_len - off;
	if (!strcmp(method, "write"))
		return write(sock_fd, line + off, len);
	if (!strcmp(method, "writev") || !strcmp(method, "sendmsg")) {
		/* three iovecs over what is left: header, payload, trailer */
		size_t cut[4] = {0, HDR_LEN, line_len - TAIL_LEN, line_len};
		struct iovec iov[3];
		int n = 0;
		for (int i = 0; i < 3; i++) {
			size_t a = cut[i] > off ? cut[i] : off, b = cut[i + 1];
			if (b > a)
				iov[n++] = (struct iovec){(void *)(line + a), b - a};
		}
		if (!strcmp(method, "writev"))
			return writev(sock_fd, iov, n);
		struct msghdr h = {.msg_iov = iov, .msg_iovlen = (size_t)n};
		return sendmsg(sock_fd, &h, 0);
	}
	return send(sock_fd, line + off, len, 0);
}

static void *sender(void *arg)
{
	int t = (int)(intptr_t)arg;
	char *line = malloc(line_len);

	if (!line)
		exit(2);
	pthread_barrier_wait(&start_line);
	for (int s = 0; s < nlines; s++) {
		make_line(line, t, s);
		for (size_t off = 0; off < line_len;) {
			ssize_t n = one_call(line, off);
			calls++;
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				fprintf(stderr, "lines: thread %d: %s\n", t, n < 0 ? ename(errno) : "0");
				errors++;
				free(line);
				return NULL;
			}
			if ((size_t)n < line_len - off)
				shorts++;
			off += (size_t)n;
			sent_bytes += (unsigned long long)n;
		}
	}
	free(line);
	return NULL;
}

static int do_send(int port)
{
	pthread_t th[MAX_THREADS];

	sock_fd = dial_loopback(NULL, port);
	if (sock_fd < 0) {
		fprintf(stderr, "lines: connect: %s\n", strerror(errno));
		return 1;
	}
	pthread_barrier_init(&start_line, NULL, (unsigned)nthreads);
	uint64_t t0 = now_ns();
	for (int t = 0; t < nthreads; t++)
		if (pthread_create(&th[t], NULL, sender, (void *)(intptr_t)t) != 0) {
			fprintf(stderr, "lines: pthread_create failed\n");
			return 2;
		}
	for (int t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	uint64_t t1 = now_ns();
	close(sock_fd);
	printf("sent=%llu calls=%llu shorts=%llu errors=%llu elapsed_ns=%llu\n",
	       (unsigned long long)sent_bytes, (unsigned long long)calls,
	       (unsigned long long)shorts, (unsigned long long)errors,
	       (unsigned long long)(t1 - t0));
	return errors ? 1 : 0;
}

/* Whether [p, p + n) is a whole line; *t and *s name it. */
static int whole_line(const char *p, size_t n, int *t, int *s)
{
	char hdr[HDR_LEN + 1], *want;
	int ok;

	if (n != line_len)
		return 0;
	memcpy(hdr, p, HDR_LEN);
	hdr[HDR_LEN] = 0;
	if (sscanf(hdr, "T%2d S%6d ", t, s) != 2 || *t < 0 || *t >= nthreads || *s < 0 ||
	    *s >= nlines || !(want = malloc(line_len)))
		return 0;
	make_line(want, *t, *s);
	ok = memcmp(p, want, line_len) == 0;
	free(want);
	return ok;
}

static int do_recv(const char *portfile, const char *outfile)
{
	size_t expect = (size_t)nthreads * (size_t)nlines * line_len, cap = expect + 65536, got = 0;
	char *buf = malloc(cap);
	uint64_t t_acc, t_first = 0, t_half = 0, t_last = 0;
	struct timeval tv = {60, 0};
	int lfd = listen_loopback("lines", AF_INET, SOCK_STREAM, NULL, NULL, 4, portfile);

	if (lfd < 0 || !buf)
		return 2;
	int fd = accept(lfd, NULL, NULL);
	if (fd < 0) {
		perror("accept");
		return 2;
	}
	t_acc = now_ns();
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	for (;;) {
		if (got == cap) {
			char *b = realloc(buf, cap * 2);
			if (!b)
				return 2;
			buf = b;
			cap *= 2;
		}
		ssize_t n = recv(fd, buf + got, cap - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "lines: recv: %s\n", strerror(errno));
			break;
		}
		if (n == 0)
			break;
		t_last = now_ns();
		if (!t_first)
			t_first = t_last;
		got += (size_t)n;
		if (!t_half && got >= expect / 2)
			t_half = t_last;
	}
	if (outfile) {
		FILE *f = fopen(outfile, "w");
		if (!f || fwrite(buf, 1, got, f) != got || fclose(f) != 0) {
			perror(outfile);
			return 2;
		}
	}
	unsigned char *seen = calloc((size_t)nthreads * (size_t)nlines, 1);
	unsigned long long lines = 0, whole = 0, torn = 0, dups = 0, missing = 0;
	if (!seen)
		return 2;
	for (size_t a = 0; a < got;) {
		char *nl = memchr(buf + a, '\n', got - a);
		size_t b = nl ? (size_t)(nl - buf) + 1 : got;
		int t, s;
		lines++;
		if (whole_line(buf + a, b - a, &t, &s)) {
			whole++;
			if (seen[t * nlines + s]++)
				dups++;
		} else {
			torn++;
		}
		a = b;
	}
	for (size_t i = 0; i < (size_t)nthreads * (size_t)nlines; i++)
		missing += !seen[i];
	printf("bytes=%zu lines=%llu whole=%llu torn=%llu dups=%llu missing=%llu first_ms=%.1f "
	       "half_ms=%.1f elapsed_ns=%llu\n",
	       got, lines, whole, torn, dups, missing,
	       t_first ? (double)(t_first - t_acc) / 1e6 : -1.0,
	       t_half ? (double)(t_half - t_acc) / 1e6 : -1.0,
	       (unsigned long long)(t_last - t_first));
	return 0;
}

int main(int argc, char **argv)
{
	const char *portfile = NULL, *outfile = NULL, *mode;
	int opt, port = 0;

	while ((opt = getopt(argc, argv, "p:P:t:n:l:m:o:")) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'P': portfile = optarg; break;
		case 't': nthreads = atoi(optarg); break;
		case 'n': nlines = atoi(optarg); break;
		case 'l': line_len = (size_t)strtoull(optarg, NULL, 10); break;
		case 'm': method = optarg; break;
		case 'o': outfile = optarg; break;
		default: return 2;
		}
	}
	if (nthreads < 1 || nthreads > MAX_THREADS || nlines < 1 || nlines > 999999 ||
	    line_len < HDR_LEN + TAIL_LEN + 1) {
		fprintf(stderr, "lines: bad -t, -n or -l\n");
		return 2;
	}
	mode = optind < argc ? argv[optind] : ""; /* the options may come before it, or after */
	if (!strcmp(mode, "send"))
		return do_send(port);
	if (!strcmp(mode, "recv"))
		return do_recv(portfile, outfile);
	if (!strcmp(mode, "gen")) {
		char *line = malloc(line_len);
		if (!line)
			return 2;
		for (int t = 0; t < nthreads; t++)
			for (int s = 0; s < nlines; s++) {
				make_line(line, t, s);
				fwrite(line, 1, line_len, stdout);
			}
		free(line);
		return 0;
	}
	fprintf(stderr, "usage: lines send|recv|gen [options]\n");
	return 2;
}
