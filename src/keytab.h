/*
 * keytab.h: the keyed table of a rule with `key=` in process or shared scope (rlthrottle(7) RULES `key`,
 * `keys`): one engine state per key value (a peer's address prefix, or a port), at most `keys`
 * of them.
 *
 * Shape. A fixed arena of `keys` slots of 64 bytes (one cache line each), cut into sets of at
 * most RLT_KEYTAB_WAYS slots; a key's set is chosen by a hash keyed with a per-table seed. A
 * look-up reads the fingerprints of one set, then the slot whose fingerprint matches (a sequence
 * word and the key; no store, no lock), and the call is then decided on the slot's state by the engine's own atomic operation. So a conforming
 * call on a known key costs a hash, at most RLT_KEYTAB_WAYS compares and the engine's one
 * atomic operation (plus a relaxed store of the last-use time at most once a millisecond).
 *
 * Replacement: a new key takes, in its set, a free slot; else a slot whose budget is full again
 * (dropping it changes no decision: counted as `expired`); else the least recently used slot of
 * the set, to the millisecond (counted as an `eviction`: that key's client gets a fresh budget
 * when it comes back). The bound this gives (an approximate LRU, as a CPU cache's): a key is
 * never replaced while it is one of the RLT_KEYTAB_WAYS most recently used keys of its set; with
 * keys <= RLT_KEYTAB_WAYS there is one set and the replacement is exact LRU. Inserting takes a
 * per-set spin lock (never on a hit); a call that cannot get it within a bounded spin (its own
 * signal handler interrupted an insert on the same set, or the holder was preempted) is charged
 * to the table's overflow state, one budget of the rule's size (counted as `spills`).
 *
 * Concurrency: slots are never freed while the table lives (but by the repair below); each has
 * a sequence word, odd while an insert rewrites it, bumped on every reuse. A reader validates
 * the key against it before deciding and after: if the slot changed hands meanwhile, the charge
 * is refunded and the look-up made again. Bound: a refund taken after the call (a settle) may
 * land on the slot's new key, giving it at most the unused part of one call.
 *
 * Engines: only those whose state is one 64-bit word valid when zeroed (token, leaky,
 * fixed-window), so that a slot is reset by one atomic store; a table without params (p NULL)
 * keeps a count per key instead (RLT_CONNS), whose slots are replaced only when the count is 0,
 * or (`leases`, scope=redis://) the units a key has leased from Redis and not spent: such a slot
 * is replaced as an engine's is, one holding no units counting as idle.
 *
 * Where it lives. Everything processes share is laid out at offsets from one base (struct
 * rlt__keytab_area, then the set locks, the fingerprints and the slots): an anonymous mapping
 * for a process-scope rule, the rule's segment for scope=shared:NAME (scope_shm.c). The seed and
 * the counts are in the area, so that every process of a segment hashes alike and counts the
 * rule's keys, not its own. struct rlt__keytab is a process's handle: pointers into the area and
 * the params it decides with.
 *
 * A process killed mid-insert (shared scope). A set's lock word says who holds it (the
 * holder's pid and start time, as the RLT_CONNS holders of scope_shm.h), and a slot is odd while
 * its holder rewrites it. A process that cannot get a lock within the bounded spin looks (a
 * system call, only on contention) whether the holder is gone; if so it takes the lock over and
 * repairs the set: a slot left odd is freed (key and fingerprint cleared, sequence made even), a
 * whole key left without its fingerprint gets it back. Readers already skip odd slots. Bound: an
 * insert cut off between its last sequence store and its count leaves `tracked` one short.
 *
 * Memory: 72 bytes per key (a 64-byte slot and an 8-byte fingerprint, so that a look-up reads
 * the set's fingerprints and one slot) plus 8 bytes per set (its lock) and a 128-byte head, each
 * part rounded to 64 bytes (rlt__keytab_bytes): keys=4096 is 292 KiB, keys=1048576
 * (RLT_KEYS_MAX) 73 MiB. A process-scope table takes one anonymous mapping made at load (its
 * handle at the head); a shared one that much of the segment, and a handle of one page.
 */
#ifndef RLT_KEYTAB_H
#define RLT_KEYTAB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "rlthrottle.h"

