/* test_scope_command.c: src/scope_command.c, one budget for the launcher's command: which rules
 * become the command's (not one naming a scope, not a keyed RLT_CONNS), their names; two rule
 * sets of one command share one state and a set naming no scope sets it; no command segment,
 * no sharing; the counters of processes added into the command's (all or nothing); the
 * clean-up of NAME and NAME.*; the name's parse. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "testutil.h"
#include "clock.h"
#include "policy.h"
#include "rule_set.h"
#include "ruleset_env.h"
#include "scope_command.h"
#include "scope_shm.h"

static char name[RLT_CMD_NAME_MAX + 1];
static struct rlt__ruleset a, b, texts, sums; /* large */

static void quiet(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void quiet(int level, const char *fmt, ...)
{
	(void)level;
	(void)fmt;
}

static int setup(void **s)
{
	static int n;
	(void)s;
	snprintf(name, sizeof name, "cmd-%d-%d", (int)getpid(), 900000 + n++);
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	memset(&texts, 0, sizeof texts);
	memset(&sums, 0, sizeof sums);
	return 0;
}

static int teardown(void **s)
{
	(void)s;
	rlt__cmd_remove(name);
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		unsetenv(rlt_var_name((enum rlt_var)v));
	return 0;
}

static struct rlt_rule parse(enum rlt_var v, const char *text)
{
	struct rlt_rule r;
	struct rlt_error err;
	size_t n = 0;

	if (rlt_rules_parse(v, text, &r, 1, &n, &err) != 0 || n != 1)
		fail_msg("parse %s: %s", text, err.msg);
	return r;
}

static void which_rules_and_their_names(void **s)
{
	struct rlt_rule r = parse(RLT_VAR_RECV, "1MiB/s"), same = r;
	(void)s;
	assert_int_equal(rlt__cmd_rule(name, &r, 2), 1);
	assert_int_equal(r.scope, RLT_SCOPE_SHARED);
	char want[RLT_NAME_MAX + 1];
	snprintf(want, sizeof want, "%s.recv.2.", name);
	assert_memory_equal(r.scope_name, want, strlen(want));
	assert_int_equal(strlen(r.scope_name), strlen(want) + 8);
	assert_true(rlt__shm_name_ok(r.scope_name));
	/* the same rule, the same name; another text, another name */
	rlt__cmd_rule(name, &same, 2);
	assert_string_equal(same.scope_name, r.scope_name);
	struct rlt_rule other = parse(RLT_VAR_RECV, "2MiB/s");
	rlt__cmd_rule(name, &other, 2);
	assert_string_not_equal(other.scope_name, r.scope_name);
	/* a scope named, even process, is kept; a keyed RLT_CONNS counts per process */
	struct rlt_rule own = parse(RLT_VAR_RECV, "1MiB/s scope=process");
	assert_int_equal(rlt__cmd_rule(name, &own, 0), 0);
	assert_int_equal(own.scope, RLT_SCOPE_PROCESS);
	struct rlt_rule web = parse(RLT_VAR_SEND, "1MiB/s scope=shared:web");
	assert_int_equal(rlt__cmd_rule(name, &web, 0), 0);
	assert_string_equal(web.scope_name, "web");
	struct rlt_rule kc = parse(RLT_VAR_CONNS, "4 key=peer");
	assert_int_equal(rlt__cmd_rule(name, &kc, 0), 0);
	struct rlt_rule c = parse(RLT_VAR_CONNS, "4");
	assert_int_equal(rlt__cmd_rule(name, &c, 0), 1);
	/* a NAME with a '.' would make NAME.* ambiguous */
	assert_false(rlt__cmd_name_ok("a.b"));
	assert_false(rlt__cmd_name_ok(""));
	assert_true(rlt__cmd_name_ok("cmd-1-2"));
}

/* Two processes' rule sets built from one environment under the command: one budget. */
static void one_budget_for_the_command(void **s)
{
	struct rlt__settings set = {.loglevel = RLT_LOG_WARN, .inherit = 1};
	struct rlt_error err = {{0}};
	struct rlt__cmd_seg *seg;
	(void)s;
	setenv("RLT_RECV", "1000B/s burst=1000B", 1);
	setenv("RLT_CONNS", "1", 1);
	strcpy(set.command, name);
	/* no command segment: no sharing (the command ended, or never was) */
	assert_int_equal(rlt__ruleset_from_env(&a, &set, quiet, &err), 0);
	assert_int_equal(a.rules[RLT_VAR_RECV][0].rule.scope, RLT_SCOPE_PROCESS);
	memset(&a, 0, sizeof a);

	texts.n[RLT_VAR_RECV] = 1;
	strcpy(texts.rules[RLT_VAR_RECV][0].rule.text, "1000B/s burst=1000B");
	texts.n[RLT_VAR_CONNS] = 1;
	strcpy(texts.rules[RLT_VAR_CONNS][0].rule.text, "1");
	seg = rlt__cmd_create(name, &texts, getpid(), 1, &err);
	assert_non_null(seg);
	assert_int_equal(rlt__ruleset_from_env(&a, &set, quiet, &err), 0);
	assert_int_equal(rlt__ruleset_from_env(&b, &set, quiet, &err), 0);
	struct rlt__rt_rule *ra = &a.rules[RLT_VAR_RECV][0], *rb = &b.rules[RLT_VAR_RECV][0];
	assert_int_equal(ra->rule.scope, RLT_SCOPE_SHARED);
	assert_string_equal(ra->rule.scope_name, rb->rule.scope_name);
	rlt_ns_t now = rlt__now();
	/* a takes the whole burst: b has nothing left now */
	rlt_ns_t at;
	assert_int_equal(rlt_decide(&ra->v0.params, ra->v0.state, now, 1000, RLT_MODE_NOW, &at),
	                 RLT_GO);
	assert_int_equal(rlt_decide(&rb->v0.params, rb->v0.state, now, 1000, RLT_MODE_NOW, &at),
	                 RLT_DENY);
	/* the RLT_CONNS count is the segment's: one counter for both */
	assert_ptr_not_equal(a.rules[RLT_VAR_CONNS][0].shared_open, NULL);

	/* a set naming no scope, made in one process, is the command's */
	unsigned which;
	assert_int_equal(rlt__rule_set_text(&a, RLT_VAR_RECV, 0, "2000B/s burst=1000B", now,
	                                    &which, &err), 0);
	assert_int_not_equal(atomic_load(&rlt__shm_hdr_of(rb->v0.state)->set_gen), 0);

	/* the counters: both added, one line's worth */
	a.rules[RLT_VAR_RECV][0].own.units = 300;
	b.rules[RLT_VAR_RECV][0].own.units = 200;
	assert_int_equal(rlt__cmd_add(name, &a), 0);
	assert_int_equal(rlt__cmd_add(name, &b), 0);
	rlt__cmd_ruleset(seg, &sums);
	assert_int_equal(sums.n[RLT_VAR_RECV], 1);
	assert_int_equal(atomic_load(&sums.rules[RLT_VAR_RECV][0].st->units), 500);
	assert_int_equal(atomic_load(&seg->processes), 2);
	/* a process with a rule the command has not: its own line, nothing added */
	strcpy(b.rules[RLT_VAR_RECV][0].rule.text, "9B/s");
	assert_int_equal(rlt__cmd_add(name, &b), -1);
	assert_int_equal(atomic_load(&sums.rules[RLT_VAR_RECV][0].st->units), 500);
	munmap(seg, sizeof *seg);

	/* the clean-up: the command's and its rules' segments */
	assert_true(rlt__cmd_remove(name) >= 3);
	assert_false(rlt__cmd_alive(name));
	assert_int_equal(rlt__cmd_add(name, &a), -1);
}

static void the_name(void **s)
{
	pid_t pid;
	uint64_t start;
	(void)s;
	assert_true(rlt__cmd_parse("cmd-42-12345", &pid, &start));
	assert_int_equal(pid, 42);
	assert_int_equal(start, 12345);
	assert_false(rlt__cmd_parse("cmd-42-12345.recv.0.01234567", &pid, &start));
	assert_false(rlt__cmd_parse("cmd-42", &pid, &start));
	assert_false(rlt__cmd_parse("web", &pid, &start));
	assert_false(rlt__cmd_parse("cmd-0-1", &pid, &start));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(which_rules_and_their_names, setup, teardown),
		cmocka_unit_test_setup_teardown(one_budget_for_the_command, setup, teardown),
		cmocka_unit_test_setup_teardown(the_name, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
