/* acceptor: a TCP server that accepts connections (accept or accept4) and counts them.
 *
 *   acceptor [-4|-6] [-h BINDADDR] -P PORTFILE [-m accept|accept4] [-f nonblock,cloexec]
 *            [-D SECONDS] [-n MAXCALLS] [-H] [-e MS] [-v] [-T SECONDS]
 *   -D   stop this long after the first accept (default 3); -n: stop after this many accept calls
 *   -H   hold accepted sockets open (else each is closed at once)
 *   -e   count successes after the first MS ms since the first success (late_ok, late_ns)
 *   -v   print one line per accept call: "event OK|ERRNAME at_ms=.."
 * Output: pid=P accepted=N failed=M elapsed_ns=NS late_ok=L late_ns=LN errs=NAME:COUNT,...
 * With -f, checks that the accepted socket really has the flags asked for.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

int main(int argc, char **argv)
{
	int opt, fam = AF_INET, use4 = 0, flags = 0, hold = 0, verbose = 0, tlimit = 60;
	double duration = 3;
	long long maxcalls = -1;
	uint64_t early_ns = 0;
	const char *bindaddr = NULL, *portfile = NULL;
	while ((opt = getopt(argc, argv, "46h:P:m:f:D:n:He:vT:")) != -1) {
		switch (opt) {
		case '4': fam = AF_INET; break;
		case '6': fam = AF_INET6; break;
		case 'h': bindaddr = optarg; break;
		case 'P': portfile = optarg; break;
		case 'm': use4 = !strcmp(optarg, "accept4"); break;
		case 'f':
			if (strstr(optarg, "nonblock")) flags |= SOCK_NONBLOCK;
			if (strstr(optarg, "cloexec")) flags |= SOCK_CLOEXEC;
			break;
		case 'D': duration = atof(optarg); break;
		case 'n': maxcalls = atoll(optarg); break;
		case 'H': hold = 1; break;
		case 'e': early_ns = strtoull(optarg, NULL, 10) * 1000000u; break;
		case 'v': verbose = 1; break;
		case 'T': tlimit = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: acceptor [-4|-6] [-h ADDR] -P PORTFILE [-m accept|accept4] [-f FLAGS] "
					"[-D SEC] [-n MAX] [-H] [-e MS] [-v]\n");
			return 2;
		}
	}
	if (!portfile) return 2;
	alarm((unsigned)tlimit);
	int lfd = listen_loopback("acceptor", fam, SOCK_STREAM, bindaddr, NULL, 4096, portfile);
	if (lfd < 0)
		return 2;

	long long accepted = 0, failed = 0, calls = 0, late_ok = 0;
	int errc[256] = { 0 };
	uint64_t t_first = 0, t_last = 0, t0 = now_ns();
	for (;;) {
		uint64_t t = now_ns();
		if (maxcalls >= 0 && calls >= maxcalls) break;
		int wait_ms = 30000;
		if (t_first) {
			uint64_t end = t_first + (uint64_t)(duration * 1e9);
			if (t >= end) break;
			wait_ms = (int)((end - t) / 1000000u) + 1;
		}
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		int r = poll(&p, 1, wait_ms);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) { if (!t_first) break; continue; }
		int c = use4 ? accept4(lfd, NULL, NULL, flags) : accept(lfd, NULL, NULL);
		int e = errno;
		calls++;
		t = now_ns();
		if (c >= 0) {
			if (!t_first) t_first = t;
			t_last = t;
			accepted++;
			if (early_ns && t - t_first >= early_ns) late_ok++;
			if ((flags & SOCK_NONBLOCK) && !(fcntl(c, F_GETFL) & O_NONBLOCK)) { fprintf(stderr, "acceptor: NONBLOCK lost\n"); return 1; }
			if ((flags & SOCK_CLOEXEC) && !(fcntl(c, F_GETFD) & FD_CLOEXEC)) { fprintf(stderr, "acceptor: CLOEXEC lost\n"); return 1; }
			if (!hold) close(c);
		} else {
			if (!t_first) t_first = t;
			failed++;
			errc[e & 255]++;
		}
		if (verbose) {
			printf("event %s at_ms=%.1f\n", c >= 0 ? "OK" : ename(e), (double)(t - t0) / 1e6);
			fflush(stdout);
		}
	}
	char errs[2048] = "";
	size_t off = 0;
	for (int e = 0; e < 256 && off < sizeof errs; e++)
		if (errc[e]) off += (size_t)snprintf(errs + off, sizeof errs - off, "%s%s:%d", off ? "," : "", ename(e), errc[e]);
	unsigned long long late_ns = early_ns && t_last > t_first + early_ns ? t_last - t_first - early_ns : 0;
	printf("pid=%d accepted=%lld failed=%lld elapsed_ns=%llu late_ok=%lld late_ns=%llu errs=%s\n", (int)getpid(),
	       accepted, failed, (unsigned long long)(t_last - t_first), late_ok, late_ns, off ? errs : "none");
	return 0;
}
