/* test_publish.c: src/publish.c, the page of rlthrottle(1) COMMANDS: made 0600 under the name of this process,
 * the counters live in it (what the hot path counts, a reader reads), the history is the units
 * of each whole second (driven with chosen clock readings), `set`'s update goes through the
 * seqlock, the control area is there and zeroed; a fork's child gets its own page; a stale page
 * is cleaned; and a hostile page (bad magic, sizes, counts, enums, text, a seqlock held forever,
 * the wrong mode, a symlink) is refused or read within bounds, never followed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "charge.h"
#include "publish_read.h"
#include "testutil.h"
#include "clock.h"
#include "policy.h"
#include "proc_stat.h"
#include "publish.h"

static struct rlt__ruleset rs;

static int setup(void **s)
{
	const char *v[RLT_VAR_COUNT] = {NULL, NULL, "1MiB/s; 100msg/s action=reject", NULL, "3"};
	struct rlt_error err;
	(void)s;
	memset(&rs, 0, sizeof rs);
	if (rlt__ruleset_build(&rs, v, 0, NULL, NULL, &err) != 0)
		fail_msg("build: %s", err.msg);
	if (rlt__pub_create(&rs, getpid(), &err) != 0)
		fail_msg("create: %s", err.msg);
	return 0;
}

static int teardown(void **s)
{
	(void)s;
	rlt__pub_destroy(&rs);
	return 0;
}

static void my_path(char *buf, size_t len)
{
	struct rlt__proc_stat ps;
	assert_int_equal(rlt__proc_stat(getpid(), &ps), 0);
	assert_int_equal(rlt__pub_path(buf, len, geteuid(), getpid(), ps.start), 0);
}

static void made_and_read(void **s)
{
	struct rlt__pub_reader rd;
	struct rlt__pub_rule r;
	struct rlt__ticket t;
	struct rlt_error err;
	struct stat st;
	char path[128];
	(void)s;

	my_path(path, sizeof path);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(rs.stats_on, 1);
	assert_ptr_not_equal(rs.rules[RLT_VAR_SEND][0].st, &rs.rules[RLT_VAR_SEND][0].own);
	/* counted by the hot path, read by another mapping */
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 1, NULL, 1000, 1), 0);
	rlt__settle(&rs, &t, 600, 1);
	assert_int_equal(rlt__pub_open(getpid(), 0, &rd, &err), 0);
	assert_int_equal(rd.nrules, 3);
	assert_null(rlt__pub_reader_ctl(&rd));
	rlt__pub_read(&rd, 0, rlt__now(), &r);
	assert_int_equal(r.var, RLT_VAR_SEND);
	assert_int_equal(r.params_torn, 0);
	assert_string_equal(r.params.text, "1MiB/s");
	assert_int_equal(r.params.rate_num * RLT_NS_PER_SEC / r.params.rate_den_ns, 1048576);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.units, 600);
	rlt__pub_read(&rd, 1, rlt__now(), &r);
	assert_string_equal(r.params.text, "100msg/s action=reject");
	assert_int_equal(r.params.action, RLT_ACTION_REJECT);
	assert_int_equal(r.params.unit, RLT_UNIT_MSGS);
	rlt__pub_read(&rd, 2, rlt__now(), &r);
	assert_int_equal(r.var, RLT_VAR_CONNS);
	assert_int_equal(r.params.rate_num, 3);
	rlt__pub_close(&rd);

	/* the control area: 64-byte aligned, zeroed, the same bytes for a read-write reader */
	unsigned char *ctl = rlt__pub_ctl(rs.pub);
	assert_int_equal((uintptr_t)ctl % 64, 0);
	for (unsigned i = 0; i < RLT_PUB_CTL_SIZE; i++)
		assert_int_equal(ctl[i], 0);
	assert_int_equal(rlt__pub_open(getpid(), 1, &rd, &err), 0);
	unsigned char *rctl = rlt__pub_reader_ctl(&rd);
	assert_non_null(rctl);
	rctl[RLT_PUB_CTL_SIZE - 1] = 7;
	assert_int_equal(ctl[RLT_PUB_CTL_SIZE - 1], 7);
	rlt__pub_close(&rd);
	/* destroyed: counts carried back to the private counters, name gone */
	rlt__pub_destroy(&rs);
	assert_int_equal(rs.rules[RLT_VAR_SEND][0].own.units, 600);
	assert_ptr_equal(rs.rules[RLT_VAR_SEND][0].st, &rs.rules[RLT_VAR_SEND][0].own);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(rlt__pub_open(getpid(), 0, &rd, &err), -ENOENT);
}

