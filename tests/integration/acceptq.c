/* acceptq: the accept queue of ours (preload/accept_queue.c) at its edges, in one process: a
 * non-blocking listener on 127.0.0.1 and its clients, which connect from 127.0.0.N (a key each
 * under key=peer) and send one id byte. Run under RLT_ACCEPT="2/s burst=1 key=peer" (or as the
 * test says): the first connection of a key is allowed, the next ones queued.
 *
 *   acceptq flags     hand-overs take the flags of the accept that hands over, not those of
 *                     the one that queued: "flags accept=NB,CE accept4_nb=NB,CE accept4_all=NB,CE"
 *   acceptq close HOW the listener goes (close, dup2 over it, close_range) with 4 queued: the
 *                     fds of ours go too and the clients see their connections end:
 *                     "close fds_before=N fds_after=M ended=E"
 *   acceptq closedup  the listener's fd closed, a dup of it kept: its 4 queued connections are
 *                     the dup's to accept: "closedup accepted=N"
 *   acceptq fork      4 queued, then fork: the child holds none of them, the parent hands all:
 *                     "fork hidden=H cloexec=C child_fds=F parent_fds=P accepted=N"
 *   acceptq threads T N K   T threads accept (poll, then accept4 until EAGAIN) N clients from
 *                     K addresses: each connection once: "threads accepted=A twice=D"
 *   acceptq crowd N M two listeners, N clients on one from 127.0.0.1 and M on the other from
 *                     127.0.0.2 (the queue holds 64): "crowd accepted=A twice=D eagain=E
 *                     max_call_ms=C cpu_ms=U"
 *   acceptq set FILE  3 clients from 127.0.0.1; writes FILE once two wait queued, then accepts
 *                     (poll 100 ms) for 8 s at most: "set handed_ms=T1,T2" (ms after FILE)
 *   acceptq blocking  3 clients from 127.0.0.1, the 2 queued; then the listener is made
 *                     blocking (SO_RCVTIMEO 3 s) and accepted from twice:
 *                     "blocking accepted=N last_ms=T"
 *   acceptq shed      5 clients from 127.0.0.2, accepted (poll, accept4 until EAGAIN) and held
 *                     for 1.6 s: "shed accepted=N errors=E ended=C" (C: clients whose
 *                     connection the throttle closed)
 *   acceptq one poll|select   4 clients from 127.0.0.1 at once, one accept per wakeup of a
 *                     wait of 500 ms (Python's socketserver, a socket's timeout), for 4 s at
 *                     most: "one accepted=N last_ms=T"
 *   acceptq oneshot before|after   3 clients from 127.0.0.1 on a listener in epoll with
 *                     EPOLLONESHOT, registered before the clients (re-armed by MOD after each
 *                     wakeup) or after 2 of them were queued; accepts until EAGAIN per wakeup
 *                     for 4 s at most: "oneshot accepted=N last_ms=T max_call_ms=C"
 */
#include <sys/select.h>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "itest.h"

static int port_of(int fd)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof sa;
	getsockname(fd, (struct sockaddr *)&sa, &sl);
	return ntohs(sa.sin_port);
}

static int listener(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, 128)) {
		perror("listener");
		exit(2);
	}
	return fd;
}

/* A client from 127.0.0.src: connected (the kernel's backlog) and its id sent. */
static int client(int port, int src, int id)
{
	struct sockaddr_in me = {.sin_family = AF_INET}, to = {.sin_family = AF_INET};
	unsigned char b = (unsigned char)id;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	me.sin_addr.s_addr = htonl(0x7f000000u | (unsigned)src);
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	to.sin_port = htons((uint16_t)port);
	if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof me) ||
	    connect(fd, (struct sockaddr *)&to, sizeof to) || write(fd, &b, 1) != 1) {
		perror("client");
		exit(2);
	}
	return fd;
}

static int fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n - 1; /* the directory's own */
}

