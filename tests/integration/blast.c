/* blast: a client that sends a known byte stream with a chosen method.
 *
 *   blast [-4|-6] [-h HOST] -p PORT | -U PATH   where to send (TCP by default; -u: UDP)
 *         -n BYTES      bytes to send on each connection (stream mode)
 *         -D SECONDS    instead of -n: send for this long, then stop (counted at the end)
 *         -s SIZE       bytes per call (default 16384)
 *         -m METHOD     write|send|sendto|sendmsg|sendmmsg|writev|sendfile|splice (default write)
 *         -N            SOCK_NONBLOCK, poll() for POLLOUT on EAGAIN
 *         -C            SOCK_CLOEXEC
 *         -k K          K connections, one thread each, each sends the same stream
 *         -u            UDP: -d SIZE datagram size, -c COUNT datagrams (or -D seconds)
 *         -S SCRIPT     script mode: space separated steps, each "BYTES" (one call of that
 *                       size, result printed) or "sleep:MS"
 *         -T SECONDS    hard time limit (alarm), default 60
 *
 * The stream is the test pattern (see pattern_make); its FNV-1a 64 is printed so a receiver
 * can check the bytes exactly. Output, one line:
 *   pid=P sent=BYTES msgs=M calls=C eagain=E elapsed_ns=NS cpu_ns=NS fnv=HEX errors=N lasterr=NAME
 * Exit 0 on success, 1 on a failed call (other than EAGAIN), 2 on usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"


static unsigned char *pat;
static int pat_fd = -1; /* file holding pattern twice over, for sendfile */


/* options */
static int fam = AF_INET, udp, nonblock, cloexec, nconn = 1;
static const char *host, *upath, *method = "write", *script;
static int port = -1;
static unsigned long long nbytes, count;
static double duration;
static size_t wsize = 16384, dsize = 1000;

struct result {
	unsigned long long sent, msgs, calls, eagain, errors;
	int lasterr;
	uint64_t fnv;
	uint64_t t0, t1;
};

static int make_socket(struct result *r)
{
	int type = udp ? SOCK_DGRAM : SOCK_STREAM;
	if (nonblock) type |= SOCK_NONBLOCK;
	if (cloexec) type |= SOCK_CLOEXEC;
	int f = upath ? AF_UNIX : fam;
	int fd = socket(f, type, 0);
	if (fd < 0) { r->lasterr = errno; perror("socket"); return -1; }
	struct sockaddr_storage ss;
	socklen_t len = loopback_addr(&ss, fam, host, upath, port);
	if (!len) { fprintf(stderr, "bad host\n"); exit(2); }
	if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
		if (errno != EINPROGRESS) { r->lasterr = errno; fprintf(stderr, "blast: connect: %s\n", ename(errno)); close(fd); return -1; }
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		if (poll(&p, 1, 10000) != 1) { fprintf(stderr, "blast: connect timeout\n"); close(fd); return -1; }
		int err = 0; socklen_t el = sizeof err;
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err) { r->lasterr = err; fprintf(stderr, "blast: connect: %s\n", ename(err)); close(fd); return -1; }
	}
	if (cloexec && !(fcntl(fd, F_GETFD) & FD_CLOEXEC)) { fprintf(stderr, "blast: CLOEXEC not set\n"); exit(1); }
	if (nonblock && !(fcntl(fd, F_GETFL) & O_NONBLOCK)) { fprintf(stderr, "blast: NONBLOCK not set\n"); exit(1); }
	return fd;
}

/* One call of the chosen method; returns bytes sent or -1 with errno. For sendmmsg the data is
 * split in up to 4 messages (stream) or it sends *nmsg datagrams of dsize (udp). */
