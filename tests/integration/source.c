/* source: a server that sends the test pattern on each connection it accepts, then closes.
 *
 *   source [-4|-6] [-h BINDADDR] [-U PATH] [-P PORTFILE] (-n BYTES | -D SECONDS) [-c CONNS]
 *          [-s SIZE] [-T SECONDS]
 *   -c   serve this many connections (one thread each), then exit (default 1)
 *   -D   send for this long instead of a byte count (stops early if the peer closes)
 * Output, one line per connection: conn=I sent=BYTES fnv=HEX
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"


static unsigned char *pat;
static unsigned long long nbytes;
static double duration;
static size_t wsize = 65536;

struct conn {
	int fd, idx;
	unsigned long long sent;
	uint64_t fnv;
};

static void *serve(void *arg)
{
	struct conn *c = arg;
	unsigned long long pos = 0;
	uint64_t h = 0xcbf29ce484222325ull;
	uint64_t deadline = duration > 0 ? now_ns() + (uint64_t)(duration * 1e9) : 0;
	for (;;) {
		size_t n = wsize;
		if (deadline) {
			if (now_ns() >= deadline) break;
		} else {
			if (pos >= nbytes) break;
			if (nbytes - pos < n) n = (size_t)(nbytes - pos);
		}
		ssize_t w = send(c->fd, pat + pos % PAT_LEN, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR) continue;
			if (!deadline) perror("source: send");
			break;
		}
		if (!deadline) h = fnv_update(h, pat + pos % PAT_LEN, (size_t)w);
		pos += (unsigned long long)w;
	}
	c->sent = pos;
	c->fnv = h;
	close(c->fd);
	return NULL;
}

int main(int argc, char **argv)
{
	int opt, fam = AF_INET, nconns = 1, tlimit = 60;
	const char *bindaddr = NULL, *upath = NULL, *portfile = NULL;
	while ((opt = getopt(argc, argv, "46h:U:P:n:D:c:s:T:")) != -1) {
		switch (opt) {
		case '4': fam = AF_INET; break;
		case '6': fam = AF_INET6; break;
		case 'h': bindaddr = optarg; break;
		case 'U': upath = optarg; break;
		case 'P': portfile = optarg; break;
		case 'n': nbytes = strtoull(optarg, NULL, 10); break;
		case 'D': duration = atof(optarg); break;
		case 'c': nconns = atoi(optarg); break;
		case 's': wsize = (size_t)strtoull(optarg, NULL, 10); break;
		case 'T': tlimit = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: source [-4|-6] [-h ADDR] [-U PATH] [-P PORTFILE] (-n BYTES|-D SEC) "
					"[-c CONNS] [-s SIZE] [-T SEC]\n");
			return 2;
		}
	}
	if (nconns < 1 || nconns > 256 || wsize < 1 || wsize > MAX_CALL) return 2;
	signal(SIGPIPE, SIG_IGN);
	alarm((unsigned)tlimit);
	pat = pattern_make();
	int lfd = listen_loopback("source", fam, SOCK_STREAM, bindaddr, upath, 128, portfile);
	if (lfd < 0)
		return 2;
	struct conn *cs = calloc((size_t)nconns, sizeof *cs);
	pthread_t *th = calloc((size_t)nconns, sizeof *th);
	for (int i = 0; i < nconns; i++) {
		int c;
		while ((c = accept(lfd, NULL, NULL)) < 0 && errno == EINTR) {}
		if (c < 0) { perror("accept"); return 2; }
		cs[i].fd = c;
		cs[i].idx = i;
		pthread_create(&th[i], NULL, serve, &cs[i]);
	}
	for (int i = 0; i < nconns; i++) {
		pthread_join(th[i], NULL);
		printf("conn=%d sent=%llu fnv=%016llx\n", i, cs[i].sent, (unsigned long long)cs[i].fnv);
	}
	if (upath) unlink(upath);
	return 0;
}
