/*
 * dir.c: opendir, readdir and closedir on getdents64. A record of the kernel's
 * (struct linux_dirent64) has the layout of the C library's struct dirent up to its name, so
 * readdir hands back a pointer into the buffer, as musl does.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "rawsys.h"

struct __dirstream {
	int fd;
	size_t pos, len; /* the next record, the bytes the last getdents64 gave */
	_Alignas(8) char buf[4096];
};

DIR *opendir(const char *path)
{
	long fd = rlt_trap_ret(
		RLT_SYS4(SYS_openat, AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0));
	DIR *d;

	if (fd < 0)
		return NULL;
	d = malloc(sizeof *d);
	if (!d) {
		RLT_SYS1(SYS_close, fd);
		return NULL;
	}
	d->fd = (int)fd;
	d->pos = d->len = 0;
	return d;
}

struct dirent *readdir(DIR *d)
{
	struct dirent *e;

	if (d->pos >= d->len) {
		long n = RLT_SYS3(SYS_getdents64, d->fd, d->buf, sizeof d->buf);
		if (n <= 0) {
			if (n < 0)
				errno = (int)-n; /* the end leaves errno alone */
			return NULL;
		}
		d->len = (size_t)n;
		d->pos = 0;
	}
	e = (struct dirent *)(d->buf + d->pos);
	d->pos += e->d_reclen;
	return e;
}

int closedir(DIR *d)
{
	long r = RLT_SYS1(SYS_close, d->fd);

	free(d);
	return (int)rlt_trap_ret(r);
}