static void history(void **s)
{
	struct rlt__pub_reader rd;
	struct rlt__pub_rule r;
	struct rlt_error err;
	_Atomic uint64_t *u = &rs.rules[RLT_VAR_SEND][0].st->units;
	(void)s;

	rlt_ns_t base = (rlt__now() / RLT_NS_PER_SEC + 1) * RLT_NS_PER_SEC;
	uint64_t S = base / RLT_NS_PER_SEC;
	rlt__pub_tick(rs.pub, base + 100000000);     /* second S opens at 0 */
	atomic_fetch_add(u, 100);
	rlt__pub_tick(rs.pub, base + 1100000000);    /* S+1 at 100 */
	rlt__pub_tick(rs.pub, base + 1200000000);    /* (the same second: nothing) */
	atomic_fetch_add(u, 200);
	rlt__pub_tick(rs.pub, base + 3500000000ull); /* S+2 (nobody called) and S+3 at 300 */
	atomic_fetch_add(u, 50);
	assert_int_equal(rlt__pub_open(getpid(), 0, &rd, &err), 0);
	rlt__pub_read(&rd, 0, base + 4200000000ull, &r); /* whole seconds S .. S+3 */
	assert_int_equal(r.per_sec[RLT_PUB_HIST - 4], 100);
	assert_int_equal(r.per_sec[RLT_PUB_HIST - 3], 200);
	assert_int_equal(r.per_sec[RLT_PUB_HIST - 2], 0);
	assert_int_equal(r.per_sec[RLT_PUB_HIST - 1], 50);
	/* read later: the seconds since nobody called are 0, the older ones slide left */
	rlt__pub_read(&rd, 0, base + 6200000000ull, &r);
	assert_int_equal(r.per_sec[RLT_PUB_HIST - 3], 50);
	assert_int_equal(r.per_sec[RLT_PUB_HIST - 1], 0);
	assert_int_equal(r.per_sec[RLT_PUB_HIST - 6], 100);
	/* a jump of more than a minute: the ring is all one mark, nothing is read twice */
	rlt__pub_tick(rs.pub, base + 200 * RLT_NS_PER_SEC);
	rlt__pub_read(&rd, 0, base + 201 * RLT_NS_PER_SEC, &r);
	for (unsigned i = 0; i < RLT_PUB_HIST; i++)
		assert_int_equal(r.per_sec[i], 0);
	(void)S;
	rlt__pub_close(&rd);
}

static void update_under_seqlock(void **s)
{
	struct rlt__pub_reader rd;
	struct rlt__pub_rule r;
	struct rlt_error err;
	struct rlt_rule nr;
	size_t n;
	(void)s;

	assert_int_equal(rlt_rules_parse(RLT_VAR_SEND, "256KiB/s", &nr, 1, &n, &err), 0);
	rs.rules[RLT_VAR_SEND][0].rule = nr;
	rlt__pub_rule_update(&rs, RLT_VAR_SEND, 0);
	rlt__pub_rule_update(&rs, RLT_VAR_SEND, 9);     /* out of range: nothing */
	rlt__pub_rule_update(&rs, RLT_VAR_COUNT, 0);    /* idem */
	assert_int_equal(rlt__pub_open(getpid(), 0, &rd, &err), 0);
	rlt__pub_read(&rd, 0, rlt__now(), &r);
	assert_int_equal(r.params_torn, 0);
	assert_string_equal(r.params.text, "256KiB/s");
	assert_int_equal(r.params.rate_num * RLT_NS_PER_SEC / r.params.rate_den_ns, 262144);
	/* a writer that never lets go: the reader gives up, params unknown, counters still read */
	struct rlt__pub_rec *rec =
		(struct rlt__pub_rec *)((char *)rs.pub->hdr + sizeof(struct rlt__pub_hdr));
	atomic_fetch_add(&rec->seq, 1);
	rlt__pub_read(&rd, 0, rlt__now(), &r);
	assert_int_equal(r.params_torn, 1);
	assert_string_equal(r.params.text, "");
	atomic_fetch_add(&rec->seq, 1);
	rlt__pub_close(&rd);
}

