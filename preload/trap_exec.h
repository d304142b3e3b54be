/* The requester's half of the later-exec protocol (src/inject_proto.h), for the handler's blob:
 * before it makes an execve for the program, the handler asks the launcher to attach to the
 * thread, so that the new image gets its handler too (the filter outlives exec, the handler
 * does not: an image without it dies at its first trapped call).
 *
 * No libc: raw system calls through rlt_trap_sys, which the blob compiles into its own text,
 * inside the window the filter allows. Everything is static inline: a blob includes this header
 * (with -Isrc for inject_proto.h) and gets no external name.
 *
 *   int fd = rlt_trap_exec_request(hdr->sockname, tid);
 *   if (fd < 0) answer the execve -EPERM (see below), do not make it;
 *   r = execve(...);            returns only on failure
 *   rlt_trap_exec_failed(fd, tid, r);
 *
 * When the launcher cannot be reached (it was killed, or refused), the handler must not make the
 * exec: the new image would have the filter and no handler and die of SIGSYS at its first
 * trapped call. It answers the execve -EPERM: the errno a denied call gets from seccomp
 * policies, which callers report as such; -ENOEXEC would be wrong, since execvp and shells then
 * run the file as a shell script. */
#ifndef RLT_TRAP_EXEC_H
#define RLT_TRAP_EXEC_H

#include "inject_proto.h"
#include "rawsys.h"

#define RLT_TRAP_NR_CLOSE 3
#define RLT_TRAP_NR_SOCKET 41
#define RLT_TRAP_NR_CONNECT 42
#define RLT_TRAP_NR_SENDTO 44
#define RLT_TRAP_NR_RECVFROM 45
#define RLT_TRAP_NR_SETSOCKOPT 54
#define RLT_TRAP_NR_PRCTL 157

/* How long the requester waits for the launcher's answer: bounded, so that a stuck launcher
 * turns into a failed exec rather than a hung program. */
#define RLT_TRAP_EXEC_TIMEOUT_S 10

/* the raw call of the subset (rawsys.h), under the name this header has always used */
#define rlt_trap_sys rlt_trap_sys6

/* The launcher's pid, from the socket's name (RLT_INJECT_SOCK_PREFIX "<pid>-<nonce>"); 0 if
 * the name is not one of ours. */
static inline int rlt_trap_sock_pid(const char *name)
{
	const char *pre = RLT_INJECT_SOCK_PREFIX;
	int pid = 0;

	while (*pre)
		if (*name++ != *pre++)
			return 0;
	while (*name >= '0' && *name <= '9' && pid < 1 << 26)
		pid = pid * 10 + (*name++ - '0');
	return *name == '-' ? pid : 0;
}

/* Asks the launcher at sockname to attach to thread tid before it execs. Returns the open
 * connection (close-on-exec: a successful exec closes it) when the launcher has attached, or
 * -errno: -ECONNREFUSED or -ENOENT when the launcher is gone, -ETIMEDOUT, -EPROTO, or the
 * launcher's own refusal. */
static inline int rlt_trap_exec_request(const char *sockname, int tid)
{
	struct {
		unsigned short family;
		char path[108];
	} sa;
	struct {
		long sec, usec;
	} tv = {RLT_TRAP_EXEC_TIMEOUT_S, 0};
	struct rlt_inject_msg m;
	int i, n, fd, pid = rlt_trap_sock_pid(sockname);
	long r;

	if (pid <= 0)
		return -22; /* EINVAL */
	/* Yama (ptrace_scope 1) lets only an ancestor attach unless we name the launcher; without
	 * Yama this fails with EINVAL and nothing is needed. */
	rlt_trap_sys(RLT_TRAP_NR_PRCTL, 0x59616d61 /* PR_SET_PTRACER */, pid, 0, 0, 0, 0);
	sa.family = 1; /* AF_UNIX */
	sa.path[0] = 0; /* abstract */
	for (n = 0; sockname[n] && n < 106; n++)
		sa.path[1 + n] = sockname[n];
	fd = (int)rlt_trap_sys(RLT_TRAP_NR_SOCKET, 1, 5 | 02000000 /* SEQPACKET|CLOEXEC */, 0, 0,
	                       0, 0);
	if (fd < 0)
		return fd;
	/* SO_RCVTIMEO (20) and SO_SNDTIMEO (21) at SOL_SOCKET (1) */
	rlt_trap_sys(RLT_TRAP_NR_SETSOCKOPT, fd, 1, 20, (long)&tv, sizeof tv, 0);
	rlt_trap_sys(RLT_TRAP_NR_SETSOCKOPT, fd, 1, 21, (long)&tv, sizeof tv, 0);
	r = rlt_trap_sys(RLT_TRAP_NR_CONNECT, fd, (long)&sa, 2 + 1 + n, 0, 0, 0);
	if (r == 0) {
		m.magic = RLT_INJECT_MAGIC;
		m.op = RLT_INJECT_ATTACH;
		m.tid = tid;
		m.status = 0;
		r = rlt_trap_sys(RLT_TRAP_NR_SENDTO, fd, (long)&m, sizeof m, 0x4000 /* NOSIGNAL */,
		                 0, 0);
	}
	if (r >= 0) {
		for (i = 0; i < 4; i++) { /* EINTR: bounded retries */
			r = rlt_trap_sys(RLT_TRAP_NR_RECVFROM, fd, (long)&m, sizeof m, 0, 0, 0);
			if (r != -4)
				break;
		}
		if (r == -11) /* EAGAIN: the timeout */
			r = -110; /* ETIMEDOUT */
		else if (r >= 0 && (r != sizeof m || m.magic != RLT_INJECT_MAGIC ||
		                    m.op != RLT_INJECT_REPLY))
			r = -71; /* EPROTO */
		else if (r >= 0)
			r = m.status;
	}
	if (r < 0) {
		rlt_trap_sys(RLT_TRAP_NR_CLOSE, fd, 0, 0, 0, 0, 0);
		return (int)r;
	}
	return fd;
}

/* The exec returned err (-errno): tells the launcher, which detaches, and closes fd. */
static inline void rlt_trap_exec_failed(int fd, int tid, int err)
{
	struct rlt_inject_msg m = {RLT_INJECT_MAGIC, RLT_INJECT_EXEC_FAILED, tid, err};
	struct rlt_inject_msg ack;

	rlt_trap_sys(RLT_TRAP_NR_SENDTO, fd, (long)&m, sizeof m, 0x4000, 0, 0);
	/* the launcher answers once it has detached: until then this thread is still traced, and
	 * a trapped call it made would stop at the launcher (bounded by the timeout) */
	rlt_trap_sys(RLT_TRAP_NR_RECVFROM, fd, (long)&ack, sizeof ack, 0, 0, 0);
	rlt_trap_sys(RLT_TRAP_NR_CLOSE, fd, 0, 0, 0, 0, 0);
}

#endif
