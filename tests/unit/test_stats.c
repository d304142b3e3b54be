/* test_stats.c: src/stats.c: the RLT_STATS summary of rlthrottle(7) STATISTICS, to the byte: its fields in
 * order, strings quoted so that the JSON stays valid, a summary larger than the writer's buffer,
 * a write that is short, interrupted or failing, and where the summary goes (stderr, a path
 * with %p, a path it cannot write). The rulesets are filled by hand: only the writer is tested. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "stats.h"

static struct rlt__ruleset rs;

/* What the fake write saw, and how it behaves. */
static struct {
	char buf[1 << 20];
	size_t len;
	int fd;        /* the fd of the last write */
	int calls;
	size_t chunk;  /* takes at most this many bytes a call (0: all) */
	int eintr;     /* fail this many calls with EINTR first */
	int fail_at;   /* from this call on (1-based), fail with fail_errno (0: never) */
	int fail_errno; /* 0: return 0 (nothing written, no error) */
	int closed;    /* the fd the fake close was given (-1: none) */
} w;

static ssize_t fake_write(int fd, const void *p, size_t n)
{
	w.calls++;
	w.fd = fd;
	if (w.eintr > 0) {
		w.eintr--;
		errno = EINTR;
		return -1;
	}
	if (w.fail_at && w.calls >= w.fail_at) {
		if (!w.fail_errno)
			return 0;
		errno = w.fail_errno;
		return -1;
	}
	if (w.chunk && n > w.chunk)
		n = w.chunk;
	assert_true(w.len + n <= sizeof w.buf);
	memcpy(w.buf + w.len, p, n);
	w.len += n;
	return (ssize_t)n;
}

static int fake_close(int fd)
{
	w.closed = fd;
	return close(fd);
}

static int reset(void **s)
{
	(void)s;
	memset(&rs, 0, sizeof rs);
	memset(&w, 0, sizeof w);
	w.closed = -1;
	return 0;
}

static struct rlt__rt_rule *add(enum rlt_var v, const char *text)
{
	struct rlt__rt_rule *r = &rs.rules[v][rs.n[v]++];
	snprintf(r->rule.text, sizeof r->rule.text, "%s", text);
	r->rule.var = v;
	r->st = &r->own;
	return r;
}

static void would(struct rlt__rt_rule *r, uint64_t delay, uint64_t total, uint64_t max,
                  uint64_t reject)
{
	atomic_store(&r->st->would_delay, delay);
	atomic_store(&r->st->would_delay_ns_total, total);
	atomic_store(&r->st->would_delay_ns_max, max);
	atomic_store(&r->st->would_reject, reject);
}

static void counters(struct rlt__rt_rule *r, uint64_t calls, uint64_t allowed, uint64_t delayed,
                     uint64_t rejected, uint64_t units, uint64_t total, uint64_t max)
{
	atomic_store(&r->st->calls, calls);
	atomic_store(&r->st->allowed, allowed);
	atomic_store(&r->st->delayed, delayed);
	atomic_store(&r->st->rejected, rejected);
	atomic_store(&r->st->units, units);
	atomic_store(&r->st->delay_ns_total, total);
	atomic_store(&r->st->delay_ns_max, max);
}

static void assert_written(const char *want)
{
	w.buf[w.len] = '\0';
	assert_string_equal(w.buf, want);
}

static void no_rules(void **s)
{
	(void)s;
	assert_int_equal(rlt__stats_write(&rs, fake_write, 5, 42, 0), 0);
	assert_written("{\"schema\":2,\"pid\":42,\"elapsed_ns\":0,\"rules\":[]}\n");
	assert_int_equal(w.fd, 5);
}

#define W0 "\"would_delay\":0,\"would_delay_ns_total\":0,\"would_delay_ns_max\":0,\"would_reject\":0"

/* Every field of rlthrottle(7) STATISTICS, in variable order then rule order (each numbered from 1 in its
 * variable), numbers in full, on one line (JSON Lines), written in one call; a dry-run
 * rule's figures under would_* only. */
