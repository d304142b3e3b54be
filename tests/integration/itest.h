/* itest.h: what the integration test helpers share: clocks, the errno name, the FNV-1a 64
 * checksum and the test byte pattern (so that a sender's and a receiver's checksums agree). */
#ifndef RLT_ITEST_H
#define RLT_ITEST_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* user + system CPU of this process */
static inline uint64_t cpu_ns(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

static inline const char *ename(int e)
{
	const char *s = strerrorname_np(e);
	return s ? s : "E?";
}

#define FNV_INIT 0xcbf29ce484222325ull

static inline uint64_t fnv_update(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* The pattern: PAT_LEN pseudo-random bytes, followed by MAX_CALL more of the same, so that any
 * call of up to MAX_CALL bytes at any offset reads one contiguous run. */
#define PAT_LEN 1000003u
#define MAX_CALL (4u << 20)

static inline unsigned char *pattern_make(void)
{
	unsigned char *p = malloc(PAT_LEN + MAX_CALL);
	uint64_t x = 0x9E3779B97F4A7C15ull;

	if (!p) {
		perror("malloc");
		exit(2);
	}
	for (size_t i = 0; i < PAT_LEN; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)(x >> 24);
	}
	for (size_t i = 0; i < MAX_CALL; i++)
		p[PAT_LEN + i] = p[i % PAT_LEN];
	return p;
}

/*
 * The address of the unix path upath, or of host (default 127.0.0.1, or ::1 for AF_INET6) and
 * port. Returns its length, or 0 when host is not an address of the family.
 */
static inline socklen_t loopback_addr(struct sockaddr_storage *ss, int fam, const char *host,
                                      const char *upath, int port)
{
	memset(ss, 0, sizeof *ss);
	if (upath) {
		struct sockaddr_un *un = (struct sockaddr_un *)ss;
		un->sun_family = AF_UNIX;
		snprintf(un->sun_path, sizeof un->sun_path, "%s", upath);
		return sizeof *un;
	}
	if (fam == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		return inet_pton(AF_INET6, host ? host : "::1", &s6->sin6_addr) == 1 ? sizeof *s6 : 0;
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host ? host : "127.0.0.1", &s4->sin_addr) == 1 ? sizeof *s4 : 0;
}

/* A blocking TCP connection to host (default 127.0.0.1) and port: the fd, or -1 with errno. */
static inline int dial_loopback(const char *host, int port)
{
	struct sockaddr_storage ss;
	socklen_t len = loopback_addr(&ss, AF_INET, host, NULL, port);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || !len || connect(fd, (struct sockaddr *)&ss, len) != 0) {
		int e = len ? errno : EINVAL;
		if (fd >= 0)
			close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* dial_loopback to 127.0.0.1:port, or the program ends (exit 2) after saying why. */
static inline int dial_or_exit(int port)
{
	int fd = dial_loopback(NULL, port);

	if (fd < 0) {
		perror("connect");
		exit(2);
	}
	return fd;
}

/* A TCP connection over loopback within this process: *dialed is the end that connected; returns
 * the accepted end, or -1 after saying why. */
static inline int tcp_pair(int *dialed)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof a;
	int lfd = socket(AF_INET, SOCK_STREAM, 0), afd;

	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 1) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen) != 0) {
		perror("listen");
		return -1;
	}
	*dialed = socket(AF_INET, SOCK_STREAM, 0);
	if (*dialed < 0 || connect(*dialed, (struct sockaddr *)&a, sizeof a) != 0 ||
	    (afd = accept(lfd, NULL, NULL)) < 0) {
		perror("connect");
		return -1;
	}
	close(lfd);
	return afd;
}

/*
 * The other end of a throttled TCP socket: a child of this process connects over loopback and,
 * unthrottled by the parent's rule, sends without pause (reads 0) or reads everything (reads 1)
 * until the connection ends. Returns the accepted end (the one under test) and the child in
 * *child, or -1 after saying why.
 */
