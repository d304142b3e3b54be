/*
 * scope_redis_key.c: keyed leases (key=) of a redis:// rule.
 *
 * Each key value has its own Redis record, "<the rule's key>:k:<value>" (rlt__redis_key_name),
 * under the rule's hash tag, so that a cluster keeps all of a rule's keys in one slot. The
 * scripts give every record a PX, so that an idle key's record goes by itself (GCRA: a second
 * after its budget is full again; a window's counter: a second after its window).
 *
 * A process keeps a lease per key as it keeps the rule's own: its unspent units in a slot of a
 * keytab.h table (`keys=` bounds it; found without a lock), its times in `kl` beside it. A
 * conforming call on a key whose lease has units left costs the table's look-up and one atomic
 * decrement, no round trip; a key without a lease waits for one round trip, as an unkeyed
 * rule's first call does. The refills of all the keys of a rule share its connection and lock.
 *
 * Bounds. A key whose slot goes to another key (an eviction) loses its unspent units: they
 * lapse, never given back (a give-back would be a round trip on the call that evicted it), so
 * that key's client is charged at most one lease (lease_size units) it did not use, per
 * eviction. Keyed leases are not given back at exit nor by a fork's child either: at most one
 * lease per key so held. Across N processes a key's excess is the rule's bound, per key: N
 * leases. A call whose set could not be had (keytab.h's spill) asks Redis for its own cost
 * alone and leases nothing.
 *
 * While Redis does not answer, the fallback applies per key: fallback=local decides on a
 * process-scope table of the same params (each key its own budget, keytab.h), allow and deny
 * as for the rule.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/mman.h>

#include "clock.h"
#include "engine_lock.h"
#include "keytab.h"
#include "keytab_key.h"
#include "redis_client.h"
#include "scope_redis.h"
#include "scope_redis_key.h"

/* A key's lease beside its slot (keytab.h's slots have no room for it). `owner` names the slot's
 * key (its sequence) and the process generation it was leased in: a lease whose owner is not
 * the slot's key now is none (the slot changed hands, or this is a fork's child). */
struct klease {
	_Atomic uint64_t owner;
	_Atomic uint64_t from, until, deny_until; /* as the rule's lease_from, lease_until, deny_until */
};


int rlt__redis_key_name(const char *base, const struct rlt__key *k, unsigned prefix4,
                        unsigned prefix6, char *buf, size_t len)
{
	unsigned kind = (unsigned)(k->w[0] & 0xff);
	char v[64];

	if (kind == RLT_KEYKIND_PORT)
		snprintf(v, sizeof v, "port:%u", (unsigned)(k->w[0] >> 8 & 0xffff));
	else if (kind == RLT_KEYKIND_V4 || kind == RLT_KEYKIND_V6)
		rlt__key_format(k, prefix4, prefix6, v, sizeof v);
	else
		snprintf(v, sizeof v, "none"); /* no address (family=all: a unix socket) */
	return snprintf(buf, len, "%s:k:%s", base, v);
}

int rlt__redis_keyed(struct rlt__redis *rd, struct rlt__keytab *t, struct rlt_error *err)
{
	const struct rlt_rule *r = &rd->rule;
	size_t bytes = (size_t)t->keys * sizeof(struct klease);
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		goto nomem;
	if (r->fallback == RLT_FALLBACK_LOCAL) {
		rd->local_keys = rlt__keytab_new(&rd->rule.params, t->keys,
		                                 rlt__now() ^ (uint64_t)(uintptr_t)rd, 0);
		if (!rd->local_keys) {
			munmap(m, bytes);
			goto nomem;
		}
	}
	rd->kl = m;
	rd->kl_bytes = bytes;
	t->leases = 1;
	rd->keys = t;
	return 0;
nomem:
	snprintf(err->msg, sizeof err->msg, "%s=\"%.300s\": no memory for the leases of %u keys",
	         rlt_var_name(r->var), r->text, (unsigned)t->keys);
	return -ENOMEM;
}

/* Who a lease belongs to: the slot's key (its sequence) in this process's generation. A slot's
 * sequence is never 0 once it holds a key, so a fresh record (0) is no one's. */
static uint64_t owner_of(struct rlt__redis *rd, uint64_t seq)
{
	return seq ^ atomic_load_explicit(&rd->gen, memory_order_relaxed) << 40;
}

static struct klease *lease_of(struct rlt__redis *rd, struct rlt__keyslot *s)
{
	return &rd->kl[s - rd->keys->slots];
}

