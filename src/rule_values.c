/*
 * rule_values.c: the values of a rule's keys (rlthrottle(7) RULES): burst, errno,
 * scope (a shared NAME, a redis:// address with its credentials), peer, key and its prefixes,
 * port. Each accepts exactly what the page describes or fails with a message that quotes the
 * wrong part (rule_parse.h); no allocation, no state, as the rest of the grammar.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "rule_parse.h"
#include "rule_values.h"
#include "units.h"

int rlt__rule_burst(const struct ctx *c, struct span v, const struct rlt_rule *r,
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
		            qp(&q1, v.s, v.n), rlt__rule_var_short[c->var]);
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

int rlt__rule_errno(const struct ctx *c, struct span v, int *e)
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

int rlt__rule_scope(const struct ctx *c, struct span v, struct rlt_rule *r)
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

int rlt__rule_peer(const struct ctx *c, struct span v, struct rlt_rule *r)
{
	const char *bad;
	size_t bad_n;
	struct qbuf q;
	char msg[RLT__PEER_MSG_MAX];
	int rc = rlt__parse_peer(v.s, v.n, &r->peer_af, r->peer_addr, &r->peer_prefix,
	                         &bad, &bad_n);

	if (rc == 0)
		return 0;
	rlt__peer_refusal(msg, sizeof msg, rc, r->peer_af, qp(&q, bad, bad_n));
	return fail(c, "%s", msg);
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
int rlt__rule_key(const struct ctx *c, struct span v, struct rlt_rule *r)
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

int rlt__rule_port(const struct ctx *c, struct span v, struct rlt_rule *r)
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
