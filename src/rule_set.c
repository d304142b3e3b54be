/*
 * rule_set.c: `rlthrottle set`, the process's side (apply a request) and the setter's (post a
 * request). See rule_set.h; a shared segment's set is shm_set.c's.
 *
 * Why a new block per set rather than fields changed in place: a call reads the params, the
 * action and the errno of a rule together, and must never see half of an old rule and half of
 * a new one; one pointer load gives it one or the other whole. The blocks are a few hundred
 * bytes and a set is a person typing a command: they are never freed, so a thread that loaded
 * the old one just before the swap reads valid memory however long it takes.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "engine.h"
#include "error.h"
#include "keytab.h"
#include "pacing.h"
#include "net.h"
#include "rule_set.h"
#include "shm_set.h"

_Static_assert(sizeof(struct rlt__ctl) <= RLT_PUB_CTL_SIZE, "the control area holds a request");

const char *rlt__rule_differs(const struct rlt_rule *a, const struct rlt_rule *b)
{
	if (a->unit != b->unit)
		return "a different unit";
	if (a->algo != b->algo)
		return "a different algorithm";
	/* Two rules that name no scope have the same: a process's own, or the launcher's
	 * command's (scope_command.h), which a set naming none means. */
	int unnamed = !a->scope_given && !b->scope_given;
	if (!unnamed && (a->scope != b->scope ||
	                 ((a->scope == RLT_SCOPE_SHARED || a->scope == RLT_SCOPE_REDIS) &&
	                  strcmp(a->scope_name, b->scope_name) != 0)))
		return "a different scope";
	if (a->peer_af != b->peer_af || a->peer_prefix != b->peer_prefix ||
	    memcmp(a->peer_addr, b->peer_addr, sizeof a->peer_addr) != 0 ||
	    a->port_lo != b->port_lo || a->port_hi != b->port_hi || a->family != b->family)
		return "different filters (peer, port or family)";
	if (a->key != b->key || a->key_prefix4 != b->key_prefix4 ||
	    a->key_prefix6 != b->key_prefix6 || a->keys != b->keys)
		return "a different key= or keys=";
	return NULL;
}

static int filters_equal(const struct rlt_rule *a, const struct rlt_rule *b)
{
	const char *d = rlt__rule_differs(a, b);
	return !d || !strcmp(d, "a different algorithm");
}

/*
 * Which rule of var a set of `nr` replaces: rule `index` when >= 0; else the only rule of var;
 * else the one whose filters (peer, port, family), unit and scope are nr's. 0 with *i, or
 * -ENOENT/-EINVAL with err saying why in one line.
 */
static int rule_pick(const struct rlt__ruleset *rs, enum rlt_var var, int index,
                   const struct rlt_rule *nr, unsigned *i, struct rlt_error *err)
{
	unsigned n = rs->n[var], found = 0, which = 0;

	if (n == 0)
		return rlt__fail(err, -ENOENT, "%s: the process has no such rule", rlt_var_name(var));
	if (index >= 0) {
		if ((unsigned)index >= n)
			return rlt__fail(err, -ENOENT, "%s#%d: the process has %u %s rule%s",
			            rlt_var_name(var), index + 1, n, rlt_var_name(var), n > 1 ? "s" : "");
		*i = (unsigned)index;
		return 0;
	}
	if (n == 1) {
		*i = 0;
		return 0;
	}
	for (unsigned k = 0; k < n; k++)
		if (filters_equal(&rs->rules[var][k].rule, nr)) {
			found++;
			which = k;
		}
	if (found != 1)
		return rlt__fail(err, -ENOENT,
		            "%s has %u rules and %s has the filters and scope of \"%.200s\": name "
		            "one as %s#N (N from 1)",
		            rlt_var_name(var), n, found ? "more than one" : "none", nr->text,
		            rlt_var_name(var));
	*i = which;
	return 0;
}

struct rlt__rule_ver *rlt__rule_ver_new(const struct rlt__rule_ver *old, const struct rlt_rule *nr,
                                        const struct rlt_params *np, void *state, rlt_ns_t now)
{
	struct rlt__rule_ver *v = rlt__map_anon(sizeof *v);

	if (!v)
		return NULL;
	v->params = *np;
	v->state = state;
	v->action = nr->action;
	v->err = nr->err;
	/* a dry-run rule never holds a call back, so it never cuts one into pieces either */
	v->piece = nr->action == RLT_ACTION_DRY_RUN ? UINT64_MAX : rlt__piece_of(nr->unit, np);
	v->whole = nr->action == RLT_ACTION_DRY_RUN ? UINT64_MAX
	                                            : rlt__whole_of(nr->unit, np, v->piece);
	v->since = now;
	v->prev = old;
	return v;
}

/* For readers off the hot path (stats, the published page): the rule as it stands now. */
static void note_rule(struct rlt_rule *r, const struct rlt_rule *nr, const struct rlt_params *np)
{
	r->amount_num = nr->amount_num;
	r->amount_den = nr->amount_den;
	r->period_ns = nr->period_ns;
	r->burst = nr->burst;
	r->action = nr->action;
	r->max_wait_ns = nr->max_wait_ns;
	r->err = nr->err;
	r->params = *np;
	memcpy(r->text, nr->text, sizeof r->text);
}

