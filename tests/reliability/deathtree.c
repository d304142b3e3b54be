/*
 * deathtree: a process tree that keeps writing, for the supervisor's death (issue 9).
 *
 *   deathtree MAPFILE OUTFILE [SECONDS]
 *
 * The command forks a child, the child forks a grandchild; all three loop writing one line to
 * OUTFILE (O_APPEND) and one byte into a pipe the command drains, every millisecond, for at
 * most SECONDS (default 20). What happens is kept where no notified call is needed to say it:
 * MAPFILE is a shared mapping of struct tree (mmap and stores are not notified), so the test
 * can read the pids and how many writes succeeded or failed, and with which errno, even when
 * every write fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

struct tree {
	_Atomic int32_t pid[3];      /* command, child, grandchild */
	_Atomic uint32_t ok[3];      /* writes that succeeded */
	_Atomic uint32_t enosys[3];  /* writes that failed with ENOSYS */
	_Atomic uint32_t other[3];   /* writes that failed otherwise */
	_Atomic int32_t last_err[3]; /* the errno of the last failure */
};

static void count(struct tree *t, int who, ssize_t r)
{
	if (r >= 0 || errno == EAGAIN) { /* EAGAIN: the drain found the pipe empty */
		atomic_fetch_add(&t->ok[who], 1);
		return;
	}
	atomic_store(&t->last_err[who], errno);
	atomic_fetch_add(errno == ENOSYS ? &t->enosys[who] : &t->other[who], 1);
}

static void loop(struct tree *t, int who, int out, int pfd, int drain, uint64_t until)
{
	char line[64], buf[256];
	struct timespec ms = {0, 1000000};
	int n = snprintf(line, sizeof line, "%d %d\n", who, (int)getpid());

	atomic_store(&t->pid[who], (int32_t)getpid());
	while (now_ns() < until) {
		count(t, who, write(out, line, (size_t)n));
		count(t, who, drain ? read(pfd, buf, sizeof buf) : write(pfd, "x", 1));
		nanosleep(&ms, NULL);
	}
}

int main(int argc, char **argv)
{
	struct tree *t;
	int mfd, out, p[2];
	uint64_t until;

	if (argc < 3) {
		fprintf(stderr, "usage: deathtree MAPFILE OUTFILE [SECONDS]\n");
		return 2;
	}
	until = now_ns() + (uint64_t)(argc > 3 ? atoi(argv[3]) : 20) * 1000000000u;
	mfd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (mfd < 0 || ftruncate(mfd, sizeof *t) != 0)
		return 2;
	t = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	out = open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0600);
	if (t == MAP_FAILED || out < 0 || pipe(p) != 0)
		return 2;
	/* the drain must not block on an empty pipe: it is the writers that matter */
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	switch (fork()) {
	case -1:
		return 2;
	case 0:
		switch (fork()) {
		case -1:
			_exit(2);
		case 0:
			loop(t, 2, out, p[1], 0, until);
			_exit(0);
		}
		loop(t, 1, out, p[1], 0, until);
		_exit(0);
	}
	/* The pipe may fill when the drain is slow: the writers then get EAGAIN-free blocking
	 * writes of one byte, which is fine; O_NONBLOCK is on the read end only. */
	loop(t, 0, out, p[0], 1, until);
	return 0;
}
