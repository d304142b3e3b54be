/* trapprog: a static C program for the injector's tests (built -static: no loader).
 *   trapprog calls N             N raw getppid, N writes to fd 600 (/dev/null), N to fd 1
 *   trapprog self                prints what must stay the program's own: /proc/self/exe,
 *                                argv, AT_EXECFN, AT_ENTRY (and whether it is _start), AT_PHDR
 *   trapprog exec N PROG ARG...  N getppid, then execv(PROG, ARG...); on failure prints
 *                                "exec failed: errno=E (text)" and "tracer=PID", exit 3
 *   trapprog waitexec FILE PROG ARG...   waits (at most 30 s) for FILE to exist, then
 *                                execv; on failure prints "exec failed: errno=E (text)", exit 3
 *   trapprog loop MS             getppid every 10 ms for MS milliseconds; prints the count
 *   trapprog deny ptrace|seccomp CMD ARG...   runs CMD where that system call fails with EPERM
 *                                (a filter of its own, as a container's would)
 *   trapprog sendcost N          ns per call, best of 5 rounds of N: a raw getppid, and a
 *                                1-byte send on a loopback TCP connection (a forked child
 *                                reads): "getppid_ns=G send_ns=S" */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

extern char _start[];

#ifdef TAKEN
/* trapprog_taken: a segment of its own where the blob goes (placed by the Makefile) */
__attribute__((used, section(".taken"))) static char taken[4096] = {1};
#endif

/* TracerPid from /proc/self/status: after a failed exec, the launcher must have detached */
static void print_tracer(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "TracerPid:", 10) == 0)
			printf("tracer=%d\n", atoi(line + 10));
	if (f)
		fclose(f);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int sendcost(int n)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof a;
	double best_g = 1e18, best_s = 1e18, t0, v;
	int l, c, s, one = 1, r, i;
	pid_t pid;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 1) != 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) != 0)
		return 2;
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a) != 0 || (s = accept(l, NULL, NULL)) < 0)
		return 2;
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	pid = fork();
	if (pid == 0) {
		char buf[65536];
		close(c);
		while (read(s, buf, sizeof buf) > 0)
			;
		_exit(0);
	}
	close(s);
	for (r = 0; r < 5; r++) {
		t0 = now_ns();
		for (i = 0; i < n; i++)
			syscall(SYS_getppid);
		v = (now_ns() - t0) / n;
		best_g = v < best_g ? v : best_g;
		t0 = now_ns();
		for (i = 0; i < n; i++)
			if (send(c, "x", 1, 0) != 1)
				return 2;
		v = (now_ns() - t0) / n;
		best_s = v < best_s ? v : best_s;
	}
	close(c);
	waitpid(pid, NULL, 0);
	printf("getppid_ns=%.0f send_ns=%.0f\n", best_g, best_s);
	return 0;
}

int main(int argc, char **argv)
{
	int i, n;

	if (argc >= 3 && strcmp(argv[1], "calls") == 0) {
		int fd = open("/dev/null", O_WRONLY);
		n = atoi(argv[2]);
		if (fd < 0 || dup2(fd, 600) != 600)
			return 2;
		for (i = 0; i < n; i++) {
			if (syscall(SYS_getppid) != getppid())
				return 2;
			if (write(600, "x", 1) != 1)
				return 2;
		}
		printf("ok %d\n", n);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "self") == 0) {
		char exe[512];
		ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[k > 0 ? k : 0] = 0;
		printf("exe=%s\nargc=%d\n", exe, argc);
		for (i = 0; i < argc; i++)
			printf("argv[%d]=%s\n", i, argv[i]);
		printf("execfn=%s\n", (const char *)getauxval(AT_EXECFN));
		printf("entry_is_start=%d\n", getauxval(AT_ENTRY) == (unsigned long)_start);
		printf("phdr=%lx phnum=%lu pagesz=%lu uid=%lu\n", getauxval(AT_PHDR),
		       getauxval(AT_PHNUM), getauxval(AT_PAGESZ), getauxval(AT_UID));
		return 0;
	}
	if (argc >= 4 && strcmp(argv[1], "exec") == 0) {
		n = atoi(argv[2]);
		for (i = 0; i < n; i++)
			syscall(SYS_getppid);
		fflush(stdout);
		execv(argv[3], argv + 3);
		printf("exec failed: errno=%d (%s)\n", errno, strerror(errno));
		print_tracer();
		return 3;
	}
	if (argc >= 4 && strcmp(argv[1], "waitexec") == 0) {
		for (i = 0; i < 3000 && access(argv[2], F_OK) != 0; i++)
			sleep_ms(10);
		execv(argv[3], argv + 3);
		printf("exec failed: errno=%d (%s)\n", errno, strerror(errno));
		fflush(stdout);
		return 3;
	}
	if (argc >= 3 && strcmp(argv[1], "loop") == 0) {
		long ms = atol(argv[2]), k = 0;
		for (k = 0; k * 10 < ms; k++) {
			syscall(SYS_getppid);
			sleep_ms(10);
		}
		printf("loop %ld\n", k);
		return 0;
	}
	if (argc >= 4 && strcmp(argv[1], "deny") == 0) {
		unsigned nr = strcmp(argv[2], "ptrace") == 0 ? SYS_ptrace : SYS_seccomp;
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = {4, f};
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
			return 2;
		execvp(argv[3], argv + 3);
		return 127;
	}
	if (argc >= 3 && strcmp(argv[1], "sendcost") == 0)
		return sendcost(atoi(argv[2]));
	fprintf(stderr, "usage: trapprog calls N | self | exec N PROG ARG... | waitexec FILE PROG "
	                "ARG... | loop MS | sendcost N\n");
	return 2;
}