/* The hot path: cost units from the key's lease (slot s, at sequence seq). 1 when taken. */
static int take_key(struct rlt__redis *rd, struct rlt__keyslot *s, uint64_t seq, rlt_ns_t now,
                    uint64_t cost, rlt_ns_t *at)
{
	struct klease *l = lease_of(rd, s);

	/* acquire: a refill publishes the owner after resetting the lease's times */
	if (atomic_load_explicit(&l->owner, memory_order_acquire) != owner_of(rd, seq) ||
	    now >= atomic_load_explicit(&l->until, memory_order_relaxed))
		return 0;
	return rlt__redis_lease_take(&s->state, &l->from, now, cost, at);
}

/* A call charged to slot s: its LRU time (to the ms, as keytab.c) and its units (statistics). */
static void touch(struct rlt__keytab *t, struct rlt__keyslot *s, rlt_ns_t now, uint64_t cost)
{
	if (now > atomic_load_explicit(&s->last, memory_order_relaxed) + 1000000)
		atomic_store_explicit(&s->last, now, memory_order_relaxed);
	if (t->count_units)
		atomic_fetch_add_explicit(&s->units, cost, memory_order_relaxed);
}

static enum rlt_verdict fallback_key(struct rlt__redis *rd, const struct rlt__key *k,
                                     rlt_ns_t now, uint64_t cost, enum rlt_mode mode,
                                     rlt_ns_t *at, void **kstate)
{
	if (rd->rule.fallback == RLT_FALLBACK_LOCAL && rd->local_keys)
		return rlt__keytab_decide(rd->local_keys, &rd->rule.params, k, now, cost, mode, at,
		                          kstate);
	return rlt__redis_fallback(rd, now, cost, mode, at);
}

/* The slow path of a key: its lease is short (or it has none). Under the rule's lock: one
 * round trip for the key's next lease, or the fallback. */
static enum rlt_verdict refill_key_once(struct rlt__redis *rd, const struct rlt__key *k,
                                        rlt_ns_t now, uint64_t cost, enum rlt_mode mode,
                                        rlt_ns_t *at, void **kstate)
{
	char name[sizeof rd->key + 80];
	struct rlt__keyslot *s;
	struct klease *l = NULL;
	struct rlt__redis_grant g;
	uint64_t seq = 0, have = 0, min, want;
	int rc;

	if (atomic_load_explicit(&rd->down, memory_order_relaxed) &&
	    now < atomic_load_explicit(&rd->retry_at, memory_order_relaxed))
		return fallback_key(rd, k, now, cost, mode, at, kstate);
	if (rlt__redis_lock_bounded(rd, now) != 0)
		return fallback_key(rd, k, now, cost, mode, at, kstate);
	if (atomic_load(&rd->down) && now < atomic_load(&rd->retry_at)) {
		rlt__lock_release(&rd->lock);
		return fallback_key(rd, k, now, cost, mode, at, kstate);
	}
	/* found again under the lock: another thread may have refilled it meanwhile */
	s = rlt__keytab_find(rd->keys, k, now, 1, &seq);
	if (s) {
		l = lease_of(rd, s);
		if (take_key(rd, s, seq, now, cost, at)) {
			if (rlt__keytab_still(s, seq)) {
				touch(rd->keys, s, now, cost);
				*kstate = (void *)&s->state;
				rlt__lock_release(&rd->lock);
				return *at > now ? RLT_WAIT : RLT_GO;
			}
			atomic_fetch_add(&s->state, cost); /* another key's, as in the hot path */
		}
		if (atomic_load(&l->owner) != owner_of(rd, seq)) {
			/* a new key in the slot, or the lease is a forking parent's: none yet. The
			 * key's own look-ups fail the owner check until it is published. */
			atomic_store(&s->state, 0);
			atomic_store(&l->from, 0);
			atomic_store(&l->until, RLT_NS_NEVER);
			atomic_store(&l->deny_until, 0);
			atomic_store_explicit(&l->owner, owner_of(rd, seq), memory_order_release);
		}
		if (now >= atomic_load(&l->until))
			atomic_store(&s->state, 0);
		have = atomic_load(&s->state);
	}
	min = cost > have ? cost - have : 1;
	want = rd->lease_size > min ? rd->lease_size : min;
	if (!s)
		min = want = cost; /* the spill: this call alone */
	rlt__redis_key_name(rd->key, k, rd->rule.key_prefix4, rd->rule.key_prefix6, name,
	                    sizeof name);

	rlt__internal++;
	rc = rlt__redis_eval(rd, name, (int64_t)want, min, mode == RLT_MODE_RESERVE, NULL, &g);
	rlt__internal--;
	rlt_ns_t after = rlt__now();
	if (rc != 0) {
		rlt__redis_went_down(rd, after);
		rlt__lock_release(&rd->lock);
		return fallback_key(rd, k, now, cost, mode, at, kstate);
	}
	rlt__redis_came_back(rd);
	if (g.units <= 0) {
		*at = g.wait_us < 0 ? RLT_NS_NEVER : after + (rlt_ns_t)g.wait_us * 1000;
		if (l && mode == RLT_MODE_NOW && cost <= rd->lease_size) { /* as refill_once */
			rlt_ns_t cap = after + RLT__REDIS_LEASE_NS;
			atomic_store_explicit(&l->deny_until, *at < cap ? *at : cap,
			                      memory_order_relaxed);
		}
		rlt__lock_release(&rd->lock);
		return RLT_DENY;
	}
	if (!s) {
		*at = g.wait_us > 0 ? after + (rlt_ns_t)g.wait_us * 1000 : now;
		rlt__lock_release(&rd->lock);
		return *at > now ? RLT_WAIT : RLT_GO;
	}
	rlt__redis_lease_grant(&s->state, &l->from, &l->until, &g, now, after);
	if (!take_key(rd, s, seq, now, cost, at)) {
		*at = RLT_NS_NEVER; /* the grant fell short of the call (a lapse in between) */
		rlt__lock_release(&rd->lock);
		return RLT_DENY;
	}
	/* A slot that went to another key during the round trip keeps the units, which that
	 * key's owner check voids (they lapse); the call had its grant all the same. */
	if (rlt__keytab_still(s, seq)) {
		touch(rd->keys, s, now, cost);
		*kstate = (void *)&s->state;
	}
	rlt__lock_release(&rd->lock);
	return *at > now ? RLT_WAIT : RLT_GO;
}

