/* fdlife: what happens to a process's fds and connections around vfork, closefrom and a
 * non-blocking connect, for tests/reliability/test_{spawn,closefrom,connect_check}.sh.
 *
 *   fdlife -p PORT vfork
 *        opens 2 connections, then a vfork child closes one (close), replaces the other
 *        (dup2 of /dev/null onto it), duplicates (dup, fcntl F_DUPFD), closes all from 3
 *        (close_range, closefrom) and _exits; then the parent opens a 3rd connection.
 *        Prints: open1=OK open2=OK open3=ERRNAME|OK
 *   fdlife -p PORT -f FILE [-b BYTES] rawfork
 *        opens 2 connections; a child of _Fork (no fork handlers run) closes the first, opens
 *        FILE (at the closed socket's number), writes BYTES to it, then opens 2 connections;
 *        then the parent opens a 3rd.
 *        Prints: child_fd=3 write_ms=.. child_open1=OK child_open2=ERRNAME parent_open3=ERRNAME
 *   fdlife -p PORT -f FILE [-b BYTES] closefrom
 *        opens 2 connections, closefrom(3), opens FILE (it gets fd 3, a former socket's number)
 *        and writes BYTES (default 262144) to it, then opens 3 connections (the file open).
 *        Prints: file_fd=3 write_ms=.. wrote=N open1=OK open2=OK open3=ERRNAME
 *   fdlife -p PORT [-n N] [-x] check
 *        N times (default 100): a non-blocking socket, connect() -> EINPROGRESS, poll for
 *        POLLOUT, connect() again to learn the outcome (0 or EISCONN; EALREADY: poll again),
 *        close. -x: also connect() once more on the connected socket (EISCONN).
 *        Prints: ok=N fail=M elapsed_ns=NS errs=NAME:COUNT,...
 *   fdlife -p PORT [-n N] retry
 *        (PORT refuses) N times on one non-blocking socket: connect() -> EINPROGRESS, poll,
 *        connect() again -> the error (ECONNREFUSED); then the next round's connect() is a
 *        new attempt. Prints: attempts=N checks=M elapsed_ns=NS errs=...
 * Exit status 0 unless a step could not be made at all (2).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static int port;
static int errs[256];

static const char *dial_name(int *fdp)
{
	int fd = dial_loopback(NULL, port);
	if (fd < 0)
		return ename(errno);
	if (fdp)
		*fdp = fd;
	return "OK";
}

static void print_errs(void)
{
	const char *sep = "";
	printf(" errs=");
	for (int e = 0; e < 256; e++)
		if (errs[e]) {
			printf("%s%s:%d", sep, ename(e), errs[e]);
			sep = ",";
		}
	printf("\n");
}

static int do_vfork(void)
{
	int a = -1, b = -1;
	const char *ra = dial_name(&a), *rb = dial_name(&b);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	pid_t pid;

	if (a < 0 || b < 0 || null < 0) {
		printf("open1=%s open2=%s\n", ra, rb);
		return 2;
	}
	/* what spawn helpers do between vfork and exec, all in the parent's memory */
	pid = vfork();
	if (pid == 0) {
		close(a);
		dup2(null, b);
		int d = dup(b);
		fcntl(d, F_DUPFD, 50);
		close_range(3, ~0U, 0);
		closefrom(3);
		_exit(0);
	}
	if (pid < 0)
		return 2;
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	printf("open1=%s open2=%s open3=%s\n", ra, rb, dial_name(NULL));
	return 0;
}

static int do_closefrom(const char *file, long bytes)
{
	int a = -1, b = -1;
	const char *ra = dial_name(&a), *rb = dial_name(&b);
	static char buf[65536];
	long wrote = 0;

	if (a < 0 || b < 0) {
		printf("open1=%s open2=%s\n", ra, rb);
		return 2;
	}
	closefrom(3);
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror(file);
		return 2;
	}
	memset(buf, 'x', sizeof buf);
	uint64_t t0 = now_ns();
	while (wrote < bytes) {
		size_t n = bytes - wrote < (long)sizeof buf ? (size_t)(bytes - wrote) : sizeof buf;
		ssize_t w = write(fd, buf, n);
		if (w <= 0) {
			perror("write");
			return 2;
		}
		wrote += w;
	}
	uint64_t t1 = now_ns();
	/* with the file still open, so that no new socket lands on a former socket's number */
	const char *o1 = dial_name(&a);
	const char *o2 = dial_name(&b);
	const char *o3 = dial_name(NULL);
	close(fd);
	printf("file_fd=%d write_ms=%.1f wrote=%ld open1=%s open2=%s open3=%s\n", fd,
	       (double)(t1 - t0) / 1e6, wrote, o1, o2, o3);
	return 0;
}

