/* denysys: runs a command under a seccomp filter that fails one system call with an errno, to
 * stand for a machine where it is forbidden (a container profile, a restricted ptrace).
 *
 *   denysys seccomp|seccomp-killable|pidfd_getfd|pidfd_open|ptrace ERRNO_NUMBER COMMAND [ARGS...]
 * seccomp-killable fails only seccomp(SECCOMP_SET_MODE_FILTER, flags, ...) whose flags have
 * SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, as a kernel older than 5.19 does (EINVAL).
 * Exit: the command's (exec), 2 on usage, 3 when the filter cannot be installed.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long nr;
	int killable = 0;

	if (argc < 4)
		goto usage;
	if (!strcmp(argv[1], "seccomp"))
		nr = SYS_seccomp;
	else if (!strcmp(argv[1], "seccomp-killable"))
		nr = SYS_seccomp, killable = 1;
	else if (!strcmp(argv[1], "pidfd_getfd"))
		nr = SYS_pidfd_getfd;
	else if (!strcmp(argv[1], "pidfd_open"))
		nr = SYS_pidfd_open;
	else if (!strcmp(argv[1], "ptrace"))
		nr = SYS_ptrace;
	else
		goto usage;
	unsigned e = (unsigned)atoi(argv[2]) & SECCOMP_RET_DATA;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | e),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter fk[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_SET_MODE_FILTER, 0, 2),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | e),
	};
	struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
	if (killable) {
		prog.len = (unsigned short)(sizeof fk / sizeof fk[0]);
		prog.filter = fk;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("denysys: installing the filter");
		return 3;
	}
	execvp(argv[3], argv + 3);
	perror("denysys: exec");
	return 127;
usage:
	fprintf(stderr, "usage: denysys seccomp|seccomp-killable|pidfd_getfd|pidfd_open|ptrace ERRNO "
	                "COMMAND [ARGS...]\n");
	return 2;
}
