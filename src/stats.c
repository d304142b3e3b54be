/*
 * stats.c: the RLT_STATS summary. Formatting is done by hand into a fixed buffer because it
 * may run inside a signal handler, where stdio and malloc are off limits.
 *
 * One summary is one line (JSON Lines), written with one write() when it fits the buffer, to
 * a file opened O_APPEND: processes sharing a path (a shell and its commands, a forking
 * server) each add their line, whole, and none is lost. The file is opened O_NONBLOCK (a
 * FIFO nobody reads fails or takes what it can: the exit never waits on it) and O_NOFOLLOW
 * (a symbolic link planted at the path is not followed).
 */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "keytab.h"
#include "keytab_key.h"
#include "net.h"
#include "stats.h"

/* A summary of every rule with its busiest keys fits: one write, one whole line. */
#define OUT_BUF (256 * 1024)

struct out {
	ssize_t (*wr)(int, const void *, size_t);
	int fd;
	int err;
	size_t len, cap;
	char *buf;
};

/* The buffer: static, as the summary may be written from a signal handler (no allocation,
 * and a signal stack may be small); a process writes its summary once (its callers see to
 * that), and a second writer at once, should there be one, gets a small buffer of its own. */
static char big_buf[OUT_BUF];
static atomic_flag big_taken = ATOMIC_FLAG_INIT;

static void flush(struct out *o)
{
	size_t off = 0;
	while (off < o->len && !o->err) {
		ssize_t n = o->wr(o->fd, o->buf + off, o->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		/* EAGAIN: a FIFO or pipe nobody drains: the exit does not wait for it */
		if (n <= 0)
			o->err = n < 0 ? errno : EIO;
		else
			off += (size_t)n;
	}
	o->len = 0;
}

static void put(struct out *o, const char *s, size_t n)
{
	while (n) {
		if (o->len == o->cap)
			flush(o);
		size_t k = o->cap - o->len;
		if (k > n)
			k = n;
		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
	}
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void putu(struct out *o, uint64_t v)
{
	char d[24];
	int i = sizeof d;
	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(o, d + i, sizeof d - (size_t)i);
}

/* A JSON string; the parser admits only printable ASCII, but quote and backslash need care. */
static void putstr(struct out *o, const char *s)
{
	put(o, "\"", 1);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			put(o, "\\", 1);
		if ((unsigned char)*s < 0x20)
			continue;
		put(o, s, 1);
	}
	put(o, "\"", 1);
}

static void field(struct out *o, const char *name, uint64_t v)
{
	puts_(o, ",\"");
	puts_(o, name);
	puts_(o, "\":");
	putu(o, v);
}

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

/* The busiest keys shown per keyed rule: a bound on the summary's size, whatever `keys`. */
#define BUSIEST 10

/* A keyed rule: its table's counts and its busiest keys by units charged. */
static void keys_of(struct out *o, const struct rlt__rt_rule *r)
{
	struct rlt__keytab_top top[BUSIEST];
	struct rlt__keytab *t = r->keytab;
	size_t n = rlt__keytab_top(t, top, BUSIEST);

	field(o, "keys", t->keys);
	field(o, "keys_tracked", LOAD(t->a->tracked));
	field(o, "keys_evicted", LOAD(t->a->evictions));
	field(o, "keys_expired", LOAD(t->a->expired));
	field(o, "keys_spilled", LOAD(t->a->spills));
	if (t->shared) /* the table is the segment's: so are these counts */
		field(o, "keys_repaired", LOAD(t->a->repairs));
	puts_(o, ",\"busiest\":[");
	for (size_t i = 0; i < n; i++) {
		char name[80];
		rlt__key_format(&top[i].key, r->rule.key_prefix4, r->rule.key_prefix6, name,
		                sizeof name);
		puts_(o, i ? ",{\"key\":" : "{\"key\":");
		putstr(o, name);
		field(o, "units", top[i].units);
		if (r->keydry) {
			/* what delay and reject would have done to this key (zero when its figures
			 * are another key's: the slot changed hands since) */
			const struct rlt__keydry *d = &r->keydry[top[i].slot];
			int mine = LOAD(d->seq) == top[i].seq;
			field(o, "would_delay_ns", mine ? LOAD(d->wait_ns) : 0);
			field(o, "would_reject", mine ? LOAD(d->refused) : 0);
		}
		puts_(o, "}");
	}
	puts_(o, "]");
}

/* One rule's counters: what happened, then what a dry-run rule would have done (rlthrottle(7) STATISTICS). */
static void counters(struct out *o, const struct rlt__stats *st)
{
	/* each named as its counter in struct rlt__stats, so that the page and the struct agree */
#define COUNTER(name) field(o, #name, LOAD(st->name));
	COUNTER(calls) COUNTER(allowed) COUNTER(delayed) COUNTER(rejected) COUNTER(units)
	COUNTER(delay_ns_total) COUNTER(delay_ns_max)
	COUNTER(would_delay) COUNTER(would_delay_ns_total) COUNTER(would_delay_ns_max)
	COUNTER(would_reject)
#undef COUNTER
}

/* RLT_NET: the conditions in force and what they did (rlthrottle(7) NETWORK CONDITIONS), when
 * there are conditions or were. */
static void net_of(struct out *o)
{
	const struct rlt__net_stats *n = rlt__net_counts;
	uint32_t gen;
	const struct rlt__net_set *set = rlt__net_now(&gen);
	uint64_t did = LOAD(n->dropped) | LOAD(n->resets) | LOAD(n->slices) | LOAD(n->refused) |
	               LOAD(n->timeouts) | LOAD(n->hangs);

	if (!set->n && !did)
		return;
	puts_(o, ",\"net\":{\"conditions\":[");
	for (unsigned i = 0; i < set->n; i++) {
		if (i)
			puts_(o, ",");
		putstr(o, set->c[i].text);
	}
	puts_(o, "]");
	field(o, "dropped", LOAD(n->dropped));
	field(o, "resets", LOAD(n->resets));
	field(o, "slices", LOAD(n->slices));
	field(o, "hangs", LOAD(n->hangs));
	field(o, "connects_refused", LOAD(n->refused));
	field(o, "connects_timed_out", LOAD(n->timeouts));
	puts_(o, "}");
}

int rlt__stats_write(struct rlt__ruleset *rs, ssize_t (*wr)(int, const void *, size_t), int fd,
                     pid_t pid, rlt_ns_t elapsed_ns)
{
	char small[4096];
	int big = !atomic_flag_test_and_set(&big_taken);
	struct out o = {.wr = wr, .fd = fd, .buf = big ? big_buf : small,
	                .cap = big ? sizeof big_buf : sizeof small};
	int first = 1;

	puts_(&o, "{\"schema\":");
	putu(&o, RLT_STATS_SCHEMA);
	field(&o, "pid", (uint64_t)pid);
	field(&o, "elapsed_ns", elapsed_ns);
	puts_(&o, ",\"rules\":[");
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rs->n[v]; i++) {
			struct rlt__rt_rule *r = &rs->rules[v][i];
			puts_(&o, first ? "{\"variable\":" : ",{\"variable\":");
			first = 0;
			putstr(&o, rlt_var_name((enum rlt_var)v));
			field(&o, "index", i + 1); /* from 1, as `set VAR#N` */
			puts_(&o, ",\"rule\":");
			putstr(&o, r->rule.text);
			counters(&o, r->st);
			if (r->keytab)
				keys_of(&o, r);
			puts_(&o, "}");
		}
	puts_(&o, "]");
	net_of(&o);
	puts_(&o, "}\n");
	flush(&o);
	if (big)
		atomic_flag_clear(&big_taken);
	return -o.err;
}

