/*
 * trap_probe.c: the test entry linked into a copy of the freestanding blob (see trap_probe.h):
 * the blob's own load (rlt_trap_libc_init: environ, the vDSO, the constructors, the rules) in a
 * first call, then the core's parser and a token bucket's decisions, the clock, a send through
 * the hook and a close's errno, all with the blob's code only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "load.h"
#include "nolibc.h"
#include "rlthrottle.h"
#include "start.h"
#include "trap_init.h"
#include "trap_probe.h"

void rlt_trap_probe(struct rlt_probe *p);

void rlt_trap_probe(struct rlt_probe *p)
{
	struct rlt_rule rules[4];
	struct rlt_error err;
	struct timespec ts;
	size_t n = 0;
	void *state;
	int local;

	p->self_ok = (uintptr_t)rlt_trap_self() == ((uintptr_t)&local & ~(uintptr_t)(RLT_TRAP_STACK - 1));
	if (p->phase == 1) {
		rlt_trap_libc_init(&p->cfg);
		if (rlt_trap_load(0, &err) != 0) {
			/* as the handler's init reports it: one line, and the launcher's 125 */
			write(2, "rlthrottle: ", 12);
			write(2, err.msg, strlen(err.msg));
			write(2, "\n", 1);
			_exit(125);
		}
		p->active = atomic_load(&rlt_pre_active);
		p->send_rules = rlt_pre_rules.n[RLT_VAR_SEND];
		return;
	}

	if (rlt_rules_parse(RLT_VAR_SEND, p->rule, rules, 4, &n, &err) != 0 || n != 1) {
		p->rc = 1;
		memcpy(p->msg, err.msg, sizeof p->msg - 1);
		return;
	}
	rlt_rule_format(&rules[0], p->msg, sizeof p->msg);
	state = malloc(rlt_state_size(&rules[0].params));
	if (!state || rlt_state_init(&rules[0].params, state, 0) != 0) {
		p->rc = 2;
		return;
	}
	for (int i = 0; i < PROBE_DECISIONS; i++)
		p->verdict[i] = (int)rlt_decide(&rules[0].params, state, p->t0, 1, RLT_MODE_NOW,
		                                &p->at[i]);
	free(state);

	clock_gettime(CLOCK_MONOTONIC, &ts);
	p->now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;

	p->sent = send(p->sock, "0123456789", 10, 0);
	errno = 0;
	close(-1);
	p->close_errno = errno;
}