/*
 * Replaces rule i of var by nr (parsed for var) from time `now`: the same rule (algorithm,
 * unit, scope, filters) with a new rate, burst, action, max-wait or errno. Returns 0, or a
 * negative errno with err saying in one line why nothing changed (a different rule, a window's
 * new rate, a redis or RLT_CONNS rule, a shared rule: set its segment). Allocates with mmap
 * (async-signal-safe); a replaced block stays mapped while the process lives.
 */
static int rule_set(struct rlt__ruleset *rs, enum rlt_var var, unsigned i,
                  const struct rlt_rule *nr, rlt_ns_t now, struct rlt_error *err)
{
	struct rlt__rt_rule *r = &rs->rules[var][i];
	const struct rlt__rule_ver *old = rlt__ver(r);
	const char *why = rlt__rule_differs(&r->rule, nr);
	struct rlt_params np = nr->params;
	struct rlt_error e;
	void *state = old->state;
	int rc;

	if (var == RLT_VAR_CONNS)
		return rlt__fail(err, -ENOTSUP,
		            "RLT_CONNS=\"%.200s\": set changes rates; a connection count is not one yet",
		            nr->text);
	if (why)
		return rlt__fail(err, -EINVAL,
		            "%s=\"%.200s\": %s than the running rule \"%.200s\": a different rule, "
		            "not a new rate (restart the program with it)",
		            rlt_var_name(var), nr->text, why, r->rule.text);
	/* A rule of the launcher's command lives in the command's segment: its set is the
	 * segment's, which every process of the command follows (this one at its next call). */
	if (r->rule.scope == RLT_SCOPE_SHARED && !r->rule.scope_given)
		return rlt__shm_set(r->rule.scope_name, nr->text, now, err);
	if (r->rule.scope == RLT_SCOPE_REDIS)
		return rlt__fail(err, -ENOTSUP,
		            "%s=\"%.200s\": a redis:// rule is shared by other machines' processes: "
		            "set does not change it",
		            rlt_var_name(var), nr->text);
	if (r->rule.scope == RLT_SCOPE_SHARED)
		return rlt__fail(err, -EINVAL,
		            "%s=\"%.200s\": the rule is shared by every process naming %s: use "
		            "`rlthrottle set shared:%s RULE`",
		            rlt_var_name(var), nr->text, r->rule.scope_name, r->rule.scope_name);
	int many = r->rule.scope == RLT_SCOPE_CONNECTION || r->keytab != NULL;
	int gcra = np.algo == RLT_ALGO_TOKEN || np.algo == RLT_ALGO_LEAKY;
	e.msg[0] = '\0';
	rc = rlt_params_retune(&np, &old->params, now, &e);
	if (rc == 1 && many && gcra) {
		/* Every socket's (or key's) state cannot be carried: they keep their units,
		 * counted at the new rate from now (the share of the burst is a single
		 * state's: process and shared scopes). */
		np = nr->params;
		rc = rlt__params_retune_keep(&np, &old->params, now, &e);
	}
	if (rc == 1 && many)
		rc = -ERANGE; /* every socket's (or key's) state would need carrying: e says why */
	/* A dry-run's lag beyond its burst is no call's wait: enforcing the rule starts from
	 * its burst, never from the lag (a carry drops it). */
	if (rc == 0 && gcra && !many && old->action == RLT_ACTION_DRY_RUN &&
	    nr->action != RLT_ACTION_DRY_RUN)
		rc = 1;
	if (rc < 0)
		return rlt__fail(err, rc, "%s=\"%.200s\": %s", rlt_var_name(var), nr->text,
		            rc == -ERANGE && e.msg[0] == '\0' ? "out of range" : e.msg);
	if (rc == 1) {
		state = rlt__map_anon(rlt_state_size(&np));
		if (!state ||
		    rlt_state_carry(&old->params, old->state, &np, state, now,
		                    old->action == RLT_ACTION_DRY_RUN ? RLT_CARRY_DRY_RUN : 0) != 0)
			return rlt__fail(err, -ENOMEM, "%s: no memory for the new state", rlt_var_name(var));
	}
	struct rlt__rule_ver *v = rlt__rule_ver_new(old, nr, &np, state, now);
	if (!v)
		return rlt__fail(err, -ENOMEM, "%s: no memory for the new rule", rlt_var_name(var));
	atomic_store_explicit(&r->cur, v, memory_order_release);
	if (r->keytab) /* which keys are idle again, by the new burst */
		atomic_store_explicit(&r->keytab->p, &v->params, memory_order_release);
	note_rule(&r->rule, nr, &np);
	return 0;
}

int rlt__rule_parse_one(enum rlt_var var, const char *text, const char *shown,
                        struct rlt_rule *out, struct rlt_error *err)
{
	struct rlt_rule nr[2];
	size_t n = 0;
	int rc = rlt_rules_parse(var, text, nr, 2, &n, err);

