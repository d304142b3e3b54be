/*
 * engine_lock.c: the lock of the engines that need one (sliding window, sliding log); what it
 * guarantees and why is in engine_lock.h.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "engine_lock.h"

/* The fork generation: a lock word taken in an older one names a thread of an ancestor. */
_Atomic uint32_t rlt__lock_generation;
/* Thread ids are handed out once per thread, never 0 (the free word). A thread keeps its id
 * across fork(); the ids of its ancestor's other threads then name no one here. */
static _Atomic uint32_t next_id;
#ifndef RLT_NOLIBC
_Thread_local uint32_t rlt__lock_self __attribute__((tls_model("initial-exec")));
#endif

void rlt__lock_forked(void)
{
	atomic_fetch_add_explicit(&rlt__lock_generation, 1, memory_order_relaxed);
}

/* Before every other constructor, so that this child handler runs before anyone else's: a
 * handler registered earlier (or a program's) may send, and must find its locks free. */
__attribute__((constructor(101))) static void register_fork_handler(void)
{
	pthread_atfork(NULL, NULL, rlt__lock_forked);
}

/* This thread's word. A signal handler running before the id is stored takes one of its own;
 * the interrupted thread then stores its own: both are unique, and neither is held across the
 * other's use. */
static uint64_t self_word(void)
{
	uint32_t id = rlt__lock_self;

	while (!id)
		id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed) + 1;
	rlt__lock_self = id;
	return (uint64_t)atomic_load_explicit(&rlt__lock_generation, memory_order_relaxed) << 32 |
	       id;
}

int rlt__lock_init(struct rlt__lock *l, unsigned flags)
{
	pthread_mutexattr_t a;
	int e;

	atomic_init(&l->word, 0);
	atomic_init(&l->wake, 0);
	atomic_init(&l->sleepers, 0);
	atomic_init(&l->pending, 0);
	l->shared = !!(flags & RLT_STATE_SHARED);
	if (!l->shared)
		return 0;
	e = pthread_mutexattr_init(&a);
	if (e)
		return -e;
	e = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	if (!e)
		e = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if (!e)
		e = pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	if (!e)
		e = pthread_mutex_init(&l->m, &a);
	pthread_mutexattr_destroy(&a);
	return -e;
}

void rlt__lock_destroy(struct rlt__lock *l)
{
	if (l->shared)
		pthread_mutex_destroy(&l->m);
}

static int take_shared(struct rlt__lock *l)
{
	int e = pthread_mutex_lock(&l->m);

	if (e == 0)
		return RLT_LOCK_HELD;
	if (e == EDEADLK)
		return RLT_LOCK_SELF;
	if (e == EOWNERDEAD)
		return pthread_mutex_consistent(&l->m) == 0 ? RLT_LOCK_RECOVERED : -ENOTRECOVERABLE;
	return -e;
}

/*
 * Contended. Every pass either takes the word, finds it ours or an ancestor's, or sleeps
 * until a release: no spinning. A sleeper counts itself in `sleepers` before it reads the word
 * (all sequentially consistent), so a release that clears the word after that read sees the
 * count and bumps `wake` before the sleeper can miss it.
 */
static int take_slow(struct rlt__lock *l, uint64_t self, uint64_t cur, rlt_ns_t deadline)
{
	int saved = errno, rc;
	struct timespec until = {(time_t)(deadline / RLT_NS_PER_SEC),
	                         (long)(deadline % RLT_NS_PER_SEC)};

	for (;;) {
		if (cur == self) {
			rc = RLT_LOCK_SELF;
			break;
		}
		if (cur == 0 || cur >> 32 != self >> 32) {
			if (atomic_compare_exchange_strong(&l->word, &cur, self)) {
				rc = cur == 0 ? RLT_LOCK_HELD : RLT_LOCK_RECOVERED;
				break;
			}
			continue;
		}
		atomic_fetch_add(&l->sleepers, 1);
		uint32_t w = atomic_load(&l->wake);
		cur = atomic_load(&l->word);
		long r = 0;
		/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline */
		if (cur != 0 && cur != self && cur >> 32 == self >> 32)
			r = syscall(SYS_futex, &l->wake, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, w,
			            deadline == RLT_NS_NEVER ? NULL : &until, NULL,
			            FUTEX_BITSET_MATCH_ANY);
		atomic_fetch_sub(&l->sleepers, 1);
		if (r == -1 && errno == ETIMEDOUT) {
			rc = -ETIMEDOUT;
			break;
		}
		cur = atomic_load(&l->word);
	}
	errno = saved;
	return rc;
}

int rlt__lock_take_until(struct rlt__lock *l, rlt_ns_t deadline)
{
	uint64_t self, cur = 0;

	if (l->shared)
		return take_shared(l);
	self = self_word();
	if (atomic_compare_exchange_strong(&l->word, &cur, self))
		return RLT_LOCK_HELD;
	return take_slow(l, self, cur, deadline);
}

void rlt__lock_wake(struct rlt__lock *l)
{
	int saved = errno;

	atomic_fetch_add(&l->wake, 1);
	syscall(SYS_futex, &l->wake, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
	errno = saved;
}

void rlt__lock_pending_add(struct rlt__lock *l, uint64_t units)
{
	uint64_t cur = atomic_load_explicit(&l->pending, memory_order_relaxed);

	while (!atomic_compare_exchange_weak_explicit(&l->pending, &cur,
	                                              cur > UINT64_MAX - units ? UINT64_MAX
	                                                                       : cur + units,
	                                              memory_order_relaxed, memory_order_relaxed))
		;
}

void rlt__lock_pending_refund(struct rlt__lock *l, uint64_t units)
{
	uint64_t cur = atomic_load_explicit(&l->pending, memory_order_relaxed);

	while (!atomic_compare_exchange_weak_explicit(&l->pending, &cur,
	                                              cur > units ? cur - units : 0,
	                                              memory_order_relaxed, memory_order_relaxed))
		;
}

void rlt__lock_pending_done(struct rlt__lock *l, uint64_t units)
{
	rlt__lock_pending_refund(l, units);
}
