/*
 * rule_parse.c: the rule grammar of rlthrottle(7) RULES, from the value of one variable to struct rlt_rule,
 * and back to a canonical text (rlt_rule_format) that parses to the same rule.
 *
 * This runs when the preloaded library loads, before main and possibly before libc is fully
 * set up for the program: so no allocation (rules go into the caller's array), no stdio
 * streams, no getenv, nothing that depends on the locale (ASCII helpers, no strtod or ctype),
 * and no state outside the stack, which makes it reentrant and thread-safe.
 *
 * A bad value is never guessed at: every path either accepts exactly what rlthrottle(7) RULES describes or
 * fails with a message that names the variable, quotes the rule and quotes the wrong part.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "rlthrottle.h"
#include "units.h"

static const char *const var_names[RLT_VAR_COUNT] = {
	[RLT_VAR_CONNECT] = "RLT_CONNECT",
	[RLT_VAR_ACCEPT] = "RLT_ACCEPT",
	[RLT_VAR_SEND] = "RLT_SEND",
	[RLT_VAR_RECV] = "RLT_RECV",
	[RLT_VAR_CONNS] = "RLT_CONNS",
};

/* Used in messages: "connect rules count calls". */
static const char *const var_short[RLT_VAR_COUNT] = {
	[RLT_VAR_CONNECT] = "connect",
	[RLT_VAR_ACCEPT] = "accept",
	[RLT_VAR_SEND] = "send",
	[RLT_VAR_RECV] = "recv",
	[RLT_VAR_CONNS] = "conns",
};

static const char *const action_names[] = { [RLT_ACTION_DELAY] = "delay",
	                                    [RLT_ACTION_REJECT] = "reject",
	                                    [RLT_ACTION_DRY_RUN] = "dry-run" };
static const char *const fallback_names[] = { [RLT_FALLBACK_LOCAL] = "local",
	                                      [RLT_FALLBACK_ALLOW] = "allow",
	                                      [RLT_FALLBACK_DENY] = "deny" };
static const char *const family_names[] = { [RLT_FAMILY_INET] = "inet",
	                                    [RLT_FAMILY_UNIX] = "unix",
	                                    [RLT_FAMILY_ALL] = "all" };

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

enum key {
	K_ALGO,
	K_BURST,
	K_ACTION,
	K_MAX_WAIT,
	K_ERRNO,
	K_SCOPE,
	K_FALLBACK,
	K_PEER,
	K_PORT,
	K_FAMILY,
	K_KEY,
	K_KEYS,
	K_COUNT
};

static const char *const key_names[K_COUNT] = {
	[K_ALGO] = "algo",         [K_BURST] = "burst", [K_ACTION] = "action",
	[K_MAX_WAIT] = "max-wait", [K_ERRNO] = "errno", [K_SCOPE] = "scope",
	[K_FALLBACK] = "fallback", [K_PEER] = "peer",   [K_PORT] = "port",
	[K_FAMILY] = "family",     [K_KEY] = "key",     [K_KEYS] = "keys",
};

const char *rlt_var_name(enum rlt_var v)
{
	return (unsigned)v < RLT_VAR_COUNT ? var_names[v] : NULL;
}

/* ---------------------------------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------------------------------- */

/* A quoted part inside a message is cut to this many bytes, so that the message always has
 * room for the rule itself. */
#define PART_MAX 64
#define DETAIL_MAX 320

struct qbuf {
	char s[PART_MAX + 1];
};

/*
 * Writes s[0..n) into out as it may sit between double quotes in one line: '"' and '\' get a
 * backslash, bytes outside printable ASCII become \xNN. At most max bytes are written (plus a
 * NUL); a longer text is cut between two escapes and ends with "...".
 */
static size_t quote(char *out, size_t max, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t used = 0, need = 0, limit;

	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)s[i];
		need += (b < 0x20 || b >= 0x7f) ? 4 : (b == '"' || b == '\\') ? 2 : 1;
	}
	limit = need <= max ? max : (max >= 3 ? max - 3 : 0);
	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)s[i];
		char piece[4];
		size_t k = 0;
		if (b < 0x20 || b >= 0x7f) {
			piece[k++] = '\\';
			piece[k++] = 'x';
			piece[k++] = hex[b >> 4];
			piece[k++] = hex[b & 15];
		} else {
			if (b == '"' || b == '\\')
				piece[k++] = '\\';
			piece[k++] = (char)b;
		}
		if (used + k > limit)
			break;
		memcpy(out + used, piece, k);
		used += k;
	}
	if (need > max && max >= 3) {
		memcpy(out + used, "...", 3);
		used += 3;
	}
	out[used] = '\0';
	return used;
}

/*
 * Copies s[0..n) into out (at most cap - 1 bytes and a NUL) with the password of every
 * redis://USER:PASSWORD@ replaced by "***" (the whole USER part when it has no ':', which may be
 * a password written without one): no message, stats or listing may show it. The userinfo ends
 * at the last '@' before a blank or ';' (a NAME or host has no '@'). Returns the length.
 */
static size_t mask_secrets(const char *s, size_t n, char *out, size_t cap)
{
	static const char scheme[] = "redis://";
	size_t o = 0, i = 0, k = sizeof scheme - 1;

	if (cap == 0)
		return 0;
	while (i < n && o + 1 < cap) {
		size_t end, at = 0, colon = 0;
		int has_at = 0, has_colon = 0;
		if (n - i < k || memcmp(s + i, scheme, k) != 0) {
			out[o++] = s[i++];
			continue;
		}
		for (end = i + k; end < n && s[end] != ' ' && s[end] != '\t' && s[end] != ';'; end++)
			if (s[end] == '@') {
				at = end;
				has_at = 1;
			}
		for (size_t j = i + k; has_at && j < at && !has_colon; j++)
			if (s[j] == ':') {
				colon = j;
				has_colon = 1;
			}
		/* copy through the user (and ':'), then "***" in place of what follows up to '@' */
		for (size_t stop = !has_at ? end : has_colon ? colon + 1 : i + k; i < stop && o + 1 < cap;)
			out[o++] = s[i++];
		if (has_at) {
			for (const char *m = "***"; *m && o + 1 < cap; m++)
				out[o++] = *m;
			i = at;
		}
	}
	out[o] = '\0';
	return o;
}

static const char *qp(struct qbuf *q, const char *s, size_t n)
{
	char masked[RLT_VALUE_MAX + 1];

	quote(q->s, PART_MAX, masked, mask_secrets(s, n, masked, sizeof masked));
	return q->s;
}

