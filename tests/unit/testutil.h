/* testutil.h: what every cmocka test here includes: cmocka's prerequisites in the order it needs
 * them, and a seeded generator so that property tests are the same on every run. */
#ifndef RLT_TESTUTIL_H
#define RLT_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* splitmix64: small, fast, and the same sequence everywhere for a given seed. */
static inline uint64_t rlt_test_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static inline uint64_t rlt_test_range(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + rlt_test_rand(s) % (hi - lo + 1);
}

#endif