	if (rc)
		return rc;
	if (n != 1)
		return rlt__fail(err, -EINVAL, "%s=\"%.300s\": set takes one rule", rlt_var_name(var),
		                 shown ? shown : text);
	*out = nr[0];
	return 0;
}

int rlt__rule_set_text(struct rlt__ruleset *rs, enum rlt_var var, int index, const char *text,
                       rlt_ns_t now, unsigned *which, struct rlt_error *err)
{
	struct rlt_rule nr;
	unsigned i = 0;
	int rc;

	if ((unsigned)var >= RLT_VAR_COUNT)
		return rlt__fail(err, -EINVAL, "no such variable");
	rc = rlt__rule_parse_one(var, text, NULL, &nr, err);
	if (rc)
		return rc;
	rc = rule_pick(rs, var, index, &nr, &i, err);
	if (rc == 0)
		rc = rule_set(rs, var, i, &nr, now, err);
	if (rc == 0)
		snprintf(err->msg, sizeof err->msg, "%s#%u=\"%.300s\" in force", rlt_var_name(var),
		         i + 1, nr.text);
	*which = i;
	return rc;
}

void rlt__ctl_serve(struct rlt__ruleset *rs)
{
	struct rlt__ctl *c = (void *)rs->pub->hdr->ctl;
	uint32_t want = 0;
	struct rlt_error e;
	char text[sizeof c->text];
	uint32_t var;
	int32_t index;
	int rc;

	if (!atomic_compare_exchange_strong(&rs->applying, &want, 1))
		return; /* another thread applies it (or this one, interrupted by a handler) */
	uint32_t s = atomic_load_explicit(&c->seq, memory_order_acquire);
	if (s == 0) {
		atomic_store_explicit(&rs->ctl_seen, 0, memory_order_relaxed); /* a new page (a fork's child): nothing asked yet */
		goto out;
	}
	if (s == atomic_load_explicit(&rs->ctl_seen, memory_order_relaxed) || (s & 1))
		goto out; /* answered, or still being written: the next call looks again */
	var = c->var;
	index = c->index;
	memcpy(text, c->text, sizeof text);
	text[sizeof text - 1] = '\0';
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&c->seq, memory_order_relaxed) != s)
		goto out; /* rewritten meanwhile */
	atomic_store_explicit(&rs->ctl_seen, s, memory_order_relaxed);
	unsigned which;
	if (var == RLT_CTL_VAR_NET) {
		rc = rlt__net_set_text(text, &e);
		if (rc == 0)
			rlt__pub_net_update(rs);
	} else {
		rc = rlt__rule_set_text(rs, (enum rlt_var)var, index, text, rlt__now(), &which, &e);
		if (rc == 0)
			rlt__pub_rule_update(rs, (enum rlt_var)var, which);
	}
	c->result = rc;
	memcpy(c->msg, e.msg, sizeof c->msg - 1); /* same size */
	c->msg[sizeof c->msg - 1] = '\0';
	atomic_store_explicit(&c->done, s, memory_order_release);
out:
	atomic_store_explicit(&rs->applying, 0, memory_order_release);
}

/* ----- the setter's side ----- */

static void nap_ms(unsigned ms)
{
	struct timespec ts = {0, (long)ms * 1000000L};
	nanosleep(&ts, NULL);
}

int rlt__ctl_request(struct rlt__ctl *c, enum rlt_var var, int index, const char *text,
                     rlt_ns_t wait_ns, struct rlt_error *err)
{
	int32_t me = (int32_t)getpid(), held = 0;
	rlt_ns_t deadline = rlt__now() + wait_ns;

	/* one setter at a time; the place of one that died is taken (bounded by the deadline) */
	while (!atomic_compare_exchange_strong(&c->setter, &held, me)) {
		if (held > 0 && kill(held, 0) != 0 && errno == ESRCH &&
		    atomic_compare_exchange_strong(&c->setter, &held, me))
			break;
		if (rlt__now() >= deadline)
			return rlt__fail(err, -EBUSY, "another `rlthrottle set` (pid %d) is setting this "
			                         "process: try again",
			            (int)held);
		held = 0;
		nap_ms(1);
	}
	uint32_t s = atomic_load(&c->seq);
	if (s & 1)
		s++; /* a setter died half way: its request is void */
	atomic_store_explicit(&c->seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	c->var = (uint32_t)var;
	c->index = index;
	snprintf(c->text, sizeof c->text, "%s", text);
	atomic_store_explicit(&c->seq, s + 2, memory_order_release);
	int rc = 1;
	while (rlt__now() < deadline) {
		if (atomic_load_explicit(&c->done, memory_order_acquire) == s + 2) {
			rc = c->result;
			memcpy(err->msg, c->msg, sizeof err->msg);
			err->msg[sizeof err->msg - 1] = '\0';
			break;
		}
		nap_ms(1);
	}
	if (rc == 1)
		snprintf(err->msg, sizeof err->msg,
		         "pending: the process makes no throttled call now; it applies the rule at "
		         "its next one");
	atomic_store(&c->setter, 0);
	return rc;
}
