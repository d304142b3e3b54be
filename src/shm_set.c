/*
 * shm_set.c: `rlthrottle set shared:NAME RULE` (rlthrottle(1) COMMANDS), the setter's side
 * (rlt__shm_set: the rule in force written into the segment) and the processes' (following
 * it: rlt__shm_follow_all). See shm_set.h; a process's own rules are set by rule_set.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "error.h"
#include "rule_set.h"
#include "scope_shm.h"
#include "shm_set.h"

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

/* ----- a process follows a set ----- */

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
	struct rlt__rule_ver *v = rlt__rule_ver_new(old, &nr, &p, state, since);
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

/* Segment NAME opened and mapped read-write, if it is one a set may write: ours (or we are
 * root), written by no one else, of this version and ready. 0 with *fd, *h and *mapped, or a
 * negative errno with err (nothing left open). */
static int open_segment(const char *name, int *fd, struct rlt__shm_hdr **h, size_t *mapped,
                        struct rlt_error *err)
{
	char obj[RLT_NAME_MAX + 32];
	struct stat st;
	int rc;

	if (!rlt__shm_name_ok(name))
		return rlt__fail(err, -EINVAL, "shared:%.200s: not a valid scope name", name);
	snprintf(obj, sizeof obj, "/" RLT_SHM_PREFIX "%s", name);
	*fd = shm_open(obj, O_RDWR | O_NOFOLLOW | O_NONBLOCK, 0);
	if (*fd < 0)
		return rlt__fail(err, errno == EACCES ? -EACCES : -ENOENT,
		            errno == EACCES ? "shared:%s: the segment is another user's: refused"
		                            : "shared:%s: no such segment (no process names it)",
		            name);
	/* O_NONBLOCK above: a FIFO planted under the name must not hang us before this check */
	if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != geteuid() && geteuid() != 0) || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
	    st.st_size < (off_t)sizeof(struct rlt__shm_hdr)) {
		close(*fd);
		return rlt__fail(err, -EACCES,
		            "shared:%s: the segment is another user's, writable by others or too "
		            "small: refused",
		            name);
	}
	*mapped = (size_t)st.st_size;
	*h = mmap(NULL, *mapped, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (*h == MAP_FAILED) {
		rc = rlt__fail(err, -errno, "shared:%s: cannot map the segment: %s", name, strerror(errno));
		close(*fd);
		return rc;
	}
	if ((*h)->magic != RLT_SHM_MAGIC || (*h)->layout != RLT_SHM_LAYOUT ||
	    !atomic_load_explicit(&(*h)->ready, memory_order_acquire) || (*h)->var >= RLT_VAR_COUNT ||
	    (*h)->size > *mapped || (*h)->state_off + sizeof(uint64_t) > *mapped) {
		rc = rlt__fail(err, -EPROTO, "shared:%s: not a ready segment of this version of rlthrottle",
		               name);
		munmap(*h, *mapped);
		close(*fd);
		return rc;
	}
	return 0;
}

/* The segment's rule as its creator wrote it (*cr) and the new one (*nr, text in the segment's
 * scope), which must be the same rule with a new rate: 0, or a negative errno with err. */
static int new_rule_of(const struct rlt__shm_hdr *h, const char *name, const char *text,
                       struct rlt_rule *cr, struct rlt_rule *nr, struct rlt_error *err)
{
	enum rlt_var var = (enum rlt_var)h->var;
	char creator[RLT_RULE_TEXT_MAX + 1];
	char full[RLT_RULE_TEXT_MAX + RLT_NAME_MAX + 32];
	size_t n = 0;
	int rc;

