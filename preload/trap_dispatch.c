/*
 * trap_dispatch.c: a trapped system call handed to the preload's hook of the same call.
 *
 * The hooks speak the C library's language (-1 and errno); the program that trapped expects
 * the kernel's (-errno in rax). Each call's arguments come from the registers the kernel
 * saved in the signal frame, and the answer goes back into that frame's rax: when the handler
 * returns, the program goes on after its syscall instruction as if the kernel had answered.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "fdtable.h"
#include "hook_poll.h"
#include "load.h"
#include "nolibc.h"
#include "rawsys.h"
#include "start.h"
#include "trap_band.h"
#include "trap_dispatch.h"
#include "trap_init.h"
#include "trap_signals.h"
#include "trap_stack.h"
#include "trap_waits.h"

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif

static long answer(long rc)
{
	return rc == -1 ? -(long)rlt_trap_self()->err : rc;
}

/* A new socket: into the band, where its reads and writes trap. */
static long new_fd(long fd, int cloexec)
{
	return fd < 0 ? fd : rlt_trap_to_band((int)fd, cloexec);
}

/* A socket copied below the band (inetd style): its fd calls trap there too. */
static long copied_down(long oldfd, long fd)
{
	struct rlt_pre_fd *e;
	int n = (int)fd;

	if (fd < 0 || fd >= rlt_trap_band)
		return fd;
	e = rlt_pre_fd_slot((int)oldfd);
	if (e && atomic_load_explicit(&e->kind, memory_order_acquire) == RLT_FD_SOCKET)
		rlt_trap_watch(&n, 1);
	return fd;
}

/* An accept: the listener (its readiness is held under an accept rule) and the new socket
 * (one let go later): if a wait would hold either now, the waits trap from now on. */
static long accepted(long lfd, long fd)
{
	rlt_trap_waits_after(lfd);
	rlt_trap_waits_after(fd);
	return fd;
}

/* pselect6's sixth argument: the signal mask by way of a pair, its address and its size. */
static const sigset_t *pselect_mask(long a5)
{
	const struct {
		const sigset_t *ss;
		size_t len;
	} *ps = (const void *)a5;
	return ps ? ps->ss : NULL;
}

/* A fork made here: the child returns through the handler on its copy of our stack, and
 * first makes our state its own, as the preload's fork handler does. */
static long forked(long rc)
{
	if (rc == 0) {
		rlt_trap_run_atfork_child();
		rlt_pre_forked();
	}
	return rc;
}

/* A program that adds a seccomp filter of its own (sshd, a browser's sandbox) may refuse the
 * calls the handler makes for it: said once, since what fails then is its filter's doing. */
static void own_filter(void)
{
	static _Atomic int said;
	if (!atomic_exchange(&said, 1))
		rlt_pre_log(RLT_LOG_WARN, "the program installs a seccomp filter of its own: a call "
		                          "it refuses fails as that filter says, throttled or not");
}

/* What a family of calls answers for a call it does not make: no system call answers it (not
 * a size, an fd, an address or -errno). */
#define NOT_MINE LONG_MIN

/* The calls that move data: each charged by its hook. */
static long data_call(long nr, const long a[6])
{
	switch (nr) {
	case SYS_read:
		return answer(read((int)a[0], (void *)a[1], (size_t)a[2]));
	case SYS_write:
		return answer(write((int)a[0], (const void *)a[1], (size_t)a[2]));
	case SYS_readv:
		return answer(readv((int)a[0], (const struct iovec *)a[1], (int)a[2]));
	case SYS_writev:
		return answer(writev((int)a[0], (const struct iovec *)a[1], (int)a[2]));
	case SYS_preadv2: /* the offset in one register on x86_64, the flags in the sixth */
		return answer(preadv2((int)a[0], (const struct iovec *)a[1], (int)a[2], (off_t)a[3],
		                      (int)a[5]));
	case SYS_pwritev2:
		return answer(pwritev2((int)a[0], (const struct iovec *)a[1], (int)a[2], (off_t)a[3],
		                       (int)a[5]));
	case SYS_sendto:
		return answer(sendto((int)a[0], (const void *)a[1], (size_t)a[2], (int)a[3],
		                     (const struct sockaddr *)a[4], (socklen_t)a[5]));
	case SYS_recvfrom:
		return answer(recvfrom((int)a[0], (void *)a[1], (size_t)a[2], (int)a[3],
		                       (struct sockaddr *)a[4], (socklen_t *)a[5]));
	case SYS_sendmsg:
		return answer(sendmsg((int)a[0], (const struct msghdr *)a[1], (int)a[2]));
	case SYS_recvmsg:
		return answer(recvmsg((int)a[0], (struct msghdr *)a[1], (int)a[2]));
	case SYS_sendmmsg:
		return answer(sendmmsg((int)a[0], (struct mmsghdr *)a[1], (unsigned)a[2], (int)a[3]));
	case SYS_recvmmsg:
		return answer(recvmmsg((int)a[0], (struct mmsghdr *)a[1], (unsigned)a[2], (int)a[3],
		                       (struct timespec *)a[4]));
	case SYS_sendfile:
		return answer(sendfile((int)a[0], (int)a[1], (off_t *)a[2], (size_t)a[3]));
	case SYS_splice:
		return answer(splice((int)a[0], (loff_t *)a[1], (int)a[2], (loff_t *)a[3],
		                     (size_t)a[4], (unsigned)a[5]));
	default:
		return NOT_MINE;
	}
}

