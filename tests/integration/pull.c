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

struct opts {
	int fam, nonblock, cloexec, tlimit, nohash, idle_ms, port, nidle, idle_port;
	unsigned long long count, early_ms;
	double duration;
	const char *host, *upath, *portfile, *script;
};

/* The options into o (and the globals method, udp, bufsz, waitall); 0, or 2 on a bad one. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	int opt;

	*o = (struct opts){ .fam = AF_INET, .tlimit = 60, .idle_ms = 1500, .port = -1, .idle_port = -1 };
	while ((opt = getopt(argc, argv, "46h:p:U:uP:c:i:m:b:WNCe:S:xD:T:I:J:")) != -1) {
		switch (opt) {
		case '4': o->fam = AF_INET; break;
		case '6': o->fam = AF_INET6; break;
		case 'h': o->host = optarg; break;
		case 'p': o->port = atoi(optarg); break;
		case 'U': o->upath = optarg; break;
		case 'u': udp = 1; break;
		case 'P': o->portfile = optarg; break;
		case 'c': o->count = strtoull(optarg, NULL, 10); break;
		case 'i': o->idle_ms = atoi(optarg); break;
		case 'm': method = optarg; break;
		case 'b': bufsz = (size_t)strtoull(optarg, NULL, 10); break;
		case 'W': waitall = 1; break;
		case 'N': o->nonblock = 1; break;
		case 'C': o->cloexec = 1; break;
		case 'e': o->early_ms = strtoull(optarg, NULL, 10); break;
		case 'S': o->script = optarg; break;
		case 'x': o->nohash = 1; break;
		case 'D': o->duration = atof(optarg); break;
		case 'T': o->tlimit = atoi(optarg); break;
		case 'I': o->nidle = atoi(optarg); break;
		case 'J': o->idle_port = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: pull [-4|-6] [-h HOST] -p PORT|-U PATH|-u -P PORTFILE [-c N] [-m METHOD] "
					"[-b SIZE] [-W] [-N] [-C] [-e MS] [-S SCRIPT] [-x] [-T SEC]\n");
			return 2;
		}
	}
	if ((!udp && o->port < 0 && !o->upath) || (udp && !o->portfile) || bufsz < 16 || bufsz > (64u << 20)) return 2;
	return 0;
}

/* The UDP socket bound to ss; its port goes to portfile (written aside, then renamed). 0 or 2. */
static int bind_udp(int fd, int fam, struct sockaddr_storage *ss, socklen_t len, const char *portfile)
{
	int rcvbuf = 4 << 20;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
	if (bind(fd, (struct sockaddr *)ss, len) < 0) { perror("pull: bind"); return 2; }
	socklen_t l2 = sizeof *ss;
	getsockname(fd, (struct sockaddr *)ss, &l2);
	int p = fam == AF_INET6 ? ntohs(((struct sockaddr_in6 *)ss)->sin6_port)
				: ntohs(((struct sockaddr_in *)ss)->sin_port);
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", portfile);
	FILE *pf = fopen(tmp, "w");
	if (!pf) { perror("portfile"); return 2; }
	fprintf(pf, "%d\n", p);
	fclose(pf);
	rename(tmp, portfile);
	return 0;
}

/* A stream connected to ss, waiting up to 10 s when the socket is non-blocking. 0 or 1. */
static int connect_stream(int fd, const struct sockaddr_storage *ss, socklen_t len)
{
	if (connect(fd, (const struct sockaddr *)ss, len) == 0)
		return 0;
	if (errno != EINPROGRESS) { fprintf(stderr, "pull: connect: %s\n", ename(errno)); return 1; }
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	if (poll(&p, 1, 10000) != 1) { fprintf(stderr, "pull: connect timeout\n"); return 1; }
	int err = 0; socklen_t el = sizeof err;
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
	if (err) { fprintf(stderr, "pull: connect: %s\n", ename(err)); return 1; }
	return 0;
}

/* The socket to read, in *fd, with the flags asked for checked; 0, or the exit status. */
static int open_socket(const struct opts *o, int *fd)
{
	int type = (udp ? SOCK_DGRAM : SOCK_STREAM) | (o->nonblock ? SOCK_NONBLOCK : 0) | (o->cloexec ? SOCK_CLOEXEC : 0);
	int rc;
	*fd = socket(o->upath ? AF_UNIX : o->fam, type, 0);
	if (*fd < 0) { perror("socket"); return 2; }
	struct sockaddr_storage ss;
	socklen_t len = loopback_addr(&ss, o->fam, o->host, o->upath, udp ? 0 : o->port);
	if (!len) return 2;
	rc = udp ? bind_udp(*fd, o->fam, &ss, len, o->portfile) : connect_stream(*fd, &ss, len);
	if (rc) return rc;
	if (o->cloexec && !(fcntl(*fd, F_GETFD) & FD_CLOEXEC)) { fprintf(stderr, "pull: CLOEXEC not set\n"); return 1; }
	if (o->nonblock && !(fcntl(*fd, F_GETFL) & O_NONBLOCK)) { fprintf(stderr, "pull: NONBLOCK not set\n"); return 1; }
	return 0;
}

