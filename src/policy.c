/*
 * policy.c: the rules in force, which apply to a call, and building them at load time.
 * The charge of a call lives in charge.c.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/un.h>

#include "clock.h"
#include "conns.h"
#include "keytab.h"
#include "pacing.h"
#include "policy.h"
#include "scope_command.h"
#include "scope_redis.h"
#include "scope_redis_key.h"
#include "scope_shm.h"

void rlt__peer_from_sockaddr(struct rlt__peer *p, const struct sockaddr *sa, socklen_t len)
{
	static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	memset(p, 0, sizeof *p);
	if (!sa || len < (socklen_t)sizeof(sa_family_t))
		return;
	switch (sa->sa_family) {
	case AF_INET: {
		const struct sockaddr_in *in = (const void *)sa;
		if (len < (socklen_t)sizeof *in)
			return;
		p->af = AF_INET;
		memcpy(p->addr, &in->sin_addr, 4);
		p->port = ntohs(in->sin_port);
		break;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		if (len < (socklen_t)sizeof *in6)
			return;
		p->port = ntohs(in6->sin6_port);
		if (memcmp(&in6->sin6_addr, v4mapped, 12) == 0) {
			p->af = AF_INET;
			memcpy(p->addr, (const uint8_t *)&in6->sin6_addr + 12, 4);
		} else {
			p->af = AF_INET6;
			memcpy(p->addr, &in6->sin6_addr, 16);
		}
		break;
	}
	case AF_UNIX:
		p->af = AF_UNIX;
		break;
	default:
		p->af = sa->sa_family;
		break;
	}
}

int rlt__prefix_match(const uint8_t *a, const uint8_t *net, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(a, net, whole) != 0)
		return 0;
	if (rest == 0)
		return 1;
	uint8_t m = (uint8_t)(0xff << (8 - rest));
	return (a[whole] & m) == (net[whole] & m);
}

static int rule_matches(const struct rlt_rule *r, const struct rlt__peer *peer)
{
	int inet = peer->af == AF_INET || peer->af == AF_INET6;

	switch (r->family) {
	case RLT_FAMILY_INET:
		if (!inet)
			return 0;
		break;
	case RLT_FAMILY_UNIX:
		if (peer->af != AF_UNIX)
			return 0;
		break;
	case RLT_FAMILY_ALL:
		break;
	}
	if (r->peer_af) {
		if (peer->af != r->peer_af)
			return 0;
		if (!rlt__prefix_match(peer->addr, r->peer_addr, r->peer_prefix))
			return 0;
	}
	if (r->port_lo != 0 || r->port_hi != 65535) {
		if (!inet || peer->port < r->port_lo || peer->port > r->port_hi)
			return 0;
	}
	return 1;
}

uint32_t rlt__match(const struct rlt__ruleset *rs, enum rlt_var var, const struct rlt__peer *peer)
{
	uint32_t mask = 0;

	for (unsigned i = 0; i < rs->n[var]; i++)
		if (rule_matches(&rs->rules[var][i].rule, peer))
			mask |= 1u << i;
	return mask;
}

uint32_t rlt__match_on(const struct rlt__ruleset *rs, enum rlt_var var,
                       const struct rlt__peer *peer, int af)
{
	struct rlt__peer p = *peer;

	if (!rs->n[var])
		return 0;
	if (p.af == 0)
		p.af = af;
	return rlt__match(rs, var, &p);
}

void rlt__match_socket(const struct rlt__ruleset *rs, const struct rlt__peer *peer, int af,
                       uint32_t mask[RLT_VAR_COUNT])
{
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		mask[v] = rlt__match_on(rs, (enum rlt_var)v, peer, af);
}

uint32_t rlt__match_accept(const struct rlt__ruleset *rs, const struct rlt__peer *remote,
                           uint16_t local_port)
{
	struct rlt__peer p = *remote;

	if (!rs->n[RLT_VAR_ACCEPT])
		return 0;
	p.port = local_port;
	return rlt__match(rs, RLT_VAR_ACCEPT, &p);
}

uint32_t rlt__match_accept_sure(const struct rlt__ruleset *rs, int af, uint16_t local_port)
{
	struct rlt__peer p = {.af = af, .port = local_port};
	uint32_t mask = 0;

	for (unsigned i = 0; i < rs->n[RLT_VAR_ACCEPT]; i++) {
		const struct rlt_rule *r = &rs->rules[RLT_VAR_ACCEPT][i].rule;
		if (!r->peer_af && r->key != RLT_KEY_PEER && rule_matches(r, &p))
			mask |= 1u << i;
	}
	return mask;
}

int rlt__accept_by_client(const struct rlt__ruleset *rs)
{
	for (unsigned i = 0; i < rs->n[RLT_VAR_ACCEPT]; i++) {
		const struct rlt_rule *r = &rs->rules[RLT_VAR_ACCEPT][i].rule;
		if (r->peer_af || r->key == RLT_KEY_PEER)
			return 1;
	}
	return 0;
}

void rlt__conn_block_init(const struct rlt__ruleset *rs, void *block)
{
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rs->n[v]; i++) {
			const struct rlt__rt_rule *r = &rs->rules[v][i];
			if (r->rule.scope == RLT_SCOPE_CONNECTION)
				rlt_state_init(&rlt__ver(r)->params, (char *)block + r->conn_off, 0);
		}
}

void *rlt__map_anon(size_t size)
{
	void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return m == MAP_FAILED ? NULL : m;
}

const char *rlt__rule_unsupported(const struct rlt_rule *r)
{
	/* A count of open connections across machines would leak whatever a crashed machine held
	 * open, with nothing to notice; a lease makes no sense for it either. */
	if (r->scope == RLT_SCOPE_REDIS && r->var == RLT_VAR_CONNS)
		return "RLT_CONNS cannot have a redis:// scope (use process or shared:NAME)";
	/* Parsed, not enforced yet (issue 11 is built in steps): refused rather than accepted
	 * and ignored, which would leave a limit the user asked for silently off. */
	if (r->key != RLT_KEY_NONE && r->var == RLT_VAR_CONNS && r->scope == RLT_SCOPE_SHARED)
		return "RLT_CONNS with key= is supported in scope=process only by this build (a "
		       "count per key in a shared segment is not built yet)";
	/* keytab.h: a key's state is reset by one store, which a lock-holding engine's is not */
	if (r->key != RLT_KEY_NONE && r->var != RLT_VAR_CONNS && r->algo != RLT_ALGO_TOKEN &&
	    r->algo != RLT_ALGO_LEAKY && r->algo != RLT_ALGO_FIXED_WINDOW)
		return "key= is supported with algo=token, leaky or fixed-window only by this build";
	return NULL;
}

