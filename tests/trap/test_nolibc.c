/*
 * test_nolibc.c: the C library subset of the in-process handler (preload/nolibc/) against
 * glibc, in one hosted program. The subset's objects are linked with every symbol renamed
 * nl_<name> (objcopy --prefix-symbols, see the Makefile), so that both libraries live side by
 * side; each check runs on a trap stack (trap_stack.h), where the subset keeps errno.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nolibc.h"
#include "trap_stack.h"

int nl_snprintf(char *, size_t, const char *, ...);
unsigned long long nl_strtoull(const char *, char **, int);
long nl_strtol(const char *, char **, int);
const char *nl_inet_ntop(int, const void *, char *, socklen_t);
int nl_inet_pton(int, const char *, void *);
void *nl_malloc(size_t);
void *nl_calloc(size_t, size_t);
void *nl_realloc(void *, size_t);
void *nl_aligned_alloc(size_t, size_t);
void nl_free(void *);
DIR *nl_opendir(const char *);
struct dirent *nl_readdir(DIR *);
int nl_closedir(DIR *);
int nl_clock_gettime(clockid_t, struct timespec *);
void nl_rlt_trap_clock_init(const void *);
void *nl_rlt_trap_vdso_sym(const void *, const char *);
int nl_pthread_mutexattr_init(pthread_mutexattr_t *);
int nl_pthread_mutexattr_setpshared(pthread_mutexattr_t *, int);
int nl_pthread_mutexattr_setrobust(pthread_mutexattr_t *, int);
int nl_pthread_mutexattr_settype(pthread_mutexattr_t *, int);
int nl_pthread_mutex_init(pthread_mutex_t *, const pthread_mutexattr_t *);
int nl_pthread_mutex_lock(pthread_mutex_t *);
int nl_pthread_mutex_unlock(pthread_mutex_t *);
int nl_pthread_mutex_consistent(pthread_mutex_t *);
size_t nl_strlen(const char *);
int nl_strcmp(const char *, const char *);
char *nl_strstr(const char *, const char *);
void *nl_memmove(void *, const void *, size_t);
char *nl_getenv(const char *);
void nl_rlt_trap_env_init(char **);

static _Atomic int failures, checks; /* two threads check at once (t_malloc_threads) */

#define CHECK(cond, ...)                                                                         \
	do {                                                                                     \
		checks++;                                                                        \
		if (!(cond)) {                                                                   \
			failures++;                                                              \
			fprintf(stderr, "test_nolibc:%d: ", __LINE__);                           \
			fprintf(stderr, __VA_ARGS__);                                            \
			fputc('\n', stderr);                                                     \
		}                                                                                \
	} while (0)

/* The subset's errno, on the trap stack the check runs on. */
static int nl_errno(void)
{
	return rlt_trap_self()->err;
}

/* ----- snprintf: each format the core uses, and their neighbours, against glibc's ----- */

#define SAME(fmt, ...)                                                                           \
	do {                                                                                     \
		char a[256], b[256];                                                             \
		int na = snprintf(a, sizeof a, fmt, __VA_ARGS__);                               \
		int nb = nl_snprintf(b, sizeof b, fmt, __VA_ARGS__);                            \
		CHECK(na == nb && !strcmp(a, b), "format \"%s\": glibc \"%s\" (%d), ours \"%s\" (%d)", \
		      fmt, a, na, b, nb);                                                        \
	} while (0)

