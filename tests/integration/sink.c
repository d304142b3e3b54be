/* sink: a server that receives bytes and reports how many, when, and their FNV-1a 64.
 *
 *   sink [-4|-6] [-h BINDADDR] [-U PATH] [-u] [-P PORTFILE] [-n CONNS] [-c COUNT] [-i IDLE_MS]
 *        [-e MS] [-x] [-T SECONDS]
 *   -u        UDP (datagrams): stop after COUNT datagrams or IDLE_MS without one (default 1500);
 *             SIGUSR1 says that the sender has ended (lib.sh's served does it): the idle time
 *             is then 300 ms, time for datagrams still on their way through loopback
 *   -n        TCP/unix: serve CONNS connections at once, exit when all have reached EOF
 *   -P        write the bound port (or "unix") to PORTFILE once listening
 *   -e MS     also report what arrived in the first MS ms after the first byte ("early") and
 *             the rate after it ("late_bytes", "late_ns")
 *   -x        do not hash (for high rates)
 * Output: one line per connection when CONNS > 1 ("conn=I bytes= fnv= elapsed_ns="), then
 *   bytes=N msgs=M fnv=HEX elapsed_ns=NS minsz=A maxsz=B early_bytes=E early_msgs=EM
 *   late_bytes=L late_ns=LN conns=K
 * elapsed_ns is from the first byte to the last byte.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

#define MAXC 64


static uint64_t first, last, early_ms;
static unsigned long long tot_bytes, tot_msgs, early_bytes, early_msgs, late_bytes;
static size_t minsz = (size_t)-1, maxsz;
static volatile sig_atomic_t sender_done;

static void on_usr1(int sig)
{
	(void)sig;
	sender_done = 1;
}

static void account(size_t n)
{
	uint64_t t = now_ns();
	if (!first) first = t;
	last = t;
	tot_bytes += n;
	tot_msgs++;
	if (n < minsz) minsz = n;
	if (n > maxsz) maxsz = n;
	if (early_ms) {
		if (t - first < early_ms * 1000000u) { early_bytes += n; early_msgs++; }
		else late_bytes += n;
	}
}

int main(int argc, char **argv)
{
	int opt, fam = AF_INET, udp = 0, nconns = 1, nohash = 0, tlimit = 60, idle_ms = 1500;
	unsigned long long count = 0;
	const char *bindaddr = NULL, *upath = NULL, *portfile = NULL;
	while ((opt = getopt(argc, argv, "46h:U:uP:n:c:i:e:xT:")) != -1) {
		switch (opt) {
		case '4': fam = AF_INET; break;
		case '6': fam = AF_INET6; break;
		case 'h': bindaddr = optarg; break;
		case 'U': upath = optarg; break;
		case 'u': udp = 1; break;
		case 'P': portfile = optarg; break;
		case 'n': nconns = atoi(optarg); break;
		case 'c': count = strtoull(optarg, NULL, 10); break;
		case 'i': idle_ms = atoi(optarg); break;
		case 'e': early_ms = strtoull(optarg, NULL, 10); break;
		case 'x': nohash = 1; break;
		case 'T': tlimit = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: sink [-4|-6] [-h ADDR] [-U PATH] [-u] [-P PORTFILE] [-n CONNS] "
					"[-c COUNT] [-i IDLE_MS] [-e MS] [-x] [-T SEC]\n");
			return 2;
		}
	}
	if (nconns < 1 || nconns > MAXC) return 2;
	/* SIGUSR1 is blocked but in ppoll, so that it cannot come between the test of sender_done
	 * and the wait (and be waited out for the whole idle time); its handler is there before
	 * the port file is */
	sigset_t usr1, in_wait;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_SETMASK, NULL, &in_wait);
	if (udp) {
		sigprocmask(SIG_BLOCK, &usr1, NULL);
		on_signal(SIGUSR1, on_usr1, 0);
	}
	alarm((unsigned)tlimit);
	int lfd = listen_loopback("sink", fam, udp ? SOCK_DGRAM : SOCK_STREAM, bindaddr, upath, 128,
	                          portfile);
	if (lfd < 0)
		return 2;
	int rcvbuf = 4 << 20;
	if (udp) setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
	size_t bufsz = 1 << 20;
	unsigned char *buf = malloc(bufsz);
	uint64_t fnv_all = FNV_INIT;

	if (udp) {
		for (;;) {
			struct pollfd p = { .fd = lfd, .events = POLLIN };
			int ms = first ? idle_ms : tlimit * 1000;
			if (sender_done && ms > 300) ms = 300;
			struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
			int r = ppoll(&p, 1, &ts, &in_wait);
			if (r < 0 && errno == EINTR) continue;
			if (r <= 0) break;
			ssize_t n = recv(lfd, buf, 65536, 0);
			if (n < 0) { if (errno == EINTR) continue; perror("recv"); break; }
			account((size_t)n);
			if (!nohash) fnv_all = fnv_update(fnv_all, buf, (size_t)n);
			if (count && tot_msgs >= count) break;
		}
	} else {
		struct pollfd pf[MAXC + 1];
		uint64_t cfnv[MAXC], cfirst[MAXC], clast[MAXC];
		unsigned long long cbytes[MAXC];
		int accepted = 0, done = 0;
		pf[0].fd = lfd; pf[0].events = POLLIN;
		for (int i = 0; i < nconns; i++) { pf[i + 1].fd = -1; pf[i + 1].events = POLLIN; }
		while (done < nconns) {
			int r = poll(pf, (nfds_t)nconns + 1, -1);
			if (r < 0) { if (errno == EINTR) continue; perror("poll"); break; }
			if ((pf[0].revents & POLLIN) && accepted < nconns) {
				int c = accept(lfd, NULL, NULL);
				if (c >= 0) {
					pf[accepted + 1].fd = c;
					cfnv[accepted] = FNV_INIT; cbytes[accepted] = 0; cfirst[accepted] = clast[accepted] = 0;
					accepted++;
					if (accepted == nconns) pf[0].fd = -1;
				}
			}
			for (int i = 0; i < accepted; i++) {
				if (pf[i + 1].fd < 0 || !pf[i + 1].revents) continue;
				ssize_t n = read(pf[i + 1].fd, buf, bufsz);
				if (n < 0 && errno == EINTR) continue;
				if (n <= 0) {
					if (n < 0) perror("sink: read");
					close(pf[i + 1].fd);
					pf[i + 1].fd = -1;
					done++;
					continue;
				}
				account((size_t)n);
				if (!cfirst[i]) cfirst[i] = last;
				clast[i] = last;
				cbytes[i] += (unsigned long long)n;
				if (!nohash) cfnv[i] = fnv_update(cfnv[i], buf, (size_t)n);
			}
		}
		if (nconns > 1)
			for (int i = 0; i < accepted; i++)
				printf("conn=%d bytes=%llu fnv=%016llx elapsed_ns=%llu\n", i, cbytes[i],
				       (unsigned long long)cfnv[i], (unsigned long long)(clast[i] - cfirst[i]));
		if (accepted) fnv_all = cfnv[0];
	}
	if (upath) unlink(upath);
	unsigned long long late_ns = 0;
	if (early_ms && last > first + early_ms * 1000000u) late_ns = last - first - early_ms * 1000000u;
	printf("bytes=%llu msgs=%llu fnv=%016llx elapsed_ns=%llu minsz=%zu maxsz=%zu early_bytes=%llu "
	       "early_msgs=%llu late_bytes=%llu late_ns=%llu conns=%d\n",
	       tot_bytes, tot_msgs, (unsigned long long)fnv_all, (unsigned long long)(last - first),
	       minsz == (size_t)-1 ? 0 : minsz, maxsz, early_bytes, early_msgs, late_bytes, late_ns, nconns);
	return 0;
}
