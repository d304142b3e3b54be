/*
 * rule_text.c: a rule as people read it. The grammar's messages (rule_text.h): VAR="rule":
 * detail in one line, the parts it quotes escaped and cut; and the canonical form
 * (rlt_rule_format, rlthrottle.h), which parses to the same rule. A redis:// password never
 * leaves the rule in either.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "rlthrottle.h"
#include "rule_parse.h"
#include "rule_text.h"
#include "units.h"

/* ----- the messages ----- */

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

/* ----- the canonical form ----- */

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
	emit(&o, " action=%s", name_or(rlt__rule_action_names, COUNT_OF(rlt__rule_action_names), (unsigned)r->action));
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
		     name_or(rlt__rule_fallback_names, COUNT_OF(rlt__rule_fallback_names), (unsigned)r->fallback));
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
	emit(&o, " family=%s", name_or(rlt__rule_family_names, COUNT_OF(rlt__rule_family_names), (unsigned)r->family));
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