static double write_file(int fd, long bytes)
{
	static char buf[65536];
	long wrote = 0;
	uint64_t t0 = now_ns();

	memset(buf, 'x', sizeof buf);
	while (wrote < bytes) {
		size_t n = bytes - wrote < (long)sizeof buf ? (size_t)(bytes - wrote) : sizeof buf;
		ssize_t w = write(fd, buf, n);
		if (w <= 0)
			return -1;
		wrote += w;
	}
	return (double)(now_ns() - t0) / 1e6;
}

static int do_rawfork(const char *file, long bytes)
{
	int a = -1, b = -1, st = 0;
	const char *ra = dial_name(&a), *rb = dial_name(&b);

	if (a < 0 || b < 0) {
		printf("open1=%s open2=%s\n", ra, rb);
		return 2;
	}
	fflush(stdout);
	pid_t pid = _Fork();
	if (pid == 0) {
		close(a);
		int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		double ms = fd >= 0 ? write_file(fd, bytes) : -1;
		const char *o1 = dial_name(&a), *o2 = dial_name(NULL);
		printf("child_fd=%d write_ms=%.1f child_open1=%s child_open2=%s ", fd, ms, o1, o2);
		fflush(stdout);
		_exit(ms < 0 ? 2 : 0);
	}
	if (pid < 0)
		return 2;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	printf("parent_open3=%s\n", dial_name(NULL));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}

/* Waits (bounded) until fd is writable: the attempt is over. */
static int wait_out(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	return poll(&p, 1, 10000) == 1 ? 0 : ETIMEDOUT;
}

static int connect_again(int fd, const struct sockaddr_storage *ss, socklen_t len)
{
	/* bounded: an attempt in progress says EALREADY until it is over */
	for (int i = 0; i < 100; i++) {
		if (connect(fd, (const struct sockaddr *)ss, len) == 0)
			return 0;
		if (errno != EALREADY)
			return errno;
		if (wait_out(fd))
			return ETIMEDOUT;
	}
	return ETIMEDOUT;
}

static int do_check(long n, int extra)
{
	struct sockaddr_storage ss;
	socklen_t len = loopback_addr(&ss, AF_INET, NULL, NULL, port);
	long ok = 0, bad = 0;
	uint64_t t0 = now_ns();

	for (long i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), e = 0;
		if (fd < 0)
			return 2;
		if (connect(fd, (struct sockaddr *)&ss, len) != 0) {
			e = errno;
			if (e == EINPROGRESS)
				e = wait_out(fd);
			if (e == 0)
				e = connect_again(fd, &ss, len);
			if (e == EISCONN)
				e = 0;
		}
		if (e == 0 && extra && connect(fd, (struct sockaddr *)&ss, len) != 0 &&
		    errno != EISCONN)
			e = errno;
		if (e == 0)
			ok++;
		else {
			bad++;
			errs[e & 255]++;
		}
		close(fd);
	}
	printf("ok=%ld fail=%ld elapsed_ns=%llu", ok, bad, (unsigned long long)(now_ns() - t0));
	print_errs();
	return 0;
}

static int do_retry(long n)
{
	struct sockaddr_storage ss;
	socklen_t len = loopback_addr(&ss, AF_INET, NULL, NULL, port);
	long attempts = 0, checks = 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	uint64_t t0 = now_ns();

	if (fd < 0)
		return 2;
	for (long i = 0; i < n; i++) {
		attempts++;
		if (connect(fd, (struct sockaddr *)&ss, len) == 0)
			break; /* something listens: not what this mode is for */
		int e = errno;
		if (e == EINPROGRESS && wait_out(fd) == 0) {
			checks++;
			e = connect_again(fd, &ss, len);
		}
		errs[e & 255]++;
	}
	close(fd);
	printf("attempts=%ld checks=%ld elapsed_ns=%llu", attempts, checks,
	       (unsigned long long)(now_ns() - t0));
	print_errs();
	return 0;
}

int main(int argc, char **argv)
{
	const char *file = NULL;
	long n = 100, bytes = 262144;
	int opt, extra = 0;

	while ((opt = getopt(argc, argv, "p:f:b:n:x")) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'f': file = optarg; break;
		case 'b': bytes = atol(optarg); break;
		case 'n': n = atol(optarg); break;
		case 'x': extra = 1; break;
		default: return 2;
		}
	}
	if (optind >= argc || !port) {
		fprintf(stderr, "usage: fdlife -p PORT vfork|rawfork|closefrom|check|retry\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[optind], "vfork"))
		return do_vfork();
	if (!strcmp(argv[optind], "rawfork") && file)
		return do_rawfork(file, bytes);
	if (!strcmp(argv[optind], "closefrom") && file)
		return do_closefrom(file, bytes);
	if (!strcmp(argv[optind], "check"))
		return do_check(n, extra);
	if (!strcmp(argv[optind], "retry"))
		return do_retry(n);
	fprintf(stderr, "fdlife: unknown mode %s\n", argv[optind]);
	return 2;
}
