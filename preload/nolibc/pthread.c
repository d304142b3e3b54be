/*
 * pthread.c: pthread_once, and the mutex the core uses: the lock of a window or log engine in
 * a shared segment (engine_lock.c): process-shared, robust, error-checking.
 *
 * A segment may be shared with preloaded processes, whose glibc takes the same mutex: so the
 * mutex keeps glibc's layout and protocol (x86_64 struct __pthread_mutex_s): the owner's thread
 * id in __lock, FUTEX_WAITERS when someone sleeps on it, FUTEX_OWNER_DIED when the kernel found
 * the owner gone, __owner PTHREAD_MUTEX_INCONSISTENT until pthread_mutex_consistent.
 *
 * What is not the same: glibc puts a robust mutex it holds on the thread's robust list, which
 * the kernel walks when the thread dies (set_robust_list). The kernel keeps one list per thread,
 * and in a static glibc program it is glibc's, in its TLS: we cannot add to it safely from a
 * signal handler. So a holder here is on no list. Instead a waiter here wakes every 100 ms and
 * asks whether the holder's thread still exists (kill(tid, 0)); if not, it takes the lock with
 * EOWNERDEAD, as glibc would have. A waiter in a preloaded process is not told: it waits until
 * the segment's next user here finds the holder gone. A reused thread id looks alive.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "rawsys.h"

/* glibc's __kind bits and __owner states (nptl/pthreadP.h) */
#define KIND_TYPE_MASK 3
#define KIND_ROBUST 16
#define KIND_PSHARED 128
#define OWNER_INCONSISTENT (INT_MAX - 1)
#define OWNER_NOTRECOVERABLE INT_MAX

/* ----- once ----- */

int pthread_once(pthread_once_t *once, void (*fn)(void))
{
	_Atomic int *w = (_Atomic int *)once;
	int cur = 0;

	/* 0: never run, 1: running, 2: done */
	if (atomic_load_explicit(w, memory_order_acquire) == 2)
		return 0;
	if (atomic_compare_exchange_strong(w, &cur, 1)) {
		fn();
		atomic_store_explicit(w, 2, memory_order_release);
		RLT_SYS4(SYS_futex, w, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, INT_MAX, NULL);
		return 0;
	}
	while ((cur = atomic_load_explicit(w, memory_order_acquire)) == 1)
		RLT_SYS4(SYS_futex, w, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 1, NULL);
	return 0;
}

/* ----- attributes: the __kind the mutex will have, in the attribute's first int ----- */

int pthread_mutexattr_init(pthread_mutexattr_t *a)
{
	memset(a, 0, sizeof *a);
	return 0;
}

int pthread_mutexattr_destroy(pthread_mutexattr_t *a)
{
	(void)a;
	return 0;
}

static int *attr_kind(pthread_mutexattr_t *a)
{
	return (int *)(void *)a;
}

int pthread_mutexattr_settype(pthread_mutexattr_t *a, int type)
{
	if (type < 0 || type > KIND_TYPE_MASK)
		return EINVAL;
	*attr_kind(a) = (*attr_kind(a) & ~KIND_TYPE_MASK) | type;
	return 0;
}

int pthread_mutexattr_setpshared(pthread_mutexattr_t *a, int pshared)
{
	*attr_kind(a) = pshared ? *attr_kind(a) | KIND_PSHARED : *attr_kind(a) & ~KIND_PSHARED;
	return 0;
}

int pthread_mutexattr_setrobust(pthread_mutexattr_t *a, int robust)
{
	*attr_kind(a) = robust ? *attr_kind(a) | KIND_ROBUST : *attr_kind(a) & ~KIND_ROBUST;
	return 0;
}

/* ----- the mutex ----- */

int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	memset(m, 0, sizeof *m);
	m->__data.__kind = a ? *(const int *)(const void *)a : 0;
	return 0;
}

int pthread_mutex_destroy(pthread_mutex_t *m)
{
	(void)m;
	return 0;
}

static _Atomic int *word(pthread_mutex_t *m)
{
	return (_Atomic int *)&m->__data.__lock;
}

static int private_flag(const pthread_mutex_t *m)
{
	return m->__data.__kind & KIND_PSHARED ? 0 : FUTEX_PRIVATE_FLAG;
}

static int acquired(pthread_mutex_t *m, int tid, int rc)
{
	m->__data.__owner = rc == EOWNERDEAD ? OWNER_INCONSISTENT : tid;
	m->__data.__nusers++;
	return rc;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	int tid = (int)RLT_SYS0(SYS_gettid);
	_Atomic int *w = word(m);

	if (m->__data.__owner == OWNER_NOTRECOVERABLE)
		return ENOTRECOVERABLE;
	for (;;) {
		int cur = atomic_load(w);
		if (cur == 0) {
			if (atomic_compare_exchange_strong(w, &cur, tid))
				return acquired(m, tid, 0);
			continue;
		}
		if (cur & FUTEX_OWNER_DIED) {
			/* the holder died holding it: ours, inconsistent until repaired */
			if (atomic_compare_exchange_strong(w, &cur, tid | (cur & FUTEX_WAITERS)))
				return acquired(m, tid, EOWNERDEAD);
			continue;
		}
		if ((cur & FUTEX_TID_MASK) == tid)
			return EDEADLK;
		if (!(cur & FUTEX_WAITERS)) {
			if (!atomic_compare_exchange_strong(w, &cur, cur | FUTEX_WAITERS))
				continue;
			cur |= FUTEX_WAITERS;
		}
		struct timespec t = {0, 100 * 1000 * 1000};
		long r = RLT_SYS4(SYS_futex, w, FUTEX_WAIT | private_flag(m), cur, &t);
		if (r == -ETIMEDOUT && RLT_SYS2(SYS_kill, cur & FUTEX_TID_MASK, 0) == -ESRCH)
			atomic_compare_exchange_strong(w, &cur, cur | FUTEX_OWNER_DIED);
	}
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	int tid = (int)RLT_SYS0(SYS_gettid);
	_Atomic int *w = word(m);

	if ((atomic_load(w) & FUTEX_TID_MASK) != tid)
		return EPERM;
	/* unlocked while inconsistent: no one may use it again (as glibc) */
	m->__data.__owner = m->__data.__owner == OWNER_INCONSISTENT ? OWNER_NOTRECOVERABLE : 0;
	m->__data.__nusers--;
	if (atomic_exchange(w, 0) & FUTEX_WAITERS)
		RLT_SYS3(SYS_futex, w, FUTEX_WAKE | private_flag(m), 1);
	return 0;
}

int pthread_mutex_consistent(pthread_mutex_t *m)
{
	if (!(m->__data.__kind & KIND_ROBUST) || m->__data.__owner != OWNER_INCONSISTENT)
		return EINVAL;
	m->__data.__owner = (int)RLT_SYS0(SYS_gettid);
	return 0;
}
