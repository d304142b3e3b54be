/*
 * net_set.c: the network conditions in force in a process (RLT_NET at load, then each
 * `rlthrottle set PID RLT_NET ...`), and what they did (rlt__net_counts).
 *
 * A set is one immutable block, replaced whole by one pointer store: a call loads it once and
 * sees the old conditions or the new ones, never half of each. A block is never freed (a
 * thread may still read the one it loaded); sets are rare and a block is a few KiB.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "net.h"

struct rlt__net_stats rlt__net_own;
struct rlt__net_stats *rlt__net_counts = &rlt__net_own;
void (*rlt__net_on_set)(void);
int rlt__net_wanted;

static const struct rlt__net_set none;
static _Atomic(const struct rlt__net_set *) cur = &none;
_Atomic uint32_t rlt__net_gen = 1;
static uint64_t seed;

const struct rlt__net_set *rlt__net_now(uint32_t *g)
{
	const struct rlt__net_set *s = atomic_load_explicit(&cur, memory_order_acquire);
	*g = atomic_load_explicit(&rlt__net_gen, memory_order_relaxed);
	return s;
}

uint64_t rlt__net_default_seed(void)
{
	return seed;
}

const char *rlt__net_unsupported(const struct rlt__net_cond *c)
{
	/* the delay is inbound: what reaches the program (an outbound one would need the data
	 * kept back on our side, which nothing holds yet): refused rather than a condition
	 * that silently does nothing */
	if (c->kind == RLT_NET_LATENCY && (c->dir & RLT_NET_OUT))
		return "latency dir=out (or both) is not built yet: the delay is inbound (dir=in)";
	return NULL;
}

/* Refuses a set holding a condition this build cannot apply (the same line as a bad one). */
static int check_supported(const struct rlt__net_set *s, struct rlt_error *err)
{
	for (unsigned i = 0; i < s->n; i++) {
		const char *why = rlt__net_unsupported(&s->c[i]);
		if (why) {
			snprintf(err->msg, sizeof err->msg, RLT_NET_VAR "=\"%.200s\": %s", s->c[i].text,
			         why);
			return -EINVAL;
		}
	}
	return 0;
}

/* Publishes a parsed set: a copy in memory of its own (the caller's is on its stack). */
static int publish(const struct rlt__net_set *s, struct rlt_error *err)
{
	struct rlt__net_set *m = s->n ? rlt__map_anon(sizeof *m) : NULL;

	if (s->n && !m) {
		snprintf(err->msg, sizeof err->msg, RLT_NET_VAR ": no memory for the conditions");
		return -ENOMEM;
	}
	if (m)
		memcpy(m, s, sizeof *m);
	atomic_store_explicit(&cur, m ? m : &none, memory_order_release);
	atomic_fetch_add_explicit(&rlt__net_gen, 1, memory_order_relaxed);
	return 0;
}

/* The parse's buffer: off the stack (a set is applied inside a call, on the system-call
 * front's signal stack), and one at a time (load; rlt__ctl_serve has one applier). */
static struct rlt__net_set parsed;

int rlt__net_load(const char *value, struct rlt_error *err)
{
	struct rlt__net_set *sp = &parsed;
	int rc;

	rlt__net_wanted = value != NULL;
	/* a seed of this run's own for conditions without seed= */
	seed = rlt__now() * 0x9e3779b97f4a7c15ull;
	rc = rlt__net_parse(value, sp, err);
	if (rc == 0)
		rc = check_supported(sp, err);
	return rc ? rc : publish(sp, err);
}

int rlt__net_set_text(const char *text, struct rlt_error *err)
{
	struct rlt__net_set *sp = &parsed;
	size_t o;
	int rc;

	rc = rlt__net_parse(text, sp, err);
	if (rc == 0)
		rc = check_supported(sp, err);
	if (rc == 0)
		rc = publish(sp, err);
	if (rc)
		return rc;
	if (sp->n && rlt__net_on_set)
		rlt__net_on_set();
	o = (size_t)snprintf(err->msg, sizeof err->msg, RLT_NET_VAR ": %s",
	                     sp->n ? "" : "no condition");
	for (unsigned i = 0; i < sp->n && o < sizeof err->msg; i++) {
		if (i)
			o += (size_t)snprintf(err->msg + o, sizeof err->msg - o, "; ");
		if (o < sizeof err->msg)
			o += (size_t)rlt__net_format(&sp->c[i], err->msg + o, sizeof err->msg - o);
	}
	return 0;
}