/* The id byte of an accepted connection (-1: none within 2 s). */
static int id_of(int fd)
{
	struct pollfd p = {fd, POLLIN, 0};
	unsigned char b;
	if (poll(&p, 1, 2000) != 1 || recv(fd, &b, 1, MSG_DONTWAIT) != 1)
		return -1;
	return b;
}

/* The next connection within ms, by poll and accept4(flags) (-1 none). use4 0: accept(). */
static int next(int l, int ms, int use4, int flags)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000u;
	for (;;) {
		int c = use4 ? accept4(l, NULL, NULL, flags) : accept(l, NULL, NULL);
		if (c >= 0 || errno != EAGAIN)
			return c;
		uint64_t t = now_ns();
		if (t >= end)
			return -1;
		struct pollfd p = {l, POLLIN, 0};
		poll(&p, 1, (int)((end - t) / 1000000u) + 1);
	}
}

/* One accept that must fail EAGAIN (the rest waits queued). */
static void queue_rest(int l, int use4, int flags)
{
	int c = use4 ? accept4(l, NULL, NULL, flags) : accept(l, NULL, NULL);
	if (c >= 0 || errno != EAGAIN) {
		fprintf(stderr, "acceptq: expected EAGAIN, got %d (%s)\n", c, ename(errno));
		exit(3);
	}
}

static void flags_of(int c, char *out)
{
	int fl = fcntl(c, F_GETFL), fd = fcntl(c, F_GETFD);
	sprintf(out, "%d,%d", (fl & O_NONBLOCK) != 0, (fd & FD_CLOEXEC) != 0);
}

