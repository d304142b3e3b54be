/*
 * target_mem.c: reaching into the program: its memory (process_vm_readv/writev), its fds
 * (pidfd_getfd), and the answers to its notifications (the seccomp ioctls, used directly so
 * that ENOENT, "the thread died in the call", comes back as itself).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "iov.h"
#include "internal.h"

#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif

/* process_vm_* move at most this many segments per call (UIO_MAXIOV). */
#define SEGS 1024

static int mem_io(pid_t tid, uint64_t addr, void *buf, size_t len, int write)
{
	size_t off = 0;

	/* Bounded: each round moves at least one byte or returns. */
	while (off < len) {
		struct iovec local = {(char *)buf + off, len - off};
		struct iovec remote = {(void *)(uintptr_t)(addr + off), len - off};
		ssize_t n = write ? process_vm_writev(tid, &local, 1, &remote, 1, 0)
		                  : process_vm_readv(tid, &local, 1, &remote, 1, 0);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EFAULT;
		off += (size_t)n;
	}
	return 0;
}

int rlt_sup_mem_read(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	return mem_io(tid, addr, buf, len, 0);
}

int rlt_sup_mem_write(pid_t tid, uint64_t addr, const void *buf, size_t len)
{
	return mem_io(tid, addr, (void *)buf, len, 1);
}

int rlt_sup_iov_read(pid_t tid, uint64_t addr, uint64_t cnt, struct iovec *iov, uint64_t *total)
{
	uint64_t t = 0;
	int rc;

	if (cnt > RLT_SUP_IOV_MAX)
		return -EINVAL;
	if (cnt == 0) {
		*total = 0;
		return 0;
	}
	rc = rlt_sup_mem_read(tid, addr, iov, cnt * sizeof *iov);
	if (rc)
		return rc;
	for (uint64_t i = 0; i < cnt; i++) {
		if (iov[i].iov_len > (uint64_t)SSIZE_MAX - t)
			return -EINVAL; /* what the kernel says of such a vector */
		t += iov[i].iov_len;
	}
	*total = t;
	return 0;
}

/* Bytes [off, off + len) of the program's iovec against our flat buffer. */
static int iov_io(pid_t tid, const struct iovec *iov, unsigned cnt, uint64_t off, void *buf,
                  size_t len, int write)
{
	struct iovec remote[SEGS];
	size_t want;
	size_t n = rlt__iov_slice(iov, cnt, off, len, remote, SEGS, &want);

	if (want)
		return -EFAULT;
	struct iovec local = {buf, len};
	ssize_t r = write ? process_vm_writev(tid, &local, 1, remote, n, 0)
	                  : process_vm_readv(tid, &local, 1, remote, n, 0);
	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EFAULT;
}

int rlt_sup_iov_gather(pid_t tid, const struct iovec *iov, unsigned cnt, uint64_t off, void *buf,
                       size_t len)
{
	return iov_io(tid, iov, cnt, off, buf, len, 0);
}

int rlt_sup_iov_scatter(pid_t tid, const struct iovec *iov, unsigned cnt, uint64_t off,
                        const void *buf, size_t len)
{
	return iov_io(tid, iov, cnt, off, (void *)buf, len, 1);
}

int rlt_sup_notif_valid(int notify_fd, uint64_t id)
{
	return ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

static int send_resp(int notify_fd, uint64_t id, int64_t val, int err, uint32_t flags)
{
	struct seccomp_notif_resp r;

	memset(&r, 0, sizeof r);
	r.id = id;
	r.val = val;
	r.error = err ? -err : 0;
	r.flags = flags;
	/* EINTR: a signal to the supervisor itself; the answer was not sent, send it again.
	 * Bounded by the signals we get, which signalfd keeps blocked. */
	for (int i = 0; i < 100; i++) {
		if (ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &r) == 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
	return -EINTR;
}

int rlt_sup_notif_continue(int notify_fd, uint64_t id)
{
	return send_resp(notify_fd, id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

int rlt_sup_notif_return(int notify_fd, uint64_t id, int64_t val)
{
	return send_resp(notify_fd, id, val, 0, 0);
}

int rlt_sup_notif_error(int notify_fd, uint64_t id, int err)
{
	return send_resp(notify_fd, id, 0, err, 0);
}

int rlt_sup_notif_addfd_send(int notify_fd, uint64_t id, int ourfd, int cloexec)
{
	struct seccomp_notif_addfd a;

	memset(&a, 0, sizeof a);
	a.id = id;
	a.flags = SECCOMP_ADDFD_FLAG_SEND;
	a.srcfd = (uint32_t)ourfd;
	a.newfd_flags = cloexec ? O_CLOEXEC : 0;
	int n = ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
	return n < 0 ? -errno : n;
}

int rlt_sup_getfd(int pidfd, int fd)
{
	long r = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	return r < 0 ? -errno : (int)r;
}