void rlt__ruleset_keys_forked(struct rlt__ruleset *rs)
{
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rs->n[v]; i++)
			if (rs->rules[v][i].keytab)
				rlt__keytab_forked(rs->rules[v][i].keytab);
}

const char *rlt__rule_unsupported_trap(const struct rlt_rule *r)
{
	const char *why = rlt__rule_unsupported(r);

	return why;
}

static int check_supported(const struct rlt_rule *r, struct rlt_error *err)
{
	const char *why = rlt__rule_unsupported(r);

	if (!why)
		return 0;
	snprintf(err->msg, sizeof err->msg, "%s=\"%.300s\": %s", rlt_var_name(r->var), r->text,
	         why);
	return -ENOTSUP;
}

/* Rule r's table of keys in process memory, for params p (NULL: counts or leases). Seeded at
 * load so that clients cannot aim their addresses at one set; each key's units (the busiest
 * keys) counted with statistics on (RLT_STATS here, the page at rlt__pub_create). */
static int new_keytab(struct rlt__ruleset *rs, struct rlt__rt_rule *r, const struct rlt_params *p,
                      struct rlt_error *err)
{
	r->keytab = rlt__keytab_new(p, r->rule.keys, rlt__now() ^ (uint64_t)(uintptr_t)r,
	                            rs->stats_on);
	if (!r->keytab) {
		snprintf(err->msg, sizeof err->msg,
		         "%s=\"%.300s\": no memory for the table of %u keys (%zu bytes)",
		         rlt_var_name(r->rule.var), r->rule.text, (unsigned)r->rule.keys,
		         rlt__keytab_bytes(r->rule.keys));
		return -ENOMEM;
	}
	return 0;
}

/* The rule's place in rs (the next of its variable), and its first block v0 from the rule. */
static int new_place(struct rlt__ruleset *rs, const struct rlt_rule *rule,
                     struct rlt__rt_rule **out, struct rlt_error *err)
{
	enum rlt_var v = rule->var;
	struct rlt__rt_rule *r;

