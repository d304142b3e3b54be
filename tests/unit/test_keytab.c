/* test_keytab.c: src/keytab.c, the keyed table of a process-scope rule: keys made from peers,
 * decisions per key independent, the replacement order and its counts, the memory stated, and
 * threads racing inserts against look-ups and replacements (run under `make tsan` too). The
 * clock is the test's: every `now` is chosen here. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "keytab.h"
#include "keytab_count.h"
#include "keytab_key.h"
#include "rlthrottle.h"
#include "testutil.h"

#define MS 1000000ull
#define S 1000000000ull
#define T0 (1000 * S) /* a clock well past zero, as CLOCK_MONOTONIC is */

static struct rlt_params token(uint64_t per_s, uint64_t burst)
{
	struct rlt_params p;
	struct rlt_error e;
	assert_int_equal(rlt_params_init(&p, RLT_ALGO_TOKEN, per_s, 1, S, burst, RLT_NS_NEVER, &e),
	                 0);
	return p;
}

static struct rlt__key v4(const char *a)
{
	struct rlt__peer p = { .af = AF_INET };
	struct rlt__key k;
	assert_int_equal(inet_pton(AF_INET, a, p.addr), 1);
	rlt__key_of(RLT_KEY_PEER, 32, 128, &p, 0, &k);
	return k;
}

static struct rlt__key nth(unsigned i)
{
	char a[32];
	snprintf(a, sizeof a, "10.%u.%u.%u", (i >> 16) & 255, (i >> 8) & 255, i & 255);
	return v4(a);
}

static enum rlt_verdict now_go(struct rlt__keytab *t, struct rlt__key k, rlt_ns_t now)
{
	rlt_ns_t at;
	void *st;
	return rlt__keytab_decide(t, t->p, &k, now, 1, RLT_MODE_NOW, &at, &st);
}

static void test_memory_stated(void **s)
{
	struct rlt_params p = token(10, 1), w;
	struct rlt_error e;
	struct rlt__keytab *t;
	(void)s;
	/* keytab.h: 72 bytes a key, 8 a set, a 128-byte head, each part rounded to 64 */
	assert_int_equal(rlt__keytab_bytes(4096), 128 + 4096 + 4096 * 72);
	assert_int_equal(rlt__keytab_bytes(RLT_KEYS_MAX), 128 + 1048576 + (size_t)RLT_KEYS_MAX * 72);
	assert_int_equal(rlt__keytab_bytes(4), 128 + 64 + 64 + 4 * 64);
	assert_true(rlt__keytab_bytes(4096) / 1024 == 292);
	assert_true(rlt__keytab_bytes(RLT_KEYS_MAX) / (1024 * 1024) == 73);
	t = rlt__keytab_new(&p, 100, 1, 0);
	assert_non_null(t);
	/* 13 sets of 7 or 8 ways: exactly 100 slots */
	assert_int_equal(t->nsets, 13);
	assert_int_equal(t->ways * t->nsets + t->extra, 100);
	assert_true(t->ways + 1 <= RLT_KEYTAB_WAYS);
	assert_int_equal(((uintptr_t)t->slots) % 64, 0);
	rlt__keytab_free(t);
	assert_null(rlt__keytab_new(&p, 0, 1, 0));
	assert_null(rlt__keytab_new(&p, RLT_KEYS_MAX + 1, 1, 0));
	/* engines whose state is more than one word cannot be reset by one store */
	assert_int_equal(rlt_params_init(&w, RLT_ALGO_SLIDING_WINDOW, 10, 1, S, 0, RLT_NS_NEVER, &e),
	                 0);
	assert_null(rlt__keytab_new(&w, 16, 1, 0));
}

/* The key of KIND for peer P (prefixes P4, P6; PORT) into *K, and its text: WANT. */
static void key_says(const struct rlt__peer *p, enum rlt_key kind, unsigned p4, unsigned p6,
                     uint16_t port, struct rlt__key *k, const char *want)
{
	char buf[80];

	rlt__key_of(kind, p4, p6, p, port, k);
	rlt__key_format(k, p4, p6, buf, sizeof buf);
	assert_string_equal(buf, want);
}

