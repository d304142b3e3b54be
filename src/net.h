/*
 * net.h: network conditions (rlthrottle(7) NETWORK CONDITIONS, RLT_NET): latency, loss, reset,
 * hang, slice and connect faults, per process, with the rules' matchers.
 *
 * net_parse.c reads the grammar, net_format.c prints a condition in it; net_cond.c decides,
 * pure (no clock, no system call: `now` comes in): which conditions a socket gets, whether a
 * datagram is dropped, how many bytes one call may move, whether a connection is reset now,
 * how a connect ends.
 * net_set.c holds the conditions in force, which `rlthrottle set` replaces whole.
 */
#ifndef RLT_NET_H
#define RLT_NET_H

#include <stdatomic.h>
#include <stdint.h>

#include "policy.h"
#include "rlthrottle.h"

#define RLT_NET_VAR "RLT_NET"
#define RLT_NET_MAX 16 /* conditions in one value */

enum rlt__net_kind {
	RLT_NET_LATENCY = 0,
	RLT_NET_LOSS,
	RLT_NET_RESET,
	RLT_NET_HANG,
	RLT_NET_SLICE,
	RLT_NET_CONNECT,
	RLT_NET_KIND_COUNT
};

/* dir=: bits; 0 for a kind without a direction (reset, connect). */
#define RLT_NET_IN 1u
#define RLT_NET_OUT 2u
#define RLT_NET_BOTH 3u

enum rlt__net_dist { RLT_NET_UNIFORM = 0, RLT_NET_NORMAL };
enum rlt__net_connect { RLT_NET_REFUSE = 0, RLT_NET_TIMEOUT };
enum rlt__net_after { RLT_NET_AFTER_NONE = 0, RLT_NET_AFTER_TIME, RLT_NET_AFTER_BYTES };

/* The kernel's own connect timeout (6 SYN retries: 1+2+...+64 s), connect=timeout's default. */
#define RLT_NET_CONNECT_DEFAULT_NS (127ull * RLT_NS_PER_SEC)

/* A share in parts per million: 100% is 1000000. */
#define RLT_NET_PPM 1000000u

/* The matchers: as a rule's (rlthrottle(7) RULES), each also negated with "!=". */
struct rlt__net_match {
	int peer_af;           /* 0: any peer; AF_INET or AF_INET6 */
	uint8_t peer_addr[16]; /* network order, masked to the prefix */
	uint8_t peer_prefix;
	uint8_t peer_not;      /* peer!=: every peer but those */
	uint8_t port_not;
	uint8_t family_not;
	uint16_t port_lo, port_hi; /* 0-65535: any */
	enum rlt_family family;    /* default inet, as a rule's */
};

struct rlt__net_cond {
	enum rlt__net_kind kind;
	unsigned dir;              /* RLT_NET_IN/OUT/BOTH, 0 for reset and connect */
	uint64_t dur_ns;           /* latency */
	uint64_t jitter_ns;        /* latency */
	enum rlt__net_dist dist;   /* latency */
	uint32_t loss_ppm;         /* loss: each datagram's chance of being dropped */
	enum rlt__net_after after; /* reset, hang: when */
	uint64_t after_ns;         /* ... since the connection opened */
	uint64_t after_bytes;      /* ... once this many bytes moved, both ways */
	uint64_t close_ns;         /* hang: close this long after the hang began (0: never) */
	uint64_t slice_lo, slice_hi; /* slice: bytes per call, from lo to hi at random */
	uint64_t delay_ns;         /* slice: between the pieces of one blocking call */
	enum rlt__net_connect connect; /* connect= */
	uint64_t connect_ns;       /* connect=timeout: after this long */
	uint32_t p_ppm;            /* p=: the share of connections (or datagrams) it applies to */
	uint64_t seed;             /* seed= (has_seed), else the process's own */
	uint8_t has_seed;
	struct rlt__net_match m;
	char text[RLT_RULE_TEXT_MAX + 1]; /* as written, trimmed */
};

struct rlt__net_set {
	unsigned n;
	struct rlt__net_cond c[RLT_NET_MAX];
};

/* ----- net_parse.c ----- */

/* Reads an RLT_NET value (conditions separated by ';', blanks between them ignored; "" or
 * blanks alone: no condition). 0, or -EINVAL with err like
 *   RLT_NET="loss=150%": loss: "150%" is not a share in 0%..100%
 * naming the variable, quoting the condition and the wrong part. */
