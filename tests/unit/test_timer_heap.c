/* test_timer_heap.c: the supervisor's timer heap (supervisor/timer_heap.c): jobs come out by
 * deadline whatever order they went in, and a job removed from the middle never comes out. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "internal.h"

enum { N = 5000 };

static void in_deadline_order(void **s)
{
	static struct rlt_sup_job jobs[N];
	struct rlt_sup_heap h = {0};
	uint64_t rs = 42, last = 0;
	(void)s;
	for (int i = 0; i < N; i++) {
		memset(&jobs[i], 0, sizeof jobs[i]);
		/* many equal deadlines too: ties must not lose a job */
		jobs[i].deadline = rlt_test_range(&rs, 0, N / 4);
		jobs[i].heap_i = SIZE_MAX;
		assert_int_equal(rlt_sup_heap_push(&h, &jobs[i]), 0);
	}
	for (int i = 0; i < N; i++) {
		struct rlt_sup_job *j = rlt_sup_heap_top(&h);
		assert_non_null(j);
		assert_true(j->deadline >= last);
		last = j->deadline;
		rlt_sup_heap_remove(&h, j);
		assert_int_equal(j->heap_i, SIZE_MAX);
	}
	assert_null(rlt_sup_heap_top(&h));
	free(h.v);
}

static void removal_from_the_middle(void **s)
{
	static struct rlt_sup_job jobs[N];
	static char removed[N];
	struct rlt_sup_heap h = {0};
	uint64_t rs = 7, last = 0;
	int left = N;
	(void)s;
	memset(removed, 0, sizeof removed);
	for (int i = 0; i < N; i++) {
		memset(&jobs[i], 0, sizeof jobs[i]);
		jobs[i].deadline = rlt_test_rand(&rs) % 1000000;
		jobs[i].heap_i = SIZE_MAX;
		assert_int_equal(rlt_sup_heap_push(&h, &jobs[i]), 0);
	}
	for (int i = 0; i < N; i += 3) {
		rlt_sup_heap_remove(&h, &jobs[i]);
		rlt_sup_heap_remove(&h, &jobs[i]); /* twice: the second is a no-op */
		removed[i] = 1;
		left--;
	}
	assert_int_equal(h.n, (size_t)left);
	for (int k = 0; k < left; k++) {
		struct rlt_sup_job *j = rlt_sup_heap_top(&h);
		assert_non_null(j);
		assert_false(removed[j - jobs]);
		assert_true(j->deadline >= last);
		last = j->deadline;
		rlt_sup_heap_remove(&h, j);
	}
	assert_null(rlt_sup_heap_top(&h));
	free(h.v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(in_deadline_order),
		cmocka_unit_test(removal_from_the_middle),
	};
	return cmocka_run_group_tests_name("timer_heap", tests, NULL, NULL);
}
