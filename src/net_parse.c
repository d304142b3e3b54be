/*
 * net_parse.c: the grammar of RLT_NET (rlthrottle(7) NETWORK CONDITIONS), from a value to
 * struct rlt__net_set (the canonical text that parses back to the same: net_format.c).
 *
 * Like rule_parse.c it runs at load, in a preloaded library or the freestanding handler: no
 * allocation, no stdio streams, no locale, no state outside the stack. A bad value is never
 * guessed at: the message names the variable, quotes the condition and the wrong part.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "net.h"
#include "span.h"
#include "units.h"

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))
#define PART_MAX 64

static const char *const kind_names[RLT_NET_KIND_COUNT] = {
	[RLT_NET_LATENCY] = "latency", [RLT_NET_LOSS] = "loss",   [RLT_NET_RESET] = "reset",
	[RLT_NET_HANG] = "hang",       [RLT_NET_SLICE] = "slice", [RLT_NET_CONNECT] = "connect",
};

const char *rlt__net_kind_name(enum rlt__net_kind k)
{
	return (unsigned)k < RLT_NET_KIND_COUNT ? kind_names[k] : "?";
}

enum key {
	K_DIR = 0, K_P, K_SEED, K_AFTER, K_CLOSE, K_JITTER, K_DIST, K_DELAY, K_PEER, K_PORT,
	K_FAMILY, K_COUNT
};
static const char *const key_names[K_COUNT] = {
	[K_DIR] = "dir",       [K_P] = "p",         [K_SEED] = "seed",   [K_AFTER] = "after",
	[K_CLOSE] = "close",   [K_JITTER] = "jitter", [K_DIST] = "dist", [K_DELAY] = "delay",
	[K_PEER] = "peer",     [K_PORT] = "port",   [K_FAMILY] = "family",
};
static const char *const dir_names[] = { [RLT_NET_IN] = "in", [RLT_NET_OUT] = "out",
	                                 [RLT_NET_BOTH] = "both" };
static const char *const dist_names[] = { [RLT_NET_UNIFORM] = "uniform",
	                                  [RLT_NET_NORMAL] = "normal" };
static const char *const family_names[] = { [RLT_FAMILY_INET] = "inet",
	                                    [RLT_FAMILY_UNIX] = "unix",
	                                    [RLT_FAMILY_ALL] = "all" };

struct qbuf {
	char s[PART_MAX + 4 * 1 + 4];
};

/* s[0..n) quoted for a message: printable ASCII as is, '"' and '\' escaped, other bytes \xNN,
 * cut to PART_MAX with "...". */
static const char *qp(struct qbuf *q, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)s[i];
		if (o + 4 > PART_MAX) {
			memcpy(q->s + o, "...", 3);
			o += 3;
			break;
		}
		if (b < 0x20 || b >= 0x7f) {
			q->s[o++] = '\\';
			q->s[o++] = 'x';
			q->s[o++] = hex[b >> 4];
			q->s[o++] = hex[b & 15];
		} else {
			if (b == '"' || b == '\\')
				q->s[o++] = '\\';
			q->s[o++] = (char)b;
		}
	}
	q->s[o] = '\0';
	return q->s;
}

struct ctx {
	struct span cond; /* the condition quoted (or the whole value) */
	struct rlt_error *err;
};

