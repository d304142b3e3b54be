/*
 * redis_scripts.c: the Lua scripts of a redis:// scope (their arguments and answer: see
 * redis_scripts.h). Each mirrors a C engine: a rule must admit the same calls whether its state
 * lives in this process, in shared memory or in Redis, so a change to an engine's arithmetic is
 * a change to its script too. What differs, on purpose: a script works in Redis' microseconds
 * with doubles where the engine works in ns (or ticks) with integers, and it grants a lease
 * (up to `want` units at once, at least `min`) where the engine admits one call's cost.
 */
#include <stdio.h>

#include "redis_scripts.h"

#define LUA_PROLOGUE                                                                             \
	"local t = redis.call('TIME')\n"                                                         \
	"local now = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"                                \
	"local want, min = tonumber(ARGV[1]), tonumber(ARGV[2])\n"                               \
	"local reserve, maxw = ARGV[3] == '1', tonumber(ARGV[4])\n"                              \
	"local function late(w) return maxw >= 0 and w > maxw end\n"

/* Token and leaky bucket: GCRA on one key holding the TAT (us). ARGV[6] T: us per unit,
 * ARGV[7] tau: the burst in us, ARGV[8] 1 for leaky.
 * Mirrors engine_gcra.c gcra_decide, where the two must agree: base = max(TAT, now); a token
 * call of n units goes at base + n*T - tau (now when that has come: room is how many units
 * fit) and moves the TAT to base + n*T; a leaky call goes at base and is denied whatever the
 * mode when base - now > tau (more than the burst waiting). A give-back moves the TAT back by
 * its units (gcra_refund); a TAT in the past is the same as none (the key is deleted). */
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
 * ARGV[7] the limit. A reservation takes the first later window with room.
 * Mirrors engine_window.c's fixed window, where the two must agree: the window id is
 * floor(now / W) (the engine's now / window_ns, on Redis' clock), a window admits at most the
 * limit, a call goes in the earliest window that has room for it, and a give-back returns
 * units only to the window they were taken in (fw_refund; here the lease's ref names it).
 * Where they differ (tests/unit/test_redis_scripts.c): the engine serves reservers in order,
 * this script takes the earliest window with room, so with mixed costs a later small call may
 * go before an earlier larger reservation. */
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
 * and inside each for the moment the oldest has weighed down enough.
 * Mirrors engine_window.c's sliding window, where the two must agree: ten sub-windows of
 * sub_ns, a field per sub-window number floor(t / S) (sw_slot.id), the same estimate, and the
 * same 21 sub-windows of look-ahead (SW_SCAN).
 * Where they differ (tests/unit/test_redis_scripts.c): the engine lets no reservation go
 * before the latest admission (last_at), this script takes the earliest moment with room. */
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
 * and when enough of the oldest have left the period.
 * Mirrors engine_log.c, where the two must agree: a member is a log_entry (time, units); a
 * call conforms at t when the units of the entries in (t - W, t] plus its own are at most the
 * limit; entries go in time order (FIFO), and a give-back lowers its own entry's units. */
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

const char *const rlt__redis_family_name[] = {"gcra", "fixed", "sliding", "log"};
const char *const rlt__redis_script[] = {lua_gcra, lua_fixed, lua_sliding, lua_log};

int rlt__redis_script_args(const struct rlt_params *p, enum rlt__redis_family *fam,
                           char args[RLT__REDIS_NARGS][40])
{
	switch (p->algo) {
	case RLT_ALGO_TOKEN:
	case RLT_ALGO_LEAKY:
		*fam = RLT__REDIS_GCRA;
		/* us per unit, and the burst in us: doubles, exact enough at a lease's scale */
		snprintf(args[0], sizeof args[0], "%.17g",
		         (double)p->rate_den_ns / (double)p->rate_num / 1000.0);
		snprintf(args[1], sizeof args[1], "%.17g",
		         (double)p->burst * (double)p->rate_den_ns / (double)p->rate_num / 1000.0);
		snprintf(args[2], sizeof args[2], "%d", p->algo == RLT_ALGO_LEAKY);
		return 3;
	case RLT_ALGO_FIXED_WINDOW:
	case RLT_ALGO_SLIDING_WINDOW:
	case RLT_ALGO_SLIDING_LOG:
	default:
		*fam = p->algo == RLT_ALGO_FIXED_WINDOW   ? RLT__REDIS_FIXED
		     : p->algo == RLT_ALGO_SLIDING_WINDOW ? RLT__REDIS_SLIDING
		                                          : RLT__REDIS_LOG;
		snprintf(args[0], sizeof args[0], "%.17g",
		         (double)(*fam == RLT__REDIS_SLIDING ? p->sub_ns : p->window_ns) / 1000.0);
		snprintf(args[1], sizeof args[1], "%llu", (unsigned long long)p->limit);
		return 2;
	}
}
