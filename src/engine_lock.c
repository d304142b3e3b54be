/*
 * engine_lock.c: the lock of the engines that need one (sliding window, sliding log).
 * A process-local state takes a plain mutex. A shared one takes a process-shared robust mutex,
 * so that a process that dies holding it does not block the others; each engine orders its
 * updates so that whatever the dead holder was doing is either done or not.
 */
#include <errno.h>

#include "engine.h"

int rlt__engine_lock_init(pthread_mutex_t *m, unsigned flags)
{
	pthread_mutexattr_t a;
	int e = pthread_mutexattr_init(&a);

	if (e)
		return -e;
	if (flags & RLT_STATE_SHARED) {
		e = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
		if (!e)
			e = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	}
	if (!e)
		e = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return -e;
}

int rlt__engine_lock(pthread_mutex_t *m, int *owner_died)
{
	int e = pthread_mutex_lock(m);

	*owner_died = e == EOWNERDEAD;
	if (e == EOWNERDEAD)
		e = pthread_mutex_consistent(m);
	return e;
}
