/*
 * trap_band.c: sockets live at fds from the band up (trap_filter.c in the launcher traps
 * read, write and their kin only there).
 *
 * A socket is moved with F_DUPFD and a close, never dup3, which would close whatever another
 * thread holds at the target. A program whose fds reach the band has files in it: correct,
 * only slower. A socket the program copies below the band itself (inetd style) still traps on
 * send and receive, but not on read and write: it is said once.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <string.h>
#include <unistd.h>

#include "load.h"
#include "nolibc.h"
#include "rawsys.h"
#include "trap_abi.h"
#include "trap_band.h"

int rlt_trap_band = RLT_TRAP_BAND;
static _Atomic int full_said;

int rlt_trap_to_band(int fd, int cloexec)
{
	int nfd, saved;

	if (fd >= rlt_trap_band)
		return fd;
	saved = rlt_trap_self()->err;
	nfd = fcntl(fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, rlt_trap_band);
	if (nfd < 0) {
		/* the band is full: the socket works where it is, its reads and writes untrapped */
		if (!atomic_exchange(&full_said, 1))
			rlt_pre_log(RLT_LOG_WARN, "no fd free from %d up: a socket stays at %d, where "
			                          "read() and write() on it are not throttled",
			            rlt_trap_band, fd);
		rlt_trap_self()->err = saved;
		return fd;
	}
	close(fd);
	rlt_trap_self()->err = saved;
	return nfd;
}

/*
 * A socket below the band (inherited from the launcher's caller, as inetd and socket
 * activation hand them, or copied down by the program with dup2) would have its reads and
 * writes pass untrapped. A filter cannot be changed, but another can be stacked on it: the
 * kernel runs every filter and the strictest answer wins, so a small one that traps the fd
 * calls on those numbers makes them ours again. Each costs every system call a few
 * instructions, so their number is bounded.
 */
#define WATCH_FILTERS_MAX 32
#define WATCH_FDS_MAX 16

/* Every stacked filter starts the same: another architecture's numbers mean other calls (the
 * launcher's filter refuses those), so they pass; then the call's number is loaded. Returns
 * how many instructions it wrote (4). */
static int filter_head(struct sock_filter *f)
{
	int k = 0;

	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4); /* arch */
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0); /* nr */
	return k;
}

/* ... and ends the same: the handler's range test (a call made from the handler passes) at
 * f[k], room for it left by the caller; then the filter is stacked. The raw call's result. */
static long filter_install_flags(struct sock_filter *f, int k, long flags)
{
	const struct sock_filter test[] = {RLT_TRAP_IP_TEST(RLT_TRAP_BASE, RLT_TRAP_SPAN)};
	struct sock_fprog prog;

	memcpy(f + k, test, sizeof test);
	k += (int)(sizeof test / sizeof test[0]);
	prog.len = (unsigned short)k;
	prog.filter = f;
	return rlt_trap_sys6(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, (long)&prog, 0, 0, 0);
}

static long filter_install(struct sock_filter *f, int k)
{
	return filter_install_flags(f, k, 0);
}

static _Atomic int watch_filters;
static _Atomic int watch_full_said;

/* The calls whose first argument is the fd. */
static const int watch_calls[] = {
	SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_sendfile, SYS_splice, SYS_close,
	SYS_dup, SYS_dup2, SYS_dup3, SYS_fcntl, SYS_ioctl,
};

int rlt_trap_watch(const int *fds, int n)
{
	const int ncalls = (int)(sizeof watch_calls / sizeof watch_calls[0]);
	struct sock_filter f[3 + 16 + 2 + WATCH_FDS_MAX + 1 + 7];
	int k, test_at;
	long rc;

	if (n <= 0)
		return 0;
	if (n > WATCH_FDS_MAX)
		n = WATCH_FDS_MAX;
	if (atomic_fetch_add(&watch_filters, 1) >= WATCH_FILTERS_MAX) {
		if (!atomic_exchange(&watch_full_said, 1))
			rlt_pre_log(RLT_LOG_WARN, "too many sockets below fd %d: read() and write() on "
			                          "fd %d and later ones are not throttled",
			            rlt_trap_band, fds[0]);
		return -1;
	}
	/* The number first, the fd next, the handler's range last (as in the first filter): a
	 * call that is not one of these never reads an argument or the instruction pointer, so
	 * the kernel keeps passing it without running the filter. Another architecture's
	 * numbers mean other calls: the first filter refuses those. */
	k = filter_head(f);
	for (int i = 0; i < ncalls; i++)
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)watch_calls[i],
		                                      (uint8_t)(ncalls - i), 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 16); /* args[0], low word */
	test_at = k + n + 1;
	for (int i = 0; i < n; i++, k++)
		f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)fds[i],
		                                    (uint8_t)(test_at - k - 1), 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	rc = filter_install(f, k);
	return rc < 0 ? (int)rc : 0;
}

/* The sockets the image starts with below the band (inherited). */
void rlt_trap_watch_inherited(void)
{
	int fds[WATCH_FDS_MAX], n = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)) && n < WATCH_FDS_MAX) {
		struct stat st;
		int fd = (int)strtol(de->d_name, NULL, 10);
		if (de->d_name[0] < '0' || de->d_name[0] > '9' || fd >= rlt_trap_band)
			continue;
		if (rlt_trap_sys6(SYS_fstat, fd, (long)&st, 0, 0, 0, 0) == 0 && S_ISSOCK(st.st_mode))
			fds[n++] = fd;
	}
	closedir(d);
	rlt_trap_watch(fds, n);
}

