/*
 * rule_values.h: the values of a rule's keys, read into the rule (rule_values.c). Each returns 0
 * or fails as rule_text.h's fail (-EINVAL, the message in c->err).
 */
#ifndef RLT_RULE_VALUES_H
#define RLT_RULE_VALUES_H

#include <stdint.h>

#include "rlthrottle.h"
#include "rule_parse.h"

/* burst=: in the rate's unit. */
int rlt__rule_burst(const struct ctx *c, struct span v, const struct rlt_rule *r,
                    uint64_t *burst);
/* errno=: a name (errno_names.c) or a number. */
int rlt__rule_errno(const struct ctx *c, struct span v, int *e);
/* scope=: process, connection, shared:NAME, redis://[USER:PASS@]HOST:PORT/NAME. */
int rlt__rule_scope(const struct ctx *c, struct span v, struct rlt_rule *r);
/* peer=: an address or a network (ADDR/PREFIX). */
int rlt__rule_peer(const struct ctx *c, struct span v, struct rlt_rule *r);
/* key=: the peer (with its prefixes) or the port. */
int rlt__rule_key(const struct ctx *c, struct span v, struct rlt_rule *r);
/* port=: a port or a range. */
int rlt__rule_port(const struct ctx *c, struct span v, struct rlt_rule *r);

#endif