static ssize_t one_call(int fd, unsigned long long pos, size_t n, unsigned *nmsg)
{
	const unsigned char *buf = pat + (pos % PAT_LEN);
	*nmsg = 1;
	if (!strcmp(method, "write")) return write(fd, buf, n);
	if (!strcmp(method, "send")) return send(fd, buf, n, 0);
	if (!strcmp(method, "sendto")) return sendto(fd, buf, n, 0, NULL, 0);
	if (!strcmp(method, "sendmsg")) {
		struct iovec iov[2] = { { (void *)buf, n / 2 }, { (void *)(buf + n / 2), n - n / 2 } };
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
		return sendmsg(fd, &m, 0);
	}
	if (!strcmp(method, "writev")) {
		struct iovec iov[3] = { { (void *)buf, n / 3 }, { (void *)(buf + n / 3), n / 3 },
					{ (void *)(buf + 2 * (n / 3)), n - 2 * (n / 3) } };
		return writev(fd, iov, 3);
	}
	if (!strcmp(method, "sendfile")) {
		off_t off = (off_t)(pos % PAT_LEN);
		return sendfile(fd, pat_fd, &off, n);
	}
	if (!strcmp(method, "splice")) {
		/* the chunk from the pattern file into a pipe, then all of it from the pipe to the
		 * socket (what a proxy does) */
		static int p[2] = {-1, -1};
		loff_t off = (loff_t)(pos % PAT_LEN);
		if (p[0] < 0 && pipe(p) != 0)
			return -1;
		ssize_t in = splice(pat_fd, &off, p[1], NULL, n, 0);
		size_t out = 0;
		while (in > 0 && out < (size_t)in) {
			ssize_t k = splice(p[0], NULL, fd, NULL, (size_t)in - out, 0);
			if (k < 0 && errno == EAGAIN) {
				struct pollfd w = {fd, POLLOUT, 0};
				poll(&w, 1, 1000);
				continue;
			}
			if (k <= 0)
				return out ? (ssize_t)out : -1;
			out += (size_t)k;
		}
		return in < 0 ? -1 : (ssize_t)out;
	}
	if (!strcmp(method, "sendmmsg")) {
		struct mmsghdr mm[4];
		struct iovec iov[4];
		memset(mm, 0, sizeof mm);
		unsigned k;
		if (udp) {
			/* n is a multiple of dsize here: n/dsize datagrams, at most 4 */
			k = (unsigned)(n / dsize);
			if (k < 1) k = 1;
			if (k > 4) k = 4;
			for (unsigned i = 0; i < k; i++) {
				iov[i].iov_base = (void *)(buf + i * dsize);
				iov[i].iov_len = dsize;
			}
		} else {
			k = n >= 4 ? 4 : 1;
			size_t part = n / k, off = 0;
			for (unsigned i = 0; i < k; i++) {
				size_t l = i == k - 1 ? n - off : part;
				iov[i].iov_base = (void *)(buf + off);
				iov[i].iov_len = l;
				off += l;
			}
		}
		for (unsigned i = 0; i < k; i++) { mm[i].msg_hdr.msg_iov = &iov[i]; mm[i].msg_hdr.msg_iovlen = 1; }
		int r = sendmmsg(fd, mm, k, 0);
		if (r < 0) return -1;
		size_t tot = 0;
		for (int i = 0; i < r; i++) tot += mm[i].msg_len;
		*nmsg = (unsigned)r;
		/* a stream sendmmsg that stopped inside a message: only count contiguous bytes */
		return (ssize_t)tot;
	}
	fprintf(stderr, "blast: unknown method %s\n", method);
	exit(2);
}

static void wait_out(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	poll(&p, 1, 1000);
}

static void run_stream(struct result *r)
{
	int fd = make_socket(r);
	if (fd < 0) { r->errors++; return; }
	r->fnv = FNV_INIT;
	r->t0 = now_ns();
	uint64_t deadline = duration > 0 ? r->t0 + (uint64_t)(duration * 1e9) : 0;
	unsigned long long pos = 0;
	for (;;) {
		size_t n = wsize;
		if (duration) {
			if (now_ns() >= deadline) break;
		} else if (udp) {
			if (r->msgs >= count) break;
		} else {
			if (pos >= nbytes) break;
			if (nbytes - pos < n) n = (size_t)(nbytes - pos);
		}
		if (udp) {
			unsigned long long left = duration ? 4 : count - r->msgs;
			n = dsize;
			if (!strcmp(method, "sendmmsg")) n = dsize * (size_t)(left < 4 ? left : 4);
		}
		unsigned nm;
		ssize_t w = one_call(fd, pos, n, &nm);
		r->calls++;
		if (w < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK) { r->eagain++; wait_out(fd); continue; }
			if (errno == EINTR) { r->lasterr = EINTR; r->errors++; fprintf(stderr, "blast: EINTR\n"); continue; }
			r->lasterr = errno;
			r->errors++;
			fprintf(stderr, "blast: %s: %s after %llu bytes\n", method, ename(errno), pos);
			break;
		}
		r->fnv = fnv_update(r->fnv, pat + (pos % PAT_LEN), (size_t)w);
		pos += (unsigned long long)w;
		r->msgs += nm;
	}
	r->t1 = now_ns();
	r->sent = pos;
	if (!udp) shutdown(fd, SHUT_WR);
	close(fd);
}

static void *thr(void *arg)
{
	run_stream(arg);
	return NULL;
}

