/*
 * keytab_count.c: an open count per key value (RLT_CONNS with key=) in a keytab.h table. See
 * keytab_count.h.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "keytab.h"
#include "keytab_count.h"

/* A count table's state word: the open count in its low 32 bits, the threads waiting for the
 * key's count to drop in its high 32 (so that a key with waiters is not idle, never replaced). */
#define COUNT_LOW 0xffffffffull
#define COUNT_WAITER (1ull << 32)

/* The low half of a count word, which a futex can wait on: the word's first four bytes on a
 * little-endian machine (x86, arm64), its last four on a big-endian one. */
static _Atomic uint32_t *count_low(struct rlt__keyslot *s)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return (_Atomic uint32_t *)((char *)&s->state + 4);
#else
	return (_Atomic uint32_t *)(void *)&s->state;
#endif
}

int rlt__keytab_count_take(struct rlt__keytab *t, const struct rlt__key *k, uint64_t limit,
                           rlt_ns_t now)
{
	for (int tries = 0; tries < RLT__KEYTAB_RETRIES; tries++) {
		uint64_t seq;
		struct rlt__keyslot *s = rlt__keytab_find(t, k, now, 1, &seq);
		if (!s)
			return 0;
		uint64_t cur = atomic_load(&s->state);
		do {
			if ((cur & COUNT_LOW) >= limit)
				return 0;
		} while (!atomic_compare_exchange_weak(&s->state, &cur, cur + 1));
		if (rlt__keytab_still(s, seq)) {
			atomic_store_explicit(&s->last, now, memory_order_relaxed);
			if (t->count_units) /* connections opened by the key (busiest keys) */
				atomic_fetch_add_explicit(&s->units, 1, memory_order_relaxed);
			return 1;
		}
		atomic_fetch_sub(&s->state, 1); /* the slot was being given to another key */
	}
	return 0;
}

_Atomic uint32_t *rlt__keytab_count_release(struct rlt__keytab *t, const struct rlt__key *k)
{
	uint64_t seq;
	struct rlt__keyslot *s = NULL;

	/* Bounded: the key is there (it holds a count), at worst for a moment behind an odd
	 * sequence (an insert that found it busy and left it as it was). */
	for (int spins = 0; !s && spins < RLT__KEYTAB_SPINS; spins++) {
		s = rlt__keytab_find(t, k, 0, 0, &seq);
		if (!s)
			rlt__cpu_relax();
	}
	if (s) {
		uint64_t c = atomic_load(&s->state);
		while ((c & COUNT_LOW) && !atomic_compare_exchange_weak(&s->state, &c, c - 1))
			;
		/* The waiters as the decrement saw them: one that registers after it reads the
		 * lower count before it sleeps (rlt__keytab_count_watch), so none is missed. */
		if ((c & COUNT_LOW) && c >= COUNT_WAITER)
			return count_low(s);
	}
	return NULL;
}

_Atomic uint32_t *rlt__keytab_count_watch(struct rlt__keytab *t, const struct rlt__key *k,
                                          rlt_ns_t now, struct rlt__keyslot **slot,
                                          uint32_t *val)
{
	for (int tries = 0; tries < RLT__KEYTAB_RETRIES; tries++) {
		uint64_t seq;
		struct rlt__keyslot *s = rlt__keytab_find(t, k, now, 1, &seq);
		if (!s)
			return NULL;
		/* Registered first, then checked: a slot taken over meanwhile (only a key holding
		 * nothing is, see victim) is left at once, its new key's word as it was. */
		uint64_t c = atomic_fetch_add(&s->state, COUNT_WAITER) + COUNT_WAITER;
		if (rlt__keytab_still(s, seq)) {
			*slot = s;
			*val = (uint32_t)(c & COUNT_LOW);
			return count_low(s);
		}
		atomic_fetch_sub(&s->state, COUNT_WAITER);
	}
	return NULL;
}

uint32_t rlt__keytab_count(struct rlt__keytab *t, const struct rlt__key *k)
{
	uint64_t seq;
	struct rlt__keyslot *s = rlt__keytab_find(t, k, 0, 0, &seq);

	return s ? (uint32_t)(atomic_load(&s->state) & COUNT_LOW) : 0;
}

void rlt__keytab_count_unwatch(struct rlt__keyslot *s)
{
	atomic_fetch_sub(&s->state, COUNT_WAITER);
}
