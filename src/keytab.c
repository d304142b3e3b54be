/*
 * keytab.c: the keyed table of a process-scope rule (see keytab.h for its shape and bounds).
 */
#include "keytab.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

_Static_assert(sizeof(struct rlt__keyslot) == 64, "a slot is one cache line");

/* Spins before an insert gives up on its set's lock and charges the overflow budget. An insert
 * holds it for some fifty loads and stores; only a preempted holder or a signal handler that
 * interrupted it on the same thread makes a call wait this long. */
#define LOCK_SPINS 2000
/* Look-ups made again when the slot changed hands during a decision. */
#define RETRIES 4
/* The last-use time is stored only when it moved this much: a hit then stores nothing. */
#define LAST_GRAIN_NS 1000000ull

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

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
	return mix(mix(mix(k->w[0] ^ t->seed) ^ k->w[1]) ^ k->w[2]);
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

	return round64(sizeof(struct rlt__keytab)) + round64((size_t)nsets * sizeof(uint32_t)) +
	       round64((size_t)keys * sizeof(uint64_t)) + (size_t)keys * sizeof(struct rlt__keyslot);
}

struct rlt__keytab *rlt__keytab_new(const struct rlt_params *p, uint32_t keys, uint64_t seed,
                                    int count_units)
{
	size_t bytes = rlt__keytab_bytes(keys);
	size_t head = (sizeof(struct rlt__keytab) + 63) & ~(size_t)63;
	struct rlt__keytab *t;
	void *m;

	if (keys == 0 || keys > RLT_KEYS_MAX)
		return NULL;
	/* Only states of one word valid when zeroed can be reset by one store (keytab.h). */
	if (p && p->algo != RLT_ALGO_TOKEN && p->algo != RLT_ALGO_LEAKY &&
	    p->algo != RLT_ALGO_FIXED_WINDOW)
		return NULL;
	if (p && rlt_state_size(p) != sizeof(uint64_t))
		return NULL;
	m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	/* Fresh anonymous pages are zero: every slot free, every lock open, every state full. */
	t = m;
	atomic_init(&t->p, p);
	t->keys = keys;
	t->nsets = (keys + RLT_KEYTAB_WAYS - 1) / RLT_KEYTAB_WAYS;
	t->ways = keys / t->nsets;
	t->extra = keys % t->nsets;
	t->seed = mix(seed ^ 0x9e3779b97f4a7c15ull);
	t->count_units = count_units;
	t->locks = (_Atomic uint32_t *)((char *)m + head);
	t->fps = (_Atomic uint64_t *)((char *)t->locks + round64((size_t)t->nsets * sizeof(uint32_t)));
	t->slots = (struct rlt__keyslot *)((char *)m + bytes - (size_t)keys * sizeof *t->slots);
	t->bytes = bytes;
	return t;
}

struct rlt__keytab *rlt__keytab_copy(const struct rlt__keytab *t, const struct rlt_params *p)
{
	void *m = mmap(NULL, t->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rlt__keytab *c = m;

	if (m == MAP_FAILED)
		return NULL;
	memcpy(m, t, t->bytes);
	/* the parts are where they were, from the copy's start */
	c->locks = (_Atomic uint32_t *)((char *)m + ((const char *)t->locks - (const char *)t));
	c->fps = (_Atomic uint64_t *)((char *)m + ((const char *)t->fps - (const char *)t));
	c->slots = (struct rlt__keyslot *)((char *)m + ((const char *)t->slots - (const char *)t));
	atomic_init(&c->p, p);
	c->mirror = NULL;
	return c;
}

void rlt__keytab_free(struct rlt__keytab *t)
{
	if (t)
		munmap(t, t->bytes);
}

void rlt__key_of(enum rlt_key kind, unsigned prefix4, unsigned prefix6,
                 const struct rlt__peer *peer, uint16_t port, struct rlt__key *k)
{
	uint8_t a[16] = { 0 };
	unsigned bits = 0, kk = RLT_KEYKIND_NONE;

	if (kind == RLT_KEY_PORT) {
		k->w[0] = RLT_KEYKIND_PORT | (uint64_t)port << 8;
		k->w[1] = k->w[2] = 0;
		return;
	}
	if (peer && peer->af == AF_INET) {
		kk = RLT_KEYKIND_V4;
		bits = prefix4 > 32 ? 32 : prefix4;
	} else if (peer && peer->af == AF_INET6) {
		kk = RLT_KEYKIND_V6;
		bits = prefix6 > 128 ? 128 : prefix6;
	}
	if (kk != RLT_KEYKIND_NONE) {
		memcpy(a, peer->addr, (bits + 7) / 8);
		if (bits % 8)
			a[bits / 8] &= (uint8_t)(0xff00u >> (bits % 8));
	}
	k->w[0] = kk;
	memcpy(&k->w[1], a, 8);
	memcpy(&k->w[2], a + 8, 8);
}

int rlt__key_format(const struct rlt__key *k, unsigned prefix4, unsigned prefix6, char *buf,
                    size_t len)
{
	char addr[INET6_ADDRSTRLEN];
	uint8_t a[16];
	unsigned kind = (unsigned)(k->w[0] & 0xff);

	memcpy(a, &k->w[1], 8);
	memcpy(a + 8, &k->w[2], 8);
	if (kind == RLT_KEYKIND_PORT)
		return snprintf(buf, len, "port %u", (unsigned)(k->w[0] >> 8 & 0xffff));
	if (kind == RLT_KEYKIND_V4 && inet_ntop(AF_INET, a, addr, sizeof addr))
		return prefix4 >= 32 ? snprintf(buf, len, "%s", addr)
		                     : snprintf(buf, len, "%s/%u", addr, prefix4);
	if (kind == RLT_KEYKIND_V6 && inet_ntop(AF_INET6, a, addr, sizeof addr))
		return prefix6 >= 128 ? snprintf(buf, len, "%s", addr)
		                      : snprintf(buf, len, "%s/%u", addr, prefix6);
	return snprintf(buf, len, "(no address)");
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
			*count = &t->tracked;
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
		*count = &t->expired;
		return oldest_idle;
	}
	*count = &t->evictions;
	/* a key holding connections is never dropped */
	return atomic_load_explicit(&t->p, memory_order_relaxed) ? oldest : NULL;
}

