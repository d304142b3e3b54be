/*
 * hiredis_nolibc.c: the one thing the Redis client takes from hiredis (see hiredis_dl.h), its
 * connect, made here for the freestanding build, which cannot load a library. The server is
 * named by an address (IPv4, IPv6) or localhost: there is no resolver without a C library.
 * The normal build loads hiredis (hiredis_dl.c) and has nothing from this file.
 */
#ifdef RLT_NOLIBC
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hiredis_dl.h"

static redisContext *failed(redisContext *c, int fd, const char *fmt, const char *what)
{
	if (fd >= 0)
		close(fd);
	c->fd = -1;
	c->err = REDIS_ERR_IO;
	snprintf(c->errstr, sizeof c->errstr, fmt, what);
	return c;
}

static redisContext *connect_with_timeout(const char *ip, int port, const struct timeval tv)
{
	redisContext *c = calloc(1, sizeof *c);
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	const struct sockaddr *sa;
	socklen_t len;
	struct pollfd p;
	int fd, ms, e = 0;
	socklen_t el = sizeof e;

	if (!c)
		return NULL;
	if (!strcmp(ip, "localhost"))
		ip = "127.0.0.1";
	if (inet_pton(AF_INET, ip, &a4.sin_addr) == 1) {
		sa = (const struct sockaddr *)&a4;
		len = sizeof a4;
	} else if (inet_pton(AF_INET6, ip, &a6.sin6_addr) == 1) {
		sa = (const struct sockaddr *)&a6;
		len = sizeof a6;
	} else {
		return failed(c, -1, "%s: a name, and under --seccomp the server is given by its "
		                     "address (no resolver inside the program)", ip);
	}
	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return failed(c, -1, "socket: %s", strerror(errno));
	if (connect(fd, sa, len) != 0 && errno != EINPROGRESS)
		return failed(c, fd, "%s", strerror(errno));
	p.fd = fd;
	p.events = POLLOUT;
	ms = (int)(tv.tv_sec * 1000 + tv.tv_usec / 1000);
	if (poll(&p, 1, ms > 0 ? ms : 1) != 1)
		return failed(c, fd, "%s", "connection timed out");
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0 || e)
		return failed(c, fd, "%s", strerror(e ? e : errno));
	c->fd = fd;
	return c;
}

static int set_timeout(redisContext *c, const struct timeval tv)
{
	(void)c, (void)tv; /* the client waits with poll and deadlines of its own */
	return 0;
}

static void free_context(redisContext *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

struct rlt__hiredis rlt__hr = {connect_with_timeout, set_timeout, free_context};

int rlt__hiredis_load(struct rlt_error *err)
{
	(void)err;
	return 0;
}
#endif