/* RLT_NET="cond": detail; -EINVAL. The condition's quote is cut to leave the detail whole. */
__attribute__((format(printf, 2, 3))) static int fail(const struct ctx *c, const char *fmt, ...)
{
	char detail[320], quoted[200];
	struct qbuf q;
	va_list ap;
	size_t n = c->cond.n;

	if (!c->err)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	/* the condition, in pieces of PART_MAX so that a long one still shows whole up to 180 */
	quoted[0] = '\0';
	for (size_t off = 0, o = 0; off < n && o + PART_MAX + 8 < sizeof quoted;) {
		size_t k = n - off < PART_MAX / 4 ? n - off : PART_MAX / 4;
		size_t w = strlen(qp(&q, c->cond.s + off, k));
		memcpy(quoted + o, q.s, w + 1);
		o += w;
		off += k;
		if (off < n && o + PART_MAX + 8 >= sizeof quoted) {
			memcpy(quoted + o, "...", 4);
			break;
		}
	}
	/* a message longer than the error's room keeps its start (the condition and the part) */
	if (snprintf(c->err->msg, sizeof c->err->msg, RLT_NET_VAR "=\"%s\": %s", quoted, detail) >=
	    (int)sizeof c->err->msg)
		memcpy(c->err->msg + sizeof c->err->msg - 4, "...", 4);
	return -EINVAL;
}

/* ----- values ----- */

static int parse_dur(const struct ctx *c, const char *what, struct span v, uint64_t *ns)
{
	struct qbuf q;

	if (rlt__parse_duration(v.s, v.n, ns) != 0)
		return fail(c, "%s: \"%s\" is not a duration (e.g. 50ms, 1.5s, 200us)", what,
		            qp(&q, v.s, v.n));
	return 0;
}

/* A number of bytes: a count, or an amount with a byte unit (1MB, 64KiB), whole. */
static int parse_bytes(struct span v, uint64_t *out)
{
	const struct rlt__unit *u;
	uint64_t num, den;

	if (rlt__parse_amount(v.s, v.n, &u, &num, &den) != 0)
		return -1;
	if (u->kind != RLT_UNIT_BYTES && u->name[0] != '\0')
		return -1;
	if (den != 1 || num == 0)
		return -1;
	*out = num;
	return 0;
}

/* P% with at most 4 decimals, 0..100, in parts per million. */
static int parse_share(const struct ctx *c, const char *what, struct span v, uint32_t *ppm)
{
	struct rlt__decimal d;
	struct qbuf q;
	uint64_t x;

	if (v.n < 2 || v.s[v.n - 1] != '%' || rlt__parse_decimal(v.s, v.n - 1, &d) != 0 ||
	    d.scale > 4)
		return fail(c, "%s: \"%s\" is not a share: write a percentage such as 1%% or "
		               "0.25%%", what, qp(&q, v.s, v.n));
	x = d.digits;
	for (unsigned i = d.scale; i < 4; i++)
		x *= 10;
	if (d.digits > 100000000ull || x > 1000000ull)
		return fail(c, "%s: \"%s\" is not a share in 0%%..100%%", what, qp(&q, v.s, v.n));
	*ppm = (uint32_t)x;
	return 0;
}

static int parse_peer(const struct ctx *c, struct span v, struct rlt__net_match *m)
{
	const char *bad;
	size_t bad_n;
	struct qbuf q;
	char msg[RLT__PEER_MSG_MAX];
	int rc = rlt__parse_peer(v.s, v.n, &m->peer_af, m->peer_addr, &m->peer_prefix,
	                         &bad, &bad_n);

	if (rc == 0)
		return 0;
	rlt__peer_refusal(msg, sizeof msg, rc, m->peer_af, qp(&q, bad, bad_n));
	return fail(c, "%s", msg);
}

/* N or N-M, each in lo..max; *a <= *b. */
static int parse_range(struct span v, uint64_t max, uint64_t *a, uint64_t *b,
                       int (*one)(struct span, uint64_t, uint64_t *))
{
	const char *dash = memchr(v.s, '-', v.n);
	struct span lo = { v.s, dash ? (size_t)(dash - v.s) : v.n };
	struct span hi = dash ? (struct span){ dash + 1, v.n - lo.n - 1 } : lo;

	if (one(lo, max, a) != 0 || one(hi, max, b) != 0)
		return -1;
	return *a <= *b ? 0 : -2;
}

static int one_port(struct span v, uint64_t max, uint64_t *x)
{
	return rlt__parse_count(v.s, v.n, max, x);
}