static void forked_child_has_its_own(void **s)
{
	struct rlt__ticket t;
	struct rlt__pub_reader rd;
	struct rlt__pub_rule r;
	struct rlt_error err;
	int status;
	(void)s;

	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 1, NULL, 10, 1), 0);
	rlt__settle(&rs, &t, 10, 1);
	pid_t c = fork();
	if (c == 0) {
		rlt__pub_forked(&rs, getpid());
		int ok = rs.pub && rs.rules[RLT_VAR_SEND][0].st->units == 0 &&
		         rlt__charge(&rs, &t, RLT_VAR_SEND, 1, NULL, 5, 1) == 0;
		rlt__settle(&rs, &t, 5, 1);
		ok = ok && rlt__pub_open(getpid(), 0, &rd, &err) == 0;
		if (ok) {
			rlt__pub_read(&rd, 0, rlt__now(), &r);
			ok = r.units == 5;
		}
		rlt__pub_destroy(&rs);
		_exit(ok ? 0 : 1);
	}
	assert_true(c > 0);
	assert_int_equal(waitpid(c, &status, 0), c);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the parent's page is untouched by the child */
	assert_int_equal(rlt__pub_open(getpid(), 0, &rd, &err), 0);
	rlt__pub_read(&rd, 0, rlt__now(), &r);
	assert_int_equal(r.units, 10);
	rlt__pub_close(&rd);
}

static void stale_cleaned(void **s)
{
	char path[128];
	pid_t pids[64];
	(void)s;
	/* a pid that is gone (a child we reaped), and our own pid with another start time */
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	waitpid(c, NULL, 0);
	assert_int_equal(rlt__pub_path(path, sizeof path, geteuid(), c, 5), 0);
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	char other[128];
	assert_int_equal(rlt__pub_path(other, sizeof other, geteuid(), getpid(), 1), 0);
	fd = open(other, O_CREAT | O_EXCL | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	uint64_t starts[64];
	int n = rlt__pub_list(pids, starts, 64);
	assert_true(n >= 1);
	int mine = 0;
	for (int i = 0; i < n && i < 64; i++)
		mine += pids[i] == getpid();
	assert_int_equal(mine, 1);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(other, F_OK), -1);
}

/* Rewrites our page's file with one change made by `spoil`, then opens it. */
static int open_spoiled(void (*spoil)(struct rlt__pub_hdr *h, size_t *size), struct rlt__pub_rule *r)
{
	struct rlt__pub_reader rd;
	struct rlt_error err;
	size_t size = rs.pub->size;
	char path[128];
	/* aligned as a mapping is: the header is _Alignas(64) */
	unsigned char *copy = aligned_alloc(64, (size + 4096 + 63) & ~(size_t)63);

	memcpy(copy, rs.pub->hdr, size);
	memset(copy + size, 0, 4096);
	spoil((struct rlt__pub_hdr *)copy, &size);
	/* the writer's mapping is left alone: the name now holds the spoiled copy */
	my_path(path, sizeof path);
	unlink(path);
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, copy, size), (ssize_t)size);
	close(fd);
	free(copy);
	int rc = rlt__pub_open(getpid(), 0, &rd, &err);
	if (rc == 0) {
		for (unsigned k = 0; k < rd.nrules; k++)
			rlt__pub_read(&rd, k, rlt__now(), &r[k]);
		rlt__pub_read(&rd, rd.nrules + 5, rlt__now(), &r[3]); /* out of range: zeros */
		rlt__pub_close(&rd);
	} else {
		printf("  refused: %s\n", err.msg);
	}
	return rc;
}

