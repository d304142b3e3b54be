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
#include "rule_text.h"
#include "rule_parse.h"
#include "rule_values.h"
#include "units.h"

static const char *const var_names[RLT_VAR_COUNT] = {
	[RLT_VAR_CONNECT] = "RLT_CONNECT",
	[RLT_VAR_ACCEPT] = "RLT_ACCEPT",
	[RLT_VAR_SEND] = "RLT_SEND",
	[RLT_VAR_RECV] = "RLT_RECV",
	[RLT_VAR_CONNS] = "RLT_CONNS",
};

/* Used in messages: "connect rules count calls". */
const char *const rlt__rule_var_short[RLT_VAR_COUNT] = {
	[RLT_VAR_CONNECT] = "connect",
	[RLT_VAR_ACCEPT] = "accept",
	[RLT_VAR_SEND] = "send",
	[RLT_VAR_RECV] = "recv",
	[RLT_VAR_CONNS] = "conns",
};

const char *const rlt__rule_action_names[RLT_RULE_ACTIONS] = { [RLT_ACTION_DELAY] = "delay",
	                                    [RLT_ACTION_REJECT] = "reject",
	                                    [RLT_ACTION_DRY_RUN] = "dry-run" };
const char *const rlt__rule_fallback_names[RLT_RULE_FALLBACKS] = { [RLT_FALLBACK_LOCAL] = "local",
	                                      [RLT_FALLBACK_ALLOW] = "allow",
	                                      [RLT_FALLBACK_DENY] = "deny" };
const char *const rlt__rule_family_names[RLT_RULE_FAMILIES] = { [RLT_FAMILY_INET] = "inet",
	                                    [RLT_FAMILY_UNIX] = "unix",
	                                    [RLT_FAMILY_ALL] = "all" };


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
			            rlt__rule_var_short[c->var],
			            c->var == RLT_VAR_CONNECT ? "calls" : "connections",
			            qp(&q1, num.s, num.n), qp(&q2, period.s, period.n),
			            qp(&q3, amount.s, amount.n), q2.s);
		if (unit.n > 0)
			return fail(c, "rate: unknown unit \"%s\" in \"%s\" (%s rules count calls: no "
			               "unit)",
			            qp(&q1, unit.s, unit.n), qp(&q2, amount.s, amount.n),
			            rlt__rule_var_short[c->var]);
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

/* max-wait=: a duration. */
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

/* ---------------------------------------------------------------------------------------------
 * One rule
 * ------------------------------------------------------------------------------------------- */

/* A rule's fields before any of its words is read: each key's default for the variable. */
static void rule_defaults(const struct ctx *c, struct rlt_rule *r)
{
	memset(r, 0, sizeof *r);
	r->var = c->var;
	rlt__rule_mask_secrets(c->rule, c->rule_len, r->text, sizeof r->text);
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
}

/* The rule's first word, its rate (RLT_CONNS: its count), into *rate and r. */
static int read_rate(const struct ctx *c, const char **p, const char *end, struct span *rate,
                     struct rlt_rule *r)
{
	const char *peek;
	struct span t;
	struct qbuf q1;

	next_token(p, end, rate); /* the caller made sure the rule is not blank */
	peek = *p;
	/* "10 /s" or "10/ s": a rate cut in two by a space, which is worth saying as such. */
	if (next_token(&peek, end, &t) && !memchr(t.s, '=', t.n) &&
	    ((t.s[0] == '/' && !memchr(rate->s, '/', rate->n)) || rate->s[rate->n - 1] == '/'))
		return fail(c, "rate: \"%s\" has a space in it: write the rate as one word, e.g. 10/s",
		            qp(&q1, rate->s, (size_t)(t.s + t.n - rate->s)));
	return c->var == RLT_VAR_CONNS ? parse_conns(c, *rate, r) : parse_rate(c, *rate, r);
}

/* The key=value words after the rate, each key at most once. */
struct keyvals {
	struct span val[K_COUNT];
	int has[K_COUNT];
};

/* Keys are collected first and read in a fixed order after, since what a value means can depend
 * on another key (burst on the rate's unit, fallback on the scope). */
static int collect_keys(const struct ctx *c, const char *p, const char *end, struct keyvals *kv)
{
	struct span t;
	struct qbuf q1;

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
		if (kv->has[key])
			return fail(c, "%s is given twice", key_names[key]);
		kv->val[key] = (struct span){ eq + 1, t.n - k.n - 1 };
		if (kv->val[key].n == 0)
			return fail(c, "%s: no value after \"=\"", key_names[key]);
		kv->has[key] = 1;
	}
	return 0;
}