static int do_flags(void)
{
	int l = listener(), port = port_of(l);
	char a[16], b[16], c[16];

	for (int i = 0; i < 3; i++)
		client(port, 1, i);
	if (next(l, 2000, 1, SOCK_NONBLOCK | SOCK_CLOEXEC) < 0)
		return 3;
	queue_rest(l, 1, SOCK_NONBLOCK | SOCK_CLOEXEC); /* 1 and 2 queued with both flags */
	int c1 = next(l, 3000, 0, 0), c2 = next(l, 3000, 1, SOCK_NONBLOCK);
	if (c1 < 0 || c2 < 0 || id_of(c1) != 1 || id_of(c2) != 2)
		return 3;
	flags_of(c1, a);
	flags_of(c2, b);
	client(port, 1, 3);
	queue_rest(l, 0, 0); /* 3 queued by a plain accept() */
	int c3 = next(l, 3000, 1, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (c3 < 0 || id_of(c3) != 3)
		return 3;
	flags_of(c3, c);
	printf("flags accept=%s accept4_nb=%s accept4_all=%s\n", a, b, c);
	return 0;
}

/* Whether each client's connection ended (EOF or reset) within 2 s: their count. */
static int ended(const int *cl, int n)
{
	int k = 0;
	for (int i = 0; i < n; i++) {
		struct pollfd p = {cl[i], POLLIN, 0};
		char b;
		if (poll(&p, 1, 2000) == 1 && recv(cl[i], &b, 1, MSG_DONTWAIT) <= 0)
			k++;
	}
	return k;
}

static int do_close(const char *how)
{
	int l = listener(), port = port_of(l), cl[5];

	for (int i = 0; i < 5; i++)
		cl[i] = client(port, 1, i);
	int c0 = next(l, 2000, 1, SOCK_CLOEXEC);
	if (c0 < 0)
		return 3;
	queue_rest(l, 1, SOCK_CLOEXEC);
	int before = fd_count();
	if (!strcmp(how, "dup2")) {
		int z = open("/dev/null", O_RDONLY);
		dup2(z, l);
		close(z);
	} else if (!strcmp(how, "close_range")) {
		close_range((unsigned)l, (unsigned)l, 0);
	} else {
		close(l);
	}
	int after = fd_count();
	printf("close fds_before=%d fds_after=%d ended=%d\n", before, after, ended(cl + 1, 4));
	return 0;
}

static int do_closedup(void)
{
	int l = listener(), port = port_of(l), n = 0;

	for (int i = 0; i < 5; i++)
		client(port, 1, i);
	if (next(l, 2000, 1, SOCK_CLOEXEC) < 0)
		return 3;
	queue_rest(l, 1, SOCK_CLOEXEC);
	int l2 = dup(l);
	close(l);
	for (int i = 0; i < 4; i++) {
		int c = next(l2, 4000, 1, SOCK_CLOEXEC);
		if (c < 0)
			break;
		n += id_of(c) >= 1;
	}
	printf("closedup accepted=%d\n", n);
	return 0;
}

/* The sockets of this process that are not l, the clients', or the accepted c0 (ours, hidden),
 * and how many of them close on exec. */
static void hidden(int l, const int *known, int nk, int *n, int *cloexec)
{
	*n = *cloexec = 0;
	for (int fd = 0; fd < 1024; fd++) {
		int type, skip = fd == l;
		socklen_t tl = sizeof type;
		for (int i = 0; i < nk; i++)
			skip |= fd == known[i];
		if (skip || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0)
			continue;
		(*n)++;
		*cloexec += (fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0;
	}
}

static int do_fork(void)
{
	int l = listener(), port = port_of(l), known[6], pfd[2], n = 0, h, ce;

	for (int i = 0; i < 5; i++)
		known[i] = client(port, 1, i);
	known[5] = next(l, 2000, 1, 0);
	if (known[5] < 0)
		return 3;
	queue_rest(l, 0, 0); /* queued by accept(), without SOCK_CLOEXEC */
	hidden(l, known, 6, &h, &ce);
	if (pipe(pfd))
		return 3;
	int parent = fd_count();
	pid_t pid = fork();
	if (pid == 0) {
		int c = fd_count();
		if (write(pfd[1], &c, sizeof c) != sizeof c)
			_exit(1);
		_exit(0);
	}
	int child = -1;
	if (pid < 0 || read(pfd[0], &child, sizeof child) != sizeof child)
		return 3;
	waitpid(pid, NULL, 0);
	for (int i = 0; i < 4; i++) {
		int c = next(l, 4000, 1, SOCK_CLOEXEC);
		if (c < 0)
			break;
		n += id_of(c) >= 1;
	}
	printf("fork hidden=%d cloexec=%d child_fds=%d parent_fds=%d accepted=%d\n", h, ce, child,
	       parent, n);
	return 0;
}

static int lfd;
static _Atomic int got[256], taken, want;

static void *acceptor(void *arg)
{
	uint64_t end = now_ns() + 8000000000ull;
	(void)arg;
	while (atomic_load(&taken) < atomic_load(&want) && now_ns() < end) {
		struct pollfd p = {lfd, POLLIN, 0};
		poll(&p, 1, 50);
		int c;
		while ((c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
			int id = id_of(c);
			if (id >= 0)
				atomic_fetch_add(&got[id], 1);
			atomic_fetch_add(&taken, 1);
			close(c);
		}
	}
	return NULL;
}

static int do_threads(int t, int n, int k)
{
	pthread_t th[16];
	int twice = 0, missing = 0;

	lfd = listener();
	atomic_store(&want, n);
	for (int i = 0; i < t && i < 16; i++)
		pthread_create(&th[i], NULL, acceptor, NULL);
	for (int i = 0; i < n; i++)
		client(port_of(lfd), 1 + i % k, i);
	for (int i = 0; i < t && i < 16; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < n; i++) {
		twice += atomic_load(&got[i]) > 1;
		missing += atomic_load(&got[i]) == 0;
	}
	printf("threads accepted=%d twice=%d missing=%d\n", atomic_load(&taken), twice, missing);
	return 0;
}

static int do_crowd(int n, int m)
{
	int l[2] = {listener(), listener()}, total = 0, twice = 0, eagain = 0;
	static int seen[256];
	uint64_t worst = 0, end = now_ns() + 10000000000ull;

	for (int i = 0; i < n; i++)
		client(port_of(l[0]), 1, i);
	for (int i = 0; i < m; i++)
		client(port_of(l[1]), 2, n + i);
	while (total < n + m && now_ns() < end) {
		struct pollfd p[2] = {{l[0], POLLIN, 0}, {l[1], POLLIN, 0}};
		if (poll(p, 2, 1000) <= 0)
			continue;
		for (int j = 0; j < 2; j++) {
			if (!p[j].revents)
				continue;
			for (;;) {
				uint64_t s = now_ns();
				int c = accept4(l[j], NULL, NULL, SOCK_CLOEXEC);
				uint64_t d = now_ns() - s;
				worst = d > worst ? d : worst;
				if (c < 0) {
					eagain += errno == EAGAIN;
					break;
				}
				int id = id_of(c);
				if (id >= 0)
					twice += seen[id]++ > 0;
				total++;
				close(c);
			}
		}
	}
	printf("crowd accepted=%d twice=%d eagain=%d max_call_ms=%llu cpu_ms=%llu\n", total, twice,
	       eagain, (unsigned long long)(worst / 1000000u), (unsigned long long)(cpu_ns() / 1000000u));
	return 0;
}

static int do_set(const char *file)
{
	int l = listener(), port = port_of(l);
	long ms[2] = {-1, -1};

	for (int i = 0; i < 3; i++)
		client(port, 1, i);
	if (next(l, 2000, 1, SOCK_CLOEXEC) < 0)
		return 3;
	queue_rest(l, 1, SOCK_CLOEXEC);
	FILE *f = fopen(file, "w");
	if (!f)
		return 3;
	fputs("queued\n", f);
	fclose(f);
	uint64_t t0 = now_ns();
	for (int i = 0; i < 2; i++) {
		int c = next(l, (int)(8000 - (now_ns() - t0) / 1000000u), 1, SOCK_CLOEXEC);
		if (c < 0)
			break;
		ms[i] = (long)((now_ns() - t0) / 1000000u);
	}
	printf("set handed_ms=%ld,%ld\n", ms[0], ms[1]);
	return 0;
}

static int do_one(const char *kind)
{
	int l = listener(), port = port_of(l), n = 0;
	long last = -1;

	for (int i = 0; i < 4; i++)
		client(port, 1, i);
	uint64_t t0 = now_ns();
	while (n < 4 && now_ns() - t0 < 4000000000ull) {
		int r;
		if (!strcmp(kind, "select")) {
			fd_set rs;
			struct timeval tv = {0, 500000};
			FD_ZERO(&rs);
			FD_SET(l, &rs);
			r = select(l + 1, &rs, NULL, NULL, &tv);
		} else {
			struct pollfd p = {l, POLLIN, 0};
			r = poll(&p, 1, 500);
		}
		if (r <= 0)
			continue;
		int c = accept4(l, NULL, NULL, SOCK_CLOEXEC); /* one, as a one-at-a-time server */
		if (c >= 0) {
			n++;
			last = (long)((now_ns() - t0) / 1000000u);
			close(c);
		}
	}
	printf("one accepted=%d last_ms=%ld\n", n, last);
	return 0;
}

static int do_oneshot(const char *when)
{
	int l = listener(), port = port_of(l), ep = epoll_create1(EPOLL_CLOEXEC), n = 0;
	struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT};
	long last = -1, max_call = 0;

	if (ep < 0)
		return 3;
	if (!strcmp(when, "before") && epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev) != 0)
		return 3;
	for (int i = 0; i < 3; i++)
		client(port, 1, i);
	if (!strcmp(when, "after")) {
		if (next(l, 2000, 1, SOCK_CLOEXEC) < 0)
			return 3;
		n++;
		queue_rest(l, 1, SOCK_CLOEXEC);
		if (epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev) != 0)
			return 3;
	}
	uint64_t t0 = now_ns();
	while (n < 3 && now_ns() - t0 < 4000000000ull) {
		struct epoll_event fired;
		if (epoll_wait(ep, &fired, 1, 500) != 1)
			continue;
		for (;;) {
			uint64_t a0 = now_ns();
			int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
			long took = (long)((now_ns() - a0) / 1000000u);
			if (took > max_call)
				max_call = took;
			if (c < 0)
				break;
			n++;
			last = (long)((now_ns() - t0) / 1000000u);
			close(c);
		}
		if (epoll_ctl(ep, EPOLL_CTL_MOD, l, &ev) != 0) /* the program's re-arm */
			return 3;
	}
	printf("oneshot accepted=%d last_ms=%ld max_call_ms=%ld\n", n, last, max_call);
	return 0;
}

