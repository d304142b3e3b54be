/*
 * fuzz_rules.c: libFuzzer over the rule parser. The first byte picks the variable, the rest is
 * its value. Whatever parses must print in canonical form and parse back to the same rule, and
 * the canonical form must be a fixed point; whatever fails must fail with a message that names
 * the variable and stays one printable line.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rlthrottle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond, ...)                                                                       \
	do {                                                                                   \
		if (!(cond)) {                                                                 \
			fprintf(stderr, "fuzz_rules: " __VA_ARGS__);                           \
			fputc('\n', stderr);                                                   \
			abort();                                                               \
		}                                                                              \
	} while (0)

static void check_message(enum rlt_var v, const struct rlt_error *e)
{
	const char *name = rlt_var_name(v);
	size_t len = strnlen(e->msg, sizeof e->msg);

	CHECK(len < sizeof e->msg, "message not terminated");
	CHECK(strncmp(e->msg, name, strlen(name)) == 0 && e->msg[strlen(name)] == '=' &&
	              e->msg[strlen(name) + 1] == '"',
	      "message does not start with %s=\": %s", name, e->msg);
	CHECK(strstr(e->msg, "\": ") != NULL, "message has no detail: %s", e->msg);
	for (size_t i = 0; i < len; i++)
		CHECK((unsigned char)e->msg[i] >= 0x20 && (unsigned char)e->msg[i] < 0x7f,
		      "unprintable byte in message: %s", e->msg);
}

/* The fields that decide what the rule does (r->burst and r->text may differ: the canonical
 * form writes out the default burst, and is not the text as first written). */
static int same_rule(const struct rlt_rule *a, const struct rlt_rule *b)
{
	const struct rlt_params *p = &a->params, *q = &b->params;

	return a->var == b->var && a->unit == b->unit && a->amount_num == b->amount_num &&
	       a->amount_den == b->amount_den && a->period_ns == b->period_ns &&
	       a->algo == b->algo && a->action == b->action && a->max_wait_ns == b->max_wait_ns &&
	       a->err == b->err && a->scope == b->scope &&
	       strcmp(a->scope_name, b->scope_name) == 0 &&
	       strcmp(a->redis_host, b->redis_host) == 0 && a->redis_port == b->redis_port &&
	       strcmp(a->redis_user, b->redis_user) == 0 &&
	       a->fallback == b->fallback && a->peer_af == b->peer_af &&
	       memcmp(a->peer_addr, b->peer_addr, sizeof a->peer_addr) == 0 &&
	       a->peer_prefix == b->peer_prefix && a->port_lo == b->port_lo &&
	       a->port_hi == b->port_hi && a->family == b->family && a->key == b->key &&
	       a->key_prefix4 == b->key_prefix4 && a->key_prefix6 == b->key_prefix6 &&
	       a->keys == b->keys && p->algo == q->algo &&
	       p->rate_num == q->rate_num && p->rate_den_ns == q->rate_den_ns &&
	       p->burst == q->burst && p->max_wait_ns == q->max_wait_ns &&
	       p->ticks_per_unit == q->ticks_per_unit && p->tick_num == q->tick_num &&
	       p->tick_den == q->tick_den && p->tau == q->tau && p->limit == q->limit &&
	       p->window_ns == q->window_ns && p->sub_ns == q->sub_ns;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rlt_rule rules[RLT_MAX_RULES_PER_VAR], back[RLT_MAX_RULES_PER_VAR];
	struct rlt_error e;
	enum rlt_var v;
	size_t n = 0, m = 0;
	char *value;
	int rc;

	if (size == 0)
		return 0;
	v = (enum rlt_var)(data[0] % RLT_VAR_COUNT);
	value = malloc(size);
	if (!value)
		return 0;
	memcpy(value, data + 1, size - 1);
	value[size - 1] = '\0';

	memset(&e, 0, sizeof e);
	rc = rlt_rules_parse(v, value, rules, RLT_MAX_RULES_PER_VAR, &n, &e);
	CHECK(rc == 0 || rc == -EINVAL, "rc %d", rc);
	if (rc) {
		CHECK(n == 0, "n %zu on failure", n);
		check_message(v, &e);
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char text[1024], again[1024];
		int k = rlt_rule_format(&rules[i], text, sizeof text);
		CHECK(k > 0 && k <= RLT_RULE_TEXT_MAX, "format gave %d for \"%s\"", k, rules[i].text);
		CHECK((size_t)k == strlen(text), "format length");
		/* a redis password is shown as *** by both (the canonical form parses to "***") */
		CHECK(!rules[i].redis_pass[0] ||
		              (strstr(text, ":***@") && strstr(rules[i].text, ":***@")),
		      "a password shows: \"%s\", \"%s\"", rules[i].text, text);
		rc = rlt_rules_parse(v, text, back, RLT_MAX_RULES_PER_VAR, &m, &e);
		CHECK(rc == 0 && m == 1, "canonical \"%s\" of \"%s\" does not parse: %s", text,
		      rules[i].text, e.msg);
		CHECK(same_rule(&rules[i], &back[0]), "\"%s\" -> \"%s\" parses to another rule",
		      rules[i].text, text);
		k = rlt_rule_format(&back[0], again, sizeof again);
		CHECK(k > 0 && strcmp(text, again) == 0, "canonical form not a fixed point: \"%s\" -> \"%s\"",
		      text, again);
	}
	free(value);
	return 0;
}