#define RLT_KEYTAB_WAYS 8
/* Spins before an insert gives up on its set's lock and charges the overflow budget (and a
 * count's release looks for its key). An insert holds it for some fifty loads and stores; only
 * a preempted holder or a signal handler that interrupted it on the same thread makes a call
 * wait this long. */
#define RLT__KEYTAB_SPINS 2000
/* Look-ups made again when the slot changed hands during a decision. */
#define RLT__KEYTAB_RETRIES 4

/* A spin's pause. */
static inline void rlt__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* A key value: w[0] holds its kind (low 8 bits, never 0) and a port; w[1], w[2] an address
 * prefix, masked. */
struct rlt__key {
	uint64_t w[3];
};

/* The kinds in w[0]'s low byte. */
#define RLT_KEYKIND_NONE 1u /* key=peer on a socket with no IP address (family=all: unix) */
#define RLT_KEYKIND_V4 4u
#define RLT_KEYKIND_V6 6u
#define RLT_KEYKIND_PORT 'P'

struct rlt__keyslot {
	_Atomic uint64_t seq;   /* even: stable (k[0] 0 when free); odd: being rewritten */
	_Atomic uint64_t k[3];  /* the key (struct rlt__key) */
	_Atomic uint64_t last;  /* ns of the last use, kept to the ms: the set's LRU order */
	_Atomic uint64_t units; /* units charged to this key since it took the slot (busiest keys) */
	_Atomic uint64_t state; /* the engine's state, or the open count (RLT_CONNS) */
	uint64_t pad;
};

/* What processes share of a table, at its base (the locks, fingerprints and slots follow). The
 * creator writes keys and seed on zeroed memory before any process uses it; read-only after. */
struct rlt__keytab_area {
	uint32_t keys;              /* slots */
	uint32_t pad;
	uint64_t seed;              /* keys the hash, so that a client cannot aim at one set */
	_Atomic uint64_t tracked;   /* slots holding a key */
	_Atomic uint64_t evictions; /* keys replaced whose budget was not full again */
	_Atomic uint64_t expired;   /* keys replaced whose budget was full again (no decision changed) */
	_Atomic uint64_t spills;    /* calls charged to the overflow budget */
	_Atomic uint64_t repairs;   /* set locks taken over from a dead holder (shared scope) */
	_Alignas(64) struct rlt__keyslot spill; /* the overflow budget (see above) */
};

struct rlt__keytab {
	/* The rule's params in force (NULL: a count per key, RLT_CONNS), for which keys are idle;
	 * a set stores its block's (rule_set.c). A decision is given the caller's own. */
	_Atomic(const struct rlt_params *) p;
	uint32_t keys;              /* slots (the area's) */
	uint32_t nsets;             /* sets: the first `extra` hold ways + 1 slots, the rest ways */
	uint32_t ways, extra;
	uint64_t seed;              /* the area's, here for the hash without a second line */
	int count_units;            /* keep each key's units (statistics on: RLT_STATS or the page;
	                               set before any thread decides on the table) */
	int leases;                 /* p NULL, and `state` is a redis lease's unspent units
	                               (scope_redis.c), not a count: any key may be replaced,
	                               one holding none first. Set at load. */
	int shared;                 /* the area is in a segment: a lock's holder may be another
	                               process, and may die holding it */
	uint64_t me;                /* what this process writes in a lock word: 1 in process scope;
	                               its pid | start time << 32 in a segment (renewed at fork) */
	struct rlt__keytab_area *a; /* the shared part: counts, overflow budget */
	_Atomic uint64_t *locks;    /* one insert lock per set: 0 free, else its holder's `me` */
	_Atomic uint64_t *fps;      /* per slot: its key's hash | 1 (0: none), set after the key */
	struct rlt__keyslot *slots;
	_Atomic uint32_t inserting; /* set locks this process holds now: a fork's child looks at
	                               the sets only when some were (a scan of a large table costs
	                               seconds) */
	size_t bytes;               /* of the mapping (process scope; 0: the handle of a segment's) */
	/* Where the rule counts for RLT_STATS and its page (its `st`, which moves when the page
	 * is made): keys_tracked and keys_evicted follow the area's tracked and evictions. NULL:
	 * nowhere. */
	struct rlt__stats *const *mirror;
};