static int run_script(void)
{
	struct result r;
	memset(&r, 0, sizeof r);
	int fd = make_socket(&r);
	if (fd < 0) return 1;
	uint64_t t00 = now_ns();
	unsigned long long pos = 0;
	char *s = strdup(script), *save = NULL;
	for (char *tok = strtok_r(s, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (script_sleep(tok))
			continue;
		size_t n = (size_t)strtoull(tok, NULL, 10);
		uint64_t t = now_ns();
		unsigned nm;
		errno = 0;
		ssize_t w = one_call(fd, pos, n, &nm);
		int e = errno;
		uint64_t t2 = now_ns();
		if (w >= 0) pos += (unsigned long long)w;
		printf("step send %zu -> %zd %s at_ms=%.1f took_ms=%.1f\n", n, w, w < 0 ? ename(e) : "OK",
		       (double)(t - t00) / 1e6, (double)(t2 - t) / 1e6);
		fflush(stdout);
	}
	free(s);
	close(fd);
	printf("pid=%d sent=%llu\n", (int)getpid(), pos);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: blast [-4|-6] [-h HOST] -p PORT|-U PATH [-u] [-n BYTES|-D SEC|-c COUNT] "
			"[-s SIZE] [-d DGRAM] [-m METHOD] [-N] [-C] [-k K] [-S SCRIPT] [-T SEC]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int opt, tlimit = 60;
	while ((opt = getopt(argc, argv, "46h:p:U:un:D:c:s:d:m:NCk:S:T:")) != -1) {
		switch (opt) {
		case '4': fam = AF_INET; break;
		case '6': fam = AF_INET6; break;
		case 'h': host = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'U': upath = optarg; break;
		case 'u': udp = 1; break;
		case 'n': nbytes = strtoull(optarg, NULL, 10); break;
		case 'D': duration = atof(optarg); break;
		case 'c': count = strtoull(optarg, NULL, 10); break;
		case 's': wsize = (size_t)strtoull(optarg, NULL, 10); break;
		case 'd': dsize = (size_t)strtoull(optarg, NULL, 10); break;
		case 'm': method = optarg; break;
		case 'N': nonblock = 1; break;
		case 'C': cloexec = 1; break;
		case 'k': nconn = atoi(optarg); break;
		case 'S': script = optarg; break;
		case 'T': tlimit = atoi(optarg); break;
		default: usage();
		}
	}
	if ((port < 0 && !upath) || nconn < 1 || nconn > 64 || wsize < 1 || wsize > MAX_CALL || dsize > 65000) usage();
	alarm((unsigned)tlimit);
	pat = pattern_make();
	if (!strcmp(method, "sendfile") || !strcmp(method, "splice")) {
		char tmpl[] = "/tmp/blast.XXXXXX";
		pat_fd = mkstemp(tmpl);
		if (pat_fd < 0) { perror("mkstemp"); return 2; }
		unlink(tmpl);
		if (write(pat_fd, pat, PAT_LEN + MAX_CALL) != (ssize_t)(PAT_LEN + MAX_CALL)) { perror("write"); return 2; }
	}
	if (script) return run_script();
	if (udp && !count && !duration) count = nbytes ? nbytes / dsize : 1;

	struct result *res = calloc((size_t)nconn, sizeof *res);
	pthread_t *th = calloc((size_t)nconn, sizeof *th);
	uint64_t c0 = cpu_ns(), t0 = now_ns();
	if (nconn == 1) run_stream(&res[0]);
	else {
		for (int i = 0; i < nconn; i++) pthread_create(&th[i], NULL, thr, &res[i]);
		for (int i = 0; i < nconn; i++) pthread_join(th[i], NULL);
	}
	uint64_t t1 = now_ns(), c1 = cpu_ns();
	struct result tot;
	memset(&tot, 0, sizeof tot);
	for (int i = 0; i < nconn; i++) {
		tot.sent += res[i].sent; tot.msgs += res[i].msgs; tot.calls += res[i].calls;
		tot.eagain += res[i].eagain; tot.errors += res[i].errors;
		if (res[i].lasterr) tot.lasterr = res[i].lasterr;
		if (nconn > 1)
			printf("conn=%d sent=%llu elapsed_ns=%llu fnv=%016llx\n", i, res[i].sent,
			       (unsigned long long)(res[i].t1 - res[i].t0), (unsigned long long)res[i].fnv);
	}
	printf("pid=%d sent=%llu msgs=%llu calls=%llu eagain=%llu elapsed_ns=%llu cpu_ns=%llu fnv=%016llx errors=%llu lasterr=%s\n",
	       (int)getpid(), tot.sent, tot.msgs, tot.calls, tot.eagain, (unsigned long long)(t1 - t0),
	       (unsigned long long)(c1 - c0), (unsigned long long)res[0].fnv, tot.errors,
	       tot.lasterr ? ename(tot.lasterr) : "none");
	return tot.errors ? 1 : 0;
}
