/* sigsend: a program whose SIGALRM handler sends while its main loop sends (send() is
 * async-signal-safe, so a handler may). Exits 0 when every byte sent arrived exactly once.
 *
 *   sigsend [-n] [-t MS] [-i US]
 *   (default) one TCP connection on loopback: the main loop sends 64-byte runs of 'M', the
 *             handler (every US us, default 200) sends one 'h' on the same socket; a thread
 *             that never takes the signal receives and counts each letter.
 *   -n        every send is a socket's first I/O: the main loop and the handler each make a
 *             socketpair, send on one end ('M' x 64, or one 'n'), receive on the other, close.
 *   -t MS     how long the main loop sends (default 1000).
 * Output: one line
 *   signals=S main_sent=A main_recv=B handler_sent=C handler_recv=D other=E
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "itest.h"

#define RUN 64

static int cfd = -1, new_sockets;
static _Atomic unsigned long long signals, handler_sent, handler_recv;
static unsigned long long main_sent, main_recv;
static _Atomic unsigned long long other; /* bytes of a letter no one sent */

/* one socketpair: send `n` bytes of `c` on one end, receive them on the other */
static void pair_round(char c, size_t n, unsigned long long *sent, unsigned long long *recvd,
                       _Atomic unsigned long long *asent, _Atomic unsigned long long *arecvd)
{
	char buf[RUN];
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return;
	memset(buf, c, n);
	ssize_t w = send(sv[0], buf, n, MSG_NOSIGNAL);
	if (w > 0) {
		if (sent)
			*sent += (size_t)w;
		else
			atomic_fetch_add(asent, (size_t)w);
		size_t got = 0;
		while (got < (size_t)w) { /* bounded: the bytes are in the buffer already */
			ssize_t r = recv(sv[1], buf, sizeof buf, 0);
			if (r <= 0 && !(r < 0 && errno == EINTR))
				break;
			if (r > 0) {
				for (ssize_t i = 0; i < r; i++)
					if (buf[i] != c)
						other++;
				got += (size_t)r;
			}
		}
		if (recvd)
			*recvd += got;
		else
			atomic_fetch_add(arecvd, got);
	}
	close(sv[0]);
	close(sv[1]);
}

static void on_alarm(int sig)
{
	int saved = errno;

	(void)sig;
	atomic_fetch_add(&signals, 1);
	if (new_sockets) {
		pair_round('n', 1, NULL, NULL, &handler_sent, &handler_recv);
	} else if (send(cfd, "h", 1, MSG_NOSIGNAL) == 1) {
		atomic_fetch_add(&handler_sent, 1);
	}
	errno = saved;
}

int main(int argc, char **argv)
{
	long ms = 1000, us = 200;
	int opt;
	struct recv_tally rt = {.fd = -1, .tags = {'M', 'h'}};
	pthread_t rd;
	sigset_t alrm;
	char run[RUN];

	while ((opt = getopt(argc, argv, "nt:i:")) != -1) {
		switch (opt) {
		case 'n': new_sockets = 1; break;
		case 't': ms = atol(optarg); break;
		case 'i': us = atol(optarg); break;
		default:
			fprintf(stderr, "usage: sigsend [-n] [-t MS] [-i US]\n");
			return 2;
		}
	}
	memset(run, 'M', sizeof run);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	if (!new_sockets) {
		if ((rt.fd = tcp_pair(&cfd)) < 0)
			return 2;
		/* the receiver never runs the handler: it must not be what the signal interrupts */
		pthread_sigmask(SIG_BLOCK, &alrm, NULL);
		if (pthread_create(&rd, NULL, recv_tally_main, &rt) != 0)
			return 2;
		pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	}
	struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, us}, {0, us}}, off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &it, NULL);
	/* bounded by the clock */
	for (uint64_t end = now_ns() + (uint64_t)ms * 1000000u; now_ns() < end;) {
		if (new_sockets) {
			pair_round('M', RUN, &main_sent, &main_recv, NULL, NULL);
			continue;
		}
		ssize_t w = send(cfd, run, sizeof run, MSG_NOSIGNAL);
		if (w > 0)
			main_sent += (size_t)w;
		else if (!(w < 0 && errno == EINTR))
			break;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_IGN);
	if (!new_sockets) {
		shutdown(cfd, SHUT_WR);
		pthread_join(rd, NULL);
		main_recv += rt.n[0];
		atomic_fetch_add(&handler_recv, rt.n[1]);
		other += rt.n[2];
	}
	printf("signals=%llu main_sent=%llu main_recv=%llu handler_sent=%llu handler_recv=%llu "
	       "other=%llu\n",
	       (unsigned long long)atomic_load(&signals), main_sent, main_recv,
	       (unsigned long long)atomic_load(&handler_sent),
	       (unsigned long long)atomic_load(&handler_recv), (unsigned long long)atomic_load(&other));
	return main_sent == main_recv && atomic_load(&handler_sent) == atomic_load(&handler_recv) &&
	               other == 0 && main_sent > 0 && atomic_load(&handler_sent) > 0
	       ? 0
	       : 1;
}
