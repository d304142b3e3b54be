/*
 * scope_redis.c: scope=redis://HOST:PORT/NAME (see scope_redis.h for the lease scheme and its
 * accuracy bound).
 *
 * Every script takes the same arguments and gives the same answer, so that the client does not
 * care which algorithm it leases from:
 *   KEYS[1]  the rule's key, "rlthrottle:{NAME}:<family>"
 *   ARGV[1]  want: units asked for (a lease); negative: give -want units back
 *   ARGV[2]  min: the fewest units worth having (the call's own cost, less what is leased)
 *   ARGV[3]  1: reserve (action=delay: a later slot within max-wait is fine), 0: now or nothing
 *   ARGV[4]  max-wait in us, -1 for none
 *   ARGV[5]  on a give-back, the lease it belongs to (the ref the grant returned)
 *   ARGV[6..] the family's params
 * and answer {granted, wait_us, valid_us, ref}: granted 0 is a denial and wait_us then says
 * when min would conform (-1: never); valid_us -1 means the units do not lapse. Time is Redis'
 * TIME in microseconds (doubles hold it exactly for centuries), never a client's clock.
 *
 * The hooks call this on the program's own thread, so a lease refill is a blocking round trip
 * there: it is bounded by the 50 ms timeout of the connect and of each reply, and by a 100 ms
 * bound on waiting for another thread's refill.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>


#include "clock.h"
#include "engine.h"
#include "hiredis_dl.h"
#include "policy.h"
#include "scope_redis.h"

_Thread_local int rlt__internal __attribute__((tls_model("initial-exec")));

void (*rlt__scope_log)(int level, const char *fmt, ...);

#define TIMEOUT_US 50000                         /* connect and each reply */
#define LOCK_WAIT_NS (100 * 1000 * 1000ull)       /* waiting for another thread's refill */
#define RETRY_NS (500 * 1000 * 1000ull)           /* while down: ask again this often at most */
#define LEASE_NS (10 * 1000 * 1000ull)            /* a lease is this much of the rate */

typedef unsigned __int128 u128;

/* ----- the scripts ----- */

#define LUA_PROLOGUE                                                                             \
	"local t = redis.call('TIME')\n"                                                         \
	"local now = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"                                \
	"local want, min = tonumber(ARGV[1]), tonumber(ARGV[2])\n"                               \
	"local reserve, maxw = ARGV[3] == '1', tonumber(ARGV[4])\n"                              \
	"local function late(w) return maxw >= 0 and w > maxw end\n"

/* Token and leaky bucket: GCRA on one key holding the TAT (us). ARGV[6] T: us per unit,
 * ARGV[7] tau: the burst in us, ARGV[8] 1 for leaky. */
static const char lua_gcra[] =
	LUA_PROLOGUE
	"local T, tau, leaky = tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8] == '1'\n"
	"local tat = tonumber(redis.call('GET', KEYS[1]) or '0')\n"
	"local function store(v)\n"
	"  if v > now then\n"
	"    redis.call('SET', KEYS[1], string.format('%.3f', v), 'PX',\n"
	"               math.ceil((v - now) / 1000) + 1000)\n"
	"  else redis.call('DEL', KEYS[1]) end\n"
	"end\n"
	"if want < 0 then store(tat + want * T) return {0, 0, -1, ''} end\n"
	"local base = math.max(tat, now)\n"
	"if leaky then\n"
	"  if base - now > tau then return {0, math.ceil(base - tau - now), -1, ''} end\n"
	"  if base > now and (not reserve or late(base - now)) then\n"
	"    return {0, math.ceil(base - now), -1, ''} end\n"
	"  store(base + want * T)\n"
	"  return {want, math.ceil(base - now), -1, ''}\n"
	"end\n"
	"local room = math.floor((now + tau - base) / T + 1e-9)\n"
	"if room >= min then\n"
	"  local g = math.min(want, room)\n"
	"  store(base + g * T)\n"
	"  return {g, 0, -1, ''}\n"
	"end\n"
	"if reserve then\n"
	"  for _, n in ipairs({want, min}) do\n"
	"    local go = base + n * T - tau\n"
	"    if not late(go - now) then store(base + n * T)\n"
	"      return {n, math.ceil(go - now), -1, ''} end\n"
	"  end\n"
	"end\n"
	"return {0, math.ceil(base + min * T - tau - now), -1, ''}\n";

