/*
 * rule_set.h: `rlthrottle set` (rlthrottle(1) COMMANDS): a rule of a running process, or of a shared scope,
 * replaced by a new rate, burst, action or max-wait without a restart and without a moment
 * unlimited.
 *
 * In a process, a rule's hot-path fields are one immutable block (struct rlt__rule_ver) that a
 * set replaces with one pointer store; token and leaky params continue the same state
 * (rlt_params_retune), so the budget carries over. The request comes through the control area
 * of the process's published page (struct rlt__ctl): the setter writes it, and the process
 * applies it itself at its next throttled call (its hot path loads one word and compares), or
 * within RLT_SET_SLICE_NS when a thread waits. A shared scope's segment is set and followed by
 * shm_set.c.
 */
#ifndef RLT_RULE_SET_H
#define RLT_RULE_SET_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy.h"
#include "publish.h"

/*
 * The control area (the first bytes of the page's RLT_PUB_CTL_SIZE, zeroed at creation).
 * Requests are sequenced by `seq`: odd while a setter writes one, even once it is posted. The
 * process answers the request it read as `done` (= its seq), with `result` and `msg` written
 * before. One setter at a time: `setter` holds its pid (a dead holder's place is taken).
 */
struct rlt__ctl {
	_Atomic uint32_t seq;    /* bumped twice per request: odd while written */
	_Atomic uint32_t done;   /* the seq of the last request answered (release) */
	_Atomic int32_t setter;  /* 0, or the pid of the setter using the area */
	int32_t result;          /* the answer to `done`: 0 applied, or a negative errno */
	uint32_t var;            /* request: enum rlt_var */
	int32_t index;           /* request: the rule's place in var (0-based), -1: by filters */
	char text[RLT_RULE_TEXT_MAX + 1]; /* request: the new rule */
	char msg[sizeof(struct rlt_error)]; /* answer: the rule now in force, or why nothing changed */
};

/* struct rlt__ctl's var for `set PID RLT_NET TEXT` (not a rule's variable): the network
 * conditions replaced whole (net_set.c). */
#define RLT_CTL_VAR_NET 0x4e4554u

/* A request posted and not yet answered: the hot path's check (one relaxed load, a compare). */
static inline int rlt__ctl_pending(const struct rlt__ruleset *rs)
{
	const struct rlt__ctl *c = (const void *)rs->pub->hdr->ctl;
	return atomic_load_explicit(&c->seq, memory_order_relaxed) !=
	       atomic_load_explicit(&rs->ctl_seen, memory_order_relaxed);
}

/* Applies the request posted in rs->pub's control area, if any, and answers it. Any thread, any time (a
 * hook's slow path, a signal handler's call): one applies, the others go on. */
void rlt__ctl_serve(struct rlt__ruleset *rs);

/* One rule of var parsed from text into *out, more than one refused: 0, or rule_parse.c's
 * error, or -EINVAL with "VAR=\"SHOWN\": set takes one rule" (shown: the text as the user gave
 * it, NULL for text itself). */
int rlt__rule_parse_one(enum rlt_var var, const char *text, const char *shown,
                        struct rlt_rule *out, struct rlt_error *err);

/* The set of a rule given as text: which rule (rule_set.c rule_pick), then the swap (rule_set) (rule_parse.c's errors). On success
 * *which is the rule's place and err holds a line saying what is in force now. */
int rlt__rule_set_text(struct rlt__ruleset *rs, enum rlt_var var, int index, const char *text,
                       rlt_ns_t now, unsigned *which, struct rlt_error *err);

/*
 * What makes two rules the same rule for `set`: not the rate, the burst, the action, max-wait
 * or errno (what a set changes), but what the budget is of and which calls it counts. NULL
 * when the same, else what differs (a process's set, and a shared segment's: shm_set.c).
 */
const char *rlt__rule_differs(const struct rlt_rule *a, const struct rlt_rule *b);

/* A new block for a rule whose block is `old`: nr's action and errno, np's params on `state`,
 * in force since `now`. NULL: no memory. */
struct rlt__rule_ver *rlt__rule_ver_new(const struct rlt__rule_ver *old, const struct rlt_rule *nr,
                                        const struct rlt_params *np, void *state, rlt_ns_t now);

/* ----- the setter's side (the launcher) ----- */

/*
 * Posts a request in a process's control area and waits up to wait_ns for the answer.
 * Returns 0 (applied; err: what is in force), 1 (posted, not answered yet: the process makes no
 * throttled call now and applies it at its next one), or a negative errno with err saying why
 * (the process's refusal, or another setter busy).
 */
int rlt__ctl_request(struct rlt__ctl *c, enum rlt_var var, int index, const char *text,
                     rlt_ns_t wait_ns, struct rlt_error *err);

#endif
