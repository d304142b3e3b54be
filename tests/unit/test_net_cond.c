/* test_net_cond.c: the network conditions' decisions (net_cond.c), pure: the clock is a number
 * the test moves. A socket's sequence is the same on every run and whatever thread draws, a
 * forked copy continues it; loss near its share; slices in their range; a reset or hang due to
 * the nanosecond or the byte; connect faults; the matchers with their negations. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "testutil.h"
#include "net.h"

#define MS 1000000ull
#define SEC 1000000000ull

static struct rlt__net_set set_of(const char *v)
{
	struct rlt__net_set s;
	struct rlt_error e = {{0}};
	if (rlt__net_parse(v, &s, &e) != 0)
		fail_msg("%s: %s", v, e.msg);
	return s;
}

static struct rlt__peer inet(const char *addr, uint16_t port)
{
	struct rlt__peer p = {.af = AF_INET, .port = port};
	inet_pton(AF_INET, addr, p.addr);
	return p;
}

static void sock(struct rlt__net_sock *s, const struct rlt__net_set *set, int stream,
                 struct rlt__peer peer, rlt_ns_t now)
{
	rlt__net_sock_open(s, peer.af, stream, &peer, 1234, 5, now);
	rlt__net_sock_choose(s, set, 1);
}

/* The same seed and key give the same draws; another key or seed others. */
static void sequence_is_reproducible(void **st)
{
	(void)st;
	struct rlt__net_rng a, b, c;
	rlt__net_rng_init(&a, 42, 7);
	rlt__net_rng_init(&b, 42, 7);
	rlt__net_rng_init(&c, 42, 8);
	int same_c = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = rlt__net_draw(&a), y = rlt__net_draw(&b), z = rlt__net_draw(&c);
		assert_int_equal(x, y);
		same_c += x == z;
	}
	assert_true(same_c < 2);
	/* a copy (a forked child's memory) goes on where the parent stood */
	struct rlt__net_rng child;
	memcpy(&child, &a, sizeof a);
	assert_int_equal(rlt__net_draw(&child), rlt__net_draw(&b));
}

struct drawer {
	struct rlt__net_rng *r;
	uint64_t got[2000];
	uint64_t idx[2000];
};

/* Threads share one socket's sequence: whichever thread takes the n-th draw gets the n-th
 * value, so the values drawn together are the sequence, each once. */
static void *draw_many(void *p)
{
	struct drawer *d = p;
	for (int i = 0; i < 2000; i++)
		d->got[i] = rlt__net_draw(d->r);
	return NULL;
}

