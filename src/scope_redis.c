/*
 * scope_redis.c: scope=redis://HOST:PORT/NAME (see scope_redis.h for the lease scheme and its
 * accuracy bound).
 *
 * The Lua scripts are in redis_scripts.c, the bounded client that talks to Redis in
 * redis_client.c, a lease per key value (key=) in scope_redis_key.c: this file is the lease
 * scheme of a rule, its connection, its round trip and its fallback.
 *
 * The hooks call this on the program's own thread, so a lease refill is a blocking round trip
 * there: it is bounded by 50 ms for the connect (when there is none), 50 ms for the refill's
 * requests (AUTH and SCRIPT LOAD after a connect, EVALSHA: sent, and their whole replies read),
 * and by a 100 ms bound on waiting for another thread's refill.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clock.h"
#include "engine.h"
#include "engine_lock.h"
#include "hiredis_dl.h"
#include "keytab.h"
#include "policy.h"
#include "redis_client.h"
#include "redis_scripts.h"
#include "scope_redis.h"

void (*rlt__scope_log)(int level, const char *fmt, ...);

#define TIMEOUT_US 50000 /* the connect; then the requests of one refill and their replies */
#define LOCK_WAIT_NS (100 * 1000 * 1000ull)       /* waiting for another thread's refill */
#define RETRY_NS (500 * 1000 * 1000ull)           /* while down: ask again this often at most */

typedef unsigned __int128 u128;

/* ----- per rule (the rule's record: scope_redis.h) ----- */

static struct rlt__redis *all_rules; /* every redis rule, for exit and fork (set at load) */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void say(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int level, const char *fmt, ...)
{
	char line[600];
	va_list ap;

	if (!rlt__scope_log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	rlt__scope_log(level, "%s", line);
}

/* The child of fork() shares the parent's socket and has a copy of its lease: it spends
 * neither (the lease belongs to the parent, and two processes on one socket would read each
 * other's replies). The connection is dropped on its first refill (pid check). */
static void atfork_child(void)
{
	for (struct rlt__redis *rd = all_rules; rd; rd = rd->next) {
		atomic_store(&rd->lease, 0);
		rd->ref[0] = '\0';
		atomic_fetch_add(&rd->gen, 1); /* every key's lease at once, without a scan */
		if (rd->local_keys)
			rlt__keytab_forked(rd->local_keys);
	}
}

static void drop(struct rlt__redis *rd);

/* Give back what is unspent, then close the connections (a leak checker sees none). */
static void at_exit(void)
{
	rlt__redis_return_leases();
	for (struct rlt__redis *rd = all_rules; rd; rd = rd->next)
		if (rd->conn.ctx && rlt__redis_lock_bounded(rd, rlt__now()) == 0) {
			rlt__internal++;
			drop(rd);
			rlt__internal--;
			rlt__lock_release(&rd->lock);
		}
}

static void register_handlers(void)
{
	pthread_atfork(NULL, NULL, atfork_child);
	atexit(at_exit);
}

static uint64_t lease_size_of(const struct rlt_params *p)
{
	u128 n = (u128)p->rate_num * RLT__REDIS_LEASE_NS / p->rate_den_ns;
	uint64_t cap = p->algo == RLT_ALGO_TOKEN || p->algo == RLT_ALGO_LEAKY ? p->burst : p->limit;

	if (n > cap)
		n = cap;
	return n < 1 ? 1 : (uint64_t)n;
}

int rlt__redis_new(const struct rlt_rule *r, struct rlt__redis **out, struct rlt_error *err)
{
	const struct rlt_params *p = &r->params;
	struct rlt__redis *rd;
	size_t size = sizeof *rd + 63;
	struct rlt_error why;

	if (rlt__hiredis_load(&why) != 0) {
		snprintf(err->msg, sizeof err->msg, "%s=\"%.200s\": %.200s", rlt_var_name(r->var),
		         r->text, why.msg);
		return -ENOENT;
	}
	if (r->fallback == RLT_FALLBACK_LOCAL)
		size += rlt_state_size(p);
	rd = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rd == MAP_FAILED) {
		snprintf(err->msg, sizeof err->msg, "%s=\"%.300s\": no memory for the rule's state",
		         rlt_var_name(r->var), r->text);
		return -ENOMEM;
	}
	rlt__lock_init(&rd->lock, 0);
	rd->rule = *r;
	atomic_init(&rd->lease_until, RLT_NS_NEVER);
	rd->lease_size = lease_size_of(p);
	rd->nargs = rlt__redis_script_args(p, &rd->fam, rd->args);
	/* The hash tag keeps a rule's keys in one slot of a Redis cluster. */
	snprintf(rd->key, sizeof rd->key, "rlthrottle:{%s}:%s", r->scope_name,
	         rlt__redis_family_name[rd->fam]);
	if (r->fallback == RLT_FALLBACK_LOCAL) {
		rd->local = (void *)(((uintptr_t)(rd + 1) + 63) & ~(uintptr_t)63);
		if (rlt_state_init(p, rd->local, 0) != 0) {
			munmap(rd, size);
			snprintf(err->msg, sizeof err->msg,
			         "%s=\"%.300s\": cannot set up the fallback state", rlt_var_name(r->var),
			         r->text);
			return -ENOMEM;
		}
	}
	pthread_once(&once, register_handlers);
	rd->next = all_rules;
	all_rules = rd;
	*out = rd;
	return 0;
}

