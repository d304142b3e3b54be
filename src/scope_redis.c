/*
 * scope_redis.c: scope=redis://HOST:PORT/NAME (see scope_redis.h for the lease scheme and its
 * accuracy bound): the client of the Lua scripts of redis_scripts.c, where their arguments and
 * answer are described.
 *
 * The hooks call this on the program's own thread, so a lease refill is a blocking round trip
 * there: it is bounded by 50 ms for the connect (when there is none), 50 ms for the refill's
 * requests (AUTH and SCRIPT LOAD after a connect, EVALSHA: sent, and their whole replies read),
 * and by a 100 ms bound on waiting for another thread's refill.
 *
 * hiredis only makes the connection. Requests are written and replies read and parsed here,
 * into a fixed buffer, because whatever sits at the other end decides what hiredis' reader
 * allocates and how long it waits: a header of *2147483647 or $2147483647, a deep nesting or an
 * endless stream made 0.14 allocate gigabytes and spin on the program's thread. Our scripts'
 * answers are tiny and flat, so anything else (longer than REPLY_MAX, an array longer than
 * ELEMS_MAX, an array inside one, bytes after the reply) is refused at once, the connection
 * dropped and the fallback applied: no reply costs more than REPLY_MAX bytes of stack, nor a
 * refill more than the bounds above.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>


#include "clock.h"
#include "engine.h"
#include "hiredis_dl.h"
#include "policy.h"
#include "redis_scripts.h"
#include "scope_redis.h"

_Thread_local int rlt__internal __attribute__((tls_model("initial-exec")));

void (*rlt__scope_log)(int level, const char *fmt, ...);

#define TIMEOUT_US 50000 /* the connect; then the requests of one refill and their replies */
#define LOCK_WAIT_NS (100 * 1000 * 1000ull)       /* waiting for another thread's refill */
#define RETRY_NS (500 * 1000 * 1000ull)           /* while down: ask again this often at most */
#define LEASE_NS (10 * 1000 * 1000ull)            /* a lease is this much of the rate */
#define REPLY_MAX 4096 /* bytes of one reply: ours are under 200 */
#define ELEMS_MAX 8    /* elements of an array reply: ours have 4 */
#define STR_MAX 127    /* bytes kept of a string or error (a longer one is cut, not refused) */

typedef unsigned __int128 u128;

/* ----- per rule ----- */

enum family { FAM_GCRA, FAM_FIXED, FAM_SLIDING, FAM_LOG };

static const char *const family_name[] = {"gcra", "fixed", "sliding", "log"};
static const char *const family_script[] = {rlt__redis_lua_gcra, rlt__redis_lua_fixed,
                                             rlt__redis_lua_sliding, rlt__redis_lua_log};

struct rlt__redis {
	/* The hot path: one atomic decrement of `lease`. */
	_Atomic uint64_t lease;       /* units leased from Redis and not spent yet */
	_Atomic uint64_t lease_from;  /* local ns: leased units go no earlier (a reservation) */
	_Atomic uint64_t lease_until; /* local ns: they lapse (a window's end); RLT_NS_NEVER */
	_Atomic int down;             /* Redis did not answer: the fallback decides */
	_Atomic uint64_t retry_at;    /* while down: no new attempt before this local ns */
	_Atomic uint64_t round_trips; /* requests sent to Redis, for benchmarks and tests */
	_Atomic uint64_t deny_until;  /* local ns: Redis said no call conforms before this, so
	                                 action=reject calls are denied without asking again */

	/* The slow path, under `lock` (engine.h: a signal handler that interrupted this thread's
	 * refill finds it its own and takes the fallback; a fork child finds it free). */
	struct rlt__lock lock;
	redisContext *c; /* NULL until needed, or after an error */
	pid_t pid;       /* the process that made c: a forked child makes its own */
	char sha[48];    /* the script's SHA1 once loaded on this connection */
	char ref[64];    /* the last lease's ref (window, sub-window or log member): a give-back */
	char why[160];   /* what went wrong last, for the outage line */

	/* Set at load. */
	struct rlt_rule rule;
	enum family fam;
	uint64_t lease_size;
	char key[RLT_NAME_MAX + 32];
	char args[3][40];  /* the family's params, formatted once */
	int nargs;
	void *local;       /* fallback=local: a process-local state with the same params */
	struct rlt__redis *next;
};

