/*
 * units.h: the numbers of the rule grammar (rlthrottle(7) RULES): decimal amounts kept as exact fractions,
 * units and their multipliers, periods and durations. Integer arithmetic only, every step
 * checked for overflow; nothing here allocates, reads the locale or keeps state, so it is safe
 * at load time in a preloaded library and from any thread.
 *
 * Parsers take (s, n): n bytes at s, not NUL-terminated. They return 0, or a negative
 * RLT__E_* code saying what is wrong, so that the rule parser can word the message.
 */
#ifndef RLT_UNITS_H
#define RLT_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "rlthrottle.h"

enum {
	RLT__E_SYNTAX = 1, /* not a number of the expected form */
	RLT__E_UNIT,       /* unknown unit */
	RLT__E_ZERO,       /* zero where at least one is needed */
	RLT__E_RANGE,      /* too large, or too many digits to keep exactly */
	RLT__E_FRACTION,   /* a fraction where a whole number is needed */
};

/* Most digits after the decimal point: 10^19 is the largest power of ten in 64 bits. */
#define RLT__DECIMALS_MAX 19

/* A decimal as written: digits / 10^scale, trailing fractional zeros dropped. */
struct rlt__decimal {
	uint64_t digits;
	unsigned scale;
};

/* A unit: which family it counts and what it multiplies an amount by to get base units. */
struct rlt__unit {
	const char *name;   /* as written: "", "B", "KiB", "kbit", "msg", ... */
	enum rlt_unit kind; /* RLT_UNIT_CALLS for the empty unit */
	uint64_t mul;       /* base units (bytes, messages, calls) per one of this unit */
};

/* A time unit of a period or a duration. */
struct rlt__time_unit {
	const char *name; /* "ns", "us", "ms", "s", "min", "h" */
	uint64_t ns;
};

uint64_t rlt__gcd(uint64_t a, uint64_t b);

/* How many leading bytes of s[0..n) are digits or '.': where an amount's number ends. */
size_t rlt__number_span(const char *s, size_t n);

/* DIGITS or DIGITS.DIGITS (no sign, no exponent, no bare point). */
int rlt__parse_decimal(const char *s, size_t n, struct rlt__decimal *d);

/* Digits only, value in [1, max] (RLT__E_ZERO for 0, RLT__E_RANGE above max). */
int rlt__parse_count(const char *s, size_t n, uint64_t max, uint64_t *v);

/* A peer address with an optional prefix, ADDR[/P] (peer= of the rules and of RLT_NET): *af
 * AF_INET or AF_INET6, addr (16 bytes) masked to the first *prefix bits, P 0..32 or 0..128
 * (none: all of them). -RLT__E_SYNTAX: ADDR is not an address; -RLT__E_RANGE: P is out of
 * range; either way *bad, *bad_n are the wrong part (ADDR or P), *af set once ADDR parsed. */
int rlt__parse_peer(const char *s, size_t n, int *af, uint8_t addr[16], uint8_t *prefix,
                    const char **bad, size_t *bad_n);

/* The message for a peer= that rlt__parse_peer refused with rc (af as it left it), `quoted` its
 * wrong part as the caller quotes it: written to buf, cut to len. Holds in RLT__PEER_MSG_MAX when
 * `quoted` is at most 80 bytes. */
#define RLT__PEER_MSG_MAX 160
void rlt__peer_refusal(char *buf, size_t len, int rc, int af, const char *quoted);

/* The unit named by s[0..n) (n == 0 is the empty unit of calls). NULL when unknown. */
const struct rlt__unit *rlt__unit_lookup(const char *s, size_t n);

/*
 * d units of u, in base units, as a reduced fraction *num / *den. Fails with RLT__E_RANGE when
 * the result does not fit, or when its exact decimal would need more than 64 bits of digits or
 * more than RLT__DECIMALS_MAX decimals: rlt__format_decimal() must be able to print what this
 * accepts in a form that parses back to the same fraction.
 */
int rlt__amount_scale(const struct rlt__decimal *d, const struct rlt__unit *u, uint64_t *num,
                      uint64_t *den);

/* AMOUNT[UNIT] in one go: the number, then the unit. *u is set even on RLT__E_UNIT failure. */
int rlt__parse_amount(const char *s, size_t n, const struct rlt__unit **u, uint64_t *num,
                      uint64_t *den);

/* [N]ms, [N]s, [N]min, [N]h with N >= 1 (default 1), in ns. */
int rlt__parse_period(const char *s, size_t n, uint64_t *ns);

/* DECIMAL followed by ns, us, ms, s, min or h, a whole number of ns (0 allowed); a bare "0"
 * is accepted since zero is zero in every unit. Below RLT_NS_NEVER. */
int rlt__parse_duration(const char *s, size_t n, uint64_t *ns);

/*
 * Printers: snprintf-like, they write at most len-1 bytes plus a NUL (when len > 0) and return
 * the length they needed, or -1 when the value cannot be printed exactly.
 */
int rlt__format_decimal(char *buf, size_t len, uint64_t num, uint64_t den);
/* "s", "100ms", "2h": the largest unit that divides the period, count omitted when 1. */
int rlt__format_period(char *buf, size_t len, uint64_t ns);
/* "0s", "1500ms", "90s": the largest unit in which the duration is whole. */
int rlt__format_duration(char *buf, size_t len, uint64_t ns);

/* ASCII classes, independent of the locale. */
static inline int rlt__is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static inline int rlt__is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline int rlt__is_alnum(int c)
{
	return rlt__is_digit(c) || rlt__is_alpha(c);
}

#endif