static int one_size(struct span v, uint64_t max, uint64_t *x)
{
	return parse_bytes(v, x) != 0 || *x > max ? -1 : 0;
}

/* ----- one condition ----- */

/* A condition's key=value pairs after its head: the value of each key given, and whether it
 * was negated (key!=value). */
struct keys {
	struct span v[K_COUNT];
	int has[K_COUNT], neg[K_COUNT];
};

/* The head KIND[=VALUE]: the kind in r->kind, the value in *val (empty when there is none). */
static int parse_head(const struct ctx *c, const char **p, const char *end,
                      struct rlt__net_cond *r, struct span *val)
{
	struct span head = { NULL, 0 }, kind;
	struct qbuf q;
	const char *eq;
	int k;

	next_token(p, end, &head); /* not blank: the caller made sure */
	eq = memchr(head.s, '=', head.n);
	kind = (struct span){ head.s, eq ? (size_t)(eq - head.s) : head.n };
	*val = eq ? (struct span){ eq + 1, head.n - kind.n - 1 } : (struct span){ NULL, 0 };
	k = lookup(kind, kind_names, RLT_NET_KIND_COUNT);
	if (k < 0)
		return fail(c, "unknown condition \"%s\" (latency, loss, reset, hang, slice, connect)",
		            qp(&q, kind.s, kind.n));
	r->kind = (enum rlt__net_kind)k;
	if (eq && val->n == 0)
		return fail(c, "%s: no value after \"=\"", kind_names[k]);
	if ((r->kind == RLT_NET_RESET || r->kind == RLT_NET_HANG) && eq)
		return fail(c, "%s takes no value: write \"%s after=DUR\" or \"%s after=SIZE\"",
		            kind_names[k], kind_names[k], kind_names[k]);
	if (!eq && r->kind != RLT_NET_RESET && r->kind != RLT_NET_HANG)
		return fail(c, "%s needs a value: %s", kind_names[k],
		            r->kind == RLT_NET_LATENCY ? "latency=DUR, e.g. latency=50ms"
		            : r->kind == RLT_NET_LOSS  ? "loss=P%, e.g. loss=1%"
		            : r->kind == RLT_NET_SLICE ? "slice=N[-M] bytes, e.g. slice=1-100"
		                                       : "connect=refuse or connect=timeout");
	return 0;
}

/* The key=value pairs up to end, each known, given once, negated only where that means
 * something, and taken by the kind. */
static int parse_keys(const struct ctx *c, const char **p, const char *end,
                      enum rlt__net_kind kind, struct keys *kv)
{
	/* The keys each kind takes: anything else is a mistake worth naming. */
	static const unsigned takes[RLT_NET_KIND_COUNT] = {
		[RLT_NET_LATENCY] = 1u << K_JITTER | 1u << K_DIST | 1u << K_DIR,
		[RLT_NET_LOSS] = 1u << K_DIR,
		[RLT_NET_RESET] = 1u << K_AFTER,
		[RLT_NET_HANG] = 1u << K_AFTER | 1u << K_CLOSE | 1u << K_DIR,
		[RLT_NET_SLICE] = 1u << K_DELAY | 1u << K_DIR,
		[RLT_NET_CONNECT] = 1u << K_AFTER,
	};
	const unsigned common = 1u << K_P | 1u << K_SEED | 1u << K_PEER | 1u << K_PORT |
	                        1u << K_FAMILY;
	struct span t;
	struct qbuf q;