static void test_key_of(void **s)
{
	struct rlt__peer p = { .af = AF_INET };
	struct rlt__key a, b;
	(void)s;
	inet_pton(AF_INET, "192.168.7.77", p.addr);
	key_says(&p, RLT_KEY_PEER, 24, 64, 0, &a, "192.168.7.0/24");
	inet_pton(AF_INET, "192.168.7.1", p.addr);
	rlt__key_of(RLT_KEY_PEER, 24, 64, &p, 0, &b);
	assert_memory_equal(&a, &b, sizeof a); /* one /24, one key */
	key_says(&p, RLT_KEY_PEER, 32, 128, 0, &b, "192.168.7.1");
	assert_memory_not_equal(&a, &b, sizeof a);
	key_says(&p, RLT_KEY_PEER, 21, 64, 0, &b, "192.168.0.0/21");

	p.af = AF_INET6;
	inet_pton(AF_INET6, "2001:db8:1:2:3:4:5:6", p.addr);
	key_says(&p, RLT_KEY_PEER, 24, 64, 0, &a, "2001:db8:1:2::/64");
	key_says(&p, RLT_KEY_PEER, 24, 56, 0, &a, "2001:db8:1::/56");
	/* an IPv4 key and an IPv6 key of the same bytes differ */
	p.af = AF_INET;
	rlt__key_of(RLT_KEY_PEER, 32, 128, &p, 0, &b);
	assert_memory_not_equal(&a, &b, sizeof a);

	key_says(&p, RLT_KEY_PORT, 0, 0, 8080, &a, "port 8080");
	p.af = AF_UNIX;
	key_says(&p, RLT_KEY_PEER, 32, 128, 0, &a, "(no address)");
	assert_true(a.w[0] != 0); /* 0 marks a free slot */
}

/* Each key has a budget of its own: one greedy key takes nothing from the others. */
static void test_independent(void **s)
{
	struct rlt_params p = token(10, 2);
	struct rlt__keytab *t = rlt__keytab_new(&p, 64, 7, 1);
	struct rlt__keytab_top top[3];
	struct rlt__key k99, k5;
	char buf[80];
	(void)s;
	assert_non_null(t);
	for (int i = 0; i < 100; i++) /* key 0 asks 100 times */
		now_go(t, nth(0), T0);
	for (unsigned k = 1; k < 20; k++) {
		assert_int_equal(now_go(t, nth(k), T0), RLT_GO);
		assert_int_equal(now_go(t, nth(k), T0), RLT_GO);
		assert_int_equal(now_go(t, nth(k), T0), RLT_DENY);
	}
	assert_int_equal(now_go(t, nth(0), T0 + 50 * MS), RLT_DENY);
	assert_int_equal(now_go(t, nth(0), T0 + 100 * MS), RLT_GO); /* 10/s: one a 100 ms */
	assert_int_equal(atomic_load(&t->a->tracked), 20);
	assert_int_equal(atomic_load(&t->a->evictions) + atomic_load(&t->a->expired), 0);
	assert_int_equal(atomic_load(&t->a->spills), 0);
	/* the busiest: key 0 with 3 units, then keys of 2 */
	assert_int_equal(rlt__keytab_top(t, top, 3), 3);
	rlt__key_format(&top[0].key, 32, 128, buf, sizeof buf);
	assert_string_equal(buf, "10.0.0.0");
	assert_int_equal(top[0].units, 3);
	assert_int_equal(top[1].units, 2);
	/* a key not tracked has a full budget; a tracked one what it has left */
	k99 = nth(99);
	k5 = nth(5);
	assert_int_equal(rlt__keytab_available(t, t->p, &k99, T0), 2);
	assert_int_equal(rlt__keytab_available(t, t->p, &k5, T0), 0);
	rlt__keytab_free(t);
}

/* keys <= RLT_KEYTAB_WAYS: one set, exact LRU; an idle key whose budget is full again goes
 * first and counts as expired, not evicted. */
