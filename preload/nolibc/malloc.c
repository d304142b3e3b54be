/*
 * malloc.c: malloc, calloc, realloc and free from mmap'd arenas. The core allocates at load and
 * off the hot path only, so this is small rather than fast: one spin lock for all threads,
 * blocks of powers of two from 16 bytes to 64 KiB cut from 1 MiB arenas and kept on a free
 * list per size, anything larger mapped on its own. A block's size is in the 16 bytes before
 * it. aligned_alloc takes a block larger by the alignment and gives out an aligned address in
 * it, whose 16 bytes before say how far back the block starts (AMAGIC). A signal handler must
 * not allocate while its thread holds the lock (none does).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "rawsys.h"

#define HDR 16
#define MIN_SHIFT 4
#define MAX_SHIFT 16
#define ARENA (1u << 20)

struct hdr {
	size_t size;  /* the block's bytes, the header included: a class or a mapping's length */
	size_t magic; /* MAGIC: free() of a pointer we never gave out is caught */
};
#define MAGIC ((size_t)0x726c74616c6c6f63ULL)
#define AMAGIC ((size_t)0x726c74616c69676eULL) /* size: the offset back to the block */

/* The block p was given out from: p itself, or the block an aligned_alloc address is in. */
static void *block_of(void *p)
{
	struct hdr *h = (struct hdr *)((char *)p - HDR);
	return h->magic == AMAGIC ? (char *)p - h->size : p;
}

static atomic_flag lock = ATOMIC_FLAG_INIT;
static void *free_list[MAX_SHIFT + 1];
static char *bump, *bump_end;

static void take(void)
{
	while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
		__asm__ volatile("pause");
}

static void give(void)
{
	atomic_flag_clear_explicit(&lock, memory_order_release);
}

static void *map(size_t n)
{
	long r = RLT_SYS(SYS_mmap, 0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return rlt_trap_ret(r) == -1 ? NULL : (void *)r;
}

void *malloc(size_t n)
{
	unsigned shift = MIN_SHIFT;
	struct hdr *h;

	if (n > SIZE_MAX / 2) {
		errno = ENOMEM;
		return NULL;
	}
	while (shift <= MAX_SHIFT && ((size_t)1 << shift) < n + HDR)
		shift++;
	if (shift > MAX_SHIFT) {
		size_t len = (n + HDR + 4095) & ~(size_t)4095;
		h = map(len);
		if (!h)
			return NULL;
		h->size = len;
		h->magic = MAGIC;
		return (char *)h + HDR;
	}
	take();
	h = free_list[shift];
	if (h) {
		free_list[shift] = *(void **)h;
	} else {
		size_t sz = (size_t)1 << shift;
		if ((size_t)(bump_end - bump) < sz) {
			char *a = map(ARENA); /* the rest of the old arena is left unused */
			if (!a) {
				give();
				return NULL;
			}
			bump = a;
			bump_end = a + ARENA;
		}
		h = (struct hdr *)bump;
		bump += sz;
	}
	give();
	h->size = (size_t)1 << shift;
	h->magic = MAGIC;
	return (char *)h + HDR;
}

void free(void *p)
{
	struct hdr *h;
	unsigned shift = MIN_SHIFT;

	if (!p)
		return;
	p = block_of(p);
	h = (struct hdr *)((char *)p - HDR);
	if (h->magic != MAGIC)
		__builtin_trap();
	h->magic = 0;
	if (h->size > ((size_t)1 << MAX_SHIFT)) {
		RLT_SYS2(SYS_munmap, h, h->size);
		return;
	}
	while (((size_t)1 << shift) < h->size)
		shift++;
	take();
	*(void **)h = free_list[shift];
	free_list[shift] = h;
	give();
}

void *calloc(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	p = malloc(n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void *realloc(void *p, size_t n)
{
	size_t have;
	void *q;

	if (!p)
		return malloc(n);
	if (!n) {
		free(p);
		return NULL;
	}
	/* an aligned block's bytes from p on */
	have = ((struct hdr *)((char *)block_of(p) - HDR))->size - HDR -
	       (size_t)((char *)p - (char *)block_of(p));
	if (n <= have)
		return p;
	q = malloc(n);
	if (q) {
		memcpy(q, p, have);
		free(p);
	}
	return q;
}

/* A power of two alignment (C11); at most HDR is malloc's own. */
void *aligned_alloc(size_t align, size_t n)
{
	char *p, *q;

	if (align == 0 || (align & (align - 1)) || n > SIZE_MAX / 2 - align) {
		errno = EINVAL;
		return NULL;
	}
	if (align <= HDR)
		return malloc(n);
	p = malloc(n + align);
	if (!p)
		return NULL;
	q = (char *)(((uintptr_t)p + align) & ~(uintptr_t)(align - 1)); /* >= p + HDR */
	((struct hdr *)(q - HDR))->size = (size_t)(q - p);
	((struct hdr *)(q - HDR))->magic = AMAGIC;
	return q;
}