/* Some cases are what -Wformat warns about on purpose (the 0 flag with a precision, a NULL
 * string): glibc gives them a meaning, which ours must match. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat"
#ifndef __clang__
#pragma GCC diagnostic ignored "-Wformat-overflow"
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif
static void t_format(void *unused)
{
	(void)unused;
	SAME("%s|%5s|%-5s|%.2s|%.200s", "abc", "ab", "ab", "abc", "x");
	{
		const char *volatile none = NULL;
		SAME("%s|%.3s|%.6s", none, none, none);
	}
	SAME("%d %d %d %d", 0, -1, INT_MAX, INT_MIN);
	SAME("%u %u %5u %-5u| %05u", 0u, UINT_MAX, 42u, 42u, 42u);
	SAME("%ld %lu %lld %llu", LONG_MIN, ULONG_MAX, LLONG_MIN, ULLONG_MAX);
	SAME("%zu %zu %zd", (size_t)0, SIZE_MAX, (ssize_t)-5);
	SAME("%x %X %02x %02X %#x %#X %#o %04o %o", 255u, 255u, 7u, 0xabu, 0u, 0x1fu, 8u, 0600u, 0u);
	SAME("%#x %#X %#o %#o %#08x %#.4x %#5o", 0x10u, 0xA0u, 0u, 010u, 0x10u, 0x10u, 010u);
	SAME("%p %p", (void *)0x5a5a00001000, (void *)NULL);
	SAME("%c%c|%3c|%-3c|", 'a', 'b', 'c', 'd');
	SAME("%% %5d%% %-5d| %+d % d %+d", 7, 7, 3, 3, -3);
	SAME("%.3d %.0d| %8.3d %-8.3d| %08d %08.3d", 5, 0, -5, 5, -42, 42);
	SAME("%*d|%-*d|%.*s|%*s", 6, 1, 6, 1, 2, "abcdef", -4, "ab");
	SAME("%hhu %hu %hhd %hd", 300u, 70000u, 200, 40000);
	SAME("%" PRIu64 " %" PRId64 " %" PRIx64, UINT64_MAX, INT64_MIN, (uint64_t)0xdeadbeefcafe);
	SAME("byte \\x%02x at position %zu is not printable ASCII", 0x7f, (size_t)12);
	SAME("%d: %s has mode %04o, not 0600: refused", 1234, "/dev/shm/x", 0644u);
	/* floating point: %.9g is the core's; the others share the code */
	const double g[] = {0, 1, 10, 100, 1e9, 1e10, 123456789, 1234567890123.0, 0.5, 0.1, 1.0 / 3,
	                    2.0 / 3, 1e-5, 1.5e-4, 0.0001, 99999.99999, 999999999.5, 1e300, 5e-324,
	                    -2.5, 12.5, 1048576.0 / 3};
	for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
		SAME("rate %.9g/s there", g[i]);
		SAME("%g %G %.3g %.1g %#g", g[i], g[i], g[i], g[i], g[i]);
		SAME("%e %.3e %.0e", g[i], g[i], g[i]);
		if (g[i] < 1e18)
			SAME("%f %.0f %.3f %10.2f %-10.1f|", g[i], g[i], g[i], g[i], g[i]);
	}
	SAME("%.0f %.0f %.0f %.1f %.2f", 0.5, 1.5, 2.5, 0.05, 0.005);
	/* truncation: the length it needed, the buffer cut and ended */
	{
		char a[8], b[8];
		int na = snprintf(a, sizeof a, "%s-%d", "truncated", 12345);
		int nb = nl_snprintf(b, sizeof b, "%s-%d", "truncated", 12345);
		CHECK(na == nb && !strcmp(a, b), "truncation: \"%s\" %d vs \"%s\" %d", a, na, b, nb);
		CHECK(nl_snprintf(NULL, 0, "%d", 123456) == 6, "a NULL buffer of 0 bytes");
	}
}

#pragma GCC diagnostic pop

/* ----- strtoull, strtol ----- */

static void t_strto(void *unused)
{
	(void)unused;
	static const struct {
		const char *s;
		int base;
	} cases[] = {
		{"0", 10}, {"42", 10}, {"  +42xyz", 10}, {"-1", 10}, {"18446744073709551615", 10},
		{"18446744073709551616", 10}, {"99999999999999999999999", 10}, {"", 10}, {"x", 10},
		{"-", 10}, {"0x", 0}, {"0x", 16}, {"0x1f", 0}, {"0X1F", 16}, {"1f", 16}, {"017", 0},
		{"017", 10}, {"08", 0}, {"0", 0}, {"\t\n 12", 10}, {"9223372036854775807", 10},
		{"9223372036854775808", 10}, {"-9223372036854775808", 10}, {"-9223372036854775809", 10},
		{"-18446744073709551615", 10}, {"zz", 36}, {"101", 2}, {"12", 1}, {"12", 37},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *ea, *eb;
		errno = 0;
		rlt_trap_self()->err = 0;
		unsigned long long ua = strtoull(cases[i].s, &ea, cases[i].base);
		int erra = errno;
		unsigned long long ub = nl_strtoull(cases[i].s, &eb, cases[i].base);
		CHECK(ua == ub && ea == eb && erra == nl_errno(),
		      "strtoull(\"%s\", %d): glibc %llu end %td errno %d, ours %llu end %td errno %d",
		      cases[i].s, cases[i].base, ua, ea - cases[i].s, erra, ub, eb - cases[i].s,
		      nl_errno());
		errno = 0;
		rlt_trap_self()->err = 0;
		long la = strtol(cases[i].s, &ea, cases[i].base);
		erra = errno;
		long lb = nl_strtol(cases[i].s, &eb, cases[i].base);
		CHECK(la == lb && ea == eb && erra == nl_errno(),
		      "strtol(\"%s\", %d): glibc %ld end %td errno %d, ours %ld end %td errno %d",
		      cases[i].s, cases[i].base, la, ea - cases[i].s, erra, lb, eb - cases[i].s,
		      nl_errno());
	}
}

