/* test_scope_redis.c: scope=redis:// against a real redis-server this test starts on a free
 * loopback port (and kills by pid): leases, every algorithm family, reservations, give-backs
 * at exit, fallbacks while Redis is away, one log line per outage, reconnection. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "keytab_key.h"
#include "scope_redis_key.h"
#include "testutil.h"
#include "clock.h"
#include "policy.h"
#include "keytab.h"
#include "scope_redis.h"
#include "redis_server.h"

static pid_t server;
static int port;
static char name[64];
static int nlog_down, nlog_up;

static void count_log(int level, const char *fmt, ...)
{
	va_list ap;

	(void)level;
	(void)fmt; /* scope_redis.c passes "%s" and the line */
	va_start(ap, fmt);
	const char *line = va_arg(ap, const char *);
	va_end(ap);
	if (strstr(line, "does not answer"))
		nlog_down++;
	if (strstr(line, "answers again"))
		nlog_up++;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static int start_server(void)
{
	server = rlt_test_redis_start(port);
	return server > 0 ? 0 : -1;
}

static void stop_server(void)
{
	rlt_test_redis_stop(server);
	server = 0;
}

static int group_setup(void **s)
{
	(void)s;
	port = rlt_test_free_port();
	rlt__scope_log = count_log;
	if (start_server() != 0) {
		stop_server();
		return -1;
	}
	return 0;
}

static int group_teardown(void **s)
{
	(void)s;
	stop_server();
	return 0;
}

static int setup(void **s)
{
	static int n;
	(void)s;
	snprintf(name, sizeof name, "ut-%d-%d", (int)getpid(), n++);
	return 0;
}

static struct rlt__redis *mk(const char *fmt, int at_port, struct rlt_rule *out)
{
	char text[300], scope[128];
	struct rlt_rule r;
	struct rlt_error err;
	struct rlt__redis *rd;
	size_t n = 0;

	snprintf(scope, sizeof scope, "redis://127.0.0.1:%d/%s", at_port, name);
	snprintf(text, sizeof text, fmt, scope);
	if (rlt_rules_parse(RLT_VAR_CONNECT, text, &r, 1, &n, &err) != 0)
		fail_msg("parse %s: %s", text, err.msg);
	if (rlt__redis_new(&r, &rd, &err) != 0)
		fail_msg("new: %s", err.msg);
	if (out)
		*out = r;
	return rd;
}

static int count_go(struct rlt__redis *rd, int calls, enum rlt_mode mode)
{
	int go = 0;
	for (int i = 0; i < calls; i++) {
		rlt_ns_t at, now = rlt__now();
		enum rlt_verdict v = rlt__redis_decide(rd, now, 1, mode, &at);
		go += v != RLT_DENY;
	}
	return go;
}

/* Token: a burst of 100, leases of 10 (10 ms of 1000/s): a quick run of calls gets the burst,
 * plus at most what refills meanwhile, in about one round trip per lease. */
static void token_lease(void **s)
{
	struct rlt__redis *rd = mk("1000/s burst=100 scope=%s", port, NULL);
	rlt_ns_t t0 = rlt__now();
	int go = count_go(rd, 150, RLT_MODE_NOW);
	double secs = (double)(rlt__now() - t0) / 1e9;
	(void)s;

	assert_true(go >= 100);
	assert_true(go <= 100 + 10 + (int)(secs * 1000) + 1);
	assert_true(rlt__redis_round_trips(rd) <= (uint64_t)go / 10 + 8);
}

/* Two clients (two processes' worth of state) on one key: one budget. */
static void two_clients_one_budget(void **s)
{
	struct rlt__redis *a = mk("1/h burst=60 scope=%s", port, NULL);
	struct rlt__redis *b = mk("1/h burst=60 scope=%s", port, NULL);
	int go = 0;
	(void)s;

	for (int i = 0; i < 50; i++)
		go += count_go(a, 1, RLT_MODE_NOW) + count_go(b, 1, RLT_MODE_NOW);
	assert_int_equal(go, 60);
}

