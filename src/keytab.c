/*
 * keytab.c: the keyed table of a rule, in process memory or in a shared segment (see keytab.h
 * for its shape and bounds).
 */
#include "keytab.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc_stat.h"

_Static_assert(sizeof(struct rlt__keyslot) == 64, "a slot is one cache line");
_Static_assert(sizeof(struct rlt__keytab_area) == 128, "keytab.h states a 128-byte head");

/* The last-use time is stored only when it moved this much: a hit then stores nothing. */
#define LAST_GRAIN_NS 1000000ull


static uint64_t mix(uint64_t x)
{
	x ^= x >> 32;
	x *= 0xd6e8feb86659fd93ull;
	x ^= x >> 32;
	x *= 0xd6e8feb86659fd93ull;
	x ^= x >> 32;
	return x;
}

static uint64_t hash_of(const struct rlt__keytab *t, const struct rlt__key *k)
{
	/* Three independent multiplies, then one finalizer: each odd multiplier is a bijection,
	 * so two keys that differ in one word never meet before the mix, and the seed (unknown
	 * to clients) is in the mix's input. */
	return mix(((k->w[0] ^ t->seed) * 0x9e3779b97f4a7c15ull) ^
	           (k->w[1] * 0xc2b2ae3d27d4eb4full) ^ (k->w[2] * 0x165667b19e3779f9ull));
}

/* The set of hash h: the index of its first slot, and its ways. No division: a
 * multiply-shift. */
static uint64_t set_of(const struct rlt__keytab *t, uint64_t h, uint32_t *set, uint32_t *ways)
{
	uint32_t i = (uint32_t)(((h >> 32) * t->nsets) >> 32);

	*set = i;
	*ways = t->ways + (i < t->extra);
	return (uint64_t)i * t->ways + (i < t->extra ? i : t->extra);
}

static size_t round64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

size_t rlt__keytab_bytes(uint32_t keys)
{
	uint32_t nsets = (keys + RLT_KEYTAB_WAYS - 1) / RLT_KEYTAB_WAYS;

	return sizeof(struct rlt__keytab_area) + round64((size_t)nsets * sizeof(uint64_t)) +
	       round64((size_t)keys * sizeof(uint64_t)) + (size_t)keys * sizeof(struct rlt__keyslot);
}

/* Only states of one word valid when zeroed can be reset by one store (keytab.h). */
static int engine_fits(const struct rlt_params *p)
{
	return !p || ((p->algo == RLT_ALGO_TOKEN || p->algo == RLT_ALGO_LEAKY ||
	               p->algo == RLT_ALGO_FIXED_WINDOW) &&
	              rlt_state_size(p) == sizeof(uint64_t));
}

void rlt__keytab_area_init(void *base, uint32_t keys, uint64_t seed)
{
	struct rlt__keytab_area *a = base;

	/* zeroed memory: every slot free, every lock open, every state full */
	a->keys = keys;
	a->seed = mix(seed ^ 0x9e3779b97f4a7c15ull);
}

/* Points handle t at the area at base. */
static void bind_area(struct rlt__keytab *t, void *base, const struct rlt_params *p, int count_units)
{
	struct rlt__keytab_area *a = base;
	uint32_t keys = a->keys;

	atomic_init(&t->p, p);
	t->a = a;
	t->keys = keys;
	t->nsets = (keys + RLT_KEYTAB_WAYS - 1) / RLT_KEYTAB_WAYS;
	t->ways = keys / t->nsets;
	t->extra = keys % t->nsets;
	t->seed = a->seed;
	t->count_units = count_units;
	t->locks = (_Atomic uint64_t *)((char *)base + sizeof *a);
	t->fps = (_Atomic uint64_t *)((char *)t->locks + round64((size_t)t->nsets * sizeof(uint64_t)));
	t->slots = (struct rlt__keyslot *)((char *)base + rlt__keytab_bytes(keys) -
	                                   (size_t)keys * sizeof *t->slots);
}

struct rlt__keytab *rlt__keytab_new(const struct rlt_params *p, uint32_t keys, uint64_t seed,
                                    int count_units)
{
	size_t head = round64(sizeof(struct rlt__keytab));
	size_t bytes = head + rlt__keytab_bytes(keys);
	struct rlt__keytab *t;
	void *m;

	if (keys == 0 || keys > RLT_KEYS_MAX || !engine_fits(p))
		return NULL;
	m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	t = m;
	rlt__keytab_area_init((char *)m + head, keys, seed);
	bind_area(t, (char *)m + head, p, count_units);
	t->me = 1;
	t->bytes = bytes;
	return t;
}

