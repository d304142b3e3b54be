/*
 * scope_shm.h: scope=shared:NAME. The engine state of a rule lives in a POSIX shared-memory
 * segment /rlthrottle.NAME that every process naming the scope maps; the engines run on it
 * unchanged (RLT_STATE_SHARED). The first process to name a scope creates the segment and its
 * params win: a later process whose rule differs is refused with a message saying what differs.
 * A segment outlives the processes (a budget must not reset when a worker restarts): it goes
 * with `rlthrottle shm rm NAME` or a reboot. A keyed rule (key=) keeps its table of keys there
 * (keytab.h: rlt__keytab_bytes(keys) after the header), sized once by the creator's keys=.
 */
#ifndef RLT_SCOPE_SHM_H
#define RLT_SCOPE_SHM_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "rlthrottle.h"

#define RLT_SHM_PREFIX "rlthrottle."   /* the object is "/" RLT_SHM_PREFIX NAME */
#define RLT_SHM_DIR "/dev/shm"         /* where Linux keeps POSIX shared memory */
#define RLT_SHM_MAGIC 0x314d48532d544c52ull /* "RLT-SHM1" little-endian */
#define RLT_SHM_LAYOUT 5u              /* bumped whenever the header or a state changes shape */
#define RLT_SHM_HOLDERS 512            /* RLT_CONNS: processes that can hold slots at once */
#define RLT_SHM_SET_SLOTS 16           /* token/leaky states a set may carry the budget into */

/*
 * RLT_CONNS in a segment: who holds the slots counted in `open`, so that the slots of a
 * process that died without closing (SIGKILL) can be taken back (conns.c). A process claims
 * one entry (owner from 0 to its identity: pid and start time, so a reused pid is not taken
 * for it) and counts its slots there; an entry whose owner is gone is emptied into `open`.
 */
struct rlt__shm_holder {
	_Atomic uint64_t owner;  /* 0 free; pid | start time << 32; bit 63 while being emptied */
	_Atomic uint32_t count;  /* slots of `open` this process holds */
	uint32_t pad;
};

/* The head of a segment. Written once by the creator before `ready`, read-only after. */
struct rlt__shm_hdr {
	uint64_t magic;          /* RLT_SHM_MAGIC */
	uint32_t layout;         /* RLT_SHM_LAYOUT */
	_Atomic uint32_t ready;  /* 1 once the state is initialised (release order) */
	int32_t creator;         /* pid of the creator, written before it initialises the state */
	uint32_t var;            /* the creator's variable (enum rlt_var), for `shm list` */
	uint64_t size;           /* bytes of the whole segment */
	uint64_t state_off;      /* where the engine state starts (64-byte aligned) */
	uint64_t created;        /* CLOCK_REALTIME seconds at creation, for `shm list` */
	/* What every process naming the scope must agree on. */
	uint32_t algo;           /* enum rlt_algo (0 for RLT_CONNS) */
	uint32_t unit;           /* enum rlt_unit: bytes, messages, calls or connections */
	uint64_t rate_num;       /* params.rate_num; RLT_CONNS: the limit */
	uint64_t rate_den_ns;    /* params.rate_den_ns */
	uint64_t burst;          /* params.burst */
	uint64_t limit;          /* params.limit (windows, log) */
	uint64_t window_ns;      /* params.window_ns (windows, log) */
	uint32_t key;            /* enum rlt_key: RLT_KEY_NONE, or the state is a keyed table
	                            (keytab.h) at state_off, its size fixed here by `keys` */
	uint32_t keys;           /* keys= of a keyed rule (0 when not keyed) */
	uint32_t key_prefix4;    /* key=peer/P4,P6 (0 when not key=peer) */
	uint32_t key_prefix6;
	_Atomic uint32_t open;   /* RLT_CONNS: connections open now, across processes (a futex) */
	uint32_t pad;
	char text[RLT_RULE_TEXT_MAX + 1]; /* the creator's rule as written */
	/* `rlthrottle set shared:NAME` (rule_set.c): the rule in force since a set, under a
	 * sequence word (a seqlock); the fields above stay the creator's, which a process naming
	 * the scope later must still name. Setters take the object's flock. */
	_Atomic uint32_t set_gen; /* 0: never set; odd while a set writes; even after */
	uint32_t set_slot;        /* where the state is: 0 at state_off, k in set_slots[k - 1] */
	uint32_t set_action;      /* enum rlt_action */
	int32_t set_err;          /* errno of a rejected call */
	uint64_t set_since;       /* CLOCK_MONOTONIC ns the set took effect */
	struct rlt_params set_params;
	char set_text[RLT_RULE_TEXT_MAX + 1];
	/* token/leaky states a set whose rate outran the first tick size carried the budget into
	 * (rlt_state_carry), used in turn */
	_Alignas(64) _Atomic uint64_t set_slots[RLT_SHM_SET_SLOTS];
};

/* The header of the segment a shared rule's state (from rlt__shm_attach) lives in. */
struct rlt__shm_hdr *rlt__shm_hdr_of(void *state);

/*
 * Maps the segment of a shared-scope rule, creating it when no process has yet. *state gets
 * the engine state (a keyed rule's: the base of its table's area, keytab.h; NULL for RLT_CONNS), *open the segment's RLT_CONNS counter and *holders its
 * table of RLT_SHM_HOLDERS holders (NULL but for RLT_CONNS). Returns 0, or a
 * negative errno with err->msg naming the variable, the rule and what is wrong (params that
 * differ from the creator's, a segment another user owns or can write, one that never became
 * ready). Waits at most about 2 s for a creator that is still setting the segment up.
 */
int rlt__shm_attach(const struct rlt_rule *r, void **state, _Atomic uint32_t **open,
                    struct rlt__shm_holder **holders, struct rlt_error *err);

/* 1 when NAME is a valid scope name ([A-Za-z0-9._-]{1,RLT_NAME_MAX}, not "." or ".."). */
int rlt__shm_name_ok(const char *name);

/* What `rlthrottle shm list` shows of one segment. */
struct rlt__shm_info {
	char name[RLT_NAME_MAX + 1];
	uint64_t size;           /* bytes */
	uid_t uid;
	mode_t mode;
	int readable;            /* 0: could not be opened: only the above is known */
	const char *not_file;    /* not a segment at all: "a symbolic link", "a FIFO", ... (the
	                            owner and mode above are then its own, by lstat) */
	int valid;               /* the header is ours and ready (size may differ from hdr.size:
	                            truncated when smaller, extended when larger) */
	struct rlt__shm_hdr hdr; /* a copy, when valid */
};

/* Calls each() for every /rlthrottle.* segment. Returns 0 or -errno (err says why). */
int rlt__shm_list(void (*each)(const struct rlt__shm_info *info, void *ctx), void *ctx,
                  struct rlt_error *err);

/* Removes the segment of NAME (processes that have it mapped keep their mapping). */
int rlt__shm_remove(const char *name, struct rlt_error *err);

#endif
