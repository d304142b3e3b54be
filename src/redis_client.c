/*
 * redis_client.c: the bounded Redis client (see redis_client.h for the bounds and why hiredis
 * only connects). No scope logic here: scope_redis.c decides what to ask and when.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "hiredis_dl.h"
#include "policy.h"
#include "redis_client.h"

#ifndef RLT_NOLIBC /* there a field of the thread block (redis_client.h) */
_Thread_local int rlt__internal __attribute__((tls_model("initial-exec")));
#endif

/* A decimal integer as RESP writes it: [-]digits, at most 18 of them (no overflow). */
static int parse_ll(const char *s, size_t n, long long *out)
{
	long long v = 0;
	size_t i = 0;
	int neg = 0;

	if (n > 0 && s[0] == '-') {
		neg = 1;
		i = 1;
	}
	if (i == n || n - i > 18)
		return -1;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = neg ? -v : v;
	return 0;
}

/* The line at b[*pos..n) up to CRLF: 1 (*line, *len, *pos past the CRLF), 0 when incomplete. */
static int take_line(const char *b, size_t n, size_t *pos, const char **line, size_t *len)
{
	for (size_t i = *pos; i + 1 < n; i++)
		if (b[i] == '\r' && b[i + 1] == '\n') {
			*line = b + *pos;
			*len = i - *pos;
			*pos = i + 2;
			return 1;
		}
	return 0;
}

/* Copies at most max bytes of s[0..n) into out[max + 1], a byte outside printable ASCII as '?':
 * what the other end sends may reach a log line and a terminal. */
