/*
 * units.c: amounts, units, periods and durations of the rule grammar (rlthrottle(7) RULES), exactly.
 *
 * An amount is kept as the decimal that was written (digits / 10^scale) until it is multiplied
 * by its unit, and then as a reduced fraction. No floating point: 0.1MB must be 100000 bytes,
 * not 99999.99999999999, and 1.5kbit must be 187.5 bytes, not "about 187".
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "units.h"

/* Base units per unit. kbit is 1000 bits, so 125 bytes: every multiplier is a whole number. */
static const struct rlt__unit units[] = {
	{ "", RLT_UNIT_CALLS, 1 },
	{ "msg", RLT_UNIT_MSGS, 1 },
	{ "B", RLT_UNIT_BYTES, 1 },
	{ "kB", RLT_UNIT_BYTES, 1000ull },
	{ "MB", RLT_UNIT_BYTES, 1000000ull },
	{ "GB", RLT_UNIT_BYTES, 1000000000ull },
	{ "TB", RLT_UNIT_BYTES, 1000000000000ull },
	{ "KiB", RLT_UNIT_BYTES, 1024ull },
	{ "MiB", RLT_UNIT_BYTES, 1024ull * 1024 },
	{ "GiB", RLT_UNIT_BYTES, 1024ull * 1024 * 1024 },
	{ "TiB", RLT_UNIT_BYTES, 1024ull * 1024 * 1024 * 1024 },
	{ "kbit", RLT_UNIT_BYTES, 1000ull / 8 },
	{ "Mbit", RLT_UNIT_BYTES, 1000000ull / 8 },
	{ "Gbit", RLT_UNIT_BYTES, 1000000000ull / 8 },
	{ "Tbit", RLT_UNIT_BYTES, 1000000000000ull / 8 },
};

#define NS_US 1000ull
#define NS_MS 1000000ull
#define NS_S 1000000000ull
#define NS_MIN (60 * NS_S)
#define NS_H (3600 * NS_S)

/* Largest first: the printers take the first unit that fits. */
static const struct rlt__time_unit time_units[] = {
	{ "h", NS_H }, { "min", NS_MIN }, { "s", NS_S }, { "ms", NS_MS }, { "us", NS_US }, { "ns", 1 },
};
#define TIME_UNITS (sizeof time_units / sizeof time_units[0])
/* A period is at least a millisecond: the first four time units. */
#define PERIOD_UNITS 4

static const uint64_t pow10_table[RLT__DECIMALS_MAX + 1] = {
	1ull,
	10ull,
	100ull,
	1000ull,
	10000ull,
	100000ull,
	1000000ull,
	10000000ull,
	100000000ull,
	1000000000ull,
	10000000000ull,
	100000000000ull,
	1000000000000ull,
	10000000000000ull,
	100000000000000ull,
	1000000000000000ull,
	10000000000000000ull,
	100000000000000000ull,
	1000000000000000000ull,
	10000000000000000000ull,
};

uint64_t rlt__gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static int name_is(const char *name, const char *s, size_t n)
{
	return strlen(name) == n && memcmp(name, s, n) == 0;
}

size_t rlt__number_span(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && (rlt__is_digit(s[i]) || s[i] == '.'))
		i++;
	return i;
}

/* Appends the digits s[0..n) to *v, failing on overflow. */
static int add_digits(uint64_t *v, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (__builtin_mul_overflow(*v, 10, v) ||
		    __builtin_add_overflow(*v, (uint64_t)(s[i] - '0'), v))
			return -RLT__E_RANGE;
	}
	return 0;
}

int rlt__parse_decimal(const char *s, size_t n, struct rlt__decimal *d)
{
	size_t i = 0, int_len, frac_start, frac_len;
	uint64_t v = 0;

	while (i < n && rlt__is_digit(s[i]))
		i++;
	int_len = i;
	/* ".5" and "5." are refused: a point must have digits on both sides. */
	if (int_len == 0)
		return -RLT__E_SYNTAX;
	frac_start = frac_len = 0;
	if (i < n && s[i] == '.') {
		frac_start = ++i;
		while (i < n && rlt__is_digit(s[i]))
			i++;
		frac_len = i - frac_start;
		if (frac_len == 0)
			return -RLT__E_SYNTAX;
	}
	if (i != n)
		return -RLT__E_SYNTAX;
	/* Trailing zeros after the point change nothing: 1.50 is 1.5. */
	while (frac_len > 0 && s[frac_start + frac_len - 1] == '0')
		frac_len--;
	if (frac_len > RLT__DECIMALS_MAX)
		return -RLT__E_RANGE;
	if (add_digits(&v, s, int_len) || add_digits(&v, s + frac_start, frac_len))
		return -RLT__E_RANGE;
	d->digits = v;
	d->scale = (unsigned)frac_len;
	return 0;
}

