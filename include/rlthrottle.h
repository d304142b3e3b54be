/*
 * rlthrottle.h: the public API of librlt.a, the rate-limiting engines and the rule grammar that
 * librlthrottle.so and the rlthrottle launcher are built on.
 *
 * Time is integer nanoseconds of CLOCK_MONOTONIC (rlt_ns_t). An engine never reads a clock: the
 * caller passes "now" in, which is what makes every decision reproducible to the nanosecond.
 * Functions that can fail return 0 or a negative errno value and, where a person will read the
 * reason, fill a struct rlt_error.
 */
#ifndef RLTHROTTLE_H
#define RLTHROTTLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RLT_VERSION "0.1.0"

typedef uint64_t rlt_ns_t;

#define RLT_NS_PER_SEC 1000000000ull
/* "No limit" for a duration such as max-wait, and "never" for a time. */
#define RLT_NS_NEVER UINT64_MAX

/* A message a person can read: filled by the function that failed, printed by the outermost layer. */
struct rlt_error {
	char msg[512];
};

/* ---------------------------------------------------------------------------------------------
 * Engines
 * ------------------------------------------------------------------------------------------- */

enum rlt_algo {
	RLT_ALGO_TOKEN = 0,      /* token bucket (GCRA with a burst tolerance) */
	RLT_ALGO_LEAKY,          /* leaky bucket as a meter: GCRA, even spacing, bounded queue */
	RLT_ALGO_FIXED_WINDOW,   /* `limit` per aligned window of `window_ns` */
	RLT_ALGO_SLIDING_WINDOW, /* 10 sub-windows, the oldest weighed by the part still inside */
	RLT_ALGO_SLIDING_LOG,    /* exact: the time of every admitted call in the last window */
	RLT_ALGO_COUNT
};

/* Subdivisions of a sliding window. */
#define RLT_SLIDING_SUBWINDOWS 10
/* The sliding log keeps one entry per admitted call; more than this is refused at parse time. */
#define RLT_LOG_MAX_LIMIT 1000000ull
/* Rates above this many units per second are refused (10^18: far beyond any link; the token
 * and leaky engines count in ticks of several units above 16 units per ns, see engine.c). */
#define RLT_RATE_MAX_PER_SEC 1000000000000000000ull
/* The windows' counters keep 36 years of CLOCK_MONOTONIC in 64 bits only up to 16 units per
 * ns: a window rule above this is refused. */
#define RLT_WINDOW_RATE_MAX_PER_SEC 16000000000ull

/*
 * Immutable parameters of one engine, built once by rlt_params_init(). The rate is kept as an
 * exact fraction: rate_num units every rate_den_ns nanoseconds (reduced), so that 1GiB/s and 1/h
 * are exact over any span; no floating point anywhere.
 */
struct rlt_params {
	enum rlt_algo algo;
	uint64_t rate_num;    /* units ... */
	uint64_t rate_den_ns; /* ... per this many ns (reduced fraction) */
	uint64_t burst;       /* units: token: the most at once; leaky: the most waiting ahead */
	uint64_t max_wait_ns; /* RLT_MODE_RESERVE gives up past this wait; RLT_NS_NEVER: none */

	/* Token and leaky keep time in "ticks": ticks_per_unit ticks make one unit, and
	 * floor(ns * tick_num / tick_den) converts a clock reading to ticks. A cost converts to
	 * ticks exactly (cost * ticks_per_unit), so per-call rounding never accumulates; only the
	 * clock reading is floored, by less than one tick (at most 1/8 ns, or one unit when a unit
	 * lasts less than that). */
	uint64_t ticks_per_unit;
	uint64_t tick_num;
	uint64_t tick_den;
	uint64_t tick_recip; /* tick_num / tick_den with 59 fraction bits: no division per call */
	unsigned unit_shift; /* above 16 units per ns a tick is 2^unit_shift units (else 0) ... */
	uint64_t unit_round; /* ... and a cost is rounded up to it: 2^unit_shift - 1 */
	uint64_t max_cost;   /* the largest cost whose ticks stay below 2^62 */
	uint64_t tau; /* burst in ticks */
	/* Where the ticks continue from after `rlthrottle set` changed the rate of a rule whose
	 * states are many (one per connection or key) and not carried (0 and 0 until then): the
	 * tick count at epoch_ns is epoch_ticks, and ticks run at the new rate from there, with
	 * the old tick size (engine.h rlt__params_retune_keep). sliding-log: epoch_ticks is the
	 * size of its ring once a set changed the limit (0: the limit; engine_log.c). */
	uint64_t epoch_ns;
	uint64_t epoch_ticks;