/*
 * The waits (poll, select, epoll: preload/hook_poll.c, hook_epoll.c) see the sockets a program
 * waits on in arrays or in the kernel's interest set, which a filter cannot read; they trap,
 * with epoll_ctl on a band fd (the registrations a wait holds back), from the moment a wait
 * could hold a socket (trap_waits.c), by one filter stacked then, and a wait on nothing held
 * is made at once by the handler. Until then they pass the launcher's filter reading no more
 * than their number, so that the kernel caches its answer.
 */
static const int wait_calls[] = {
	SYS_poll, SYS_ppoll, SYS_select, SYS_pselect6, SYS_epoll_wait, SYS_epoll_pwait,
	SYS_epoll_pwait2,
};
static _Atomic int waits_watched;

void rlt_trap_watch_waits(void)
{
	const int ncalls = (int)(sizeof wait_calls / sizeof wait_calls[0]);
	struct sock_filter f[4 + 8 + 1 + 5 + 7];
	int k, ctl_at, test_at;

	if (atomic_load_explicit(&waits_watched, memory_order_relaxed) ||
	    atomic_exchange(&waits_watched, 1))
		return;
	/* the layout: arch, nr, one jump per wait (to the range test), epoll_ctl's (to its fd
	 * test), allow, the fd test, the range test; every jump forward */
	ctl_at = 4 + ncalls + 1 + 1;
	test_at = ctl_at + 5;
	k = filter_head(f);
	for (int i = 0; i < ncalls; i++, k++)
		f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)wait_calls[i],
		                                    (uint8_t)(test_at - k - 1), 0);
	f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_epoll_ctl,
	                                    (uint8_t)(ctl_at - k - 1), 0);
	k++;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	/* ctl_at: args[2] (the fd) in the band, its high word 0 */
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 36);
	f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2);
	k++;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 32);
	f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)rlt_trap_band, 1, 0);
	k++;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	/* test_at: the handler's range test, appended by filter_install_flags. On every thread
	 * of the process (TSYNC): the thread that arms is seldom the only one that waits (Go's
	 * netpoller polls from whichever thread is free, and its threads exist already); one
	 * thread alone if the threads' filters differ. The test is appended once: the second
	 * try installs the same program. */
	if (filter_install_flags(f, k, SECCOMP_FILTER_FLAG_TSYNC) != 0 &&
	    filter_install_flags(f, k, 0) < 0)
		rlt_pre_log(RLT_LOG_WARN, "the waits could not be trapped: poll and epoll report "
		                          "throttled sockets ready before their budget");
}

/*
 * The data calls of a class (trap_abi.h RLT_TRAP_SENDS, RLT_TRAP_RECVS) that the launcher's
 * filter left out, because its command had no rule for them, and that this image's rules need
 * (a program that sets RLT_RECV for what it runs): one filter stacked for them, the same tests
 * as the launcher's (the call, then a band fd, then the handler's range).
 */
void rlt_trap_watch_class(unsigned classes)
{
	static const int sends[] = {SYS_sendto, SYS_sendmsg, SYS_sendmmsg};
	static const int sends_fd[] = {SYS_write, SYS_writev, SYS_pwritev2, SYS_sendfile};
	static const int recvs[] = {SYS_recvfrom, SYS_recvmmsg};
	static const int recvs_fd[] = {SYS_read, SYS_readv, SYS_preadv2};
	int always[8], on_fd[8], na = 0, nf = 0;
	struct sock_filter f[64];
	int k, fd_at, spl_at, test_at;

	if (classes & RLT_TRAP_SENDS) {
		memcpy(always + na, sends, sizeof sends), na += 3;
		memcpy(on_fd + nf, sends_fd, sizeof sends_fd), nf += 4;
	}
	if (classes & RLT_TRAP_RECVS) {
		memcpy(always + na, recvs, sizeof recvs), na += 2;
		memcpy(on_fd + nf, recvs_fd, sizeof recvs_fd), nf += 3;
	}
	if (!na)
		return;
	/* the layout: arch, nr, one jump per call, allow, the fd test, splice's, the range test;
	 * every jump forward */
	fd_at = 4 + na + nf + 1 + 1;
	spl_at = fd_at + 5;
	test_at = spl_at + 10;
	k = filter_head(f);
	for (int i = 0; i < na; i++, k++)
		f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)always[i],
		                                    (uint8_t)(test_at - k - 1), 0);
	for (int i = 0; i < nf; i++, k++)
		f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)on_fd[i],
		                                    (uint8_t)(fd_at - k - 1), 0);
	f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_splice,
	                                    (uint8_t)(spl_at - k - 1), 0);
	k++;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	/* fd_at: args[0] in the band (its high word 0: no negative fd) */
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 20);
	f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2);
	k++;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 16);
	f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)rlt_trap_band,
	                                    (uint8_t)(test_at - k - 1), 0);
	k++;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW); /* jumps go forward only */
	/* spl_at: splice from a socket (args[0]) is a receive, to one (args[2]) a send */
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 20);
	f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2);
	k++;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 16);
	f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)rlt_trap_band,
	                                    (classes & RLT_TRAP_RECVS) ? (uint8_t)(test_at - k - 1) : 0,
	                                    0);
	k++;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 36); /* args[2], high */
	f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3);
	k++;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 32);
	f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)rlt_trap_band,
	                                    (classes & RLT_TRAP_SENDS) ? (uint8_t)(test_at - k - 1) : 0, 0);
	k++;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW); /* pad */
	long rc = filter_install(f, k);
	if (rc < 0)
		rlt_pre_log(RLT_LOG_WARN, "the %s of this program could not be trapped (%s): they are "
		                          "not throttled", classes & RLT_TRAP_SENDS ? "sends" : "receives",
		            strerror((int)-rc));
}
