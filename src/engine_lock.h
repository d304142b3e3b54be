/*
 * engine_lock.h: the lock of the engines that need one (sliding window, sliding log). It must
 * be safe where a plain mutex is not: entered again by a signal handler that interrupted its
 * own holder (send() is async-signal-safe, so a handler may send), and inherited held by a
 * fork() child whose holder thread does not exist there.
 *
 * A process-local lock is a futex word naming its holder: the thread's id in this process
 * and the fork generation it was taken in (bumped in every child, before anything else runs
 * there). A word of an older generation names a thread the child does not have: it is free.
 * A shared lock is a robust, error-checking, process-shared mutex: the kernel frees it when
 * its holder dies, and a second lock by its own holder fails (EDEADLK) instead of waiting.
 *
 * A call that finds the lock held by its own thread (RLT_LOCK_SELF) must not wait: the holder
 * cannot go on until it returns. It is admitted at once and adds its cost to `pending`, which
 * the next holder records as admitted (rlt__lock_pending_fold); a refund of it comes off
 * `pending` again. Uncontended, taking and releasing is one compare-and-swap and one store,
 * no system call; a contended lock sleeps on the futex, it never spins.
 */
#ifndef RLT_ENGINE_LOCK_H
#define RLT_ENGINE_LOCK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "rlthrottle.h"

struct rlt__lock {
	_Atomic uint64_t word;     /* local: 0 free, else generation << 32 | thread id */
	_Atomic uint32_t wake;     /* local: the futex sleepers wait on; a release bumps it */
	_Atomic uint32_t sleepers; /* local: threads asleep on `wake` or about to be */
	_Atomic uint64_t pending;  /* units admitted by calls nested in the holder's decision */
	uint32_t shared;           /* RLT_STATE_SHARED: `m` is the lock, not `word` */
	pthread_mutex_t m;         /* shared: robust, error-checking, process-shared */
};

enum {
	RLT_LOCK_HELD = 0,      /* taken */
	RLT_LOCK_RECOVERED = 1, /* taken from a holder that is gone (died, or lost in a fork):
	                           the caller repairs what it must before going on */
	RLT_LOCK_SELF = 2,      /* NOT taken: this thread holds it already (a signal handler
	                           interrupted its decision); do not wait, do not release */
};

/* 0 or -errno. */
int rlt__lock_init(struct rlt__lock *l, unsigned flags);
void rlt__lock_destroy(struct rlt__lock *l);
/* RLT_LOCK_HELD, RLT_LOCK_RECOVERED or RLT_LOCK_SELF, or -ETIMEDOUT at `deadline`
 * (CLOCK_MONOTONIC ns, RLT_NS_NEVER: none; a shared lock waits without one), or another
 * -errno (never with a valid lock). */
int rlt__lock_take_until(struct rlt__lock *l, rlt_ns_t deadline);
/* The waking half of a release that found sleepers. */
void rlt__lock_wake(struct rlt__lock *l);

/* The fast paths, inline: a decision pays one compare-and-swap and one store for its lock,
 * no call. The thread's id is 0 until its first slow path hands it one. */
extern _Atomic uint32_t rlt__lock_generation;
#ifdef RLT_NOLIBC /* no TLS: the thread block (preload/nolibc/nolibc.h, pre-included) */
#define rlt__lock_self (rlt_trap_self()->lock_self)
#else
extern _Thread_local uint32_t rlt__lock_self __attribute__((tls_model("initial-exec")));
#endif

static inline int rlt__lock_take(struct rlt__lock *l)
{
	uint32_t id = rlt__lock_self;
	uint64_t cur = 0;

	if (__builtin_expect(!l->shared && id != 0, 1)) {
		uint64_t self =
			(uint64_t)atomic_load_explicit(&rlt__lock_generation, memory_order_relaxed)
				<< 32 |
			id;
		if (atomic_compare_exchange_strong(&l->word, &cur, self))
			return RLT_LOCK_HELD;
	}
	return rlt__lock_take_until(l, RLT_NS_NEVER);
}

static inline void rlt__lock_release(struct rlt__lock *l)
{
	if (__builtin_expect(l->shared, 0)) {
		pthread_mutex_unlock(&l->m);
		return;
	}
	/* sequentially consistent, as the sleepers' count and read of the word (take_slow) */
	atomic_store(&l->word, 0);
	if (atomic_load(&l->sleepers))
		rlt__lock_wake(l);
}
/* A nested call (RLT_LOCK_SELF): charges `units` to pending, or gives them back from it. */
void rlt__lock_pending_add(struct rlt__lock *l, uint64_t units);

/* What a decision does when its lock was not taken (rc is not RLT_LOCK_HELD): a signal handler
 * that interrupted its own thread's decision would wait forever, so it is admitted now and the
 * next decision records it (pending); a lock that could not be had refuses. */
static inline enum rlt_verdict rlt__lock_not_held(struct rlt__lock *l, int rc, rlt_ns_t now,
                                                   uint64_t cost, rlt_ns_t *at)
{
	if (rc == RLT_LOCK_SELF) {
		rlt__lock_pending_add(l, cost);
		*at = now;
		return RLT_GO;
	}
	*at = RLT_NS_NEVER;
	return RLT_DENY;
}
void rlt__lock_pending_refund(struct rlt__lock *l, uint64_t units);
/* The holder: what nested calls left to record, and then that it recorded it. Reading and
 * clearing are two steps so that a holder dying in between leaves the units counted twice
 * (stricter), never lost. */
static inline uint64_t rlt__lock_pending(struct rlt__lock *l)
{
	return atomic_load_explicit(&l->pending, memory_order_relaxed);
}
void rlt__lock_pending_done(struct rlt__lock *l, uint64_t units);
/* The fork generation moves on (the pthread_atfork child handler calls it; exported for the
 * tests, which play a fork generation without forking). */
void rlt__lock_forked(void);

#endif
