/*
 * publish.h: the page a throttled process publishes its rules and counters in, so that
 * `rlthrottle top` and `rlthrottle stats` can read them while it runs (rlthrottle(1) COMMANDS).
 *
 * One page per process: /dev/shm/rlthrottle-UID-PID-START (START: field 22 of /proc/PID/stat,
 * so that a recycled pid is never taken for the process that made the page), mode 0600, made
 * by the preload (or the --seccomp handler) at load and in a fork's child, removed at exit. A reader recognises a stale page (its pid gone, or
 * started at another time) and removes it.
 *
 * The counters of a rule live IN the page: struct rlt__rt_rule's `st` points at its record's
 * counters, so the hot path counts as it always did (relaxed 64-bit atomics, aligned: a reader
 * never sees half a counter), and publishing costs nothing more than counting. What may change
 * after creation (the rule's parameters: `rlthrottle set`) sits under a per-record sequence
 * word (a seqlock: odd while written).
 *
 * The layout is versioned (RLT_PUB_VERSION): a reader refuses a page of another version, size,
 * owner or mode, and bounds every count and index it reads from it before use.
 */
#ifndef RLT_PUBLISH_H
#define RLT_PUBLISH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "net.h"
#include "policy.h"

#define RLT_PUB_MAGIC 0x31425550544c52ull /* "RLTPUB1" read as a little-endian word */
/* 4: the dry-run counters (would_*) apart from delayed and rejected; 5: an RLT_CONNS rule's
 * connections open now (struct rlt__pub_rec's open); 6: RLT_NET's conditions and counts */
#define RLT_PUB_VERSION 6u
#define RLT_PUB_DIR "/dev/shm/"
#define RLT_PUB_PREFIX "rlthrottle-"
/* The control area of the header: opaque to this module, zeroed at creation. `rlthrottle set`
 * (its requests and answers) owns it. */
#define RLT_PUB_CTL_SIZE 8192u
/* The conditions in force as the page shows them: every RLT_NET condition's text, "; " apart. */
#define RLT_PUB_NET_TEXT (RLT_NET_MAX * (RLT_RULE_TEXT_MAX + 2))
/* Seconds of history per rule. */
#define RLT_PUB_HIST 60u
/* The busiest keys a keyed rule's record shows. */
#define RLT_PUB_BUSIEST 8u
/* A keyed rule's busiest keys are found by a scan of its table (rlt__pub_keys), after the
 * decisions of a call that ticked: at each page tick (RLT_PUB_CHECK_NS) while calls come, or,
 * for a table larger than this many keys per second, once every keys/this seconds, so that the
 * scans cost at most about this many slots' reads a second (a full table of 4096 keys, the
 * default, is some 15 us to scan: 8 ms apart, 0.2% of a core while its traffic flows). The view
 * is then as fresh as the last calls, not waiting for the next call (issue 17 row 16). */
#define RLT_PUB_SCAN_PER_SEC 524288u
/* The most rules a page can describe (every variable full). */
#define RLT_PUB_MAX_RULES (RLT_VAR_COUNT * RLT_MAX_RULES_PER_VAR)

struct rlt__pub_hdr {
	uint64_t magic;           /* RLT_PUB_MAGIC, written last at creation (release) */
	uint32_t version;         /* RLT_PUB_VERSION */
	uint32_t hdr_size;        /* sizeof(struct rlt__pub_hdr): where the records start */
	uint64_t size;            /* bytes of the whole page */
	uint32_t uid;             /* the owner's effective uid */
	int32_t pid;              /* the process the page describes */
	uint64_t proc_start;      /* its start time: /proc/PID/stat field 22, clock ticks */
	uint64_t started_unix_ns; /* CLOCK_REALTIME when the page was made (for people) */
	uint64_t started_ns;      /* CLOCK_MONOTONIC then (rates since start) */
	uint32_t nrules;          /* records that follow */
	uint32_t rec_size;        /* sizeof(struct rlt__pub_rec) */
	uint32_t reserved[2];
	/* The newest second (CLOCK_MONOTONIC / 1e9) the history rings hold an entry for; written
	 * (release) after the entries. */
	_Atomic uint64_t hist_sec;
	_Alignas(64) unsigned char ctl[RLT_PUB_CTL_SIZE];
	/* RLT_NET (rlthrottle(7) NETWORK CONDITIONS): what the conditions did, counted here once
	 * the page exists (rlt__net_counts), and those in force, as written (net_len bytes of
	 * net_text, under net_seq: a seqlock, odd while written; rlt__pub_net_update) */
	struct rlt__net_stats net;
	_Atomic uint32_t net_seq;
	uint32_t net_len;
	char net_text[RLT_PUB_NET_TEXT];
};