	/* Windows and log. */
	uint64_t limit;     /* units admitted per window */
	uint64_t window_ns; /* the rule's PERIOD */
	uint64_t sub_ns;    /* sliding-window: window_ns / RLT_SLIDING_SUBWINDOWS (a whole ns) */
};

/*
 * Builds params for `algo` from a rate of amount_num/amount_den units per period_ns.
 * burst == 0 takes the default (token: one second of the rate, at least one unit; leaky: one
 * second of the rate, at least one unit; windows: unused). max_wait_ns may be RLT_NS_NEVER.
 * Windows need a whole number of units per period. Returns 0, or -EINVAL/-ERANGE with err
 * saying why (without naming a variable: the rule parser adds that).
 */
int rlt_params_init(struct rlt_params *p, enum rlt_algo algo, uint64_t amount_num,
                    uint64_t amount_den, uint64_t period_ns, uint64_t burst,
                    uint64_t max_wait_ns, struct rlt_error *err);

/*
 * Params `np` (built by rlt_params_init from a new rule: same algorithm) made to continue the
 * states of `old` from time `now` (`rlthrottle set`). Returns:
 *  0: every state built on old stays valid as it is under np: (token, leaky) np is old with
 *     a new max-wait (the same rate and burst); the sliding window and the log judge the
 *     counts they hold against np's limit (the log's at most the limit it started with).
 *  1: a state must be carried into a new one (rlt_state_carry): (token, leaky) a new rate or
 *     burst, np counting in ticks of its own; (fixed window) another limit, the position laid
 *     out for it.
 * A window's or log's period never changes (-EINVAL).
 *  -EINVAL/-ERANGE with err saying why (without naming a variable).
 * Pure: `now` comes in.
 */
int rlt_params_retune(struct rlt_params *np, const struct rlt_params *old, rlt_ns_t now,
                      struct rlt_error *err);

/* rlt_state_carry's flags: the old state was a dry-run rule's, whose lag beyond its burst no
 * call waits for (it does not carry). */
#define RLT_CARRY_DRY_RUN 1u

/* After rlt_params_retune(np, old, since) returned 1: makes new_state (not initialised) hold
 * old_state's budget as it stood at `since`. Token and leaky: how full the bucket is, as a
 * share of the burst (a credit, or what has gone lately, scaled from old's burst to np's); what
 * calls waiting now have reserved beyond it, in units (not a dry-run's lag, nor past the end of
 * the ticks). Fixed window: the units taken in the current window (judged against np's limit)
 * and reserved in later ones. 0, or -EINVAL for another engine. Calls still deciding on
 * old_state meanwhile are not carried. */
int rlt_state_carry(const struct rlt_params *old, void *old_state, const struct rlt_params *np,
                    void *new_state, rlt_ns_t since, unsigned flags);

/* Where a go time `at` decided under old falls under np (made from old at `since`): the same
 * place in the queue, reached at np's rate; `carried`: the state was carried (rlt_state_carry)
 * rather than kept. */
rlt_ns_t rlt_params_remap(const struct rlt_params *old, const struct rlt_params *np,
                          rlt_ns_t since, rlt_ns_t at, int carried);

/* Bytes of state the engine needs for these params (the sliding log grows with its limit). */
size_t rlt_state_size(const struct rlt_params *p);

#define RLT_STATE_SHARED 1u /* the state lives in memory shared between processes */

/* Initialises `size` = rlt_state_size() bytes at `state` (any alignment of 16 or more).
 * Returns 0 or a negative errno. A state that is only ever zeroed memory is NOT valid for the
 * windows and log (they hold a lock); token, leaky and fixed-window accept zeroed memory. */
