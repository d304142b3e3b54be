/* engine_harness.h: what the window and log engine tests share: an engine with params filled by
 * hand (as rlt_params_init would), its ops called directly, and the threaded run that records
 * every admission. */
#ifndef RLT_ENGINE_HARNESS_H
#define RLT_ENGINE_HARNESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <sys/mman.h>

#include "engine_lock.h"
#include "testutil.h"
#include "engine.h"

#define SEC RLT_NS_PER_SEC
#define MS 1000000ull
#define TEN_YEARS (10ull * 365 * 86400 * SEC)
#define NEVER RLT_NS_NEVER

typedef unsigned __int128 u128;

struct eng {
	struct rlt_params p;
	const struct rlt__engine_ops *ops;
	void *state;
};

/* Params as rlt_params_init fills them for a window or the log: sub_ns = window_ns / 10. */
static inline void fill(struct rlt_params *p, enum rlt_algo algo, uint64_t limit, uint64_t window_ns,
                        uint64_t max_wait)
{
	memset(p, 0, sizeof *p);
	p->algo = algo;
	p->limit = limit;
	p->window_ns = window_ns;
	p->sub_ns = window_ns / RLT_SLIDING_SUBWINDOWS;
	p->max_wait_ns = max_wait;
}

static inline const struct rlt__engine_ops *ops_of(enum rlt_algo algo)
{
	return algo == RLT_ALGO_FIXED_WINDOW     ? &rlt__engine_fixed_window
	       : algo == RLT_ALGO_SLIDING_WINDOW ? &rlt__engine_sliding_window
	                                         : &rlt__engine_sliding_log;
}

static inline void mk(struct eng *e, enum rlt_algo algo, uint64_t limit, uint64_t window_ns,
                      uint64_t max_wait)
{
	size_t size;

	fill(&e->p, algo, limit, window_ns, max_wait);
	e->ops = ops_of(algo);
	size = (e->ops->state_size(&e->p) + 63) / 64 * 64;
	e->state = aligned_alloc(64, size);
	assert_non_null(e->state);
	memset(e->state, 0xa5, size); /* init must not rely on zeroed memory */
	assert_int_equal(e->ops->init(&e->p, e->state, 0), 0);
}

static inline void unmk(struct eng *e)
{
	e->ops->destroy(&e->p, e->state);
	free(e->state);
}

static inline enum rlt_verdict dec(struct eng *e, rlt_ns_t now, uint64_t cost, enum rlt_mode m,
                                   rlt_ns_t *at)
{
	return e->ops->decide(&e->p, e->state, now, cost, m, at);
}

/* A decision of COST at NOW in mode M: verdict V and time WANT (left in the caller's `at`). A
 * macro, so that a failure names the test's line. */
#define expect_dec(e, now, cost, m, v, want)                                                  \
	do {                                                                                   \
		assert_int_equal(dec(e, now, cost, m, &at), v);                                \
		assert_int_equal(at, want);                                                    \
	} while (0)

static inline uint64_t avail(struct eng *e, rlt_ns_t now)
{
	return e->ops->available(&e->p, e->state, now);
}

static inline void refund(struct eng *e, rlt_ns_t at, uint64_t units)
{
	e->ops->refund(&e->p, e->state, at, units);
}

/* A rule through the public path (rlt_params_init, rlt_state_*): NUM per PERIOD, no max-wait,
 * its state on the heap. */
struct pub {
	struct rlt_params p;
	void *st;
};

/* A state of P on the heap (64-byte aligned, as a rule's), initialised (free it). */
static inline void *state_new(const struct rlt_params *p)
{
	void *st = aligned_alloc(64, (rlt_state_size(p) + 63) / 64 * 64);

	assert_non_null(st);
	assert_int_equal(rlt_state_init(p, st, 0), 0);
	return st;
}

static inline void pub_mk(struct pub *u, enum rlt_algo algo, uint64_t num, rlt_ns_t period)
{
	struct rlt_error err;

	assert_int_equal(rlt_params_init(&u->p, algo, num, 1, period, 0, NEVER, &err), 0);
	u->st = state_new(&u->p);
}

static inline void pub_unmk(struct pub *u)
{
	rlt_state_destroy(&u->p, u->st);
	free(u->st);
}

/* Near the end of time: L units go at T, and the next one's time would lie past 2^64: denied
 * with never, not wrapped, and nothing is available. */
