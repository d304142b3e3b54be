/*
 * rule_format.c: a rule back to text (rlt_rule_format, rlthrottle.h): the canonical form, which
 * parses to the same rule; a redis:// password never leaves the rule.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "rlthrottle.h"
#include "rule_parse.h"
#include "units.h"

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
