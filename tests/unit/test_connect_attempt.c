/* test_connect_attempt.c: src/connect_attempt.c on real loopback sockets: which connect() calls
 * would start an attempt, in the orders a non-blocking client makes them. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "connect_attempt.h"
#include "policy.h"
#include "testutil.h"

/* A listening socket on 127.0.0.1 (listening: 1) or a bound one that refuses (0). */
static int server(struct sockaddr_in *a, int listening)
{
	socklen_t l = sizeof *a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	memset(a, 0, sizeof *a);
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)a, sizeof *a), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)a, &l), 0);
	if (listening)
		assert_int_equal(listen(fd, 16), 0);
	return fd;
}

static int try_connect(int fd, const struct sockaddr_in *a)
{
	return connect(fd, (const struct sockaddr *)a, sizeof *a) == 0 ? 0 : errno;
}

static void writable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	assert_int_equal(poll(&p, 1, 5000), 1);
}

static void test_completion_check_is_no_attempt(void **state)
{
	struct sockaddr_in a;
	int srv = server(&a, 1);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	(void)state;
	assert_int_equal(rlt__connect_starts(fd), 1); /* a fresh socket */
	int e = try_connect(fd, &a);
	assert_true(e == EINPROGRESS || e == 0);
	writable(fd);
	assert_int_equal(rlt__connect_starts(fd), 0); /* connected: asks how it went */
	e = try_connect(fd, &a);
	assert_true(e == 0 || e == EISCONN);
	assert_int_equal(rlt__connect_starts(fd), 0);
	assert_int_equal(try_connect(fd, &a), EISCONN);
	close(fd);
	close(srv);
}

static void test_failed_attempt(void **state)
{
	struct sockaddr_in a;
	int srv = server(&a, 0); /* bound, not listening: refused */
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	(void)state;
	for (int round = 0; round < 3; round++) {
		assert_int_equal(rlt__connect_starts(fd), 1);
		int e = try_connect(fd, &a);
		if (e == EINPROGRESS) {
			writable(fd);
			/* failed, not reported yet: the next connect() only reports it */
			errno = 1234;
			assert_int_equal(rlt__connect_starts(fd), 0);
			assert_int_equal(errno, 1234); /* errno kept */
			e = try_connect(fd, &a);
		}
		assert_int_equal(e, ECONNREFUSED);
	}
	close(fd);
	close(srv);
}

static void test_error_taken_by_so_error(void **state)
{
	struct sockaddr_in a;
	int srv = server(&a, 0);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), err = 0;
	socklen_t l = sizeof err;

	(void)state;
	if (try_connect(fd, &a) != EINPROGRESS) {
		close(fd);
		close(srv);
		skip(); /* refused at once: nothing left unreported */
	}
	writable(fd);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l), 0);
	assert_int_equal(err, ECONNREFUSED);
	/* the kernel still reports the end of that attempt (ECONNABORTED), starting nothing */
	assert_int_equal(rlt__connect_starts(fd), 0);
	assert_int_equal(try_connect(fd, &a), ECONNABORTED);
	assert_int_equal(rlt__connect_starts(fd), 1);
	close(fd);
	close(srv);
}

static void test_unix_stream(void **state)
{
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(rlt__connect_starts(sv[0]), 0); /* connected */
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(rlt__connect_starts(fd), 1);
	close(fd);
	close(sv[0]);
	close(sv[1]);
}

/* Which rules a connect() counts, the same for both fronts. */
static void test_counts(void **state)
{
	struct sockaddr_in a;
	int srv = server(&a, 1);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	uint32_t c, n;

	(void)state;
	c = 1, n = 2;
	rlt__connect_counts(fd, SOCK_DGRAM, 0, 0, &c, &n);
	assert_true(c == 0 && n == 0); /* a datagram connect() sets a peer only */
	c = 1, n = 2;
	rlt__connect_counts(fd, SOCK_STREAM, 1, 0, &c, &n);
	assert_true(c == 1 && n == 2); /* a fresh socket starts an attempt */
	c = 1, n = 2;
	rlt__connect_counts(fd, SOCK_STREAM, 1, 1, &c, &n);
	assert_true(c == 1 && n == 0); /* its slots are held already */
	assert_int_equal(try_connect(fd, &a), 0);
	c = 1, n = 2;
	rlt__connect_counts(fd, SOCK_STREAM, 1, 0, &c, &n);
	assert_true(c == 0 && n == 0); /* connected: it only asks */
	c = 1, n = 2;
	rlt__connect_counts(fd, SOCK_STREAM, 0, 0, &c, &n);
	assert_true(c == 1 && n == 2); /* the front says it is the first: not asked */
	close(fd);
	close(srv);
}

static void test_outcome(void **state)
{
	(void)state;
	assert_int_equal(rlt__connect_outcome(0, 0), RLT_CONNECT_GOING);
	assert_int_equal(rlt__connect_outcome(-1, EINPROGRESS), RLT_CONNECT_GOING);
	assert_int_equal(rlt__connect_outcome(-1, EALREADY), RLT_CONNECT_GOING);
	assert_int_equal(rlt__connect_outcome(-1, EINTR), RLT_CONNECT_GOING);
	assert_int_equal(rlt__connect_outcome(-1, EISCONN), RLT_CONNECT_CONNECTED);
	assert_int_equal(rlt__connect_outcome(-1, ECONNREFUSED), RLT_CONNECT_FAILED);
	assert_int_equal(rlt__connect_outcome(-1, ETIMEDOUT), RLT_CONNECT_FAILED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_completion_check_is_no_attempt),
		cmocka_unit_test(test_failed_attempt),
		cmocka_unit_test(test_error_taken_by_so_error),
		cmocka_unit_test(test_unix_stream),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_outcome),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