/* -S: each step one call (its result printed) or a sleep. */
static int run_script(int fd, const char *script)
{
	uint64_t t00 = now_ns();
	char *s = strdup(script), *save = NULL;
	unsigned long long got = 0;
	for (char *tok = strtok_r(s, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (script_sleep(tok))
			continue;
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

/* What the reading loop counts, printed at the end. */
struct tally {
	uint64_t h;
	unsigned long long tot, msgs, calls, eagain, shortn, errors, late;
	size_t minsz, maxsz;
	int lasterr;
	uint64_t first, last; /* the times of the first and the last bytes */
};

/* Waits for something to read: 0 to read, 1 to stop (idle, or nothing in 30 s), -1 to wait again. */
static int wait_readable(int fd, int ep, const struct opts *o, const struct tally *s)
{
	if (o->nonblock) {
		struct epoll_event ev;
		int r = epoll_wait(ep, &ev, 1, udp && s->first ? o->idle_ms : 30000);
		if (r < 0 && errno == EINTR) return -1;
		if (r == 0) return 1;
	} else if (udp) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, s->first ? o->idle_ms : 30000) <= 0) return 1;
	}
	return 0;
}

/* -N: an epoll instance that watches fd for input; else -1. */
static int watch(int fd, int nonblock)
{
	int ep = -1;
	if (nonblock) {
		ep = epoll_create1(EPOLL_CLOEXEC);
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	}
	return ep;
}

/* Reads until EOF, the datagram count, the idle time or the deadline (-D; 0: none). */
static void receive(int fd, int ep, const struct opts *o, uint64_t deadline, struct tally *s)
{
	size_t lens[4];
	int pending_short = 0;
	for (;;) {
		if (deadline && now_ns() >= deadline) break;
		int w = wait_readable(fd, ep, o, s);
		if (w < 0) continue;
		if (w > 0) break;
		unsigned nm = 0;
		ssize_t r = one_call(fd, bufsz, &nm, lens);
		s->calls++;
		if (r < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK) { s->eagain++; continue; }
			if (errno == EINTR) { s->lasterr = EINTR; s->errors++; continue; }
			s->lasterr = errno; s->errors++;
			fprintf(stderr, "pull: %s: %s\n", method, ename(errno));
			break;
		}
		if (r == 0 && !udp) break;
		if (pending_short) s->shortn++;
		pending_short = waitall && !udp && (size_t)r < bufsz;
		uint64_t t = now_ns();
		if (!s->first) s->first = t;
		s->last = t;
		if (o->early_ms && t - s->first >= o->early_ms * 1000000u) s->late += (unsigned long long)r;
		if (!o->nohash) s->h = fnv_update(s->h, buf, (size_t)r);
		s->tot += (unsigned long long)r;
		s->msgs += nm;
		if (udp)
			for (unsigned i = 0; i < nm; i++) {
				if (lens[i] < s->minsz) s->minsz = lens[i];
				if (lens[i] > s->maxsz) s->maxsz = lens[i];
			}
		if (udp && o->count && s->msgs >= o->count) break;
	}
}

int main(int argc, char **argv)
{
	struct opts o;
	int fd, rc = parse_opts(argc, argv, &o);
	if (rc) return rc;
	alarm((unsigned)o.tlimit);
	if (o.nidle > 0 && (o.idle_port <= 0 || idle_readers(o.nidle, o.idle_port) != 0)) {
		perror("pull: idle connections");
		return 1;
	}
	if (o.nidle > 0) {
		struct timespec settle = {0, 200 * 1000 * 1000}; /* let every idle reader block */
		nanosleep(&settle, NULL);
	}
	buf = malloc(bufsz);
	rc = open_socket(&o, &fd);
	if (rc) return rc;
	if (o.script)
		return run_script(fd, o.script);

	int ep = watch(fd, o.nonblock);
	struct tally s = { .h = 0xcbf29ce484222325ull, .minsz = (size_t)-1 };
	uint64_t c0 = cpu_ns(), t0 = now_ns();
	uint64_t deadline = o.duration > 0 ? t0 + (uint64_t)(o.duration * 1e9) : 0;
	receive(fd, ep, &o, deadline, &s);
	uint64_t t1 = now_ns(), c1 = cpu_ns();
	unsigned long long late_ns = 0;
	if (o.early_ms && s.last > s.first + o.early_ms * 1000000u) late_ns = s.last - s.first - o.early_ms * 1000000u;
	printf("pid=%d recv=%llu msgs=%llu calls=%llu eagain=%llu short=%llu elapsed_ns=%llu total_ns=%llu cpu_ns=%llu "
	       "fnv=%016llx minsz=%zu maxsz=%zu late_bytes=%llu late_ns=%llu errors=%llu lasterr=%s\n",
	       (int)getpid(), s.tot, s.msgs, s.calls, s.eagain, s.shortn, (unsigned long long)(s.last - s.first),
	       (unsigned long long)(t1 - t0), (unsigned long long)(c1 - c0), (unsigned long long)s.h,
	       s.minsz == (size_t)-1 ? 0 : s.minsz, s.maxsz, s.late, late_ns, s.errors, s.lasterr ? ename(s.lasterr) : "none");
	return s.errors ? 1 : 0;
}