/* The parameters of a rule as published: what `set` may change, read under the seqlock. */
struct rlt__pub_params {
	uint32_t algo;        /* enum rlt_algo */
	uint32_t scope;       /* enum rlt_scope */
	uint32_t action;      /* enum rlt_action */
	uint32_t unit;        /* enum rlt_unit */
	uint64_t rate_num;    /* the limit: rate_num units every rate_den_ns ns; RLT_CONNS: the */
	uint64_t rate_den_ns; /* number of connections, rate_den_ns 0 */
	uint64_t burst;       /* units in force (the default made explicit); 0 for windows */
	uint64_t keys;        /* key=: the most keys tracked (keys=); 0: no key */
	uint32_t key;         /* enum rlt_key */
	uint32_t key_prefix4, key_prefix6; /* key=peer's prefixes */
	uint32_t reserved;
	char text[RLT_RULE_TEXT_MAX + 1]; /* the rule as given */
};

struct rlt__pub_rec {
	_Atomic uint32_t seq; /* even: params stable; odd: being written */
	uint32_t var;         /* enum rlt_var (fixed at creation) */
	uint32_t index;       /* the rule's place in its variable (fixed) */
	uint32_t reserved;
	struct rlt__pub_params params;
	_Alignas(8) struct rlt__stats st; /* the counters the hot path updates */
	/* RLT_CONNS: the connections open now, a copy of the rule's count (rlt__pub_open_now):
	 * the count itself stays where connect and close wait on it (process memory, or the shared
	 * segment). 0 for other variables and for key= rules (their counts are per key). */
	_Atomic uint64_t open;
	/* Units counted (st.units) when second s began, at [s % RLT_PUB_HIST]: the history is the
	 * differences. Written by the first call that sees a new second (rlt__pub_tick). */
	_Atomic uint64_t hist[RLT_PUB_HIST];
	/* key=: the busiest keys when the table was last scanned, most units first; under
	 * keys_seq (a seqlock, odd while written). */
	_Atomic uint32_t keys_seq;
	uint32_t nbusy;
	struct rlt__pub_key {
		uint64_t w[3];          /* the key (keytab.h's struct rlt__key) */
		uint64_t units;         /* charged to it since it took its slot */
		uint64_t would_delay_ns; /* action=dry-run: what delay would have made it wait */
		uint64_t would_reject;  /* action=dry-run: its calls reject would have refused */
	} busy[RLT_PUB_BUSIEST];
};

/* The writer's handle (process memory): the mapping and when the next second starts. */
struct rlt__pub {
	struct rlt__pub_hdr *hdr;
	size_t size;
	_Atomic uint64_t next_ns; /* CLOCK_MONOTONIC of the next tick (rlt__pub_tick) */
	unsigned first[RLT_VAR_COUNT]; /* record of rule 0 of each variable */
	char path[96];
};

/*
 * Makes the page of process `pid` (its start time read from /proc) for the rules of rs, points
 * each rule's counters at its record (carrying over what they counted so far) and turns
 * counting on. A page of the same name (an exec in the same process) is replaced. Returns 0,
 * or a negative errno with err saying why: the rules then keep their private counters and the
 * process runs on unpublished. Load time or a fork's child: not a hook's path.
 */