enum rlt_verdict rlt__redis_decide_key(struct rlt__redis *rd, const struct rlt__key *k,
                                       rlt_ns_t now, uint64_t cost, enum rlt_mode mode,
                                       rlt_ns_t *at, void **kstate)
{
	struct rlt__keyslot *s;
	enum rlt_verdict v;
	uint64_t seq;

	*kstate = NULL;
	if (cost == 0) {
		*at = now;
		return RLT_GO;
	}
	s = rlt__keytab_find(rd->keys, k, now, 1, &seq);
	if (s && take_key(rd, s, seq, now, cost, at)) {
		if (rlt__keytab_still(s, seq)) {
			touch(rd->keys, s, now, cost);
			*kstate = (void *)&s->state;
			return *at > now ? RLT_WAIT : RLT_GO;
		}
		/* the slot went to another key as this call took from it: back, and ask */
		atomic_fetch_add_explicit(&s->state, cost, memory_order_relaxed);
	} else if (s && mode == RLT_MODE_NOW &&
	           atomic_load_explicit(&lease_of(rd, s)->owner, memory_order_acquire) ==
	                   owner_of(rd, seq)) {
		rlt_ns_t until = atomic_load_explicit(&lease_of(rd, s)->deny_until,
		                                      memory_order_relaxed);
		if (now < until && !atomic_load_explicit(&rd->down, memory_order_relaxed)) {
			*at = until;
			return RLT_DENY;
		}
	}
	if (rlt__redis_refilling)
		return fallback_key(rd, k, now, cost, mode, at, kstate);
	rlt__redis_refilling++;
	v = refill_key_once(rd, k, now, cost, mode, at, kstate);
	rlt__redis_refilling--;
	return v;
}

void rlt__redis_refund_key(struct rlt__redis *rd, void *kstate, rlt_ns_t at, uint64_t units)
{
	struct rlt__keytab *lt = rd->local_keys;
	struct rlt__keyslot *s;

	if (!kstate)
		return; /* charged to no state this process keeps: the units lapse */
	if (lt && (char *)kstate >= (char *)lt && (char *)kstate < (char *)lt + lt->bytes) {
		rlt_refund(&rd->rule.params, kstate, at, units); /* the fallback's */
		return;
	}
	s = (struct rlt__keyslot *)((char *)kstate - offsetof(struct rlt__keyslot, state));
	/* a slot that changed hands meanwhile gets them, voided by its owner check (keyed
	 * leases above) or, if its new key leased already, at most this call's units */
	if (rlt__now() < atomic_load_explicit(&lease_of(rd, s)->until, memory_order_relaxed))
		atomic_fetch_add_explicit(&s->state, units, memory_order_relaxed);
}