	if (rs->n[v] >= RLT_MAX_RULES_PER_VAR) {
		snprintf(err->msg, sizeof err->msg, "%s: more than %d rules (a variable holds at most %d)",
		         rlt_var_name(v), RLT_MAX_RULES_PER_VAR, RLT_MAX_RULES_PER_VAR);
		return -EINVAL;
	}
	r = &rs->rules[v][rs->n[v]];
	memset(r, 0, sizeof *r);
	r->rule = *rule;
	r->st = &r->own;
	r->unit = rule->unit;
	r->v0.params = rule->params;
	r->v0.action = rule->action;
	r->v0.err = rule->err;
	/* a dry-run rule never holds a call back, so it never cuts one into pieces either */
	int uncut = v == RLT_VAR_CONNS || rule->action == RLT_ACTION_DRY_RUN;
	r->v0.piece = uncut ? UINT64_MAX : rlt__piece_of(rule->unit, &rule->params);
	r->v0.whole = uncut ? UINT64_MAX : rlt__whole_of(rule->unit, &rule->params, r->v0.piece);
	atomic_init(&r->cur, &r->v0);
	*out = r;
	return 0;
}

/* scope=shared: the state (or the RLT_CONNS counter, or the table of keys) in the segment. */
static int add_shared(struct rlt__ruleset *rs, struct rlt__rt_rule *r, struct rlt_error *err)
{
	const struct rlt_rule *rule = &r->rule;
	enum rlt_var v = rule->var;
	int rc = rlt__shm_attach(rule, &r->v0.state, &r->shared_open, &r->holders, err);

	if (rc)
		return rc;
	if (v == RLT_VAR_CONNS) {
		rlt__conns_identity();
	} else if (rule->key != RLT_KEY_NONE) {
		/* the segment holds the table; `rlthrottle set` leaves a keyed segment alone,
		 * so there is no set to follow */
		r->keytab = rlt__keytab_attach(r->v0.state, &r->v0.params, rule->keys,
		                               rs->stats_on);
		r->v0.state = NULL;
		if (!r->keytab) {
			snprintf(err->msg, sizeof err->msg,
			         "%s=\"%.300s\": scope=shared:%.60s: no memory for the table's "
			         "handle",
			         rlt_var_name(v), rule->text, rule->scope_name);
			return -ENOMEM;
		}
	} else {
		/* a set made before this process came follows at its first call */
		r->shm = rlt__shm_hdr_of(r->v0.state);
		rs->shared[rs->nshared++] = r;
	}
	return 0;
}

/* scope=redis://: its lease, and with key= a lease per key. */
static int add_redis(struct rlt__ruleset *rs, struct rlt__rt_rule *r, struct rlt_error *err)
{
	int rc = rlt__redis_new(&r->rule, &r->redis, err);

	if (rc || r->rule.key == RLT_KEY_NONE)
		return rc;
	/* each key's lease: no params (Redis holds the budget) */
	rc = new_keytab(rs, r, NULL, err);
	return rc ? rc : rlt__redis_keyed(r->redis, r->keytab, err);
}

/* scope=process or connection: the state in process memory (a connection's: its place in each
 * socket's block), or with key= a table of keys. */
static int add_local(struct rlt__ruleset *rs, struct rlt__rt_rule *r, struct rlt_error *err)
{
	const struct rlt_rule *rule = &r->rule;
	enum rlt_var v = rule->var;
	size_t size;

	if (rule->key != RLT_KEY_NONE) /* RLT_CONNS: a count per key, no engine */
		return new_keytab(rs, r, v == RLT_VAR_CONNS ? NULL : &r->v0.params, err);
	if (v == RLT_VAR_CONNS)
		return 0;
	size = rlt_state_size(&rule->params);
	if (rule->scope == RLT_SCOPE_CONNECTION) {
		/* 64-byte slots: one state per cache line at least */
		r->conn_off = rs->conn_block_size;
		rs->conn_block_size += (size + 63) & ~(size_t)63;
		return 0;
	}
	r->v0.state = rlt__map_anon(size);
	if (!r->v0.state || rlt_state_init(&rule->params, r->v0.state, 0) != 0) {
		snprintf(err->msg, sizeof err->msg, "%s=\"%.300s\": no memory for the rule's state",
		         rlt_var_name(v), rule->text);
		return -ENOMEM;
	}
	return 0;
}