	while (next_token(p, end, &t)) {
		const char *e2 = memchr(t.s, '=', t.n);
		struct span key;
		int not = 0, kk;
		if (!e2)
			return fail(c, "\"%s\" is not key=value", qp(&q, t.s, t.n));
		key = (struct span){ t.s, (size_t)(e2 - t.s) };
		if (key.n > 0 && key.s[key.n - 1] == '!') {
			not = 1;
			key.n--;
		}
		if (key.n == 0)
			return fail(c, "\"%s\" has no key before \"=\"", qp(&q, t.s, t.n));
		kk = lookup(key, key_names, K_COUNT);
		if (kk < 0)
			return fail(c, "unknown key \"%s\" (dir, p, seed, after, close, jitter, dist, "
			               "delay, peer, port, family)", qp(&q, key.s, key.n));
		if (not && kk != K_PEER && kk != K_PORT && kk != K_FAMILY)
			return fail(c, "%s!=: only peer, port and family can be negated", key_names[kk]);
		if (kv->has[kk])
			return fail(c, "%s is given twice", key_names[kk]);
		kv->v[kk] = (struct span){ e2 + 1, (size_t)(t.s + t.n - e2 - 1) };
		if (kv->v[kk].n == 0)
			return fail(c, "%s: no value after \"%s=\"", key_names[kk], not ? "!" : "");
		kv->has[kk] = 1;
		kv->neg[kk] = not;
	}
	for (int i = 0; i < K_COUNT; i++)
		if (kv->has[i] && !((takes[kind] | common) & (1u << i)))
			return fail(c, "%s does not apply to %s", key_names[i], kind_names[kind]);
	return 0;
}

/* The value of key k (given), one of names: its index, or a message that lists them. */
static int parse_one_of(const struct ctx *c, const struct keys *kv, enum key k,
                        const char *const *names, size_t count, const char *list, int *out)
{
	struct qbuf q;

	*out = lookup(kv->v[k], names, count);
	if (*out < 0)
		return fail(c, "%s: unknown \"%s\" (%s)", key_names[k], qp(&q, kv->v[k].s, kv->v[k].n),
		            list);
	return 0;
}

/* The duration of key k, when the condition gives it; else *ns stays. */
static int parse_dur_key(const struct ctx *c, const struct keys *kv, enum key k, uint64_t *ns)
{
	return kv->has[k] ? parse_dur(c, key_names[k], kv->v[k], ns) : 0;
}

static int parse_latency(const struct ctx *c, struct rlt__net_cond *r, struct span val,
                         const struct keys *kv)
{
	int rc;

	r->dir = RLT_NET_IN;
	rc = parse_dur(c, "latency", val, &r->dur_ns);
	if (!rc)
		rc = parse_dur_key(c, kv, K_JITTER, &r->jitter_ns);
	if (rc)
		return rc;
	if (kv->has[K_DIST]) {
		int d;
		rc = parse_one_of(c, kv, K_DIST, dist_names, COUNT_OF(dist_names), "uniform, normal", &d);
		if (rc)
			return rc;
		r->dist = (enum rlt__net_dist)d;
		if (!kv->has[K_JITTER])
			return fail(c, "dist applies only with jitter=: it shapes the jitter");
	}
	return 0;
}

/* reset and hang: after= a duration or a size; hang's close= */
static int parse_reset_hang(const struct ctx *c, struct rlt__net_cond *r, const struct keys *kv)
{
	struct qbuf q;
	int rc;

	if (r->kind == RLT_NET_HANG) {
		r->dir = RLT_NET_BOTH;
		rc = parse_dur_key(c, kv, K_CLOSE, &r->close_ns);
		if (rc)
			return rc;
		if (kv->has[K_CLOSE] && r->close_ns == 0)
			return fail(c, "close: 0 would close at once: that is a reset; give a "
			               "duration such as close=30s");
	}
	if (kv->has[K_AFTER]) {
		struct span a = kv->v[K_AFTER];
		if (rlt__parse_duration(a.s, a.n, &r->after_ns) == 0) {
			r->after = RLT_NET_AFTER_TIME;
		} else if (parse_bytes(a, &r->after_bytes) == 0) {
			r->after = RLT_NET_AFTER_BYTES;
		} else {
			return fail(c, "after: \"%s\" is neither a duration (e.g. 5s) nor a size "
			               "(e.g. 1MB, 64KiB, 1000)", qp(&q, a.s, a.n));
		}
	}
	return 0;
}

