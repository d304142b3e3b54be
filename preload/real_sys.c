/*
 * real_sys.c: the real functions of the freestanding build (make trap-elf), in place of
 * real.c's dlsym: each real_<fn> points at a raw system call with the C library's convention
 * (-1 and errno), so that the hooks run unchanged. Under the in-process handler these are the
 * calls the program made, made by us from the handler's address.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/syscall.h>

#include "rawsys.h"
#include "real.h"
#include "trap_signals.h"

_Atomic int rlt_pre_real_ready = 1;

void rlt_pre_real_init(void)
{
}

#define R(x) rlt_trap_ret(x)

static int sys_socket(int d, int t, int p)
{
	return (int)R(RLT_SYS3(SYS_socket, d, t, p));
}

static int sys_socketpair(int d, int t, int p, int sv[2])
{
	return (int)R(RLT_SYS4(SYS_socketpair, d, t, p, sv));
}

static int sys_connect(int fd, const struct sockaddr *a, socklen_t n)
{
	return (int)R(RLT_SYS3(SYS_connect, fd, a, n));
}

static int sys_accept4(int fd, struct sockaddr *a, socklen_t *n, int fl)
{
	return (int)R(RLT_SYS4(SYS_accept4, fd, a, n, fl));
}

static int sys_getsockopt(int fd, int level, int name, void *v, socklen_t *n)
{
	return (int)R(RLT_SYS(SYS_getsockopt, fd, level, name, v, n, 0));
}

static int sys_accept(int fd, struct sockaddr *a, socklen_t *n)
{
	return (int)R(RLT_SYS3(SYS_accept, fd, a, n));
}

static ssize_t sys_sendto(int fd, const void *b, size_t n, int fl, const struct sockaddr *a,
                          socklen_t al)
{
	return R(RLT_SYS(SYS_sendto, fd, b, n, fl, a, al));
}

static ssize_t sys_send(int fd, const void *b, size_t n, int fl)
{
	return R(RLT_SYS(SYS_sendto, fd, b, n, fl, 0, 0));
}

static ssize_t sys_sendmsg(int fd, const struct msghdr *m, int fl)
{
	return R(RLT_SYS3(SYS_sendmsg, fd, m, fl));
}

static int sys_sendmmsg(int fd, struct mmsghdr *v, unsigned n, int fl)
{
	return (int)R(RLT_SYS4(SYS_sendmmsg, fd, v, n, fl));
}

static ssize_t sys_write(int fd, const void *b, size_t n)
{
	return R(RLT_SYS3(SYS_write, fd, b, n));
}

static ssize_t sys_writev(int fd, const struct iovec *v, int n)
{
	return R(RLT_SYS3(SYS_writev, fd, v, n));
}

static ssize_t sys_sendfile(int out, int in, off_t *off, size_t n)
{
	return R(RLT_SYS4(SYS_sendfile, out, in, off, n));
}

static ssize_t sys_sendfile64(int out, int in, off64_t *off, size_t n)
{
	return R(RLT_SYS4(SYS_sendfile, out, in, off, n));
}

static ssize_t sys_splice(int in, loff_t *oi, int out, loff_t *oo, size_t n, unsigned fl)
{
	return R(RLT_SYS(SYS_splice, in, oi, out, oo, n, fl));
}

static ssize_t sys_recvfrom(int fd, void *b, size_t n, int fl, struct sockaddr *a, socklen_t *al)
{
	return R(RLT_SYS(SYS_recvfrom, fd, b, n, fl, a, al));
}

static ssize_t sys_recv(int fd, void *b, size_t n, int fl)
{
	return R(RLT_SYS(SYS_recvfrom, fd, b, n, fl, 0, 0));
}

static ssize_t sys_recvmsg(int fd, struct msghdr *m, int fl)
{
	return R(RLT_SYS3(SYS_recvmsg, fd, m, fl));
}

static int sys_recvmmsg(int fd, struct mmsghdr *v, unsigned n, int fl, struct timespec *t)
{
	return (int)R(RLT_SYS(SYS_recvmmsg, fd, v, n, fl, t, 0));
}

static ssize_t sys_read(int fd, void *b, size_t n)
{
	return R(RLT_SYS3(SYS_read, fd, b, n));
}

/* off goes in one register on x86_64 (the high half of pos_l/pos_h is ignored there) */
static ssize_t sys_preadv2(int fd, const struct iovec *v, int n, off_t off, int flags)
{
	return rlt_trap_ret(RLT_SYS(SYS_preadv2, fd, v, n, off, 0, flags));
}