/* What a message quotes: the variable and the rule (or the whole value). */
struct ctx {
	enum rlt_var var;
	const char *rule;
	size_t rule_len;
	struct rlt_error *err;
};

/* Fills err with VAR="rule": detail and returns -EINVAL. The rule's quote gets whatever room
 * the detail leaves, so the message always fits and the detail is never cut. */
__attribute__((format(printf, 2, 3))) static int fail(const struct ctx *c, const char *fmt, ...)
{
	char detail[DETAIL_MAX], rule[sizeof c->err->msg], masked[RLT_VALUE_MAX + 1];
	const char *name = var_names[c->var];
	size_t fixed, room, nl, dl, rl;
	char *m;
	va_list ap;

	if (!c->err)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	nl = strlen(name);
	dl = strlen(detail);
	/* detail is under DETAIL_MAX and name is short: the fixed part always fits. */
	fixed = nl + strlen("=\"\": ") + dl;
	room = sizeof c->err->msg - 1 - fixed;
	rl = quote(rule, room, masked, mask_secrets(c->rule, c->rule_len, masked, sizeof masked));
	m = c->err->msg;
	memcpy(m, name, nl);
	m += nl;
	memcpy(m, "=\"", 2);
	m += 2;
	memcpy(m, rule, rl);
	m += rl;
	memcpy(m, "\": ", 3);
	m += 3;
	memcpy(m, detail, dl + 1);
	return -EINVAL;
}

/* ---------------------------------------------------------------------------------------------
 * Small helpers
 * ------------------------------------------------------------------------------------------- */

struct span {
	const char *s;
	size_t n;
};

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int span_is(struct span t, const char *word)
{
	return strlen(word) == t.n && memcmp(word, t.s, t.n) == 0;
}

static int starts_with(struct span t, const char *prefix)
{
	size_t k = strlen(prefix);
	return t.n >= k && memcmp(t.s, prefix, k) == 0;
}

/* Index of t in names[0..count), or -1. */
static int lookup(struct span t, const char *const *names, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (names[i] && span_is(t, names[i]))
			return (int)i;
	return -1;
}

static void trim(const char **s, size_t *n)
{
	while (*n > 0 && is_blank((*s)[0])) {
		(*s)++;
		(*n)--;
	}
	while (*n > 0 && is_blank((*s)[*n - 1]))
		(*n)--;
}

static const char *unit_suffix(enum rlt_unit u)
{
	return u == RLT_UNIT_BYTES ? "B" : u == RLT_UNIT_MSGS ? "msg" : "";
}

static const char *unit_words(enum rlt_unit u)
{
	return u == RLT_UNIT_BYTES ? "bytes" : u == RLT_UNIT_MSGS ? "messages" : "calls";
}

/* ---------------------------------------------------------------------------------------------
 * The rate
 * ------------------------------------------------------------------------------------------- */

static int parse_conns(const struct ctx *c, struct span t, struct rlt_rule *r)
{
	struct qbuf q;
	uint64_t v;
	int rc;

	if (memchr(t.s, '/', t.n))
		return fail(c, "RLT_CONNS is a number of connections open at once, not a rate: "
		               "write e.g. 50, not \"%s\"", qp(&q, t.s, t.n));
	rc = rlt__parse_count(t.s, t.n, UINT64_MAX, &v);
	if (rc == -RLT__E_ZERO)
		return fail(c, "0 connections would refuse every connection: the limit must be at "
		               "least 1");
	if (rc == -RLT__E_FRACTION)
		return fail(c, "\"%s\" is not a whole number of connections", qp(&q, t.s, t.n));
	if (rc == -RLT__E_RANGE)
		return fail(c, "\"%s\" is too large", qp(&q, t.s, t.n));
	if (rc)
		return fail(c, "\"%s\" is not a number of connections: write a whole number, e.g. 50",
		            qp(&q, t.s, t.n));
	r->unit = RLT_UNIT_CONNS;
	r->amount_num = v;
	r->amount_den = 1;
	r->period_ns = 0;
	return 0;
}