/* The value of `key`, one of names (the error lists `choices`), into *out; *out as it was when
 * the rule has no such key. */
static int pick_name(const struct ctx *c, const struct keyvals *kv, int key,
                     const char *const *names, size_t count, const char *choices, int *out)
{
	struct qbuf q1;
	int v;

	if (!kv->has[key])
		return 0;
	v = lookup(kv->val[key], names, count);
	if (v < 0)
		return fail(c, "%s: unknown \"%s\" (%s)", key_names[key],
		            qp(&q1, kv->val[key].s, kv->val[key].n), choices);
	*out = v;
	return 0;
}

/* algo= and burst=: how the rate is enforced. */
static int apply_algo(const struct ctx *c, const struct keyvals *kv, struct span rate,
                      struct rlt_rule *r)
{
	struct qbuf q1;
	uint64_t burst = 0;
	int rc;

	if (c->var == RLT_VAR_CONNS && (kv->has[K_ALGO] || kv->has[K_BURST]))
		return fail(c, "%s does not apply: RLT_CONNS limits connections open at once",
		            kv->has[K_ALGO] ? "algo" : "burst");
	if (kv->has[K_ALGO]) {
		int a = -1;
		for (int k = 0; k < RLT_ALGO_COUNT && a < 0; k++)
			if (span_is(kv->val[K_ALGO], rlt_algo_name((enum rlt_algo)k)))
				a = k;
		if (a < 0)
			return fail(c, "algo: unknown \"%s\" (token, leaky, fixed-window, "
			               "sliding-window, sliding-log)",
			            qp(&q1, kv->val[K_ALGO].s, kv->val[K_ALGO].n));
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
	if (kv->has[K_BURST]) {
		rc = rlt__rule_burst(c, kv->val[K_BURST], r, &burst);
		if (rc)
			return rc;
		/* rlthrottle(7) RULES: a window's count is its limit and burst is ignored. It was checked, but
		 * is not kept, so that the rule says what is in force. */
		if (r->algo != RLT_ALGO_TOKEN && r->algo != RLT_ALGO_LEAKY)
			burst = 0;
		r->burst = burst;
	}
	return 0;
}

/* action=, max-wait=, errno=: what a call that does not conform gets. */
static int apply_action(const struct ctx *c, const struct keyvals *kv, struct rlt_rule *r)
{
	int a = (int)r->action;
	int rc;

	rc = pick_name(c, kv, K_ACTION, rlt__rule_action_names, COUNT_OF(rlt__rule_action_names),
	               "delay, reject, dry-run", &a);
	if (rc)
		return rc;
	r->action = (enum rlt_action)a;
	if (kv->has[K_MAX_WAIT]) {
		/* dry-run keeps it: it counts what delay with this max-wait would have done */
		if (r->action == RLT_ACTION_REJECT)
			return fail(c, "max-wait applies only with action=delay (or dry-run): a "
			               "rejected call does not wait");
		rc = parse_max_wait(c, kv->val[K_MAX_WAIT], &r->max_wait_ns);
		if (rc)
			return rc;
	}
	if (kv->has[K_ERRNO])
		return rlt__rule_errno(c, kv->val[K_ERRNO], &r->err);
	return 0;
}

/* scope= and fallback=: where the budget lives. */
static int apply_scope(const struct ctx *c, const struct keyvals *kv, struct rlt_rule *r)
{
	int rc;

	if (kv->has[K_SCOPE]) {
		rc = rlt__rule_scope(c, kv->val[K_SCOPE], r);
		if (rc)
			return rc;
		r->scope_given = 1;
	}
	if (kv->has[K_FALLBACK]) {
		int f = 0;
		if (r->scope != RLT_SCOPE_REDIS)
			return fail(c, "fallback applies only to a redis:// scope");
		rc = pick_name(c, kv, K_FALLBACK, rlt__rule_fallback_names, COUNT_OF(rlt__rule_fallback_names),
		               "local, allow, deny", &f);
		if (rc)
			return rc;
		r->fallback = (enum rlt_fallback)f;
	}
	return 0;
}

/* peer=, port=, family=: which calls the rule counts. */
static int apply_filters(const struct ctx *c, const struct keyvals *kv, struct rlt_rule *r)
{
	int f = (int)r->family;
	int rc;

	if (kv->has[K_PEER]) {
		rc = rlt__rule_peer(c, kv->val[K_PEER], r);
		if (rc)
			return rc;
	}
	if (kv->has[K_PORT]) {
		rc = rlt__rule_port(c, kv->val[K_PORT], r);
		if (rc)
			return rc;
	}
	rc = pick_name(c, kv, K_FAMILY, rlt__rule_family_names, COUNT_OF(rlt__rule_family_names), "inet, unix, all", &f);
	if (rc)
		return rc;
	r->family = (enum rlt_family)f;
	/* A unix socket has no address or port: such a rule would match nothing. */
	if (r->family == RLT_FAMILY_UNIX && (kv->has[K_PEER] || kv->has[K_PORT]))
		return fail(c, "%s does not apply to family=unix: a unix socket has no %s",
		            kv->has[K_PEER] ? "peer" : "port", kv->has[K_PEER] ? "IP address" : "port");
	return 0;
}

/* key= and keys=: one budget per key value. */
static int apply_key(const struct ctx *c, const struct keyvals *kv, struct rlt_rule *r)
{
	struct qbuf q1;
	int rc;

	if (kv->has[K_KEYS] && !kv->has[K_KEY])
		return fail(c, "keys applies only with key=: it bounds how many keys are tracked");
	if (!kv->has[K_KEY])
		return 0;
	rc = rlt__rule_key(c, kv->val[K_KEY], r);
	if (rc)
		return rc;
	r->keys = RLT_KEYS_DEFAULT;
	if (kv->has[K_KEYS]) {
		uint64_t x = 0;
		rc = rlt__parse_count(kv->val[K_KEYS].s, kv->val[K_KEYS].n, RLT_KEYS_MAX, &x);
		if (rc)
			return fail(c, "keys: \"%s\" is not a count in 1..%u",
			            qp(&q1, kv->val[K_KEYS].s, kv->val[K_KEYS].n), RLT_KEYS_MAX);
		r->keys = (uint32_t)x;
	}
	/* One socket has one peer and one port: a key could never split its budget. */
	if (r->scope == RLT_SCOPE_CONNECTION)
		return fail(c, "key does not apply to scope=connection: a connection has one "
		               "peer and one port");
	if (r->family == RLT_FAMILY_UNIX)
		return fail(c, "key does not apply to family=unix: a unix socket has no %s",
		            r->key == RLT_KEY_PORT ? "port" : "IP address");
	return 0;
}

/* The engine's params from the rule, and the canonical form's length checked. */
static int finish_rule(const struct ctx *c, struct span rate, struct rlt_rule *r)
{
	struct rlt_error e;
	struct qbuf q1;
	int rc;

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

/* One rule: its rate, then its keys, each read in the order the others' meaning needs. */
static int parse_rule(const struct ctx *c, struct rlt_rule *r)
{
	const char *p = c->rule, *end = c->rule + c->rule_len;
	struct keyvals kv = { .has = { 0 } };
	struct span rate = { NULL, 0 };
	int rc;

	rule_defaults(c, r);
	rc = read_rate(c, &p, end, &rate, r);
	if (!rc)
		rc = collect_keys(c, p, end, &kv);
	if (!rc)
		rc = apply_algo(c, &kv, rate, r);
	if (!rc)
		rc = apply_action(c, &kv, r);
	if (!rc)
		rc = apply_scope(c, &kv, r);
	if (!rc)
		rc = apply_filters(c, &kv, r);
	if (!rc)
		rc = apply_key(c, &kv, r);
	return rc ? rc : finish_rule(c, rate, r);
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
	struct span part;

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
	while (next_part(&p, end, &part)) {
		struct ctx rc_ctx = { var, part.s, part.n, err };
		int rc;

		/* Blanks between, before or after the ';' are no rule, wherever they are:
		 * "1MiB/s;", ";1MiB/s" and "$A;$B" with A empty all mean the one rule. */
		if (part.n == 0)
			continue;
		if (count >= cap)
			return fail(&c, "has more than %zu rules (a variable holds at most %d)", cap,
			            RLT_MAX_RULES_PER_VAR);
		if (part.n > RLT_RULE_TEXT_MAX)
			return fail(&rc_ctx, "rule is too long (%zu bytes, at most %d)", part.n,
			            RLT_RULE_TEXT_MAX);
		rc = parse_rule(&rc_ctx, &rules[count]);
		if (rc)
			return rc;
		count++;
	}
	if (count == 0)
		return fail(&c, "is empty");
	*n = count;
	return 0;
}