static struct rlt__redis *all_rules; /* every redis rule, for exit and fork (set at load) */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void say(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int level, const char *fmt, ...)
{
	char line[600];
	va_list ap;

	if (!rlt__scope_log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	rlt__scope_log(level, "%s", line);
}

/* The child of fork() shares the parent's socket and has a copy of its lease: it spends
 * neither (the lease belongs to the parent, and two processes on one socket would read each
 * other's replies). The connection is dropped on its first refill (pid check). */
static void atfork_child(void)
{
	for (struct rlt__redis *rd = all_rules; rd; rd = rd->next) {
		atomic_store(&rd->lease, 0);
		rd->ref[0] = '\0';
	}
}

static void drop(struct rlt__redis *rd);
static int lock_bounded(struct rlt__redis *rd, rlt_ns_t now);

/* Give back what is unspent, then close the connections (a leak checker sees none). */
static void at_exit(void)
{
	rlt__redis_return_leases();
	for (struct rlt__redis *rd = all_rules; rd; rd = rd->next)
		if (rd->c && lock_bounded(rd, rlt__now()) == 0) {
			rlt__internal++;
			drop(rd);
			rlt__internal--;
			rlt__lock_release(&rd->lock);
		}
}

static void register_handlers(void)
{
	pthread_atfork(NULL, NULL, atfork_child);
	atexit(at_exit);
}

static uint64_t lease_size_of(const struct rlt_params *p)
{
	u128 n = (u128)p->rate_num * LEASE_NS / p->rate_den_ns;
	uint64_t cap = p->algo == RLT_ALGO_TOKEN || p->algo == RLT_ALGO_LEAKY ? p->burst : p->limit;

	if (n > cap)
		n = cap;
	return n < 1 ? 1 : (uint64_t)n;
}

int rlt__redis_new(const struct rlt_rule *r, struct rlt__redis **out, struct rlt_error *err)
{
	const struct rlt_params *p = &r->params;
	struct rlt__redis *rd;
	size_t size = sizeof *rd + 63;
	struct rlt_error why;

	if (rlt__hiredis_load(&why) != 0) {
		snprintf(err->msg, sizeof err->msg, "%s=\"%.200s\": %.200s", rlt_var_name(r->var),
		         r->text, why.msg);
		return -ENOENT;
	}
	if (r->fallback == RLT_FALLBACK_LOCAL)
		size += rlt_state_size(p);
	rd = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rd == MAP_FAILED) {
		snprintf(err->msg, sizeof err->msg, "%s=\"%.300s\": no memory for the rule's state",
		         rlt_var_name(r->var), r->text);
		return -ENOMEM;
	}
	rlt__lock_init(&rd->lock, 0);
	rd->rule = *r;
	atomic_init(&rd->lease_until, RLT_NS_NEVER);
	rd->lease_size = lease_size_of(p);
	switch (p->algo) {
	case RLT_ALGO_TOKEN:
	case RLT_ALGO_LEAKY:
		rd->fam = FAM_GCRA;
		/* us per unit, and the burst in us: doubles, exact enough at a lease's scale */
		snprintf(rd->args[0], sizeof rd->args[0], "%.17g",
		         (double)p->rate_den_ns / (double)p->rate_num / 1000.0);
		snprintf(rd->args[1], sizeof rd->args[1], "%.17g",
		         (double)p->burst * (double)p->rate_den_ns / (double)p->rate_num / 1000.0);
		snprintf(rd->args[2], sizeof rd->args[2], "%d", p->algo == RLT_ALGO_LEAKY);
		rd->nargs = 3;
		break;
	case RLT_ALGO_FIXED_WINDOW:
	case RLT_ALGO_SLIDING_WINDOW:
	case RLT_ALGO_SLIDING_LOG:
	default:
		rd->fam = p->algo == RLT_ALGO_FIXED_WINDOW   ? FAM_FIXED
		        : p->algo == RLT_ALGO_SLIDING_WINDOW ? FAM_SLIDING
		                                             : FAM_LOG;
		snprintf(rd->args[0], sizeof rd->args[0], "%.17g",
		         (double)(rd->fam == FAM_SLIDING ? p->sub_ns : p->window_ns) / 1000.0);
		snprintf(rd->args[1], sizeof rd->args[1], "%llu", (unsigned long long)p->limit);
		rd->nargs = 2;
		break;
	}
	/* The hash tag keeps a rule's keys in one slot of a Redis cluster. */
	snprintf(rd->key, sizeof rd->key, "rlthrottle:{%s}:%s", r->scope_name,
	         family_name[rd->fam]);
	if (r->fallback == RLT_FALLBACK_LOCAL) {
		rd->local = (void *)(((uintptr_t)(rd + 1) + 63) & ~(uintptr_t)63);
		if (rlt_state_init(p, rd->local, 0) != 0) {
			munmap(rd, size);
			snprintf(err->msg, sizeof err->msg,
			         "%s=\"%.300s\": cannot set up the fallback state", rlt_var_name(r->var),
			         r->text);
			return -ENOMEM;
		}
	}
	pthread_once(&once, register_handlers);
	rd->next = all_rules;
	all_rules = rd;
	*out = rd;
	return 0;
}