/* Bytes the area of a table of `keys` slots takes (what a segment holds of it). */
size_t rlt__keytab_bytes(uint32_t keys);

/* Maps a table of `keys` (1..RLT_KEYS_MAX) slots for params p (token, leaky or fixed-window;
 * NULL for counts). Load time only. NULL when out of memory or p has another engine. */
struct rlt__keytab *rlt__keytab_new(const struct rlt_params *p, uint32_t keys, uint64_t seed,
                                    int count_units);
/* The creator of a segment: an area of `keys` slots at base (rlt__keytab_bytes of zeroed
 * memory, 64-byte aligned), hashing with seed. */
void rlt__keytab_area_init(void *base, uint32_t keys, uint64_t seed);
/* A handle (mapped at load) on the area at base that rlt__keytab_area_init made in a segment,
 * for p as rlt__keytab_new. NULL as rlt__keytab_new, or when the area is not one of `keys`. */
struct rlt__keytab *rlt__keytab_attach(void *base, const struct rlt_params *p, uint32_t keys,
                                       int count_units);
/* Unmaps a table made by rlt__keytab_new, or the handle made by rlt__keytab_attach. */
void rlt__keytab_free(struct rlt__keytab *t);


/*
 * The slot of key k, inserted (replacing one, see above) when it is not in the table and
 * `insert` is set. *seq is the slot's sequence to validate against (rlt__keytab_still). NULL:
 * not found (without insert), or the set's lock could not be had, or (counts) every slot of the
 * set holds connections.
 */
struct rlt__keyslot *rlt__keytab_find(struct rlt__keytab *t, const struct rlt__key *k,
                                      rlt_ns_t now, int insert, uint64_t *seq);
/* Whether the slot still holds the key it held at sequence seq. */
static inline int rlt__keytab_still(struct rlt__keyslot *s, uint64_t seq)
{
	return atomic_load_explicit(&s->seq, memory_order_seq_cst) == seq;
}

/*
 * rlt_decide for key k: the key's state found (or inserted), the decision made on it and the
 * slot validated after. *state is the state charged, for rlt_refund after the call.
 */
/* (Not for counts: p must be set.) */
enum rlt_verdict rlt__keytab_decide(struct rlt__keytab *t, const struct rlt_params *p,
                                    const struct rlt__key *k, rlt_ns_t now, uint64_t cost, enum rlt_mode mode,
                                    rlt_ns_t *at, void **state);

/* rlt_available for key k; a key not tracked has a full budget. */
uint64_t rlt__keytab_available(struct rlt__keytab *t, const struct rlt_params *p,
                               const struct rlt__key *k, rlt_ns_t now);

/* The busiest keys: up to n of them by units charged, most first. Returns how many. */
struct rlt__keytab_top {
	struct rlt__key key;
	uint64_t units;
	uint32_t slot; /* its slot's index (per-slot side tables: the dry-run counts) */
	uint64_t seq;  /* the slot's sequence when read (is the side table's entry this key's) */
};
size_t rlt__keytab_top(struct rlt__keytab *t, struct rlt__keytab_top *out, size_t n);

/* The slot index of a state rlt__keytab_decide charged, and its sequence now (*seq); -1 for
 * the overflow budget. */
static inline long rlt__keytab_slot_of(const struct rlt__keytab *t, const void *state,
                                       uint64_t *seq)
{
	const struct rlt__keyslot *s =
		(const struct rlt__keyslot *)((const char *)state - offsetof(struct rlt__keyslot, state));
	if (s < t->slots || s >= t->slots + t->keys)
		return -1;
	*seq = atomic_load_explicit(&((struct rlt__keyslot *)s)->seq, memory_order_relaxed);
	return (long)(s - t->slots);
}

/* In a forked child (one thread): insert locks held by the parent's other threads are let go,
 * and a slot they were rewriting is left free (process scope); in a segment those threads go
 * on in the parent, and the child only takes its own identity for the locks it will hold. */
void rlt__keytab_forked(struct rlt__keytab *t);

#endif