static void printable(char *out, size_t max, const char *s, size_t n)
{
	size_t k = n < max ? n : max;

	for (size_t i = 0; i < k; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	out[k] = '\0';
}

static void keep_str(struct rlt__resp_item *it, const char *s, size_t n)
{
	printable(it->str, RLT__RESP_STR_MAX, s, n);
	it->len = n;
}

/* One item that is not an array. 1: whole, 0: more bytes needed, -1: refused (why). */
static int parse_item(const char *b, size_t n, size_t *pos, struct rlt__resp_item *it, char *why,
                      size_t wl)
{
	size_t p = *pos, len;
	const char *line;
	long long v;

	if (!take_line(b, n, &p, &line, &len))
		return 0;
	if (len == 0) {
		snprintf(why, wl, "an empty line");
		return -1;
	}
	memset(it, 0, sizeof *it);
	it->type = line[0];
	switch (line[0]) {
	case '+':
	case '-':
		keep_str(it, line + 1, len - 1);
		break;
	case ':':
		if (parse_ll(line + 1, len - 1, &it->integer) != 0) {
			snprintf(why, wl, "a bad integer");
			return -1;
		}
		break;
	case '$':
		if (parse_ll(line + 1, len - 1, &v) != 0 || v < -1 || v > RLT__RESP_REPLY_MAX) {
			char num[21];
			printable(num, 20, line + 1, len - 1);
			snprintf(why, wl, "a bulk string of %s bytes", num);
			return -1;
		}
		if (v == -1) {
			it->nil = 1;
			break;
		}
		if (n - p < (size_t)v + 2)
			return 0;
		if (b[p + (size_t)v] != '\r' || b[p + (size_t)v + 1] != '\n') {
			snprintf(why, wl, "a bulk string without its CRLF");
			return -1;
		}
		keep_str(it, b + p, (size_t)v);
		p += (size_t)v + 2;
		break;
	case '*':
		snprintf(why, wl, "an array inside an array");
		return -1;
	default:
		snprintf(why, wl, "not RESP (0x%02x)", (unsigned char)line[0]);
		return -1;
	}
	*pos = p;
	return 1;
}

int rlt__resp_parse(const char *b, size_t n, struct rlt__resp_reply *r, size_t *used, char *why,
                    size_t wl)
{
	size_t pos = 0, len;
	const char *line;
	long long count;
	int rc;

	memset(&r->top, 0, sizeof r->top);
	r->elements = 0;
	if (n == 0)
		return 0;
	if (b[0] != '*') {
		rc = parse_item(b, n, &pos, &r->top, why, wl);
		*used = pos;
		return rc;
	}
	if (!take_line(b, n, &pos, &line, &len))
		return 0;
	if (parse_ll(line + 1, len - 1, &count) != 0 || count < -1 || count > RLT__RESP_ELEMS_MAX) {
		char num[21];
		printable(num, 20, line + 1, len - 1);
		snprintf(why, wl, "an array of %s elements", num);
		return -1;
	}
	r->top.type = '*';
	r->top.nil = count == -1;
	for (long long i = 0; i < count; i++) {
		rc = parse_item(b, n, &pos, &r->el[i], why, wl);
		if (rc <= 0)
			return rc;
		r->elements++;
	}
	*used = pos;
	return 1;
}

int rlt__redis_send(int fd, int argc, const char *const *argv, rlt_ns_t deadline, char *why,
                    size_t wl)
{
	char heads[1 + 12][24];
	struct iovec iov[1 + 3 * 12];
	struct msghdr m;
	int n = 0;

	if (argc > 12) {
		snprintf(why, wl, "too many arguments");
		return -1;
	}
	snprintf(heads[0], sizeof heads[0], "*%d\r\n", argc);
	iov[n++] = (struct iovec){heads[0], strlen(heads[0])};
	for (int i = 0; i < argc; i++) {
		snprintf(heads[i + 1], sizeof heads[i + 1], "$%zu\r\n", strlen(argv[i]));
		iov[n++] = (struct iovec){heads[i + 1], strlen(heads[i + 1])};
		iov[n++] = (struct iovec){(void *)argv[i], strlen(argv[i])};
		iov[n++] = (struct iovec){(void *)"\r\n", 2};
	}
	/* bounded: every round moves bytes or waits for the socket until the deadline */
	for (int at = 0; at < n;) {
		rlt_ns_t now = rlt__now();
		struct pollfd pf = {fd, POLLOUT, 0};
		ssize_t k;

		if (now >= deadline) {
			snprintf(why, wl, "no room to send in time");
			return -1;
		}
		memset(&m, 0, sizeof m);
		m.msg_iov = iov + at;
		m.msg_iovlen = (size_t)(n - at);
		/* MSG_NOSIGNAL: a server that went away must not kill the program with SIGPIPE */
		k = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
			poll(&pf, 1, (int)((deadline - now + 999999) / 1000000));
			continue;
		}
		if (k < 0) {
			snprintf(why, wl, "send: %s", strerror(errno));
			return -1;
		}
		while (at < n && (size_t)k >= iov[at].iov_len)
			k -= (ssize_t)iov[at++].iov_len;
		if (at < n) {
			iov[at].iov_base = (char *)iov[at].iov_base + k;
			iov[at].iov_len -= (size_t)k;
		}
	}
	return 0;
}

int rlt__redis_roundtrip(int fd, int argc, const char *const *argv, rlt_ns_t deadline,
                         struct rlt__resp_reply *rep, char *why, size_t wl)
{
	char buf[RLT__RESP_REPLY_MAX];
	size_t n = 0, used = 0;
	char bad[80];

	if (rlt__redis_send(fd, argc, argv, deadline, why, wl) != 0)
		return -1;
	/* bounded: each round adds at least one byte to buf, or waits until the deadline */
	for (;;) {
		rlt_ns_t now;
		struct pollfd pf = {fd, POLLIN, 0};
		ssize_t k;
		int rc = rlt__resp_parse(buf, n, rep, &used, bad, sizeof bad);

		if (rc < 0) {
			snprintf(why, wl, "refused a reply: %s", bad);
			return -1;
		}
		if (rc > 0 && used == n)
			return 0;
		if (rc > 0) {
			snprintf(why, wl, "refused a reply: more bytes than one reply");
			return -1;
		}
		if (n == sizeof buf) {
			snprintf(why, wl, "refused a reply: longer than %d bytes", RLT__RESP_REPLY_MAX);
			return -1;
		}
		now = rlt__now();
		if (now >= deadline) {
			snprintf(why, wl, "no whole reply in time");
			return -1;
		}
		if (poll(&pf, 1, (int)((deadline - now + 999999) / 1000000)) <= 0)
			continue;
		k = recv(fd, buf + n, sizeof buf - n, MSG_DONTWAIT);
		if (k == 0) {
			snprintf(why, wl, "the server closed the connection");
			return -1;
		}
		if (k < 0 && errno != EAGAIN && errno != EINTR) {
			snprintf(why, wl, "recv: %s", strerror(errno));
			return -1;
		}
		if (k > 0)
			n += (size_t)k;
	}
}

