/*
 * conns.c: RLT_CONNS, connections open at once. One count per rule, in the process or in the
 * rule's shared segment; a futex word either way, so that a delayed connect sleeps until a
 * close.
 *
 * In shared scope the count is every process's, and a process can die holding slots (SIGKILL:
 * no close runs), or fork and leave its connections to a child that closes them. So each
 * process also counts the slots it holds in a holder entry of the segment (scope_shm.h): a
 * forked child counts what it inherited as its own, each process gives back only what it
 * holds, and when the limit is reached the entries of processes that are gone are emptied
 * back into the count before a call is refused or waits. The order keeps any error on the
 * safe side: a slot is added to the count before the holder and taken from the holder before
 * the count, so a death in between leaves one slot lost, never a connection over the limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "conns.h"
#include "keytab.h"
#include "keytab_count.h"
#include "keytab_key.h"
#include "policy.h"
#include "proc_stat.h"
#include "publish.h"
#include "scope_shm.h"
#include "stats_count.h"
#include "wait.h"

/* A process looks for dead holders at most this often (a look reads /proc once a holder). */
#define RECLAIM_EVERY_NS (100 * 1000 * 1000ull)
/* A delayed connect waiting for a close in shared scope looks again this often. */
#define WAIT_SLICE_NS (200 * 1000 * 1000ull)
#define EMPTYING (1ull << 63)
#define START_MASK 0x7fffffffull

static _Atomic uint64_t self_id;       /* see rlt__conns_identity */
static _Atomic uint64_t last_reclaim;  /* rlt__now() of the last look for dead holders */

static _Atomic uint32_t *open_of(struct rlt__rt_rule *r)
{
	return r->shared_open ? r->shared_open : &r->open;
}

uint32_t rlt__conns_open(struct rlt__rt_rule *r)
{
	return atomic_load_explicit(open_of(r), memory_order_relaxed);
}

/* The count as the page shows it (a copy in the rule's record, when published). */
static void note_open(struct rlt__rt_rule *r)
{
	rlt__pub_open_now(r, rlt__conns_open(r));
}

void rlt__conns_identity(void)
{
	pid_t pid = (pid_t)syscall(SYS_getpid);
	struct rlt__proc_stat ps;
	uint64_t start = 0;

	if (rlt__proc_stat(pid, &ps) == 0)
		start = ps.start;
	else
		start = 0; /* no /proc: the pid alone (a reused pid then passes for us) */
	atomic_store(&self_id, (uint64_t)(uint32_t)pid | (start & START_MASK) << 32);
}

/* The holder's process has ended (or is a zombie: its fds are closed already). */
static int holder_gone(uint64_t owner)
{
	pid_t pid = (pid_t)(uint32_t)owner;
	uint64_t want = owner >> 32 & START_MASK;
	struct rlt__proc_stat ps;

	if (rlt__proc_stat(pid, &ps) != 0 || ps.state == 'Z' || ps.state == 'X')
		return 1;
	return want && (ps.start & START_MASK) != want;
}

/* This process's holder entry of a shared rule, claimed on first use. NULL when the table is
 * full: the process's slots are then counted but cannot be taken back after its death. */
static struct rlt__shm_holder *mine(struct rlt__rt_rule *r)
{
	struct rlt__shm_holder *m = atomic_load_explicit(&r->mine, memory_order_acquire);
	uint64_t id = atomic_load_explicit(&self_id, memory_order_relaxed);

	if (m || !r->holders || !id)
		return m;
	for (unsigned i = 0; i < RLT_SHM_HOLDERS; i++) {
		struct rlt__shm_holder *h = &r->holders[i];
		uint64_t free_owner = 0;
		if (!atomic_compare_exchange_strong(&h->owner, &free_owner, id))
			continue;
		struct rlt__shm_holder *none = NULL;
		if (atomic_compare_exchange_strong(&r->mine, &none, h))
			return h;
		atomic_store(&h->owner, 0); /* another thread of ours claimed one first */
		return none;
	}
	return NULL;
}

/* Empties the entries of dead processes back into the count. Returns the slots taken back. */
static uint32_t reclaim(struct rlt__rt_rule *r)
{
	rlt_ns_t now = rlt__now();
	uint64_t last = atomic_load(&last_reclaim);
	uint64_t self = atomic_load(&self_id);
	uint32_t back = 0;

	if (last && now < last + RECLAIM_EVERY_NS)
		return 0;
	if (!atomic_compare_exchange_strong(&last_reclaim, &last, now))
		return 0; /* another thread of ours is looking */
	for (unsigned i = 0; i < RLT_SHM_HOLDERS; i++) {
		struct rlt__shm_holder *h = &r->holders[i];
		uint64_t o = atomic_load(&h->owner);
		if (!o || (o & EMPTYING) || o == self || !holder_gone(o))
			continue;
		if (!atomic_compare_exchange_strong(&h->owner, &o, o | EMPTYING))
			continue; /* another process is emptying it */
		uint32_t n = atomic_exchange(&h->count, 0);
		if (n) {
			atomic_fetch_sub(open_of(r), n);
			back += n;
		}
		atomic_store(&h->owner, 0);
	}
	if (back) {
		note_open(r);
		rlt__wake_all(open_of(r), 1);
	}
	return back;
}