static int parse_rate(const struct ctx *c, struct span t, struct rlt_rule *r)
{
	const char *slash = memchr(t.s, '/', t.n);
	struct span amount, period, num, unit;
	const struct rlt__unit *u;
	struct rlt__decimal d;
	struct qbuf q1, q2, q3;
	int rc;

	if (!slash)
		return fail(c, "rate: \"%s\" has no period: write AMOUNT[UNIT]/PERIOD, e.g. %s",
		            qp(&q1, t.s, t.n), c->var >= RLT_VAR_SEND ? "1MiB/s" : "10/s");
	amount = (struct span){ t.s, (size_t)(slash - t.s) };
	period = (struct span){ slash + 1, t.n - amount.n - 1 };
	num = (struct span){ amount.s, rlt__number_span(amount.s, amount.n) };
	unit = (struct span){ amount.s + num.n, amount.n - num.n };

	if (amount.n == 0)
		return fail(c, "rate: no amount before \"/\": write e.g. 10/s");
	rc = rlt__parse_decimal(num.s, num.n, &d);
	if (rc == -RLT__E_RANGE)
		return fail(c, "rate: \"%s\" is too large or has too many digits",
		            qp(&q1, amount.s, amount.n));
	if (rc)
		return fail(c, "rate: \"%s\" is not an amount: write a decimal number such as 10 or "
		               "2.5, then the unit",
		            qp(&q1, amount.s, amount.n));

	u = rlt__unit_lookup(unit.s, unit.n);
	if (c->var == RLT_VAR_CONNECT || c->var == RLT_VAR_ACCEPT) {
		if (unit.n > 0 && u)
			return fail(c, "%s rules count %s: write %s/%s, not %s/%s",
			            var_short[c->var],
			            c->var == RLT_VAR_CONNECT ? "calls" : "connections",
			            qp(&q1, num.s, num.n), qp(&q2, period.s, period.n),
			            qp(&q3, amount.s, amount.n), q2.s);
		if (unit.n > 0)
			return fail(c, "rate: unknown unit \"%s\" in \"%s\" (%s rules count calls: no "
			               "unit)",
			            qp(&q1, unit.s, unit.n), qp(&q2, amount.s, amount.n),
			            var_short[c->var]);
	} else {
		if (unit.n == 0)
			return fail(c, "a rate for bytes or messages needs a unit, e.g. %sB/%s or "
			               "%smsg/%s",
			            qp(&q1, num.s, num.n), qp(&q2, period.s, period.n), q1.s, q2.s);
		if (!u)
			return fail(c, "rate: unknown unit \"%s\" in \"%s\" (B, kB, MB, GB, TB, KiB, "
			               "MiB, GiB, TiB, kbit, Mbit, Gbit, Tbit or msg)",
			            qp(&q1, unit.s, unit.n), qp(&q2, amount.s, amount.n));
	}
	rc = rlt__amount_scale(&d, u, &r->amount_num, &r->amount_den);
	if (rc)
		return fail(c, "rate: \"%s\" is too large or has too many digits",
		            qp(&q1, amount.s, amount.n));
	r->unit = u->kind;
	if (r->amount_num == 0)
		return fail(c, "rate: \"%s\" lets nothing through: the amount must be more than 0",
		            qp(&q1, t.s, t.n));

	if (period.n == 0)
		return fail(c, "rate: no period after \"/\" in \"%s\": write e.g. %s/s",
		            qp(&q1, t.s, t.n), qp(&q2, amount.s, amount.n));
	rc = rlt__parse_period(period.s, period.n, &r->period_ns);
	if (rc == -RLT__E_ZERO)
		return fail(c, "period: \"%s\" is zero: the period must be at least 1",
		            qp(&q1, period.s, period.n));
	if (rc == -RLT__E_FRACTION)
		return fail(c, "period: \"%s\" is not a whole number: write e.g. 1500ms, not 1.5s",
		            qp(&q1, period.s, period.n));
	if (rc == -RLT__E_RANGE)
		return fail(c, "period: \"%s\" is too long", qp(&q1, period.s, period.n));
	if (rc)
		return fail(c, "period: \"%s\" is not a period: write [N]ms, [N]s, [N]min or [N]h, "
		               "e.g. s, 100ms, 2h",
		            qp(&q1, period.s, period.n));
	return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Keys
 * ------------------------------------------------------------------------------------------- */

static int parse_burst(const struct ctx *c, struct span v, const struct rlt_rule *r,
                       uint64_t *burst)
{
	struct span num = { v.s, rlt__number_span(v.s, v.n) };
	struct span unit = { v.s + num.n, v.n - num.n };
	const struct rlt__unit *u;
	struct rlt__decimal d;
	uint64_t n, den;
	struct qbuf q1, q2;
	int ok, rc;

	rc = rlt__parse_decimal(num.s, num.n, &d);
	if (rc == -RLT__E_RANGE)
		return fail(c, "burst: \"%s\" is too large", qp(&q1, v.s, v.n));
	if (rc)
		return fail(c, "burst: \"%s\" is not an amount", qp(&q1, v.s, v.n));
	u = rlt__unit_lookup(unit.s, unit.n);
	if (!u)
		return fail(c, "burst: unknown unit \"%s\" in \"%s\"", qp(&q1, unit.s, unit.n),
		            qp(&q2, v.s, v.n));
	/* A bare number is in the rule's own base unit: bytes, messages or calls. */
	ok = u->kind == RLT_UNIT_CALLS || u->kind == r->unit;
	if (!ok && r->unit == RLT_UNIT_BYTES)
		return fail(c, "burst: \"%s\" is not in bytes: write e.g. burst=64KiB",
		            qp(&q1, v.s, v.n));
	if (!ok && r->unit == RLT_UNIT_MSGS)
		return fail(c, "burst: \"%s\" is not in messages: write e.g. burst=10 or burst=10msg",
		            qp(&q1, v.s, v.n));
	if (!ok)
		return fail(c, "burst: \"%s\": %s rules count calls: write e.g. burst=10",
		            qp(&q1, v.s, v.n), var_short[c->var]);
	rc = rlt__amount_scale(&d, u, &n, &den);
	if (rc)
		return fail(c, "burst: \"%s\" is too large", qp(&q1, v.s, v.n));
	if (den != 1)
		return fail(c, "burst: \"%s\" is not a whole number of %s", qp(&q1, v.s, v.n),
		            unit_words(r->unit));
	if (n == 0)
		return fail(c, "burst: \"%s\" is zero: a burst must be at least 1",
		            qp(&q1, v.s, v.n));
	*burst = n;
	return 0;
}

static int parse_max_wait(const struct ctx *c, struct span v, uint64_t *ns)
{
	struct qbuf q;
	int rc = rlt__parse_duration(v.s, v.n, ns);

	if (rc == 0)
		return 0;
	if (rc == -RLT__E_UNIT && rlt__number_span(v.s, v.n) == v.n)
		return fail(c, "max-wait: \"%s\" needs a unit: ns, us, ms, s, min or h",
		            qp(&q, v.s, v.n));
	if (rc == -RLT__E_UNIT)
		return fail(c, "max-wait: unknown unit in \"%s\" (ns, us, ms, s, min, h)",
		            qp(&q, v.s, v.n));
	if (rc == -RLT__E_FRACTION)
		return fail(c, "max-wait: \"%s\" is finer than a nanosecond", qp(&q, v.s, v.n));
	if (rc == -RLT__E_RANGE)
		return fail(c, "max-wait: \"%s\" is too long", qp(&q, v.s, v.n));
	return fail(c, "max-wait: \"%s\" is not a duration: write e.g. 500ms or 2s",
	            qp(&q, v.s, v.n));
}

static int parse_errno(const struct ctx *c, struct span v, int *e)
{
	char name[32];
	struct qbuf q;

	if (v.n < sizeof name) {
		memcpy(name, v.s, v.n);
		name[v.n] = '\0';
		*e = rlt_errno_from_name(name);
		if (*e)
			return 0;
	}
	return fail(c, "errno: unknown \"%s\" (write a name such as ECONNREFUSED)",
	            qp(&q, v.s, v.n));
}

static int is_name_char(char ch)
{
	return rlt__is_alnum(ch) || ch == '.' || ch == '_' || ch == '-';
}

/* A scope NAME: it becomes part of a shared-memory object or a Redis key, so it is kept to a
 * small alphabet, and "." and ".." are refused since they mean something in a path. */
static int check_name(const struct ctx *c, struct span name, struct span scope, char *out)
{
	struct qbuf q1, q2;

	if (name.n == 0)
		return fail(c, "scope: \"%s\" needs a NAME", qp(&q1, scope.s, scope.n));
	if (name.n > RLT_NAME_MAX)
		return fail(c, "scope: NAME \"%s\" is longer than %d bytes", qp(&q1, name.s, name.n),
		            RLT_NAME_MAX);
	if (memchr(name.s, '/', name.n))
		return fail(c, "scope: NAME \"%s\" must not contain \"/\"", qp(&q1, name.s, name.n));
	for (size_t i = 0; i < name.n; i++)
		if (!is_name_char(name.s[i]))
			return fail(c, "scope: NAME \"%s\" has \"%s\": use only letters, digits, \".\", "
			               "\"_\" and \"-\"",
			            qp(&q1, name.s, name.n), qp(&q2, name.s + i, 1));
	if (span_is(name, ".") || span_is(name, ".."))
		return fail(c, "scope: NAME \"%s\" is not allowed", qp(&q1, name.s, name.n));
	memcpy(out, name.s, name.n);
	out[name.n] = '\0';
	return 0;
}

/* A host name of letters, digits, '-' and '_' in dot-separated labels, or a dotted IPv4. */
static int host_ok(struct span h)
{
	char buf[16];
	struct in_addr a4;
	size_t label = 0;
	int only_digits = 1;

	if (h.n == 0 || h.n > RLT_HOST_MAX)
		return 0;
	for (size_t i = 0; i < h.n; i++) {
		char ch = h.s[i];
		if (ch == '.') {
			if (label == 0 || h.s[i - 1] == '-')
				return 0;
			label = 0;
			continue;
		}
		if (!rlt__is_alnum(ch) && ch != '-' && ch != '_')
			return 0;
		if (ch == '-' && label == 0)
			return 0;
		if (!rlt__is_digit(ch))
			only_digits = 0;
		if (++label > 63)
			return 0;
	}
	if (label == 0 || h.s[h.n - 1] == '-')
		return 0;
	/* All digits and dots is an IPv4 address, and must be a valid one: 999.1.1.1 is no
	 * host name. */
	if (only_digits) {
		if (h.n >= sizeof buf)
			return 0;
		memcpy(buf, h.s, h.n);
		buf[h.n] = '\0';
		return inet_pton(AF_INET, buf, &a4) == 1;
	}
	return 1;
}

static int hex_val(char h)
{
	return h >= '0' && h <= '9' ? h - '0'
	     : h >= 'a' && h <= 'f' ? h - 'a' + 10
	     : h >= 'A' && h <= 'F' ? h - 'A' + 10
	                            : -1;
}

/* USER or PASSWORD of a redis:// URL, %XX decoded, into out[RLT_AUTH_MAX + 1]. Messages never
 * quote the password (what = "password"); they may quote a user. */
static int decode_auth(const struct ctx *c, struct span t, const char *what, char *out)
{
	struct qbuf q;
	size_t o = 0;
	int quoted = !strcmp(what, "user");

	for (size_t i = 0; i < t.n; i++) {
		int b = (unsigned char)t.s[i];
		if (b == '%') {
			int hi = i + 2 < t.n ? hex_val(t.s[i + 1]) : -1;
			int lo = i + 2 < t.n ? hex_val(t.s[i + 2]) : -1;
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return quoted ? fail(c, "scope: the redis user \"%s\" has a '%%' that is not "
				                        "%%XX (two hex digits, not %%00): write %%25 for '%%'",
				                     qp(&q, t.s, t.n))
				              : fail(c, "scope: the redis password has a '%%' that is not %%XX "
				                        "(two hex digits, not %%00): write %%25 for '%%'");
			b = hi * 16 + lo;
			i += 2;
		}
		if (o == RLT_AUTH_MAX)
			return fail(c, "scope: the redis %s is longer than %d bytes", what, RLT_AUTH_MAX);
		out[o++] = (char)b;
	}
	out[o] = '\0';
	return 0;
}

static int parse_redis(const struct ctx *c, struct span v, struct rlt_rule *r)
{
	struct span rest = { v.s + strlen("redis://"), v.n - strlen("redis://") };
	struct span host, port, name;
	const char *p, *end = rest.s + rest.n, *at = NULL;
	struct qbuf q1, q2;
	uint64_t portv;
	int rc;

	/* USER:PASSWORD@ ends at the last '@': a host or NAME has none, a password may */
	for (const char *x = rest.s; x < end; x++)
		if (*x == '@')
			at = x;
	if (at) {
		const char *colon = memchr(rest.s, ':', (size_t)(at - rest.s));
		if (!colon)
			return fail(c, "scope: a redis:// URL names a password as "
			               "redis://USER:PASSWORD@HOST:PORT/NAME or "
			               "redis://:PASSWORD@HOST:PORT/NAME");
		rc = decode_auth(c, (struct span){ rest.s, (size_t)(colon - rest.s) }, "user",
		                 r->redis_user);
		if (rc == 0)
			rc = decode_auth(c, (struct span){ colon + 1, (size_t)(at - colon - 1) },
			                 "password", r->redis_pass);
		if (rc)
			return rc;
		if (!r->redis_pass[0])
			return fail(c, "scope: the redis password is empty (no password: leave out "
			               "USER:PASSWORD@)");
		rest = (struct span){ at + 1, (size_t)(end - at - 1) };
	}

	if (rest.n > 0 && rest.s[0] == '[') {
		const char *close = memchr(rest.s, ']', rest.n);
		char buf[INET6_ADDRSTRLEN];
		struct in6_addr a6;
		if (!close)
			return fail(c, "scope: \"%s\" has \"[\" without \"]\"", qp(&q1, v.s, v.n));
		host = (struct span){ rest.s + 1, (size_t)(close - rest.s - 1) };
		if (host.n == 0 || host.n >= sizeof buf)
			return fail(c, "scope: \"%s\" is not an IPv6 address",
			            qp(&q1, host.s, host.n));
		memcpy(buf, host.s, host.n);
		buf[host.n] = '\0';
		if (inet_pton(AF_INET6, buf, &a6) != 1)
			return fail(c, "scope: \"%s\" is not an IPv6 address",
			            qp(&q1, host.s, host.n));
		p = close + 1;
	} else {
		p = rest.s;
		while (p < end && *p != ':' && *p != '/')
			p++;
		host = (struct span){ rest.s, (size_t)(p - rest.s) };
		if (host.n == 0)
			return fail(c, "scope: \"%s\" has no host: write redis://HOST:PORT/NAME",
			            qp(&q1, v.s, v.n));
		if (!host_ok(host))
			return fail(c, "scope: \"%s\" is not a host name or IPv4 address (an IPv6 "
			               "address goes in [brackets])",
			            qp(&q1, host.s, host.n));
	}
	if (p == end || *p != ':')
		return fail(c, "scope: \"%s\" needs a port: write redis://HOST:PORT/NAME",
		            qp(&q1, v.s, v.n));
	port.s = ++p;
	while (p < end && *p != '/')
		p++;
	port.n = (size_t)(p - port.s);
	rc = rlt__parse_count(port.s, port.n, 65535, &portv);
	if (rc == -RLT__E_ZERO || rc == -RLT__E_RANGE)
		return fail(c, "scope: port \"%s\" is not in 1..65535", qp(&q1, port.s, port.n));
	if (rc)
		return fail(c, "scope: port \"%s\" in \"%s\" is not a number",
		            qp(&q1, port.s, port.n), qp(&q2, v.s, v.n));
	if (p == end)
		return fail(c, "scope: \"%s\" needs a NAME after the port: write "
		               "redis://HOST:PORT/NAME",
		            qp(&q1, v.s, v.n));
	name = (struct span){ p + 1, (size_t)(end - p - 1) };
	rc = check_name(c, name, v, r->scope_name);
	if (rc)
		return rc;
	memcpy(r->redis_host, host.s, host.n);
	r->redis_host[host.n] = '\0';
	r->redis_port = (uint16_t)portv;
	r->scope = RLT_SCOPE_REDIS;
	return 0;
}

static int parse_scope(const struct ctx *c, struct span v, struct rlt_rule *r)
{
	struct qbuf q;

	if (span_is(v, "process")) {
		r->scope = RLT_SCOPE_PROCESS;
		return 0;
	}
	if (span_is(v, "connection")) {
		if (r->var == RLT_VAR_CONNS)
			return fail(c, "scope: connection makes no sense for RLT_CONNS, which counts "
			               "the connections themselves (process, shared:NAME or "
			               "redis://HOST:PORT/NAME)");
		r->scope = RLT_SCOPE_CONNECTION;
		return 0;
	}
	if (starts_with(v, "shared:")) {
		struct span name = { v.s + strlen("shared:"), v.n - strlen("shared:") };
		int rc = check_name(c, name, v, r->scope_name);
		if (rc == 0)
			r->scope = RLT_SCOPE_SHARED;
		return rc;
	}
	if (starts_with(v, "redis://"))
		return parse_redis(c, v, r);
	return fail(c, "scope: unknown \"%s\" (process, connection, shared:NAME or "
	               "redis://HOST:PORT/NAME)",
	            qp(&q, v.s, v.n));
}

static int parse_peer(const struct ctx *c, struct span v, struct rlt_rule *r)
{
	const char *slash = memchr(v.s, '/', v.n);
	struct span addr = { v.s, slash ? (size_t)(slash - v.s) : v.n };
	char buf[INET6_ADDRSTRLEN];
	unsigned max, prefix;
	struct qbuf q;

	if (addr.n == 0 || addr.n >= sizeof buf)
		return fail(c, "peer: \"%s\" is not an IPv4 or IPv6 address",
		            qp(&q, addr.s, addr.n));
	memcpy(buf, addr.s, addr.n);
	buf[addr.n] = '\0';
	r->peer_af = memchr(addr.s, ':', addr.n) ? AF_INET6 : AF_INET;
	if (inet_pton(r->peer_af, buf, r->peer_addr) != 1)
		return fail(c, "peer: \"%s\" is not an IPv4 or IPv6 address",
		            qp(&q, addr.s, addr.n));
	max = r->peer_af == AF_INET ? 32 : 128;
	prefix = max;
	if (slash) {
		struct span p = { slash + 1, v.n - addr.n - 1 };
		uint64_t x = 0;
		int rc = span_is(p, "0") ? 0 : rlt__parse_count(p.s, p.n, max, &x);
		if (rc)
			return fail(c, "peer: prefix \"/%s\" is not in 0..%u for %s",
			            qp(&q, p.s, p.n), max, max == 32 ? "IPv4" : "IPv6");
		prefix = (unsigned)x;
	}
	r->peer_prefix = (uint8_t)prefix;
	/* Stored masked, so that matching is a compare of the first bytes and a masked byte. */
	for (unsigned i = 0; i < max / 8; i++) {
		unsigned keep = prefix >= 8 * (i + 1) ? 8 : prefix > 8 * i ? prefix - 8 * i : 0;
		r->peer_addr[i] &= (uint8_t)(0xff00u >> keep);
	}
	return 0;
}

/* One prefix length of key=peer/P4,P6: 1..max. */
static int key_prefix(const struct ctx *c, struct span p, unsigned max, uint8_t *out)
{
	uint64_t x = 0;
	struct qbuf q;

	if (rlt__parse_count(p.s, p.n, max, &x) != 0)
		return fail(c, "key: prefix \"/%s\" is not in 1..%u for %s", qp(&q, p.s, p.n), max,
		            max == 32 ? "IPv4" : "IPv6");
	*out = (uint8_t)x;
	return 0;
}

/* key=peer, peer/P (IPv4 /P, IPv6 /64), peer/P4,P6, or port. */
static int parse_key(const struct ctx *c, struct span v, struct rlt_rule *r)
{
	struct span head = v, p4, p6;
	const char *slash = memchr(v.s, '/', v.n), *comma;
	struct qbuf q;
	int rc;

	if (span_is(v, "port")) {
		r->key = RLT_KEY_PORT;
		return 0;
	}
	if (slash)
		head.n = (size_t)(slash - v.s);
	if (!span_is(head, "peer"))
		return fail(c, "key: unknown \"%s\" (peer, peer/P4, peer/P4,P6, port)",
		            qp(&q, v.s, v.n));
	r->key = RLT_KEY_PEER;
	r->key_prefix4 = 32;
	r->key_prefix6 = 128;
	if (!slash)
		return 0;
	p4 = (struct span){ slash + 1, v.n - head.n - 1 };
	comma = memchr(p4.s, ',', p4.n);
	/* A /24 alone is a guess at a network of one owner: IPv6 hands out /64s to the same. */
	p6 = (struct span){ "64", 2 };
	if (comma) {
		p6 = (struct span){ comma + 1, (size_t)(p4.s + p4.n - comma - 1) };
		p4.n = (size_t)(comma - p4.s);
	}
	rc = key_prefix(c, p4, 32, &r->key_prefix4);
	if (rc == 0)
		rc = key_prefix(c, p6, 128, &r->key_prefix6);
	return rc;
}

static int parse_port(const struct ctx *c, struct span v, struct rlt_rule *r)
{
	const char *dash = memchr(v.s, '-', v.n);
	struct span lo = { v.s, dash ? (size_t)(dash - v.s) : v.n };
	struct span hi = dash ? (struct span){ dash + 1, v.n - lo.n - 1 } : lo;
	uint64_t a, b;
	struct qbuf q1, q2, q3;
	int rc;

	rc = rlt__parse_count(lo.s, lo.n, 65535, &a);
	if (rc == 0)
		rc = rlt__parse_count(hi.s, hi.n, 65535, &b);
	if (rc == -RLT__E_ZERO || rc == -RLT__E_RANGE)
		return fail(c, "port: \"%s\" is not in 1..65535", qp(&q1, v.s, v.n));
	if (rc)
		return fail(c, "port: \"%s\" is not a port or a range N-M", qp(&q1, v.s, v.n));
	if (a > b)
		return fail(c, "port: \"%s\" is an inverted range: write %s-%s",
		            qp(&q1, v.s, v.n), qp(&q2, hi.s, hi.n), qp(&q3, lo.s, lo.n));
	r->port_lo = (uint16_t)a;
	r->port_hi = (uint16_t)b;
	return 0;
}

/* ---------------------------------------------------------------------------------------------
 * One rule
 * ------------------------------------------------------------------------------------------- */

static int next_token(const char **p, const char *end, struct span *t)
{
	const char *s = *p;

	while (s < end && is_blank(*s))
		s++;
	if (s == end)
		return 0;
	t->s = s;
	while (s < end && !is_blank(*s))
		s++;
	t->n = (size_t)(s - t->s);
	*p = s;
	return 1;
}

static int parse_rule(const struct ctx *c, struct rlt_rule *r)
{
	const char *p = c->rule, *end = c->rule + c->rule_len, *peek;
	struct span rate, t, val[K_COUNT];
	int has[K_COUNT] = { 0 };
	uint64_t burst = 0;
	struct rlt_error e;
	struct qbuf q1;
	int rc;

	memset(r, 0, sizeof *r);
	r->var = c->var;
	mask_secrets(c->rule, c->rule_len, r->text, sizeof r->text);
	r->amount_den = 1;
	r->algo = RLT_ALGO_TOKEN;
	r->action = c->var == RLT_VAR_CONNS ? RLT_ACTION_REJECT : RLT_ACTION_DELAY;
	r->max_wait_ns = RLT_NS_NEVER;
	switch (c->var) {
	case RLT_VAR_ACCEPT: r->err = ECONNABORTED; break;
	case RLT_VAR_SEND: r->err = ENOBUFS; break;
	case RLT_VAR_RECV: r->err = EAGAIN; break;
	default: r->err = ECONNREFUSED; break;
	}
	r->scope = RLT_SCOPE_PROCESS;
	r->fallback = RLT_FALLBACK_LOCAL;
	r->port_lo = 0;
	r->port_hi = 65535;
	r->family = RLT_FAMILY_INET;

	next_token(&p, end, &rate); /* the caller made sure the rule is not blank */
	peek = p;
	/* "10 /s" or "10/ s": a rate cut in two by a space, which is worth saying as such. */
	if (next_token(&peek, end, &t) && !memchr(t.s, '=', t.n) &&
	    ((t.s[0] == '/' && !memchr(rate.s, '/', rate.n)) || rate.s[rate.n - 1] == '/'))
		return fail(c, "rate: \"%s\" has a space in it: write the rate as one word, e.g. 10/s",
		            qp(&q1, rate.s, (size_t)(t.s + t.n - rate.s)));
	rc = c->var == RLT_VAR_CONNS ? parse_conns(c, rate, r) : parse_rate(c, rate, r);
	if (rc)
		return rc;

	/* Keys are collected first and read in a fixed order below, since what a value means can
	 * depend on another key (burst on the rate's unit, fallback on the scope). */
	while (next_token(&p, end, &t)) {
		const char *eq = memchr(t.s, '=', t.n);
		struct span k;
		int key;
		if (!eq)
			return fail(c, "\"%s\" is not key=value", qp(&q1, t.s, t.n));
		k = (struct span){ t.s, (size_t)(eq - t.s) };
		if (k.n == 0)
			return fail(c, "\"%s\" has no key before \"=\"", qp(&q1, t.s, t.n));
		key = lookup(k, key_names, K_COUNT);
		if (key < 0)
			return fail(c, "unknown key \"%s\" (algo, burst, action, max-wait, errno, scope, "
			               "fallback, peer, port, family, key, keys)",
			            qp(&q1, k.s, k.n));
		if (has[key])
			return fail(c, "%s is given twice", key_names[key]);
		val[key] = (struct span){ eq + 1, t.n - k.n - 1 };
		if (val[key].n == 0)
			return fail(c, "%s: no value after \"=\"", key_names[key]);
		has[key] = 1;
	}

	if (c->var == RLT_VAR_CONNS && (has[K_ALGO] || has[K_BURST]))
		return fail(c, "%s does not apply: RLT_CONNS limits connections open at once",
		            has[K_ALGO] ? "algo" : "burst");
	if (has[K_ALGO]) {
		int a = -1;
		for (int k = 0; k < RLT_ALGO_COUNT && a < 0; k++)
			if (span_is(val[K_ALGO], rlt_algo_name((enum rlt_algo)k)))
				a = k;
		if (a < 0)
			return fail(c, "algo: unknown \"%s\" (token, leaky, fixed-window, "
			               "sliding-window, sliding-log)",
			            qp(&q1, val[K_ALGO].s, val[K_ALGO].n));
		r->algo = (enum rlt_algo)a;
	}
	if (r->algo == RLT_ALGO_SLIDING_LOG) {
		uint64_t cap;
		if (r->unit == RLT_UNIT_BYTES)
			return fail(c, "algo: sliding-log counts calls and messages, not bytes: use "
			               "sliding-window for a byte rule");
		/* amount > max * den, without overflow: if max * den overflows, amount is smaller. */
		if (!__builtin_mul_overflow(RLT_LOG_MAX_LIMIT, r->amount_den, &cap) &&
		    r->amount_num > cap)
			return fail(c, "algo: sliding-log keeps every %s of a period, at most %llu: "
			               "\"%s\" is more; use sliding-window",
			            r->unit == RLT_UNIT_MSGS ? "message" : "call",
			            (unsigned long long)RLT_LOG_MAX_LIMIT, qp(&q1, rate.s, rate.n));
	}
	if (has[K_BURST]) {
		rc = parse_burst(c, val[K_BURST], r, &burst);
		if (rc)
			return rc;
		/* rlthrottle(7) RULES: a window's count is its limit and burst is ignored. It was checked, but
		 * is not kept, so that the rule says what is in force. */
		if (r->algo != RLT_ALGO_TOKEN && r->algo != RLT_ALGO_LEAKY)
			burst = 0;
		r->burst = burst;
	}
	if (has[K_ACTION]) {
		int a = lookup(val[K_ACTION], action_names, COUNT_OF(action_names));
		if (a < 0)
			return fail(c, "action: unknown \"%s\" (delay, reject, dry-run)",
			            qp(&q1, val[K_ACTION].s, val[K_ACTION].n));
		r->action = (enum rlt_action)a;
	}
	if (has[K_MAX_WAIT]) {
		/* dry-run keeps it: it counts what delay with this max-wait would have done */
		if (r->action == RLT_ACTION_REJECT)
			return fail(c, "max-wait applies only with action=delay (or dry-run): a "
			               "rejected call does not wait");
		rc = parse_max_wait(c, val[K_MAX_WAIT], &r->max_wait_ns);
		if (rc)
			return rc;
	}
	if (has[K_ERRNO]) {
		rc = parse_errno(c, val[K_ERRNO], &r->err);
		if (rc)
			return rc;
	}
	if (has[K_SCOPE]) {
		rc = parse_scope(c, val[K_SCOPE], r);
		if (rc)
			return rc;
		r->scope_given = 1;
	}
	if (has[K_FALLBACK]) {
		int f;
		if (r->scope != RLT_SCOPE_REDIS)
			return fail(c, "fallback applies only to a redis:// scope");
		f = lookup(val[K_FALLBACK], fallback_names, COUNT_OF(fallback_names));
		if (f < 0)
			return fail(c, "fallback: unknown \"%s\" (local, allow, deny)",
			            qp(&q1, val[K_FALLBACK].s, val[K_FALLBACK].n));
		r->fallback = (enum rlt_fallback)f;
	}
	if (has[K_PEER]) {
		rc = parse_peer(c, val[K_PEER], r);
		if (rc)
			return rc;
	}
	if (has[K_PORT]) {
		rc = parse_port(c, val[K_PORT], r);
		if (rc)
			return rc;
	}
	if (has[K_FAMILY]) {
		int f = lookup(val[K_FAMILY], family_names, COUNT_OF(family_names));
		if (f < 0)
			return fail(c, "family: unknown \"%s\" (inet, unix, all)",
			            qp(&q1, val[K_FAMILY].s, val[K_FAMILY].n));
		r->family = (enum rlt_family)f;
	}
	/* A unix socket has no address or port: such a rule would match nothing. */
	if (r->family == RLT_FAMILY_UNIX && (has[K_PEER] || has[K_PORT]))
		return fail(c, "%s does not apply to family=unix: a unix socket has no %s",
		            has[K_PEER] ? "peer" : "port", has[K_PEER] ? "IP address" : "port");

	if (has[K_KEYS] && !has[K_KEY])
		return fail(c, "keys applies only with key=: it bounds how many keys are tracked");
	if (has[K_KEY]) {
		rc = parse_key(c, val[K_KEY], r);
		if (rc)
			return rc;
		r->keys = RLT_KEYS_DEFAULT;
		if (has[K_KEYS]) {
			uint64_t x = 0;
			rc = rlt__parse_count(val[K_KEYS].s, val[K_KEYS].n, RLT_KEYS_MAX, &x);
			if (rc)
				return fail(c, "keys: \"%s\" is not a count in 1..%u",
				            qp(&q1, val[K_KEYS].s, val[K_KEYS].n), RLT_KEYS_MAX);
			r->keys = (uint32_t)x;
		}
		/* One socket has one peer and one port: a key could never split its budget. */
		if (r->scope == RLT_SCOPE_CONNECTION)
			return fail(c, "key does not apply to scope=connection: a connection has one "
			               "peer and one port");
		if (r->family == RLT_FAMILY_UNIX)
			return fail(c, "key does not apply to family=unix: a unix socket has no %s",
			            r->key == RLT_KEY_PORT ? "port" : "IP address");
	}

	if (c->var != RLT_VAR_CONNS) {
		e.msg[0] = '\0';
		rc = rlt_params_init(&r->params, r->algo, r->amount_num, r->amount_den, r->period_ns,
		                     r->burst, r->max_wait_ns, &e);
		if (rc) {
			e.msg[sizeof e.msg - 1] = '\0';
			return fail(c, "\"%s\" with algo=%s: %.160s", qp(&q1, rate.s, rate.n),
			            rlt_algo_name(r->algo), e.msg[0] ? e.msg : "out of range");
		}
	}
	/* rlt_rule_format() promises text that parses back, which must fit a rule's length. */
	rc = rlt_rule_format(r, NULL, 0);
	if (rc < 0 || rc > RLT_RULE_TEXT_MAX)
		return fail(c, "the rule in canonical form would be longer than %d bytes: shorten "
		               "the scope's host or NAME",
		            RLT_RULE_TEXT_MAX);
	return 0;
}

/* ---------------------------------------------------------------------------------------------
 * A variable
 * ------------------------------------------------------------------------------------------- */

int rlt_rules_parse(enum rlt_var var, const char *value, struct rlt_rule *rules, size_t max_rules,
                    size_t *n, struct rlt_error *err)
{
	struct ctx c = { var, value, 0, err };
	size_t len, cap, count = 0;
	const char *p, *end;

	if (n)
		*n = 0;
	if ((unsigned)var >= RLT_VAR_COUNT) {
		if (err)
			snprintf(err->msg, sizeof err->msg, "unknown variable %d", (int)var);
		return -EINVAL;
	}
	if (!value)
		value = c.rule = "";
	if (!rules || !n)
		return fail(&c, "no room for the rules (internal error)");
	len = strnlen(value, RLT_VALUE_MAX + 1);
	c.rule_len = len;
	if (len > RLT_VALUE_MAX)
		return fail(&c, "is too long (more than %d bytes)", RLT_VALUE_MAX);

	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)value[i];
		const char *rs, *re;
		size_t rn;
		if ((b >= 0x20 && b < 0x7f) || b == '\t')
			continue;
		/* Quote the rule that holds the byte, and say where in it. */
		rs = value + i;
		while (rs > value && rs[-1] != ';')
			rs--;
		re = value + i;
		while (re < value + len && *re != ';')
			re++;
		rn = (size_t)(re - rs);
		trim(&rs, &rn);
		c.rule = rs;
		c.rule_len = rn;
		return fail(&c, "byte \\x%02x at position %zu is not printable ASCII", b,
		            (size_t)(value + i - rs) + 1);
	}

	cap = max_rules < RLT_MAX_RULES_PER_VAR ? max_rules : RLT_MAX_RULES_PER_VAR;
	p = value;
	end = value + len;
	for (;;) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *rs = p;
		size_t rn = (size_t)((semi ? semi : end) - p);
		struct ctx rc_ctx = { var, NULL, 0, err };
		int rc;

		trim(&rs, &rn);
		if (rn == 0) {
			/* Blanks between, before or after the ';' are no rule, wherever they are:
			 * "1MiB/s;", ";1MiB/s" and "$A;$B" with A empty all mean the one rule. */
			if (!semi)
				break;
			p = semi + 1;
			continue;
		}
		if (count >= cap)
			return fail(&c, "has more than %zu rules (a variable holds at most %d)", cap,
			            RLT_MAX_RULES_PER_VAR);
		rc_ctx.rule = rs;
		rc_ctx.rule_len = rn;
		if (rn > RLT_RULE_TEXT_MAX)
			return fail(&rc_ctx, "rule is too long (%zu bytes, at most %d)", rn,
			            RLT_RULE_TEXT_MAX);
		rc = parse_rule(&rc_ctx, &rules[count]);
		if (rc)
			return rc;
		count++;
		if (!semi)
			break;
		p = semi + 1;
	}
	if (count == 0)
		return fail(&c, "is empty");
	*n = count;
	return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Canonical form
 * ------------------------------------------------------------------------------------------- */

