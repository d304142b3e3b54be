/* test_iov.c: src/iov.c: a byte range of a scattered buffer, on the edges a piece meets (empty
 * entries, a range that starts on a boundary or runs past the end, too few output entries) and
 * against a flat copy on random layouts. */
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "testutil.h"
#include "iov.h"

static char a[10], b[1], c[5], d[7];

/* a, an empty entry, c, another empty entry, d: 22 bytes in all. */
static struct iovec layout[5];

static int setup(void **s)
{
	(void)s;
	layout[0] = (struct iovec){a, sizeof a};
	layout[1] = (struct iovec){b, 0};
	layout[2] = (struct iovec){c, sizeof c};
	layout[3] = (struct iovec){b, 0};
	layout[4] = (struct iovec){d, sizeof d};
	return 0;
}

/* Slices LEN bytes at OFF of the layout into at most MAX entries: WANT_N entries, each WANT[i]
 * (base and length), and WANT_MISSING bytes not there. */
static void expect_slice(uint64_t off, size_t len, size_t max, size_t want_n,
                         const struct iovec *want, size_t want_missing)
{
	struct iovec out[5];
	size_t missing = 99;
	size_t n = rlt__iov_slice(layout, 5, off, len, out, max, &missing);

	assert_int_equal(n, want_n);
	for (size_t i = 0; i < n; i++) {
		assert_ptr_equal(out[i].iov_base, want[i].iov_base);
		assert_int_equal(out[i].iov_len, want[i].iov_len);
	}
	assert_int_equal(missing, want_missing);
}

static void across_an_empty_entry(void **s)
{
	(void)s;
	expect_slice(8, 6, 5, 2, (struct iovec[]){{a + 8, 2}, {c, 4}}, 0);
}

static void starting_on_a_boundary(void **s)
{
	(void)s;
	/* offset 10 is the end of a and the start of c: the slice starts in c, with no empty entry
	 * (nor an empty tail of a) ahead of it */
	expect_slice(10, 5, 5, 1, (struct iovec[]){{c, 5}}, 0);
	/* offset 15: the end of c, past the second empty entry, into d */
	expect_slice(15, 7, 5, 1, (struct iovec[]){{d, 7}}, 0);
}

static void past_the_end(void **s)
{
	(void)s;
	/* the last 3 bytes and 4 that are not there */
	expect_slice(19, 7, 5, 1, (struct iovec[]){{d + 4, 3}}, 4);
	/* starting at or past the end: nothing at all */
	expect_slice(22, 5, 5, 0, NULL, 5);
	expect_slice(UINT64_MAX, 5, 5, 0, NULL, 5);
}

static void nothing_asked_or_nothing_there(void **s)
{
	struct iovec out[2] = {{a, 123}, {a, 456}};
	struct iovec empty[3] = {{a, 0}, {b, 0}, {c, 0}};
	size_t missing = 99;
	(void)s;
	assert_int_equal(rlt__iov_slice(layout, 5, 3, 0, out, 2, &missing), 0);
	assert_int_equal(missing, 0);
	assert_int_equal(rlt__iov_slice(layout, 0, 0, 4, out, 2, &missing), 0);
	assert_int_equal(missing, 4);
	assert_int_equal(rlt__iov_slice(empty, 3, 0, 4, out, 2, &missing), 0);
	assert_int_equal(missing, 4);
	/* out is not written when nothing is taken */
	assert_int_equal(out[0].iov_len, 123);
	assert_int_equal(out[1].iov_len, 456);
}

static void too_few_output_entries(void **s)
{
	struct iovec out[3] = {{0}, {0}, {b, 77}};
	size_t missing = 0;
	(void)s;
	/* the whole 22 bytes in at most 2 entries: a and c, d's 7 are missing */
	expect_slice(0, 22, 2, 2, (struct iovec[]){{a, 10}, {c, 5}}, 7);
	/* and no third entry is written */
	assert_int_equal(rlt__iov_slice(layout, 5, 0, 22, out, 2, &missing), 2);
	assert_int_equal(out[2].iov_len, 77);
	/* max 0: all of it missing */
	assert_int_equal(rlt__iov_slice(layout, 5, 0, 22, out, 0, &missing), 0);
	assert_int_equal(missing, 22);
}

/* Random layouts, empty entries included: the slice's bytes are the flat copy's range, in
 * order, with no empty entry in it, and what is missing is exactly what the range lacks. */
static void matches_a_flat_copy(void **s)
{
	static unsigned char src[16][40], flat[16 * 40], got[16 * 40];
	struct iovec iov[16], out[16];
	uint64_t seed = 9;
	(void)s;
	for (size_t i = 0; i < 16; i++)
		for (size_t j = 0; j < 40; j++)
			src[i][j] = (unsigned char)rlt_test_rand(&seed);
	for (int round = 0; round < 20000; round++) {
		size_t cnt = rlt_test_range(&seed, 0, 16), total = 0;
		for (size_t i = 0; i < cnt; i++) {
			size_t l = rlt_test_range(&seed, 0, 3) == 0 ? 0 : rlt_test_range(&seed, 1, 40);
			size_t o = rlt_test_range(&seed, 0, 40 - l);
			iov[i] = (struct iovec){src[i] + o, l};
			memcpy(flat + total, src[i] + o, l);
			total += l;
		}
		uint64_t off = rlt_test_range(&seed, 0, total + 5);
		size_t len = rlt_test_range(&seed, 0, total + 5);
		size_t max = rlt_test_range(&seed, 0, 16), missing = 12345;
		size_t n = rlt__iov_slice(iov, cnt, off, len, out, max, &missing);
		assert_true(n <= max);
		size_t have = 0;
		for (size_t i = 0; i < n; i++) {
			assert_true(out[i].iov_len > 0);
			memcpy(got + have, out[i].iov_base, out[i].iov_len);
			have += out[i].iov_len;
		}
		assert_int_equal(have + missing, len);
		if (have)
			assert_memory_equal(got, flat + off, have);
		/* with enough entries, only what lies past the end is missing */
		if (max >= cnt) {
			size_t there = off >= total ? 0 : total - off < len ? total - off : len;
			assert_int_equal(have, there);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(across_an_empty_entry, setup),
		cmocka_unit_test_setup(starting_on_a_boundary, setup),
		cmocka_unit_test_setup(past_the_end, setup),
		cmocka_unit_test_setup(nothing_asked_or_nothing_there, setup),
		cmocka_unit_test_setup(too_few_output_entries, setup),
		cmocka_unit_test(matches_a_flat_copy),
	};
	alarm(30); /* a slice that loops is a failure, not a hang */
	return cmocka_run_group_tests_name("iov", tests, NULL, NULL);
}