int rlt__net_parse(const char *value, struct rlt__net_set *out, struct rlt_error *err);

const char *rlt__net_kind_name(enum rlt__net_kind k);

/* ----- net_format.c ----- */

/* One condition in canonical form (every key explicit, base units), which rlt__net_parse reads
 * back to the same condition. Returns the length needed, as snprintf. */
int rlt__net_format(const struct rlt__net_cond *c, char *buf, size_t len);

/* ----- net_cond.c: pure decisions ----- */

/* Whether c's matchers admit a socket of family af with this peer (af 0: not known). */
int rlt__net_matches(const struct rlt__net_cond *c, int af, const struct rlt__peer *peer);

/*
 * A socket's random sequence: the n-th draw on a socket depends only on the seed, the socket's
 * key (which socket of the process it is) and n, whatever thread draws it; a forked child's copy of the
 * state continues the parent's sequence.
 */
struct rlt__net_rng {
	uint64_t seed;          /* the condition's seed (or the process's), mixed with the key */
	_Atomic uint64_t n;     /* draws made */
};
void rlt__net_rng_init(struct rlt__net_rng *r, uint64_t seed, uint64_t key);
/* The next draw, uniform in [0, 2^64). */
uint64_t rlt__net_draw(struct rlt__net_rng *r);
/* A draw below ppm out of RLT_NET_PPM: 1 with probability ppm / 1e6. */
int rlt__net_chance(struct rlt__net_rng *r, uint32_t ppm);

/* What a socket carries of the conditions in force: set when it opens (or is first seen),
 * again when a `set` replaced the conditions (gen). */
struct rlt__net_sock {
	uint32_t gen;            /* the set's generation these choices are for */
	uint32_t applies;        /* bit i: condition i of the set applies to this socket */
	int af;                  /* family */
	int stream;              /* a stream socket (not datagrams) */
	struct rlt__peer peer;   /* the peer, af 0 when not known */
	rlt_ns_t opened;         /* when it opened (or was first seen) */
	_Atomic uint64_t moved;  /* bytes moved both ways since it opened */
	_Atomic rlt_ns_t hung_at; /* hang: when it began (0: not yet) */
	_Atomic int ended;       /* reset done, or closed by hang's close= */
	struct rlt__net_rng rng;
	/* latency: the arrival (CLOCK_MONOTONIC) of the data at the head of the queue when it was
	 * last looked at, and when it reaches the program; receive timestamps asked for */
	_Atomic rlt_ns_t lat_arrived, lat_due;
	_Atomic rlt_ns_t lat_unstamped; /* when data without a timestamp was first seen */
	_Atomic int lat_stamps;
};

/* latency: when data that reached the host at `arrived` (CLOCK_MONOTONIC) reaches the program:
 * c's DUR later, give or take its jitter, drawn from the socket's sequence (dist=uniform: evenly
 * within DUR +- jitter; normal: jitter is the standard deviation), never before 0 nor before
 * `floor` (a stream's data ahead of it: jitter never reorders a stream; 0 for a datagram). */
rlt_ns_t rlt__net_latency_due(const struct rlt__net_cond *c, struct rlt__net_rng *rng,
                              rlt_ns_t arrived, rlt_ns_t floor);
/* A datagram's due time under latency c: p= chooses each datagram (a stream's connection was
 * chosen when it opened), one draw per arrival; one left out is due at its arrival. */
rlt_ns_t rlt__net_datagram_due(const struct rlt__net_cond *c, struct rlt__net_rng *rng,
                               rlt_ns_t arrived);

/* A socket opened at `now`; key: its place in the random sequences (the front numbers the
 * sockets a process opens, so that the n-th socket's choices are the same on every run). */
void rlt__net_sock_open(struct rlt__net_sock *s, int af, int stream, const struct rlt__peer *peer,
                        uint64_t seed, uint64_t key, rlt_ns_t now);
/* Chooses again which conditions of set (generation gen) apply to s: the matchers, then p=. */
void rlt__net_sock_choose(struct rlt__net_sock *s, const struct rlt__net_set *set, uint32_t gen);

/* The first condition of kind k that applies to s (and, when dir is not 0, to that direction),
 * or NULL. */
const struct rlt__net_cond *rlt__net_find(const struct rlt__net_set *set,
                                          const struct rlt__net_sock *s, enum rlt__net_kind k,
                                          unsigned dir);