struct out {
	char *buf;
	size_t len;
	size_t pos; /* the length needed so far, which may pass len */
	int bad;    /* something could not be printed so that it parses back */
};

/* A byte of a redis:// USER written as it is in the canonical form (others: %XX). */
static int auth_plain(char b)
{
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ||
	       b == '.' || b == '_' || b == '-' || b == '~';
}

__attribute__((format(printf, 2, 3))) static void emit(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	if (o->pos < o->len)
		k = vsnprintf(o->buf + o->pos, o->len - o->pos, fmt, ap);
	else
		k = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (k < 0)
		o->bad = 1;
	else
		o->pos += (size_t)k;
}

static const char *name_or(const char *const *names, size_t count, unsigned i)
{
	return i < count && names[i] ? names[i] : "?";
}

int rlt_rule_format(const struct rlt_rule *r, char *buf, size_t len)
{
	struct out o = { buf, buf ? len : 0, 0, 0 };
	char tmp[64];
	const char *en;

	if (o.len > 0)
		buf[0] = '\0';
	if (r->unit == RLT_UNIT_CONNS || r->var == RLT_VAR_CONNS) {
		emit(&o, "%" PRIu64, r->amount_num);
	} else {
		if (rlt__format_decimal(tmp, sizeof tmp, r->amount_num, r->amount_den) < 0)
			o.bad = 1;
		else
			emit(&o, "%s%s", tmp, unit_suffix(r->unit));
		if (rlt__format_period(tmp, sizeof tmp, r->period_ns) < 0)
			o.bad = 1;
		else
			emit(&o, "/%s", tmp);
		emit(&o, " algo=%s", rlt_algo_name(r->algo));
		/* The burst in force, which the engine may have defaulted; windows have none. */
		if (r->algo == RLT_ALGO_TOKEN || r->algo == RLT_ALGO_LEAKY)
			emit(&o, " burst=%" PRIu64 "%s", r->params.burst, unit_suffix(r->unit));
	}
	emit(&o, " action=%s", name_or(action_names, COUNT_OF(action_names), (unsigned)r->action));
	if (r->max_wait_ns != RLT_NS_NEVER) {
		rlt__format_duration(tmp, sizeof tmp, r->max_wait_ns);
		emit(&o, " max-wait=%s", tmp);
	}
	en = rlt_errno_name(r->err);
	if (en)
		emit(&o, " errno=%s", en);
	else
		o.bad = 1;
	switch (r->scope) {
	case RLT_SCOPE_PROCESS: emit(&o, " scope=process"); break;
	case RLT_SCOPE_CONNECTION: emit(&o, " scope=connection"); break;
	case RLT_SCOPE_SHARED: emit(&o, " scope=shared:%s", r->scope_name); break;
	case RLT_SCOPE_REDIS:
		emit(&o, " scope=redis://");
		if (r->redis_pass[0]) {
			/* the password never leaves the rule: the canonical form is for people */
			for (const char *u = r->redis_user; *u; u++)
				emit(&o, auth_plain(*u) ? "%c" : "%%%02X", (unsigned char)*u);
			emit(&o, ":***@");
		}
		emit(&o, strchr(r->redis_host, ':') ? "[%s]:%u/%s" : "%s:%u/%s", r->redis_host,
		     (unsigned)r->redis_port, r->scope_name);
		emit(&o, " fallback=%s",
		     name_or(fallback_names, COUNT_OF(fallback_names), (unsigned)r->fallback));
		break;
	default: o.bad = 1; break;
	}
	if (r->peer_af == AF_INET || r->peer_af == AF_INET6) {
		if (!inet_ntop(r->peer_af, r->peer_addr, tmp, sizeof tmp))
			o.bad = 1;
		else
			emit(&o, " peer=%s/%u", tmp, (unsigned)r->peer_prefix);
	}
	if (r->port_lo != 0 || r->port_hi != 65535) {
		if (r->port_lo == r->port_hi)
			emit(&o, " port=%u", (unsigned)r->port_lo);
		else
			emit(&o, " port=%u-%u", (unsigned)r->port_lo, (unsigned)r->port_hi);
	}
	emit(&o, " family=%s", name_or(family_names, COUNT_OF(family_names), (unsigned)r->family));
	if (r->key == RLT_KEY_PEER) {
		if (r->key_prefix4 == 32 && r->key_prefix6 == 128)
			emit(&o, " key=peer");
		else
			emit(&o, " key=peer/%u,%u", (unsigned)r->key_prefix4, (unsigned)r->key_prefix6);
	} else if (r->key == RLT_KEY_PORT) {
		emit(&o, " key=port");
	}
	if (r->key != RLT_KEY_NONE)
		emit(&o, " keys=%u", (unsigned)r->keys);
	if (o.bad || o.pos > INT32_MAX) {
		if (o.len > 0)
			buf[0] = '\0';
		return -1;
	}
	return (int)o.pos;
}
