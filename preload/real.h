/*
 * real.h: the real functions the hooks stand in front of (real_<fn>), resolved once at load
 * with dlsym(RTLD_NEXT) (real.c), or raw system calls in the freestanding build (real_sys.c),
 * which has no stdio and so no fclose.
 */
#ifndef RLT_REAL_H
#define RLT_REAL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifdef RLT_NOLIBC
#define RLT_REAL_FCLOSE(X)
#define RLT_REAL_LIBC_ONLY(X)
#else
#define RLT_REAL_FCLOSE(X) X(int, fclose, (FILE *))
/* what only a C library has: the exec family (the system-call front traps execve itself) and
 * stdio (hook_exec.c, hook_stdio.c) */
#define RLT_REAL_LIBC_ONLY(X)                                                                    \
	X(int, execve, (const char *, char *const[], char *const[]))                             \
	X(int, execv, (const char *, char *const[]))                                             \
	X(int, execvp, (const char *, char *const[]))                                            \
	X(int, execvpe, (const char *, char *const[], char *const[]))                            \
	X(int, fexecve, (int, char *const[], char *const[]))                                     \
	X(int, execveat, (int, const char *, char *const[], char *const[], int))                 \
	X(FILE *, fdopen, (int, const char *))                                                   \
	X(int, vdprintf, (int, const char *, va_list))
#endif
#define RLT_REAL_SYMBOLS(X)                                                                      \
	X(int, socket, (int, int, int))                                                          \
	X(int, socketpair, (int, int, int, int[2]))                                             \
	X(int, connect, (int, const struct sockaddr *, socklen_t))                               \
	X(int, accept, (int, struct sockaddr *, socklen_t *))                                    \
	X(int, accept4, (int, struct sockaddr *, socklen_t *, int))                              \
	X(int, getsockopt, (int, int, int, void *, socklen_t *))                                 \
	X(ssize_t, send, (int, const void *, size_t, int))                                       \
	X(ssize_t, sendto, (int, const void *, size_t, int, const struct sockaddr *, socklen_t)) \
	X(ssize_t, sendmsg, (int, const struct msghdr *, int))                                   \
	X(int, sendmmsg, (int, struct mmsghdr *, unsigned int, int))                             \
	X(ssize_t, write, (int, const void *, size_t))                                           \
	X(ssize_t, writev, (int, const struct iovec *, int))                                     \
	X(ssize_t, sendfile, (int, int, off_t *, size_t))                                        \
	X(ssize_t, sendfile64, (int, int, off64_t *, size_t))                                    \
	X(ssize_t, splice, (int, loff_t *, int, loff_t *, size_t, unsigned))                       \
	X(ssize_t, recv, (int, void *, size_t, int))                                             \
	X(ssize_t, recvfrom, (int, void *, size_t, int, struct sockaddr *, socklen_t *))         \
	X(ssize_t, recvmsg, (int, struct msghdr *, int))                                         \
	X(int, recvmmsg, (int, struct mmsghdr *, unsigned int, int, struct timespec *))          \
	X(ssize_t, read, (int, void *, size_t))                                                  \
	X(ssize_t, readv, (int, const struct iovec *, int))                                      \
	X(ssize_t, preadv2, (int, const struct iovec *, int, off_t, int))                        \
	X(ssize_t, pwritev2, (int, const struct iovec *, int, off_t, int))                       \
	X(int, close, (int))                                                                     \
	X(int, close_range, (unsigned int, unsigned int, int))                                   \
	X(void, closefrom, (int))                                                                \
	RLT_REAL_FCLOSE(X)                                                                       \
	X(int, dup, (int))                                                                       \
	X(int, dup2, (int, int))                                                                 \
	X(int, dup3, (int, int, int))                                                            \
	X(int, fcntl, (int, int, ...))                                                           \
	X(int, fcntl64, (int, int, ...))                                                         \
	X(int, ioctl, (int, unsigned long, ...))                                                 \
	X(int, ppoll, (struct pollfd *, nfds_t, const struct timespec *, const sigset_t *))    \
	X(int, pselect, (int, fd_set *, fd_set *, fd_set *, const struct timespec *,            \
	                 const sigset_t *))                                                      \
	X(int, epoll_ctl, (int, int, int, struct epoll_event *))                                \
	X(int, epoll_pwait, (int, struct epoll_event *, int, int, const sigset_t *))            \
	X(int, epoll_pwait2, (int, struct epoll_event *, int, const struct timespec *,          \
	                      const sigset_t *))                                                 \
	X(void, _exit, (int))                                                                    \
	X(void, _Exit, (int))                                                                    \
	RLT_REAL_LIBC_ONLY(X)

#define RLT_DECLARE_REAL(ret, name, args)                                                        \
	typedef ret(*name##_t) args;                                                             \
	extern name##_t real_##name;
RLT_REAL_SYMBOLS(RLT_DECLARE_REAL)
#undef RLT_DECLARE_REAL

/* Resolves every real symbol; the first hook or the constructor calls it. */
void rlt_pre_real_init(void);
/* 1 once they are resolved (always, in the freestanding build). */
extern _Atomic int rlt_pre_real_ready;

/* Called at the top of every hook: makes sure the real symbols exist (a hook may run before our
 * constructor, from another library's constructor). */
static inline void rlt_pre_ensure_real(void)
{
	if (__builtin_expect(!atomic_load_explicit(&rlt_pre_real_ready, memory_order_acquire), 0))
		rlt_pre_real_init();
}

#endif
