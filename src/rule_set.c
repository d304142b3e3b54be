/*
 * rule_set.c: `rlthrottle set`, the process's side (apply a request, follow a shared segment)
 * and the setter's (post a request, set a segment). See rule_set.h.
 *
 * Why a new block per set rather than fields changed in place: a call reads the params, the
 * action and the errno of a rule together, and must never see half of an old rule and half of
 * a new one; one pointer load gives it one or the other whole. The blocks are a few hundred
 * bytes and a set is a person typing a command: they are never freed, so a thread that loaded
 * the old one just before the swap reads valid memory however long it takes.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "engine.h"
#include "error.h"
#include "keytab.h"
#include "net.h"
#include "rule_set.h"
#include "scope_shm.h"

/* A segment's rule in force (set_params, set_slot) as a set leaves it, checked before the
 * arithmetic trusts it: another user's segment reaches root's `set`, and a zero divisor, a
 * shift past 63, a reciprocal that is not its fraction's (a conversion loop would not end) or a
 * slot past the ring would crash or hang it. What no set changes (the algorithm, a window's
 * period, a log's ring) must be as the rule the segment was made with (cr) has it. */
static int set_params_sane(const struct rlt_params *p, const struct rlt_params *cr, uint32_t slot)
{
	if (slot > RLT_SHM_SET_SLOTS || p->algo != cr->algo)
		return 0;
	switch (p->algo) {
	case RLT_ALGO_TOKEN:
	case RLT_ALGO_LEAKY:
		/* a set that outran the old ticks gives its own (rlt_params_retune): tick fields
		 * are checked for what they must be, not against cr */
		return p->unit_shift < 64 && p->unit_round == (UINT64_C(1) << p->unit_shift) - 1 &&
		       p->ticks_per_unit && p->tick_num && p->tick_den && p->rate_num &&
		       p->rate_den_ns &&
		       p->tick_recip == (uint64_t)(((unsigned __int128)p->tick_num << 59) / p->tick_den);
	default:
		return p->window_ns == cr->window_ns && p->sub_ns == cr->sub_ns && p->limit &&
		       p->epoch_ticks <= (cr->epoch_ticks ? cr->epoch_ticks : cr->limit) &&
		       p->window_ns;
	}
}

_Static_assert(sizeof(struct rlt__ctl) <= RLT_PUB_CTL_SIZE, "the control area holds a request");

/* What makes two rules the same rule for `set`: not the rate, the burst, the action, max-wait
 * or errno (what a set changes), but what the budget is of and which calls it counts. NULL
 * when the same, else what differs. */
