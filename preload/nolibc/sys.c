/*
 * sys.c: the plain system calls the core and the hooks make, each one raw system call with
 * the C library's convention (-1 and errno), errno in the thread block (nolibc.h). The calls
 * the hooks stand in front of (close, fcntl, recv, sendmsg, ...) are not here: the core's
 * calls to them go through the hooks, as under the preload, and the hooks' real calls are
 * preload/real_sys.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/limits.h> /* NAME_MAX: a freestanding <limits.h> (clang's) leaves it out */
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "rawsys.h"

int *__errno_location(void)
{
	return &rlt_trap_self()->err;
}

long syscall(long n, ...)
{
	va_list ap;
	long a[6];

	/* six words, whatever the call takes: the extra ones are ignored by the kernel */
	va_start(ap, n);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	return rlt_trap_ret(RLT_SYS(n, a[0], a[1], a[2], a[3], a[4], a[5]));
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	unsigned mode = 0;

	if (flags & (O_CREAT | __O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, unsigned);
		va_end(ap);
	}
	return (int)rlt_trap_ret(RLT_SYS4(SYS_openat, AT_FDCWD, path, flags, mode));
}

int access(const char *path, int mode)
{
	return (int)rlt_trap_ret(RLT_SYS4(SYS_faccessat, AT_FDCWD, path, mode, 0));
}

int stat(const char *restrict path, struct stat *restrict st)
{
	return (int)rlt_trap_ret(RLT_SYS2(SYS_stat, path, st));
}

int lstat(const char *restrict path, struct stat *restrict st)
{
	return (int)rlt_trap_ret(RLT_SYS2(SYS_lstat, path, st));
}

int fstat(int fd, struct stat *st)
{
	return (int)rlt_trap_ret(RLT_SYS2(SYS_fstat, fd, st));
}

int fchmod(int fd, mode_t mode)
{
	return (int)rlt_trap_ret(RLT_SYS2(SYS_fchmod, fd, mode));
}

int ftruncate(int fd, off_t len)
{
	return (int)rlt_trap_ret(RLT_SYS2(SYS_ftruncate, fd, len));
}

int flock(int fd, int op)
{
	return (int)rlt_trap_ret(RLT_SYS2(SYS_flock, fd, op));
}

int unlink(const char *path)
{
	return (int)rlt_trap_ret(RLT_SYS3(SYS_unlinkat, AT_FDCWD, path, 0));
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)rlt_trap_ret(RLT_SYS(SYS_mmap, addr, len, prot, flags, fd, off));
}

int munmap(void *addr, size_t len)
{
	return (int)rlt_trap_ret(RLT_SYS2(SYS_munmap, addr, len));
}

int mprotect(void *addr, size_t len, int prot)
{
	return (int)rlt_trap_ret(RLT_SYS3(SYS_mprotect, addr, len, prot));
}

int getrlimit(__rlimit_resource_t res, struct rlimit *rl)
{
	return (int)rlt_trap_ret(RLT_SYS2(SYS_getrlimit, res, rl));
}

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	return (int)rlt_trap_ret(RLT_SYS(SYS_setsockopt, fd, level, name, val, len, 0));
}

int getsockname(int fd, struct sockaddr *restrict sa, socklen_t *restrict len)
{
	return (int)rlt_trap_ret(RLT_SYS3(SYS_getsockname, fd, sa, len));
}

int getpeername(int fd, struct sockaddr *restrict sa, socklen_t *restrict len)
{
	return (int)rlt_trap_ret(RLT_SYS3(SYS_getpeername, fd, sa, len));
}

pid_t getpid(void)
{
	return (pid_t)RLT_SYS0(SYS_getpid);
}

pid_t gettid(void)
{
	return (pid_t)RLT_SYS0(SYS_gettid);
}

uid_t geteuid(void)
{
	return (uid_t)RLT_SYS0(SYS_geteuid);
}

int kill(pid_t pid, int sig)
{
	return (int)rlt_trap_ret(RLT_SYS2(SYS_kill, pid, sig));
}

int raise(int sig)
{
	return (int)rlt_trap_ret(RLT_SYS3(SYS_tgkill, RLT_SYS0(SYS_getpid), RLT_SYS0(SYS_gettid), sig));
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
	return (int)rlt_trap_ret(RLT_SYS2(SYS_nanosleep, req, rem));
}

/* Returns the error, as POSIX says, and leaves errno alone. */
int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req, struct timespec *rem)
{
	return (int)-RLT_SYS4(SYS_clock_nanosleep, clk, flags, req, rem);
}

/* poll and ppoll are the hooks' (preload/hook_poll.c), in this build too. */

/* shm_open as the C library does it: a file of /dev/shm, never followed through a link. */
static int shm_path(const char *name, char *path)
{
	size_t n;

	while (*name == '/')
		name++;
	n = strlen(name);
	if (!n || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
		errno = EINVAL;
		return -1;
	}
	if (n > NAME_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(path, "/dev/shm/", 9);
	memcpy(path + 9, name, n + 1);
	return 0;
}

int shm_open(const char *name, int flags, mode_t mode)
{
	char path[9 + NAME_MAX + 1];

	if (shm_path(name, path))
		return -1;
	return (int)rlt_trap_ret(
		RLT_SYS4(SYS_openat, AT_FDCWD, path, flags | O_NOFOLLOW | O_CLOEXEC, mode));
}

int shm_unlink(const char *name)
{
	char path[9 + NAME_MAX + 1];

	if (shm_path(name, path))
		return -1;
	return unlink(path);
}

/* The fortified receives of hook_recv.c end here on a buffer smaller than the length asked
 * for, as glibc's do: the process is killed, never left to overrun. */
void __chk_fail(void) __attribute__((noreturn));
void __chk_fail(void)
{
	static const char msg[] = "rlthrottle: *** buffer overflow detected ***: terminated\n";
	RLT_SYS3(SYS_write, 2, msg, sizeof msg - 1);
	raise(SIGABRT);
	for (;;)
		RLT_SYS1(SYS_exit_group, 127);
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	return rlt_trap_ret(RLT_SYS4(SYS_pread64, fd, buf, len, off));
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	return rlt_trap_ret(RLT_SYS4(SYS_pwrite64, fd, buf, len, off));
}

/* posix_fallocate answers the error itself, not -1 and errno */
int posix_fallocate(int fd, off_t off, off_t len)
{
	long r = RLT_SYS4(SYS_fallocate, fd, 0, off, len);
	return r < 0 ? (int)-r : 0;
}
