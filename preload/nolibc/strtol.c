/*
 * strtol.c: strtol and strtoull as C11 says: leading space, a sign, the base's prefix
 * (0x for 16 and 0, 0 for 8 under base 0), ERANGE at overflow, *end at the first byte not
 * used (the start when no digit was).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

static int digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 10;
	return 99;
}

/* The magnitude of the number at s, saturated at UINT64_MAX (*over set); *neg its sign. */
static unsigned long long scan(const char *s, char **end, int base, int *neg, int *over)
{
	const char *p = s, *first;
	unsigned long long v = 0;

	*neg = 0;
	*over = 0;
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	if (*p == '+' || *p == '-')
		*neg = *p++ == '-';
	if ((base == 0 || base == 16) && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
	    digit(p[2]) < 16) {
		p += 2;
		base = 16;
	} else if (base == 0) {
		base = *p == '0' ? 8 : 10;
	}
	if (base < 2 || base > 36) {
		errno = EINVAL; /* *end untouched, as glibc */
		return 0;
	}
	first = p;
	for (int d; (d = digit(*p)) < base; p++) {
		if (v > (ULLONG_MAX - (unsigned)d) / (unsigned)base)
			*over = 1;
		else
			v = v * (unsigned)base + (unsigned)d;
	}
	if (end)
		*end = (char *)(p == first ? s : p);
	return v;
}

unsigned long long strtoull(const char *restrict s, char **restrict end, int base)
{
	int neg, over;
	unsigned long long v = scan(s, end, base, &neg, &over);

	if (over) {
		errno = ERANGE;
		return ULLONG_MAX;
	}
	return neg ? -v : v;
}

long strtol(const char *restrict s, char **restrict end, int base)
{
	int neg, over;
	unsigned long long v = scan(s, end, base, &neg, &over);

	if (!over && !neg && v <= LONG_MAX)
		return (long)v;
	if (!over && neg && v <= (unsigned long long)LONG_MAX + 1)
		return v == (unsigned long long)LONG_MAX + 1 ? LONG_MIN : -(long)v;
	errno = ERANGE;
	return neg ? LONG_MIN : LONG_MAX;
}