/* The calls that make, connect or watch a socket: a new one goes into the band; a connect or
 * accept held (a wait would hold its socket) makes the waits trap (trap_waits.c). */
static long socket_call(long nr, const long a[6])
{
	switch (nr) {
	case SYS_connect: {
		long rc = answer(connect((int)a[0], (const struct sockaddr *)a[1], (socklen_t)a[2]));
		rlt_trap_waits_after(a[0]);
		return rc;
	}
	case SYS_accept:
		return accepted(a[0], new_fd(answer(accept((int)a[0], (struct sockaddr *)a[1],
		                                           (socklen_t *)a[2])),
		                             0));
	case SYS_accept4:
		return accepted(a[0], new_fd(answer(accept4((int)a[0], (struct sockaddr *)a[1],
		                                            (socklen_t *)a[2], (int)a[3])),
		                             (a[3] & SOCK_CLOEXEC) != 0));
	case SYS_socket:
		return new_fd(answer(socket((int)a[0], (int)a[1], (int)a[2])),
		              (a[1] & SOCK_CLOEXEC) != 0);
	case SYS_epoll_ctl: /* trapped once a wait could hold a socket (trap_waits.c) */
		return answer(rlt_pre_epoll_ctl((int)a[0], (int)a[1], (int)a[2],
		                                (struct epoll_event *)a[3]));
	case SYS_getsockopt:
		return answer(getsockopt((int)a[0], (int)a[1], (int)a[2], (void *)a[3],
		                         (socklen_t *)a[4]));
	case SYS_socketpair: {
		int *sv = (int *)a[3];
		long rc = answer(socketpair((int)a[0], (int)a[1], (int)a[2], sv));
		if (rc == 0) {
			sv[0] = rlt_trap_to_band(sv[0], (a[1] & SOCK_CLOEXEC) != 0);
			sv[1] = rlt_trap_to_band(sv[1], (a[1] & SOCK_CLOEXEC) != 0);
		}
		return rc;
	}
	default:
		return NOT_MINE;
	}
}

/* The waits: a throttled socket is reported when its budget allows (hook_poll.c). */
static long wait_call(long nr, const long a[6])
{
	switch (nr) {
	case SYS_poll:
		return answer(rlt_pre_poll((struct pollfd *)a[0], (nfds_t)a[1], (int)a[2]));
	case SYS_ppoll:
		if (a[3] && a[4] != 8)
			return rlt_trap_masked_wait(nr, a); /* the kernel's EINVAL */
		return answer(rlt_pre_ppoll((struct pollfd *)a[0], (nfds_t)a[1],
		                            (const struct timespec *)a[2], (const sigset_t *)a[3]));
	case SYS_select:
		return answer(rlt_pre_select((int)a[0], (fd_set *)a[1], (fd_set *)a[2], (fd_set *)a[3],
		                             (struct timeval *)a[4]));
	case SYS_pselect6:
		return answer(rlt_pre_pselect((int)a[0], (fd_set *)a[1], (fd_set *)a[2],
		                              (fd_set *)a[3], (const struct timespec *)a[4],
		                              pselect_mask(a[5])));
	case SYS_epoll_wait:
		return answer(rlt_pre_epoll_pwait((int)a[0], (struct epoll_event *)a[1], (int)a[2],
		                                  (int)a[3], NULL));
	case SYS_epoll_pwait:
		if (a[4] && a[5] != 8)
			return rlt_trap_masked_wait(nr, a);
		return answer(rlt_pre_epoll_pwait((int)a[0], (struct epoll_event *)a[1], (int)a[2],
		                                  (int)a[3], (const sigset_t *)a[4]));
	case SYS_epoll_pwait2:
		if (a[4] && a[5] != 8)
			return rlt_trap_masked_wait(nr, a);
		return answer(rlt_pre_epoll_pwait2((int)a[0], (struct epoll_event *)a[1], (int)a[2],
		                                   (const struct timespec *)a[3],
		                                   (const sigset_t *)a[4]));
	default:
		return NOT_MINE;
	}
}