static void every_field_in_order(void **s)
{
	(void)s;
	/* added out of variable order: the summary goes by variable */
	counters(add(RLT_VAR_RECV, "1MiB/s"), 3, 2, 1, 1, 4096, 250, 200);
	counters(add(RLT_VAR_CONNECT, "10/s"), 0, 0, 0, 0, 0, 0, 0);
	counters(add(RLT_VAR_CONNECT, "1/min action=reject"), 7, 6, 0, 1, 6, 0, 0);
	counters(add(RLT_VAR_CONNS, "50"), UINT64_MAX, 18446744073709551614ull, 10, 9, 1, 2, 3);
	struct rlt__rt_rule *dry = add(RLT_VAR_SEND, "1kB/s action=dry-run");
	counters(dry, 5, 5, 0, 0, 9000, 0, 0);
	would(dry, 4, 8000000000ull, 3000000000ull, 2);
	assert_int_equal(rlt__stats_write(&rs, fake_write, 1, 2147483647, 1234567890123ull), 0);
	assert_written(
		"{\"schema\":2,\"pid\":2147483647,\"elapsed_ns\":1234567890123,\"rules\":["
		"{\"variable\":\"RLT_CONNECT\",\"index\":1,\"rule\":\"10/s\",\"calls\":0,"
		"\"allowed\":0,\"delayed\":0,\"rejected\":0,\"units\":0,\"delay_ns_total\":0,"
		"\"delay_ns_max\":0," W0 "},"
		"{\"variable\":\"RLT_CONNECT\",\"index\":2,\"rule\":\"1/min action=reject\","
		"\"calls\":7,\"allowed\":6,\"delayed\":0,\"rejected\":1,\"units\":6,"
		"\"delay_ns_total\":0,\"delay_ns_max\":0," W0 "},"
		"{\"variable\":\"RLT_SEND\",\"index\":1,\"rule\":\"1kB/s action=dry-run\","
		"\"calls\":5,\"allowed\":5,\"delayed\":0,\"rejected\":0,\"units\":9000,"
		"\"delay_ns_total\":0,\"delay_ns_max\":0,\"would_delay\":4,"
		"\"would_delay_ns_total\":8000000000,\"would_delay_ns_max\":3000000000,"
		"\"would_reject\":2},"
		"{\"variable\":\"RLT_RECV\",\"index\":1,\"rule\":\"1MiB/s\",\"calls\":3,"
		"\"allowed\":2,\"delayed\":1,\"rejected\":1,\"units\":4096,\"delay_ns_total\":250,"
		"\"delay_ns_max\":200," W0 "},"
		"{\"variable\":\"RLT_CONNS\",\"index\":1,\"rule\":\"50\","
		"\"calls\":18446744073709551615,\"allowed\":18446744073709551614,\"delayed\":10,"
		"\"rejected\":9,\"units\":1,\"delay_ns_total\":2,\"delay_ns_max\":3," W0 "}"
		"]}\n");
	assert_int_equal(w.calls, 1);
}

/* A quote or a backslash is escaped and a control character left out: the string stays one
 * valid JSON string whatever the rule's text holds. */
static void strings_stay_valid_json(void **s)
{
	(void)s;
	add(RLT_VAR_SEND, "1B/s \"q\" \\d\x01\n\t.");
	assert_int_equal(rlt__stats_write(&rs, fake_write, 1, 1, 1), 0);
	assert_non_null(strstr(w.buf, ",\"rule\":\"1B/s \\\"q\\\" \\\\d.\",\"calls\":0,"));
	/* no raw control character anywhere but the line's end */
	for (size_t i = 0; i < w.len; i++)
		assert_true((unsigned char)w.buf[i] >= 0x20 || i == w.len - 1);
}

/* A summary many times the writer's 4 KiB buffer comes out whole and in order. */
static void larger_than_the_buffer(void **s)
{
	static char want[1 << 20], text[RLT_RULE_TEXT_MAX + 1];
	size_t n = 0;
	(void)s;
	n += (size_t)sprintf(want + n, "{\"schema\":2,\"pid\":9,\"elapsed_ns\":8,\"rules\":[");
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (int i = 0; i < RLT_MAX_RULES_PER_VAR; i++) {
			memset(text, 'a' + (v * RLT_MAX_RULES_PER_VAR + i) % 26, RLT_RULE_TEXT_MAX);
			text[RLT_RULE_TEXT_MAX] = '\0';
			counters(add((enum rlt_var)v, text), (uint64_t)i, 1, 2, 3, 4, 5, (uint64_t)v);
			n += (size_t)sprintf(want + n,
			                     "%s{\"variable\":\"%s\",\"index\":%d,\"rule\":\"%s\","
			                     "\"calls\":%d,\"allowed\":1,\"delayed\":2,\"rejected\":3,"
			                     "\"units\":4,\"delay_ns_total\":5,\"delay_ns_max\":%d," W0 "}",
			                     v + i ? "," : "", rlt_var_name((enum rlt_var)v), i + 1, text,
			                     i, v);
		}
	n += (size_t)sprintf(want + n, "]}\n");
	assert_true(n > 10 * 4096);
	assert_int_equal(rlt__stats_write(&rs, fake_write, 1, 9, 8), 0);
	assert_written(want);
	/* one write: processes appending to one file never interleave their lines */
	assert_int_equal(w.calls, 1);

	/* the same through a writer that takes 1000 bytes at a time and is interrupted at first */
	memset(&w, 0, sizeof w);
	w.chunk = 1000;
	w.eintr = 3;
	assert_int_equal(rlt__stats_write(&rs, fake_write, 1, 9, 8), 0);
	assert_written(want);
	/* and one byte at a time */
	memset(&w, 0, sizeof w);
	w.chunk = 1;
	assert_int_equal(rlt__stats_write(&rs, fake_write, 1, 9, 8), 0);
	assert_written(want);
	assert_int_equal(w.calls, (int)n);
}