/* The windows and the log: a single client spends exactly what it leased. */
static void windows_and_log_exact(void **s)
{
	static const char *const rules[] = {
		"500/10s algo=fixed-window scope=%s",
		"500/10s algo=sliding-window scope=%s",
		"500/10s algo=sliding-log scope=%s",
	};
	(void)s;
	for (int k = 0; k < 3; k++) {
		setup(NULL);
		struct rlt__redis *a = mk(rules[k], port, NULL);
		struct rlt__redis *b = mk(rules[k], port, NULL);
		int go = count_go(a, 300, RLT_MODE_NOW) + count_go(b, 300, RLT_MODE_NOW);
		/* a fixed window may roll over during the run: then up to two windows' worth */
		if (k == 0)
			assert_true(go >= 500 && go <= 600);
		else
			assert_int_equal(go, 500);
	}
}

/* Delay mode: reservations at the rate, none of them denied. */
static void reserve_spaces_calls(void **s)
{
	static const char *const rules[] = {
		"100/s burst=1 scope=%s",
		"100/s algo=leaky burst=100 scope=%s",
		"10/100ms algo=fixed-window scope=%s",
		"10/100ms algo=sliding-window scope=%s",
		"10/100ms algo=sliding-log scope=%s",
	};
	(void)s;
	for (int k = 0; k < 5; k++) {
		setup(NULL);
		struct rlt__redis *rd = mk(rules[k], port, NULL);
		rlt_ns_t t0 = rlt__now(), last = t0;
		for (int i = 0; i < 40; i++) {
			rlt_ns_t at, now = rlt__now();
			enum rlt_verdict v = rlt__redis_decide(rd, now, 1, RLT_MODE_RESERVE, &at);
			if (v == RLT_DENY)
				fail_msg("rule %d call %d denied", k, i);
			if (at > last)
				last = at;
			if (at > now)
				sleep_ms((unsigned)((at - now) / 1000000));
		}
		double span = (double)(last - t0) / 1e6; /* ms: 40 calls at 100/s ~ 390 ms */
		/* a fixed window's first one is partial: 10 at once, 3 boundaries later all 40 */
		if (span < (k == 2 ? 190 : 250) || span > 700)
			fail_msg("rule %d: 40 calls spread over %.0f ms", k, span);
	}
}

/* Leaky: a call that finds more than the burst waiting is denied even in delay mode. */
static void leaky_overflow(void **s)
{
	struct rlt__redis *rd = mk("10/s algo=leaky burst=2 scope=%s", port, NULL);
	rlt_ns_t at;
	int denied = 0;
	(void)s;

	for (int i = 0; i < 10; i++)
		denied += rlt__redis_decide(rd, rlt__now(), 1, RLT_MODE_RESERVE, &at) == RLT_DENY;
	assert_true(denied >= 6);
}

/* Unspent leases go back: a second client can then take them. */
static void give_back(void **s)
{
	struct rlt__redis *a = mk("1/h burst=20 scope=%s", port, NULL);
	struct rlt__redis *b;
	rlt_ns_t at;
	(void)s;

	/* 1/h: lease of 1 unit, so lease a lot by asking for a big call, then refund it */
	assert_int_equal(rlt__redis_decide(a, rlt__now(), 15, RLT_MODE_NOW, &at), RLT_GO);
	rlt__redis_refund(a, at, 15); /* back into a's lease */
	b = mk("1/h burst=20 scope=%s", port, NULL);
	assert_int_equal(count_go(b, 20, RLT_MODE_NOW), 5);
	rlt__redis_return_leases();
	sleep_ms(20); /* b remembers its denial for up to a lease's time (10 ms) */
	assert_int_equal(count_go(b, 20, RLT_MODE_NOW), 15);
}

/* No server: each fallback as written, no call waits on it for long, one line per outage. */
static void fallbacks_when_unreachable(void **s)
{
	int closed = rlt_test_free_port();
	struct rlt__redis *deny = mk("10/s burst=5 fallback=deny scope=%s", closed, NULL);
	struct rlt__redis *allow = mk("10/s burst=5 fallback=allow scope=%s", closed, NULL);
	struct rlt__redis *local = mk("10/s burst=5 fallback=local scope=%s", closed, NULL);
	(void)s;

	nlog_down = 0;
	rlt_ns_t t0 = rlt__now();
	assert_int_equal(count_go(deny, 100, RLT_MODE_NOW), 0);
	assert_int_equal(count_go(allow, 100, RLT_MODE_NOW), 100);
	assert_int_equal(count_go(local, 100, RLT_MODE_NOW), 5);
	assert_true(rlt__now() - t0 < 400 * 1000 * 1000ull);
	assert_int_equal(nlog_down, 3); /* one per rule, not per call */
}