int rlt_state_init(const struct rlt_params *p, void *state, unsigned flags);
void rlt_state_destroy(const struct rlt_params *p, void *state);

/* Makes `dst` (rlt_state_size() bytes, not initialised) an independent process-local state
 * standing exactly where `src` stands now: the budget of a forked process. Safe while other
 * threads decide on src. Returns 0 or a negative errno. */
int rlt_state_copy(const struct rlt_params *p, void *dst, void *src);

enum rlt_mode {
	RLT_MODE_NOW,     /* conform now, or be denied; nothing is taken on a denial */
	RLT_MODE_RESERVE, /* take the earliest slot within max_wait (FIFO among reservers) */
};

enum rlt_verdict {
	RLT_GO = 0, /* taken; go now */
	RLT_WAIT,   /* taken; go at *at (a reservation: do not ask again, just wait) */
	RLT_DENY,   /* nothing taken: does not conform now (MODE_NOW), would wait past
	               max_wait, would overflow a leaky bucket, or can never conform */
};

/*
 * The decision for a call costing `cost` units at time `now`. Safe to call from many threads
 * (and, with RLT_STATE_SHARED, many processes) on one state at once. *at is the go time for
 * RLT_WAIT, and for RLT_DENY the earliest time the call would conform (RLT_NS_NEVER if it
 * never would, or unknown). A cost of 0 always goes. Under contention the windows and the log
 * may report a GO with *at slightly after `now` (a thread's clock reading older than one
 * already decided on is raised to it); pass *at to rlt_refund.
 */
enum rlt_verdict rlt_decide(const struct rlt_params *p, void *state, rlt_ns_t now, uint64_t cost,
                            enum rlt_mode mode, rlt_ns_t *at);

/* Gives back `units` of a decision taken for go time `at` that the call did not use (a short
 * write, EAGAIN). The state never ends up stricter than before the refund. */
void rlt_refund(const struct rlt_params *p, void *state, rlt_ns_t at, uint64_t units);

/* How many units would conform at `now` without waiting (0 if none). Advisory: another thread
 * may take them first. Used to size a non-blocking send or a stream receive. */
uint64_t rlt_available(const struct rlt_params *p, void *state, rlt_ns_t now);

const char *rlt_algo_name(enum rlt_algo a);

/* ---------------------------------------------------------------------------------------------
 * Rules (rlthrottle(7) RULES)
 * ------------------------------------------------------------------------------------------- */

enum rlt_var {
	RLT_VAR_CONNECT = 0,
	RLT_VAR_ACCEPT,
	RLT_VAR_SEND,
	RLT_VAR_RECV,
	RLT_VAR_CONNS,
	RLT_VAR_COUNT
};

enum rlt_unit {
	RLT_UNIT_CALLS = 0, /* connect, accept: no unit written */
	RLT_UNIT_BYTES,     /* B, kB, MiB, kbit, ... */
	RLT_UNIT_MSGS,      /* msg */
	RLT_UNIT_CONNS,     /* RLT_CONNS: connections open at once */
};

/* DRY_RUN never delays nor fails a call: it only counts what DELAY would have waited and what
 * REJECT would have refused (rlthrottle(7) RULES). */
enum rlt_action { RLT_ACTION_DELAY = 0, RLT_ACTION_REJECT, RLT_ACTION_DRY_RUN };

enum rlt_scope { RLT_SCOPE_PROCESS = 0, RLT_SCOPE_CONNECTION, RLT_SCOPE_SHARED, RLT_SCOPE_REDIS };

enum rlt_fallback { RLT_FALLBACK_LOCAL = 0, RLT_FALLBACK_ALLOW, RLT_FALLBACK_DENY };

enum rlt_family { RLT_FAMILY_INET = 0, RLT_FAMILY_UNIX, RLT_FAMILY_ALL };

/* What splits a rule into one budget per value (rlthrottle(7) RULES `key`). */
enum rlt_key {
	RLT_KEY_NONE = 0, /* one budget for the rule */
	RLT_KEY_PEER,     /* the remote address (accept: the client's), cut to a prefix */
	RLT_KEY_PORT,     /* the remote port (accept: the local, listening one) */
};