static void a_failing_write(void **s)
{
	(void)s;
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (int i = 0; i < RLT_MAX_RULES_PER_VAR; i++)
			add((enum rlt_var)v, "1000000000000000000000000000000000000000000B/s");
	/* an error is returned as -errno, and the writer stops at once (the first write takes
	 * only part of the line here) */
	w.chunk = 1000;
	w.fail_at = 2;
	w.fail_errno = ENOSPC;
	assert_int_equal(rlt__stats_write(&rs, fake_write, 1, 1, 1), -ENOSPC);
	assert_int_equal(w.calls, 2);
	/* a write that moves nothing and says nothing is an I/O error, not a loop */
	memset(&w, 0, sizeof w);
	w.fail_at = 1;
	assert_int_equal(rlt__stats_write(&rs, fake_write, 1, 1, 1), -EIO);
	assert_int_equal(w.calls, 1);
	/* a failure on the last piece is still seen */
	memset(&w, 0, sizeof w);
	rs.n[RLT_VAR_SEND] = 0;
	rs.n[RLT_VAR_RECV] = 0;
	rs.n[RLT_VAR_CONNS] = 0;
	rs.n[RLT_VAR_ACCEPT] = 0;
	rs.n[RLT_VAR_CONNECT] = 1;
	w.fail_at = 1;
	w.fail_errno = EBADF;
	assert_int_equal(rlt__stats_write(&rs, fake_write, 1, 1, 1), -EBADF);
}

static void path_templates(void **s)
{
	char p[64];
	(void)s;
	assert_int_equal(rlt__stats_path("/tmp/s.%p.json", 1234, p, sizeof p), 0);
	assert_string_equal(p, "/tmp/s.1234.json");
	assert_int_equal(rlt__stats_path("%p-%p", 0, p, sizeof p), 0);
	assert_string_equal(p, "0-0");
	assert_int_equal(rlt__stats_path("a%%p%p", 7, p, sizeof p), 0);
	assert_string_equal(p, "a%p7");
	/* other % sequences and a trailing % are kept as they are */
	assert_int_equal(rlt__stats_path("%d%s%", 7, p, sizeof p), 0);
	assert_string_equal(p, "%d%s%");
	assert_int_equal(rlt__stats_path("", 7, p, sizeof p), 0);
	assert_string_equal(p, "");
	/* the result and its NUL must fit: 8 bytes hold "x.12345", not "x.123456" */
	assert_int_equal(rlt__stats_path("x.%p", 12345, p, 8), 0);
	assert_string_equal(p, "x.12345");
	assert_int_equal(rlt__stats_path("x.%p", 123456, p, 8), -ENAMETOOLONG);
	assert_int_equal(rlt__stats_path("abcdefgh", 1, p, 8), -ENAMETOOLONG);
	assert_int_equal(rlt__stats_path("x.%p", 2147483647, p, 13), 0);
	assert_string_equal(p, "x.2147483647");
}

static void to_stderr(void **s)
{
	struct rlt_error err = {""};
	(void)s;
	add(RLT_VAR_ACCEPT, "5/s");
	assert_int_equal(rlt__stats_to("stderr", &rs, fake_write, fake_close, 77, 5, &err), 0);
	assert_int_equal(w.fd, 2);
	assert_int_equal(w.closed, -1); /* stderr is not the summary's to close */
	assert_non_null(strstr(w.buf, "{\"schema\":2,\"pid\":77,\"elapsed_ns\":5,"));
	assert_non_null(strstr(w.buf, "\"variable\":\"RLT_ACCEPT\",\"index\":1,\"rule\":\"5/s\""));
}