/* Who this process is in a segment's lock words: as the RLT_CONNS holders (conns.c), its pid
 * and start time, so that a later process given the same pid is not taken for it. */
static uint64_t identity(void)
{
	pid_t pid = (pid_t)syscall(SYS_getpid);
	struct rlt__proc_stat ps;
	uint64_t start = rlt__proc_stat(pid, &ps) == 0 ? ps.start & 0x7fffffffull : 0;

	return (uint64_t)(uint32_t)pid | start << 32;
}

struct rlt__keytab *rlt__keytab_attach(void *base, const struct rlt_params *p, uint32_t keys,
                                       int count_units)
{
	struct rlt__keytab *t;
	void *m;

	if (keys == 0 || keys > RLT_KEYS_MAX || !engine_fits(p) ||
	    ((struct rlt__keytab_area *)base)->keys != keys || ((uintptr_t)base & 63))
		return NULL;
	m = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	t = m;
	bind_area(t, base, p, count_units);
	t->shared = 1;
	t->me = identity();
	return t;
}

void rlt__keytab_free(struct rlt__keytab *t)
{
	if (t)
		munmap(t, t->bytes ? t->bytes : sizeof *t);
}

/* Whether slot s holds k (its sequence seq read before, even). */
static int holds(struct rlt__keyslot *s, const struct rlt__key *k, uint64_t seq)
{
	/* Acquire loads (plain loads on x86) keep the second read of the sequence after them:
	 * the key words were read between two equal even sequences, one writer's whole key. */
	if (atomic_load_explicit(&s->k[0], memory_order_acquire) != k->w[0] ||
	    atomic_load_explicit(&s->k[1], memory_order_acquire) != k->w[1] ||
	    atomic_load_explicit(&s->k[2], memory_order_acquire) != k->w[2])
		return 0;
	return atomic_load_explicit(&s->seq, memory_order_relaxed) == seq;
}

/* A set's fingerprints are one or two cache lines: only a slot whose fingerprint matches is
 * read (a hint: the key and sequence decide). */
static struct rlt__keyslot *lookup(struct rlt__keytab *t, uint64_t start, uint32_t ways,
                                   const struct rlt__key *k, uint64_t fp, uint64_t *seq)
{
	for (uint32_t i = 0; i < ways; i++) {
		if (atomic_load_explicit(&t->fps[start + i], memory_order_acquire) != fp)
			continue;
		struct rlt__keyslot *s = &t->slots[start + i];
		uint64_t q = atomic_load_explicit(&s->seq, memory_order_acquire);
		if (!(q & 1) && holds(s, k, q)) {
			*seq = q;
			return s;
		}
	}
	return NULL;
}

/* Whether dropping the key of slot s changes no decision: its budget is full again (or, for
 * counts, it holds no connection). */
static int idle(const struct rlt__keytab *t, struct rlt__keyslot *s, rlt_ns_t now)
{
	const struct rlt_params *p = atomic_load_explicit(&t->p, memory_order_acquire);
	uint64_t full;

	if (!p)
		return atomic_load_explicit(&s->state, memory_order_relaxed) == 0;
	full = p->algo == RLT_ALGO_FIXED_WINDOW ? p->limit : p->burst;
	return rlt_available(p, (void *)&s->state, now) >= full;
}

/* Under the set's lock: the way a new key takes (see keytab.h), NULL when none may go. */
static struct rlt__keyslot *victim(struct rlt__keytab *t, struct rlt__keyslot *set,
                                   uint32_t ways, rlt_ns_t now, _Atomic uint64_t **count)
{
	struct rlt__keyslot *oldest = NULL, *oldest_idle = NULL;
	uint64_t lo = UINT64_MAX, lo_idle = UINT64_MAX;

	for (uint32_t i = 0; i < ways; i++) {
		struct rlt__keyslot *s = &set[i];
		uint64_t last = atomic_load_explicit(&s->last, memory_order_relaxed);
		if (atomic_load_explicit(&s->k[0], memory_order_relaxed) == 0) {
			*count = &t->a->tracked;
			return s;
		}
		if (idle(t, s, now)) {
			if (last < lo_idle) {
				lo_idle = last;
				oldest_idle = s;
			}
		} else if (last < lo) {
			lo = last;
			oldest = s;
		}
	}
	if (oldest_idle) {
		*count = &t->a->expired;
		return oldest_idle;
	}
	*count = &t->a->evictions;
	/* a key holding connections is never dropped; one holding a lease loses it */
	return atomic_load_explicit(&t->p, memory_order_relaxed) || t->leases ? oldest : NULL;
}

