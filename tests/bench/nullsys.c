/*
 * nullsys.c: libnullsys.so, a write(), read(), send() and recvmmsg() that do nothing and enter
 * no kernel, for the bench only. Preloaded after librlthrottle.so, it is what the library resolves as the "real"
 * write and read (dlsym RTLD_NEXT), so that a run of callcost -m measures the hook alone: the
 * same run with this library alone is the plain call. A system call costs about a microsecond
 * on a VM and swings by more than the hook costs; this does not.
 */
#include <sys/socket.h>
#include <sys/types.h>

#define RLT_NULLSYS_EXPORT __attribute__((visibility("default")))

RLT_NULLSYS_EXPORT ssize_t write(int fd, const void *buf, size_t len);
RLT_NULLSYS_EXPORT ssize_t read(int fd, void *buf, size_t len);
RLT_NULLSYS_EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags);
RLT_NULLSYS_EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags,
                                  const struct sockaddr *to, socklen_t tolen);
RLT_NULLSYS_EXPORT int recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags,
                                struct timespec *tmo);

ssize_t write(int fd, const void *buf, size_t len)
{
	(void)fd;
	(void)buf;
	__asm__ volatile("" ::: "memory"); /* a call the compiler cannot fold away */
	return (ssize_t)len;
}

ssize_t read(int fd, void *buf, size_t len)
{
	(void)fd;
	(void)buf;
	__asm__ volatile("" ::: "memory");
	return (ssize_t)len;
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	(void)fd;
	(void)buf;
	(void)flags;
	__asm__ volatile("" ::: "memory");
	return (ssize_t)len;
}

/* The preload's send makes its real call through sendto. */
ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
               socklen_t tolen)
{
	(void)fd;
	(void)buf;
	(void)flags;
	(void)to;
	(void)tolen;
	__asm__ volatile("" ::: "memory");
	return (ssize_t)len;
}

/* callcost -m udp drains with it: as many datagrams as asked, at once. */
int recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags, struct timespec *tmo)
{
	(void)fd;
	(void)vec;
	(void)flags;
	(void)tmo;
	__asm__ volatile("" ::: "memory");
	return (int)vlen;
}