/* ----- inet_pton, inet_ntop ----- */

static void same_pton(int af, const char *s)
{
	unsigned char a[16] = {0}, b[16] = {0};
	int ra = inet_pton(af, s, a), rb = nl_inet_pton(af, s, b);
	CHECK(ra == rb && !memcmp(a, b, sizeof a), "inet_pton(%d, \"%s\"): glibc %d, ours %d", af, s,
	      ra, rb);
}

static void same_ntop(int af, const unsigned char *addr)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
	const char *ra = inet_ntop(af, addr, a, sizeof a), *rb = nl_inet_ntop(af, addr, b, sizeof b);
	CHECK(ra && rb && !strcmp(a, b), "inet_ntop: glibc \"%s\", ours \"%s\"", ra ? a : "-",
	      rb ? b : "-");
	if (ra && rb) {
		/* and back: what we print, we read */
		unsigned char back[16];
		CHECK(nl_inet_pton(af, b, back) == 1 && !memcmp(back, addr, af == AF_INET ? 4 : 16),
		      "round trip of \"%s\"", b);
	}
}

static void t_inet(void *unused)
{
	(void)unused;
	static const char *v4[] = {"127.0.0.1", "0.0.0.0", "255.255.255.255", "1.2.3", "1.2.3.4.5",
	                           "256.1.1.1", "01.2.3.4", "1.2.3.04", "1..3.4", "", "a.b.c.d",
	                           "1.2.3.4 ", "192.168.001.1", "10.0.0.255"};
	static const char *v6[] = {"::", "::1", "1::", "1::2", "2001:db8::1", "2001:db8:0:0:1:0:0:1",
	                           "::ffff:1.2.3.4", "::1.2.3.4", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7::",
	                           "::2:3:4:5:6:7:8", "1:2:3:4:5:6:1.2.3.4", "fe80::1%eth0",
	                           ":::", "1:::2", "1::2::3", ":1::2", "1:2", "12345::", "1:2:3:4:5:6:7:8:9",
	                           "1:", ":", "::ffff:1.2.3", "FFFF::abcd", "0:0:0:0:0:0:0:0",
	                           "1:2:3:4:5:6:7:1.2.3.4", "::1.2.3.4:5"};
	for (size_t i = 0; i < sizeof v4 / sizeof v4[0]; i++) {
		same_pton(AF_INET, v4[i]);
		same_pton(AF_INET6, v4[i]);
	}
	for (size_t i = 0; i < sizeof v6 / sizeof v6[0]; i++) {
		same_pton(AF_INET6, v6[i]);
		same_pton(AF_INET, v6[i]);
	}
	/* every run of zero groups, and random addresses with zero groups in them */
	srandom(21);
	for (int i = 0; i < 3000; i++) {
		unsigned char a[16];
		for (int j = 0; j < 16; j++)
			a[j] = (unsigned char)random();
		for (int w = 0; w < 8; w++)
			if (random() % 2)
				a[2 * w] = a[2 * w + 1] = 0;
		if (i % 7 == 0)
			memcpy(a, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12);
		if (i % 11 == 0)
			memset(a, 0, 12);
		same_ntop(AF_INET6, a);
		same_ntop(AF_INET, a);
	}
	char small[4];
	CHECK(!nl_inet_ntop(AF_INET, "\x7f\0\0\1", small, sizeof small) && nl_errno() == ENOSPC,
	      "inet_ntop into a buffer too small: ENOSPC");
}

