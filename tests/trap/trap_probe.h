/*
 * trap_probe.h: what test_trap_load (a normal program) and trap_probe.c (linked into a copy of
 * the freestanding blob, rlthrottle-trap-probe.elf) exchange: the loader fills the inputs,
 * maps the blob, and calls its entry point on a trap stack with this struct.
 */
#ifndef RLT_TEST_TRAP_PROBE_H
#define RLT_TEST_TRAP_PROBE_H

#include <stdint.h>

#include "nolibc.h"

#define PROBE_DECISIONS 8

struct rlt_probe {
	/* in */
	int phase;               /* 1: the load (rlt_trap_libc_init) only; 2: the rest */
	struct rlt_trap_libc_cfg cfg; /* environ (RLT_SEND ...) and auxv for rlt_trap_libc_init */
	const char *rule;        /* a rule to parse with the core */
	uint64_t t0;             /* the time of the decisions */
	int sock;                /* a socket to send `sent` bytes on through the send hook */
	/* out */
	int rc;                  /* 0, or the step that failed (its message in msg) */
	char msg[512];           /* the rule's canonical form (rlt_rule_format), or an error */
	int verdict[PROBE_DECISIONS];
	uint64_t at[PROBE_DECISIONS];
	uint64_t now;            /* CLOCK_MONOTONIC read by the blob */
	int active;              /* rlt_pre_active after the load */
	unsigned send_rules;     /* the RLT_SEND rules the load found in environ */
	long sent;               /* what send() through the hook returned */
	int close_errno;         /* errno after close(-1) through the close hook */
	int self_ok;             /* rlt_trap_self() is the block at the base of the stack */
};

#endif
