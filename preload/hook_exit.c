/*
 * hook_exit.c: _exit and _Exit. exit() removes the process's published page (rlthrottle(1) COMMANDS) through
 * atexit, but _exit runs no handlers, and it is how a fork's child usually ends (Python's
 * os._exit in a forking server, a shell's subshell): each such child would leave its page in
 * /dev/shm until a reader found it stale, and a forking server would fill the tmpfs. The page
 * goes first (rlt_pre_unpublish leaves a page that is not this process's own), then the real
 * call. Nothing else is done here: the RLT_STATS summary stays exit()'s, as before.
 */
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "load.h"
#include "preload.h"
#include "real.h"

static __attribute__((noreturn)) void end(int status, void (*real)(int))
{
	rlt_pre_unpublish();
	/* before the real symbols are resolved (a failing constructor), the system call itself */
	if (real && atomic_load_explicit(&rlt_pre_real_ready, memory_order_acquire))
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

RLT_EXPORT void _exit(int status)
{
	end(status, real__exit);
}

RLT_EXPORT void _Exit(int status)
{
	end(status, real__Exit);
}
