/*
 * trap_waits.h: when the waits (poll, select, epoll) and epoll_ctl on a socket start to trap
 * under the system-call front (trap_waits.c): from the start when a hold can begin inside a
 * call (a connect or accept rule, network conditions), else from the first shortage.
 */
#ifndef RLT_TRAP_WAITS_H
#define RLT_TRAP_WAITS_H

#include <signal.h>

/* At the handler's start in an image, once its rules are loaded and its filter is in. */
void rlt_trap_waits_start(void);
/* After a trapped call on fd (a data call, connect, accept): if a wait would hold that socket
 * now, or network conditions came (`set`), the waits trap from now on (once). */
void rlt_trap_waits_after(long fd);
/* Whether a SIGSYS is the wake sent to a thread asleep in an epoll wait of its own. */
int rlt_trap_is_wake(const siginfo_t *si);

#endif
