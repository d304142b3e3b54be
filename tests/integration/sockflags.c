/* sockflags: flags a program passes that are the kernel's to interpret (issue 17 rows 4-6). One
 * process: a listener on 127.0.0.1, a client connected to it, and the accepted end.
 *
 *   sockflags errqueue   the accepted end sends 5 bytes; the client's
 *                        recvmsg(MSG_ERRQUEUE|MSG_DONTWAIT) must fail EAGAIN and leave them,
 *                        the next recv gets the 5: "errqueue=-1/EAGAIN then=5"
 *   sockflags trunc      the accepted end sends 100 bytes; recv(fd, NULL, 100, MSG_TRUNC) on
 *                        the client discards them: "trunc=100 left=0"
 *   sockflags zerocopy   two send(MSG_ZEROCOPY) of 512 KiB on the client (SO_ZEROCOPY), a
 *                        thread draining the accepted end; the completions read from the error
 *                        queue (10 s at most): "zerocopy ids=LO..HI sent=N"
 */
#include <poll.h>
#include <pthread.h>
#include <time.h>

#include "itest.h"
#include <linux/errqueue.h>

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

static int cli, acc;

static void pair(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof sa;
	int l = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&sa, &sl))
		exit(2);
	cli = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(cli, (struct sockaddr *)&sa, sizeof sa) != 0)
		exit(2);
	acc = accept(l, NULL, NULL);
	if (acc < 0)
		exit(2);
	close(l);
}

static void *drain(void *a)
{
	static char buf[65536];
	(void)a;
	while (recv(acc, buf, sizeof buf, 0) > 0)
		;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	pair();
	if (!strcmp(argv[1], "errqueue")) {
		char buf[64], ctl[256];
		struct iovec iov = {buf, sizeof buf};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
		                   .msg_controllen = sizeof ctl};
		if (send(acc, "hello", 5, 0) != 5)
			return 2;
		usleep(100000);
		ssize_t n = recvmsg(cli, &m, MSG_ERRQUEUE | MSG_DONTWAIT);
		int e = errno;
		ssize_t then = recv(cli, buf, sizeof buf, MSG_DONTWAIT);
		printf("errqueue=%zd/%s then=%zd\n", n, n < 0 ? ename(e) : "-", then);
	} else if (!strcmp(argv[1], "trunc")) {
		char hundred[100] = {0};
		if (send(acc, hundred, 100, 0) != 100)
			return 2;
		usleep(100000);
		ssize_t n = recv(cli, NULL, 100, MSG_TRUNC);
		int e = errno;
		ssize_t left = recv(cli, hundred, sizeof hundred, MSG_DONTWAIT);
		printf("trunc=%zd/%s left=%zd\n", n, n < 0 ? ename(e) : "-", left < 0 ? 0 : left);
	} else if (!strcmp(argv[1], "zerocopy")) {
		static char big[512 * 1024];
		int one = 1;
		pthread_t t;
		if (setsockopt(cli, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof one) != 0) {
			printf("zerocopy unsupported\n");
			return 77;
		}
		pthread_create(&t, NULL, drain, NULL);
		ssize_t sent = 0;
		for (int i = 0; i < 2; i++) {
			ssize_t n = send(cli, big, sizeof big, MSG_ZEROCOPY);
			if (n < 0) {
				printf("zerocopy send failed: %s\n", ename(errno));
				return 1;
			}
			sent += n;
		}
		long lo = -1, hi = -1;
		uint64_t end = now_ns() + 10000000000ull;
		while (hi < 1 && now_ns() < end) {
			char ctl[256];
			struct msghdr m = {.msg_control = ctl, .msg_controllen = sizeof ctl};
			struct pollfd p = {cli, 0, 0};
			poll(&p, 1, 100);
			if (recvmsg(cli, &m, MSG_ERRQUEUE) < 0)
				continue;
			for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
				struct sock_extended_err *ee = (void *)CMSG_DATA(c);
				if (ee->ee_origin != SO_EE_ORIGIN_ZEROCOPY)
					continue;
				if (lo < 0 || (long)ee->ee_info < lo)
					lo = ee->ee_info;
				if ((long)ee->ee_data > hi)
					hi = ee->ee_data;
			}
		}
		printf("zerocopy ids=%ld..%ld sent=%zd\n", lo, hi, sent);
		shutdown(cli, SHUT_WR);
		pthread_join(t, NULL);
	} else {
		return 2;
	}
	return 0;
}