/* ----- malloc, calloc, realloc, free: two threads at once, contents checked ----- */

static void stress(unsigned seed)
{
	enum { SLOTS = 64 };
	unsigned char *p[SLOTS] = {0};
	size_t len[SLOTS] = {0};

	for (int i = 0; i < 4000; i++) {
		int s = (int)(rand_r(&seed) % SLOTS);
		if (p[s]) {
			for (size_t j = 0; j < len[s]; j++)
				if (p[s][j] != (unsigned char)(s + j)) {
					CHECK(0, "block %d corrupt at %zu of %zu", s, j, len[s]);
					return;
				}
			if (rand_r(&seed) % 3 == 0) {
				size_t n = 1 + rand_r(&seed) % 100000;
				unsigned char *q = nl_realloc(p[s], n);
				CHECK(q != NULL, "realloc %zu", n);
				if (!q)
					return;
				for (size_t j = len[s]; j < n; j++)
					q[j] = (unsigned char)(s + j);
				p[s] = q;
				len[s] = n;
				continue;
			}
			nl_free(p[s]);
			p[s] = NULL;
			continue;
		}
		len[s] = rand_r(&seed) % 8 ? 1 + rand_r(&seed) % 2000 : 1 + rand_r(&seed) % 200000;
		/* a quarter aligned_alloc'd (64 or 4096 bytes), freed and realloc'd as any */
		size_t al = rand_r(&seed) % 4 ? 16 : rand_r(&seed) % 2 ? 64 : 4096;
		p[s] = al > 16 ? nl_aligned_alloc(al, len[s])
		       : rand_r(&seed) % 2 ? nl_calloc(1, len[s]) : nl_malloc(len[s]);
		CHECK(p[s] != NULL && ((uintptr_t)p[s] & (al - 1)) == 0, "malloc %zu: %zu-byte aligned",
		      len[s], al);
		if (!p[s])
			return;
		for (size_t j = 0; j < len[s]; j++)
			p[s][j] = (unsigned char)(s + j);
	}
	for (int s = 0; s < SLOTS; s++)
		nl_free(p[s]);
}

static void *stress_thread(void *arg)
{
	stress((unsigned)(uintptr_t)arg);
	return NULL;
}

static void t_malloc(void *unused)
{
	(void)unused;
	unsigned char *z = nl_calloc(1000, 8);
	int zero = 1;
	for (int i = 0; z && i < 8000; i++)
		zero &= z[i] == 0;
	CHECK(z && zero, "calloc gives zeros");
	memset(z, 0xff, 8000);
	nl_free(z);
	z = nl_calloc(1000, 8); /* from the free list now: zeroed again */
	zero = 1;
	for (int i = 0; z && i < 8000; i++)
		zero &= z[i] == 0;
	CHECK(z && zero, "calloc of a reused block gives zeros");
	nl_free(z);
	CHECK(nl_calloc(SIZE_MAX / 2, 4) == NULL && nl_errno() == ENOMEM, "calloc overflow: ENOMEM");
	CHECK(nl_aligned_alloc(48, 8) == NULL && nl_errno() == EINVAL,
	      "aligned_alloc of an alignment not a power of two: EINVAL");
}

static void t_malloc_threads(void)
{
	pthread_t t[2];
	pthread_attr_t a[2];
	void *stk[2];

	/* each thread on a trap stack of its own: glibc keeps its thread's TLS at the top of a
	 * stack it is given, the thread block is at the bottom */
	for (int i = 0; i < 2; i++) {
		stk[i] = aligned_alloc(RLT_TRAP_STACK, RLT_TRAP_STACK);
		memset(stk[i], 0, sizeof(struct rlt_trap_thread));
		pthread_attr_init(&a[i]);
		pthread_attr_setstack(&a[i], stk[i], RLT_TRAP_STACK);
		CHECK(pthread_create(&t[i], &a[i], stress_thread, (void *)(uintptr_t)(i + 1)) == 0,
		      "pthread_create");
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		pthread_attr_destroy(&a[i]);
		free(stk[i]);
	}
}

/* ----- opendir, readdir, closedir: more names than one getdents64 returns ----- */

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list(const char *dir, int ours, char **names, int max)
{
	int n = 0;
	struct dirent *e;
	DIR *d = ours ? nl_opendir(dir) : opendir(dir);

	if (!d)
		return -1;
	while (n < max && (e = ours ? nl_readdir(d) : readdir(d)))
		names[n++] = strdup(e->d_name);
	if (ours)
		nl_closedir(d);
	else
		closedir(d);
	qsort(names, (size_t)n, sizeof *names, cmp);
	return n;
}

