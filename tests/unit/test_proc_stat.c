/* test_proc_stat.c: src/proc_stat.c, the one reader of /proc/PID/stat (RLT_CONNS holders, a
 * keyed table's lock holders): state, parent and start time, whatever the process's name holds. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "proc_stat.h"

/* The start time as /proc/self/stat's field 22 has it, counted here by another method: the
 * fields after the last ')' split on spaces. */
static unsigned long long field22(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *save, *tok = strtok_r(strrchr(buf, ')') + 2, " ", &save);
	for (int field = 3; field < 22; field++)
		tok = strtok_r(NULL, " ", &save);
	return strtoull(tok, NULL, 10);
}

static void self(void **state)
{
	struct rlt__proc_stat ps;
	(void)state;
	assert_int_equal(rlt__proc_stat(getpid(), &ps), 0);
	assert_int_equal(ps.state, 'R');
	assert_int_equal(ps.ppid, getppid());
	assert_true(ps.start > 0);
	assert_int_equal(ps.start, field22(getpid()));
}

/* A name with spaces and parentheses, a stopped child, then a zombie, then nobody. */
static void a_child_with_an_awkward_name(void **state)
{
	struct rlt__proc_stat ps;
	int fds[2];
	char c;
	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_NAME, "a) S 1 (b) 9", 0, 0, 0);
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(fds[0], &c, 1), 1);
	assert_int_equal(rlt__proc_stat(pid, &ps), 0);
	assert_int_equal(ps.ppid, getpid());
	assert_int_equal(ps.start, field22(pid));
	assert_true(ps.state == 'S' || ps.state == 'R');
	uint64_t start = ps.start;
	kill(pid, SIGSTOP);
	for (int i = 0; i < 200 && (rlt__proc_stat(pid, &ps) != 0 || ps.state != 'T'); i++)
		usleep(5000);
	assert_int_equal(ps.state, 'T');
	kill(pid, SIGKILL);
	for (int i = 0; i < 200 && (rlt__proc_stat(pid, &ps) != 0 || ps.state != 'Z'); i++)
		usleep(5000);
	assert_int_equal(ps.state, 'Z');
	assert_int_equal(ps.start, start);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(rlt__proc_stat(pid, &ps), -1);
	assert_int_equal(rlt__proc_stat(0, &ps), -1);
	assert_int_equal(rlt__proc_stat(-1, &ps), -1);
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(self),
		cmocka_unit_test(a_child_with_an_awkward_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