struct rlt__keyslot *rlt__keytab_find(struct rlt__keytab *t, const struct rlt__key *k,
                                      rlt_ns_t now, int insert, uint64_t *seq)
{
	uint32_t set_i, ways;
	uint64_t h = hash_of(t, k), fp = h | 1, start = set_of(t, h, &set_i, &ways);
	struct rlt__keyslot *set = &t->slots[start], *s;
	_Atomic uint32_t *lock = &t->locks[set_i];
	_Atomic uint64_t *count = NULL;
	uint64_t q;
	int spins = 0;

	s = lookup(t, start, ways, k, fp, seq);
	if (s || !insert)
		return s;
	for (;;) {
		uint32_t free_ = 0;
		if (atomic_load_explicit(lock, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_weak_explicit(lock, &free_, 1, memory_order_acquire,
		                                          memory_order_relaxed)) {
			atomic_fetch_add_explicit(&t->inserting, 1, memory_order_relaxed);
			break;
		}
		if (++spins >= LOCK_SPINS)
			return NULL;
		cpu_relax();
	}
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
			if (!atomic_load_explicit(&t->p, memory_order_relaxed) &&
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
			atomic_store_explicit(&s->state, 0, memory_order_relaxed);
			atomic_store_explicit(&s->units, 0, memory_order_relaxed);
			atomic_store_explicit(&s->last, now, memory_order_relaxed);
			atomic_store_explicit(&s->seq, q + 2, memory_order_seq_cst);
			/* after the key: a reader that misses meanwhile takes the lock, and finds it */
			atomic_store_explicit(&t->fps[s - t->slots], fp, memory_order_release);
			*seq = q + 2;
			atomic_fetch_add_explicit(count, 1, memory_order_relaxed);
			if (t->mirror && count == &t->tracked)
				atomic_fetch_add_explicit(&(*t->mirror)->keys_tracked, 1,
				                          memory_order_relaxed);
			else if (t->mirror && count == &t->evictions)
				atomic_fetch_add_explicit(&(*t->mirror)->keys_evicted, 1,
				                          memory_order_relaxed);
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

	for (int tries = 0; tries < RETRIES; tries++) {
		uint64_t seq, last;
		struct rlt__keyslot *s = rlt__keytab_find(t, k, now, 1, &seq);
		if (!s)
			break;
		v = rlt_decide(p, (void *)&s->state, now, cost, mode, at);
		if (rlt__keytab_still(s, seq)) {
			last = atomic_load_explicit(&s->last, memory_order_relaxed);
			if (now > last + LAST_GRAIN_NS)
				atomic_store_explicit(&s->last, now, memory_order_relaxed);
			if (t->count_units && v != RLT_DENY)
				atomic_fetch_add_explicit(&s->units, cost, memory_order_relaxed);
			*state = (void *)&s->state;
			return v;
		}
		/* The slot went to another key while this call decided on it: give that key back
		 * what was taken, and look again. */
		if (v != RLT_DENY)
			rlt_refund(p, (void *)&s->state, *at, cost);
	}
	atomic_fetch_add_explicit(&t->spills, 1, memory_order_relaxed);
	*state = (void *)&t->spill.state;
	return rlt_decide(p, *state, now, cost, mode, at);
}

int rlt__keytab_count_take(struct rlt__keytab *t, const struct rlt__key *k, uint64_t limit,
                           rlt_ns_t now)
{
	for (int tries = 0; tries < RETRIES; tries++) {
		uint64_t seq;
		struct rlt__keyslot *s = rlt__keytab_find(t, k, now, 1, &seq);
		if (!s)
			return 0;
		uint64_t cur = atomic_load(&s->state);
		do {
			if (cur >= limit)
				return 0;
		} while (!atomic_compare_exchange_weak(&s->state, &cur, cur + 1));
		if (rlt__keytab_still(s, seq)) {
			atomic_store_explicit(&s->last, now, memory_order_relaxed);
			return 1;
		}
		atomic_fetch_sub(&s->state, 1); /* the slot was being given to another key */
	}
	return 0;
}

void rlt__keytab_count_release(struct rlt__keytab *t, const struct rlt__key *k)
{
	uint64_t seq;
	struct rlt__keyslot *s = NULL;

	/* Bounded: the key is there (it holds a count), at worst for a moment behind an odd
	 * sequence (an insert that found it busy and left it as it was). */
	for (int spins = 0; !s && spins < LOCK_SPINS; spins++) {
		s = rlt__keytab_find(t, k, 0, 0, &seq);
		if (!s)
			cpu_relax();
	}
	if (s) {
		uint64_t c = atomic_load(&s->state);
		while (c && !atomic_compare_exchange_weak(&s->state, &c, c - 1))
			;
	}
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
	atomic_store_explicit(&t->tracked, tracked, memory_order_relaxed);
	if (t->mirror)
		atomic_store_explicit(&(*t->mirror)->keys_tracked, tracked, memory_order_relaxed);
}
