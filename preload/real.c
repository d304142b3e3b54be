/*
 * real.c: the functions the hooks stand in front of, resolved once with dlsym(RTLD_NEXT), never
 * per call. A missing mandatory symbol, or dlsym handing back our own hook (a circular preload),
 * is fatal: there is no safe way to run the program without its real network calls.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "real.h"

#define RLT_DEFINE_REAL(ret, name, args) name##_t real_##name;
RLT_REAL_SYMBOLS(RLT_DEFINE_REAL)
#undef RLT_DEFINE_REAL

_Atomic int rlt_pre_real_ready;

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void die(const char *what, const char *name)
{
	/* raw write: stdio could allocate, and write is one of ours */
	syscall(SYS_write, 2, "rlthrottle: ", 12);
	syscall(SYS_write, 2, what, strlen(what));
	syscall(SYS_write, 2, name, strlen(name));
	syscall(SYS_write, 2, "\n", 1);
	_exit(125);
}

/* Optional: close_range, closefrom, execveat, fcntl64 and epoll_pwait2 are missing from older C libraries, sendfile64
 * and fcntl64 may be aliases; the hooks fall back to the system call or the other name. */
static int optional(const char *name)
{
	return !strcmp(name, "close_range") || !strcmp(name, "closefrom") ||
	       !strcmp(name, "execveat") ||
	       !strcmp(name, "fcntl64") ||
	       !strcmp(name, "sendfile64") || !strcmp(name, "epoll_pwait2");
}

static void *resolve(const char *name, void *ours)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (p == ours && p)
		die("circular reference to our own hook: ", name);
	if (!p && !optional(name))
		die("cannot find the real ", name);
	return p;
}

static void resolve_all(void)
{
#define RLT_RESOLVE(ret, name, args)                                                             \
	{                                                                                        \
		extern ret name args;                                                            \
		real_##name = (name##_t)resolve(#name, (void *)name);                           \
	}
	RLT_REAL_SYMBOLS(RLT_RESOLVE)
#undef RLT_RESOLVE
	atomic_store_explicit(&rlt_pre_real_ready, 1, memory_order_release);
}

void rlt_pre_real_init(void)
{
	pthread_once(&once, resolve_all);
}