static void test_replacement(void **s)
{
	struct rlt_params p = token(10, 1);
	struct rlt__keytab *t = rlt__keytab_new(&p, 4, 7, 0);
	(void)s;
	for (unsigned k = 0; k < 4; k++)
		assert_int_equal(now_go(t, nth(k), T0 + k * 2 * MS), RLT_GO);
	/* key 0 used again (denied: its budget is spent), so key 1 is now the least recent */
	assert_int_equal(now_go(t, nth(0), T0 + 10 * MS), RLT_DENY);
	assert_int_equal(now_go(t, nth(4), T0 + 12 * MS), RLT_GO);
	assert_int_equal(atomic_load(&t->a->evictions), 1);
	/* key 0 kept its state: still denied; key 1 comes back with a fresh budget */
	assert_int_equal(now_go(t, nth(0), T0 + 14 * MS), RLT_DENY);
	assert_int_equal(now_go(t, nth(1), T0 + 16 * MS), RLT_GO);
	assert_int_equal(atomic_load(&t->a->evictions), 2); /* key 2 made room */
	assert_int_equal(atomic_load(&t->a->tracked), 4);
	/* a second later every budget is full again: replacing changes no decision */
	assert_int_equal(now_go(t, nth(9), T0 + 2 * S), RLT_GO);
	assert_int_equal(atomic_load(&t->a->evictions), 2);
	assert_int_equal(atomic_load(&t->a->expired), 1);
	rlt__keytab_free(t);
}

/* keys=4 and 8 clients taking turns, each asking at 40/s for 3 s against 10/s burst 1: every
 * client comes back to find its key replaced, so each is admitted at its request rate: the
 * documented bound (an evicted client starts with a fresh budget) and no more: a client's
 * admissions <= its fresh budgets (inserts) x burst + rate x time. */
static void test_eviction_bound(void **s)
{
	struct rlt_params p = token(10, 1);
	struct rlt__keytab *t = rlt__keytab_new(&p, 4, 7, 0);
	unsigned go[8] = { 0 };
	(void)s;
	for (unsigned i = 0; i < 8 * 120; i++) { /* 25 ms apart: 40/s for each of 8 over 3 s */
		rlt_ns_t now = T0 + i * (25 * MS / 8);
		go[i % 8] += now_go(t, nth(i % 8), now) == RLT_GO;
	}
	for (unsigned c = 0; c < 8; c++)
		assert_int_equal(go[c], 120);
	assert_int_equal(atomic_load(&t->a->tracked), 4);
	assert_int_equal(atomic_load(&t->a->evictions) + atomic_load(&t->a->expired), 8 * 120 - 4);
	rlt__keytab_free(t);

	/* keys=8 with the same 8 clients: every key kept, each admitted at the rule's 10/s */
	t = rlt__keytab_new(&p, 8, 7, 0);
	memset(go, 0, sizeof go);
	for (unsigned i = 0; i < 8 * 120; i++) {
		rlt_ns_t now = T0 + i * (25 * MS / 8);
		go[i % 8] += now_go(t, nth(i % 8), now) == RLT_GO;
	}
	for (unsigned c = 0; c < 8; c++)
		assert_in_range(go[c], 30, 31); /* 3 s at 10/s, plus the burst of 1 */
	assert_int_equal(atomic_load(&t->a->evictions) + atomic_load(&t->a->expired), 0);
	rlt__keytab_free(t);
}

/* ---------------------------------------------------------------------------------------------
 * Threads
 * ------------------------------------------------------------------------------------------- */

/* The threads of a test start together: each waits here first. */
static pthread_barrier_t start_line;

/* Runs FN on N threads (8 at most), the i-th on ARG + i * SIZE (its worker), started together,
 * and returns once all have ended. */
static void together(unsigned n, void *(*fn)(void *), void *arg, size_t size)
{
	pthread_t th[8];

	assert_true(n <= 8);
	pthread_barrier_init(&start_line, NULL, n);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(pthread_create(&th[i], NULL, fn, (char *)arg + i * size), 0);
	for (unsigned i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&start_line);
}

struct worker {
	struct rlt__keytab *t;
	unsigned id;
	unsigned go;
	uint64_t seed;
	int racing;
};

static _Atomic rlt_ns_t fake_now = T0;