uint64_t rlt__redis_round_trips(const struct rlt__redis *rd)
{
	return atomic_load_explicit(&rd->round_trips, memory_order_relaxed);
}

/* ----- the connection (under rd->lock, with rlt__internal set) ----- */

static void drop(struct rlt__redis *rd)
{
	rlt__redis_close(&rd->conn);
	rd->sha[0] = '\0';
}

static int fail_why(struct rlt__redis *rd, const char *what, const char *detail)
{
	snprintf(rd->why, sizeof rd->why, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
	drop(rd);
	return -1;
}

/* A new connection renews *deadline: the connect had its own 50 ms. */
static int connect_redis(struct rlt__redis *rd, rlt_ns_t *deadline)
{
	const char *argv[3] = {"SCRIPT", "LOAD", rlt__redis_script[rd->fam]};
	struct rlt__resp_reply rep;

	if (rd->conn.ctx && rd->pid != getpid()) {
		/* a forked child: the socket is the parent's; close our copy, make our own */
		drop(rd);
		rd->ref[0] = '\0';
	}
	if (rd->conn.ctx)
		return 0;
	if (rlt__redis_open(&rd->conn, rd->rule.redis_host, rd->rule.redis_port, TIMEOUT_US,
	                    rd->why, sizeof rd->why) != 0)
		return -1;
	rd->pid = getpid();
	*deadline = rlt__now() + (rlt_ns_t)TIMEOUT_US * 1000;
	if (rd->rule.redis_pass[0]) {
		atomic_fetch_add_explicit(&rd->round_trips, 1, memory_order_relaxed);
		if (rlt__redis_auth(rd->conn.fd, rd->rule.redis_user, rd->rule.redis_pass, *deadline,
		                 rd->why, sizeof rd->why) != 0) {
			drop(rd);
			return -1;
		}
	}
	atomic_fetch_add_explicit(&rd->round_trips, 1, memory_order_relaxed);
	if (rlt__redis_roundtrip(rd->conn.fd, 3, argv, *deadline, &rep, rd->why, sizeof rd->why) != 0) {
		drop(rd);
		return -1;
	}
	if (rep.top.type != '$' || rep.top.nil || rep.top.len >= sizeof rd->sha) {
		snprintf(rd->why, sizeof rd->why, "SCRIPT LOAD failed: %.100s",
		         rep.top.type == '-' ? rep.top.str : "unexpected reply");
		drop(rd);
		return -1;
	}
	memcpy(rd->sha, rep.top.str, rep.top.len + 1);
	return 0;
}


/* One EVALSHA (reloading the script once on NOSCRIPT: Redis restarted). 0 or -1 (rd->why). */
int rlt__redis_eval(struct rlt__redis *rd, const char *key, int64_t want, uint64_t min, int reserve,
                const char *ref, struct rlt__redis_grant *g)
{
	char a_want[24], a_min[24], a_maxw[24];
	const char *argv[12];
	struct rlt__resp_reply rep;
	int argc = 0, got = 0;
	/* one bound for the refill's requests, whatever their number */
	rlt_ns_t deadline = rlt__now() + (rlt_ns_t)TIMEOUT_US * 1000;

	snprintf(a_want, sizeof a_want, "%lld", (long long)want);
	snprintf(a_min, sizeof a_min, "%llu", (unsigned long long)min);
	if (rd->rule.max_wait_ns == RLT_NS_NEVER)
		snprintf(a_maxw, sizeof a_maxw, "-1");
	else
		snprintf(a_maxw, sizeof a_maxw, "%llu",
		         (unsigned long long)(rd->rule.max_wait_ns / 1000));
	for (int attempt = 0; attempt < 2 && !got; attempt++) {
		if (connect_redis(rd, &deadline) != 0)
			return -1;
		argc = 0;
		argv[argc++] = "EVALSHA";
		argv[argc++] = rd->sha;
		argv[argc++] = "1";
		argv[argc++] = key;
		argv[argc++] = a_want;
		argv[argc++] = a_min;
		argv[argc++] = reserve ? "1" : "0";
		argv[argc++] = a_maxw;
		argv[argc++] = ref && *ref ? ref : "-";
		for (int i = 0; i < rd->nargs; i++)
			argv[argc++] = rd->args[i];
		atomic_fetch_add_explicit(&rd->round_trips, 1, memory_order_relaxed);
		if (rlt__redis_roundtrip(rd->conn.fd, argc, argv, deadline, &rep, rd->why, sizeof rd->why) != 0) {
			drop(rd);
			return -1;
		}
		if (rep.top.type == '-' && !strncmp(rep.top.str, "NOSCRIPT", 8)) {
			drop(rd); /* reconnects and loads the script again */
			continue;
		}
		got = 1;
	}
	if (!got)
		return fail_why(rd, "the script could not be loaded", NULL);
	if (rep.top.type != '*' || rep.elements < 4 || rep.el[0].type != ':' ||
	    rep.el[1].type != ':' || rep.el[2].type != ':') {
		snprintf(rd->why, sizeof rd->why, "unexpected reply%s%.100s",
		         rep.top.type == '-' ? ": " : "", rep.top.type == '-' ? rep.top.str : "");
		return -1;
	}
	g->units = rep.el[0].integer;
	g->wait_us = rep.el[1].integer;
	g->valid_us = rep.el[2].integer;
	g->ref[0] = '\0';
	if (rep.el[3].type == '$' && !rep.el[3].nil && rep.el[3].len < sizeof g->ref)
		memcpy(g->ref, rep.el[3].str, rep.el[3].len + 1);
	return 0;
}

/* ----- deciding ----- */

static int lapsed(struct rlt__redis *rd, rlt_ns_t now)
{
	return now >= atomic_load_explicit(&rd->lease_until, memory_order_relaxed);
}

/* The hot path: takes cost units from the lease. 1 when taken (*at: when the call may go). */
static int take(struct rlt__redis *rd, rlt_ns_t now, uint64_t cost, rlt_ns_t *at)
{
	if (lapsed(rd, now))
		return 0;
	/* acquire: pairs with the refill's release, so lease_from is at least the batch's */
	return rlt__redis_lease_take(&rd->lease, &rd->lease_from, now, cost, at);
}

enum rlt_verdict rlt__redis_fallback(struct rlt__redis *rd, rlt_ns_t now, uint64_t cost,
                                 enum rlt_mode mode, rlt_ns_t *at)
{
	switch (rd->rule.fallback) {
	case RLT_FALLBACK_ALLOW:
		*at = now;
		return RLT_GO;
	case RLT_FALLBACK_DENY:
		*at = RLT_NS_NEVER;
		return RLT_DENY;
	case RLT_FALLBACK_LOCAL:
	default:
		return rlt_decide(&rd->rule.params, rd->local, now, cost, mode, at);
	}
}

static const char *fallback_name(enum rlt_fallback f)
{
	return f == RLT_FALLBACK_ALLOW ? "allow" : f == RLT_FALLBACK_DENY ? "deny" : "local";
}

void rlt__redis_went_down(struct rlt__redis *rd, rlt_ns_t now)
{
	atomic_store(&rd->retry_at, now + RETRY_NS);
	if (atomic_exchange(&rd->down, 1) == 0)
		say(1, "%s: redis %s:%u does not answer (%s): fallback=%s until it does",
		    rlt_var_name(rd->rule.var), rd->rule.redis_host, (unsigned)rd->rule.redis_port,
		    rd->why, fallback_name(rd->rule.fallback));
}

void rlt__redis_came_back(struct rlt__redis *rd)
{
	if (atomic_exchange(&rd->down, 0))
		say(1, "%s: redis %s:%u answers again: the shared budget is back",
		    rlt_var_name(rd->rule.var), rd->rule.redis_host, (unsigned)rd->rule.redis_port);
}

/* 0 when held. Held by this very thread (a signal handler interrupted its refill) it is not
 * waited for at all: the caller takes the fallback. */
int rlt__redis_lock_bounded(struct rlt__redis *rd, rlt_ns_t now)
{
	int rc = rlt__lock_take_until(&rd->lock, now + LOCK_WAIT_NS);

	if (rc == RLT_LOCK_SELF)
		return -EDEADLK;
	return rc < 0 ? rc : 0;
}

/* The slow path: the lease is short. One round trip for the next lease, or the fallback. */
static enum rlt_verdict refill_once(struct rlt__redis *rd, rlt_ns_t now, uint64_t cost,
                               enum rlt_mode mode, rlt_ns_t *at)
{
	struct rlt__redis_grant g;
	enum rlt_verdict v;
	uint64_t have, min, want;
	int rc;

	if (atomic_load_explicit(&rd->down, memory_order_relaxed) &&
	    now < atomic_load_explicit(&rd->retry_at, memory_order_relaxed))
		return rlt__redis_fallback(rd, now, cost, mode, at);
	if (rlt__redis_lock_bounded(rd, now) != 0)
		return rlt__redis_fallback(rd, now, cost, mode, at); /* a refill stuck elsewhere: bounded */
	/* another thread may have refilled while we waited */
	if (take(rd, now, cost, at)) {
		rlt__lock_release(&rd->lock);
		return *at > now ? RLT_WAIT : RLT_GO;
	}
	if (atomic_load(&rd->down) && now < atomic_load(&rd->retry_at)) {
		rlt__lock_release(&rd->lock);
		return rlt__redis_fallback(rd, now, cost, mode, at);
	}
	if (lapsed(rd, now))
		atomic_store(&rd->lease, 0);
	have = atomic_load(&rd->lease);
	min = cost > have ? cost - have : 1;
	want = rd->lease_size > min ? rd->lease_size : min;

	rlt__internal++;
	rc = rlt__redis_eval(rd, rd->key, (int64_t)want, min, mode == RLT_MODE_RESERVE, NULL, &g);
	rlt__internal--;
	rlt_ns_t after = rlt__now();
	if (rc != 0) {
		rlt__redis_went_down(rd, after);
		rlt__lock_release(&rd->lock);
		return rlt__redis_fallback(rd, now, cost, mode, at);
	}
	rlt__redis_came_back(rd);
	if (g.units <= 0) {
		*at = g.wait_us < 0 ? RLT_NS_NEVER : after + (rlt_ns_t)g.wait_us * 1000;
		/* A denial says when `min` would conform: a rejected call asking again before then
		 * would only cost a round trip for the same answer. At most one lease's time, so
		 * units other processes give back meanwhile are not missed for long. */
		if (mode == RLT_MODE_NOW && cost <= rd->lease_size) {
			rlt_ns_t cap = after + RLT__REDIS_LEASE_NS;
			atomic_store_explicit(&rd->deny_until, *at < cap ? *at : cap,
			                      memory_order_relaxed);
		}
		rlt__lock_release(&rd->lock);
		return RLT_DENY;
	}
	snprintf(rd->ref, sizeof rd->ref, "%s", g.ref);
	rlt__redis_lease_grant(&rd->lease, &rd->lease_from, &rd->lease_until, &g, now, after);
	v = take(rd, now, cost, at) ? (*at > now ? RLT_WAIT : RLT_GO) : RLT_DENY;
	if (v == RLT_DENY)
		*at = RLT_NS_NEVER; /* the grant fell short of the call (a lapse in between) */
	rlt__lock_release(&rd->lock);
	return v;
}

/* Set while this thread refills (any rule). A call that finds it set comes from a signal
 * handler that interrupted the refill: the round trip it would make runs hiredis, which is not
 * re-entrant (the interrupted refill is inside it, maybe inside malloc), so it takes the
 * fallback without touching the connection or waiting for the lock. */
#ifndef RLT_NOLIBC
_Thread_local int rlt__redis_refilling __attribute__((tls_model("initial-exec")));
#endif

static enum rlt_verdict refill(struct rlt__redis *rd, rlt_ns_t now, uint64_t cost,
                               enum rlt_mode mode, rlt_ns_t *at)
{
	enum rlt_verdict v;

	if (rlt__redis_refilling)
		return rlt__redis_fallback(rd, now, cost, mode, at);
	rlt__redis_refilling++;
	v = refill_once(rd, now, cost, mode, at);
	rlt__redis_refilling--;
	return v;
}

enum rlt_verdict rlt__redis_decide(struct rlt__redis *rd, rlt_ns_t now, uint64_t cost,
                                   enum rlt_mode mode, rlt_ns_t *at)
{
	if (cost == 0) {
		*at = now;
		return RLT_GO;
	}
	if (take(rd, now, cost, at))
		return *at > now ? RLT_WAIT : RLT_GO;
	if (mode == RLT_MODE_NOW) {
		rlt_ns_t until = atomic_load_explicit(&rd->deny_until, memory_order_relaxed);
		if (now < until && !atomic_load_explicit(&rd->down, memory_order_relaxed)) {
			*at = until;
			return RLT_DENY;
		}
	}
	return refill(rd, now, cost, mode, at);
}

/* Unused units go back to the lease they came from, or to the local state while the fallback
 * decides (a refund cannot tell which of the two granted it; this errs by one call at most). */
void rlt__redis_refund(struct rlt__redis *rd, rlt_ns_t at, uint64_t units)
{
	if (atomic_load_explicit(&rd->down, memory_order_relaxed)) {
		if (rd->local)
			rlt_refund(&rd->rule.params, rd->local, at, units);
		return;
	}
	if (!lapsed(rd, rlt__now()))
		atomic_fetch_add_explicit(&rd->lease, units, memory_order_relaxed);
}

uint64_t rlt__redis_available(struct rlt__redis *rd, rlt_ns_t now)
{
	if (atomic_load_explicit(&rd->down, memory_order_relaxed) && rd->local)
		return rlt_available(&rd->rule.params, rd->local, now);
	return lapsed(rd, now) ? 0 : atomic_load_explicit(&rd->lease, memory_order_relaxed);
}

void rlt__redis_return_leases(void)
{
	for (struct rlt__redis *rd = all_rules; rd; rd = rd->next) {
		struct rlt__redis_grant g;
		uint64_t n;

		if (!rd->conn.ctx || rd->pid != getpid() || atomic_load(&rd->down))
			continue; /* never connected here, or not answering: nothing to wait for */
		if (rlt__redis_lock_bounded(rd, rlt__now()) != 0)
			continue;
		n = lapsed(rd, rlt__now()) ? 0 : atomic_exchange(&rd->lease, 0);
		if (n) {
			rlt__internal++;
			rlt__redis_eval(rd, rd->key, -(int64_t)n, 0, 0, rd->ref, &g);
			rlt__internal--;
		}
		rlt__lock_release(&rd->lock);
	}
}
