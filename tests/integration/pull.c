/* pull: a client that receives a stream (until EOF) or datagrams with a chosen method.
 *
 *   pull [-4|-6] [-h HOST] -p PORT | -U PATH     connect there (TCP or unix stream) and read to EOF
 *   pull -u [-4|-6] [-h BINDADDR] -P PORTFILE    UDP: bind, write the port, receive datagrams
 *        -c COUNT   UDP: stop after COUNT datagrams (else after IDLE_MS, -i, default 1500)
 *        -m METHOD  read|recv|recvfrom|recvmsg|recvmmsg|readv|splice (default read)
 *        -b SIZE    buffer per call (default 65536)
 *        -W         MSG_WAITALL (recv, recvfrom, recvmsg, recvmmsg)
 *        -N         SOCK_NONBLOCK and epoll_wait() for EPOLLIN before each read
 *        -C         SOCK_CLOEXEC
 *        -e MS      report bytes after the first MS ms since the first byte (late_bytes/late_ns)
 *        -S SCRIPT  script mode: steps "BYTES" (one call with a buffer of that size, result
 *                   printed) or "sleep:MS"
 *        -D SECONDS stop reading after this long (stream: close early; for benchmarks)
 *        -I N -J PORT  first open N more connections to 127.0.0.1:PORT, each with a thread
 *                   blocked in read() on it (idle readers: the server sends nothing there);
 *                   total_ns then counts from after they are blocked
 *        -x         do not hash;  -T SECONDS  hard limit (alarm, default 60)
 * Output: pid=P recv=BYTES msgs=M calls=C eagain=E short=S elapsed_ns=NS total_ns=NS cpu_ns=NS
 *         fnv=HEX minsz=A maxsz=B late_bytes=L late_ns=LN errors=N lasterr=NAME
 * "short" counts MSG_WAITALL returns smaller than asked for, other than the last (EOF).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

static const char *method = "read";
static int waitall, udp;
static size_t bufsz = 65536;
static unsigned char *buf;
static int spipe[2] = {-1, -1}; /* -m splice: socket -> this pipe -> buf */

/* One call; returns bytes (sum over messages for recvmmsg) and sets *nmsg, *lens for datagrams. */
static ssize_t one_call(int fd, size_t n, unsigned *nmsg, size_t *lens)
{
	int fl = waitall ? MSG_WAITALL : 0;
	ssize_t r;
	*nmsg = 1;
	if (!strcmp(method, "read")) r = read(fd, buf, n);
	else if (!strcmp(method, "splice")) {
		if (spipe[0] < 0 && pipe(spipe) != 0)
			return -1;
		if (n > 65536)
			n = 65536; /* what the pipe holds */
		r = splice(fd, NULL, spipe[1], NULL, n, 0);
		for (ssize_t got = 0; r > 0 && got < r;) { /* the pipe's bytes, to hash */
			ssize_t k = read(spipe[0], buf + got, (size_t)(r - got));
			if (k <= 0)
				return -1;
			got += k;
		}
	}
	else if (!strcmp(method, "recv")) r = recv(fd, buf, n, fl);
	else if (!strcmp(method, "recvfrom")) {
		struct sockaddr_storage from;
		socklen_t fl2 = sizeof from;
		r = recvfrom(fd, buf, n, fl, (struct sockaddr *)&from, &fl2);
	} else if (!strcmp(method, "recvmsg")) {
		struct iovec iov[2] = { { buf, n / 2 }, { buf + n / 2, n - n / 2 } };
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
		r = recvmsg(fd, &m, fl);
	} else if (!strcmp(method, "readv")) {
		struct iovec iov[3] = { { buf, n / 3 }, { buf + n / 3, n / 3 }, { buf + 2 * (n / 3), n - 2 * (n / 3) } };
		r = readv(fd, iov, 3);
	} else if (!strcmp(method, "recvmmsg")) {
		/* stream: 4 parts of the buffer in order; datagrams: up to 4 of size n/4 */
		struct mmsghdr mm[4];
		struct iovec iov[4];
		memset(mm, 0, sizeof mm);
		size_t part = n / 4;
		for (int i = 0; i < 4; i++) {
			iov[i].iov_base = buf + (size_t)i * part;
			iov[i].iov_len = part;
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
		}
		int k = recvmmsg(fd, mm, 4, fl | MSG_WAITFORONE, NULL);
		if (k < 0) return -1;
		size_t tot = 0;
		for (int i = 0; i < k; i++) {
			if (lens) lens[i] = mm[i].msg_len;
			/* a stream message shorter than its part leaves a hole: compact */
			if (tot != (size_t)i * part) memmove(buf + tot, buf + (size_t)i * part, mm[i].msg_len);
			tot += mm[i].msg_len;
		}
		*nmsg = (unsigned)k;
		return (ssize_t)tot;
	} else {
		fprintf(stderr, "pull: unknown method %s\n", method);
		exit(2);
	}
	if (r >= 0 && lens) lens[0] = (size_t)r;
	return r;
}

