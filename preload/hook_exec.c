/*
 * hook_exec.c: the exec family. A published page is the image's, not the process's: once the
 * process execs a program that the preload does not load (RLT_INHERIT=0, an environment of its
 * own without LD_PRELOAD, a static or setuid binary), the page would go on naming it as
 * throttled, and `rlthrottle set` would answer "pending" for good. So its name goes before the
 * real call (rlt_pre_exec_begin), whatever the new image: a throttled one makes a page of its
 * own, as it would in a new process. If the exec fails, this image goes on and the page is put
 * back (rlt_pre_exec_failed). glibc's execv, execvp and execl* reach the kernel through its
 * internal __execve, not through execve, so each entry point is hooked; execl* are made here
 * from their argument lists. posix_spawn's child is not this image (its page is never touched).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>

#include "load.h"
#include "preload.h"
#include "real.h"

/* A path that is surely no program to run (a shell's PATH search tries each directory in
 * turn): the exec fails without our page moving. */
static int runnable(const char *path)
{
	return path && faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0;
}

#define AROUND(call)                                                                             \
	do {                                                                                     \
		int hid_ = rlt_pre_exec_begin();                                                 \
		int rc_ = (call);                                                                \
		int e_ = errno;                                                                  \
		rlt_pre_exec_failed(hid_);                                                       \
		errno = e_;                                                                      \
		return rc_;                                                                      \
	} while (0)

RLT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	rlt_pre_ensure_real();
	if (!runnable(path))
		return real_execve(path, argv, envp);
	AROUND(real_execve(path, argv, envp));
}

RLT_EXPORT int execv(const char *path, char *const argv[])
{
	rlt_pre_ensure_real();
	if (!runnable(path))
		return real_execv(path, argv);
	AROUND(real_execv(path, argv));
}

RLT_EXPORT int execvp(const char *file, char *const argv[])
{
	rlt_pre_ensure_real();
	AROUND(real_execvp(file, argv));
}

RLT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	rlt_pre_ensure_real();
	AROUND(real_execvpe(file, argv, envp));
}

RLT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	rlt_pre_ensure_real();
	AROUND(real_fexecve(fd, argv, envp));
}

RLT_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                        int flags)
{
	rlt_pre_ensure_real();
	if (!real_execveat) {
		errno = ENOSYS;
		return -1;
	}
	AROUND(real_execveat(dirfd, path, argv, envp, flags));
}

/* The arguments of an execl* call after `arg0`, up to its NULL. */
static size_t count_args(const char *arg0, va_list ap)
{
	size_t n = 1;
	if (!arg0)
		return 0;
	while (va_arg(ap, const char *))
		n++;
	return n;
}

static void fill_args(char **argv, size_t n, const char *arg0, va_list ap)
{
	if (n)
		argv[0] = (char *)arg0;
	for (size_t i = 1; i < n; i++)
		argv[i] = va_arg(ap, char *);
	argv[n] = NULL;
}

enum list_call { CALL_L, CALL_LP, CALL_LE };

/* The body of the execl* calls: `ap` stands after `arg` and is read twice (a copy counts, the
 * list itself fills), so the array lives on this stack and nothing is allocated. */
static int exec_list(enum list_call call, const char *path, const char *arg, va_list ap)
{
	va_list count;
	va_copy(count, ap);
	size_t n = count_args(arg, count);
	va_end(count);
	char *argv[n + 1];
	fill_args(argv, n, arg, ap);
	if (call == CALL_LE) {
		/* execle's environment follows the list's NULL, which `ap` still stands on unless
		 * that NULL was `arg` itself. */
		if (n)
			(void)va_arg(ap, char *);
		return execve(path, argv, va_arg(ap, char *const *));
	}
	return call == CALL_LP ? execvp(path, argv) : execv(path, argv);
}

/* execl, execlp and execle: each hands its list to exec_list. */
#define LIST_ENTRY(name, call)                                                                   \
	RLT_EXPORT int name(const char *path, const char *arg, ...)                              \
	{                                                                                        \
		va_list ap;                                                                      \
		va_start(ap, arg);                                                               \
		int rc = exec_list(call, path, arg, ap);                                         \
		va_end(ap);                                                                      \
		return rc;                                                                       \
	}

LIST_ENTRY(execl, CALL_L)
LIST_ENTRY(execlp, CALL_LP)
LIST_ENTRY(execle, CALL_LE)