/* The mirror follows the area's count: by one in process scope; in a segment, where others
 * insert too, to the count as this insert left it (the rule's, not this process's share). */
static void mirror(struct rlt__keytab *t, _Atomic uint64_t *count, uint64_t n)
{
	_Atomic uint64_t *m = count == &t->a->tracked     ? &(*t->mirror)->keys_tracked
	                      : count == &t->a->evictions ? &(*t->mirror)->keys_evicted
	                                                  : NULL;

	if (m && t->shared)
		atomic_store_explicit(m, n, memory_order_relaxed);
	else if (m)
		atomic_fetch_add_explicit(m, 1, memory_order_relaxed);
}

/* Whether the process of lock word `owner` (pid | start time << 32) is gone: no such pid, or a
 * zombie (it runs no more code), or a later process with its pid. A process whose /proc entry
 * cannot be read but that exists counts as alive: a lock is never taken from a live holder. */
static int owner_gone(uint64_t owner)
{
	pid_t pid = (pid_t)(uint32_t)owner;
	uint64_t start = owner >> 32;
	struct rlt__proc_stat ps;

	if (pid <= 0)
		return 0;
	if (kill(pid, 0) != 0)
		return errno == ESRCH;
	if (rlt__proc_stat(pid, &ps) != 0)
		return 0;
	return ps.state == 'Z' || ps.state == 'X' || (start && (ps.start & 0x7fffffffull) != start);
}

/* Under a lock taken over from a dead holder: what its insert left half done is undone. A slot
 * left odd is freed (a reader skips it meanwhile; its fingerprint was the old key's, if any,
 * so it says whether the slot was counted); a whole key without its fingerprint (cut off just
 * before that store) gets it, so that it is found rather than put in twice. */
static void repair(struct rlt__keytab *t, uint64_t start, uint32_t ways)
{
	for (uint32_t i = 0; i < ways; i++) {
		struct rlt__keyslot *s = &t->slots[start + i];
		_Atomic uint64_t *fp = &t->fps[start + i];
		uint64_t q = atomic_load_explicit(&s->seq, memory_order_acquire);
		struct rlt__key k;

		if (q & 1) {
			if (atomic_exchange_explicit(fp, 0, memory_order_relaxed) != 0)
				atomic_fetch_sub_explicit(&t->a->tracked, 1, memory_order_relaxed);
			atomic_store_explicit(&s->k[0], 0, memory_order_relaxed);
			atomic_store_explicit(&s->k[1], 0, memory_order_relaxed);
			atomic_store_explicit(&s->k[2], 0, memory_order_relaxed);
			atomic_store_explicit(&s->state, 0, memory_order_relaxed);
			atomic_store_explicit(&s->units, 0, memory_order_relaxed);
			atomic_store_explicit(&s->seq, q + 1, memory_order_seq_cst);
			continue;
		}
		k.w[0] = atomic_load_explicit(&s->k[0], memory_order_relaxed);
		k.w[1] = atomic_load_explicit(&s->k[1], memory_order_relaxed);
		k.w[2] = atomic_load_explicit(&s->k[2], memory_order_relaxed);
		if (k.w[0] != 0)
			atomic_store_explicit(fp, hash_of(t, &k) | 1, memory_order_release);
	}
}

/* Takes the insert lock of the set at start (1), or not within the bounded spin (0). In a
 * segment, a lock whose holder is gone is taken over and its set repaired: the only system
 * calls of an insert, made only when the spin ran out. */