int rlt__pub_create(struct rlt__ruleset *rs, pid_t pid, struct rlt_error *err);

/* Removes the page's name (async-signal-safe: unlink only). The mapping stays, so that threads
 * still counting and a summary written afterwards read valid memory. */
void rlt__pub_unlink(struct rlt__pub *p);
/* The page's name again after rlt__pub_unlink (an exec that failed): a new file with the
 * page's contents, mapped over it at the same address. A count another thread makes in that
 * instant may be lost. 0 or -errno (the page then stays unnamed). */
int rlt__pub_relink(struct rlt__pub *p);

/* Unlinks and unmaps the page of rs, and points its rules back at their private counters,
 * carrying over the counts. For a ruleset no thread decides on any more. */
void rlt__pub_destroy(struct rlt__ruleset *rs);

/* In a fork's child (the atfork child handler): the page mapped is the parent's; leave it
 * (without removing its name) and make the child's own, with zero counters. Without a page the
 * rules count privately, from zero. */
void rlt__pub_forked(struct rlt__ruleset *rs, pid_t pid);

/* The conditions in force (rlt__net_now) into rs's page, at its creation and after each set of
 * RLT_NET (seqlock: a reader sees the old text or the new). */
void rlt__pub_net_update(struct rlt__ruleset *rs);
/* `set` changed rule i of var in rs (rs->rules[var][i].rule): publish its new parameters
 * (seqlock: a reader sees the old ones or the new ones, never half). */
void rlt__pub_rule_update(struct rlt__ruleset *rs, enum rlt_var var, unsigned i);

/* RLT_CONNS: rule r's count is now n; into its record when the rule is published (its
 * counters then live in the record, so r->st finds it). A relaxed store, at the connect or
 * close that changed the count: a process with only RLT_CONNS rules never charges, so the
 * page's tick alone would leave the figure behind. */
static inline void rlt__pub_open_now(struct rlt__rt_rule *r, uint32_t n)
{
	if (r->st != &r->own)
		atomic_store_explicit(&((struct rlt__pub_rec *)((char *)r->st -
		                                                offsetof(struct rlt__pub_rec, st)))
		                           ->open,
		                      n, memory_order_relaxed);
}

/* Every RLT_CONNS rule's count into its record: at the page's tick, for the shared scope's
 * counts, which other processes move. */
void rlt__pub_conns(struct rlt__ruleset *rs);

/* The writer's control area (RLT_PUB_CTL_SIZE bytes, 64-byte aligned). */
void *rlt__pub_ctl(struct rlt__pub *p);

/* How far apart the ticks are at most while calls come: each also looks at the control area
 * (a `rlthrottle set`), so a set takes effect within this of its request, or at the first
 * call after a quiet spell, and a conforming call pays no check of its own for it. */
#define RLT_PUB_CHECK_NS (5 * 1000 * 1000ull)

/* The busiest keys of rs's keyed rules into its page, when their time has come (see
 * RLT_PUB_SCAN_PER_SEC): called by the call that ticked, after its decisions. */
void rlt__pub_keys(struct rlt__ruleset *rs, rlt_ns_t now);

/* 1 when this thread's call ticked (the control area is to be looked at). */
int rlt__pub_roll(struct rlt__pub *p, rlt_ns_t now);

/* Called with the clock reading a charge already made: a relaxed load and a compare, except
 * for the first call of each tick (RLT_PUB_CHECK_NS), which rolls the history when a new
 * second began and answers 1. */
static inline int rlt__pub_tick(struct rlt__pub *p, rlt_ns_t now)
{
	if (p && now >= atomic_load_explicit(&p->next_ns, memory_order_relaxed))
		return rlt__pub_roll(p, now);
	return 0;
}

/* The page's name for (uid, pid, start); 0 or -ENAMETOOLONG. */
int rlt__pub_path(char *buf, size_t len, uid_t uid, pid_t pid, uint64_t start);

#endif
