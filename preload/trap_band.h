/*
 * trap_band.h: the band (trap_band.c): sockets live at fds from the band up, so that file I/O
 * is never trapped; small filters stacked on the launcher's for what the band does not cover.
 */
#ifndef RLT_TRAP_BAND_H
#define RLT_TRAP_BAND_H

extern int rlt_trap_band;
int rlt_trap_to_band(int fd, int cloexec);
/* fds below the band that are sockets all the same: their fd calls trap too (a small filter
 * stacked on the first); at the start, those the image inherited. */
int rlt_trap_watch(const int *fds, int n);
void rlt_trap_watch_inherited(void);
/* The waits (poll, select, epoll) and epoll_ctl on a band fd trap from now on, on every
 * thread (once; when: trap_waits.c). */
void rlt_trap_watch_waits(void);
/* A filter for the data calls of classes (trap_abi.h) the launcher's filter does not trap. */
void rlt_trap_watch_class(unsigned classes);

#endif
