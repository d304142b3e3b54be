/* denysys: runs a command under a seccomp filter that fails one system call with an errno, to
 * stand for a machine where it is forbidden (a container profile, a restricted ptrace).
 *
 *   denysys seccomp|ptrace ERRNO_NUMBER COMMAND [ARGS...]
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

	if (argc < 4)
		goto usage;
	if (!strcmp(argv[1], "seccomp"))
		nr = SYS_seccomp;
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
	struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("denysys: installing the filter");
		return 3;
	}
	execvp(argv[3], argv + 3);
	perror("denysys: exec");
	return 127;
usage:
	fprintf(stderr, "usage: denysys seccomp|ptrace ERRNO "
	                "COMMAND [ARGS...]\n");
	return 2;
}
