/*
 * ruleset_fork.c: a forked process's own budgets, for the supervisor (rlthrottle(7) BEHAVIOUR: "the child has
 * its own budgets, starting where the parent's stood"). The preload gets this from fork()
 * itself, its states being process memory; the supervisor keeps one ruleset per supervised
 * process and makes a child's from its parent's here.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "keytab.h"
#include "policy.h"
#include "publish.h"
#include "ruleset_fork.h"
#include "stats_count.h"

/* What a fork owns: the process-scope states of the rules that decide (RLT_CONNS counts and
 * the shared and redis scopes are common to all, connection scope lives with each socket),
 * and so the tables of keyed ones. */
static int owns_state(const struct rlt__rt_rule *r)
{
	return r->rule.scope == RLT_SCOPE_PROCESS && r->rule.var != RLT_VAR_CONNS && r->v0.state;
}

static int owns_keytab(const struct rlt__rt_rule *r)
{
	return r->rule.scope == RLT_SCOPE_PROCESS && r->rule.var != RLT_VAR_CONNS && r->keytab;
}

static void drop_states(struct rlt__ruleset *f, unsigned upto_v, unsigned upto_i)
{
	for (unsigned v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < f->n[v]; i++) {
			struct rlt__rt_rule *r = &f->rules[v][i];
			if (v == upto_v && i == upto_i)
				return;
			if (owns_state(r)) {
				rlt_state_destroy(&r->v0.params, r->v0.state);
				munmap(r->v0.state, rlt_state_size(&r->v0.params));
			}
			if (owns_keytab(r)) {
				rlt__keytab_free(r->keytab);
				if (r->keydry)
					munmap(r->keydry, (size_t)r->rule.keys * sizeof *r->keydry);
			}
		}
}

struct rlt__ruleset *rlt__ruleset_fork(struct rlt__ruleset *rs)
{
	/* aligned: a rule's block starts a cache line (policy.h) */
	struct rlt__ruleset *f = aligned_alloc(_Alignof(struct rlt__ruleset), sizeof *f);

	if (!f)
		return NULL;
	memcpy(f, rs, sizeof *f);
	f->pub = NULL; /* rs's page is rs's: the supervisor publishes the copy on its own */
	atomic_init(&f->ctl_seen, 0);
	atomic_init(&f->applying, 0);
	for (unsigned k = 0; k < f->nshared; k++) /* the copy's own rules */
		f->shared[k] = &f->rules[0][0] + (rs->shared[k] - &rs->rules[0][0]);
	for (unsigned v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < f->n[v]; i++) {
			struct rlt__rt_rule *r = &f->rules[v][i];
			/* the child starts from the rule in force now, as its first */
			r->v0 = *rlt__ver(&rs->rules[v][i]);
			r->v0.prev = NULL;
			atomic_init(&r->cur, &r->v0);
			r->st = &r->own;
			rlt__stats_zero(r->st);
			if (owns_keytab(r)) {
				r->keytab = rlt__keytab_copy(r->keytab, &r->v0.params);
				if (!r->keytab) {
					drop_states(f, v, i);
					free(f);
					return NULL;
				}
				r->keytab->mirror = (struct rlt__stats *const *)&r->st;
				atomic_store(&r->st->keys_tracked, atomic_load(&r->keytab->a->tracked));
				/* its own keys' dry-run figures, starting where its parent's stood */
				if (r->keydry) {
					size_t kb = (size_t)r->rule.keys * sizeof *r->keydry;
					struct rlt__keydry *d = rlt__map_anon(kb);
					if (!d) {
						rlt__keytab_free(r->keytab);
						r->keydry = NULL;
						drop_states(f, v, i);
						free(f);
						return NULL;
					}
					memcpy(d, r->keydry, kb);
					r->keydry = d;
				}
				continue;
			}
			if (!owns_state(r))
				continue;
			size_t size = rlt_state_size(&r->v0.params);
			void *m = rlt__map_anon(size);
			if (!m || rlt_state_copy(&r->v0.params, m, r->v0.state) != 0) {
				if (m)
					munmap(m, size);
				drop_states(f, v, i);
				free(f);
				return NULL;
			}
			r->v0.state = m;
		}
	return f;
}


#define FOLD(field) \
	atomic_fetch_add_explicit(&d->field, atomic_load_explicit(&s->field, memory_order_relaxed), \
	                          memory_order_relaxed)

void rlt__ruleset_join(struct rlt__ruleset *rs, struct rlt__ruleset *f)
{
	for (unsigned v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < f->n[v]; i++) {
			struct rlt__stats *d = rs->rules[v][i].st, *s = f->rules[v][i].st;
			FOLD(calls);
			FOLD(allowed);
			FOLD(delayed);
			FOLD(rejected);
			FOLD(units);
			FOLD(delay_ns_total);
			rlt__stat_max(&d->delay_ns_max,
			         atomic_load_explicit(&s->delay_ns_max, memory_order_relaxed));
			FOLD(would_delay);
			FOLD(would_delay_ns_total);
			FOLD(would_reject);
			rlt__stat_max(&d->would_delay_ns_max,
			         atomic_load_explicit(&s->would_delay_ns_max, memory_order_relaxed));
		}
	rlt__pub_destroy(f);
	drop_states(f, RLT_VAR_COUNT, 0);
	free(f);
}
