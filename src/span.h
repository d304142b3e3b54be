/*
 * span.h: a piece of a variable's value, and the words of a grammar (the rules, rule_parse.c
 * and rule_values.c; the network conditions, net_parse.c): blanks are spaces and tabs.
 */
#ifndef RLT_SPAN_H
#define RLT_SPAN_H

#include <stddef.h>
#include <string.h>

struct span {
	const char *s;
	size_t n;
};

static inline int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static inline int span_is(struct span t, const char *word)
{
	return strlen(word) == t.n && memcmp(word, t.s, t.n) == 0;
}

static inline int starts_with(struct span t, const char *prefix)
{
	size_t k = strlen(prefix);
	return t.n >= k && memcmp(t.s, prefix, k) == 0;
}

/* Index of t in names[0..count), or -1. */
static inline int lookup(struct span t, const char *const *names, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (names[i] && span_is(t, names[i]))
			return (int)i;
	return -1;
}

static inline void trim(const char **s, size_t *n)
{
	while (*n > 0 && is_blank((*s)[0])) {
		(*s)++;
		(*n)--;
	}
	while (*n > 0 && is_blank((*s)[*n - 1]))
		(*n)--;
}

/* The next ';'-separated part of *p..end into t, trimmed (empty where it is only blanks), *p
 * moved past its ';'; 0 when the last part is taken (*p is then NULL). */
static inline int next_part(const char **p, const char *end, struct span *t)
{
	const char *semi;

	if (!*p)
		return 0;
	semi = memchr(*p, ';', (size_t)(end - *p));
	t->s = *p;
	t->n = (size_t)((semi ? semi : end) - *p);
	trim(&t->s, &t->n);
	*p = semi ? semi + 1 : NULL;
	return 1;
}

/* The next blank-delimited word of *p..end into t, *p moved past it; 0 when none is left. */
static inline int next_token(const char **p, const char *end, struct span *t)
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

#endif