static void threads_share_the_sequence(void **st)
{
	(void)st;
	static struct drawer d[2];
	struct rlt__net_rng shared, ref;
	pthread_t t[2];
	rlt__net_rng_init(&shared, 9, 3);
	rlt__net_rng_init(&ref, 9, 3);
	for (int i = 0; i < 2; i++) {
		d[i].r = &shared;
		pthread_create(&t[i], NULL, draw_many, &d[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	static uint64_t want[4000];
	for (int i = 0; i < 4000; i++)
		want[i] = rlt__net_draw(&ref);
	/* each value drawn is one of the first 4000 of the sequence, none twice */
	static unsigned char seen[4000];
	memset(seen, 0, sizeof seen);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 2000; i++) {
			int found = -1;
			for (int j = 0; j < 4000 && found < 0; j++)
				if (want[j] == d[k].got[i] && !seen[j])
					found = j;
			assert_true(found >= 0);
			seen[found] = 1;
		}
}

static void loss_near_its_share(void **st)
{
	(void)st;
	struct rlt__net_set set = set_of("loss=10%");
	struct rlt__net_sock s;
	int drops = 0, again = 0;
	sock(&s, &set, 0, inet("127.0.0.1", 9000), 0);
	for (int i = 0; i < 100000; i++)
		drops += rlt__net_drop(&set, &s, RLT_NET_IN, NULL);
	assert_in_range(drops, 9500, 10500);
	/* the same socket opened again with the same seed drops the same datagrams */
	struct rlt__net_sock s2;
	sock(&s2, &set, 0, inet("127.0.0.1", 9000), 0);
	for (int i = 0; i < 100000; i++)
		again += rlt__net_drop(&set, &s2, RLT_NET_IN, NULL);
	assert_int_equal(drops, again);
	/* dir=out leaves what comes in alone; 0% and 100% are exact */
	struct rlt__net_set out = set_of("loss=100% dir=out"), zero = set_of("loss=0%");
	sock(&s, &out, 0, inet("127.0.0.1", 9000), 0);
	assert_int_equal(rlt__net_drop(&out, &s, RLT_NET_IN, NULL), 0);
	assert_int_equal(rlt__net_drop(&out, &s, RLT_NET_OUT, NULL), 1);
	sock(&s, &zero, 0, inet("127.0.0.1", 9000), 0);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(rlt__net_drop(&zero, &s, RLT_NET_OUT, NULL), 0);
}

/* An unconnected datagram socket: each datagram matched by its own address. */
static void loss_matches_each_datagram(void **st)
{
	(void)st;
	struct rlt__net_set set = set_of("loss=100% port!=53");
	struct rlt__net_sock s;
	struct rlt__peer dns = inet("127.0.0.1", 53), other = inet("127.0.0.1", 9999);
	rlt__net_sock_open(&s, AF_INET, 0, NULL, 1, 3, 0);
	rlt__net_sock_choose(&s, &set, 1);
	assert_int_equal(rlt__net_drop(&set, &s, RLT_NET_OUT, &dns), 0);
	assert_int_equal(rlt__net_drop(&set, &s, RLT_NET_OUT, &other), 1);
	assert_int_equal(rlt__net_drop(&set, &s, RLT_NET_OUT, NULL), 0); /* no address: no port */
}

/* An unconnected datagram socket: a latency with peer= or port= applies to it, and each
 * datagram is matched by its source (the front asks rlt__net_find_from). */
static void latency_matches_each_datagram(void **st)
{
	(void)st;
	struct rlt__net_set set = set_of("latency=100ms port!=53; latency=200ms family=unix");
	struct rlt__net_sock s, tcp;
	struct rlt__peer dns = inet("127.0.0.1", 53), other = inet("127.0.0.1", 9999);
	rlt__net_sock_open(&s, AF_INET, 0, NULL, 1, 3, 0);
	rlt__net_sock_choose(&s, &set, 1);
	assert_int_equal(s.applies, 1); /* the family is the socket's: the unix one never applies */
	assert_null(rlt__net_find_from(&set, &s, RLT_NET_LATENCY, RLT_NET_IN, &dns));
	assert_ptr_equal(rlt__net_find_from(&set, &s, RLT_NET_LATENCY, RLT_NET_IN, &other), &set.c[0]);
	/* a stream without its peer yet is chosen again once connected: nothing before */
	rlt__net_sock_open(&tcp, AF_INET, 1, NULL, 1, 4, 0);
	rlt__net_sock_choose(&tcp, &set, 1);
	assert_int_equal(tcp.applies, 0);
}

/* latency's p= on a datagram socket chooses each datagram, not the socket: every socket has
 * it, and about that share of its datagrams is delayed (a stream's connection is chosen once) */
static void latency_p_per_datagram(void **st)
{
	(void)st;
	struct rlt__net_set set = set_of("latency=100ms p=30%");
	struct rlt__peer peer = inet("127.0.0.1", 9999);
	const rlt_ns_t at = 1000 * RLT_NS_PER_SEC, ms = 1000000;
	int sockets = 0, delayed = 0, streams = 0;
	for (int fd = 0; fd < 1000; fd++) {
		struct rlt__net_sock s, t;
		rlt__net_sock_open(&s, AF_INET, 0, &peer, 5, fd, 0);
		rlt__net_sock_choose(&s, &set, 1);
		sockets += s.applies & 1;
		rlt__net_sock_open(&t, AF_INET, 1, &peer, 5, fd, 0);
		rlt__net_sock_choose(&t, &set, 1);
		streams += t.applies & 1;
	}
	assert_int_equal(sockets, 1000);
	assert_in_range(streams, 240, 360);
	struct rlt__net_sock s;
	rlt__net_sock_open(&s, AF_INET, 0, &peer, 5, 3, 0);
	rlt__net_sock_choose(&s, &set, 1);
	for (int i = 0; i < 10000; i++) {
		rlt_ns_t due = rlt__net_datagram_due(&set.c[0], &s.rng, at);
		assert_true(due == at || due == at + 100 * ms); /* left out, or the whole DUR */
		delayed += due != at;
	}
	assert_in_range(delayed, 2800, 3200);
}

static void slices_in_range(void **st)
{
	(void)st;
	struct rlt__net_set set = set_of("slice=3-9"), fixed = set_of("slice=100 dir=in");
	struct rlt__net_sock s;
	int seen[10] = {0};
	sock(&s, &set, 1, inet("127.0.0.1", 80), 0);
	for (int i = 0; i < 10000; i++) {
		uint64_t n = rlt__net_slice(&set, &s, RLT_NET_OUT, 1000);
		assert_in_range(n, 3, 9);
		seen[n]++;
	}
	for (int k = 3; k <= 9; k++)
		assert_true(seen[k] > 1000); /* every size comes, about evenly */
	assert_int_equal(rlt__net_slice(&set, &s, RLT_NET_IN, 2), 2); /* never more than asked */
	sock(&s, &fixed, 1, inet("127.0.0.1", 80), 0);
	assert_int_equal(rlt__net_slice(&fixed, &s, RLT_NET_IN, 1000), 100);
	assert_int_equal(rlt__net_slice(&fixed, &s, RLT_NET_OUT, 1000), 1000);
}

static void reset_after_time_to_the_ns(void **st)
{
	(void)st;
	struct rlt__net_set set = set_of("reset after=250ms");
	struct rlt__net_sock s;
	uint64_t room;
	rlt_ns_t t0 = 5 * SEC;
	sock(&s, &set, 1, inet("127.0.0.1", 80), t0);
	assert_int_equal(rlt__net_reset_due(&set, &s, t0, &room), 0);
	assert_int_equal(room, UINT64_MAX);
	assert_int_equal(rlt__net_reset_due(&set, &s, t0 + 250 * MS - 1, &room), 0);
	assert_int_equal(rlt__net_reset_due(&set, &s, t0 + 250 * MS, &room), 1);
	/* once done, never again: the kernel answers from then on */
	atomic_store(&s.ended, 1);
	assert_int_equal(rlt__net_reset_due(&set, &s, t0 + SEC, &room), 0);
	/* a datagram socket is never reset */
	sock(&s, &set, 0, inet("127.0.0.1", 80), t0);
	assert_int_equal(rlt__net_reset_due(&set, &s, t0 + SEC, &room), 0);
	/* reset with no after: at once */
	struct rlt__net_set now = set_of("reset port=5432");
	sock(&s, &now, 1, inet("127.0.0.1", 5432), t0);
	assert_int_equal(rlt__net_reset_due(&now, &s, t0, &room), 1);
	sock(&s, &now, 1, inet("127.0.0.1", 5433), t0);
	assert_int_equal(rlt__net_reset_due(&now, &s, t0, &room), 0);
}

static void reset_after_bytes_to_the_byte(void **st)
{
	(void)st;
	struct rlt__net_set set = set_of("reset after=1MB");
	struct rlt__net_sock s;
	uint64_t room;
	sock(&s, &set, 1, inet("127.0.0.1", 80), 0);
	assert_int_equal(rlt__net_reset_due(&set, &s, 0, &room), 0);
	assert_int_equal(room, 1000000);
	atomic_store(&s.moved, 999999);
	assert_int_equal(rlt__net_reset_due(&set, &s, 0, &room), 0);
	assert_int_equal(room, 1);
	atomic_store(&s.moved, 1000000);
	assert_int_equal(rlt__net_reset_due(&set, &s, 0, &room), 1);
}

static void hang_and_close(void **st)
{
	(void)st;
	struct rlt__net_set set = set_of("hang after=1s close=2s");
	struct rlt__net_sock s;
	uint64_t room;
	rlt_ns_t until, t0 = 10 * SEC;
	sock(&s, &set, 1, inet("127.0.0.1", 80), t0);
	assert_int_equal(rlt__net_hang_state(&set, &s, t0 + SEC - 1, &room, &until), 0);
	assert_int_equal(rlt__net_hang_state(&set, &s, t0 + SEC + 5, &room, &until), 1);
	assert_int_equal(until, t0 + 3 * SEC + 5); /* close= counts from when the hang began */
	assert_int_equal(rlt__net_hang_state(&set, &s, t0 + 3 * SEC + 4, &room, &until), 1);
	assert_int_equal(rlt__net_hang_state(&set, &s, t0 + 3 * SEC + 5, &room, &until), 2);
	struct rlt__net_set bytes = set_of("hang after=100");
	sock(&s, &bytes, 1, inet("127.0.0.1", 80), t0);
	assert_int_equal(rlt__net_hang_state(&bytes, &s, t0, &room, &until), 0);
	assert_int_equal(room, 100);
	atomic_store(&s.moved, 100);
	assert_int_equal(rlt__net_hang_state(&bytes, &s, t0, &room, &until), 1);
	assert_int_equal(until, RLT_NS_NEVER);
}

static void connect_faults(void **st)
{
	(void)st;
	struct rlt__net_set set = set_of("connect=refuse port=80; connect=timeout after=2s");
	struct rlt__net_rng r;
	struct rlt__peer web = inet("127.0.0.1", 80), db = inet("127.0.0.1", 5432);
	uint64_t after = 0;
	rlt__net_rng_init(&r, 1, 1);
	assert_int_equal(rlt__net_connect_fault(&set, AF_INET, &web, &r, &after), RLT_NET_REFUSE);
	assert_int_equal(rlt__net_connect_fault(&set, AF_INET, &db, &r, &after), RLT_NET_TIMEOUT);
	assert_int_equal(after, 2 * SEC);
	struct rlt__peer u = {.af = AF_UNIX};
	assert_int_equal(rlt__net_connect_fault(&set, AF_UNIX, &u, &r, &after), -1);
	/* p=: about that share of attempts */
	struct rlt__net_set half = set_of("connect=refuse p=50%");
	int n = 0;
	for (int i = 0; i < 10000; i++)
		n += rlt__net_connect_fault(&half, AF_INET, &web, &r, &after) == RLT_NET_REFUSE;
	assert_in_range(n, 4700, 5300);
}

static void matchers_and_negations(void **st)
{
	(void)st;
	struct rlt__net_set set = set_of("reset peer=10.0.0.0/8; reset peer!=10.0.0.0/8; "
	                                 "reset family=unix; reset family!=inet; reset family=all; "
	                                 "reset port=100-200; reset port!=100-200");
	struct rlt__peer in10 = inet("10.9.8.7", 150), out10 = inet("11.0.0.1", 300);
	struct rlt__peer ux = {.af = AF_UNIX};
	int want_in10[] = {1, 0, 0, 0, 1, 1, 0};
	int want_out10[] = {0, 1, 0, 0, 1, 0, 1};
	int want_ux[] = {0, 0, 1, 1, 1, 0, 0};
	for (unsigned i = 0; i < set.n; i++) {
		assert_int_equal(rlt__net_matches(&set.c[i], AF_INET, &in10), want_in10[i]);
		assert_int_equal(rlt__net_matches(&set.c[i], AF_INET, &out10), want_out10[i]);
		assert_int_equal(rlt__net_matches(&set.c[i], AF_UNIX, &ux), want_ux[i]);
	}
	/* p= chosen once per connection, reproducibly */
	struct rlt__net_set some = set_of("slice=1 p=30%");
	int chosen = 0;
	for (int fd = 0; fd < 10000; fd++) {
		struct rlt__net_sock s;
		rlt__net_sock_open(&s, AF_INET, 1, &in10, 77, fd, 0);
		rlt__net_sock_choose(&s, &some, 1);
		chosen += s.applies & 1;
	}
	assert_in_range(chosen, 2800, 3200);
}

/* latency's time: DUR after the arrival, within the jitter (uniform: all of it reached; normal:
 * about 68% within one deviation), never before 0 nor before the floor (a stream's order). */
static void latency_times(void **st)
{
	(void)st;
	struct rlt__net_set s;
	struct rlt_error e;
	struct rlt__net_rng rng;
	assert_int_equal(rlt__net_parse("latency=100ms; latency=100ms jitter=40ms; "
	                                "latency=100ms jitter=20ms dist=normal; latency=1ms jitter=5ms",
	                                &s, &e), 0);
	rlt__net_rng_init(&rng, 1, 1);
	const rlt_ns_t at = 1000 * RLT_NS_PER_SEC, ms = 1000000;
	assert_int_equal(rlt__net_latency_due(&s.c[0], &rng, at, 0), at + 100 * ms);
	/* a floor later than the time: the floor (a stream's data ahead) */
	assert_int_equal(rlt__net_latency_due(&s.c[0], &rng, at, at + 150 * ms), at + 150 * ms);
	rlt_ns_t lo = UINT64_MAX, hi = 0;
	unsigned within = 0;
	for (int i = 0; i < 10000; i++) {
		rlt_ns_t u = rlt__net_latency_due(&s.c[1], &rng, at, 0) - at;
		assert_true(u >= 60 * ms && u <= 140 * ms);
		lo = u < lo ? u : lo;
		hi = u > hi ? u : hi;
		rlt_ns_t n = rlt__net_latency_due(&s.c[2], &rng, at, 0) - at;
		within += n >= 80 * ms && n <= 120 * ms;
		/* 1 ms +- 5 ms: cut at 0, never before the arrival */
		assert_true(rlt__net_latency_due(&s.c[3], &rng, at, 0) >= at);
	}
	assert_true(lo < 61 * ms && hi > 139 * ms);
	assert_true(within > 6500 && within < 7100); /* 68.3% of 10000 */
}

/* What this build cannot apply is refused whole, at load and by a set, and nothing changes. */
static void unsupported_refused(void **st)
{
	(void)st;
	struct rlt_error e;
	uint32_t gen0, gen1;
	assert_int_equal(rlt__net_set_text("loss=1%", &e), 0);
	const struct rlt__net_set *before = rlt__net_now(&gen0);
	assert_int_equal(before->n, 1);
	assert_int_equal(rlt__net_set_text("loss=2%; latency=50ms dir=out", &e), -EINVAL);
	assert_non_null(strstr(e.msg, "RLT_NET=\"latency=50ms dir=out\": latency dir=out (or both) "
	                              "is not built yet"));
	assert_ptr_equal(rlt__net_now(&gen1), before);
	assert_int_equal(gen0, gen1);
	assert_int_equal(rlt__net_load("latency=5ms dir=both", &e), -EINVAL);
	assert_int_equal(rlt__net_load("latency=5ms", &e), 0); /* inbound: built */
	assert_int_equal(rlt__net_set_text("", &e), 0);
	assert_int_equal(rlt__net_now(&gen1)->n, 0);
	assert_string_equal(e.msg, "RLT_NET: no condition");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sequence_is_reproducible),
		cmocka_unit_test(threads_share_the_sequence),
		cmocka_unit_test(loss_near_its_share),
		cmocka_unit_test(loss_matches_each_datagram),
		cmocka_unit_test(latency_matches_each_datagram),
		cmocka_unit_test(latency_p_per_datagram),
		cmocka_unit_test(slices_in_range),
		cmocka_unit_test(reset_after_time_to_the_ns),
		cmocka_unit_test(reset_after_bytes_to_the_byte),
		cmocka_unit_test(hang_and_close),
		cmocka_unit_test(connect_faults),
		cmocka_unit_test(matchers_and_negations),
		cmocka_unit_test(latency_times),
		cmocka_unit_test(unsupported_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
