/*
 * rule_text.h: the grammar's messages (rule_text.c). A bad rule fails with one line that names
 * the variable, quotes the rule and quotes the wrong part (rule_parse.c, rule_values.c).
 */
#ifndef RLT_RULE_TEXT_H
#define RLT_RULE_TEXT_H

#include <stdarg.h>
#include <stddef.h>

#include "rlthrottle.h"

/* A quoted part inside a message is cut to this many bytes, so that the message always has
 * room for the rule itself. */
#define PART_MAX 64
#define DETAIL_MAX 320

struct qbuf {
	char s[PART_MAX + 1];
};

/* What a message quotes: the variable and the rule (or the whole value). */
struct ctx {
	enum rlt_var var;
	const char *rule;
	size_t rule_len;
	struct rlt_error *err;
};

/*
 * Copies s[0..n) into out (at most cap - 1 bytes and a NUL) with the password of every
 * redis://USER:PASSWORD@ replaced by "***" (the whole USER part when it has no ':', which may be
 * a password written without one): no message, stats or listing may show it. The userinfo ends
 * at the last '@' before a blank or ';' (a NAME or host has no '@'). Returns the length.
 */
size_t rlt__rule_mask_secrets(const char *s, size_t n, char *out, size_t cap);

/* Fills err with VAR="rule": detail and returns -EINVAL. The rule's quote gets whatever room
 * the detail leaves, so the message always fits and the detail is never cut. */
int rlt__rule_vfail(const struct ctx *c, const char *fmt, va_list ap);
__attribute__((format(printf, 2, 3))) static inline int fail(const struct ctx *c,
                                                            const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = rlt__rule_vfail(c, fmt, ap);
	va_end(ap);
	return rc;
}

/* s[0..n) as a message quotes it (in q): secrets masked, escaped, cut at PART_MAX. */
const char *rlt__rule_qp(struct qbuf *q, const char *s, size_t n);
static inline const char *qp(struct qbuf *q, const char *s, size_t n)
{
	return rlt__rule_qp(q, s, n);
}

#endif
