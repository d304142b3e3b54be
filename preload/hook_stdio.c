/*
 * hook_stdio.c: C stdio on a socket. glibc's FILE writes and reads its buffer with its internal
 * __write and __read, which no preload can interpose: fwrite on an fdopen'ed socket, stdio on a
 * socket that is stdin or stdout (a program run by inetd or socat), and dprintf went unpaced
 * (issue 17 row 3). Rather than hook every stdio function (and still miss the flushes glibc
 * makes inside fclose, exit and its macros), a FILE on a throttled socket is made a stream
 * whose reads and writes are ours: fopencookie with functions that call read and write, that
 * is the hooks, so buffering, locking and every stdio function stay glibc's and only the moves
 * to the socket are paced like write(). fdopen makes one for a socket when a send or receive
 * rule exists; stdin, stdout and stderr are replaced at load when their fd is such a socket.
 * The FILE keeps its fd for fileno(). dprintf and vdprintf format into a buffer and write it.
 * Bound: a FILE the program gets otherwise on a socket (fopen of /proc/self/fd/N, freopen onto
 * a socket's fd) is glibc's own and is not paced; freopen on a replaced std stream is not
 * supported (glibc's freopen expects a file stream).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdtable.h"
#include "hook_stdio.h"
#include "load.h"
#include "net_hook.h"
#include "preload.h"
#include "real.h"
#include "redis_client.h"

/* the cookie is the fd itself */
static ssize_t cookie_read(void *c, char *buf, size_t size)
{
	return read((int)(intptr_t)c, buf, size);
}

/* glibc marks a FILE in error on a short write of its cookie: write all of it, as a blocking
 * write does (a non-blocking socket's EAGAIN is an error, as glibc's own FILE makes it) */
static ssize_t cookie_write(void *c, const char *buf, size_t size)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = write((int)(intptr_t)c, buf + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return done ? (ssize_t)done : -1;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int cookie_close(void *c)
{
	return close((int)(intptr_t)c);
}

/* 1 when fd is a socket that a send or receive rule may pace, or network conditions delay
 * (latency's delay line holds a stream's data: glibc's own reads would miss it). */
static int paced_socket(int fd)
{
	if (!((rlt_pre_vars_in_use & ((1u << RLT_VAR_SEND) | (1u << RLT_VAR_RECV))) ||
	      rlt_pre_net_on()) ||
	    !atomic_load_explicit(&rlt_pre_active, memory_order_acquire) || rlt__internal)
		return 0;
	struct rlt_pre_fd *e = rlt_pre_fd_get(fd);
	return e && atomic_load_explicit(&e->kind, memory_order_acquire) == RLT_FD_SOCKET;
}

/* fopencookie knows r, w, a and +; fdopen's b is nothing on Linux, e (close-on-exec) is the
 * fd's own flag already. NULL when the mode is none of these. */
static const char *cookie_mode(const char *mode, char out[4])
{
	size_t n = 0;

	if (!mode || !strchr("rwa", mode[0]))
		return NULL;
	out[n++] = mode[0];
	if (strchr(mode + 1, '+'))
		out[n++] = '+';
	out[n] = '\0';
	return out;
}

static FILE *paced_file(int fd, const char *mode)
{
	cookie_io_functions_t io = {cookie_read, cookie_write, NULL, cookie_close};
	char m[4];

	if (!cookie_mode(mode, m))
		return NULL;
	FILE *f = fopencookie((void *)(intptr_t)fd, m, io);
	if (f)
		f->_fileno = fd; /* fileno() answers the socket, as fdopen's FILE would */
	return f;
}

RLT_EXPORT FILE *fdopen(int fd, const char *mode)
{
	rlt_pre_ensure_real();
	if (fd >= 0 && paced_socket(fd)) {
		FILE *f = paced_file(fd, mode);
		if (f)
			return f;
	}
	return real_fdopen(fd, mode);
}

void rlt_pre_stdio_init(void)
{
	/* At load, before main: what another library's constructor may have written to the
	 * stream it replaces goes first, in order. */
	if (paced_socket(0)) {
		FILE *f = paced_file(0, "r");
		if (f)
			stdin = f;
	}
	if (paced_socket(1)) {
		FILE *f = paced_file(1, "w");
		if (f) {
			fflush(stdout);
			stdout = f;
		}
	}
	if (paced_socket(2)) {
		FILE *f = paced_file(2, "w");
		if (f) {
			fflush(stderr);
			setvbuf(f, NULL, _IONBF, 0); /* stderr is unbuffered */
			stderr = f;
		}
	}
}

RLT_EXPORT int vdprintf(int fd, const char *fmt, va_list ap)
{
	rlt_pre_ensure_real();
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_SEND)) || !paced_socket(fd))
		return real_vdprintf(fd, fmt, ap);
	char small[4096], *buf = small;
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	if (n >= (int)sizeof small) {
		buf = malloc((size_t)n + 1); /* a large output only: dprintf's own buffer would be */
		if (!buf) {
			va_end(again);
			errno = ENOMEM;
			return -1;
		}
		vsnprintf(buf, (size_t)n + 1, fmt, again);
	}
	va_end(again);
	int rc = n;
	if (n > 0 && cookie_write((void *)(intptr_t)fd, buf, (size_t)n) != n)
		rc = -1;
	if (buf != small) {
		int e = errno;
		free(buf);
		errno = e;
	}
	return rc;
}

RLT_EXPORT int dprintf(int fd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vdprintf(fd, fmt, ap);
	va_end(ap);
	return rc;
}