static void t_dir(void *unused)
{
	enum { FILES = 300 };
	char dir[] = "/tmp/rlt-nolibc-XXXXXX", path[256];
	static char *a[FILES + 8], *b[FILES + 8];

	(void)unused;
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	for (int i = 0; i < FILES; i++) {
		snprintf(path, sizeof path, "%s/file-with-a-longish-name-%04d", dir, i);
		FILE *f = fopen(path, "w");
		if (f)
			fclose(f);
	}
	int na = list(dir, 0, a, FILES + 8), nb = list(dir, 1, b, FILES + 8);
	CHECK(na == FILES + 2 && na == nb, "readdir: glibc %d names, ours %d", na, nb);
	for (int i = 0; i < na && i < nb; i++)
		CHECK(!strcmp(a[i], b[i]), "name %d: \"%s\" vs \"%s\"", i, a[i], b[i]);
	CHECK(nl_opendir("/nonexistent-rlt") == NULL && nl_errno() == ENOENT, "opendir: ENOENT");
	for (int i = 0; i < na; i++) {
		if (strcmp(a[i], ".") && strcmp(a[i], "..")) {
			snprintf(path, sizeof path, "%s/%s", dir, a[i]);
			unlink(path);
		}
		free(a[i]);
	}
	for (int i = 0; i < nb; i++)
		free(b[i]);
	rmdir(dir);
}

/* ----- the vDSO clock, getenv, strings ----- */

static void t_misc(void *unused)
{
	struct timespec t0, t1, t2;
	const void *vdso = (const void *)getauxval(AT_SYSINFO_EHDR);

	(void)unused;
	CHECK(vdso && nl_rlt_trap_vdso_sym(vdso, "__vdso_clock_gettime") != NULL,
	      "__vdso_clock_gettime found in the vDSO");
	CHECK(nl_rlt_trap_vdso_sym(vdso, "__vdso_no_such_function") == NULL, "a name not there");
	nl_rlt_trap_clock_init(vdso);
	for (int i = 0; i < 1000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		nl_clock_gettime(CLOCK_MONOTONIC, &t1);
		clock_gettime(CLOCK_MONOTONIC, &t2);
		uint64_t a = (uint64_t)t0.tv_sec * 1000000000 + (uint64_t)t0.tv_nsec;
		uint64_t b = (uint64_t)t1.tv_sec * 1000000000 + (uint64_t)t1.tv_nsec;
		uint64_t c = (uint64_t)t2.tv_sec * 1000000000 + (uint64_t)t2.tv_nsec;
		if (!(a <= b && b <= c)) {
			CHECK(0, "clock: %llu <= %llu <= %llu", (unsigned long long)a,
			      (unsigned long long)b, (unsigned long long)c);
			break;
		}
	}
	CHECK(nl_clock_gettime(12345, &t1) == -1 && nl_errno() == EINVAL, "a bad clock: EINVAL");
	nl_rlt_trap_clock_init(NULL); /* the system call */
	clock_gettime(CLOCK_REALTIME, &t0);
	CHECK(nl_clock_gettime(CLOCK_REALTIME, &t1) == 0 && t1.tv_sec - t0.tv_sec <= 1,
	      "the system call's clock");

	char *env[] = {"RLT_A=1", "RLT_AB=2", "RLT_=x", NULL};
	nl_rlt_trap_env_init(env);
	CHECK(nl_getenv("RLT_A") && !strcmp(nl_getenv("RLT_A"), "1"), "getenv RLT_A");
	CHECK(nl_getenv("RLT_AB") && !strcmp(nl_getenv("RLT_AB"), "2"), "getenv RLT_AB");
	CHECK(!nl_getenv("RLT") && !nl_getenv("RLT_A=1") && !nl_getenv(""), "getenv misses");
	nl_rlt_trap_env_init(NULL);

	char buf[32] = "abcdefghij";
	nl_memmove(buf + 2, buf, 8);
	CHECK(!strcmp(buf, "ababcdefgh"), "memmove forward overlap: %s", buf);
	nl_memmove(buf, buf + 2, 9);
	CHECK(!strcmp(buf, "abcdefgh"), "memmove backward overlap: %s", buf);
	CHECK(nl_strlen("") == 0 && nl_strlen("abc") == 3 && nl_strcmp("a", "b") < 0 &&
	      nl_strcmp("\xff", "a") > 0 && nl_strstr("hayneedle", "need") != NULL &&
	      nl_strstr("hay", "") != NULL && nl_strstr("hay", "z") == NULL, "strings");
}