static void *own_key(void *arg)
{
	struct worker *w = arg;
	pthread_barrier_wait(&start_line);
	for (int i = 0; i < 2000; i++)
		w->go += now_go(w->t, nth(w->id), atomic_load(&fake_now)) == RLT_GO;
	return NULL;
}

/* Many threads on their own keys at one instant: each gets exactly its burst, whatever the
 * others do. */
static void test_threads_independent(void **s)
{
	struct rlt_params p = token(100, 10);
	struct rlt__keytab *t = rlt__keytab_new(&p, 64, 3, 1);
	struct worker w[8];
	(void)s;
	for (unsigned i = 0; i < 8; i++)
		w[i] = (struct worker){ .t = t, .id = i };
	together(8, own_key, w, sizeof w[0]);
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(w[i].go, 10);
	assert_int_equal(atomic_load(&t->a->tracked), 8);
	assert_int_equal(atomic_load(&t->a->spills), 0);
	rlt__keytab_free(t);
}

static void *churn(void *arg)
{
	struct worker *w = arg;
	pthread_barrier_wait(&start_line);
	for (int i = 0; i < 20000; i++) {
		rlt_ns_t now = atomic_fetch_add(&fake_now, 37 * 1000) + 1;
		struct rlt__key k = nth((unsigned)rlt_test_range(&w->seed, 0, 47));
		rlt_ns_t at;
		void *st;
		enum rlt_verdict v = rlt__keytab_decide(w->t, w->t->p, &k, now, 1,
		                                        (i & 1) ? RLT_MODE_NOW : RLT_MODE_RESERVE, &at,
		                                        &st);
		if (v != RLT_DENY && (i % 3) == 0)
			rlt_refund(w->t->p, st, at, 1); /* a settle that gives all back */
		w->go += v != RLT_DENY;
	}
	return NULL;
}

/* Inserts racing with look-ups and replacements: 4 threads over 48 keys in a table of 16. No
 * torn key (every slot holds a key some thread asked for, none twice), counts that add up. */
static void test_threads_churn(void **s)
{
	struct rlt_params p = token(1000, 5);
	struct rlt__keytab *t = rlt__keytab_new(&p, 16, 11, 1);
	struct worker w[4];
	uint64_t replaced;
	(void)s;
	for (unsigned i = 0; i < 4; i++)
		w[i] = (struct worker){ .t = t, .id = i, .seed = i + 1 };
	together(4, churn, w, sizeof w[0]);
	for (unsigned i = 0; i < t->keys; i++) {
		struct rlt__keyslot *a = &t->slots[i];
		struct rlt__key ka = { { a->k[0], a->k[1], a->k[2] } };
		int known = 0;
		assert_int_equal(a->seq & 1, 0);
		for (unsigned k = 0; k < 48 && !known; k++) {
			struct rlt__key kn = nth(k);
			known = memcmp(&ka, &kn, sizeof ka) == 0;
		}
		assert_true(known);
		for (unsigned j = i + 1; j < t->keys; j++) {
			struct rlt__key kb = { { t->slots[j].k[0], t->slots[j].k[1],
				                 t->slots[j].k[2] } };
			assert_false(memcmp(&ka, &kb, sizeof ka) == 0);
		}
	}
	replaced = atomic_load(&t->a->evictions) + atomic_load(&t->a->expired);
	assert_int_equal(atomic_load(&t->a->tracked), 16);
	assert_true(replaced > 1000);
	printf("churn: 80000 decisions, %llu replaced (%llu evicted, %llu expired), %llu spilled\n",
	       (unsigned long long)replaced, (unsigned long long)atomic_load(&t->a->evictions),
	       (unsigned long long)atomic_load(&t->a->expired),
	       (unsigned long long)atomic_load(&t->a->spills));
	rlt__keytab_free(t);
}