/* A rule with a table of keys: its counts go where the rule's go, and a dry-run's per key. */
static int add_keyed(struct rlt__ruleset *rs, struct rlt__rt_rule *r, struct rlt_error *err)
{
	const struct rlt_rule *rule = &r->rule;

	/* the key counts go where the rule counts (its page, once it has one) */
	r->keytab->mirror = (struct rlt__stats *const *)&r->st;
	rs->nkeyed++;
	if (rule->action == RLT_ACTION_DRY_RUN && rule->var != RLT_VAR_CONNS) {
		r->keydry = rlt__map_anon((size_t)rule->keys * sizeof *r->keydry);
		if (!r->keydry) {
			snprintf(err->msg, sizeof err->msg,
			         "%s=\"%.300s\": no memory for the dry-run counts of %u keys",
			         rlt_var_name(rule->var), rule->text, (unsigned)rule->keys);
			return -ENOMEM;
		}
	}
	return 0;
}

/* One rule into rs: its place, its state where its scope keeps it, its table of keys. */
static int add_rule(struct rlt__ruleset *rs, const struct rlt_rule *rule, struct rlt_error *err)
{
	enum rlt_var v = rule->var;
	struct rlt__rt_rule *r;
	int rc = check_supported(rule, err);

	if (!rc)
		rc = new_place(rs, rule, &r, err);
	if (rc)
		return rc;
	if (rule->scope == RLT_SCOPE_SHARED)
		rc = add_shared(rs, r, err);
	else if (rule->scope == RLT_SCOPE_REDIS)
		rc = add_redis(rs, r, err);
	else
		rc = add_local(rs, r, err);
	if (!rc && r->keytab)
		rc = add_keyed(rs, r, err);
	if (rc)
		return rc;
	rs->n[v]++;
	rs->vars_in_use |= 1u << v;
	if (v == RLT_VAR_CONNS && r->shared_open)
		rs->conns_shared = 1;
	return 0;
}

int rlt__rule_next(const char **p, char one[RLT_VALUE_MAX + 1])
{
	while (**p) {
		size_t len = strcspn(*p, ";"), keep = len > RLT_VALUE_MAX ? RLT_VALUE_MAX : len;

		memcpy(one, *p, keep);
		one[keep] = '\0';
		*p += len + ((*p)[len] == ';');
		if (strspn(one, " \t") != keep)
			return 1;
	}
	return 0;
}

/* Parses one variable; with ignore_bad, one rule at a time so that a bad one is left out. */
static int build_var(struct rlt__ruleset *rs, enum rlt_var v, const char *value, int ignore_bad,
                     void (*warn)(const char *, void *), void *ctx, struct rlt_error *err)
{
	struct rlt_rule parsed[RLT_MAX_RULES_PER_VAR];
	size_t n = 0;
	int rc;

	if (!ignore_bad) {
		rc = rlt_rules_parse(v, value, parsed, RLT_MAX_RULES_PER_VAR, &n, err);
		for (size_t i = 0; rc == 0 && i < n; i++) {
			if (rs->command[0])
				rlt__cmd_rule(rs->command, &parsed[i], rs->n[v]);
			rc = add_rule(rs, &parsed[i], err);
		}
		return rc;
	}
	char one[RLT_VALUE_MAX + 1];
	for (const char *p = value; rlt__rule_next(&p, one);) {
		rc = rlt_rules_parse(v, one, parsed, 1, &n, err);
		if (rc == 0 && rs->command[0])
			rlt__cmd_rule(rs->command, &parsed[0], rs->n[v]);
		if (rc == 0)
			rc = add_rule(rs, &parsed[0], err);
		if (rc != 0)
			warn(err->msg, ctx);
	}
	return 0;
}

int rlt__ruleset_build(struct rlt__ruleset *rs, const char *const values[RLT_VAR_COUNT],
                       int ignore_bad, void (*warn)(const char *msg, void *ctx), void *ctx,
                       struct rlt_error *err)
{
	for (int v = 0; v < RLT_VAR_COUNT; v++) {
		/* An empty variable is treated as unset: scripts write RLT_SEND=${X:-}, or
		 * RLT_SEND="$A;$B" with both empty (blanks and ';' are no rule) */
		if (!values[v] || values[v][strspn(values[v], " \t;")] == '\0')
			continue;
		int rc = build_var(rs, (enum rlt_var)v, values[v], ignore_bad, warn, ctx, err);
		if (rc)
			return rc;
	}
	return 0;
}