int rlt__stats_path(const char *tmpl, pid_t pid, char *out, size_t len)
{
	size_t n = 0;

	for (const char *s = tmpl; *s; s++) {
		char num[24];
		const char *piece = s;
		size_t plen = 1;
		if (s[0] == '%' && s[1] == 'p') {
			int i = sizeof num;
			uint64_t v = (uint64_t)pid;
			do {
				num[--i] = (char)('0' + v % 10);
				v /= 10;
			} while (v);
			piece = num + i;
			plen = sizeof num - (size_t)i;
			s++;
		} else if (s[0] == '%' && s[1] == '%') {
			s++;
		}
		if (n + plen >= len)
			return -ENAMETOOLONG;
		memcpy(out + n, piece, plen);
		n += plen;
	}
	out[n] = '\0';
	return 0;
}

int rlt__stats_to(const char *tmpl, struct rlt__ruleset *rs,
                  ssize_t (*wr)(int, const void *, size_t), int (*cl)(int), pid_t pid,
                  rlt_ns_t elapsed_ns, struct rlt_error *err)
{
	char path[1100];
	int fd = 2, rc;

	if (strcmp(tmpl, "stderr") != 0) {
		if (rlt__stats_path(tmpl, pid, path, sizeof path) != 0) {
			snprintf(err->msg, sizeof err->msg, "RLT_STATS: the path is too long");
			return -ENAMETOOLONG;
		}
		fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC,
		          0644);
		if (fd < 0) {
			rc = -errno;
			snprintf(err->msg, sizeof err->msg, "RLT_STATS: cannot write %.400s%s", path,
			         rc == -ELOOP ? ": a symbolic link (not followed)"
			         : rc == -ENXIO ? ": a FIFO nobody reads" : "");
			return rc;
		}
	}
	rc = rlt__stats_write(rs, wr, fd, pid, elapsed_ns);
	if (rc)
		snprintf(err->msg, sizeof err->msg, "RLT_STATS: writing the summary failed");
	if (fd != 2)
		cl(fd);
	return rc;
}