static void bad_magic(struct rlt__pub_hdr *h, size_t *z) { (void)z; h->magic ^= 1; }
static void bad_version(struct rlt__pub_hdr *h, size_t *z) { (void)z; h->version = 99; }
/* a process started by the rlthrottle before an upgrade: an older layout, smaller records */
static void old_version(struct rlt__pub_hdr *h, size_t *z)
{
	h->version = RLT_PUB_VERSION - 1;
	*z -= 32 * h->nrules;
	h->size = *z;
}
static void many_rules(struct rlt__pub_hdr *h, size_t *z) { (void)z; h->nrules = 1000000; }
static void rules_past_end(struct rlt__pub_hdr *h, size_t *z) { (void)z; h->nrules = 4; }
static void longer(struct rlt__pub_hdr *h, size_t *z) { (void)h; *z += 4096; }
static void shorter(struct rlt__pub_hdr *h, size_t *z) { (void)h; *z -= 100; }
static void rec_size(struct rlt__pub_hdr *h, size_t *z) { (void)z; h->rec_size = 8; }
static void other_pid(struct rlt__pub_hdr *h, size_t *z) { (void)z; h->pid = 1; }
static void tiny(struct rlt__pub_hdr *h, size_t *z) { (void)h; *z = 10; }

static struct rlt__pub_rec *rec0(struct rlt__pub_hdr *h)
{
	return (struct rlt__pub_rec *)((char *)h + sizeof *h);
}
static void wild_fields(struct rlt__pub_hdr *h, size_t *z)
{
	(void)z;
	struct rlt__pub_rec *r = rec0(h);
	r->var = 77;
	r->index = 1000;
	memset(r->params.text, 'x', sizeof r->params.text); /* no NUL */
	struct rlt__pub_rec *r1 = r + 1;
	r1->params.algo = 1234;
	atomic_store(&r1->st.waiting, UINT64_MAX); /* a count below zero */
	for (unsigned i = 0; i < RLT_PUB_HIST; i++)
		atomic_store(&r1->hist[i], UINT64_MAX - i); /* decreasing: never negative */
	atomic_store(&h->hist_sec, UINT64_MAX);
}

static void hostile_pages(void **s)
{
	struct rlt__pub_rule r[4];
	(void)s;
	assert_int_equal(open_spoiled(bad_magic, r), -EINVAL);
	/* another layout: -EPROTO (the subcommands say "restart it" in one line), not a bad page */
	assert_int_equal(open_spoiled(bad_version, r), -EPROTO);
	assert_int_equal(open_spoiled(old_version, r), -EPROTO);
	assert_int_equal(open_spoiled(many_rules, r), -EINVAL);
	assert_int_equal(open_spoiled(rules_past_end, r), -EINVAL);
	assert_int_equal(open_spoiled(longer, r), -EINVAL);
	assert_int_equal(open_spoiled(shorter, r), -EINVAL);
	assert_int_equal(open_spoiled(rec_size, r), -EINVAL);
	assert_int_equal(open_spoiled(other_pid, r), -EINVAL);
	assert_int_equal(open_spoiled(tiny, r), -EINVAL);

	assert_int_equal(open_spoiled(wild_fields, r), 0);
	assert_int_equal(r[0].var, RLT_VAR_COUNT); /* marked: no variable */
	assert_int_equal(r[0].index, 0);
	assert_int_equal(strlen(r[0].params.text), RLT_RULE_TEXT_MAX);
	assert_int_equal(r[1].params_torn, 1); /* an algorithm out of range: params unknown */
	assert_int_equal(r[1].waiting, 0);
	for (unsigned i = 0; i < RLT_PUB_HIST; i++)
		assert_true(r[1].per_sec[i] == 0);
	assert_int_equal(r[3].calls, 0);

	/* the wrong mode, and a symlink at the name: refused, not followed */
	char path[128];
	my_path(path, sizeof path);
	struct rlt__pub_reader rd;
	struct rlt_error err;
	chmod(path, 0640);
	assert_int_equal(rlt__pub_open(getpid(), 0, &rd, &err), -EACCES);
	unlink(path);
	char target[160];
	snprintf(target, sizeof target, "/tmp/rlt-ut-publish-%d", (int)getpid());
	int fd = open(target, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, rs.pub->hdr, rs.pub->size), (ssize_t)rs.pub->size);
	close(fd);
	assert_int_equal(symlink(target, path), 0);
	assert_true(rlt__pub_open(getpid(), 0, &rd, &err) < 0);
	printf("  symlink: %s\n", err.msg);
	unlink(path);
	unlink(target);
}