static inline void end_of_time(enum rlt_algo algo, uint64_t L, uint64_t W, rlt_ns_t t)
{
	struct eng e;
	rlt_ns_t at;

	mk(&e, algo, L, W, NEVER);
	assert_int_equal(dec(&e, t, L, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(dec(&e, t, 1, RLT_MODE_RESERVE, &at), RLT_DENY);
	assert_int_equal(at, NEVER);
	assert_int_equal(avail(&e, UINT64_MAX), 0);
	unmk(&e);
}

/* The property tests' random walk, the same sequence for a seed: a max-wait (1 in 4 none, else
 * up to SPAN ns), a mode, and a step of the clock (1 in 4 a jump of up to SPAN ns, else up to
 * W / L + 1 ns: about the rate). */
static inline uint64_t walk_max_wait(uint64_t *seed, uint64_t span)
{
	return rlt_test_range(seed, 0, 3) == 0 ? NEVER : rlt_test_range(seed, 0, span);
}

static inline enum rlt_mode walk_mode(uint64_t *seed)
{
	return rlt_test_range(seed, 0, 1) ? RLT_MODE_NOW : RLT_MODE_RESERVE;
}

static inline rlt_ns_t walk_step(uint64_t *seed, uint64_t L, uint64_t W, uint64_t span)
{
	return rlt_test_range(seed, 0, 3) == 0 ? rlt_test_range(seed, 0, span)
	                                       : rlt_test_range(seed, 0, W / L + 1);
}

/* One admission: its go time and cost. */
struct adm {
	rlt_ns_t t;
	uint64_t c;
};

static inline int adm_cmp(const void *x, const void *y)
{
	const struct adm *a = x, *b = y;

	return a->t < b->t ? -1 : a->t > b->t;
}

/*
 * One run of a property test: an engine of L per W whose max-wait (walk_max_wait over MW_SPAN)
 * and start time (up to NOW_MAX) are drawn from the seed, its clock, and the admissions so far
 * (at most CAP). ctx is the test's own (an oracle's counts).
 */
struct walk {
	struct eng e;
	uint64_t L, W, mw;
	rlt_ns_t now, prev;
	struct adm *a;
	size_t n, cap;
	void *ctx;
};

static inline void walk_begin(struct walk *w, uint64_t *seed, enum rlt_algo algo, uint64_t L,
                              uint64_t W, uint64_t mw_span, rlt_ns_t now_max, size_t cap)
{
	w->L = L;
	w->W = W;
	w->mw = walk_max_wait(seed, mw_span);
	w->now = rlt_test_range(seed, 0, now_max);
	w->prev = 0;
	w->n = 0;
	w->cap = cap;
	w->a = malloc(cap * sizeof *w->a);
	w->ctx = NULL;
	assert_non_null(w->a);
	mk(&w->e, algo, L, W, w->mw);
}

static inline void walk_end(struct walk *w)
{
	free(w->a);
	unmk(&w->e);
}

/*
 * What every engine's decision meets, V at AT for COST in mode M at w->now: a denial's time is
 * later (MODE_NOW) or past the max-wait (a reservation); a go is at once, a wait within the
 * max-wait, and not before the last admission (FIFO), which it then is (recorded). Returns 1
 * when admitted.
 */
static inline int walk_admit(struct walk *w, enum rlt_verdict v, rlt_ns_t at, uint64_t c,
                             enum rlt_mode m)
{
	if (v == RLT_DENY) {
		assert_true(m == RLT_MODE_NOW ? at > w->now : at - w->now > w->mw);
		return 0;
	}
	assert_true(v == RLT_GO ? at == w->now : at > w->now && at - w->now <= w->mw);
	assert_true(at >= w->prev);
	w->prev = at;
	w->a[w->n].t = at;
	w->a[w->n].c = c;
	w->n++;
	return 1;
}

/* AT, the time an engine gave for COST (a go's, a reservation's or a denial's), is the earliest:
 * not before now nor the last admission, and the admissions so far FIT the cost there and not one
 * ns before (unless that is before now or the last admission, which hold it). */
static inline void walk_earliest(const struct walk *w, rlt_ns_t at, uint64_t c,
                                 int (*fits)(const struct walk *, rlt_ns_t, uint64_t))
{
	rlt_ns_t from = w->now > w->prev ? w->now : w->prev;

	assert_true(at >= from);
	assert_true(fits(w, at, c));
	if (at > from)
		assert_true(!fits(w, at - 1, c));
}

/* Threads: 8 x 20,000 MODE_NOW decisions on one state, a fake clock in a shared atomic. */
#define THREADS 8
#define PER_THREAD 20000

struct thr {
	struct eng *e;
	_Atomic uint64_t *clock;
	uint64_t seed;
	struct adm *a;
	size_t n;
};

static inline void *thr_main(void *arg)
{
	struct thr *t = arg;

	for (int i = 0; i < PER_THREAD; i++) {
		rlt_ns_t now = atomic_load(t->clock), at;
		uint64_t c = rlt_test_range(&t->seed, 1, 3);

		if (dec(t->e, now, c, RLT_MODE_NOW, &at) == RLT_GO) {
			t->a[t->n].t = at;
			t->a[t->n].c = c;
			t->n++;
		}
		atomic_fetch_add(t->clock, rlt_test_range(&t->seed, 0, 3));
	}
	return NULL;
}

/* Runs the threads and returns every admission, sorted by time (free it). */
static inline struct adm *run_threads(struct eng *e, uint64_t seed, size_t *n)
{
	_Atomic uint64_t clock = 1000000;
	struct thr t[THREADS];
	pthread_t id[THREADS];
	struct adm *all = malloc(THREADS * PER_THREAD * sizeof *all);

	assert_non_null(all);
	*n = 0;
	for (int i = 0; i < THREADS; i++) {
		t[i] = (struct thr){ .e = e, .clock = &clock, .seed = seed + (uint64_t)i,
		                     .a = malloc(PER_THREAD * sizeof(struct adm)) };
		assert_int_equal(pthread_create(&id[i], NULL, thr_main, &t[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		assert_int_equal(pthread_join(id[i], NULL), 0);
		memcpy(all + *n, t[i].a, t[i].n * sizeof *all);
		*n += t[i].n;
		free(t[i].a);
	}
	qsort(all, *n, sizeof *all, adm_cmp);
	return all;
}

/*
 * A process that dies holding a shared state's lock does not block the others (white box: the
 * lock is the state's first member), for a window or the log engine of LIMIT per WINDOW_NS. 4 units go at 100; a child takes 3 at 200 and dies holding
 * the lock; then 3 are available at 300, they go, and 1 more is denied. Returns the time that
 * denial gives.
 */
static inline rlt_ns_t shared_owner_dies(enum rlt_algo algo, uint64_t limit, uint64_t window_ns)
{
	const struct rlt__engine_ops *ops = ops_of(algo);
	struct rlt_params params, *p = &params;
	size_t size;
	void *st;
	rlt_ns_t at;
	int status;

	fill(p, algo, limit, window_ns, NEVER);
	size = ops->state_size(p);
	st = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(st != MAP_FAILED);
	assert_int_equal(ops->init(p, st, RLT_STATE_SHARED), 0);
	assert_int_equal(ops->decide(p, st, 100, 4, RLT_MODE_NOW, &at), RLT_GO);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		ops->decide(p, st, 200, 3, RLT_MODE_NOW, &at);
		rlt__lock_take((struct rlt__lock *)st);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(ops->available(p, st, 300), 3);
	assert_int_equal(ops->decide(p, st, 300, 3, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(ops->decide(p, st, 300, 1, RLT_MODE_NOW, &at), RLT_DENY);
	ops->destroy(p, st);
	munmap(st, size);
	return at;
}

/*
 * Callers that reserve, wait for their time, and ask again at once: the long-run rate over
 * 2000 windows is L per window (within 0.1%).
 */
static inline double overload_rate(enum rlt_algo algo, uint64_t L, uint64_t W, int callers,
                                   uint64_t max_cost, uint64_t seed)
{
	struct eng e;
	rlt_ns_t next[16] = {0}, t1 = 100 * W, t2 = 2100 * W;
	uint64_t units = 0;

	mk(&e, algo, L, W, NEVER);
	for (int i = 0; i < callers; i++)
		next[i] = rlt_test_range(&seed, 0, W);
	for (;;) {
		int k = 0;
		rlt_ns_t at;
		uint64_t c = rlt_test_range(&seed, 1, max_cost);

		for (int i = 1; i < callers; i++)
			if (next[i] < next[k])
				k = i;
		if (next[k] >= t2)
			break;
		assert_int_not_equal(dec(&e, next[k], c, RLT_MODE_RESERVE, &at), RLT_DENY);
		if (at >= t1 && at < t2)
			units += c;
		next[k] = at;
	}
	unmk(&e);
	return (double)units / (2000.0 * (double)L);
}

#endif
