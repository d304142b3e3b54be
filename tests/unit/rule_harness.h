/* rule_harness.h: what the rule grammar's tests share (test_rule_parse.c, test_rule_rates.c,
 * test_rule_format.c, test_rule_errors.c): short names for the variables, parsing one rule that
 * must be valid, and the round trip through the canonical form. */
#ifndef RLT_RULE_HARNESS_H
#define RLT_RULE_HARNESS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rlthrottle.h"
#include "testutil.h"

#define CONNECT RLT_VAR_CONNECT
#define ACCEPT RLT_VAR_ACCEPT
#define SEND RLT_VAR_SEND
#define RECV RLT_VAR_RECV
#define CONNS RLT_VAR_CONNS

#define NS_S 1000000000ull

/* Parses one variable that must hold exactly one valid rule. */
static inline struct rlt_rule parse1(enum rlt_var v, const char *value)
{
	struct rlt_rule r[RLT_MAX_RULES_PER_VAR];
	struct rlt_error e = { "" };
	size_t n = 99;
	int rc = rlt_rules_parse(v, value, r, RLT_MAX_RULES_PER_VAR, &n, &e);

	if (rc != 0 || n != 1)
		fail_msg("%s=\"%s\": rc %d, n %zu: %s", rlt_var_name(v), value, rc, n, e.msg);
	return r[0];
}

static inline void format(const struct rlt_rule *r, char *buf, size_t len)
{
	int k = rlt_rule_format(r, buf, len);
	assert_true(k > 0 && (size_t)k < len);
	assert_int_equal(strlen(buf), (size_t)k);
}

/* r's canonical form holds PART (HAS 1) or does not (HAS 0). */
static inline void assert_canonical(const struct rlt_rule *r, const char *part, int has)
{
	char buf[1024];

	format(r, buf, sizeof buf);
	if (!strstr(buf, part) != !has)
		print_message("canonical form \"%s\" %s \"%s\"\n", buf, has ? "lacks" : "holds", part);
	assert_int_equal(strstr(buf, part) != NULL, has);
}

/* Two rules are the same rule: every field that decides what happens, and the canonical text.
 * r->burst may differ (default vs. written out); the burst in force is params.burst. */
static inline void assert_same_rule(const struct rlt_rule *a, const struct rlt_rule *b)
{
	char fa[1024], fb[1024];

	assert_int_equal(a->var, b->var);
	assert_int_equal(a->unit, b->unit);
	assert_true(a->amount_num == b->amount_num);
	assert_true(a->amount_den == b->amount_den);
	assert_true(a->period_ns == b->period_ns);
	assert_int_equal(a->algo, b->algo);
	assert_int_equal(a->action, b->action);
	assert_true(a->max_wait_ns == b->max_wait_ns);
	assert_int_equal(a->err, b->err);
	assert_int_equal(a->scope, b->scope);
	assert_string_equal(a->scope_name, b->scope_name);
	assert_string_equal(a->redis_host, b->redis_host);
	assert_int_equal(a->redis_port, b->redis_port);
	assert_int_equal(a->fallback, b->fallback);
	assert_int_equal(a->peer_af, b->peer_af);
	assert_memory_equal(a->peer_addr, b->peer_addr, sizeof a->peer_addr);
	assert_int_equal(a->peer_prefix, b->peer_prefix);
	assert_int_equal(a->port_lo, b->port_lo);
	assert_int_equal(a->port_hi, b->port_hi);
	assert_int_equal(a->family, b->family);
	assert_int_equal(a->key, b->key);
	assert_int_equal(a->key_prefix4, b->key_prefix4);
	assert_int_equal(a->key_prefix6, b->key_prefix6);
	assert_int_equal(a->keys, b->keys);
	assert_int_equal(a->params.algo, b->params.algo);
	assert_true(a->params.rate_num == b->params.rate_num);
	assert_true(a->params.rate_den_ns == b->params.rate_den_ns);
	assert_true(a->params.burst == b->params.burst);
	assert_true(a->params.max_wait_ns == b->params.max_wait_ns);
	assert_true(a->params.ticks_per_unit == b->params.ticks_per_unit);
	assert_true(a->params.tick_num == b->params.tick_num);
	assert_true(a->params.tick_den == b->params.tick_den);
	assert_true(a->params.tau == b->params.tau);
	assert_true(a->params.limit == b->params.limit);
	assert_true(a->params.window_ns == b->params.window_ns);
	assert_true(a->params.sub_ns == b->params.sub_ns);
	format(a, fa, sizeof fa);
	format(b, fb, sizeof fb);
	assert_string_equal(fa, fb);
}

/* Formats r, parses that back, and checks it is the same rule. */
static inline void assert_round_trip(const struct rlt_rule *r)
{
	char buf[1024];
	struct rlt_rule back;

	format(r, buf, sizeof buf);
	back = parse1(r->var, buf);
	assert_same_rule(r, &back);
}

/* parse1, and the round trip through the canonical form. */
static inline struct rlt_rule parse_rt(enum rlt_var v, const char *value)
{
	struct rlt_rule r = parse1(v, value);

	assert_round_trip(&r);
	return r;
}

#endif