/* A child forked while another thread held a set's insert lock must not find it held. */
static void test_forked(void **s)
{
	struct rlt_params p = token(10, 1);
	struct rlt__keytab *t = rlt__keytab_new(&p, 8, 7, 0);
	struct rlt__key k3 = nth(3);
	uint64_t seq;
	(void)s;
	assert_int_equal(now_go(t, nth(1), T0), RLT_GO);
	atomic_store(&t->locks[0], 1);                       /* as the fork found it */
	atomic_store(&t->inserting, 1);
	atomic_store(&t->slots[3].seq, 1);                   /* an insert cut off half-way */
	atomic_store(&t->slots[3].k[0], nth(2).w[0]);
	assert_null(rlt__keytab_find(t, &k3, T0, 1, &seq)); /* spins */
	rlt__keytab_forked(t);
	assert_int_equal(atomic_load(&t->a->tracked), 1);
	assert_int_equal(atomic_load(&t->inserting), 0);
	assert_non_null(rlt__keytab_find(t, &k3, T0, 1, &seq));
	assert_int_equal(atomic_load(&t->a->tracked), 2);
	assert_int_equal(now_go(t, nth(1), T0), RLT_DENY); /* kept across */
	rlt__keytab_free(t);
}

/* RLT_CONNS per key: a count per key; a key holding connections is never replaced, so a set
 * full of them refuses a new key rather than forget a count. */
static void test_counts(void **s)
{
	struct rlt__keytab *t = rlt__keytab_new(NULL, 4, 7, 0);
	struct rlt__key a = nth(1), b = nth(2);
	(void)s;
	assert_non_null(t);
	assert_int_equal(rlt__keytab_count_take(t, &a, 2, T0), 1);
	assert_int_equal(rlt__keytab_count_take(t, &a, 2, T0), 1);
	assert_int_equal(rlt__keytab_count_take(t, &a, 2, T0), 0);
	assert_int_equal(rlt__keytab_count_take(t, &b, 2, T0), 1);
	rlt__keytab_count_release(t, &a);
	assert_int_equal(rlt__keytab_count_take(t, &a, 2, T0), 1);
	for (unsigned k = 3; k < 5; k++) {
		struct rlt__key c = nth(k);
		assert_int_equal(rlt__keytab_count_take(t, &c, 2, T0 + k), 1);
	}
	struct rlt__key e = nth(9);
	assert_int_equal(rlt__keytab_count_take(t, &e, 2, T0 + S), 0); /* all four hold some */
	assert_int_equal(atomic_load(&t->a->evictions), 0);
	struct rlt__key c3 = nth(3);
	rlt__keytab_count_release(t, &c3); /* key 3 holds none now: idle, it may go */
	assert_int_equal(rlt__keytab_count_take(t, &e, 2, T0 + S), 1);
	assert_int_equal(atomic_load(&t->a->expired), 1);
	assert_int_equal(rlt__keytab_count_take(t, &a, 2, T0 + S), 0); /* a still holds 2 */
	rlt__keytab_free(t);
}

/* RLT_CONNS per key, action=delay: a waiter registered on a key keeps it in the table even at a
 * count of 0, its futex word is the count (the slot word's low half), and a release says whom to
 * wake only while someone waits. */
static void test_count_waiters(void **s)
{
	struct rlt__keytab *t = rlt__keytab_new(NULL, 4, 7, 0);
	struct rlt__key a = nth(1), e = nth(9);
	struct rlt__keyslot *slot;
	uint32_t val = 99;
	(void)s;
	assert_non_null(t);
	assert_int_equal(rlt__keytab_count_take(t, &a, 2, T0), 1);
	assert_int_equal(rlt__keytab_count_take(t, &a, 2, T0), 1);
	assert_null(rlt__keytab_count_release(t, &a)); /* nobody waits */
	assert_int_equal(rlt__keytab_count_take(t, &a, 2, T0), 1);
	_Atomic uint32_t *word = rlt__keytab_count_watch(t, &a, T0, &slot, &val);
	assert_non_null(word);
	assert_int_equal(val, 2);
	assert_int_equal(atomic_load(word), 2);
	assert_int_equal(rlt__keytab_count(t, &a), 2);
	assert_int_equal(rlt__keytab_count_take(t, &a, 2, T0), 0); /* the waiter is no connection */
	assert_ptr_equal(rlt__keytab_count_release(t, &a), word);
	assert_int_equal(atomic_load(word), 1);
	assert_int_equal(rlt__keytab_count(t, &a), 1);
	assert_ptr_equal(rlt__keytab_count_release(t, &a), word);
	assert_int_equal(rlt__keytab_count(t, &a), 0);
	assert_null(rlt__keytab_count_release(t, &a)); /* none left: nothing to give back */
	for (unsigned k = 3; k < 6; k++) {
		struct rlt__key c = nth(k);
		assert_int_equal(rlt__keytab_count_take(t, &c, 2, T0 + k), 1);
	}
	/* a holds nothing but has a waiter: not idle, so the full set refuses a new key */
	assert_int_equal(rlt__keytab_count_take(t, &e, 2, T0 + S), 0);
	rlt__keytab_count_unwatch(slot);
	assert_int_equal(rlt__keytab_count_take(t, &e, 2, T0 + S), 1); /* now a may go */
	assert_int_equal(atomic_load(&t->a->expired), 1);
	rlt__keytab_free(t);
}

