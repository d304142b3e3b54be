/*
 * rule_parse.h: what the grammar's files share (rule_parse.c: a variable, one rule, the rate;
 * rule_values.c: the values of the keys; rule_text.c: the messages and the canonical form).
 * Not for the rest of src/: the grammar's API is include/rlthrottle.h (rlt_rules_parse,
 * rlt_rule_format).
 */
#ifndef RLT_RULE_PARSE_H
#define RLT_RULE_PARSE_H

#include <stddef.h>
#include <string.h>

#include "rlthrottle.h"
#include "rule_text.h"
#include "span.h"

static inline const char *unit_suffix(enum rlt_unit u)
{
	return u == RLT_UNIT_BYTES ? "B" : u == RLT_UNIT_MSGS ? "msg" : "";
}

static inline const char *unit_words(enum rlt_unit u)
{
	return u == RLT_UNIT_BYTES ? "bytes" : u == RLT_UNIT_MSGS ? "messages" : "calls";
}

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The names of action=, fallback= and family= values, by their enum (rule_parse.c): what the
 * grammar reads and the canonical form (rule_text.c) writes. */
#define RLT_RULE_ACTIONS (RLT_ACTION_DRY_RUN + 1)
#define RLT_RULE_FALLBACKS (RLT_FALLBACK_DENY + 1)
#define RLT_RULE_FAMILIES (RLT_FAMILY_ALL + 1)
extern const char *const rlt__rule_action_names[RLT_RULE_ACTIONS];
extern const char *const rlt__rule_fallback_names[RLT_RULE_FALLBACKS];
extern const char *const rlt__rule_family_names[RLT_RULE_FAMILIES];

/* Each variable as messages name it: "connect rules count calls". */
extern const char *const rlt__rule_var_short[RLT_VAR_COUNT];

#endif
