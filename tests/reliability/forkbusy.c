/* forkbusy: fork() beside a thread that sends in a loop. Each child sends one byte on the same
 * socket and exits; none may hang on a lock the sending thread held at the fork (the child has
 * no such thread to release it). Exits 0 when no child hung and every byte arrived once.
 *
 *   forkbusy [-n CHILDREN] [-w MS]
 *   -n  children forked one after another (default 300)
 *   -w  how long a child may take before it counts as hung and is killed (default 2000)
 * Output: one line
 *   children=N hung=H child_sent=S child_recv=R busy_sent=A busy_recv=B other=E
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
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"

static int cfd = -1;
static _Atomic int stop;
static unsigned long long busy_sent, busy_recv, child_recv, other;

static void *busy(void *arg)
{
	char run[64];

	(void)arg;
	memset(run, 'B', sizeof run);
	while (!atomic_load(&stop)) {
		ssize_t w = send(cfd, run, sizeof run, MSG_NOSIGNAL);
		if (w > 0)
			busy_sent += (size_t)w;
		else if (!(w < 0 && errno == EINTR))
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int opt, n = 300, wait_ms = 2000, hung = 0;
	struct recv_tally rd = {.fd = -1, .tags = {'B', 'c'}};
	unsigned long long child_sent = 0;
	pthread_t bt, rt;

	while ((opt = getopt(argc, argv, "n:w:")) != -1) {
		switch (opt) {
		case 'n': n = atoi(optarg); break;
		case 'w': wait_ms = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: forkbusy [-n CHILDREN] [-w MS]\n");
			return 2;
		}
	}
	if ((rd.fd = tcp_pair(&cfd)) < 0)
		return 2;
	if (pthread_create(&rt, NULL, recv_tally_main, &rd) != 0 ||
	    pthread_create(&bt, NULL, busy, NULL) != 0)
		return 2;
	for (int i = 0; i < n; i++) {
		int status = 0;
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			break;
		}
		if (pid == 0)
			_exit(send(cfd, "c", 1, MSG_NOSIGNAL) == 1 ? 0 : 1);
		/* bounded: wait_ms, in 1 ms steps */
		for (int w = 0;; w++) {
			if (waitpid(pid, &status, WNOHANG) == pid) {
				if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
					child_sent++;
				break;
			}
			if (w >= wait_ms) {
				hung++;
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
				break;
			}
			struct timespec ts = {0, 1000 * 1000};
			nanosleep(&ts, NULL);
		}
	}
	atomic_store(&stop, 1);
	pthread_join(bt, NULL);
	shutdown(cfd, SHUT_WR);
	pthread_join(rt, NULL);
	busy_recv = rd.n[0];
	child_recv = rd.n[1];
	other = rd.n[2];
	printf("children=%d hung=%d child_sent=%llu child_recv=%llu busy_sent=%llu busy_recv=%llu "
	       "other=%llu\n",
	       n, hung, child_sent, child_recv, busy_sent, busy_recv, other);
	return hung == 0 && child_sent == (unsigned long long)n && child_recv == child_sent &&
	               busy_recv == busy_sent && other == 0
	       ? 0
	       : 1;
}