int rlt__parse_count(const char *s, size_t n, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (n == 0)
		return -RLT__E_SYNTAX;
	for (i = 0; i < n && rlt__is_digit(s[i]); i++)
		;
	if (i < n) {
		struct rlt__decimal d;
		/* A decimal with a point is a number, just not a whole one: say so. */
		return rlt__parse_decimal(s, n, &d) == 0 ? -RLT__E_FRACTION : -RLT__E_SYNTAX;
	}
	if (add_digits(&x, s, n) || x > max)
		return -RLT__E_RANGE;
	if (x == 0)
		return -RLT__E_ZERO;
	*v = x;
	return 0;
}

const struct rlt__unit *rlt__unit_lookup(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (name_is(units[i].name, s, n))
			return &units[i];
	return NULL;
}

/*
 * The shortest exact decimal of num/den: digits / 10^scale. Only a denominator made of 2s and
 * 5s has one; and it must fit 64 bits of digits and RLT__DECIMALS_MAX decimals so that the
 * parser can read it back.
 */
static int frac_to_decimal(uint64_t num, uint64_t den, uint64_t *digits, unsigned *scale)
{
	unsigned twos = 0, fives = 0, k;
	uint64_t d = den, m;

	if (den == 0)
		return -RLT__E_RANGE;
	while (d % 2 == 0) {
		d /= 2;
		twos++;
	}
	while (d % 5 == 0) {
		d /= 5;
		fives++;
	}
	if (d != 1)
		return -RLT__E_RANGE;
	k = twos > fives ? twos : fives;
	if (k > RLT__DECIMALS_MAX)
		return -RLT__E_RANGE;
	/* den divides 10^k, so 10^k / den is whole and fits. */
	m = pow10_table[k] / den;
	if (__builtin_mul_overflow(num, m, digits))
		return -RLT__E_RANGE;
	*scale = k;
	return 0;
}

/* (digits / 10^scale) * mul as a reduced fraction; dividing the common factors out first keeps
 * intermediate values as small as the result. */
static int scale_reduced(const struct rlt__decimal *d, uint64_t mul, uint64_t *num, uint64_t *den)
{
	uint64_t p10, g, m, q, digits;

	if (d->scale > RLT__DECIMALS_MAX || mul == 0)
		return -RLT__E_RANGE;
	p10 = pow10_table[d->scale];
	g = rlt__gcd(mul, p10);
	m = mul / g;
	q = p10 / g;
	g = rlt__gcd(d->digits, q); /* gcd(0, q) = q: zero becomes 0/1 */
	digits = d->digits / g;
	q /= g;
	if (__builtin_mul_overflow(digits, m, num))
		return -RLT__E_RANGE;
	*den = q;
	return 0;
}

int rlt__amount_scale(const struct rlt__decimal *d, const struct rlt__unit *u, uint64_t *num,
                      uint64_t *den)
{
	uint64_t n, q, digits;
	unsigned scale;
	int rc = scale_reduced(d, u->mul, &n, &q);

	if (rc)
		return rc;
	/* The canonical form prints this as a decimal in base units: refuse what it could not. */
	if (frac_to_decimal(n, q, &digits, &scale))
		return -RLT__E_RANGE;
	*num = n;
	*den = q;
	return 0;
}

int rlt__parse_amount(const char *s, size_t n, const struct rlt__unit **u, uint64_t *num,
                      uint64_t *den)
{
	size_t k = rlt__number_span(s, n);
	struct rlt__decimal d;
	int rc;

	*u = rlt__unit_lookup(s + k, n - k);
	rc = rlt__parse_decimal(s, k, &d);
	if (rc)
		return rc;
	if (!*u)
		return -RLT__E_UNIT;
	return rlt__amount_scale(&d, *u, num, den);
}

static const struct rlt__time_unit *time_unit_lookup(const char *s, size_t n, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (name_is(time_units[i].name, s, n))
			return &time_units[i];
	return NULL;
}

int rlt__parse_period(const char *s, size_t n, uint64_t *ns)
{
	size_t i = 0;
	uint64_t count = 1;
	const struct rlt__time_unit *tu;
	int rc;

	while (i < n && rlt__is_digit(s[i]))
		i++;
	if (i < n && s[i] == '.')
		return -RLT__E_FRACTION;
	if (i > 0) {
		rc = rlt__parse_count(s, i, UINT64_MAX, &count);
		if (rc)
			return rc;
	}
	if (i == n)
		return -RLT__E_SYNTAX;
	tu = time_unit_lookup(s + i, n - i, PERIOD_UNITS);
	if (!tu)
		return -RLT__E_UNIT;
	if (__builtin_mul_overflow(count, tu->ns, ns))
		return -RLT__E_RANGE;
	return 0;
}

