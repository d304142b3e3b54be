/* forker: fork and exec behaviour under the throttle.
 *
 *   forker fork [-h HOST] -p PORT -P PREBYTES -n BYTES
 *       connect A, send PREBYTES on A, fork. The child connects B and sends BYTES on it; the
 *       parent sends BYTES more on A. Each prints: who=parent|child sent=N elapsed_ns=NS
 *       (elapsed of its own BYTES, measured from just after the fork).
 *   forker exec PROG [ARGS...]       execv(PROG) at once (the same process runs PROG)
 *   forker forkexec PROG [ARGS...]   fork; the child execv(PROG); exit with its status
 *   forker execl|execlp|execle PROG A1 A2
 *       that call with the list PROG A1 A2 (execlp searches PATH for PROG; execle gives the
 *       environment FORKER=execle alone)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

static int dial(const char *host, int port)
{
	int fd = dial_loopback(host, port);
	if (fd < 0) { perror("forker: connect"); exit(1); }
	return fd;
}

static size_t send_all(int fd, const unsigned char *buf, size_t n)
{
	size_t done = 0;
	while (done < n) {
		size_t chunk = n - done < 4096 ? n - done : 4096;
		ssize_t w = send(fd, buf + done, chunk, 0);
		if (w < 0) {
			if (errno == EINTR) continue;
			fprintf(stderr, "forker: send: %s\n", strerrorname_np(errno));
			break;
		}
		done += (size_t)w;
	}
	return done;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "exec")) {
		execv(argv[2], argv + 2);
		perror("forker: execv");
		return 127;
	}
	if (argc == 5 && !strncmp(argv[1], "execl", 5)) {
		char *env[] = { "FORKER=execle", NULL };
		if (!strcmp(argv[1], "execl"))
			execl(argv[2], argv[2], argv[3], argv[4], (char *)NULL);
		else if (!strcmp(argv[1], "execlp"))
			execlp(argv[2], argv[2], argv[3], argv[4], (char *)NULL);
		else if (!strcmp(argv[1], "execle"))
			execle(argv[2], argv[2], argv[3], argv[4], (char *)NULL, env);
		perror("forker: exec");
		return 127;
	}
	if (argc >= 3 && !strcmp(argv[1], "forkexec")) {
		pid_t c = fork();
		if (c == 0) {
			execv(argv[2], argv + 2);
			perror("forker: execv");
			_exit(127);
		}
		int st = 0;
		while (waitpid(c, &st, 0) < 0 && errno == EINTR) {}
		return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	}
	if (argc < 2 || strcmp(argv[1], "fork")) {
		fprintf(stderr, "usage: forker fork [-h HOST] -p PORT -P PREBYTES -n BYTES | exec PROG.. | forkexec PROG.. | execl[p|e] PROG A1 A2\n");
		return 2;
	}
	const char *host = "127.0.0.1";
	int opt, port = -1;
	size_t pre = 0, n = 0;
	optind = 2;
	while ((opt = getopt(argc, argv, "h:p:P:n:")) != -1) {
		switch (opt) {
		case 'h': host = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'P': pre = (size_t)strtoull(optarg, NULL, 10); break;
		case 'n': n = (size_t)strtoull(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	if (port < 0 || n == 0) return 2;
	alarm(60);
	size_t big = pre > n ? pre : n;
	unsigned char *buf = malloc(big);
	for (size_t i = 0; i < big; i++) buf[i] = (unsigned char)(i * 131u + 7u);
	int a = dial(host, port);
	if (pre) send_all(a, buf, pre);
	fflush(stdout);
	pid_t c = fork();
	if (c < 0) { perror("fork"); return 1; }
	uint64_t t0 = now_ns();
	if (c == 0) {
		close(a);
		int b = dial(host, port);
		size_t s = send_all(b, buf, n);
		uint64_t t1 = now_ns();
		close(b);
		printf("who=child sent=%zu elapsed_ns=%llu\n", s, (unsigned long long)(t1 - t0));
		fflush(stdout);
		_exit(s == n ? 0 : 1);
	}
	size_t s = send_all(a, buf, n);
	uint64_t t1 = now_ns();
	close(a);
	printf("who=parent sent=%zu elapsed_ns=%llu\n", s, (unsigned long long)(t1 - t0));
	fflush(stdout);
	int st = 0;
	while (waitpid(c, &st, 0) < 0 && errno == EINTR) {}
	return (s == n && WIFEXITED(st) && WEXITSTATUS(st) == 0) ? 0 : 1;
}
