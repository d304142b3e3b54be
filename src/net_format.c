/*
 * net_format.c: a network condition (struct rlt__net_cond) in its canonical form, every key
 * explicit and in base units, which net_parse.c reads back to the same condition.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>

#include "net.h"
#include "units.h"

static const char *const family_names[] = { [RLT_FAMILY_INET] = "inet",
	                                    [RLT_FAMILY_UNIX] = "unix",
	                                    [RLT_FAMILY_ALL] = "all" };

struct out {
	char *buf;
	size_t len, pos;
};

__attribute__((format(printf, 2, 3))) static void emit(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->pos < o->len ? o->buf + o->pos : NULL, o->pos < o->len ? o->len - o->pos : 0,
	              fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += (size_t)n;
}

static void emit_dur(struct out *o, const char *key, uint64_t ns)
{
	char d[48];
	rlt__format_duration(d, sizeof d, ns);
	emit(o, "%s%s", key, d);
}

static void emit_share(struct out *o, const char *key, uint32_t ppm)
{
	uint32_t whole = ppm / 10000, frac = ppm % 10000;
	if (!frac) {
		emit(o, "%s%u%%", key, whole);
		return;
	}
	char f[8];
	snprintf(f, sizeof f, "%04u", frac);
	for (int i = 3; i > 0 && f[i] == '0'; i--)
		f[i] = '\0';
	emit(o, "%s%u.%s%%", key, whole, f);
}

int rlt__net_format(const struct rlt__net_cond *c, char *buf, size_t len)
{
	struct out o = { buf, len, 0 };
	char a[INET6_ADDRSTRLEN];

	if (buf && len)
		buf[0] = '\0';
	switch (c->kind) {
	case RLT_NET_LATENCY:
		emit_dur(&o, "latency=", c->dur_ns);
		emit_dur(&o, " jitter=", c->jitter_ns);
		emit(&o, " dist=%s", c->dist == RLT_NET_NORMAL ? "normal" : "uniform");
		break;
	case RLT_NET_LOSS: emit_share(&o, "loss=", c->loss_ppm); break;
	case RLT_NET_RESET:
	case RLT_NET_HANG:
		emit(&o, "%s", rlt__net_kind_name(c->kind));
		if (c->after == RLT_NET_AFTER_TIME)
			emit_dur(&o, " after=", c->after_ns);
		else if (c->after == RLT_NET_AFTER_BYTES)
			emit(&o, " after=%" PRIu64 "B", c->after_bytes);
		if (c->kind == RLT_NET_HANG && c->close_ns)
			emit_dur(&o, " close=", c->close_ns);
		break;
	case RLT_NET_SLICE:
		if (c->slice_lo == c->slice_hi)
			emit(&o, "slice=%" PRIu64, c->slice_lo);
		else
			emit(&o, "slice=%" PRIu64 "-%" PRIu64, c->slice_lo, c->slice_hi);
		emit_dur(&o, " delay=", c->delay_ns);
		break;
	case RLT_NET_CONNECT:
		if (c->connect == RLT_NET_REFUSE)
			emit(&o, "connect=refuse");
		else
			emit_dur(&o, "connect=timeout after=", c->connect_ns);
		break;
	default: break;
	}
	if (c->dir)
		emit(&o, " dir=%s", c->dir == RLT_NET_IN ? "in" : c->dir == RLT_NET_OUT ? "out" : "both");
	emit_share(&o, " p=", c->p_ppm);
	if (c->has_seed)
		emit(&o, " seed=%" PRIu64, c->seed);
	if (c->m.peer_af && inet_ntop(c->m.peer_af, c->m.peer_addr, a, sizeof a))
		emit(&o, " peer%s=%s/%u", c->m.peer_not ? "!" : "", a, (unsigned)c->m.peer_prefix);
	if (c->m.port_lo != 0 || c->m.port_hi != 65535) {
		if (c->m.port_lo == c->m.port_hi)
			emit(&o, " port%s=%u", c->m.port_not ? "!" : "", (unsigned)c->m.port_lo);
		else
			emit(&o, " port%s=%u-%u", c->m.port_not ? "!" : "", (unsigned)c->m.port_lo,
			     (unsigned)c->m.port_hi);
	}
	emit(&o, " family%s=%s", c->m.family_not ? "!" : "", family_names[c->m.family]);
	return (int)o.pos;
}