static int parse_slice(const struct ctx *c, struct rlt__net_cond *r, struct span val,
                       const struct keys *kv)
{
	struct qbuf q;
	int rc;

	r->dir = RLT_NET_BOTH;
	rc = parse_range(val, UINT32_MAX, &r->slice_lo, &r->slice_hi, one_size);
	if (rc == -2)
		return fail(c, "slice: \"%s\" is an inverted range: the smaller size first",
		            qp(&q, val.s, val.n));
	if (rc)
		return fail(c, "slice: \"%s\" is not N or N-M bytes, each from 1 to %u (e.g. "
		               "slice=1-100, slice=1KiB)", qp(&q, val.s, val.n), UINT32_MAX);
	return parse_dur_key(c, kv, K_DELAY, &r->delay_ns);
}

static int parse_connect(const struct ctx *c, struct rlt__net_cond *r, struct span val,
                         const struct keys *kv)
{
	struct qbuf q;

	if (span_is(val, "refuse")) {
		r->connect = RLT_NET_REFUSE;
		if (kv->has[K_AFTER])
			return fail(c, "after does not apply to connect=refuse: a refusal is at once");
	} else if (span_is(val, "timeout")) {
		r->connect = RLT_NET_TIMEOUT;
		r->connect_ns = RLT_NET_CONNECT_DEFAULT_NS;
		return parse_dur_key(c, kv, K_AFTER, &r->connect_ns);
	} else {
		return fail(c, "connect: unknown \"%s\" (refuse, timeout)", qp(&q, val.s, val.n));
	}
	return 0;
}

/* The kind's value and the keys only it takes. */
static int parse_kind(const struct ctx *c, struct rlt__net_cond *r, struct span val,
                      const struct keys *kv)
{
	switch (r->kind) {
	case RLT_NET_LATENCY:
		return parse_latency(c, r, val, kv);
	case RLT_NET_LOSS:
		r->dir = RLT_NET_BOTH;
		return parse_share(c, "loss", val, &r->loss_ppm);
	case RLT_NET_HANG:
	case RLT_NET_RESET:
		return parse_reset_hang(c, r, kv);
	case RLT_NET_SLICE:
		return parse_slice(c, r, val, kv);
	case RLT_NET_CONNECT:
		return parse_connect(c, r, val, kv);
	default:
		return 0;
	}
}

/* The keys every kind takes: dir= (over the kind's default), p=, seed=. */
static int parse_common(const struct ctx *c, struct rlt__net_cond *r, const struct keys *kv)
{
	struct qbuf q;
	int rc;

	if (kv->has[K_DIR]) {
		int d;
		rc = parse_one_of(c, kv, K_DIR, dir_names, COUNT_OF(dir_names), "in, out, both", &d);
		if (rc)
			return rc;
		r->dir = (unsigned)d;
	}
	if (kv->has[K_P]) {
		rc = parse_share(c, "p", kv->v[K_P], &r->p_ppm);
		if (rc)
			return rc;
	}
	if (kv->has[K_SEED]) {
		struct span s = kv->v[K_SEED];
		uint64_t x = 0;
		if (span_is(s, "0"))
			x = 0;
		else if (rlt__parse_count(s.s, s.n, UINT64_MAX, &x) != 0)
			return fail(c, "seed: \"%s\" is not a whole number", qp(&q, s.s, s.n));
		r->seed = x;
		r->has_seed = 1;
	}
	return 0;
}