	memcpy(creator, h->text, sizeof creator);
	creator[sizeof creator - 1] = '\0';
	if (rlt_rules_parse(var, creator, cr, 1, &n, err) != 0 || n != 1)
		return -EPROTO;
	/* a command's rule (scope_command.h) names no scope: its scope is this segment */
	if (!cr->scope_given) {
		cr->scope = RLT_SCOPE_SHARED;
		snprintf(cr->scope_name, sizeof cr->scope_name, "%s", name);
	}
	/* The scope is the segment's: a rule that names none names it. */
	if (strstr(text, "scope="))
		snprintf(full, sizeof full, "%s", text);
	else
		snprintf(full, sizeof full, "%s scope=shared:%s", text, name);
	rc = rlt__rule_parse_one(var, full, text, nr, err);
	if (rc)
		return rc;
	const char *why = rlt__rule_differs(cr, nr);
	if (why)
		return rlt__fail(err, -EINVAL,
		     "%s=\"%.200s\": %s than the segment's rule \"%.200s\": a different rule, not a "
		     "new rate",
		     rlt_var_name(var), nr->text, why, cr->text);
	if (var == RLT_VAR_CONNS)
		return rlt__fail(err, -ENOTSUP,
		          "RLT_CONNS=\"%.200s\": set changes rates; a connection count is not one yet",
		          nr->text);
	if (cr->key != RLT_KEY_NONE)
		return rlt__fail(err, -ENOTSUP,
		          "%s=\"%.200s\": the segment holds one budget per key (key=): set does not "
		          "change a keyed rule in this build",
		          rlt_var_name(var), nr->text);
	return 0;
}

/* Setters one at a time (bounded: a set holds the segment's lock for microseconds). */
static int lock_segment(int fd, const char *name, struct rlt_error *err)
{
	for (int k = 0; flock(fd, LOCK_EX | LOCK_NB) != 0; k++) {
		if (k >= 1000)
			return rlt__fail(err, -EBUSY, "shared:%s: the segment stays locked: try again",
			                 name);
		nanosleep(&(struct timespec){0, 1000000L}, NULL);
	}
	return 0;
}

/* nr in force in the segment from `now` (under its lock): the budget carried to the new params
 * where it must be, then the set written under the segment's sequence word. 0, or a negative
 * errno with err (nothing written). */
static int write_set(struct rlt__shm_hdr *h, const struct rlt_rule *cr,
                     const struct rlt_rule *nr, const char *name, rlt_ns_t now,
                     struct rlt_error *err)
{
	enum rlt_var var = (enum rlt_var)h->var;
	uint32_t g = atomic_load(&h->set_gen);
	struct rlt_params old = g ? h->set_params : cr->params, np = nr->params;
	uint32_t slot = g ? h->set_slot : 0;
	struct rlt_error e;
	int rc;

	if (g && !set_params_sane(&old, &cr->params, slot))
		return rlt__fail(err, -EINVAL,
		          "shared:%s: the segment's rule in force is not one a set can have made "
		          "(damaged, or made by another program): refused",
		          name);
	rc = rlt_params_retune(&np, &old, now, &e);
	if (rc < 0)
		return rlt__fail(err, rc, "%s=\"%.200s\": %s", rlt_var_name(var), nr->text, e.msg);
	uint32_t was_dry = (g ? h->set_action : (uint32_t)cr->action) == RLT_ACTION_DRY_RUN;
	if (rc == 0 && was_dry && nr->action != RLT_ACTION_DRY_RUN &&
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
	h->set_action = (uint32_t)nr->action;
	h->set_err = nr->err;
	h->set_since = now;
	memcpy(h->set_text, nr->text, sizeof h->set_text);
	atomic_store_explicit(&h->set_gen, g + 2, memory_order_release);
	return 0;
}

int rlt__shm_set(const char *name, const char *text, rlt_ns_t now, struct rlt_error *err)
{
	struct rlt__shm_hdr *h = NULL;
	struct rlt_rule cr, nr;
	size_t mapped = 0;
	int fd = -1;
	int rc = open_segment(name, &fd, &h, &mapped, err);

	if (rc)
		return rc;
	rc = new_rule_of(h, name, text, &cr, &nr, err);
	if (!rc)
		rc = lock_segment(fd, name, err);
	if (!rc) {
		rc = write_set(h, &cr, &nr, name, now, err);
		flock(fd, LOCK_UN);
	}
	if (!rc)
		snprintf(err->msg, sizeof err->msg, "shared:%s: %s=\"%.300s\" in force", name,
		         rlt_var_name((enum rlt_var)h->var), nr.text);
	munmap(h, mapped);
	close(fd);
	return rc;
}
