/* test_scope_shm.c: scope=shared:NAME segments: create and join, params that differ, segments
 * others could write, stale segments of dead creators, creation races, RLT_CONNS counters. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conns.h"
#include "keytab_key.h"
#include "testutil.h"
#include "clock.h"
#include "keytab.h"
#include "policy.h"
#include "scope_shm.h"

static char name[64];
static char seg_path[128]; /* the segment of name, as shm_open names it */

static int setup(void **s)
{
	static int n;
	(void)s;
	snprintf(name, sizeof name, "ut-%d-%d", (int)getpid(), n++);
	snprintf(seg_path, sizeof seg_path, "/" RLT_SHM_PREFIX "%s", name);
	return 0;
}

static int teardown(void **s)
{
	struct rlt_error err;
	(void)s;
	rlt__shm_remove(name, &err);
	return 0;
}

static struct rlt_rule rule_of(enum rlt_var v, const char *fmt)
{
	char text[300];
	struct rlt_rule r;
	struct rlt_error err;
	size_t n = 0;

	snprintf(text, sizeof text, fmt, name);
	if (rlt_rules_parse(v, text, &r, 1, &n, &err) != 0)
		fail_msg("parse %s: %s", text, err.msg);
	return r;
}

/* Plants the segment of this test's scope by hand, as a creator that stopped early would leave
 * it: mode MODE, SIZE bytes. Returns its fd. */
static int plant(mode_t mode, off_t size)
{
	int fd = shm_open(seg_path, O_CREAT | O_EXCL | O_RDWR, 0600);

	assert_true(fd >= 0);
	if (mode != 0600)
		assert_int_equal(fchmod(fd, mode), 0);
	if (size)
		assert_int_equal(ftruncate(fd, size), 0);
	return fd;
}

static int attach(const struct rlt_rule *r, void **state, _Atomic uint32_t **open,
                  struct rlt_error *err)
{
	struct rlt__shm_holder *holders;
	return rlt__shm_attach(r, state, open, &holders, err);
}

/* Two attachments of one scope are one budget. */
static void join_shares_the_state(void **s)
{
	struct rlt_rule r = rule_of(RLT_VAR_CONNECT, "1/h burst=10 scope=shared:%s");
	void *a, *b;
	_Atomic uint32_t *oa, *ob;
	struct rlt_error err;
	rlt_ns_t now = rlt__now(), at;
	int go = 0;
	(void)s;

	assert_int_equal(attach(&r, &a, &oa, &err), 0);
	assert_int_equal(attach(&r, &b, &ob, &err), 0);
	assert_ptr_not_equal(a, b); /* two mappings ... */
	for (int i = 0; i < 8; i++)
		go += rlt_decide(&r.params, a, now, 1, RLT_MODE_NOW, &at) == RLT_GO;
	for (int i = 0; i < 8; i++)
		go += rlt_decide(&r.params, b, now, 1, RLT_MODE_NOW, &at) == RLT_GO;
	assert_int_equal(go, 10); /* ... of one bucket */
}

static void every_algo_in_a_segment(void **s)
{
	static const char *const rules[] = {
		"100/10s algo=token burst=20 scope=shared:%s",
		"100/10s algo=leaky burst=20 scope=shared:%s",
		"20/10s algo=fixed-window scope=shared:%s",
		"20/10s algo=sliding-window scope=shared:%s",
		"20/10s algo=sliding-log scope=shared:%s",
	};
	(void)s;
	for (size_t k = 0; k < sizeof rules / sizeof rules[0]; k++) {
		struct rlt_rule r = rule_of(RLT_VAR_CONNECT, rules[k]);
		void *a, *b;
		_Atomic uint32_t *o;
		struct rlt_error err;
		rlt_ns_t now = rlt__now(), at;
		int go = 0;

		assert_int_equal(attach(&r, &a, &o, &err), 0);
		assert_int_equal(attach(&r, &b, &o, &err), 0);
		for (int i = 0; i < 30; i++)
			go += rlt_decide(&r.params, i % 2 ? a : b, now, 1, RLT_MODE_NOW, &at) == RLT_GO;
		/* leaky passes one at a time when nothing waits: at one instant, one call */
		assert_int_equal(go, r.params.algo == RLT_ALGO_LEAKY ? 1 : 20);
		teardown(NULL);
		setup(NULL);
	}
}

