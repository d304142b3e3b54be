/* sigpartial: one large blocking call on a TCP connection while one SIGALRM (SA_RESTART, its
 * handler counts) comes 300 ms after the start: what the call returns, and how late.
 *
 *   sigpartial send PORT FILE      send(FILE's bytes) to 127.0.0.1:PORT
 *   sigpartial sendfile PORT FILE  sendfile(FILE) on the file position
 *   sigpartial recv PORT OUT SIZE  recv(SIZE, MSG_WAITALL) from 127.0.0.1:PORT, written to OUT
 *   sigpartial first PORT FILE     send 256 bytes first (untimed), then the rest as "send": run
 *                                  with a burst of 256 B, the timed send then waits before it
 *                                  moves anything
 * Output: "ret=N errno=E late_ms=L signals=S" (L: from the signal to the call's return).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "itest.h"

static volatile sig_atomic_t signals;

static void on_alarm(int sig)
{
	(void)sig;
	signals++;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct itimerval it = {.it_value = {0, 300000}};
	const char *mode;
	char *buf;
	ssize_t n = -1;
	size_t size;
	int fd, file, err;
	uint64_t t0;

	if (argc != 4 && argc != 5)
		return 2;
	mode = argv[1];
	fd = dial_loopback("127.0.0.1", atoi(argv[2]));
	if (fd < 0)
		return 2;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	if (!strcmp(mode, "recv")) {
		size = (size_t)atol(argv[4]);
		file = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	} else {
		struct stat st;
		file = open(argv[3], O_RDONLY);
		if (file < 0 || fstat(file, &st) != 0)
			return 2;
		size = (size_t)st.st_size;
	}
	buf = malloc(size);
	if (file < 0 || !buf)
		return 2;
	if (strcmp(mode, "sendfile") && strcmp(mode, "recv") && read(file, buf, size) != (ssize_t)size)
		return 2;
	if (!strcmp(mode, "first")) {
		if (size < 256 || send(fd, buf, 256, MSG_NOSIGNAL) != 256)
			return 2;
		buf += 256;
		size -= 256;
	}
	/* recv: data flowing before the timer is armed, so that the signal comes after the call
	 * moved some (a peer slow to start on a loaded machine would otherwise make the signal
	 * come first, and a call that moved nothing goes on waiting, as the kernel's does) */
	if (!strcmp(mode, "recv")) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		if (poll(&pf, 1, 10000) != 1)
			return 2;
	}
	t0 = now_ns();
	setitimer(ITIMER_REAL, &it, NULL);
	if (!strcmp(mode, "send") || !strcmp(mode, "first"))
		n = send(fd, buf, size, MSG_NOSIGNAL);
	else if (!strcmp(mode, "sendfile"))
		n = sendfile(fd, file, NULL, size);
	else
		n = recv(fd, buf, size, MSG_WAITALL);
	err = n < 0 ? errno : 0;
	double late = ((double)(now_ns() - t0) - 300e6) / 1e6;
	if (!strcmp(mode, "recv") && n > 0 && write(file, buf, (size_t)n) != n)
		return 2;
	printf("ret=%zd errno=%s late_ms=%.0f signals=%d\n", n, err ? ename(err) : "0", late,
	       (int)signals);
	close(fd);
	return 0;
}