/* For a URL that names a password: the user's (ACL) or the default user's. */
int rlt__redis_auth(int fd, const char *user, const char *pass, rlt_ns_t deadline, char *why,
                    size_t wl)
{
	const char *argv[3] = {"AUTH", user, pass};
	struct rlt__resp_reply rep;

	if (!pass || !*pass)
		return 0;
	if (!user || !*user)
		argv[1] = pass;
	if (rlt__redis_roundtrip(fd, user && *user ? 3 : 2, argv, deadline, &rep, why, wl) != 0)
		return -1;
	if (rep.top.type != '+') {
		/* Redis' own words (WRONGPASS, NOAUTH...) never repeat the password */
		snprintf(why, wl, "AUTH refused: %.100s",
		         rep.top.type == '-' ? rep.top.str : "unexpected reply");
		return -1;
	}
	return 0;
}

/* hiredis makes the connection (name resolution, a connect bounded by the timeout); the socket
 * is ours from then on: non-blocking, close-on-exec (the program's exec must not inherit it). */
int rlt__redis_open(struct rlt__redis_conn *c, const char *host, uint16_t port,
                    unsigned long timeout_us, char *why, size_t wl)
{
	struct timeval tv = {(time_t)(timeout_us / 1000000), (suseconds_t)(timeout_us % 1000000)};
	redisContext *ctx = rlt__hr.connect_with_timeout(host, port, tv);
	int fl;

	c->ctx = NULL;
	c->fd = -1;
	if (!ctx || ctx->err) {
		snprintf(why, wl, "cannot connect: %s", ctx ? ctx->errstr : "out of memory");
		if (ctx)
			rlt__hr.free_context(ctx);
		return -1;
	}
	fl = fcntl(ctx->fd, F_GETFL);
	fcntl(ctx->fd, F_SETFL, (fl < 0 ? 0 : fl) | O_NONBLOCK);
	fcntl(ctx->fd, F_SETFD, FD_CLOEXEC);
	c->ctx = ctx;
	c->fd = ctx->fd;
	return 0;
}

void rlt__redis_close(struct rlt__redis_conn *c)
{
	if (c->ctx)
		rlt__hr.free_context(c->ctx);
	c->ctx = NULL;
	c->fd = -1;
}

int rlt__redis_ping(const char *host, uint16_t port, const char *user, const char *pass,
                    unsigned timeout_ms, struct rlt_error *err)
{
	const char *argv[1] = {"PING"};
	struct rlt__redis_conn c;
	struct rlt__resp_reply rep;
	rlt_ns_t deadline;
	char why[200];
	int rc = 0;

	if (rlt__hiredis_load(err) != 0)
		return -ENOENT;
	rlt__internal++;
	if (rlt__redis_open(&c, host, port, (unsigned long)timeout_ms * 1000, why, sizeof why) != 0) {
		snprintf(err->msg, sizeof err->msg, "%s", why);
		rc = -ECONNREFUSED;
		goto out;
	}
	deadline = rlt__now() + (rlt_ns_t)timeout_ms * 1000000;
	if (rlt__redis_auth(c.fd, user, pass, deadline, why, sizeof why) != 0 ||
	    rlt__redis_roundtrip(c.fd, 1, argv, deadline, &rep, why, sizeof why) != 0) {
		snprintf(err->msg, sizeof err->msg, "%s", why);
		rc = -ETIMEDOUT;
		goto out;
	}
	if (rep.top.type == '-') {
		snprintf(err->msg, sizeof err->msg, "PING: %.200s", rep.top.str);
		rc = -EPROTO;
	}
out:
	rlt__redis_close(&c);
	rlt__internal--;
	return rc;
}