static int do_blocking(void)
{
	int l = listener(), port = port_of(l), n = 0;
	struct timeval tv = {3, 0};
	long last = -1;

	for (int i = 0; i < 3; i++)
		client(port, 1, i);
	if (next(l, 2000, 1, SOCK_CLOEXEC) < 0)
		return 3;
	queue_rest(l, 1, SOCK_CLOEXEC);
	fcntl(l, F_SETFL, fcntl(l, F_GETFL) & ~O_NONBLOCK);
	setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	uint64_t t0 = now_ns();
	for (int i = 0; i < 2; i++) {
		int c = accept(l, NULL, NULL);
		if (c < 0)
			break;
		n += id_of(c) >= 1;
		last = (long)((now_ns() - t0) / 1000000u);
	}
	printf("blocking accepted=%d last_ms=%ld\n", n, last);
	return 0;
}

static int do_shed(void)
{
	int l = listener(), port = port_of(l), cl[5], n = 0, errs = 0;
	uint64_t t0 = now_ns();

	for (int i = 0; i < 5; i++)
		cl[i] = client(port, 2, i);
	while (now_ns() - t0 < 1600000000ull) {
		struct pollfd p = {l, POLLIN, 0};
		poll(&p, 1, 100);
		for (;;) {
			int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0) {
				n++; /* held open */
				continue;
			}
			errs += errno != EAGAIN;
			break;
		}
	}
	int ended = 0;
	for (int i = 0; i < 5; i++) {
		struct pollfd p = {cl[i], POLLIN, 0};
		char b;
		ended += poll(&p, 1, 0) == 1 && recv(cl[i], &b, 1, MSG_DONTWAIT) <= 0;
	}
	printf("shed accepted=%d errors=%d ended=%d\n", n, errs, ended);
	return 0;
}

int main(int argc, char **argv)
{
	alarm(30);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "flags"))
		return do_flags();
	if (argc >= 3 && !strcmp(argv[1], "close"))
		return do_close(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "closedup"))
		return do_closedup();
	if (argc >= 2 && !strcmp(argv[1], "fork"))
		return do_fork();
	if (argc >= 5 && !strcmp(argv[1], "threads"))
		return do_threads(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc >= 4 && !strcmp(argv[1], "crowd"))
		return do_crowd(atoi(argv[2]), atoi(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "set"))
		return do_set(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "shed"))
		return do_shed();
	if (argc >= 2 && !strcmp(argv[1], "blocking"))
		return do_blocking();
	if (argc >= 3 && !strcmp(argv[1], "one"))
		return do_one(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "oneshot"))
		return do_oneshot(argv[2]);
	fprintf(stderr, "usage: acceptq flags|close HOW|closedup|fork|threads T N K|crowd N M|set FILE|one KIND|oneshot WHEN|blocking|shed\n");
	return 2;
}
