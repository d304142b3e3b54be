/*
 * hook_fd.c: the calls that create, copy and close fds, hooked only to keep the fd table true.
 * None of them is throttled.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdtable.h"
#include "load.h"
#include "net_hook.h"
#include "preload.h"
#include "real.h"

/* A socket fd of ours that a borrowing child (rlt_pre_borrowed) must not forget: files and
 * never-seen fds need no system call, as forgetting them loses nothing. */
static int keep_entry(int fd)
{
	struct rlt_pre_fd *e = rlt_pre_fd_slot(fd);
	return e && atomic_load_explicit(&e->kind, memory_order_acquire) == RLT_FD_SOCKET &&
	       rlt_pre_borrowed();
}

RLT_EXPORT int socket(int domain, int type, int protocol)
{
	rlt_pre_ensure_real();
	int fd = real_socket(domain, type, protocol);
	if (fd >= 0 && !rlt_pre_borrowed())
		rlt_pre_fd_new_socket(fd, domain, type, (type & SOCK_NONBLOCK) != 0);
	return fd;
}

RLT_EXPORT int socketpair(int domain, int type, int protocol, int sv[2])
{
	rlt_pre_ensure_real();
	int rc = real_socketpair(domain, type, protocol, sv);
	if (rc == 0 && !rlt_pre_borrowed()) {
		rlt_pre_fd_new_socket(sv[0], domain, type, (type & SOCK_NONBLOCK) != 0);
		rlt_pre_fd_new_socket(sv[1], domain, type, (type & SOCK_NONBLOCK) != 0);
	}
	return rc;
}

RLT_EXPORT int close(int fd)
{
	rlt_pre_ensure_real();
	/* Forget first: once the kernel has closed fd, another thread may get the same number
	 * from socket() or open() before we would get to it. */
	if (!keep_entry(fd))
		rlt_pre_fd_forget(fd);
	return real_close(fd);
}

/* The entries from first to last (the table's end at most), after they were closed. */
static void forget_range(unsigned int first, unsigned int last)
{
	int top = rlt_pre_fd_top();

	/* up to the highest fd ever seen: a closefrom(3) must not walk (and fault in) every
	 * page of a table sized for a million fds */
	if (top < 0 || first > (unsigned int)top || rlt_pre_borrowed())
		return;
	if (last > (unsigned int)top)
		last = (unsigned int)top;
	for (unsigned int fd = first; fd <= last; fd++) {
		struct rlt_pre_fd *e = rlt_pre_fd_slot((int)fd);
		if (!e)
			break;
		if (atomic_load_explicit(&e->kind, memory_order_relaxed) != RLT_FD_UNKNOWN || e->conn)
			rlt_pre_fd_forget((int)fd);
	}
}

RLT_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	rlt_pre_ensure_real();
	int rc = real_close_range ? real_close_range(first, last, flags)
	                          : (int)syscall(SYS_close_range, first, last, flags);
	/* CLOSE_RANGE_CLOEXEC only marks the fds; they stay open until an exec */
	if (rc == 0 && !(flags & CLOSE_RANGE_CLOEXEC)) {
		int saved = errno;
		forget_range(first, last);
		errno = saved;
	}
	return rc;
}

/* The C library's closefrom closes through its internal close_range, which we never see. */
RLT_EXPORT void closefrom(int lowfd)
{
	rlt_pre_ensure_real();
	int saved = errno;
	if (lowfd < 0)
		lowfd = 0;
	if (real_closefrom)
		real_closefrom(lowfd);
	else
		syscall(SYS_close_range, (unsigned int)lowfd, ~0U, 0);
	forget_range((unsigned int)lowfd, ~0U);
	errno = saved;
}

#ifndef RLT_NOLIBC /* the freestanding build has no stdio */
RLT_EXPORT int fclose(FILE *f)
{
	rlt_pre_ensure_real();
	/* fclose closes its fd through the C library's internal close, which we never see */
	int fd = f ? fileno(f) : -1;
	/* a paced stream (hook_stdio.c) writes what it holds through the write hook, which must
	 * still know the socket */
	if (fd >= 0 && rlt_pre_fd_slot(fd) &&
	    atomic_load_explicit(&rlt_pre_fd_slot(fd)->kind, memory_order_acquire) == RLT_FD_SOCKET)
		fflush(f);
	if (fd >= 0 && !keep_entry(fd))
		rlt_pre_fd_forget(fd);
	return real_fclose(f);
}
#endif

RLT_EXPORT int dup(int oldfd)
{
	rlt_pre_ensure_real();
	int fd = real_dup(oldfd);
	if (fd >= 0 && !rlt_pre_borrowed())
		rlt_pre_fd_dup(oldfd, fd);
	return fd;
}

RLT_EXPORT int dup2(int oldfd, int newfd)
{
	rlt_pre_ensure_real();
	int fd = real_dup2(oldfd, newfd);
	if (fd >= 0 && !rlt_pre_borrowed())
		rlt_pre_fd_dup(oldfd, fd);
	return fd;
}

RLT_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	rlt_pre_ensure_real();
	int fd = real_dup3(oldfd, newfd, flags);
	if (fd >= 0 && !rlt_pre_borrowed())
		rlt_pre_fd_dup(oldfd, fd);
	return fd;
}

/* The third argument is an int, a long or a pointer depending on cmd; all are passed in one
 * register on the ABIs we build for, so it is carried as a pointer-sized word. */
static int fcntl_common(fcntl_t real, int fd, int cmd, void *arg)
{
	int rc = real(fd, cmd, arg);

	if (rc < 0)
		return rc;
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		if (!rlt_pre_borrowed())
			rlt_pre_fd_dup(fd, rc);
		break;
	case F_SETFL: {
		struct rlt_pre_fd *e = rlt_pre_fd_slot(fd);
		if (e && atomic_load(&e->kind) == RLT_FD_SOCKET && !rlt_pre_borrowed())
			rlt_pre_fd_set_nonblock(e, ((long)arg & O_NONBLOCK) != 0);
		break;
	}
	}
	return rc;
}

/* fcntl and fcntl64 differ only in the real call (fcntl64 where the C library has one). */
#define FCNTL_ENTRY(name, call)                                                                  \
	RLT_EXPORT int name(int fd, int cmd, ...)                                                \
	{                                                                                        \
		va_list ap;                                                                      \
		va_start(ap, cmd);                                                               \
		void *arg = va_arg(ap, void *);                                                  \
		va_end(ap);                                                                      \
		rlt_pre_ensure_real();                                                           \
		return fcntl_common(call, fd, cmd, arg);                                         \
	}

FCNTL_ENTRY(fcntl, real_fcntl)
FCNTL_ENTRY(fcntl64, real_fcntl64 ? (fcntl_t)real_fcntl64 : real_fcntl)

RLT_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	rlt_pre_ensure_real();
	/* a stream under latency: what is due is in its delay line, not the kernel's queue */
	if (req == FIONREAD && arg && rlt_pre_net_inq(fd, arg))
		return 0;
	int rc = real_ioctl(fd, req, arg);
	if (rc == 0 && req == FIONBIO && arg) {
		struct rlt_pre_fd *e = rlt_pre_fd_slot(fd);
		if (e && atomic_load(&e->kind) == RLT_FD_SOCKET && !rlt_pre_borrowed())
			rlt_pre_fd_set_nonblock(e, *(int *)arg != 0);
	}
	return rc;
}