/* Which connections the condition applies to: peer=, port=, family=, each maybe negated. */
static int parse_match(const struct ctx *c, struct rlt__net_match *m, const struct keys *kv)
{
	struct qbuf q;
	int rc;

	if (kv->has[K_PEER]) {
		rc = parse_peer(c, kv->v[K_PEER], m);
		if (rc)
			return rc;
		m->peer_not = (uint8_t)kv->neg[K_PEER];
	}
	if (kv->has[K_PORT]) {
		uint64_t a, b;
		rc = parse_range(kv->v[K_PORT], 65535, &a, &b, one_port);
		if (rc == -2)
			return fail(c, "port: \"%s\" is an inverted range: the lower port first",
			            qp(&q, kv->v[K_PORT].s, kv->v[K_PORT].n));
		if (rc)
			return fail(c, "port: \"%s\" is not a port or a range N-M in 1..65535",
			            qp(&q, kv->v[K_PORT].s, kv->v[K_PORT].n));
		m->port_lo = (uint16_t)a;
		m->port_hi = (uint16_t)b;
		m->port_not = (uint8_t)kv->neg[K_PORT];
	}
	if (kv->has[K_FAMILY]) {
		int f;
		rc = parse_one_of(c, kv, K_FAMILY, family_names, COUNT_OF(family_names),
		                  "inet, unix, all", &f);
		if (rc)
			return rc;
		if (kv->neg[K_FAMILY] && f == RLT_FAMILY_ALL)
			return fail(c, "family!=all would match nothing");
		m->family = (enum rlt_family)f;
		m->family_not = (uint8_t)kv->neg[K_FAMILY];
	}
	if (!m->family_not && m->family == RLT_FAMILY_UNIX &&
	    ((kv->has[K_PEER] && !kv->neg[K_PEER]) || (kv->has[K_PORT] && !kv->neg[K_PORT])))
		return fail(c, "%s does not apply to family=unix: a unix socket has no %s",
		            kv->has[K_PEER] ? "peer" : "port",
		            kv->has[K_PEER] ? "IP address" : "port");
	return 0;
}

static int parse_cond(const struct ctx *c, struct rlt__net_cond *r)
{
	const char *p = c->cond.s, *end = c->cond.s + c->cond.n;
	struct keys kv = { 0 };
	struct span val;
	int rc;

	memset(r, 0, sizeof *r);
	memcpy(r->text, c->cond.s, c->cond.n < RLT_RULE_TEXT_MAX ? c->cond.n : RLT_RULE_TEXT_MAX);
	r->p_ppm = RLT_NET_PPM;
	r->m.port_hi = 65535;
	r->m.family = RLT_FAMILY_INET;

	rc = parse_head(c, &p, end, r, &val);
	if (!rc)
		rc = parse_keys(c, &p, end, r->kind, &kv);
	if (!rc)
		rc = parse_kind(c, r, val, &kv);
	if (!rc)
		rc = parse_common(c, r, &kv);
	if (!rc)
		rc = parse_match(c, &r->m, &kv);
	return rc;
}

int rlt__net_parse(const char *value, struct rlt__net_set *out, struct rlt_error *err)
{
	struct ctx c = { { value ? value : "", 0 }, err };
	size_t len;
	const char *p, *end;
	struct span part;

	out->n = 0;
	if (!value)
		return 0;
	len = strnlen(value, RLT_VALUE_MAX + 1);
	c.cond.n = len > 200 ? 200 : len;
	if (len > RLT_VALUE_MAX)
		return fail(&c, "is too long (more than %d bytes)", RLT_VALUE_MAX);
	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)value[i];
		if ((b >= 0x20 && b < 0x7f) || b == '\t')
			continue;
		return fail(&c, "byte \\x%02x at position %zu is not printable ASCII", b, i + 1);
	}
	p = value;
	end = value + len;
	while (next_part(&p, end, &part)) {
		struct ctx one = { part, err };
		int rc;

		if (part.n == 0)
			continue;
		if (out->n >= RLT_NET_MAX)
			rc = fail(&c, "has more than %d conditions", RLT_NET_MAX);
		else if (part.n > RLT_RULE_TEXT_MAX)
			rc = fail(&one, "condition is too long (%zu bytes, at most %d)", part.n,
			          RLT_RULE_TEXT_MAX);
		else
			rc = parse_cond(&one, &out->c[out->n]);
		if (rc) {
			out->n = 0;
			return rc;
		}
		out->n++;
	}
	return 0;
}
