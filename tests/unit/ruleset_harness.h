/* ruleset_harness.h: the ruleset the tests of what runs on one share (charge, conns, pacing,
 * ready, policy, publish, rule_set): built from one rule text per variable, as the environment
 * gives them, and a budget moved by hand at a fake time. */
#ifndef RLT_RULESET_HARNESS_H
#define RLT_RULESET_HARNESS_H

#include <string.h>

#include "testutil.h"
#include "policy.h"

static struct rlt__ruleset rs;

/* Builds rs from V (one text per variable, NULL for unset), with stats counted or not. */
static inline void rs_build(const char *const v[RLT_VAR_COUNT], int stats_on)
{
	struct rlt_error err;

	memset(&rs, 0, sizeof rs);
	rs.stats_on = stats_on;
	if (rlt__ruleset_build(&rs, v, 0, NULL, NULL, &err) != 0)
		fail_msg("build: %s", err.msg);
}

/* Takes UNITS of rule I of VAR at fake time NOW (GO or WAIT: a reservation either way). */
static inline void rs_take(enum rlt_var var, unsigned i, rlt_ns_t now, uint64_t units)
{
	struct rlt__rt_rule *r = &rs.rules[var][i];
	rlt_ns_t at;

	assert_int_not_equal(rlt_decide(&r->rule.params, r->v0.state, now, units, RLT_MODE_RESERVE, &at),
	                     RLT_DENY);
}

#endif