static void to_a_path(void **s)
{
	char dir[] = "/tmp/rlt-test-stats-XXXXXX", tmpl[128], path[128], got[4096];
	struct rlt_error err = {""};
	(void)s;
	assert_non_null(mkdtemp(dir));
	add(RLT_VAR_SEND, "10B/s");
	snprintf(tmpl, sizeof tmpl, "%s/s.%%p.json", dir);
	snprintf(path, sizeof path, "%s/s.4321.json", dir);
	/* an existing file is appended to (JSON Lines: one process's line after another's) */
	int fd = open(path, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	static const char before[] = "{\"pid\":1}\n";
	assert_int_equal(write(fd, before, sizeof before - 1), (ssize_t)sizeof before - 1);
	close(fd);
	assert_int_equal(rlt__stats_to(tmpl, &rs, write, fake_close, 4321, 6, &err), 0);
	assert_true(w.closed > 2);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	ssize_t n = read(fd, got, sizeof got - 1);
	close(fd);
	assert_true(n > 0);
	got[n] = '\0';
	assert_string_equal(got, "{\"pid\":1}\n"
	                         "{\"schema\":2,\"pid\":4321,\"elapsed_ns\":6,\"rules\":["
	                         "{\"variable\":\"RLT_SEND\",\"index\":1,\"rule\":\"10B/s\","
	                         "\"calls\":0,\"allowed\":0,\"delayed\":0,\"rejected\":0,"
	                         "\"units\":0,\"delay_ns_total\":0,\"delay_ns_max\":0," W0 "}]}\n");
	unlink(path);

	/* a symbolic link planted at the path is not followed: refused, its target untouched */
	char target[160];
	snprintf(target, sizeof target, "%s/target", dir);
	fd = open(target, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(symlink(target, path), 0);
	w.closed = -1;
	assert_int_equal(rlt__stats_to(tmpl, &rs, write, fake_close, 4321, 6, &err), -ELOOP);
	assert_non_null(strstr(err.msg, "symbolic link"));
	struct stat st;
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_size, 0);
	unlink(path);
	unlink(target);

	/* a FIFO nobody reads: refused at once, not waited on */
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(rlt__stats_to(tmpl, &rs, write, fake_close, 4321, 6, &err), -ENXIO);
	assert_non_null(strstr(err.msg, "FIFO"));
	/* and one whose reader never drains it: the summary stops at a full pipe (EAGAIN) */
	int rd = open(path, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	assert_true(fcntl(rd, F_SETPIPE_SZ, 4096) >= 4096);
	for (int k = 1; k < RLT_MAX_RULES_PER_VAR; k++) /* more than the pipe's 4 KiB */
		add(RLT_VAR_SEND, "1B/s aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		                  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		                  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	int rc = rlt__stats_to(tmpl, &rs, write, fake_close, 4321, 6, &err);
	assert_int_equal(rc, -EAGAIN);
	close(rd);
	unlink(path);
	rmdir(dir);
}

static void where_it_cannot_write(void **s)
{
	struct rlt_error err = {""};
	char longp[1200];
	(void)s;
	assert_int_equal(rlt__stats_to("/nonexistent-rlt-dir/s.%p.json", &rs, fake_write, fake_close,
	                               12, 0, &err),
	                 -ENOENT);
	assert_string_equal(err.msg, "RLT_STATS: cannot write /nonexistent-rlt-dir/s.12.json");
	assert_int_equal(w.calls, 0);
	assert_int_equal(w.closed, -1);

	memset(longp, 'l', sizeof longp - 1);
	longp[0] = '/';
	longp[sizeof longp - 1] = '\0';
	assert_int_equal(rlt__stats_to(longp, &rs, fake_write, fake_close, 12, 0, &err),
	                 -ENAMETOOLONG);
	assert_string_equal(err.msg, "RLT_STATS: the path is too long");

	/* a write that fails: said so, and the file is still closed */
	char path[] = "/tmp/rlt-test-stats-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	w.fail_at = 1;
	w.fail_errno = EDQUOT;
	assert_int_equal(rlt__stats_to(path, &rs, fake_write, fake_close, 12, 0, &err), -EDQUOT);
	assert_string_equal(err.msg, "RLT_STATS: writing the summary failed");
	assert_true(w.closed > 2);
	assert_int_equal(w.fd, w.closed);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(no_rules, reset),
		cmocka_unit_test_setup(every_field_in_order, reset),
		cmocka_unit_test_setup(strings_stay_valid_json, reset),
		cmocka_unit_test_setup(larger_than_the_buffer, reset),
		cmocka_unit_test_setup(a_failing_write, reset),
		cmocka_unit_test_setup(path_templates, reset),
		cmocka_unit_test_setup(to_stderr, reset),
		cmocka_unit_test_setup(to_a_path, reset),
		cmocka_unit_test_setup(where_it_cannot_write, reset),
	};
	/* a writer that loops is a failure, not a hang: SIGALRM ends the run */
	alarm(30);
	return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