/* Redis goes away in the middle and comes back: the fallback covers the gap, then the shared
 * budget is used again; one line each way. */
static void outage_and_recovery(void **s)
{
	struct rlt__redis *rd = mk("1000/s burst=10 fallback=deny scope=%s", port, NULL);
	rlt_ns_t at;
	(void)s;

	assert_true(count_go(rd, 5, RLT_MODE_NOW) == 5);
	uint64_t rt0 = rlt__redis_round_trips(rd);
	nlog_down = nlog_up = 0;
	stop_server();
	sleep_ms(30); /* the lease of 10 ms lapses into nothing: a token lease does not lapse */
	int go = 0;
	for (int i = 0; i < 200; i++)
		go += rlt__redis_decide(rd, rlt__now(), 1, RLT_MODE_NOW, &at) != RLT_DENY;
	assert_true(go <= 10); /* only what was still leased */
	assert_int_equal(nlog_down, 1);
	assert_int_equal(start_server(), 0);
	sleep_ms(600); /* past the retry interval */
	assert_true(count_go(rd, 5, RLT_MODE_NOW) >= 1);
	assert_int_equal(nlog_up, 1);
	assert_true(rlt__redis_round_trips(rd) > rt0);
}

/* A signal handler that interrupts this thread's refill (a round trip, under the rule's lock)
 * and decides on the same rule must not wait for that lock: it takes the fallback at once.
 * Every call here refills (leases of 1 unit); SIGALRM every 500 us for 300 ms; the handler
 * decides only when it interrupted the loop's decision (the case under test: a handler's own
 * refill outside it would run hiredis, which is not async-signal-safe). Before, such a handler
 * waited out the 100 ms bound on another thread's refill, signal after signal. */
static struct rlt__redis *sig_rd;
static _Atomic uint64_t sig_calls, sig_max_ns;
static volatile sig_atomic_t deciding;

static void on_alarm(int sig)
{
	int saved = errno;
	rlt_ns_t at, t0 = rlt__now();

	(void)sig;
	if (!deciding)
		return;
	rlt__redis_decide(sig_rd, t0, 1, RLT_MODE_RESERVE, &at);
	uint64_t d = rlt__now() - t0, m = atomic_load(&sig_max_ns);
	while (d > m && !atomic_compare_exchange_weak(&sig_max_ns, &m, d))
		;
	atomic_fetch_add(&sig_calls, 1);
	errno = saved;
}

