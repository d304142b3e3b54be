/* keychurn.c: connects under a keyed shared rule (test_keys_shared_kill.sh), run preloaded.
 *
 *   keychurn churn PORT SECONDS   a new key at every call (127.3.x.y: PORT, 1024 of them in
 *                                 turn), for at most SECONDS: with keys= small every call
 *                                 inserts, and with a second rule that rejects 127.3/16 after
 *                                 the key's, no call reaches the kernel: a SIGKILL often lands
 *                                 in the middle of an insert; prints "churning" once past
 *                                 its start
 *   keychurn check PORT BASE      ten fresh keys 127.4.BASE.1..10 once each, then the last again:
 *                                 prints "fresh_ok=N again=ok|rejected"
 *   keychurn one PORT IP          one connect to IP: prints "ok" or "rejected"
 *
 * Nothing listens on PORT: a connect the rule lets through ends in ECONNREFUSED, one it rejects
 * in EDQUOT (the rule's errno=). Bounded: churn by SECONDS and 10^7 calls.
 */
#include "itest.h"

/* 1: let through (the kernel's answer), 0: rejected by the rule, -1: something else. *fd is
 * a socket kept across calls while the rule rejects them (a rejected connect leaves it as it
 * was), so that a churner's time goes to the table rather than to socket() and close(). */
static int try_on(int *fd, const char *ip, int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int rc, e;

	if (*fd < 0 && (*fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return -1;
	inet_pton(AF_INET, ip, &a.sin_addr);
	rc = connect(*fd, (struct sockaddr *)&a, sizeof a);
	e = errno;
	if (rc == 0 || e == ECONNREFUSED) {
		close(*fd);
		*fd = -1;
		return 1;
	}
	if (e == EDQUOT)
		return 0;
	fprintf(stderr, "connect %s: %s\n", ip, ename(e));
	return -1;
}

static int try_connect(const char *ip, int port)
{
	int fd = -1, r = try_on(&fd, ip, port);

	if (fd >= 0)
		close(fd);
	return r;
}

int main(int argc, char **argv)
{
	char ip[32];

	if (argc != 4) {
		fprintf(stderr, "usage: keychurn churn PORT SECONDS | check PORT BASE | one PORT IP\n");
		return 2;
	}
	int port = atoi(argv[2]);
	if (!strcmp(argv[1], "churn")) {
		uint64_t end = now_ns() + (uint64_t)atoi(argv[3]) * 1000000000ull;
		int fd = -1;
		for (unsigned i = 0; i < 10000000u && (i & 63 || now_ns() < end); i++) {
			snprintf(ip, sizeof ip, "127.3.%u.%u", (i >> 8) & 3, i & 255);
			if (try_on(&fd, ip, port) < 0)
				return 1;
			if (i == 1000) { /* past the start: the test kills from now on */
				printf("churning\n");
				fflush(stdout);
			}
		}
		return 0;
	}
	if (!strcmp(argv[1], "one")) {
		int r = try_connect(argv[3], port);
		if (r >= 0)
			printf("%s\n", r ? "ok" : "rejected");
		return r < 0;
	}
	int ok = 0, again;
	for (int i = 1; i <= 10; i++) {
		snprintf(ip, sizeof ip, "127.4.%d.%d", atoi(argv[3]), i);
		int r = try_connect(ip, port);
		if (r < 0)
			return 1;
		ok += r;
	}
	again = try_connect(ip, port);
	if (again < 0)
		return 1;
	printf("fresh_ok=%d again=%s\n", ok, again ? "ok" : "rejected");
	return 0;
}
