/*
 * rule_message.c: the grammar's messages (rule_message.h): VAR="rule": detail in one line, the
 * parts it quotes escaped and cut, a redis:// password never shown.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rlthrottle.h"
#include "rule_message.h"

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

size_t rlt__rule_mask_secrets(const char *s, size_t n, char *out, size_t cap)
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

const char *rlt__rule_qp(struct qbuf *q, const char *s, size_t n)
{
	char masked[RLT_VALUE_MAX + 1];

	quote(q->s, PART_MAX, masked, rlt__rule_mask_secrets(s, n, masked, sizeof masked));
	return q->s;
}

int rlt__rule_vfail(const struct ctx *c, const char *fmt, va_list ap)
{
	char detail[DETAIL_MAX], rule[sizeof c->err->msg], masked[RLT_VALUE_MAX + 1];
	const char *name = rlt_var_name(c->var);
	size_t fixed, room, nl, dl, rl;
	char *m;

	if (!c->err)
		return -EINVAL;
	vsnprintf(detail, sizeof detail, fmt, ap);
	nl = strlen(name);
	dl = strlen(detail);
	/* detail is under DETAIL_MAX and name is short: the fixed part always fits. */
	fixed = nl + strlen("=\"\": ") + dl;
	room = sizeof c->err->msg - 1 - fixed;
	rl = quote(rule, room, masked, rlt__rule_mask_secrets(c->rule, c->rule_len, masked, sizeof masked));
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