int rlt__conns_take(struct rlt__rt_rule *r)
{
	uint32_t limit = (uint32_t)r->rule.amount_num;
	_Atomic uint32_t *open = open_of(r);

	/* Bounded: a second round only after dead holders gave slots back. */
	for (int round = 0; round < 2; round++) {
		uint32_t cur = atomic_load(open);
		while (cur < limit) {
			if (atomic_compare_exchange_weak(open, &cur, cur + 1)) {
				struct rlt__shm_holder *m = mine(r);
				if (m)
					atomic_fetch_add(&m->count, 1);
				note_open(r);
				return 1;
			}
		}
		if (!r->holders || !reclaim(r))
			return 0;
	}
	return 0;
}

void rlt__conns_release_rule(struct rlt__rt_rule *r)
{
	struct rlt__shm_holder *m = r->holders ? atomic_load(&r->mine) : NULL;

	if (m) {
		/* not below 0: a slot taken while the table was full is in no entry */
		uint32_t c = atomic_load(&m->count);
		while (c && !atomic_compare_exchange_weak(&m->count, &c, c - 1))
			;
	}
	atomic_fetch_sub(open_of(r), 1);
	note_open(r);
	if (r->rule.action == RLT_ACTION_DELAY || r->shared_open)
		rlt__wake_all(open_of(r), r->shared_open != NULL);
}

static void key_of(const struct rlt__rt_rule *r, const struct rlt__peer *peer,
                   struct rlt__key *k)
{
	rlt__key_of(r->rule.key, r->rule.key_prefix4, r->rule.key_prefix6, peer,
	            peer ? peer->port : 0, k);
}

/*
 * A dry-run rule's slot: always taken (the count goes over the limit, so that the release of
 * every connection it let through keeps it true), counted as reject would have refused when
 * the count was at the limit already. What delay would have waited is not counted: it would
 * depend on when the connections open then close, which did not happen.
 */
static int take_dry(struct rlt__ruleset *rs, struct rlt__rt_rule *r, const struct rlt__peer *peer,
                    rlt_ns_t now)
{
	int over;

	if (r->keytab) {
		struct rlt__key k;
		key_of(r, peer, &k);
		over = !rlt__keytab_count_take(r->keytab, &k, r->rule.amount_num, now);
		/* no place for the key at all (every key of its set holds connections): let
		 * through uncounted; its release then finds no key and changes nothing */
		if (over)
			rlt__keytab_count_take(r->keytab, &k, UINT64_MAX, now);
	} else {
		over = !rlt__conns_take(r);
		if (over) {
			struct rlt__shm_holder *m = mine(r);
			atomic_fetch_add(open_of(r), 1);
			if (m)
				atomic_fetch_add(&m->count, 1);
			note_open(r);
		}
	}
	/* the call is counted as admitted with the others (conns_try): here, only what reject
	 * would have done */
	if (over && rs->stats_on)
		rlt__count_add(&r->st->would_reject, 1);
	return 1;
}

/* One slot of rule r for this peer: the rule's count, or its key's. */
static int take_for(struct rlt__ruleset *rs, struct rlt__rt_rule *r, const struct rlt__peer *peer,
                    rlt_ns_t now)
{
	struct rlt__key k;

	if (r->rule.action == RLT_ACTION_DRY_RUN)
		return take_dry(rs, r, peer, now);
	if (!r->keytab)
		return rlt__conns_take(r);
	key_of(r, peer, &k);
	return rlt__keytab_count_take(r->keytab, &k, r->rule.amount_num, now);
}

void rlt__conns_release_peer(struct rlt__ruleset *rs, uint32_t mask,
                             const struct rlt__peer *peer)
{
	for (unsigned i = 0; i < rs->n[RLT_VAR_CONNS]; i++) {
		struct rlt__rt_rule *r = &rs->rules[RLT_VAR_CONNS][i];
		struct rlt__key k;
		if (!(mask & (1u << i)))
			continue;
		if (!r->keytab) {
			rlt__conns_release_rule(r);
			continue;
		}
		key_of(r, peer, &k);
		_Atomic uint32_t *word = rlt__keytab_count_release(r->keytab, &k);
		if (word)
			rlt__wake_all(word, 0);
	}
}

static int conns_try(struct rlt__ruleset *rs, uint32_t mask, const struct rlt__peer *peer,
                     struct rlt__conns_wait *w, rlt_ns_t now)
{
	uint32_t taken = 0;