static void different_params_are_refused(void **s)
{
	struct rlt_rule r1 = rule_of(RLT_VAR_SEND, "1MiB/s scope=shared:%s");
	struct rlt_rule r2 = rule_of(RLT_VAR_SEND, "2MiB/s burst=1000B scope=shared:%s");
	struct rlt_rule r3 = rule_of(RLT_VAR_SEND, "1000msg/s scope=shared:%s");
	struct rlt_rule r4 = rule_of(RLT_VAR_RECV, "1MiB/s scope=shared:%s");
	void *a;
	_Atomic uint32_t *o;
	struct rlt_error err;
	(void)s;

	assert_int_equal(attach(&r1, &a, &o, &err), 0);
	assert_int_equal(attach(&r2, &a, &o, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "RLT_SEND=\"2MiB/s burst=1000B"));
	assert_non_null(strstr(err.msg, "rate 1048576/s there, 2097152/s here"));
	assert_non_null(strstr(err.msg, "burst 1048576 there, 1000 here"));
	assert_non_null(strstr(err.msg, "first process"));
	assert_int_equal(attach(&r3, &a, &o, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "counts bytes there, messages here"));
	/* the same params from another variable share the budget (documented) */
	assert_int_equal(attach(&r4, &a, &o, &err), 0);
}

static void writable_by_others_is_refused(void **s)
{
	struct rlt_rule r = rule_of(RLT_VAR_CONNECT, "10/s scope=shared:%s");
	void *a;
	_Atomic uint32_t *o;
	struct rlt_error err;
	(void)s;

	close(plant(0666, 4096));
	assert_int_equal(attach(&r, &a, &o, &err), -EPERM);
	assert_non_null(strstr(err.msg, "writable by others (mode 0666)"));
}

/* A creator that died after sizing the segment, before ready: its pid is gone. */
static void stale_dead_creator_is_recreated(void **s)
{
	struct rlt_rule r = rule_of(RLT_VAR_CONNECT, "1/h burst=3 scope=shared:%s");
	struct rlt__shm_hdr *h;
	void *a;
	_Atomic uint32_t *o;
	struct rlt_error err;
	pid_t dead = fork();
	int fd;
	(void)s;

	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	fd = plant(0600, 4096);
	h = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	h->creator = dead;
	munmap(h, 4096);
	close(fd);
	rlt_ns_t t0 = rlt__now();
	assert_int_equal(attach(&r, &a, &o, &err), 0);
	assert_true(rlt__now() - t0 < 500 * 1000 * 1000ull); /* a dead pid is not waited for */
	h = (struct rlt__shm_hdr *)((char *)a - ((sizeof(*h) + 63) & ~(size_t)63));
	assert_int_equal(h->creator, getpid());
	assert_int_equal(atomic_load(&h->ready), 1);
}

/* A creator that died before it even sized the object: the wait runs out, then it goes. */
static void stale_empty_segment_is_recreated(void **s)
{
	struct rlt_rule r = rule_of(RLT_VAR_CONNECT, "10/s scope=shared:%s");
	void *a;
	_Atomic uint32_t *o;
	struct rlt_error err;
	(void)s;

	close(plant(0600, 0));
	rlt_ns_t t0 = rlt__now();
	assert_int_equal(attach(&r, &a, &o, &err), 0);
	rlt_ns_t took = rlt__now() - t0;
	assert_true(took >= 900 * 1000 * 1000ull && took < 3 * RLT_NS_PER_SEC);
}

/* A creator still at work (it holds the lock) is waited for, not removed. */
static void slow_creator_is_waited_for(void **s)
{
	struct rlt_rule r = rule_of(RLT_VAR_CONNECT, "1/h burst=4 scope=shared:%s");
	int go[2];
	pid_t kid;
	void *a;
	_Atomic uint32_t *o;
	struct rlt_error err;
	rlt_ns_t at;
	(void)s;

	assert_int_equal(pipe(go), 0);
	kid = fork();
	if (kid == 0) {
		/* take the creator's place by hand, and take 300 ms to publish */
		int fd = plant(0600, 0);
		flock(fd, LOCK_EX);
		if (write(go[1], "x", 1) != 1)
			_exit(1);
		struct timespec ts = {0, 300 * 1000 * 1000};
		nanosleep(&ts, NULL);
		flock(fd, LOCK_UN);
		close(fd);
		/* now let a normal creator finish: remove our placeholder, attach for real */
		shm_unlink(seg_path);
		_exit(attach(&r, &a, &o, &err) == 0 ? 0 : 1);
	}
	char c;
	assert_int_equal(read(go[0], &c, 1), 1);
	assert_int_equal(attach(&r, &a, &o, &err), 0);
	int st;
	waitpid(kid, &st, 0);
	/* both ended up on one segment or the other; the one we hold works */
	assert_int_equal(rlt_decide(&r.params, a, rlt__now(), 1, RLT_MODE_NOW, &at), RLT_GO);
}

