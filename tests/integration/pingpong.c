/* pingpong: 1-byte request/response over one TCP loopback connection, to measure per-call cost.
 *
 *   pingpong server -P PORTFILE        accept one connection, echo each byte until EOF
 *   pingpong client -p PORT -n ROUNDS  prints: rounds=N elapsed_ns=NS rps=R
 *   pingpong pipe -n ROUNDS            the same between this process and a child over two
 *                                      pipes: on one CPU, a round is two context switches
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

int main(int argc, char **argv)
{
	int opt, port = -1;
	long rounds = 10000;
	const char *portfile = NULL;
	while ((opt = getopt(argc, argv, "p:n:P:")) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'n': rounds = atol(optarg); break;
		case 'P': portfile = optarg; break;
		default: goto usage;
		}
	}
	if (optind >= argc) goto usage;
	const char *mode = argv[optind];
	alarm(120);
	int one = 1;
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	if (!strcmp(mode, "server") && portfile) {
		int l = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 8) < 0) { perror("bind"); return 2; }
		socklen_t len = sizeof a;
		getsockname(l, (struct sockaddr *)&a, &len);
		char tmp[4096];
		snprintf(tmp, sizeof tmp, "%s.tmp", portfile);
		FILE *f = fopen(tmp, "w");
		if (!f) return 2;
		fprintf(f, "%d\n", ntohs(a.sin_port));
		fclose(f);
		rename(tmp, portfile);
		int c = accept(l, NULL, NULL);
		if (c < 0) { perror("accept"); return 2; }
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		char b;
		for (;;) {
			ssize_t r = recv(c, &b, 1, 0);
			if (r < 0 && errno == EINTR) continue;
			if (r <= 0) break;
			if (send(c, &b, 1, 0) != 1) break;
		}
		return 0;
	}
	if (!strcmp(mode, "client") && port > 0) {
		a.sin_port = htons((uint16_t)port);
		int c = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(c, (struct sockaddr *)&a, sizeof a) < 0) { perror("connect"); return 1; }
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		char b = 'x';
		uint64_t t0 = now_ns();
		for (long i = 0; i < rounds; i++) {
			if (send(c, &b, 1, 0) != 1) { perror("send"); return 1; }
			ssize_t r;
			while ((r = recv(c, &b, 1, 0)) < 0 && errno == EINTR) {}
			if (r != 1) { fprintf(stderr, "pingpong: short recv\n"); return 1; }
		}
		uint64_t t1 = now_ns();
		close(c);
		printf("rounds=%ld elapsed_ns=%llu rps=%.0f\n", rounds, (unsigned long long)(t1 - t0),
		       (double)rounds * 1e9 / (double)(t1 - t0));
		return 0;
	}
	if (!strcmp(mode, "pipe")) {
		int up[2], down[2];
		char b = 'x';
		if (pipe(up) < 0 || pipe(down) < 0) { perror("pipe"); return 1; }
		pid_t pid = fork();
		if (pid < 0) { perror("fork"); return 1; }
		if (pid == 0) {
			for (long i = 0; i < rounds; i++)
				if (read(down[0], &b, 1) != 1 || write(up[1], &b, 1) != 1)
					_exit(1);
			_exit(0);
		}
		uint64_t t0 = now_ns();
		for (long i = 0; i < rounds; i++)
			if (write(down[1], &b, 1) != 1 || read(up[0], &b, 1) != 1) { perror("pipe"); return 1; }
		uint64_t t1 = now_ns();
		int st;
		waitpid(pid, &st, 0);
		printf("rounds=%ld elapsed_ns=%llu rps=%.0f\n", rounds, (unsigned long long)(t1 - t0),
		       (double)rounds * 1e9 / (double)(t1 - t0));
		return 0;
	}
usage:
	fprintf(stderr, "usage: pingpong server -P PORTFILE | pingpong client -p PORT [-n ROUNDS] | "
	                "pingpong pipe [-n ROUNDS]\n");
	return 2;
}