struct count_worker {
	struct rlt__keytab *t;
	unsigned seed;
};

/* Takes and gives back (or waits on, then leaves) keys of a set too small for them all. */
static void *count_churn(void *arg)
{
	struct count_worker *w = arg;
	unsigned x = w->seed;
	pthread_barrier_wait(&start_line);
	for (unsigned i = 0; i < 100000; i++) {
		x = x * 1103515245u + 12345u;
		struct rlt__key k = nth((x >> 16) % 24);
		if ((x >> 8) & 1) {
			struct rlt__keyslot *slot;
			uint32_t val;
			if (rlt__keytab_count_watch(w->t, &k, T0 + i, &slot, &val))
				rlt__keytab_count_unwatch(slot);
		} else if (rlt__keytab_count_take(w->t, &k, 1, T0 + i)) {
			rlt__keytab_count_release(w->t, &k);
		}
	}
	return NULL;
}

/* A taker (or a waiter) that found a key just as its idle slot went to another key undoes its
 * add on the new key's word: the word must come back to 0, never below it (a count of 2^32 - 1,
 * that key refused for good). */
static void test_counts_churn(void **s)
{
	struct rlt__keytab *t = rlt__keytab_new(NULL, 8, 5, 0);
	struct count_worker w[4];
	(void)s;
	for (unsigned i = 0; i < 4; i++)
		w[i] = (struct count_worker){ .t = t, .seed = 7 * i + 1 };
	together(4, count_churn, w, sizeof w[0]);
	for (unsigned i = 0; i < t->keys; i++)
		assert_int_equal(atomic_load(&t->slots[i].state), 0);
	printf("counts churn: 400000 calls, %llu replaced\n",
	       (unsigned long long)atomic_load(&t->a->expired));
	rlt__keytab_free(t);
}

/* A segment's table: two handles on one shared mapping (as two processes have) hash alike and
 * decide on the same states; a lock left by a process that died mid-insert (its word names a
 * pid that is gone, a slot of the set left odd) is taken over by the next insert, which frees
 * the half-written slot, and decisions stay right. */