static const char *differs(const struct rlt_rule *a, const struct rlt_rule *b)
{
	if (a->unit != b->unit)
		return "a different unit";
	if (a->algo != b->algo)
		return "a different algorithm";
	if (a->scope != b->scope ||
	    ((a->scope == RLT_SCOPE_SHARED || a->scope == RLT_SCOPE_REDIS) &&
	     strcmp(a->scope_name, b->scope_name) != 0))
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
	const char *d = differs(a, b);
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

/* A new block for rule r: nr's action and errno, np's params on `state`. NULL: no memory. */
static struct rlt__rule_ver *new_ver(const struct rlt__rule_ver *old, const struct rlt_rule *nr,
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
	const char *why = differs(&r->rule, nr);
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
	struct rlt__rule_ver *v = new_ver(old, nr, &np, state, now);
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

/* The rule a shared segment holds since its last set, read under its sequence word; 0, or -1
 * while a set writes it (the caller tries again at its next call). */
static int read_shm_set(struct rlt__shm_hdr *h, uint32_t g, struct rlt_params *p,
                        uint32_t *slot, uint32_t *action, int32_t *e, uint64_t *since)
{
	if (g & 1)
		return -1;
	*p = h->set_params;
	*slot = h->set_slot;
	*action = h->set_action;
	*e = h->set_err;
	*since = h->set_since;
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&h->set_gen, memory_order_relaxed) == g ? 0 : -1;
}

/* 1 when r now follows the segment's set g. */
static int follow_one(struct rlt__rt_rule *r, uint32_t g)
{
	struct rlt__shm_hdr *h = r->shm;
	struct rlt_params p;
	uint32_t slot, action;
	int32_t e;
	uint64_t since;
	const struct rlt__rule_ver *old = rlt__ver(r);

	if (read_shm_set(h, g, &p, &slot, &action, &e, &since) != 0)
		return 0; /* a set is being written: the next call looks again */
	if (p.algo != old->params.algo || slot > RLT_SHM_SET_SLOTS) {
		atomic_store_explicit(&r->shm_seen, g, memory_order_relaxed); /* not a set of ours to follow (the setter checks): never again */
		return 0;
	}
	struct rlt_rule nr = r->rule;
	nr.action = action == RLT_ACTION_REJECT ? RLT_ACTION_REJECT : RLT_ACTION_DELAY;
	nr.err = e;
	nr.max_wait_ns = p.max_wait_ns;
	void *state = slot == 0 ? r->v0.state : (void *)&h->set_slots[slot - 1];
	struct rlt__rule_ver *v = new_ver(old, &nr, &p, state, since);
	if (!v)
		return 0;
	atomic_store_explicit(&r->cur, v, memory_order_release);
	r->rule.action = nr.action;
	r->rule.err = e;
	r->rule.max_wait_ns = p.max_wait_ns;
	r->rule.params = p;
	atomic_store_explicit(&r->shm_seen, g, memory_order_relaxed);
	return 1;
}

void rlt__shm_follow_all(struct rlt__ruleset *rs)
{
	for (unsigned k = 0; k < rs->nshared; k++) {
		struct rlt__rt_rule *r = rs->shared[k];
		uint32_t want = 0;
		uint32_t g = atomic_load_explicit(&r->shm->set_gen, memory_order_acquire);
		if (g == atomic_load_explicit(&r->shm_seen, memory_order_relaxed))
			continue;
		if (!atomic_compare_exchange_strong(&rs->applying, &want, 1))
			return;
		if (follow_one(r, g))
			rlt__pub_rule_update(rs, r->rule.var,
			                     (unsigned)(r - rs->rules[r->rule.var]));
		atomic_store_explicit(&rs->applying, 0, memory_order_release);
	}
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

int rlt__shm_set(const char *name, const char *text, rlt_ns_t now, struct rlt_error *err)
{
	char obj[RLT_NAME_MAX + 32];
	struct rlt_rule cr, nr;
	struct stat st;
	size_t n = 0;
	int fd, rc;

	if (!rlt__shm_name_ok(name))
		return rlt__fail(err, -EINVAL, "shared:%.200s: not a valid scope name", name);
	snprintf(obj, sizeof obj, "/" RLT_SHM_PREFIX "%s", name);
	fd = shm_open(obj, O_RDWR | O_NOFOLLOW | O_NONBLOCK, 0);
	if (fd < 0)
		return rlt__fail(err, errno == EACCES ? -EACCES : -ENOENT,
		            errno == EACCES ? "shared:%s: the segment is another user's: refused"
		                            : "shared:%s: no such segment (no process names it)",
		            name);
	/* O_NONBLOCK above: a FIFO planted under the name must not hang us before this check */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != geteuid() && geteuid() != 0) || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
	    st.st_size < (off_t)sizeof(struct rlt__shm_hdr)) {
		close(fd);
		return rlt__fail(err, -EACCES,
		            "shared:%s: the segment is another user's, writable by others or too "
		            "small: refused",
		            name);
	}
	size_t mapped = (size_t)st.st_size;
	struct rlt__shm_hdr *h = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		rc = rlt__fail(err, -errno, "shared:%s: cannot map the segment: %s", name, strerror(errno));
		close(fd);
		return rc;
	}
	rc = -EPROTO;
	if (h->magic != RLT_SHM_MAGIC || h->layout != RLT_SHM_LAYOUT ||
	    !atomic_load_explicit(&h->ready, memory_order_acquire) || h->var >= RLT_VAR_COUNT ||
	    h->size > mapped || h->state_off + sizeof(uint64_t) > mapped) {
		rlt__fail(err, rc, "shared:%s: not a ready segment of this version of rlthrottle", name);
		goto out;
	}
	enum rlt_var var = (enum rlt_var)h->var;
	char creator[RLT_RULE_TEXT_MAX + 1];
	memcpy(creator, h->text, sizeof creator);
	creator[sizeof creator - 1] = '\0';
	if (rlt_rules_parse(var, creator, &cr, 1, &n, err) != 0 || n != 1)
		goto out;
	/* The scope is the segment's: a rule that names none names it. */
	char full[RLT_RULE_TEXT_MAX + RLT_NAME_MAX + 32];
	if (strstr(text, "scope="))
		snprintf(full, sizeof full, "%s", text);
	else
		snprintf(full, sizeof full, "%s scope=shared:%s", text, name);
	rc = rlt__rule_parse_one(var, full, text, &nr, err);
	if (rc)
		goto out;
	rc = -EINVAL;
	const char *why = differs(&cr, &nr);
	if (why) {
		rlt__fail(err, rc,
		     "%s=\"%.200s\": %s than the segment's rule \"%.200s\": a different rule, not a "
		     "new rate",
		     rlt_var_name(var), nr.text, why, cr.text);
		goto out;
	}
	if (var == RLT_VAR_CONNS) {
		rc = rlt__fail(err, -ENOTSUP,
		          "RLT_CONNS=\"%.200s\": set changes rates; a connection count is not one yet",
		          nr.text);
		goto out;
	}
	if (cr.key != RLT_KEY_NONE) {
		rc = rlt__fail(err, -ENOTSUP,
		          "%s=\"%.200s\": the segment holds one budget per key (key=): set does not "
		          "change a keyed rule in this build",
		          rlt_var_name(var), nr.text);
		goto out;
	}
	/* setters one at a time (bounded: a set holds it for microseconds) */
	for (int k = 0; flock(fd, LOCK_EX | LOCK_NB) != 0; k++) {
		if (k >= 1000) {
			rc = rlt__fail(err, -EBUSY, "shared:%s: the segment stays locked: try again", name);
			goto out;
		}
		nap_ms(1);
	}
	uint32_t g = atomic_load(&h->set_gen);
	struct rlt_params old = g ? h->set_params : cr.params, np = nr.params;
	uint32_t slot = g ? h->set_slot : 0;
	struct rlt_error e;
	if (g && !set_params_sane(&old, &cr.params, slot)) {
		rc = rlt__fail(err, -EINVAL,
		          "shared:%s: the segment's rule in force is not one a set can have made "
		          "(damaged, or made by another program): refused",
		          name);
		flock(fd, LOCK_UN);
		goto out;
	}
	rc = rlt_params_retune(&np, &old, now, &e);
	if (rc < 0) {
		rlt__fail(err, rc, "%s=\"%.200s\": %s", rlt_var_name(var), nr.text, e.msg);
		flock(fd, LOCK_UN);
		goto out;
	}
	uint32_t was_dry = (g ? h->set_action : (uint32_t)cr.action) == RLT_ACTION_DRY_RUN;
	if (rc == 0 && was_dry && nr.action != RLT_ACTION_DRY_RUN &&
	    (np.algo == RLT_ALGO_TOKEN || np.algo == RLT_ALGO_LEAKY))
		rc = 1; /* a dry-run's lag is dropped by a carry, as rule_set's */
	if (rc == 1) {
		/* the budget goes on in the next slot (its previous user follows long before the
		 * ring comes round to it again) */
		_Atomic uint64_t *from = slot ? &h->set_slots[slot - 1]
		                              : (_Atomic uint64_t *)((char *)h + h->state_off);
		uint32_t next = slot % RLT_SHM_SET_SLOTS + 1;
		rlt_state_carry(&old, (void *)from, &np, (void *)&h->set_slots[next - 1], now,
		                was_dry ? RLT_CARRY_DRY_RUN : 0);
		slot = next;
	}
	atomic_store_explicit(&h->set_gen, g + 1, memory_order_relaxed);
	/* the odd word before any field: a reader that sees a field of this set sees it odd */
	atomic_thread_fence(memory_order_release);
	h->set_params = np;
	h->set_slot = slot;
	h->set_action = (uint32_t)nr.action;
	h->set_err = nr.err;
	h->set_since = now;
	memcpy(h->set_text, nr.text, sizeof h->set_text);
	atomic_store_explicit(&h->set_gen, g + 2, memory_order_release);
	flock(fd, LOCK_UN);
	snprintf(err->msg, sizeof err->msg, "shared:%s: %s=\"%.300s\" in force", name,
	         rlt_var_name(var), nr.text);
	rc = 0;
out:
	munmap(h, mapped);
	close(fd);
	return rc;
}