static int lock_set(struct rlt__keytab *t, _Atomic uint64_t *lock, uint64_t start, uint32_t ways)
{
	uint64_t held;

	for (int spins = 0; spins < RLT__KEYTAB_SPINS; spins++) {
		uint64_t free_ = 0;
		if (atomic_load_explicit(lock, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_weak_explicit(lock, &free_, t->me, memory_order_acquire,
		                                          memory_order_relaxed)) {
			atomic_fetch_add_explicit(&t->inserting, 1, memory_order_relaxed);
			return 1;
		}
		rlt__cpu_relax();
	}
	held = atomic_load_explicit(lock, memory_order_relaxed);
	if (!t->shared || held == 0 || held == t->me || !owner_gone(held))
		return 0;
	/* one taker: the others see the word changed and keep their spill */
	if (!atomic_compare_exchange_strong_explicit(lock, &held, t->me, memory_order_acquire,
	                                             memory_order_relaxed))
		return 0;
	atomic_fetch_add_explicit(&t->inserting, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&t->a->repairs, 1, memory_order_relaxed);
	repair(t, start, ways);
	return 1;
}

struct rlt__keyslot *rlt__keytab_find(struct rlt__keytab *t, const struct rlt__key *k,
                                      rlt_ns_t now, int insert, uint64_t *seq)
{
	uint32_t set_i, ways;
	uint64_t h = hash_of(t, k), fp = h | 1, start = set_of(t, h, &set_i, &ways);
	struct rlt__keyslot *set = &t->slots[start], *s;
	_Atomic uint64_t *lock = &t->locks[set_i];
	_Atomic uint64_t *count = NULL;
	uint64_t q;

	s = lookup(t, start, ways, k, fp, seq);
	if (s || !insert)
		return s;
	if (!lock_set(t, lock, start, ways))
		return NULL;
	/* Another thread may have put the key in while this one waited. */
	s = lookup(t, start, ways, k, fp, seq);
	if (!s) {
		s = victim(t, set, ways, now, &count);
		if (s) {
			uint64_t zero = 0;
			q = atomic_load_explicit(&s->seq, memory_order_relaxed);
			atomic_store_explicit(&s->seq, q + 1, memory_order_seq_cst);
			/* A count may have been taken on the old key since it was found idle: then
			 * it stays (its taker sees the sequence move, gives the count back and looks
			 * again), and this call gets no slot. */
			if (!atomic_load_explicit(&t->p, memory_order_relaxed) && !t->leases &&
			    !atomic_compare_exchange_strong(&s->state, &zero, 0)) {
				atomic_store_explicit(&s->seq, q + 2, memory_order_seq_cst);
				atomic_fetch_sub_explicit(&t->inserting, 1, memory_order_relaxed);
				atomic_store_explicit(lock, 0, memory_order_release);
				return NULL;
			}
			/* release stores: the odd sequence is seen before any word of the new key */
			atomic_store_explicit(&s->k[0], k->w[0], memory_order_release);
			atomic_store_explicit(&s->k[1], k->w[1], memory_order_release);
			atomic_store_explicit(&s->k[2], k->w[2], memory_order_release);
			/* A count is 0 already (the compare-exchange above), and must not be stored
			 * again: a taker or waiter that found the old key adds to it now and, seeing
			 * the sequence move, takes its add back, which after a store of 0 would wrap
			 * the word (a key refused for good). An engine's state is reset. */
			if (atomic_load_explicit(&t->p, memory_order_relaxed))
				atomic_store_explicit(&s->state, 0, memory_order_relaxed);
			atomic_store_explicit(&s->units, 0, memory_order_relaxed);
			atomic_store_explicit(&s->last, now, memory_order_relaxed);
			atomic_store_explicit(&s->seq, q + 2, memory_order_seq_cst);
			/* after the key: a reader that misses meanwhile takes the lock, and finds it */
			atomic_store_explicit(&t->fps[s - t->slots], fp, memory_order_release);
			*seq = q + 2;
			uint64_t n = atomic_fetch_add_explicit(count, 1, memory_order_relaxed) + 1;
			if (t->mirror)
				mirror(t, count, n);
		}
	}
	atomic_fetch_sub_explicit(&t->inserting, 1, memory_order_relaxed);
	atomic_store_explicit(lock, 0, memory_order_release);
	return s;
}

enum rlt_verdict rlt__keytab_decide(struct rlt__keytab *t, const struct rlt_params *p,
                                    const struct rlt__key *k, rlt_ns_t now, uint64_t cost, enum rlt_mode mode,
                                    rlt_ns_t *at, void **state)
{
	enum rlt_verdict v;

	for (int tries = 0; tries < RLT__KEYTAB_RETRIES; tries++) {
		uint64_t seq, last;
		struct rlt__keyslot *s = rlt__keytab_find(t, k, now, 1, &seq);
		if (!s)
			break;
		v = rlt_decide(p, (void *)&s->state, now, cost, mode, at);
		if (rlt__keytab_still(s, seq)) {
			last = atomic_load_explicit(&s->last, memory_order_relaxed);
			if (now > last + LAST_GRAIN_NS)
				atomic_store_explicit(&s->last, now, memory_order_relaxed);
			/* a load and a store, not an atomic add: the busiest keys are a statistic,
			 * and two threads charging one key at once may lose one's units there
			 * (never the budget's) rather than make every call pay a locked add */
			if (t->count_units && v != RLT_DENY)
				atomic_store_explicit(
					&s->units,
					atomic_load_explicit(&s->units, memory_order_relaxed) + cost,
					memory_order_relaxed);
			*state = (void *)&s->state;
			return v;
		}
		/* The slot went to another key while this call decided on it: give that key back
		 * what was taken, and look again. */
		if (v != RLT_DENY)
			rlt_refund(p, (void *)&s->state, *at, cost);
	}
	atomic_fetch_add_explicit(&t->a->spills, 1, memory_order_relaxed);
	*state = (void *)&t->a->spill.state;
	return rlt_decide(p, *state, now, cost, mode, at);
}

uint64_t rlt__keytab_available(struct rlt__keytab *t, const struct rlt_params *p,
                               const struct rlt__key *k, rlt_ns_t now)
{
	uint64_t seq, n;
	struct rlt__keyslot *s = rlt__keytab_find(t, k, now, 0, &seq);
	_Atomic uint64_t fresh = 0;

	if (!s)
		return rlt_available(p, (void *)&fresh, now);
	n = rlt_available(p, (void *)&s->state, now);
	return rlt__keytab_still(s, seq) ? n : rlt_available(p, (void *)&fresh, now);
}

size_t rlt__keytab_top(struct rlt__keytab *t, struct rlt__keytab_top *out, size_t n)
{
	size_t got = 0;

	for (uint32_t i = 0; i < t->keys && n > 0; i++) {
		struct rlt__keyslot *s = &t->slots[i];
		struct rlt__keytab_top e;
		uint64_t q;
		size_t j;

		/* the fingerprints first: a free slot's page need not be read at all */
		if (atomic_load_explicit(&t->fps[i], memory_order_relaxed) == 0)
			continue;
		q = atomic_load_explicit(&s->seq, memory_order_acquire);
		if (q & 1)
			continue;
		e.key.w[0] = atomic_load_explicit(&s->k[0], memory_order_acquire);
		e.key.w[1] = atomic_load_explicit(&s->k[1], memory_order_acquire);
		e.key.w[2] = atomic_load_explicit(&s->k[2], memory_order_acquire);
		e.units = atomic_load_explicit(&s->units, memory_order_acquire);
		e.slot = i;
		e.seq = q;
		if (e.key.w[0] == 0 || atomic_load_explicit(&s->seq, memory_order_relaxed) != q)
			continue;
		/* insertion into a list kept sorted, most first, cut at n */
		if (got == n && e.units <= out[n - 1].units)
			continue;
		j = got < n ? got++ : n - 1;
		while (j > 0 && out[j - 1].units < e.units) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = e;
	}
	return got;
}

void rlt__keytab_forked(struct rlt__keytab *t)
{
	uint64_t tracked = 0;

	/* A segment's locks held by the parent's threads are the parent's, and it lives on. */
	if (t->shared) {
		t->me = identity();
		atomic_store_explicit(&t->inserting, 0, memory_order_relaxed);
		return;
	}
	/* Only the forking thread lives on: if no insert was under way, nothing is held. */
	if (atomic_load_explicit(&t->inserting, memory_order_relaxed) == 0)
		return;
	atomic_store_explicit(&t->inserting, 0, memory_order_relaxed);
	for (uint32_t i = 0; i < t->nsets; i++)
		atomic_store_explicit(&t->locks[i], 0, memory_order_relaxed);
	for (uint32_t i = 0; i < t->keys; i++) {
		struct rlt__keyslot *s = &t->slots[i];
		uint64_t q = atomic_load_explicit(&s->seq, memory_order_relaxed);
		if (q & 1) {
			atomic_store_explicit(&t->fps[i], 0, memory_order_relaxed);
			atomic_store_explicit(&s->k[0], 0, memory_order_relaxed);
			atomic_store_explicit(&s->seq, q + 1, memory_order_relaxed);
		}
		tracked += atomic_load_explicit(&s->k[0], memory_order_relaxed) != 0;
	}
	/* an insert cut off by the fork may or may not have counted itself: count again */
	atomic_store_explicit(&t->a->tracked, tracked, memory_order_relaxed);
	if (t->mirror)
		atomic_store_explicit(&(*t->mirror)->keys_tracked, tracked, memory_order_relaxed);
}