/* Fixed window: one counter per window, KEYS[1]:<window>, expiring after it. ARGV[6] W (us),
 * ARGV[7] the limit. A reservation takes the first later window with room. */
static const char lua_fixed[] =
	LUA_PROLOGUE
	"local W, L = tonumber(ARGV[6]), tonumber(ARGV[7])\n"
	"local w = math.floor(now / W)\n"
	"if want < 0 then\n"
	"  local k = KEYS[1] .. ':' .. ARGV[5]\n"
	"  local c = tonumber(redis.call('GET', k) or '0')\n"
	"  if c > 0 then redis.call('DECRBY', k, math.min(c, -want)) end\n"
	"  return {0, 0, -1, ''}\n"
	"end\n"
	"for i = 0, 64 do\n"
	"  local start = (w + i) * W\n"
	"  local wait = math.max(0, start - now)\n"
	"  if i > 0 and (not reserve or late(wait)) then break end\n"
	"  local id = string.format('%.0f', w + i)\n"
	"  local k = KEYS[1] .. ':' .. id\n"
	"  local room = L - tonumber(redis.call('GET', k) or '0')\n"
	"  if room >= min then\n"
	"    local g = math.min(want, room)\n"
	"    redis.call('INCRBY', k, g)\n"
	"    redis.call('PEXPIRE', k, math.ceil((start + W - now) / 1000) + 1000)\n"
	"    return {g, math.ceil(wait), math.floor(start + W - now), id}\n"
	"  end\n"
	"end\n"
	"return {0, math.ceil((w + 1) * W - now), -1, ''}\n";

/* Sliding window: a hash of sub-window counters (field = sub-window number). ARGV[6] S: a
 * sub-window in us, ARGV[7] the limit. At t in sub-window x, r into it, the estimate is
 * sum(x-9..x) + count(x-10) * (S - r) / S. A reservation looks at the next 21 sub-windows,
 * and inside each for the moment the oldest has weighed down enough. */
static const char lua_sliding[] =
	LUA_PROLOGUE
	"local S, L, N = tonumber(ARGV[6]), tonumber(ARGV[7]), 10\n"
	"local function get(i)\n"
	"  return tonumber(redis.call('HGET', KEYS[1], string.format('%.0f', i)) or '0') end\n"
	"if want < 0 then\n"
	"  local c = tonumber(redis.call('HGET', KEYS[1], ARGV[5]) or '0')\n"
	"  if c > 0 then redis.call('HINCRBY', KEYS[1], ARGV[5], -math.min(c, -want)) end\n"
	"  return {0, 0, -1, ''}\n"
	"end\n"
	"local function at(tt)\n"
	"  local xi = math.floor(tt / S)\n"
	"  local f = 0\n"
	"  for i = 0, N - 1 do f = f + get(xi - i) end\n"
	"  return xi, f, get(xi - N), tt - xi * S\n"
	"end\n"
	"local function grant(tt, xi, room)\n"
	"  local g = math.min(want, room)\n"
	"  local id = string.format('%.0f', xi)\n"
	"  redis.call('HINCRBY', KEYS[1], id, g)\n"
	"  redis.call('PEXPIRE', KEYS[1], math.ceil((tt - now + (N + 1) * S) / 1000) + 1000)\n"
	"  if redis.call('HLEN', KEYS[1]) > 4 * N then\n"
	"    for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do\n"
	"      if tonumber(f) < math.floor(now / S) - N then redis.call('HDEL', KEYS[1], f) end\n"
	"    end\n"
	"  end\n"
	"  return {g, math.ceil(tt - now), math.floor((xi + 1) * S - now), id}\n"
	"end\n"
	"local x, f, old, r = at(now)\n"
	"local room = math.floor(L - f - old * (S - r) / S + 1e-9)\n"
	"if room >= min then return grant(now, x, room) end\n"
	"if reserve then\n"
	"  for k = 1, 21 do\n"
	"    local t0 = (x + k) * S\n"
	"    if late(t0 - now) then break end\n"
	"    local xi, fk, ok = at(t0)\n"
	"    local tt, rm = t0, L - fk - ok\n"
	"    if rm < min and L - min - fk >= 0 and ok > 0 then\n"
	"      local rr = math.ceil(S * (1 - (L - min - fk) / ok))\n"
	"      if rr < S then tt = t0 + rr rm = math.floor(L - fk - ok * (S - rr) / S + 1e-9) end\n"
	"    end\n"
	"    if rm >= min and not late(tt - now) then return grant(tt, xi, rm) end\n"
	"  end\n"
	"end\n"
	"return {0, math.ceil((x + 1) * S - now), -1, ''}\n";