/* 8 processes name a new scope at once: one creator, one budget. */
static void creation_race(void **s)
{
	struct rlt_rule r = rule_of(RLT_VAR_CONNECT, "1/h burst=40 scope=shared:%s");
	_Atomic int *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	                           -1, 0);
	int gate[2];
	pid_t kids[8];
	(void)s;

	assert_int_equal(pipe(gate), 0);
	for (int k = 0; k < 8; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			void *a;
			_Atomic uint32_t *o;
			struct rlt_error err;
			rlt_ns_t at;
			char c;
			close(gate[1]);
			if (read(gate[0], &c, 1) != 0)
				_exit(2);
			if (attach(&r, &a, &o, &err) != 0)
				_exit(1);
			for (int i = 0; i < 10; i++)
				if (rlt_decide(&r.params, a, rlt__now(), 1, RLT_MODE_NOW, &at) == RLT_GO)
					atomic_fetch_add(&shared[0], 1);
			struct rlt__shm_hdr *h =
				(struct rlt__shm_hdr *)((char *)a - ((sizeof(*h) + 63) & ~(size_t)63));
			atomic_fetch_add(&shared[1 + (h->creator == getpid())], 1);
			_exit(0);
		}
	}
	close(gate[0]);
	close(gate[1]); /* all start at once */
	for (int k = 0; k < 8; k++) {
		int st;
		waitpid(kids[k], &st, 0);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	assert_int_equal(atomic_load(&shared[0]), 40); /* one bucket of 40 */
	assert_int_equal(atomic_load(&shared[2]), 1);  /* one creator */
	assert_int_equal(atomic_load(&shared[1]), 7);
	munmap((void *)shared, 4096);
}

static void conns_counter_is_shared(void **s)
{
	struct rlt_rule r = rule_of(RLT_VAR_CONNS, "3 scope=shared:%s");
	struct rlt_rule other = rule_of(RLT_VAR_CONNS, "4 scope=shared:%s");
	void *a;
	_Atomic uint32_t *o1, *o2;
	struct rlt_error err;
	(void)s;

	assert_int_equal(attach(&r, &a, &o1, &err), 0);
	assert_null(a);
	assert_int_equal(attach(&r, &a, &o2, &err), 0);
	atomic_fetch_add(o1, 2);
	assert_int_equal(atomic_load(o2), 2);
	assert_int_equal(attach(&other, &a, &o2, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "limit 3 there, 4 here"));
}

/* Through the ruleset: two loads of the same rules, RLT_CONNS shared between them. */
static void ruleset_uses_the_segment(void **s)
{
	static struct rlt__ruleset a, b;
	char conns[128];
	const char *v[RLT_VAR_COUNT] = {NULL, NULL, NULL, NULL, conns};
	struct rlt_error err;
	int e;
	(void)s;

	snprintf(conns, sizeof conns, "2 scope=shared:%s", name);
	assert_int_equal(rlt__ruleset_build(&a, v, 0, NULL, NULL, &err), 0);
	assert_int_equal(rlt__ruleset_build(&b, v, 0, NULL, NULL, &err), 0);
	assert_int_equal(rlt__conns_acquire(&a, 1, &e), 0);
	assert_int_equal(rlt__conns_acquire(&b, 1, &e), 0);
	assert_int_equal(rlt__conns_acquire(&a, 1, &e), -1); /* reject is the default */
	rlt__conns_release(&b, 1);
	assert_int_equal(rlt__conns_acquire(&a, 1, &e), 0);
}

static void names(void **s)
{
	(void)s;
	assert_true(rlt__shm_name_ok("web-1.api_x"));
	assert_false(rlt__shm_name_ok(""));
	assert_false(rlt__shm_name_ok("."));
	assert_false(rlt__shm_name_ok(".."));
	assert_false(rlt__shm_name_ok("a/b"));
	assert_false(rlt__shm_name_ok("../x"));
	assert_false(rlt__shm_name_ok("a b"));
	struct rlt_error err;
	assert_int_equal(rlt__shm_remove("../etc", &err), -EINVAL);
}

static int listed;

static void count_ours_text(const struct rlt__shm_info *in, void *ctx)
{
	(void)ctx;
	if (!strcmp(in->name, name)) {
		assert_true(in->valid);
		assert_int_equal(in->hdr.creator, getpid());
		assert_int_equal(in->hdr.rate_num * RLT_NS_PER_SEC / in->hdr.rate_den_ns, 5);
		assert_int_equal(in->mode, 0600);
		listed++;
	}
}