static void *idle_reader(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char b[65536];
	while (read(fd, b, sizeof b) > 0) /* blocks: nothing comes until the server closes */
		;
	return NULL;
}

/* N connections to port, each with a detached thread blocked in read(). 0 or -1. */
static int idle_readers(int n, int port)
{
	for (int i = 0; i < n; i++) {
		pthread_t t;
		int fd = dial_loopback(NULL, port);
		if (fd < 0 || pthread_create(&t, NULL, idle_reader, (void *)(intptr_t)fd) != 0)
			return -1;
		pthread_detach(t);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int opt, fam = AF_INET, nonblock = 0, cloexec = 0, tlimit = 60, nohash = 0, idle_ms = 1500;
	int port = -1, nidle = 0, idle_port = -1;
	unsigned long long count = 0, early_ms = 0;
	double duration = 0;
	const char *host = NULL, *upath = NULL, *portfile = NULL, *script = NULL;
	while ((opt = getopt(argc, argv, "46h:p:U:uP:c:i:m:b:WNCe:S:xD:T:I:J:")) != -1) {
		switch (opt) {
		case '4': fam = AF_INET; break;
		case '6': fam = AF_INET6; break;
		case 'h': host = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'U': upath = optarg; break;
		case 'u': udp = 1; break;
		case 'P': portfile = optarg; break;
		case 'c': count = strtoull(optarg, NULL, 10); break;
		case 'i': idle_ms = atoi(optarg); break;
		case 'm': method = optarg; break;
		case 'b': bufsz = (size_t)strtoull(optarg, NULL, 10); break;
		case 'W': waitall = 1; break;
		case 'N': nonblock = 1; break;
		case 'C': cloexec = 1; break;
		case 'e': early_ms = strtoull(optarg, NULL, 10); break;
		case 'S': script = optarg; break;
		case 'x': nohash = 1; break;
		case 'D': duration = atof(optarg); break;
		case 'T': tlimit = atoi(optarg); break;
		case 'I': nidle = atoi(optarg); break;
		case 'J': idle_port = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: pull [-4|-6] [-h HOST] -p PORT|-U PATH|-u -P PORTFILE [-c N] [-m METHOD] "
					"[-b SIZE] [-W] [-N] [-C] [-e MS] [-S SCRIPT] [-x] [-T SEC]\n");
			return 2;
		}
	}
	if ((!udp && port < 0 && !upath) || (udp && !portfile) || bufsz < 16 || bufsz > (64u << 20)) return 2;
	alarm((unsigned)tlimit);
	if (nidle > 0 && (idle_port <= 0 || idle_readers(nidle, idle_port) != 0)) {
		perror("pull: idle connections");
		return 1;
	}
	if (nidle > 0) {
		struct timespec settle = {0, 200 * 1000 * 1000}; /* let every idle reader block */
		nanosleep(&settle, NULL);
	}
	buf = malloc(bufsz);

	int type = (udp ? SOCK_DGRAM : SOCK_STREAM) | (nonblock ? SOCK_NONBLOCK : 0) | (cloexec ? SOCK_CLOEXEC : 0);
	int fd = socket(upath ? AF_UNIX : fam, type, 0);
	if (fd < 0) { perror("socket"); return 2; }
	struct sockaddr_storage ss;
	socklen_t len = loopback_addr(&ss, fam, host, upath, udp ? 0 : port);
	if (!len) return 2;
	if (udp) {
		int rcvbuf = 4 << 20;
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
		if (bind(fd, (struct sockaddr *)&ss, len) < 0) { perror("pull: bind"); return 2; }
		socklen_t l2 = sizeof ss;
		getsockname(fd, (struct sockaddr *)&ss, &l2);
		int p = fam == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
					: ntohs(((struct sockaddr_in *)&ss)->sin_port);
		char tmp[4096];
		snprintf(tmp, sizeof tmp, "%s.tmp", portfile);
		FILE *pf = fopen(tmp, "w");
		if (!pf) { perror("portfile"); return 2; }
		fprintf(pf, "%d\n", p);
		fclose(pf);
		rename(tmp, portfile);
	} else if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
		if (errno != EINPROGRESS) { fprintf(stderr, "pull: connect: %s\n", ename(errno)); return 1; }
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		if (poll(&p, 1, 10000) != 1) { fprintf(stderr, "pull: connect timeout\n"); return 1; }
		int err = 0; socklen_t el = sizeof err;
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err) { fprintf(stderr, "pull: connect: %s\n", ename(err)); return 1; }
	}
	if (cloexec && !(fcntl(fd, F_GETFD) & FD_CLOEXEC)) { fprintf(stderr, "pull: CLOEXEC not set\n"); return 1; }
	if (nonblock && !(fcntl(fd, F_GETFL) & O_NONBLOCK)) { fprintf(stderr, "pull: NONBLOCK not set\n"); return 1; }

	if (script) {
		uint64_t t00 = now_ns();
		char *s = strdup(script), *save = NULL;
		unsigned long long got = 0;
		for (char *tok = strtok_r(s, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			if (!strncmp(tok, "sleep:", 6)) {
				long ms = atol(tok + 6);
				struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
				while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
				continue;
			}
			size_t n = (size_t)strtoull(tok, NULL, 10);
			if (n > bufsz) n = bufsz;
			unsigned nm;
			uint64_t t = now_ns();
			errno = 0;
			ssize_t r = one_call(fd, n, &nm, NULL);
			int e = errno;
			uint64_t t2 = now_ns();
			if (r > 0) got += (unsigned long long)r;
			printf("step recv %zu -> %zd %s at_ms=%.1f took_ms=%.1f\n", n, r, r < 0 ? ename(e) : "OK",
			       (double)(t - t00) / 1e6, (double)(t2 - t) / 1e6);
			fflush(stdout);
		}
		printf("pid=%d recv=%llu\n", (int)getpid(), got);
		return 0;
	}

	int ep = -1;
	if (nonblock) {
		ep = epoll_create1(EPOLL_CLOEXEC);
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	}
	uint64_t h = 0xcbf29ce484222325ull;
	unsigned long long tot = 0, msgs = 0, calls = 0, eagain = 0, shortn = 0, errors = 0, late = 0;
	size_t minsz = (size_t)-1, maxsz = 0, lens[4];
	int lasterr = 0, pending_short = 0;
	uint64_t first = 0, last = 0, c0 = cpu_ns(), t0 = now_ns();
	uint64_t deadline = duration > 0 ? t0 + (uint64_t)(duration * 1e9) : 0;
	for (;;) {
		if (deadline && now_ns() >= deadline) break;
		if (nonblock) {
			struct epoll_event ev;
			int r = epoll_wait(ep, &ev, 1, udp && first ? idle_ms : 30000);
			if (r < 0 && errno == EINTR) continue;
			if (r == 0) break;
		} else if (udp) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			if (poll(&p, 1, first ? idle_ms : 30000) <= 0) break;
		}
		unsigned nm = 0;
		ssize_t r = one_call(fd, bufsz, &nm, lens);
		calls++;
		if (r < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK) { eagain++; continue; }
			if (errno == EINTR) { lasterr = EINTR; errors++; continue; }
			lasterr = errno; errors++;
			fprintf(stderr, "pull: %s: %s\n", method, ename(errno));
			break;
		}
		if (r == 0 && !udp) break;
		if (pending_short) shortn++;
		pending_short = waitall && !udp && (size_t)r < bufsz;
		uint64_t t = now_ns();
		if (!first) first = t;
		last = t;
		if (early_ms && t - first >= early_ms * 1000000u) late += (unsigned long long)r;
		if (!nohash) h = fnv_update(h, buf, (size_t)r);
		tot += (unsigned long long)r;
		msgs += nm;
		if (udp)
			for (unsigned i = 0; i < nm; i++) {
				if (lens[i] < minsz) minsz = lens[i];
				if (lens[i] > maxsz) maxsz = lens[i];
			}
		if (udp && count && msgs >= count) break;
	}
	uint64_t t1 = now_ns(), c1 = cpu_ns();
	unsigned long long late_ns = 0;
	if (early_ms && last > first + early_ms * 1000000u) late_ns = last - first - early_ms * 1000000u;
	printf("pid=%d recv=%llu msgs=%llu calls=%llu eagain=%llu short=%llu elapsed_ns=%llu total_ns=%llu cpu_ns=%llu "
	       "fnv=%016llx minsz=%zu maxsz=%zu late_bytes=%llu late_ns=%llu errors=%llu lasterr=%s\n",
	       (int)getpid(), tot, msgs, calls, eagain, shortn, (unsigned long long)(last - first),
	       (unsigned long long)(t1 - t0), (unsigned long long)(c1 - c0), (unsigned long long)h,
	       minsz == (size_t)-1 ? 0 : minsz, maxsz, late, late_ns, errors, lasterr ? ename(lasterr) : "none");
	return errors ? 1 : 0;
}