/* Sliding log: a sorted set, one member "<seq>:<units>" per lease, scored by its time (us).
 * ARGV[6] W (us), ARGV[7] the limit. A reservation goes no earlier than the last entry (FIFO)
 * and when enough of the oldest have left the period. */
static const char lua_log[] =
	LUA_PROLOGUE
	"local W, L = tonumber(ARGV[6]), tonumber(ARGV[7])\n"
	"if want < 0 then\n"
	"  local sc = redis.call('ZSCORE', KEYS[1], ARGV[5])\n"
	"  local id, n = string.match(ARGV[5], '^(%d+):(%d+)$')\n"
	"  if sc and id then\n"
	"    redis.call('ZREM', KEYS[1], ARGV[5])\n"
	"    n = tonumber(n) + want\n"
	"    if n > 0 then redis.call('ZADD', KEYS[1], sc, id .. ':' .. n) end\n"
	"  end\n"
	"  return {0, 0, -1, ''}\n"
	"end\n"
	"redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - W)\n"
	"local es = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\n"
	"local ns, ts, total, last = {}, {}, 0, 0\n"
	"for i = 1, #es, 2 do\n"
	"  local n, s = tonumber(string.match(es[i], ':(%d+)$')), tonumber(es[i + 1])\n"
	"  ns[#ns + 1] = n ts[#ts + 1] = s total = total + n\n"
	"  if s > last then last = s end\n"
	"end\n"
	"local function add(tt, g)\n"
	"  local m = redis.call('INCR', KEYS[1] .. ':seq') .. ':' .. g\n"
	"  redis.call('ZADD', KEYS[1], tt, m)\n"
	"  local px = math.ceil((tt - now + W) / 1000) + 1000\n"
	"  redis.call('PEXPIRE', KEYS[1], px)\n"
	"  redis.call('PEXPIRE', KEYS[1] .. ':seq', px)\n"
	"  return {g, math.ceil(tt - now), -1, m}\n"
	"end\n"
	"if last <= now and L - total >= min then return add(now, math.min(want, L - total)) end\n"
	"local tt, keep, i = math.max(now, last), total, 1\n"
	"while i <= #ns and (keep > L - min or ts[i] + W <= tt) do\n"
	"  keep = keep - ns[i]\n"
	"  if ts[i] + W > tt then tt = ts[i] + W end\n"
	"  i = i + 1\n"
	"end\n"
	"if keep > L - min then return {0, -1, -1, ''} end\n"
	"if not reserve or late(tt - now) then return {0, math.ceil(tt - now), -1, ''} end\n"
	"return add(tt, math.min(want, L - keep))\n";

/* ----- per rule ----- */

enum family { FAM_GCRA, FAM_FIXED, FAM_SLIDING, FAM_LOG };

static const char *const family_name[] = {"gcra", "fixed", "sliding", "log"};
static const char *const family_script[] = {lua_gcra, lua_fixed, lua_sliding, lua_log};