static void list_and_remove(void **s)
{
	struct rlt_rule r = rule_of(RLT_VAR_CONNECT, "5/s scope=shared:%s");
	void *a;
	_Atomic uint32_t *o;
	struct rlt_error err;
	(void)s;

	assert_int_equal(attach(&r, &a, &o, &err), 0);
	listed = 0;
	assert_int_equal(rlt__shm_list(count_ours_text, NULL, &err), 0);
	assert_int_equal(listed, 1);
	assert_int_equal(rlt__shm_remove(name, &err), 0);
	assert_int_equal(rlt__shm_remove(name, &err), -ENOENT);
	listed = 0;
	assert_int_equal(rlt__shm_list(count_ours_text, NULL, &err), 0);
	assert_int_equal(listed, 0);
}

/* A keyed rule's segment holds its table (sized by keys=, the seed in it): two attachments hash
 * alike and decide one budget per key; another keys=, key= or prefix is refused, saying so. */
static void keyed_table_in_the_segment(void **s)
{
	struct rlt_rule r = rule_of(RLT_VAR_ACCEPT, "1/h burst=2 key=peer keys=64 scope=shared:%s");
	struct rlt_rule r2 = rule_of(RLT_VAR_ACCEPT, "1/h burst=2 key=peer keys=65 scope=shared:%s");
	struct rlt_rule r3 = rule_of(RLT_VAR_ACCEPT, "1/h burst=2 key=port keys=64 scope=shared:%s");
	struct rlt_rule r4 = rule_of(RLT_VAR_ACCEPT, "1/h burst=2 key=peer/24 keys=64 scope=shared:%s");
	struct rlt_rule r5 = rule_of(RLT_VAR_ACCEPT, "1/h burst=2 scope=shared:%s");
	struct rlt__peer peer = {.af = AF_INET, .addr = {10, 0, 0, 1}};
	struct rlt__key k;
	struct rlt__keytab *ta, *tb;
	void *a, *b, *st;
	_Atomic uint32_t *o;
	struct rlt_error err;
	rlt_ns_t now = rlt__now(), at;
	int go = 0;
	(void)s;

	assert_int_equal(attach(&r, &a, &o, &err), 0);
	assert_int_equal(attach(&r, &b, &o, &err), 0);
	assert_int_equal(rlt__shm_hdr_of(a)->size,
	                 rlt__shm_hdr_of(a)->state_off + ((rlt__keytab_bytes(64) + 63) & ~63ull));
	ta = rlt__keytab_attach(a, &r.params, 64, 0);
	tb = rlt__keytab_attach(b, &r.params, 64, 0);
	assert_non_null(ta);
	assert_non_null(tb);
	assert_true(ta->seed == tb->seed && ta->seed != 0);
	rlt__key_of(RLT_KEY_PEER, 32, 128, &peer, 0, &k);
	for (int i = 0; i < 3; i++) {
		go += rlt__keytab_decide(ta, &r.params, &k, now, 1, RLT_MODE_NOW, &at, &st) == RLT_GO;
		go += rlt__keytab_decide(tb, &r.params, &k, now, 1, RLT_MODE_NOW, &at, &st) == RLT_GO;
	}
	assert_int_equal(go, 2); /* one key's burst of 2, whichever process */
	peer.addr[3] = 2;
	rlt__key_of(RLT_KEY_PEER, 32, 128, &peer, 0, &k);
	assert_int_equal(rlt__keytab_decide(tb, &r.params, &k, now, 1, RLT_MODE_NOW, &at, &st),
	                 RLT_GO); /* another key, its own budget */
	assert_int_equal(atomic_load(&ta->a->tracked), 2);
	assert_int_equal(attach(&r2, &a, &o, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "keys=64 there (the table's size, fixed at creation), keys=65 here"));
	assert_int_equal(attach(&r3, &a, &o, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "key=peer there, key=port here"));
	assert_int_equal(attach(&r4, &a, &o, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "key=peer/32,128 there, key=peer/24,64 here"));
	assert_int_equal(attach(&r5, &a, &o, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "key=peer there, key=(none) here"));
	rlt__keytab_free(ta);
	rlt__keytab_free(tb);
}

/* a test with a segment name of its own (setup), the segment removed after (teardown) */
#define IN_SEGMENT(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		IN_SEGMENT(join_shares_the_state),
		IN_SEGMENT(every_algo_in_a_segment),
		IN_SEGMENT(different_params_are_refused),
		IN_SEGMENT(writable_by_others_is_refused),
		IN_SEGMENT(stale_dead_creator_is_recreated),
		IN_SEGMENT(stale_empty_segment_is_recreated),
		IN_SEGMENT(slow_creator_is_waited_for),
		IN_SEGMENT(creation_race),
		IN_SEGMENT(conns_counter_is_shared),
		IN_SEGMENT(ruleset_uses_the_segment),
		IN_SEGMENT(names),
		IN_SEGMENT(keyed_table_in_the_segment),
		IN_SEGMENT(list_and_remove),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