/* The first condition of kind k that applies to s (dir as rlt__net_find) and matches a
 * datagram from `from`: on a datagram socket without a peer, latency's per datagram. */
const struct rlt__net_cond *rlt__net_find_from(const struct rlt__net_set *set,
                                               const struct rlt__net_sock *s,
                                               enum rlt__net_kind k, unsigned dir,
                                               const struct rlt__peer *from);

/* loss: whether this datagram (dir RLT_NET_IN or OUT) is dropped; `to`: its address when the
 * socket has no peer (NULL: none). Matched per datagram; draws once per loss condition that
 * matches (twice with p=). */
int rlt__net_drop(const struct rlt__net_set *set, struct rlt__net_sock *s, unsigned dir,
                  const struct rlt__peer *to);

/* slice: the most one call in direction dir may move of want bytes (want when no slice). */
uint64_t rlt__net_slice(const struct rlt__net_set *set, struct rlt__net_sock *s, unsigned dir,
                        uint64_t want);

/* reset: 1 when the connection must be reset now (before a call); *room: the bytes the call
 * may still move before an after=SIZE reset is due (UINT64_MAX: no bound). */
int rlt__net_reset_due(const struct rlt__net_set *set, const struct rlt__net_sock *s,
                       rlt_ns_t now, uint64_t *room);

/* hang: 0 none (or not yet), 1 hung (no data moves), 2 hung and its close= is due now. *room
 * as rlt__net_reset_due's for an after=SIZE hang; *until: when close= is due (RLT_NS_NEVER:
 * never). Marks when the hang began. */
int rlt__net_hang_state(const struct rlt__net_set *set, struct rlt__net_sock *s, rlt_ns_t now,
                        uint64_t *room, rlt_ns_t *until);

/* connect: what a connection attempt to peer (family af) gets: -1 nothing, or
 * RLT_NET_REFUSE, or RLT_NET_TIMEOUT with *after_ns. Draws for p=. */
int rlt__net_connect_fault(const struct rlt__net_set *set, int af, const struct rlt__peer *peer,
                           struct rlt__net_rng *rng, uint64_t *after_ns);

/* ----- net_set.c: the conditions in force ----- */

/* Counters of what the conditions did (the summary and the page; relaxed). */
struct rlt__net_stats {
	_Atomic uint64_t dropped;  /* datagrams dropped by loss */
	_Atomic uint64_t resets;   /* connections reset */
	_Atomic uint64_t slices;   /* calls cut short by slice */
	_Atomic uint64_t refused;  /* connects refused */
	_Atomic uint64_t timeouts; /* connects timed out */
	_Atomic uint64_t hangs;    /* calls held by hang */
};
/* Where they are counted: the process's own, or its page once published (publish.c). */
extern struct rlt__net_stats rlt__net_own;
extern struct rlt__net_stats *rlt__net_counts;

/* The generation of the conditions in force: one more at each set (a socket's choice of what
 * applies to it holds for one generation: rlt__net_sock gen). */
extern _Atomic uint32_t rlt__net_gen;
/* The conditions in force (never NULL once rlt__net_load ran; n 0: none) and their generation,
 * bumped by each set. */
const struct rlt__net_set *rlt__net_now(uint32_t *gen);
/* Load time: the conditions from RLT_NET's value (NULL: unset). 0, or -EINVAL with err. */
int rlt__net_load(const char *value, struct rlt_error *err);
/* `rlthrottle set PID RLT_NET TEXT`: the conditions replaced whole ("" clears them). 0 with
 * err saying what is in force, or -EINVAL (nothing changed). */
int rlt__net_set_text(const char *text, struct rlt_error *err);
/* Why this build cannot apply c (NULL: it can): rlt__net_load and rlt__net_set_text refuse
 * it, and the launcher's check too. */
const char *rlt__net_unsupported(const struct rlt__net_cond *c);
/* RLT_NET was in the environment at load (even empty): the process publishes a page, so that
 * `set PID RLT_NET` reaches it, rules or not. */
extern int rlt__net_wanted;
/* Called by a set that brings conditions (the front installs what applies them). */
extern void (*rlt__net_on_set)(void);
/* The seed of conditions without seed=: the process's (the pid and the clock at load). */
uint64_t rlt__net_default_seed(void);

#endif