struct rlt__redis {
	/* The hot path: one atomic decrement of `lease`. */
	_Atomic uint64_t lease;       /* units leased from Redis and not spent yet */
	_Atomic uint64_t lease_from;  /* local ns: leased units go no earlier (a reservation) */
	_Atomic uint64_t lease_until; /* local ns: they lapse (a window's end); RLT_NS_NEVER */
	_Atomic int down;             /* Redis did not answer: the fallback decides */
	_Atomic uint64_t retry_at;    /* while down: no new attempt before this local ns */
	_Atomic uint64_t round_trips; /* requests sent to Redis, for benchmarks and tests */
	_Atomic uint64_t deny_until;  /* local ns: Redis said no call conforms before this, so
	                                 action=reject calls are denied without asking again */

	/* The slow path, under `lock` (engine.h: a signal handler that interrupted this thread's
	 * refill finds it its own and takes the fallback; a fork child finds it free). */
	struct rlt__lock lock;
	redisContext *c; /* NULL until needed, or after an error */
	pid_t pid;       /* the process that made c: a forked child makes its own */
	char sha[48];    /* the script's SHA1 once loaded on this connection */
	char ref[64];    /* the last lease's ref (window, sub-window or log member): a give-back */
	char why[160];   /* what went wrong last, for the outage line */

	/* Set at load. */
	struct rlt_rule rule;
	enum family fam;
	uint64_t lease_size;
	char key[RLT_NAME_MAX + 32];
	char args[3][40];  /* the family's params, formatted once */
	int nargs;
	void *local;       /* fallback=local: a process-local state with the same params */
	struct rlt__redis *next;
};

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
	}
}

static void drop(struct rlt__redis *rd);
static int lock_bounded(struct rlt__redis *rd, rlt_ns_t now);