int rlt__parse_duration(const char *s, size_t n, uint64_t *ns)
{
	size_t k = rlt__number_span(s, n);
	const struct rlt__time_unit *tu;
	struct rlt__decimal d;
	uint64_t whole, den;
	int rc;

	rc = rlt__parse_decimal(s, k, &d);
	if (rc)
		return rc;
	if (k == n && d.digits == 0) {
		*ns = 0;
		return 0;
	}
	tu = time_unit_lookup(s + k, n - k, TIME_UNITS);
	if (!tu)
		return -RLT__E_UNIT;
	rc = scale_reduced(&d, tu->ns, &whole, &den);
	if (rc)
		return rc;
	if (den != 1)
		return -RLT__E_FRACTION; /* finer than a nanosecond */
	if (whole == RLT_NS_NEVER)
		return -RLT__E_RANGE;
	*ns = whole;
	return 0;
}

/* snprintf of one string, returning the length needed. */
static int put(char *buf, size_t len, const char *s)
{
	return snprintf(buf, len, "%s", s);
}

int rlt__format_decimal(char *buf, size_t len, uint64_t num, uint64_t den)
{
	char digits[24], out[48];
	uint64_t v;
	unsigned scale;
	int nd;

	if (frac_to_decimal(num, den, &v, &scale))
		return -1;
	nd = snprintf(digits, sizeof digits, "%" PRIu64, v);
	if (scale == 0) {
		memcpy(out, digits, (size_t)nd + 1);
	} else if ((unsigned)nd > scale) {
		size_t ip = (size_t)nd - scale;
		memcpy(out, digits, ip);
		out[ip] = '.';
		memcpy(out + ip + 1, digits + ip, scale + 1);
	} else {
		size_t zeros = scale - (size_t)nd;
		out[0] = '0';
		out[1] = '.';
		memset(out + 2, '0', zeros);
		memcpy(out + 2 + zeros, digits, (size_t)nd + 1);
	}
	return put(buf, len, out);
}

static int format_time(char *buf, size_t len, uint64_t ns, size_t count, int omit_one)
{
	for (size_t i = 0; i < count; i++) {
		const struct rlt__time_unit *tu = &time_units[i];
		if (ns % tu->ns != 0)
			continue;
		if (omit_one && ns == tu->ns)
			return put(buf, len, tu->name);
		return snprintf(buf, len, "%" PRIu64 "%s", ns / tu->ns, tu->name);
	}
	return -1;
}

int rlt__format_period(char *buf, size_t len, uint64_t ns)
{
	if (ns == 0)
		return -1;
	return format_time(buf, len, ns, PERIOD_UNITS, 1);
}

int rlt__format_duration(char *buf, size_t len, uint64_t ns)
{
	if (ns == 0)
		return put(buf, len, "0s");
	return format_time(buf, len, ns, TIME_UNITS, 0);
}

/* ADDR[/P], a peer= value. The prefix "0" is allowed, the rest of P as a count (no sign). */
int rlt__parse_peer(const char *s, size_t n, int *af, uint8_t addr[16], uint8_t *prefix,
                    const char **bad, size_t *bad_n)
{
	const char *slash = memchr(s, '/', n);
	size_t an = slash ? (size_t)(slash - s) : n;
	char buf[INET6_ADDRSTRLEN];
	unsigned max, p;

	*bad = s;
	*bad_n = an;
	if (an == 0 || an >= sizeof buf)
		return -RLT__E_SYNTAX;
	memcpy(buf, s, an);
	buf[an] = '\0';
	*af = memchr(s, ':', an) ? AF_INET6 : AF_INET;
	if (inet_pton(*af, buf, addr) != 1)
		return -RLT__E_SYNTAX;
	max = *af == AF_INET ? 32 : 128;
	p = max;
	if (slash) {
		const char *ps = slash + 1;
		size_t pn = n - an - 1;
		uint64_t x = 0;
		*bad = ps;
		*bad_n = pn;
		if (!(pn == 1 && ps[0] == '0') && rlt__parse_count(ps, pn, max, &x) != 0)
			return -RLT__E_RANGE;
		p = (unsigned)x;
	}
	*prefix = (uint8_t)p;
	/* Stored masked, so that matching is a compare of the first bytes and a masked byte. */
	for (unsigned i = 0; i < max / 8; i++) {
		unsigned keep = p >= 8 * (i + 1) ? 8 : p > 8 * i ? p - 8 * i : 0;
		addr[i] &= (uint8_t)(0xff00u >> keep);
	}
	return 0;
}

void rlt__peer_refusal(char *buf, size_t len, int rc, int af, const char *quoted)
{
	if (rc == -RLT__E_RANGE)
		snprintf(buf, len, "peer: prefix \"/%s\" is not in 0..%u for %s", quoted,
		         af == AF_INET ? 32u : 128u, af == AF_INET ? "IPv4" : "IPv6");
	else
		snprintf(buf, len, "peer: \"%s\" is not an IPv4 or IPv6 address", quoted);
}