static ssize_t sys_pwritev2(int fd, const struct iovec *v, int n, off_t off, int flags)
{
	return rlt_trap_ret(RLT_SYS(SYS_pwritev2, fd, v, n, off, 0, flags));
}

static ssize_t sys_readv(int fd, const struct iovec *v, int n)
{
	return R(RLT_SYS3(SYS_readv, fd, v, n));
}

static int sys_close(int fd)
{
	return (int)R(RLT_SYS1(SYS_close, fd));
}

static int sys_close_range(unsigned lo, unsigned hi, int fl)
{
	return (int)R(RLT_SYS3(SYS_close_range, lo, hi, fl));
}

static void sys_closefrom(int lo)
{
	RLT_SYS3(SYS_close_range, lo, ~0U, 0);
}

static int sys_dup(int fd)
{
	return (int)R(RLT_SYS1(SYS_dup, fd));
}

static int sys_dup2(int fd, int to)
{
	return (int)R(RLT_SYS2(SYS_dup2, fd, to));
}

static int sys_dup3(int fd, int to, int fl)
{
	return (int)R(RLT_SYS3(SYS_dup3, fd, to, fl));
}

/* fcntl and ioctl: the one argument they take, whatever its type, is a word. */
static int sys_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	return (int)R(RLT_SYS3(SYS_fcntl, fd, cmd, arg));
}

static int sys_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	long arg;

	va_start(ap, req);
	arg = va_arg(ap, long);
	va_end(ap);
	return (int)R(RLT_SYS3(SYS_ioctl, fd, req, arg));
}

/* The waits with a signal mask: SIGSYS kept deliverable in it (trap_signals.c). */
static int sys_ppoll(struct pollfd *f, nfds_t n, const struct timespec *t, const sigset_t *m)
{
	const long a[6] = {(long)f, (long)n, (long)t, (long)m, m ? 8 : 0, 0};
	return (int)R(rlt_trap_masked_wait(SYS_ppoll, a));
}

static int sys_pselect(int n, fd_set *r, fd_set *w, fd_set *x, const struct timespec *t,
                       const sigset_t *m)
{
	const struct {
		const sigset_t *ss;
		size_t len;
	} ps = {m, 8};
	const long a[6] = {n, (long)r, (long)w, (long)x, (long)t, (long)&ps};
	if (!m)
		return (int)R(RLT_SYS(SYS_pselect6, n, r, w, x, t, 0));
	return (int)R(rlt_trap_masked_wait(SYS_pselect6, a));
}

static int sys_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	return (int)R(RLT_SYS4(SYS_epoll_ctl, epfd, op, fd, ev));
}

static int sys_epoll_pwait(int epfd, struct epoll_event *e, int max, int ms, const sigset_t *m)
{
	const long a[6] = {epfd, (long)e, max, ms, (long)m, m ? 8 : 0};
	return (int)R(rlt_trap_masked_wait(SYS_epoll_pwait, a));
}

static int sys_epoll_pwait2(int epfd, struct epoll_event *e, int max, const struct timespec *t,
                            const sigset_t *m)
{
	const long a[6] = {epfd, (long)e, max, (long)t, (long)m, m ? 8 : 0};
	return (int)R(rlt_trap_masked_wait(SYS_epoll_pwait2, a));
}

static void sys_exit(int status)
{
	for (;;)
		RLT_SYS1(SYS_exit_group, status);
}

#define RLT_REAL_SYS(ret, name, args) name##_t real_##name = sys_##name;
/* the entries whose system call has another name */
#define sys_fcntl64 sys_fcntl
#define sys__exit sys_exit
#define sys__Exit sys_exit
RLT_REAL_SYMBOLS(RLT_REAL_SYS)