static void handler_in_refill(void **s)
{
	struct itimerval it = {{0, 500}, {0, 500}}, off = {{0, 0}, {0, 0}};
	struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
	uint64_t calls = 0;

	(void)s;
	sig_rd = mk("100/s burst=1 scope=%s", port, NULL);
	atomic_store(&sig_calls, 0);
	atomic_store(&sig_max_ns, 0);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (rlt_ns_t end = rlt__now() + 300 * 1000000ull; rlt__now() < end; calls++) {
		rlt_ns_t at, now = rlt__now();
		deciding = 1;
		rlt__redis_decide(sig_rd, now, 1, RLT_MODE_RESERVE, &at);
		deciding = 0;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
	print_message("%llu calls, %llu in the handler, the slowest %.1f ms\n",
	              (unsigned long long)calls, (unsigned long long)atomic_load(&sig_calls),
	              (double)atomic_load(&sig_max_ns) / 1e6);
	assert_true(atomic_load(&sig_calls) > 0);
	assert_true(atomic_load(&sig_max_ns) < 50 * 1000000ull);
}

/* ----- key= ----- */

/* A keyed rule: its lease table (keys slots, as policy.c makes it). */
static struct rlt__redis *mk_keyed(const char *fmt, int at_port, struct rlt__keytab **tab)
{
	struct rlt_rule r;
	struct rlt_error err;
	struct rlt__redis *rd = mk(fmt, at_port, &r);
	struct rlt__keytab *t = rlt__keytab_new(NULL, r.keys, 42, 1);

	assert_non_null(t);
	if (rlt__redis_keyed(rd, t, &err) != 0)
		fail_msg("keyed: %s", err.msg);
	if (tab)
		*tab = t;
	return rd;
}

static void key4(struct rlt__key *k, const char *addr)
{
	struct rlt__peer p = {.af = AF_INET};

	inet_pton(AF_INET, addr, p.addr);
	rlt__key_of(RLT_KEY_PEER, 32, 128, &p, 0, k);
}

static int count_go_key(struct rlt__redis *rd, const struct rlt__key *k, int calls,
                        enum rlt_mode mode)
{
	int go = 0;
	for (int i = 0; i < calls; i++) {
		rlt_ns_t at, now = rlt__now();
		void *st;
		go += rlt__redis_decide_key(rd, k, now, 1, mode, &at, &st) != RLT_DENY;
	}
	return go;
}

/* One command to the test's server: its integer answer (PTTL, EXISTS), or -99. */
static long long redis_int(const char *cmd, const char *arg)
{
	struct rlt__redis_conn c;
	struct rlt__resp_reply rep;
	const char *argv[2] = {cmd, arg};
	char why[160];
	long long v = -99;

	if (rlt__redis_open(&c, "127.0.0.1", (uint16_t)port, 200000, why, sizeof why) != 0)
		return v;
	if (rlt__redis_roundtrip(c.fd, 2, argv, rlt__now() + 200 * 1000000ull, &rep, why,
	                         sizeof why) == 0 && rep.top.type == ':')
		v = rep.top.integer;
	rlt__redis_close(&c);
	return v;
}

/* The Redis key of each kind of value: printable, under the rule's hash tag. */
static void key_names(void **s)
{
	struct rlt__key k;
	struct rlt__peer p6 = {.af = AF_INET6};
	char buf[160];
	(void)s;

	key4(&k, "127.0.0.2");
	rlt__redis_key_name("rlthrottle:{web}:gcra", &k, 32, 128, buf, sizeof buf);
	assert_string_equal(buf, "rlthrottle:{web}:gcra:k:127.0.0.2");
	struct rlt__peer p4 = {.af = AF_INET};
	inet_pton(AF_INET, "10.1.2.3", p4.addr);
	rlt__key_of(RLT_KEY_PEER, 24, 64, &p4, 0, &k);
	rlt__redis_key_name("B", &k, 24, 64, buf, sizeof buf);
	assert_string_equal(buf, "B:k:10.1.2.0/24");
	inet_pton(AF_INET6, "2001:db8:1:2::9", p6.addr);
	rlt__key_of(RLT_KEY_PEER, 24, 64, &p6, 0, &k);
	rlt__redis_key_name("B", &k, 24, 64, buf, sizeof buf);
	assert_string_equal(buf, "B:k:2001:db8:1:2::/64");
	rlt__key_of(RLT_KEY_PORT, 32, 128, NULL, 8080, &k);
	rlt__redis_key_name("B", &k, 32, 128, buf, sizeof buf);
	assert_string_equal(buf, "B:k:port:8080");
	rlt__key_of(RLT_KEY_PEER, 32, 128, NULL, 0, &k);
	rlt__redis_key_name("B", &k, 32, 128, buf, sizeof buf);
	assert_string_equal(buf, "B:k:none");
}

/* Each key its own budget, shared by two processes' worth of state; a lease spent locally (one
 * round trip per lease); one Redis record per key, with a PTTL. */
static void keyed_budgets(void **s)
{
	struct rlt__redis *a = mk_keyed("1000/s burst=100 key=peer scope=%s", port, NULL);
	struct rlt__redis *b = mk_keyed("1000/s burst=100 key=peer scope=%s", port, NULL);
	struct rlt__key k2, k3;
	char kn[200];
	(void)s;

	key4(&k2, "127.0.0.2");
	key4(&k3, "127.0.0.3");
	rlt_ns_t t0 = rlt__now();
	int g2 = count_go_key(a, &k2, 80, RLT_MODE_NOW) + count_go_key(b, &k2, 80, RLT_MODE_NOW);
	int g3 = count_go_key(a, &k3, 80, RLT_MODE_NOW);
	double secs = (double)(rlt__now() - t0) / 1e9;
	print_message("key .2: %d of 160, key .3: %d of 80, %.1f ms, %llu round trips\n", g2, g3,
	              secs * 1e3, (unsigned long long)rlt__redis_round_trips(a));
	assert_true(g2 >= 100 && g2 <= 100 + 2 * 10 + (int)(secs * 1000) + 1);
	assert_int_equal(g3, 80); /* .2 spent none of .3's budget */
	/* leases of 10: about one round trip per 10 calls (plus the script's load) */
	assert_true(rlt__redis_round_trips(a) <= (uint64_t)(g2 + g3) / 10 + 10);
	snprintf(kn, sizeof kn, "rlthrottle:{%s}:gcra:k:127.0.0.2", name);
	assert_int_equal(redis_int("EXISTS", kn), 1);
	long long pttl = redis_int("PTTL", kn);
	assert_true(pttl > 0 && pttl <= 1200);
	snprintf(kn, sizeof kn, "rlthrottle:{%s}:gcra:k:127.0.0.3", name);
	assert_int_equal(redis_int("EXISTS", kn), 1);
	snprintf(kn, sizeof kn, "rlthrottle:{%s}:gcra", name);
	assert_int_equal(redis_int("EXISTS", kn), 0); /* no record for the rule as a whole */
}

/* keys=1: a second key takes the slot of the first, whose unspent lease lapses (an eviction:
 * never given back); a key whose lease is spent goes as `expired`. Redis keeps each key's
 * budget: the first key, back, has what Redis still holds for it, less the lapsed lease. */
static void keyed_eviction(void **s)
{
	struct rlt__keytab *t;
	struct rlt__redis *rd = mk_keyed("1/h burst=4 key=peer keys=1 scope=%s", port, &t);
	struct rlt__key k2, k3;
	rlt_ns_t at;
	void *st;
	(void)s;

	key4(&k2, "127.0.0.2");
	key4(&k3, "127.0.0.3");
	/* a call of 2 units given back: k2 holds a lease of 2 unspent (Redis: 2 left of 4) */
	assert_int_equal(rlt__redis_decide_key(rd, &k2, rlt__now(), 2, RLT_MODE_NOW, &at, &st),
	                 RLT_GO);
	rlt__redis_refund_key(rd, st, at, 2);
	assert_int_equal(count_go_key(rd, &k3, 6, RLT_MODE_NOW), 4); /* its own budget */
	assert_int_equal(atomic_load(&t->a->evictions), 1);
	assert_int_equal(atomic_load(&t->a->expired), 0);
	uint64_t rt = rlt__redis_round_trips(rd);
	sleep_ms(20); /* past k3's remembered denial: nothing to do with k2, but the slot's */
	assert_int_equal(count_go_key(rd, &k2, 6, RLT_MODE_NOW), 2); /* 4 - 2 lapsed */
	assert_int_equal(atomic_load(&t->a->expired), 1); /* k3's lease was spent */
	assert_true(rlt__redis_round_trips(rd) > rt);
}

/* A fixed window per key: each key its own limit in the window (one counter per key and
 * window, "<key>:<window>"); a window of an hour, so that the run does not cross one. */
static void keyed_fixed_window(void **s)
{
	struct rlt__redis *rd = mk_keyed("5/h algo=fixed-window key=peer scope=%s", port, NULL);
	struct rlt__key k2, k3;
	(void)s;

	key4(&k2, "127.0.0.2");
	key4(&k3, "127.0.0.3");
	assert_int_equal(count_go_key(rd, &k2, 8, RLT_MODE_NOW), 5);
	assert_int_equal(count_go_key(rd, &k3, 8, RLT_MODE_NOW), 5);
}

/* Refunds go back into the key's lease; a call of a key on a lease is not a round trip. */
static void keyed_refund(void **s)
{
	struct rlt__redis *rd = mk_keyed("1/h burst=20 key=peer scope=%s", port, NULL);
	struct rlt__key k;
	rlt_ns_t at;
	void *st;
	(void)s;

	key4(&k, "127.0.0.9");
	assert_int_equal(rlt__redis_decide_key(rd, &k, rlt__now(), 15, RLT_MODE_NOW, &at, &st),
	                 RLT_GO);
	assert_non_null(st);
	rlt__redis_refund_key(rd, st, at, 15);
	uint64_t rt = rlt__redis_round_trips(rd);
	assert_int_equal(count_go_key(rd, &k, 15, RLT_MODE_NOW), 15);
	assert_int_equal(rlt__redis_round_trips(rd), rt);
}

/* Redis goes away and comes back: meanwhile fallback=local gives each key its own budget in
 * this process (keys on their leases spend those first); one line each way. */
static void keyed_outage_and_recovery(void **s)
{
	struct rlt__redis *rd = mk_keyed("10/s burst=5 key=peer scope=%s", port, NULL);
	struct rlt__key k2, k3;
	(void)s;

	key4(&k2, "127.0.0.2");
	key4(&k3, "127.0.0.3");
	assert_int_equal(count_go_key(rd, &k2, 1, RLT_MODE_NOW), 1);
	nlog_down = nlog_up = 0;
	stop_server();
	int g2 = count_go_key(rd, &k2, 50, RLT_MODE_NOW);
	int g3 = count_go_key(rd, &k3, 50, RLT_MODE_NOW);
	print_message("down: key .2 %d of 50, key .3 %d of 50\n", g2, g3);
	assert_true(g2 >= 5 && g2 <= 6); /* the local burst, plus what its lease held */
	assert_int_equal(g3, 5);
	assert_int_equal(nlog_down, 1);
	assert_int_equal(start_server(), 0);
	sleep_ms(600); /* past the retry interval: Redis' budget (a fresh server) again */
	assert_int_equal(count_go_key(rd, &k3, 8, RLT_MODE_NOW), 5);
	assert_int_equal(nlog_up, 1);
}

/* The fast path's cost: calls on keys with units leased make no round trip. A figure, not a
 * bound (the machine may be loaded). */
static void keyed_fast_path(void **s)
{
	struct rlt__redis *rd = mk_keyed("100000000/s burst=10000000 key=peer scope=%s", port, NULL);
	struct rlt__key k[4];
	char a[16];
	rlt_ns_t at;
	void *st;
	int go = 0;
	(void)s;

	for (int i = 0; i < 4; i++) {
		snprintf(a, sizeof a, "127.0.0.%d", i + 2);
		key4(&k[i], a);
	}
	rlt_ns_t t0 = rlt__now();
	for (int i = 0; i < 400000; i++)
		go += rlt__redis_decide_key(rd, &k[i & 3], rlt__now(), 1, RLT_MODE_NOW, &at, &st) ==
		      RLT_GO;
	double ns = (double)(rlt__now() - t0) / 400000;
	print_message("%d calls on 4 keys: %.0f ns a call, %llu round trips\n", go, ns,
	              (unsigned long long)rlt__redis_round_trips(rd));
	assert_int_equal(go, 400000);
	/* leases of 1,000,000 units (10 ms of the rate): one per key, and the script's load */
	assert_true(rlt__redis_round_trips(rd) <= 4 + 2);
}

/* No server: the fallback per key (local: each key its own burst), one line per outage. */
static void keyed_fallback(void **s)
{
	int closed = rlt_test_free_port();
	struct rlt__redis *local = mk_keyed("10/s burst=5 key=peer scope=%s", closed, NULL);
	struct rlt__redis *deny =
		mk_keyed("10/s burst=5 key=peer fallback=deny scope=%s", closed, NULL);
	struct rlt__key k2, k3;
	(void)s;

	key4(&k2, "127.0.0.2");
	key4(&k3, "127.0.0.3");
	nlog_down = 0;
	rlt_ns_t t0 = rlt__now();
	assert_int_equal(count_go_key(local, &k2, 50, RLT_MODE_NOW), 5);
	assert_int_equal(count_go_key(local, &k3, 50, RLT_MODE_NOW), 5);
	assert_int_equal(count_go_key(deny, &k2, 50, RLT_MODE_NOW), 0);
	assert_true(rlt__now() - t0 < 400 * 1000 * 1000ull);
	assert_int_equal(nlog_down, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(token_lease, setup),
		cmocka_unit_test_setup(two_clients_one_budget, setup),
		cmocka_unit_test_setup(windows_and_log_exact, setup),
		cmocka_unit_test_setup(reserve_spaces_calls, setup),
		cmocka_unit_test_setup(leaky_overflow, setup),
		cmocka_unit_test_setup(give_back, setup),
		cmocka_unit_test_setup(fallbacks_when_unreachable, setup),
		cmocka_unit_test_setup(outage_and_recovery, setup),
		cmocka_unit_test_setup(handler_in_refill, setup),
		cmocka_unit_test(key_names),
		cmocka_unit_test_setup(keyed_budgets, setup),
		cmocka_unit_test_setup(keyed_eviction, setup),
		cmocka_unit_test_setup(keyed_fixed_window, setup),
		cmocka_unit_test_setup(keyed_refund, setup),
		cmocka_unit_test_setup(keyed_fallback, setup),
		cmocka_unit_test_setup(keyed_outage_and_recovery, setup),
		cmocka_unit_test_setup(keyed_fast_path, setup),
	};
	if (system("command -v redis-server >/dev/null") != 0) {
		printf("test_scope_redis: redis-server is not installed (it is in .ci/packages)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