/* The calls on fd numbers: a copy of a band fd stays in the band. */
static long fd_call(long nr, const long a[6])
{
	switch (nr) {
	case SYS_close:
		return answer(close((int)a[0]));
	case SYS_close_range:
		return answer(close_range((unsigned)a[0], (unsigned)a[1], (int)a[2]));
	case SYS_dup:
		/* a copy of a band fd stays in the band */
		return answer(fcntl((int)a[0], F_DUPFD, rlt_trap_band));
	case SYS_dup2:
		return copied_down(a[0], answer(dup2((int)a[0], (int)a[1])));
	case SYS_dup3:
		return copied_down(a[0], answer(dup3((int)a[0], (int)a[1], (int)a[2])));
	case SYS_fcntl: {
		long arg = a[2];
		if ((a[1] == F_DUPFD || a[1] == F_DUPFD_CLOEXEC) && arg < rlt_trap_band)
			arg = rlt_trap_band;
		return answer(fcntl((int)a[0], (int)a[1], arg));
	}
	case SYS_ioctl:
		return answer(ioctl((int)a[0], (unsigned long)a[1], (void *)a[2]));
	default:
		return NOT_MINE;
	}
}

/* The calls on the process: signals, exec, fork, its own filter, the exit; and a call the
 * filter should not have sent. */
static long process_call(long nr, const long a[6], ucontext_t *uc)
{
	switch (nr) {
	case SYS_rt_sigaction:
		return rlt_trap_sigaction(a[0], a[1], a[2], a[3]);
	case SYS_rt_sigprocmask:
		return rlt_trap_sigprocmask(uc, a[0], a[1], a[2], a[3]);
	case SYS_execve:
	case SYS_execveat:
		return rlt_trap_exec(nr, a);
	case SYS_clone:
	case SYS_fork:
		return forked(rlt_trap_sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]));
	case SYS_seccomp:
	case SYS_prctl:
		own_filter();
		return rlt_trap_sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	case SYS_exit_group:
		rlt_trap_exit((int)a[0]);
		return 0; /* not reached */
	default:
		/* a call the filter should not have sent: made as asked */
		return rlt_trap_sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
}

/* The call, by family; data first, as the calls most made. */
static long call(long nr, const long a[6], ucontext_t *uc)
{
	long rc;

	if ((rc = data_call(nr, a)) != NOT_MINE) {
		/* whether it left its socket held (a budget short): then the waits trap */
		rlt_trap_waits_after(a[0]);
		if (nr == SYS_splice)
			rlt_trap_waits_after(a[2]);
		return rc;
	}
	if ((rc = socket_call(nr, a)) != NOT_MINE || (rc = wait_call(nr, a)) != NOT_MINE ||
	    (rc = fd_call(nr, a)) != NOT_MINE)
		return rc;
	return process_call(nr, a, uc);
}

void rlt_trap_sigsys(int sig, siginfo_t *si, ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	long a[6] = {g[REG_RDI], g[REG_RSI], g[REG_RDX], g[REG_R10], g[REG_R8], g[REG_R9]};

	rlt_trap_stack_enter();
	if (si->si_code != SYS_SECCOMP) {
		/* a SIGSYS of the program's own (kill, a bad system call of its own filter); ours
		 * only wakes a wait (trap_waits.c), which returns EINTR */
		if (!rlt_trap_is_wake(si))
			rlt_trap_forward(sig, si, uc);
		return;
	}
	g[REG_RAX] = call(si->si_syscall, a, uc);
}