static inline int peer_child(int reads, pid_t *child)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	int ls = socket(AF_INET, SOCK_STREAM, 0), fd;

	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 1) ||
	    getsockname(ls, (struct sockaddr *)&a, &al)) {
		perror("listen");
		return -1;
	}
	*child = fork();
	if (*child == 0) {
		static char buf[65536];
		int c = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(c, (struct sockaddr *)&a, sizeof a))
			_exit(1);
		for (;;) {
			ssize_t n = reads ? read(c, buf, sizeof buf) : write(c, buf, sizeof buf);
			if (n <= 0)
				_exit(0);
		}
	}
	fd = accept(ls, NULL, NULL);
	if (fd < 0)
		perror("accept");
	close(ls);
	return fd;
}

/* The end of a run with peer_child: the time and CPU since t0 and c0 are taken, the child is
 * stopped, and the start of the result line is printed (the caller adds its own keys). */
static inline void peer_stop(pid_t child, uint64_t bytes, uint64_t t0, uint64_t c0)
{
	uint64_t t1 = now_ns(), c1 = cpu_ns();

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	printf("bytes=%llu elapsed_ns=%llu cpu_ns=%llu ", (unsigned long long)bytes,
	       (unsigned long long)(t1 - t0), (unsigned long long)(c1 - c0));
}

/*
 * A server socket: bound on loopback (bindaddr, or 127.0.0.1 / ::1) or on the unix path upath,
 * listening when it is a stream; its port ("unix" for a path) is written to portfile, renamed
 * into place so a reader never sees half of it. Returns the fd, or -1 after saying why.
 */
static inline int listen_loopback(const char *who, int fam, int type, const char *bindaddr,
                                  const char *upath, int backlog, const char *portfile)
{
	struct sockaddr_storage ss;
	socklen_t len = loopback_addr(&ss, fam, bindaddr, upath, 0);
	int one = 1, port = 0;
	int fd = socket(upath ? AF_UNIX : fam, type, 0);

	if (fd < 0) {
		perror("socket");
		return -1;
	}
	if (!len)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (upath)
		unlink(upath);
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    (type == SOCK_STREAM && listen(fd, backlog) < 0)) {
		fprintf(stderr, "%s: bind/listen: %s\n", who, strerror(errno));
		return -1;
	}
	if (!upath) {
		socklen_t l2 = sizeof ss;
		getsockname(fd, (struct sockaddr *)&ss, &l2);
		port = fam == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
		                       : ntohs(((struct sockaddr_in *)&ss)->sin_port);
	}
	if (portfile) {
		char tmp[4096];
		snprintf(tmp, sizeof tmp, "%s.tmp", portfile);
		FILE *pf = fopen(tmp, "w");
		if (!pf) {
			perror("portfile");
			return -1;
		}
		if (upath)
			fprintf(pf, "unix\n");
		else
			fprintf(pf, "%d\n", port);
		fclose(pf);
		rename(tmp, portfile);
	}
	return fd;
}

/* A script step "sleep:MS" sleeps its time (through EINTR) and returns 1; another step, 0. */
static inline int script_sleep(const char *tok)
{
	if (strncmp(tok, "sleep:", 6))
		return 0;
	long ms = atol(tok + 6);
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
	return 1;
}

/* handler on sig, with SA_RESTART or without. */
static inline void on_signal(int sig, void (*handler)(int), int restart)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* A thread running fn with sig blocked in it, so that sig sent to the process goes to another
 * thread (the one under test). */
static inline pthread_t thread_without(int sig, void *(*fn)(void *))
{
	sigset_t set, old;
	pthread_t th;

	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	pthread_create(&th, NULL, fn, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return th;
}

/* A reader thread (recv_tally_main, its arg a struct recv_tally): receives on fd to the end (EINTR retried)
 * and counts each byte by its letter: n[0] for tags[0], n[1] for tags[1], n[2] any other (a
 * byte no one sent). Read n after joining the thread. */
struct recv_tally {
	int fd;
	char tags[2];
	unsigned long long n[3];
};

static inline void *recv_tally_main(void *arg)
{
	struct recv_tally *t = arg;
	char buf[65536];

	for (;;) {
		ssize_t r = recv(t->fd, buf, sizeof buf, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r; i++)
			t->n[buf[i] == t->tags[0] ? 0 : buf[i] == t->tags[1] ? 1 : 2]++;
	}
	return NULL;
}

#endif