uint64_t rlt__redis_round_trips(const struct rlt__redis *rd)
{
	return atomic_load_explicit(&rd->round_trips, memory_order_relaxed);
}

/* ----- requests and replies ----- */

struct item {
	char type;          /* '+' status, '-' error, ':' integer, '$' bulk, '*' array */
	int nil;            /* $-1 or *-1 */
	long long integer;  /* ':' */
	char str[STR_MAX + 1]; /* '+', '-', '$': NUL-terminated, cut at STR_MAX */
	size_t len;         /* the string's whole length */
};

struct reply {
	struct item top;
	int elements;       /* '*': how many are in el */
	struct item el[ELEMS_MAX];
};

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

static void keep_str(struct item *it, const char *s, size_t n)
{
	printable(it->str, STR_MAX, s, n);
	it->len = n;
}

/* One item that is not an array. 1: whole, 0: more bytes needed, -1: refused (why). */
static int parse_item(const char *b, size_t n, size_t *pos, struct item *it, char *why,
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
		if (parse_ll(line + 1, len - 1, &v) != 0 || v < -1 || v > REPLY_MAX) {
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

/* A whole reply in b[0..n). 1: parsed (*used bytes), 0: more bytes needed, -1: refused. */
static int parse_reply(const char *b, size_t n, struct reply *r, size_t *used, char *why,
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
	if (parse_ll(line + 1, len - 1, &count) != 0 || count < -1 || count > ELEMS_MAX) {
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

/* Writes a command (an array of bulk strings) within the deadline. 0, or -1 with why. */
static int send_command(int fd, int argc, const char *const *argv, rlt_ns_t deadline,
                        char *why, size_t wl)
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

/* One request and its whole reply, before the deadline. 0, or -1 with why. A reply is the last
 * thing a server sends before the next request: bytes after it are refused too. */
static int roundtrip(int fd, int argc, const char *const *argv, rlt_ns_t deadline,
                     struct reply *rep, char *why, size_t wl)
{
	char buf[REPLY_MAX];
	size_t n = 0, used = 0;
	char bad[80];

	if (send_command(fd, argc, argv, deadline, why, wl) != 0)
		return -1;
	/* bounded: each round adds at least one byte to buf, or waits until the deadline */
	for (;;) {
		rlt_ns_t now;
		struct pollfd pf = {fd, POLLIN, 0};
		ssize_t k;
		int rc = parse_reply(buf, n, rep, &used, bad, sizeof bad);

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
			snprintf(why, wl, "refused a reply: longer than %d bytes", REPLY_MAX);
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

/* AUTH for a URL that names a password: the user's (ACL) or the default user's. 0 or -1. */
static int authenticate(int fd, const char *user, const char *pass, rlt_ns_t deadline,
                        char *why, size_t wl)
{
	const char *argv[3] = {"AUTH", user, pass};
	struct reply rep;

	if (!pass || !*pass)
		return 0;
	if (!user || !*user)
		argv[1] = pass;
	if (roundtrip(fd, user && *user ? 3 : 2, argv, deadline, &rep, why, wl) != 0)
		return -1;
	if (rep.top.type != '+') {
		/* Redis' own words (WRONGPASS, NOAUTH...) never repeat the password */
		snprintf(why, wl, "AUTH refused: %.100s",
		         rep.top.type == '-' ? rep.top.str : "unexpected reply");
		return -1;
	}
	return 0;
}

/* ----- the connection (under rd->lock, with rlt__internal set) ----- */

static void drop(struct rlt__redis *rd)
{
	if (rd->c)
		rlt__hr.free_context(rd->c);
	rd->c = NULL;
	rd->sha[0] = '\0';
}

static int fail_why(struct rlt__redis *rd, const char *what, const char *detail)
{
	snprintf(rd->why, sizeof rd->why, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
	drop(rd);
	return -1;
}

/* hiredis makes the connection (name resolution, a connect bounded by tv); the socket is ours
 * from then on: non-blocking, close-on-exec (the program's exec must not inherit it). */
static redisContext *open_socket(const char *host, uint16_t port, struct timeval tv,
                                 char *why, size_t wl)
{
	redisContext *c = rlt__hr.connect_with_timeout(host, port, tv);
	int fl;

	if (!c || c->err) {
		snprintf(why, wl, "cannot connect: %s", c ? c->errstr : "out of memory");
		if (c)
			rlt__hr.free_context(c);
		return NULL;
	}
	fl = fcntl(c->fd, F_GETFL);
	fcntl(c->fd, F_SETFL, (fl < 0 ? 0 : fl) | O_NONBLOCK);
	fcntl(c->fd, F_SETFD, FD_CLOEXEC);
	return c;
}

/* A new connection renews *deadline: the connect had its own 50 ms. */
static int connect_redis(struct rlt__redis *rd, rlt_ns_t *deadline)
{
	struct timeval tv = {0, TIMEOUT_US};
	const char *argv[3] = {"SCRIPT", "LOAD", family_script[rd->fam]};
	struct reply rep;

	if (rd->c && rd->pid != getpid()) {
		/* a forked child: the socket is the parent's; close our copy, make our own */
		drop(rd);
		rd->ref[0] = '\0';
	}
	if (rd->c)
		return 0;
	rd->c = open_socket(rd->rule.redis_host, rd->rule.redis_port, tv, rd->why, sizeof rd->why);
	if (!rd->c)
		return -1;
	rd->pid = getpid();
	*deadline = rlt__now() + (rlt_ns_t)TIMEOUT_US * 1000;
	if (rd->rule.redis_pass[0]) {
		atomic_fetch_add_explicit(&rd->round_trips, 1, memory_order_relaxed);
		if (authenticate(rd->c->fd, rd->rule.redis_user, rd->rule.redis_pass, *deadline,
		                 rd->why, sizeof rd->why) != 0) {
			drop(rd);
			return -1;
		}
	}
	atomic_fetch_add_explicit(&rd->round_trips, 1, memory_order_relaxed);
	if (roundtrip(rd->c->fd, 3, argv, *deadline, &rep, rd->why, sizeof rd->why) != 0) {
		drop(rd);
		return -1;
	}
	if (rep.top.type != '$' || rep.top.nil || rep.top.len >= sizeof rd->sha) {
		snprintf(rd->why, sizeof rd->why, "SCRIPT LOAD failed: %.100s",
		         rep.top.type == '-' ? rep.top.str : "unexpected reply");
		drop(rd);
		return -1;
	}
	memcpy(rd->sha, rep.top.str, rep.top.len + 1);
	return 0;
}

struct grant {
	int64_t units;
	int64_t wait_us;  /* -1: never */
	int64_t valid_us; /* -1: no lapse */
	char ref[64];
};

/* One EVALSHA (reloading the script once on NOSCRIPT: Redis restarted). 0 or -1 (rd->why). */
static int eval(struct rlt__redis *rd, int64_t want, uint64_t min, int reserve, const char *ref,
                struct grant *g)
{
	char a_want[24], a_min[24], a_maxw[24];
	const char *argv[12];
	struct reply rep;
	int argc = 0, got = 0;
	/* one bound for the refill's requests, whatever their number */
	rlt_ns_t deadline = rlt__now() + (rlt_ns_t)TIMEOUT_US * 1000;

	snprintf(a_want, sizeof a_want, "%lld", (long long)want);
	snprintf(a_min, sizeof a_min, "%llu", (unsigned long long)min);
	if (rd->rule.max_wait_ns == RLT_NS_NEVER)
		snprintf(a_maxw, sizeof a_maxw, "-1");
	else
		snprintf(a_maxw, sizeof a_maxw, "%llu",
		         (unsigned long long)(rd->rule.max_wait_ns / 1000));
	for (int attempt = 0; attempt < 2 && !got; attempt++) {
		if (connect_redis(rd, &deadline) != 0)
			return -1;
		argc = 0;
		argv[argc++] = "EVALSHA";
		argv[argc++] = rd->sha;
		argv[argc++] = "1";
		argv[argc++] = rd->key;
		argv[argc++] = a_want;
		argv[argc++] = a_min;
		argv[argc++] = reserve ? "1" : "0";
		argv[argc++] = a_maxw;
		argv[argc++] = ref && *ref ? ref : "-";
		for (int i = 0; i < rd->nargs; i++)
			argv[argc++] = rd->args[i];
		atomic_fetch_add_explicit(&rd->round_trips, 1, memory_order_relaxed);
		if (roundtrip(rd->c->fd, argc, argv, deadline, &rep, rd->why, sizeof rd->why) != 0) {
			drop(rd);
			return -1;
		}
		if (rep.top.type == '-' && !strncmp(rep.top.str, "NOSCRIPT", 8)) {
			drop(rd); /* reconnects and loads the script again */
			continue;
		}
		got = 1;
	}
	if (!got)
		return fail_why(rd, "the script could not be loaded", NULL);
	if (rep.top.type != '*' || rep.elements < 4 || rep.el[0].type != ':' ||
	    rep.el[1].type != ':' || rep.el[2].type != ':') {
		snprintf(rd->why, sizeof rd->why, "unexpected reply%s%.100s",
		         rep.top.type == '-' ? ": " : "", rep.top.type == '-' ? rep.top.str : "");
		return -1;
	}
	g->units = rep.el[0].integer;
	g->wait_us = rep.el[1].integer;
	g->valid_us = rep.el[2].integer;
	g->ref[0] = '\0';
	if (rep.el[3].type == '$' && !rep.el[3].nil && rep.el[3].len < sizeof g->ref)
		memcpy(g->ref, rep.el[3].str, rep.el[3].len + 1);
	return 0;
}

/* ----- deciding ----- */

static int lapsed(struct rlt__redis *rd, rlt_ns_t now)
{
	return now >= atomic_load_explicit(&rd->lease_until, memory_order_relaxed);
}

/* The hot path: takes cost units from the lease. 1 when taken (*at: when the call may go). */
static int take(struct rlt__redis *rd, rlt_ns_t now, uint64_t cost, rlt_ns_t *at)
{
	uint64_t have = atomic_load_explicit(&rd->lease, memory_order_relaxed);

	if (have < cost || lapsed(rd, now))
		return 0;
	/* acquire: pairs with the refill's release, so lease_from is at least the batch's */
	while (have >= cost)
		if (atomic_compare_exchange_weak_explicit(&rd->lease, &have, have - cost,
		                                          memory_order_acquire,
		                                          memory_order_relaxed)) {
			rlt_ns_t from = atomic_load_explicit(&rd->lease_from, memory_order_relaxed);
			*at = from > now ? from : now;
			return 1;
		}
	return 0;
}

static enum rlt_verdict fallback(struct rlt__redis *rd, rlt_ns_t now, uint64_t cost,
                                 enum rlt_mode mode, rlt_ns_t *at)
{
	switch (rd->rule.fallback) {
	case RLT_FALLBACK_ALLOW:
		*at = now;
		return RLT_GO;
	case RLT_FALLBACK_DENY:
		*at = RLT_NS_NEVER;
		return RLT_DENY;
	case RLT_FALLBACK_LOCAL:
	default:
		return rlt_decide(&rd->rule.params, rd->local, now, cost, mode, at);
	}
}

static const char *fallback_name(enum rlt_fallback f)
{
	return f == RLT_FALLBACK_ALLOW ? "allow" : f == RLT_FALLBACK_DENY ? "deny" : "local";
}

static void went_down(struct rlt__redis *rd, rlt_ns_t now)
{
	atomic_store(&rd->retry_at, now + RETRY_NS);
	if (atomic_exchange(&rd->down, 1) == 0)
		say(1, "%s: redis %s:%u does not answer (%s): fallback=%s until it does",
		    rlt_var_name(rd->rule.var), rd->rule.redis_host, (unsigned)rd->rule.redis_port,
		    rd->why, fallback_name(rd->rule.fallback));
}

static void came_back(struct rlt__redis *rd)
{
	if (atomic_exchange(&rd->down, 0))
		say(1, "%s: redis %s:%u answers again: the shared budget is back",
		    rlt_var_name(rd->rule.var), rd->rule.redis_host, (unsigned)rd->rule.redis_port);
}

/* 0 when held. Held by this very thread (a signal handler interrupted its refill) it is not
 * waited for at all: the caller takes the fallback. */
static int lock_bounded(struct rlt__redis *rd, rlt_ns_t now)
{
	int rc = rlt__lock_take_until(&rd->lock, now + LOCK_WAIT_NS);

	if (rc == RLT_LOCK_SELF)
		return -EDEADLK;
	return rc < 0 ? rc : 0;
}

/* The slow path: the lease is short. One round trip for the next lease, or the fallback. */
static enum rlt_verdict refill_once(struct rlt__redis *rd, rlt_ns_t now, uint64_t cost,
                               enum rlt_mode mode, rlt_ns_t *at)
{
	struct grant g;
	enum rlt_verdict v;
	uint64_t have, min, want;
	int rc;

	if (atomic_load_explicit(&rd->down, memory_order_relaxed) &&
	    now < atomic_load_explicit(&rd->retry_at, memory_order_relaxed))
		return fallback(rd, now, cost, mode, at);
	if (lock_bounded(rd, now) != 0)
		return fallback(rd, now, cost, mode, at); /* a refill stuck elsewhere: bounded */
	/* another thread may have refilled while we waited */
	if (take(rd, now, cost, at)) {
		rlt__lock_release(&rd->lock);
		return *at > now ? RLT_WAIT : RLT_GO;
	}
	if (atomic_load(&rd->down) && now < atomic_load(&rd->retry_at)) {
		rlt__lock_release(&rd->lock);
		return fallback(rd, now, cost, mode, at);
	}
	if (lapsed(rd, now))
		atomic_store(&rd->lease, 0);
	have = atomic_load(&rd->lease);
	min = cost > have ? cost - have : 1;
	want = rd->lease_size > min ? rd->lease_size : min;

	rlt__internal++;
	rc = eval(rd, (int64_t)want, min, mode == RLT_MODE_RESERVE, NULL, &g);
	rlt__internal--;
	rlt_ns_t after = rlt__now();
	if (rc != 0) {
		went_down(rd, after);
		rlt__lock_release(&rd->lock);
		return fallback(rd, now, cost, mode, at);
	}
	came_back(rd);
	if (g.units <= 0) {
		*at = g.wait_us < 0 ? RLT_NS_NEVER : after + (rlt_ns_t)g.wait_us * 1000;
		/* A denial says when `min` would conform: a rejected call asking again before then
		 * would only cost a round trip for the same answer. At most one lease's time, so
		 * units other processes give back meanwhile are not missed for long. */
		if (mode == RLT_MODE_NOW && cost <= rd->lease_size) {
			rlt_ns_t cap = after + LEASE_NS;
			atomic_store_explicit(&rd->deny_until, *at < cap ? *at : cap,
			                      memory_order_relaxed);
		}
		rlt__lock_release(&rd->lock);
		return RLT_DENY;
	}
	/* Redis' answers are relative to its clock's now, somewhere inside the round trip: a go
	 * time from the end of it and a lapse from its start err on the strict side. */
	snprintf(rd->ref, sizeof rd->ref, "%s", g.ref);
	atomic_store_explicit(&rd->lease_from, g.wait_us > 0 ? after + (rlt_ns_t)g.wait_us * 1000 : 0,
	                      memory_order_relaxed);
	atomic_store_explicit(&rd->lease_until,
	                      g.valid_us < 0 ? RLT_NS_NEVER : now + (rlt_ns_t)g.valid_us * 1000,
	                      memory_order_relaxed);
	atomic_fetch_add_explicit(&rd->lease, (uint64_t)g.units, memory_order_release);
	v = take(rd, now, cost, at) ? (*at > now ? RLT_WAIT : RLT_GO) : RLT_DENY;
	if (v == RLT_DENY)
		*at = RLT_NS_NEVER; /* the grant fell short of the call (a lapse in between) */
	rlt__lock_release(&rd->lock);
	return v;
}

/* Set while this thread refills (any rule). A call that finds it set comes from a signal
 * handler that interrupted the refill: the round trip it would make runs hiredis, which is not
 * re-entrant (the interrupted refill is inside it, maybe inside malloc), so it takes the
 * fallback without touching the connection or waiting for the lock. */
static _Thread_local int refilling __attribute__((tls_model("initial-exec")));

static enum rlt_verdict refill(struct rlt__redis *rd, rlt_ns_t now, uint64_t cost,
                               enum rlt_mode mode, rlt_ns_t *at)
{
	enum rlt_verdict v;

	if (refilling)
		return fallback(rd, now, cost, mode, at);
	refilling++;
	v = refill_once(rd, now, cost, mode, at);
	refilling--;
	return v;
}

enum rlt_verdict rlt__redis_decide(struct rlt__redis *rd, rlt_ns_t now, uint64_t cost,
                                   enum rlt_mode mode, rlt_ns_t *at)
{
	if (cost == 0) {
		*at = now;
		return RLT_GO;
	}
	if (take(rd, now, cost, at))
		return *at > now ? RLT_WAIT : RLT_GO;
	if (mode == RLT_MODE_NOW) {
		rlt_ns_t until = atomic_load_explicit(&rd->deny_until, memory_order_relaxed);
		if (now < until && !atomic_load_explicit(&rd->down, memory_order_relaxed)) {
			*at = until;
			return RLT_DENY;
		}
	}
	return refill(rd, now, cost, mode, at);
}

/* Unused units go back to the lease they came from, or to the local state while the fallback
 * decides (a refund cannot tell which of the two granted it; this errs by one call at most). */
void rlt__redis_refund(struct rlt__redis *rd, rlt_ns_t at, uint64_t units)
{
	if (atomic_load_explicit(&rd->down, memory_order_relaxed)) {
		if (rd->local)
			rlt_refund(&rd->rule.params, rd->local, at, units);
		return;
	}
	if (!lapsed(rd, rlt__now()))
		atomic_fetch_add_explicit(&rd->lease, units, memory_order_relaxed);
}

uint64_t rlt__redis_available(struct rlt__redis *rd, rlt_ns_t now)
{
	if (atomic_load_explicit(&rd->down, memory_order_relaxed) && rd->local)
		return rlt_available(&rd->rule.params, rd->local, now);
	return lapsed(rd, now) ? 0 : atomic_load_explicit(&rd->lease, memory_order_relaxed);
}

void rlt__redis_return_leases(void)
{
	for (struct rlt__redis *rd = all_rules; rd; rd = rd->next) {
		struct grant g;
		uint64_t n;

		if (!rd->c || rd->pid != getpid() || atomic_load(&rd->down))
			continue; /* never connected here, or not answering: nothing to wait for */
		if (lock_bounded(rd, rlt__now()) != 0)
			continue;
		n = lapsed(rd, rlt__now()) ? 0 : atomic_exchange(&rd->lease, 0);
		if (n) {
			rlt__internal++;
			eval(rd, -(int64_t)n, 0, 0, rd->ref, &g);
			rlt__internal--;
		}
		rlt__lock_release(&rd->lock);
	}
}

int rlt__redis_ping(const char *host, uint16_t port, const char *user, const char *pass,
                    unsigned timeout_ms, struct rlt_error *err)
{
	struct timeval tv = {(time_t)(timeout_ms / 1000), (suseconds_t)(timeout_ms % 1000) * 1000};
	const char *argv[1] = {"PING"};
	redisContext *c;
	struct reply rep;
	rlt_ns_t deadline;
	char why[200];
	int rc = 0;

	if (rlt__hiredis_load(err) != 0)
		return -ENOENT;
	rlt__internal++;
	c = open_socket(host, port, tv, why, sizeof why);
	if (!c) {
		snprintf(err->msg, sizeof err->msg, "%s", why);
		rc = -ECONNREFUSED;
		goto out;
	}
	deadline = rlt__now() + (rlt_ns_t)timeout_ms * 1000000;
	if (authenticate(c->fd, user, pass, deadline, why, sizeof why) != 0 ||
	    roundtrip(c->fd, 1, argv, deadline, &rep, why, sizeof why) != 0) {
		snprintf(err->msg, sizeof err->msg, "%s", why);
		rc = -ETIMEDOUT;
		goto out;
	}
	if (rep.top.type == '-') {
		snprintf(err->msg, sizeof err->msg, "PING: %.200s", rep.top.str);
		rc = -EPROTO;
	}
out:
	if (c)
		rlt__hr.free_context(c);
	rlt__internal--;
	return rc;
}