/* Give back what is unspent, then close the connections (a leak checker sees none). */
static void at_exit(void)
{
	rlt__redis_return_leases();
	for (struct rlt__redis *rd = all_rules; rd; rd = rd->next)
		if (rd->c && lock_bounded(rd, rlt__now()) == 0) {
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
	u128 n = (u128)p->rate_num * LEASE_NS / p->rate_den_ns;
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
	switch (p->algo) {
	case RLT_ALGO_TOKEN:
	case RLT_ALGO_LEAKY:
		rd->fam = FAM_GCRA;
		/* us per unit, and the burst in us: doubles, exact enough at a lease's scale */
		snprintf(rd->args[0], sizeof rd->args[0], "%.17g",
		         (double)p->rate_den_ns / (double)p->rate_num / 1000.0);
		snprintf(rd->args[1], sizeof rd->args[1], "%.17g",
		         (double)p->burst * (double)p->rate_den_ns / (double)p->rate_num / 1000.0);
		snprintf(rd->args[2], sizeof rd->args[2], "%d", p->algo == RLT_ALGO_LEAKY);
		rd->nargs = 3;
		break;
	case RLT_ALGO_FIXED_WINDOW:
	case RLT_ALGO_SLIDING_WINDOW:
	case RLT_ALGO_SLIDING_LOG:
	default:
		rd->fam = p->algo == RLT_ALGO_FIXED_WINDOW   ? FAM_FIXED
		        : p->algo == RLT_ALGO_SLIDING_WINDOW ? FAM_SLIDING
		                                             : FAM_LOG;
		snprintf(rd->args[0], sizeof rd->args[0], "%.17g",
		         (double)(rd->fam == FAM_SLIDING ? p->sub_ns : p->window_ns) / 1000.0);
		snprintf(rd->args[1], sizeof rd->args[1], "%llu", (unsigned long long)p->limit);
		rd->nargs = 2;
		break;
	}
	/* The hash tag keeps a rule's keys in one slot of a Redis cluster. */
	snprintf(rd->key, sizeof rd->key, "rlthrottle:{%s}:%s", r->scope_name,
	         family_name[rd->fam]);
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
	if (rd->c)
		rlt__hr.free_context(rd->c);
	rd->c = NULL;
	rd->sha[0] = '\0';
}

static int fail_why(struct rlt__redis *rd, const char *what, const char *detail)
{
	snprintf(rd->why, sizeof rd->why, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
	drop(rd);
	return -1;
}

static int connect_redis(struct rlt__redis *rd)
{
	struct timeval tv = {0, TIMEOUT_US};
	redisReply *rep;

	if (rd->c && rd->pid != getpid()) {
		/* a forked child: the socket is the parent's; close our copy, make our own */
		drop(rd);
		rd->ref[0] = '\0';
	}
	if (rd->c && rd->c->err)
		drop(rd);
	if (rd->c)
		return 0;
	rd->c = rlt__hr.connect_with_timeout(rd->rule.redis_host, rd->rule.redis_port, tv);
	if (!rd->c)
		return fail_why(rd, "cannot connect", "out of memory");
	if (rd->c->err)
		return fail_why(rd, "cannot connect", rd->c->errstr);
	rd->pid = getpid();
	rlt__hr.set_timeout(rd->c, tv);
	/* hiredis does not set close-on-exec: the program's exec must not inherit our socket */
	fcntl(rd->c->fd, F_SETFD, FD_CLOEXEC);
	atomic_fetch_add_explicit(&rd->round_trips, 1, memory_order_relaxed);
	rep = rlt__hr.command(rd->c, "SCRIPT LOAD %s", family_script[rd->fam]);
	if (!rep)
		return fail_why(rd, "no answer to SCRIPT LOAD", rd->c->errstr);
	if (rep->type != REDIS_REPLY_STRING || rep->len >= (int)sizeof rd->sha) {
		snprintf(rd->why, sizeof rd->why, "SCRIPT LOAD failed: %.100s",
		         rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
		rlt__hr.free_reply(rep);
		drop(rd);
		return -1;
	}
	memcpy(rd->sha, rep->str, (size_t)rep->len + 1);
	rlt__hr.free_reply(rep);
	return 0;
}

struct grant {
	int64_t units;
	int64_t wait_us;  /* -1: never */
	int64_t valid_us; /* -1: no lapse */
	char ref[64];
};

/* One EVALSHA (reloading the script once on NOSCRIPT: Redis restarted). 0 or -1 (rd->why). */
static int eval(struct rlt__redis *rd, int64_t want, uint64_t min, int reserve, const char *ref,
                struct grant *g)
{
	char a_want[24], a_min[24], a_maxw[24];
	const char *argv[12];
	redisReply *rep = NULL;
	int argc = 0;

	snprintf(a_want, sizeof a_want, "%lld", (long long)want);
	snprintf(a_min, sizeof a_min, "%llu", (unsigned long long)min);
	if (rd->rule.max_wait_ns == RLT_NS_NEVER)
		snprintf(a_maxw, sizeof a_maxw, "-1");
	else
		snprintf(a_maxw, sizeof a_maxw, "%llu",
		         (unsigned long long)(rd->rule.max_wait_ns / 1000));
	for (int attempt = 0; attempt < 2; attempt++) {
		if (connect_redis(rd) != 0)
			return -1;
		argc = 0;
		argv[argc++] = "EVALSHA";
		argv[argc++] = rd->sha;
		argv[argc++] = "1";
		argv[argc++] = rd->key;
		argv[argc++] = a_want;
		argv[argc++] = a_min;
		argv[argc++] = reserve ? "1" : "0";
		argv[argc++] = a_maxw;
		argv[argc++] = ref && *ref ? ref : "-";
		for (int i = 0; i < rd->nargs; i++)
			argv[argc++] = rd->args[i];
		atomic_fetch_add_explicit(&rd->round_trips, 1, memory_order_relaxed);
		rep = rlt__hr.command_argv(rd->c, argc, argv, NULL);
		if (!rep)
			return fail_why(rd, "no answer", rd->c->errstr);
		if (rep->type == REDIS_REPLY_ERROR && !strncmp(rep->str, "NOSCRIPT", 8)) {
			rlt__hr.free_reply(rep);
			rep = NULL;
			rd->sha[0] = '\0';
			drop(rd); /* reconnects and loads the script again */
			continue;
		}
		break;
	}
	if (!rep)
		return fail_why(rd, "the script could not be loaded", NULL);
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 4 ||
	    rep->element[0]->type != REDIS_REPLY_INTEGER ||
	    rep->element[1]->type != REDIS_REPLY_INTEGER ||
	    rep->element[2]->type != REDIS_REPLY_INTEGER) {
		snprintf(rd->why, sizeof rd->why, "unexpected reply%s%.100s",
		         rep->type == REDIS_REPLY_ERROR ? ": " : "",
		         rep->type == REDIS_REPLY_ERROR ? rep->str : "");
		rlt__hr.free_reply(rep);
		return -1;
	}
	g->units = rep->element[0]->integer;
	g->wait_us = rep->element[1]->integer;
	g->valid_us = rep->element[2]->integer;
	g->ref[0] = '\0';
	if (rep->element[3]->type == REDIS_REPLY_STRING && rep->element[3]->len < (int)sizeof g->ref)
		memcpy(g->ref, rep->element[3]->str, (size_t)rep->element[3]->len + 1);
	rlt__hr.free_reply(rep);
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
	uint64_t have = atomic_load_explicit(&rd->lease, memory_order_relaxed);

	if (have < cost || lapsed(rd, now))
		return 0;
	/* acquire: pairs with the refill's release, so lease_from is at least the batch's */
	while (have >= cost)
		if (atomic_compare_exchange_weak_explicit(&rd->lease, &have, have - cost,
		                                          memory_order_acquire,
		                                          memory_order_relaxed)) {
			rlt_ns_t from = atomic_load_explicit(&rd->lease_from, memory_order_relaxed);
			*at = from > now ? from : now;
			return 1;
		}
	return 0;
}

static enum rlt_verdict fallback(struct rlt__redis *rd, rlt_ns_t now, uint64_t cost,
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

static void went_down(struct rlt__redis *rd, rlt_ns_t now)
{
	atomic_store(&rd->retry_at, now + RETRY_NS);
	if (atomic_exchange(&rd->down, 1) == 0)
		say(1, "%s: redis %s:%u does not answer (%s): fallback=%s until it does",
		    rlt_var_name(rd->rule.var), rd->rule.redis_host, (unsigned)rd->rule.redis_port,
		    rd->why, fallback_name(rd->rule.fallback));
}

static void came_back(struct rlt__redis *rd)
{
	if (atomic_exchange(&rd->down, 0))
		say(1, "%s: redis %s:%u answers again: the shared budget is back",
		    rlt_var_name(rd->rule.var), rd->rule.redis_host, (unsigned)rd->rule.redis_port);
}

/* 0 when held. Held by this very thread (a signal handler interrupted its refill) it is not
 * waited for at all: the caller takes the fallback. */
static int lock_bounded(struct rlt__redis *rd, rlt_ns_t now)
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
	struct grant g;
	enum rlt_verdict v;
	uint64_t have, min, want;
	int rc;

	if (atomic_load_explicit(&rd->down, memory_order_relaxed) &&
	    now < atomic_load_explicit(&rd->retry_at, memory_order_relaxed))
		return fallback(rd, now, cost, mode, at);
	if (lock_bounded(rd, now) != 0)
		return fallback(rd, now, cost, mode, at); /* a refill stuck elsewhere: bounded */
	/* another thread may have refilled while we waited */
	if (take(rd, now, cost, at)) {
		rlt__lock_release(&rd->lock);
		return *at > now ? RLT_WAIT : RLT_GO;
	}
	if (atomic_load(&rd->down) && now < atomic_load(&rd->retry_at)) {
		rlt__lock_release(&rd->lock);
		return fallback(rd, now, cost, mode, at);
	}
	if (lapsed(rd, now))
		atomic_store(&rd->lease, 0);
	have = atomic_load(&rd->lease);
	min = cost > have ? cost - have : 1;
	want = rd->lease_size > min ? rd->lease_size : min;

	rlt__internal++;
	rc = eval(rd, (int64_t)want, min, mode == RLT_MODE_RESERVE, NULL, &g);
	rlt__internal--;
	rlt_ns_t after = rlt__now();
	if (rc != 0) {
		went_down(rd, after);
		rlt__lock_release(&rd->lock);
		return fallback(rd, now, cost, mode, at);
	}
	came_back(rd);
	if (g.units <= 0) {
		*at = g.wait_us < 0 ? RLT_NS_NEVER : after + (rlt_ns_t)g.wait_us * 1000;
		/* A denial says when `min` would conform: a rejected call asking again before then
		 * would only cost a round trip for the same answer. At most one lease's time, so
		 * units other processes give back meanwhile are not missed for long. */
		if (mode == RLT_MODE_NOW && cost <= rd->lease_size) {
			rlt_ns_t cap = after + LEASE_NS;
			atomic_store_explicit(&rd->deny_until, *at < cap ? *at : cap,
			                      memory_order_relaxed);
		}
		rlt__lock_release(&rd->lock);
		return RLT_DENY;
	}
	/* Redis' answers are relative to its clock's now, somewhere inside the round trip: a go
	 * time from the end of it and a lapse from its start err on the strict side. */
	snprintf(rd->ref, sizeof rd->ref, "%s", g.ref);
	atomic_store_explicit(&rd->lease_from, g.wait_us > 0 ? after + (rlt_ns_t)g.wait_us * 1000 : 0,
	                      memory_order_relaxed);
	atomic_store_explicit(&rd->lease_until,
	                      g.valid_us < 0 ? RLT_NS_NEVER : now + (rlt_ns_t)g.valid_us * 1000,
	                      memory_order_relaxed);
	atomic_fetch_add_explicit(&rd->lease, (uint64_t)g.units, memory_order_release);
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
static _Thread_local int refilling __attribute__((tls_model("initial-exec")));

static enum rlt_verdict refill(struct rlt__redis *rd, rlt_ns_t now, uint64_t cost,
                               enum rlt_mode mode, rlt_ns_t *at)
{
	enum rlt_verdict v;

	if (refilling)
		return fallback(rd, now, cost, mode, at);
	refilling++;
	v = refill_once(rd, now, cost, mode, at);
	refilling--;
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
		struct grant g;
		uint64_t n;

		if (!rd->c || rd->pid != getpid() || atomic_load(&rd->down))
			continue; /* never connected here, or not answering: nothing to wait for */
		if (lock_bounded(rd, rlt__now()) != 0)
			continue;
		n = lapsed(rd, rlt__now()) ? 0 : atomic_exchange(&rd->lease, 0);
		if (n) {
			rlt__internal++;
			eval(rd, -(int64_t)n, 0, 0, rd->ref, &g);
			rlt__internal--;
		}
		rlt__lock_release(&rd->lock);
	}
}

int rlt__redis_ping(const char *host, uint16_t port, unsigned timeout_ms, struct rlt_error *err)
{
	struct timeval tv = {(time_t)(timeout_ms / 1000), (suseconds_t)(timeout_ms % 1000) * 1000};
	redisContext *c;
	redisReply *rep;
	int rc = 0;

	if (rlt__hiredis_load(err) != 0)
		return -ENOENT;
	rlt__internal++;
	c = rlt__hr.connect_with_timeout(host, port, tv);
	if (!c || c->err) {
		snprintf(err->msg, sizeof err->msg, "cannot connect: %s",
		         c ? c->errstr : "out of memory");
		rc = -ECONNREFUSED;
		goto out;
	}
	rlt__hr.set_timeout(c, tv);
	rep = rlt__hr.command(c, "PING");
	if (!rep) {
		snprintf(err->msg, sizeof err->msg, "no answer to PING within %u ms: %s", timeout_ms,
		         c->errstr);
		rc = -ETIMEDOUT;
		goto out;
	}
	if (rep->type == REDIS_REPLY_ERROR) {
		snprintf(err->msg, sizeof err->msg, "PING: %.200s", rep->str);
		rc = -EPROTO;
	}
	rlt__hr.free_reply(rep);
out:
	if (c)
		rlt__hr.free_context(c);
	rlt__internal--;
	return rc;
}