/* A keyed rule's busiest keys reach the page (rlt__pub_keys) and a reader, most units first;
 * a hostile count is bounded, and a keys seqlock held forever gives none. */
static void busiest_keys(void **s)
{
	const char *v[RLT_VAR_COUNT] = {NULL, "1000/s burst=100 key=peer", NULL, NULL, NULL};
	struct rlt__ruleset kr;
	struct rlt__pub_reader rd;
	struct rlt__pub_rule r;
	struct rlt__ticket t;
	struct rlt_error err;
	static const unsigned times[3] = {2, 5, 1};
	(void)s;

	memset(&kr, 0, sizeof kr);
	assert_int_equal(rlt__ruleset_build(&kr, v, 0, NULL, NULL, &err), 0);
	assert_int_equal(rlt__pub_create(&kr, getpid(), &err), 0);
	for (unsigned a = 0; a < 3; a++)
		for (unsigned n = 0; n < times[a]; n++) {
			struct rlt__peer p = {.af = AF_INET, .addr = {127, 0, 0, (uint8_t)(2 + a)}};
			assert_int_equal(rlt__charge_wait_peer(&kr, &t, RLT_VAR_ACCEPT, 1, NULL, &p, 0, 1), 0);
			rlt__settle(&kr, &t, 0, 1);
		}
	rlt__pub_keys(&kr, rlt__now());
	assert_int_equal(rlt__pub_open(getpid(), 0, &rd, &err), 0);
	rlt__pub_read(&rd, 0, rlt__now(), &r);
	assert_int_equal(r.params.keys, 4096);
	assert_int_equal(r.nbusy, 3);
	assert_string_equal(r.busy[0].key, "127.0.0.3");
	assert_int_equal(r.busy[0].units, 5);
	assert_string_equal(r.busy[1].key, "127.0.0.2");
	assert_int_equal(r.busy[1].units, 2);
	assert_string_equal(r.busy[2].key, "127.0.0.4");
	assert_int_equal(r.busy[2].units, 1);
	struct rlt__pub_hdr *h = kr.pub->hdr;
	struct rlt__pub_rec *rec = (struct rlt__pub_rec *)((char *)h + sizeof *h);
	rec->nbusy = 1000; /* hostile: bounded */
	rlt__pub_read(&rd, 0, rlt__now(), &r);
	assert_int_equal(r.nbusy, RLT_PUB_BUSIEST);
	atomic_store(&rec->keys_seq, 1u); /* a writer that never let go */
	rlt__pub_read(&rd, 0, rlt__now(), &r);
	assert_int_equal(r.nbusy, 0);
	assert_int_equal(r.params_torn, 0);
	rlt__pub_close(&rd);
	rlt__pub_destroy(&kr);
}

static void no_rules_no_page(void **s)
{
	struct rlt__ruleset none;
	struct rlt_error err;
	char path[128];
	(void)s;
	memset(&none, 0, sizeof none);
	assert_int_equal(rlt__pub_create(&none, getpid(), &err), 0);
	assert_null(none.pub);
	my_path(path, sizeof path);
	assert_int_equal(access(path, F_OK), -1);
}

/* a test with the rule set built (setup) and its page destroyed after (teardown) */
#define WITH_PAGE(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		WITH_PAGE(made_and_read),
		WITH_PAGE(history),
		WITH_PAGE(update_under_seqlock),
		WITH_PAGE(forked_child_has_its_own),
		WITH_PAGE(stale_cleaned),
		WITH_PAGE(hostile_pages),
		cmocka_unit_test(no_rules_no_page),
		cmocka_unit_test(busiest_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
