/* dupswap: a thread in a paced blocking send while another thread dup2()s a second connection's
 * fd onto the first's number (issue 17 row 1: the fd number is not the socket).
 *
 *   dupswap PORT_A PORT_B FILE DELAY_MS [FIRST]
 *
 * Connects to 127.0.0.1:PORT_A (fd a) and :PORT_B (fd b); thread 1 sends FILE's bytes on a in
 * one send() (with FIRST: its first FIRST bytes in one send, then the rest in another); after
 * DELAY_MS thread 2 does dup2(b, a). Then both fds are closed. Prints "sent=N errno=NAME
 * swapped_ms=T" (N: both sends' bytes). Exit 0 when the send returned. */
#include <pthread.h>
#include <sys/stat.h>
#include <fcntl.h>

#include "itest.h"

static int a, b;
static char *data;
static size_t len;
static size_t first;
static ssize_t sent;
static int err;

static void *sender(void *arg)
{
	(void)arg;
	if (first) {
		sent = send(a, data, first, 0);
		if (sent != (ssize_t)first) {
			err = sent < 0 ? errno : 0;
			return NULL;
		}
	}
	ssize_t n = send(a, data + first, len - first, 0);
	sent = n < 0 ? n : (ssize_t)first + n;
	err = n < 0 ? errno : 0;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: dupswap PORT_A PORT_B FILE DELAY_MS [FIRST]\n");
		return 2;
	}
	int f = open(argv[3], O_RDONLY);
	struct stat st;
	if (f < 0 || fstat(f, &st) != 0)
		return 2;
	len = (size_t)st.st_size;
	data = malloc(len);
	if (!data || read(f, data, len) != (ssize_t)len)
		return 2;
	first = argc == 6 ? (size_t)atol(argv[5]) : 0;
	if (first > len)
		return 2;
	a = dial_or_exit(atoi(argv[1]));
	b = dial_or_exit(atoi(argv[2]));
	pthread_t t;
	uint64_t t0 = now_ns();
	pthread_create(&t, NULL, sender, NULL);
	struct timespec d = {atoi(argv[4]) / 1000, (long)(atoi(argv[4]) % 1000) * 1000000L};
	nanosleep(&d, NULL);
	if (dup2(b, a) != a) {
		perror("dup2");
		return 2;
	}
	uint64_t t1 = now_ns();
	pthread_join(t, NULL);
	close(a);
	close(b);
	printf("sent=%zd errno=%s swapped_ms=%llu took_ms=%llu\n", sent, err ? ename(err) : "0",
	       (unsigned long long)((t1 - t0) / 1000000), (unsigned long long)((now_ns() - t0) / 1000000));
	return sent < 0 ? 1 : 0;
}