/* ----- the robust mutex: owner death found, and glibc's protocol shared ----- */

struct shared_mutex {
	pthread_mutex_t m;
	int rc;
};

static void child_lock_and_die(void *arg)
{
	nl_pthread_mutex_lock(arg);
	syscall(SYS_exit_group, 0); /* holding it */
}

static void t_mutex_robust(void *arg)
{
	struct shared_mutex *sm = arg;
	pthread_mutexattr_t a;
	pid_t pid;

	/* ours: a holder that died is found by the next locker */
	nl_pthread_mutexattr_init(&a);
	nl_pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	nl_pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	nl_pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	nl_pthread_mutex_init(&sm->m, &a);
	CHECK(sm->m.__data.__kind == 146, "__kind as glibc's: %d", sm->m.__data.__kind);
	CHECK(nl_pthread_mutex_lock(&sm->m) == 0, "lock");
	CHECK(nl_pthread_mutex_lock(&sm->m) == EDEADLK, "relock: EDEADLK");
	CHECK(nl_pthread_mutex_unlock(&sm->m) == 0, "unlock");
	CHECK(nl_pthread_mutex_unlock(&sm->m) == EPERM, "unlock of a free lock: EPERM");
	pid = fork();
	if (pid == 0) {
		void *stk = trap_stack_new();
		trap_stack_call(stk, child_lock_and_die, &sm->m);
		_exit(1);
	}
	waitpid(pid, NULL, 0);
	CHECK(nl_pthread_mutex_lock(&sm->m) == EOWNERDEAD, "a dead holder: EOWNERDEAD");
	CHECK(nl_pthread_mutex_consistent(&sm->m) == 0, "consistent");
	CHECK(nl_pthread_mutex_unlock(&sm->m) == 0 && nl_pthread_mutex_lock(&sm->m) == 0 &&
	      nl_pthread_mutex_unlock(&sm->m) == 0, "usable again");

	/* glibc's holder dies: the kernel's robust list marks it, we take it over */
	pthread_mutexattr_t ga;
	pthread_mutexattr_init(&ga);
	pthread_mutexattr_setpshared(&ga, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&ga, PTHREAD_MUTEX_ROBUST);
	pthread_mutexattr_settype(&ga, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&sm->m, &ga);
	pid = fork();
	if (pid == 0) {
		pthread_mutex_lock(&sm->m);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	CHECK(nl_pthread_mutex_lock(&sm->m) == EOWNERDEAD, "glibc's dead holder: EOWNERDEAD");
	nl_pthread_mutex_consistent(&sm->m);
	/* held by us: glibc sees it held; released by us: glibc takes it */
	CHECK(pthread_mutex_trylock(&sm->m) == EDEADLK || pthread_mutex_trylock(&sm->m) == EBUSY,
	      "glibc sees our hold");
	nl_pthread_mutex_unlock(&sm->m);
	pid = fork();
	if (pid == 0)
		_exit(pthread_mutex_trylock(&sm->m) == 0 && pthread_mutex_unlock(&sm->m) == 0 ? 0 : 1);
	int st = 0;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "glibc takes what we released");
}

int main(void)
{
	void *stk = trap_stack_new();
	struct shared_mutex *sm = mmap(NULL, sizeof *sm, PROT_READ | PROT_WRITE,
	                               MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (!stk || sm == MAP_FAILED)
		return 2;
	trap_stack_call(stk, t_format, NULL);
	trap_stack_call(stk, t_strto, NULL);
	trap_stack_call(stk, t_inet, NULL);
	trap_stack_call(stk, t_malloc, NULL);
	t_malloc_threads();
	trap_stack_call(stk, t_dir, NULL);
	trap_stack_call(stk, t_misc, NULL);
	trap_stack_call(stk, t_mutex_robust, sm);
	printf("test_nolibc: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
