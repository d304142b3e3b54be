/*
 * preload.h: the conventions of every file of the preload (and of the system-call front's build
 * of it): which functions leave the library, which part of a hook is kept out of line, and
 * the one way a hook turns an error value into errno. It declares no function of a file: each
 * module has its own header (real.h, load.h, fdtable.h, io_pacing.h, hook_*.h, net_hook.h).
 * Only symbols marked RLT_EXPORT (the hooks) leave librlthrottle.so.
 */
#ifndef RLT_PRELOAD_H
#define RLT_PRELOAD_H

#include <errno.h>

#ifdef RLT_NOLIBC /* the freestanding blob exports nothing: its caller jumps to fixed addresses */
#define RLT_EXPORT
#else
#define RLT_EXPORT __attribute__((visibility("default")))
#endif
/* The part of a hook past its gate (rlt_pre_passes): kept out of the hook, so that the hook's
 * way to the real function builds no frame and saves no register. */
#define RLT_SLOW __attribute__((noinline))

/* errno := e, return -1: the one place a hook turns an error value into errno. */
static inline int rlt_pre_fail(int e)
{
	errno = e;
	return -1;
}

#endif