static void test_shared_dead_holder(void **s)
{
	struct rlt_params p = token(10, 1);
	size_t bytes = rlt__keytab_bytes(8);
	void *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct rlt__keytab *a, *b;
	struct rlt__key k1 = nth(1), k2 = nth(2), k3 = nth(3);
	uint64_t seq, dead = 0;
	(void)s;
	assert_true(base != MAP_FAILED);
	rlt__keytab_area_init(base, 8, 99);
	a = rlt__keytab_attach(base, &p, 8, 0);
	b = rlt__keytab_attach(base, &p, 8, 0);
	assert_non_null(a);
	assert_non_null(b);
	assert_null(rlt__keytab_attach(base, &p, 16, 0)); /* not an area of 16 keys */
	assert_int_equal(a->seed, b->seed);
	assert_int_equal(a->me & 0xffffffffu, (uint64_t)getpid());
	assert_int_equal(now_go(a, k1, T0), RLT_GO);
	assert_int_equal(now_go(b, k1, T0), RLT_DENY); /* one budget for both */
	assert_int_equal(now_go(b, k2, T0), RLT_GO);
	assert_int_equal(atomic_load(&a->a->tracked), 2);
	/* A child that dies at once: its pid is gone (reaped) when the lock is looked at. */
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	assert_true(c > 0);
	assert_int_equal(waitpid(c, NULL, 0), c);
	dead = (uint64_t)(uint32_t)c;
	/* As it died: holding the set's lock, rewriting k2's slot to k3 (odd). */
	struct rlt__keyslot *s2 = rlt__keytab_find(a, &k2, T0, 0, &seq);
	assert_non_null(s2);
	atomic_store(&a->locks[0], dead);
	atomic_store(&s2->seq, seq + 1);
	atomic_store(&s2->k[0], k3.w[0]);
	/* k2 is not found meanwhile (readers skip odd slots), and k1 still decides. */
	assert_null(rlt__keytab_find(b, &k2, T0, 0, &seq));
	assert_int_equal(now_go(b, k1, T0), RLT_DENY);
	/* The next insert takes the lock over and repairs the set. */
	assert_int_equal(now_go(b, k3, T0), RLT_GO);
	assert_int_equal(atomic_load(&a->locks[0]), 0);
	assert_int_equal(atomic_load(&a->a->spills), 0);
	assert_int_equal(atomic_load(&a->a->repairs), 1);
	assert_int_equal(atomic_load(&s2->seq) & 1, 0);
	/* k2's slot was freed: k2 and k3 are the tracked ones with k1 */
	assert_int_equal(now_go(a, k2, T0), RLT_GO);
	assert_int_equal(now_go(a, k3, T0), RLT_DENY);
	assert_int_equal(now_go(a, k1, T0), RLT_DENY);
	assert_int_equal(now_go(a, k1, T0 + S / 10 + MS), RLT_GO); /* refilled at 10/s */
	assert_int_equal(atomic_load(&a->a->tracked), 3);
	/* A lock held by a live process (this one, as another would be) is never taken over:
	 * the insert spills. */
	atomic_store(&a->locks[0], (uint64_t)(uint32_t)getppid());
	assert_int_equal(now_go(b, nth(4), T0), RLT_GO);
	assert_int_equal(atomic_load(&a->a->spills), 1);
	assert_int_equal(atomic_load(&a->locks[0]), (uint64_t)(uint32_t)getppid());
	rlt__keytab_free(a);
	rlt__keytab_free(b);
	munmap(base, bytes);
}

/* rlt__key_of's word masks against a byte-by-byte cut of the prefix, for every prefix of
 * both families: the same key words (so formats and Redis names stay as they were). */
static void test_key_of_prefixes(void **s)
{
	struct rlt__peer p = {.af = AF_INET6};
	(void)s;
	for (unsigned b = 0; b < 16; b++)
		p.addr[b] = (uint8_t)(0xa5 ^ (b * 37));
	for (int fam = 0; fam < 2; fam++) {
		unsigned max = fam ? 128 : 32;
		p.af = fam ? AF_INET6 : AF_INET;
		for (unsigned bits = 0; bits <= max; bits++) {
			uint8_t a[16] = {0};
			struct rlt__key k, want;
			memcpy(a, p.addr, (bits + 7) / 8);
			if (bits % 8)
				a[bits / 8] &= (uint8_t)(0xff00u >> (bits % 8));
			want.w[0] = fam ? RLT_KEYKIND_V6 : RLT_KEYKIND_V4;
			memcpy(&want.w[1], a, 8);
			memcpy(&want.w[2], a + 8, 8);
			rlt__key_of(RLT_KEY_PEER, fam ? 32 : bits, fam ? bits : 128, &p, 0, &k);
			assert_memory_equal(&k, &want, sizeof k);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory_stated),
		cmocka_unit_test(test_key_of),
		cmocka_unit_test(test_key_of_prefixes),
		cmocka_unit_test(test_independent),
		cmocka_unit_test(test_replacement),
		cmocka_unit_test(test_eviction_bound),
		cmocka_unit_test(test_threads_independent),
		cmocka_unit_test(test_threads_churn),
		cmocka_unit_test(test_forked),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_count_waiters),
		cmocka_unit_test(test_counts_churn),
		cmocka_unit_test(test_shared_dead_holder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
