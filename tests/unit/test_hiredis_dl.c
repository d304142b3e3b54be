/* test_hiredis_dl.c: src/hiredis_dl.c: the Redis client comes in by dlopen, once, and each of
 * its entry points is the function of that name (a slot filled with the wrong symbol would call
 * the wrong function with the wrong arguments). The test binary does not link hiredis: what
 * it finds is what the loader found. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include "testutil.h"
#include "hiredis_dl.h"

/* Loads from many threads at once: all see the same answer. */
static void *load_in_thread(void *arg)
{
	struct rlt_error err = {""};
	*(int *)arg = rlt__hiredis_load(&err);
	return NULL;
}

static void loads_once_from_many_threads(void **s)
{
	pthread_t th[8];
	int rc[8];
	(void)s;
	for (int i = 0; i < 8; i++)
		assert_int_equal(pthread_create(&th[i], NULL, load_in_thread, &rc[i]), 0);
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(rc[i], 0);
	}
	/* err may be NULL */
	assert_int_equal(rlt__hiredis_load(NULL), 0);
}

/* The loaded library, found again without loading anything (one more reference: dlclose it). */
static void *loaded(const char **name)
{
	static const char *const names[] = {"libhiredis.so.0.14", "libhiredis.so.1.1.0",
	                                    "libhiredis.so"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD);
		if (h) {
			if (name)
				*name = names[i];
			return h;
		}
	}
	return NULL;
}

static void each_slot_is_its_function(void **s)
{
	struct rlt_error err = {""};
	(void)s;
	if (rlt__hiredis_load(&err) != 0)
		fail_msg("load: %s", err.msg);
	void *h = loaded(NULL);
	assert_non_null(h);
	assert_ptr_equal((void *)rlt__hr.connect_with_timeout, dlsym(h, "redisConnectWithTimeout"));
	assert_ptr_equal((void *)rlt__hr.set_timeout, dlsym(h, "redisSetTimeout"));
	assert_ptr_equal((void *)rlt__hr.free_context, dlsym(h, "redisFree"));
	dlclose(h);
}

/* The loaded client works: a connection to a loopback port nobody listens on fails with a
 * context that says so, and is freed. */
static void the_client_answers(void **s)
{
	(void)s;
	assert_int_equal(rlt__hiredis_load(NULL), 0);
	/* a port that was free a moment ago */
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	struct timeval tv = {1, 0};
	redisContext *c = rlt__hr.connect_with_timeout("127.0.0.1", ntohs(a.sin_port), tv);
	assert_non_null(c);
	assert_true(c->err != 0);
	rlt__hr.free_context(c);
}

/* Loaded once, not once a call: the library holds one reference of ours, whatever the number
 * of calls. Seen in a child, where the library can be unloaded without harm: after 50 more
 * loads, our reference and the look-up's own are the only ones, so two closes unload it. */
static void one_reference_however_many_calls(void **s)
{
	(void)s;
	assert_int_equal(rlt__hiredis_load(NULL), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (int i = 0; i < 50; i++)
			rlt__hiredis_load(NULL);
		const char *name;
		void *h = loaded(&name);
		if (!h)
			_exit(2);
		dlclose(h);
		dlclose(h);
		_exit(dlopen(name, RTLD_NOW | RTLD_NOLOAD) ? 1 : 0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(loads_once_from_many_threads),
		cmocka_unit_test(each_slot_is_its_function),
		cmocka_unit_test(the_client_answers),
		cmocka_unit_test(one_reference_however_many_calls),
	};
	return cmocka_run_group_tests_name("hiredis_dl", tests, NULL, NULL);
}