	for (unsigned i = 0; i < rs->n[RLT_VAR_CONNS]; i++) {
		struct rlt__rt_rule *r = &rs->rules[RLT_VAR_CONNS][i];
		if (!(mask & (1u << i)))
			continue;
		if (take_for(rs, r, peer, now)) {
			taken |= 1u << i;
			continue;
		}
		/* All or none: a call that waits holds no slot meanwhile, so that two calls
		 * each holding what the other waits for cannot both wait out their max-wait. */
		rlt__conns_release_peer(rs, taken, peer);
		if (!w->waiting) {
			w->waiting = 1;
			w->since = now;
		}
		int expired = r->rule.max_wait_ns != RLT_NS_NEVER &&
		              now - w->since >= r->rule.max_wait_ns;
		if (r->rule.action == RLT_ACTION_REJECT || expired) {
			rlt__count_rejected(rs, r);
			*w = (struct rlt__conns_wait){0};
			return -r->rule.err;
		}
		w->rule = i;
		w->deadline = r->rule.max_wait_ns == RLT_NS_NEVER ? RLT_NS_NEVER
		                                                   : w->since + r->rule.max_wait_ns;
		return 1;
	}
	for (unsigned i = 0; i < rs->n[RLT_VAR_CONNS]; i++)
		if (mask & (1u << i)) {
			rlt__count_admitted(rs, &rs->rules[RLT_VAR_CONNS][i],
			                    w->waiting ? now - w->since : 0);
			rlt__count_units(rs, &rs->rules[RLT_VAR_CONNS][i], 1);
		}
	*w = (struct rlt__conns_wait){0};
	return 0;
}

int rlt__conns_try(struct rlt__ruleset *rs, uint32_t mask, struct rlt__conns_wait *w,
                   rlt_ns_t now)
{
	return conns_try(rs, mask, NULL, w, now);
}

/* A keyed rule's wait for a close of this peer's key (or w->deadline). The key's count word
 * in its slot, with this thread registered on it as a waiter so that the key keeps its slot:
 * a futex on the count's low 32 bits, woken by the release (rlt__conns_release_peer). A key
 * with no slot to be had (every key of its set holds connections or waiters: a table far too
 * small for its clients) is polled every KEY_POLL_NS instead. */
#define KEY_POLL_NS (10 * 1000 * 1000ull)
static void wait_key(struct rlt__rt_rule *r, const struct rlt__peer *peer, rlt_ns_t until)
{
	struct rlt__keyslot *slot;
	struct rlt__key k;
	uint32_t cur;
	rlt_ns_t now = rlt__now();

	key_of(r, peer, &k);
	_Atomic uint32_t *word = rlt__keytab_count_watch(r->keytab, &k, now, &slot, &cur);
	if (!word) {
		rlt__sleep_until(until > now + KEY_POLL_NS ? now + KEY_POLL_NS : until);
		return;
	}
	if (cur >= r->rule.amount_num)
		rlt__wait_change(word, cur, until, 0);
	rlt__keytab_count_unwatch(slot);
}

int rlt__conns_acquire(struct rlt__ruleset *rs, uint32_t mask, int *err)
{
	return rlt__conns_acquire_peer(rs, mask, NULL, err);
}

int rlt__conns_acquire_peer(struct rlt__ruleset *rs, uint32_t mask, const struct rlt__peer *peer,
                            int *err)
{
	struct rlt__conns_wait w = {0};
	int rc;

	/* Bounded by the max-wait (rlt__conns_try rejects after it); a delay without one waits
	 * for a close, as rlthrottle(7) RULES says. */
	while ((rc = conns_try(rs, mask, peer, &w, rlt__now())) == 1) {
		struct rlt__rt_rule *r = &rs->rules[RLT_VAR_CONNS][w.rule];
		if (r->keytab) {
			wait_key(r, peer, w.deadline);
			continue;
		}
		uint32_t cur = atomic_load(open_of(r));
		rlt_ns_t until = w.deadline, now = rlt__now();
		if (r->holders && now + WAIT_SLICE_NS < until)
			until = now + WAIT_SLICE_NS; /* then look for dead holders */
		if (cur >= (uint32_t)r->rule.amount_num)
			rlt__wait_change(open_of(r), cur, until, r->shared_open != NULL);
	}
	if (rc < 0) {
		*err = -rc;
		return -1;
	}
	return 0;
}

void rlt__conns_release(struct rlt__ruleset *rs, uint32_t mask)
{
	for (unsigned i = 0; i < rs->n[RLT_VAR_CONNS]; i++)
		if (mask & (1u << i))
			rlt__conns_release_rule(&rs->rules[RLT_VAR_CONNS][i]);
}

void rlt__conns_forked(struct rlt__ruleset *rs, const uint32_t inherited[RLT_MAX_RULES_PER_VAR])
{
	for (unsigned i = 0; i < rs->n[RLT_VAR_CONNS]; i++) {
		struct rlt__rt_rule *r = &rs->rules[RLT_VAR_CONNS][i];
		if (!r->holders)
			continue; /* process scope: the child's copy of the count has them */
		atomic_store(&r->mine, NULL); /* that entry is the parent's */
		if (!inherited[i])
			continue;
		/* open already, so counted even over the limit */
		atomic_fetch_add(open_of(r), inherited[i]);
		struct rlt__shm_holder *m = mine(r);
		if (m)
			atomic_fetch_add(&m->count, inherited[i]);
	}
}
