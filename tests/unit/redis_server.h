/* redis_server.h: a redis-server of the test's own on a free loopback port, for the redis
 * scope's unit test and bench (neither talks to a server it did not start). */
#ifndef RLT_REDIS_SERVER_H
#define RLT_REDIS_SERVER_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scope_redis.h"

/* A loopback TCP port free now (the kernel's pick). */
static inline int rlt_test_free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0), p;

	bind(fd, (struct sockaddr *)&a, sizeof a);
	getsockname(fd, (struct sockaddr *)&a, &l);
	p = ntohs(a.sin_port);
	close(fd);
	return p;
}

/* Starts redis-server on 127.0.0.1:port, without persistence, and waits (up to 2 s) until it
 * answers a PING. Its pid (stop it with rlt_test_redis_stop), or -1 when it did not answer. */
static inline pid_t rlt_test_redis_start(int port)
{
	char p[16];
	struct rlt_error err;
	pid_t srv;

	snprintf(p, sizeof p, "%d", port);
	fflush(stdout);
	srv = fork();
	if (srv == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		execlp("redis-server", "redis-server", "--port", p, "--bind", "127.0.0.1", "--save",
		       "", "--appendonly", "no", "--daemonize", "no", (char *)NULL);
		_exit(127);
	}
	if (srv < 0)
		return -1;
	for (int i = 0; i < 200; i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		if (rlt__redis_ping("127.0.0.1", (uint16_t)port, NULL, NULL, 100, &err) == 0)
			return srv;
		nanosleep(&ts, NULL);
	}
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	return -1;
}

static inline void rlt_test_redis_stop(pid_t srv)
{
	if (srv > 0) {
		kill(srv, SIGKILL);
		waitpid(srv, NULL, 0);
	}
}

#endif