/* keys=: the default, and the most a rule may ask for. The bound keeps a table's memory to a
 * figure a person would accept (see keytab.h for the bytes per key). */
#define RLT_KEYS_DEFAULT 4096u
#define RLT_KEYS_MAX 1048576u

#define RLT_MAX_RULES_PER_VAR 16
#define RLT_VALUE_MAX 4096   /* longest variable value accepted */
#define RLT_RULE_TEXT_MAX 512 /* longest single rule accepted */
#define RLT_NAME_MAX 200     /* scope NAME: [A-Za-z0-9._-], not "." or ".." */
#define RLT_HOST_MAX 255
#define RLT_AUTH_MAX 128     /* redis:// USER and PASSWORD, after percent-decoding */

struct rlt_rule {
	enum rlt_var var;
	enum rlt_unit unit;

	/* The rate as written, exactly: amount_num/amount_den units (after the unit's multiplier:
	 * bytes, messages or calls) per period_ns. For RLT_CONNS: amount_num is the limit,
	 * amount_den 1, period_ns 0. */
	uint64_t amount_num;
	uint64_t amount_den;
	uint64_t period_ns;

	enum rlt_algo algo;
	uint64_t burst; /* units; 0 = the default (params.burst holds the value in force) */
	enum rlt_action action;
	uint64_t max_wait_ns; /* RLT_NS_NEVER = none */
	int err;              /* errno of a rejected call */

	enum rlt_scope scope;
	uint8_t scope_given;  /* 1 when the rule names its scope=: the launcher's command-wide
	                         budget is only for rules that name none */
	char scope_name[RLT_NAME_MAX + 1]; /* shared: and redis: NAME */
	char redis_host[RLT_HOST_MAX + 1];
	uint16_t redis_port;
	char redis_user[RLT_AUTH_MAX + 1]; /* redis://USER:PASSWORD@: "" for the default user */
	char redis_pass[RLT_AUTH_MAX + 1]; /* "": no AUTH. Never printed: text and the canonical
	                                      form show "***" in its place */
	enum rlt_fallback fallback;

	int peer_af;          /* 0 = any peer, or AF_INET / AF_INET6 */
	uint8_t peer_addr[16]; /* network byte order, masked to the prefix */
	uint8_t peer_prefix;  /* bits */
	uint16_t port_lo, port_hi; /* 0..65535 = any port */
	enum rlt_family family;

	enum rlt_key key;      /* RLT_KEY_NONE: one budget */
	uint8_t key_prefix4;   /* key=peer: the bits of an IPv4 address that make its key (1..32) */
	uint8_t key_prefix6;   /* ... and of an IPv6 address (1..128) */
	uint32_t keys;         /* keyed: the most keys tracked at once (1..RLT_KEYS_MAX); else 0 */

	char text[RLT_RULE_TEXT_MAX + 1]; /* the rule as written, trimmed, a redis:// password
	                                     masked (for stats and errors) */
	struct rlt_params params;         /* the engine's params (unused for RLT_CONNS) */
};

const char *rlt_var_name(enum rlt_var v); /* "RLT_CONNECT", ... */

/*
 * Parses the value of one variable: one rule, or several separated by ';' (empty parts between
 * separators are an error, a trailing ';' is allowed). Fills rules[0..*n). Returns 0, or
 * -EINVAL with err->msg like
 *   RLT_SEND="1000/s": a rate for bytes or messages needs a unit, e.g. 1000B/s or 1000msg/s
 * naming the variable, quoting the rule and pointing at the wrong part. Never guesses.
 */
int rlt_rules_parse(enum rlt_var var, const char *value, struct rlt_rule *rules, size_t max_rules,
                    size_t *n, struct rlt_error *err);

/* Prints a parsed rule in its canonical form (every key, explicit values, base units), a form
 * that rlt_rules_parse() reads back to the same rule. Returns the length it needed, as
 * snprintf does. */
int rlt_rule_format(const struct rlt_rule *r, char *buf, size_t len);

/* errno names, both ways: "ECONNREFUSED" <-> ECONNREFUSED. NULL / 0 when unknown. */
const char *rlt_errno_name(int e);
int rlt_errno_from_name(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* RLTHROTTLE_H */
