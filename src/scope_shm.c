/*
 * scope_shm.c: scope=shared:NAME, a rule's engine state in a POSIX shared-memory segment.
 *
 * Creation is a small protocol, because two processes may name a new scope in the same
 * microsecond and a creator may die half way:
 *  - shm_open(O_CREAT | O_EXCL, 0600) decides who creates. The creator takes an flock on the
 *    object at once, sizes it, writes the header, initialises the state (RLT_STATE_SHARED: the
 *    windows and the log get a robust process-shared mutex) and publishes `ready` with release
 *    order; then it drops the lock.
 *  - Everyone else opens the object, checks that it is ours to trust (our euid owns it, no one
 *    else may write it), and waits for `ready` (acquire order), bounded, in short sleeps.
 *  - A segment that never becomes ready is stale: its creator died before publishing (the pid in
 *    the header is gone, or the wait ran out). The flock tells a dead creator from a slow one:
 *    the creator holds it until ready, and the kernel drops it when the creator dies. Whoever
 *    gets the lock on a stale segment removes the name, if the name still refers to that same
 *    object, and everyone starts over; holding the old object's lock across the check and the
 *    unlink makes two removers unable to remove each other's new segment.
 * Who wins a disagreement on params: the creator. Its params are in the header, and a process
 * whose rule differs is refused (at load, with the differences spelled out).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "keytab.h"
#include "scope_shm.h"

/* How long a process waits for a creator to publish before it judges the segment. */
#define READY_WAIT_NS (1000 * 1000 * 1000ull)
/* ... and how much longer it gives a creator that still holds its lock (a slow machine). */
#define LOCKED_GRACE_NS (1000 * 1000 * 1000ull)
#define POLL_NS (1000 * 1000) /* one sleep of the wait */
#define ATTEMPTS 8            /* whole open-or-create rounds (a stale segment costs one) */

#define STATE_OFF ((sizeof(struct rlt__shm_hdr) + 63) & ~(size_t)63)

enum { ATTACHED = 0, AGAIN = 1 };

int rlt__shm_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > RLT_NAME_MAX || !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

static void object_name(char *out, size_t len, const char *name)
{
	snprintf(out, len, "/" RLT_SHM_PREFIX "%s", name);
}

static void pause_poll(void)
{
	struct timespec ts = {0, POLL_NS};
	nanosleep(&ts, NULL);
}

/* The rule's side of the header: what every process naming the scope must agree on. */
static void fill_params(struct rlt__shm_hdr *h, const struct rlt_rule *r)
{
	const struct rlt_params *p = &r->params;

	h->unit = (uint32_t)r->unit;
	h->key = (uint32_t)r->key;
	h->keys = r->key != RLT_KEY_NONE ? r->keys : 0;
	h->key_prefix4 = r->key == RLT_KEY_PEER ? r->key_prefix4 : 0;
	h->key_prefix6 = r->key == RLT_KEY_PEER ? r->key_prefix6 : 0;
	if (r->var == RLT_VAR_CONNS) {
		h->algo = 0;
		h->rate_num = r->amount_num;
		return;
	}
	h->algo = (uint32_t)p->algo;
	h->rate_num = p->rate_num;
	h->rate_den_ns = p->rate_den_ns;
	h->burst = p->burst;
	h->limit = p->limit;
	h->window_ns = p->window_ns;
}

static const char *unit_word(uint32_t u)
{
	switch (u) {
	case RLT_UNIT_BYTES: return "bytes";
	case RLT_UNIT_MSGS: return "messages";
	case RLT_UNIT_CALLS: return "calls";
	case RLT_UNIT_CONNS: return "connections open at once";
	default: return "?";
	}
}

static const char *key_word(uint32_t k)
{
	switch (k) {
	case RLT_KEY_NONE: return "(none)";
	case RLT_KEY_PEER: return "peer";
	case RLT_KEY_PORT: return "port";
	default: return "?";
	}
}

/* Appends "what: there vs here" for each field that differs. Returns how many differ. */
static int describe_diff(const struct rlt__shm_hdr *there, const struct rlt__shm_hdr *here,
                         char *out, size_t len)
{
	size_t o = 0;
	int n = 0;

#define DIFF(cond, ...)                                                                          \
	do {                                                                                     \
		if ((cond) && o < len) {                                                         \
			int w = snprintf(out + o, len - o, "%s", n ? "; " : "");                 \
			o += w > 0 ? (size_t)w : 0;                                              \
			if (o < len) {                                                           \
				w = snprintf(out + o, len - o, __VA_ARGS__);                     \
				o += w > 0 ? (size_t)w : 0;                                      \
			}                                                                        \
			n++;                                                                     \
		}                                                                                \
	} while (0)
	DIFF(there->unit != here->unit, "counts %s there, %s here", unit_word(there->unit),
	     unit_word(here->unit));
	if (there->unit != here->unit)
		return n;
	DIFF(there->key != here->key, "key=%s there, key=%s here", key_word(there->key),
	     key_word(here->key));
	DIFF(there->key == here->key && there->key == RLT_KEY_PEER &&
	             (there->key_prefix4 != here->key_prefix4 ||
	              there->key_prefix6 != here->key_prefix6),
	     "key=peer/%u,%u there, key=peer/%u,%u here", there->key_prefix4, there->key_prefix6,
	     here->key_prefix4, here->key_prefix6);
	DIFF(there->key == here->key && there->keys != here->keys,
	     "keys=%u there (the table's size, fixed at creation), keys=%u here", there->keys,
	     here->keys);
	if (here->unit == RLT_UNIT_CONNS) {
		DIFF(there->rate_num != here->rate_num, "limit %llu there, %llu here",
		     (unsigned long long)there->rate_num, (unsigned long long)here->rate_num);
		return n;
	}
	DIFF(there->algo != here->algo, "algo %s there, %s here",
	     rlt_algo_name((enum rlt_algo)there->algo), rlt_algo_name((enum rlt_algo)here->algo));
	DIFF(there->rate_num != here->rate_num || there->rate_den_ns != here->rate_den_ns,
	     "rate %.9g/s there, %.9g/s here",
	     (double)there->rate_num * 1e9 / (double)there->rate_den_ns,
	     (double)here->rate_num * 1e9 / (double)here->rate_den_ns);
	DIFF(there->burst != here->burst, "burst %llu there, %llu here",
	     (unsigned long long)there->burst, (unsigned long long)here->burst);
	DIFF(there->limit != here->limit || there->window_ns != here->window_ns,
	     "window %llu per %.9gs there, %llu per %.9gs here", (unsigned long long)there->limit,
	     (double)there->window_ns / 1e9, (unsigned long long)here->limit,
	     (double)here->window_ns / 1e9);
#undef DIFF
	return n;
}

static int fail(struct rlt_error *err, const struct rlt_rule *r, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct rlt_error *err, const struct rlt_rule *r, int code, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err->msg, sizeof err->msg, "%s=\"%.200s\": scope=shared:%.60s: ",
	                 rlt_var_name(r->var), r->text, r->scope_name);

	if (n < 0 || (size_t)n >= sizeof err->msg)
		return code;
	va_start(ap, fmt);
	vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
	va_end(ap);
	return code;
}

/* The name still refers to the object open as fd (not removed, not replaced). */
static int names_same_object(int fd, const char *name)
{
	char path[sizeof RLT_SHM_DIR + RLT_NAME_MAX + 32];
	struct stat a, b;

	snprintf(path, sizeof path, RLT_SHM_DIR "/" RLT_SHM_PREFIX "%s", name);
	return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* An flock within a deadline: the holders hold it for microseconds (a creator setting up, a
 * remover checking), so this is never a long wait; the bound keeps it so. */
static int lock_within(int fd, rlt_ns_t deadline)
{
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (rlt__now() >= deadline)
			return -ETIMEDOUT;
		pause_poll();
	}
}

static size_t state_size_of(const struct rlt_rule *r)
{
	if (r->var == RLT_VAR_CONNS)
		return RLT_SHM_HOLDERS * sizeof(struct rlt__shm_holder);
	return r->key != RLT_KEY_NONE ? rlt__keytab_bytes(r->keys) : rlt_state_size(&r->params);
}

/* The creator's side. fd is the object it just created with O_EXCL. */
static int create(int fd, const struct rlt_rule *r, const char *obj, struct rlt__shm_hdr **out,
                  struct rlt_error *err)
{
	size_t size = STATE_OFF + ((state_size_of(r) + 63) & ~(size_t)63);
	struct rlt__shm_hdr *h;
	struct timespec rt;
	int rc;

	rc = lock_within(fd, rlt__now() + READY_WAIT_NS);
	if (rc)
		return fail(err, r, rc, "cannot lock the new segment %s: %s", obj, strerror(-rc));
	/* A process that judged us stale in the instant before our lock removed the name: this
	 * object is an orphan, start over. */
	if (!names_same_object(fd, r->scope_name))
		return AGAIN;
	/* From here on the object is ours and unpublished: a failure removes it again. */
	/* Its memory is allocated now (a keyed table's too), not when first touched: a full
	 * /dev/shm fails the load here in one line, instead of SIGBUS in the first call that
	 * touches a page (every process attaching later finds the pages there). */
	rc = ftruncate(fd, (off_t)size) != 0 ? errno : posix_fallocate(fd, 0, (off_t)size);
	if (rc) {
		rc = fail(err, r, -rc, "cannot size the segment %s to %zu bytes: %s", obj, size,
		          strerror(rc));
		shm_unlink(obj);
		return rc;
	}
	h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		rc = fail(err, r, -errno, "cannot map the segment %s: %s", obj, strerror(errno));
		shm_unlink(obj);
		return rc;
	}
	/* ftruncate gave zeroed memory: ready is 0 until the release store below */
	h->creator = (int32_t)getpid();
	h->magic = RLT_SHM_MAGIC;
	h->layout = RLT_SHM_LAYOUT;
	h->var = (uint32_t)r->var;
	h->size = size;
	h->state_off = STATE_OFF;
	clock_gettime(CLOCK_REALTIME, &rt);
	h->created = (uint64_t)rt.tv_sec;
	fill_params(h, r);
	atomic_init(&h->open, 0);
	snprintf(h->text, sizeof h->text, "%s", r->text);
	if (r->key != RLT_KEY_NONE && r->var != RLT_VAR_CONNS) {
		/* the seed here, so that every process hashes a key alike; unguessable enough that
		 * clients cannot aim their addresses at one set */
		rlt__keytab_area_init((char *)h + STATE_OFF, r->keys,
		                      rlt__now() ^ (uint64_t)rt.tv_nsec << 20 ^
		                              (uint64_t)(uintptr_t)h ^ (uint64_t)getpid() << 40);
	} else if (r->var != RLT_VAR_CONNS) {
		rc = rlt_state_init(&r->params, (char *)h + STATE_OFF, RLT_STATE_SHARED);
		if (rc) {
			munmap(h, size);
			shm_unlink(obj);
			return fail(err, r, rc, "cannot initialise the state in %s: %s", obj,
			            strerror(-rc));
		}
	}
	atomic_store_explicit(&h->ready, 1, memory_order_release);
	flock(fd, LOCK_UN);
	*out = h;
	return ATTACHED;
}

/* A segment whose creator never published: remove its name if we can show it is dead (we get
 * its lock, it is still not ready, the name is still this object). AGAIN when removed (or when
 * the name went away meanwhile), STALE_READY when it turned out ready, STALE_BUSY when its lock
 * is held (a creator still at work). */
enum { STALE_BUSY = 0, STALE_READY = 2 };
static int remove_if_stale(int fd, const struct rlt__shm_hdr *h, const char *obj,
                           const char *name)
{
	if (flock(fd, LOCK_EX | LOCK_NB) != 0)
		return STALE_BUSY;
	if (h && atomic_load_explicit(&h->ready, memory_order_acquire)) {
		flock(fd, LOCK_UN);
		return STALE_READY;
	}
	if (names_same_object(fd, name))
		shm_unlink(obj);
	flock(fd, LOCK_UN);
	return AGAIN;
}

static int creator_dead(const struct rlt__shm_hdr *h)
{
	pid_t pid = (pid_t)h->creator;
	return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

/* Whether the segment on fd may be trusted: ours, a plain segment, written by no one else. 0
 * with *st, or a negative errno with err. */
static int trusted(int fd, const struct rlt_rule *r, const char *obj, struct stat *st,
                   struct rlt_error *err)
{
	if (fstat(fd, st) != 0)
		return fail(err, r, -errno, "cannot stat %s: %s", obj, strerror(errno));
	/* Trust: a segment another user made, or that others may write, could be made to admit
	 * anything (or to hold a lock forever). */
	if (st->st_uid != geteuid())
		return fail(err, r, -EPERM,
		            "the segment %s belongs to uid %u, not to us (uid %u): refused; the owner "
		            "can remove it with `rlthrottle shm rm %s`",
		            obj, (unsigned)st->st_uid, (unsigned)geteuid(), r->scope_name);
	if (!S_ISREG(st->st_mode))
		return fail(err, r, -EPERM, "%s is not a shared-memory segment (a FIFO or device "
		            "planted under its name?): refused", obj);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return fail(err, r, -EPERM,
		            "the segment %s is writable by others (mode %04o): refused; remove it "
		            "with `rlthrottle shm rm %s`",
		            obj, (unsigned)(st->st_mode & 07777), r->scope_name);
	return 0;
}

/* The segment mapped (*h, *mapped) once its creator has made it ready: 0; AGAIN when it was
 * stale and is removed (nothing mapped); or a negative errno with err (nothing mapped). A
 * creator that died, or one that is not ready by the deadline, makes it stale. */
static int wait_ready(int fd, const struct rlt_rule *r, const char *obj, struct stat *st,
                      struct rlt__shm_hdr **hp, size_t *mapped, struct rlt_error *err)
{
	rlt_ns_t start = rlt__now(), deadline = start + READY_WAIT_NS;
	struct rlt__shm_hdr *h = NULL;
	int rc;

	/* bounded: every round sleeps POLL_NS and the deadlines do not move */
	for (;;) {
		int stale = 0;
		if (!h && st->st_size >= (off_t)sizeof *h) {
			/* the creator sizes the object once, before writing anything in it */
			*mapped = (size_t)st->st_size;
			h = mmap(NULL, *mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (h == MAP_FAILED)
				return fail(err, r, -errno, "cannot map %s: %s", obj, strerror(errno));
		}
		if (h && atomic_load_explicit(&h->ready, memory_order_acquire))
			break;
		rlt_ns_t now = rlt__now();
		if (h && creator_dead(h))
			stale = 1;
		if (stale || now >= deadline) {
			rc = remove_if_stale(fd, h, obj, r->scope_name);
			if (rc == STALE_READY)
				break;
			if (rc == AGAIN) {
				if (h)
					munmap(h, *mapped);
				return AGAIN;
			}
			if (now >= deadline + LOCKED_GRACE_NS) {
				if (h)
					munmap(h, *mapped);
				return fail(err, r, -ETIMEDOUT,
				            "the segment %s was not ready after %llu ms and its creator "
				            "still holds it; remove it with `rlthrottle shm rm %s`",
				            obj,
				            (unsigned long long)((now - start) / 1000000),
				            r->scope_name);
			}
		}
		pause_poll();
		if (!h && fstat(fd, st) != 0)
			return fail(err, r, -errno, "cannot stat %s: %s", obj, strerror(errno));
	}
	*hp = h;
	return 0;
}

/* A ready segment checked for this rule: whole, of this layout, made with the same params and
 * large enough for its state. 0, or a negative errno with err (the caller unmaps it). */
static int fits_rule(const struct rlt__shm_hdr *h, size_t mapped, const struct rlt_rule *r,
                     const char *obj, struct rlt_error *err)
{
	struct rlt__shm_hdr mine;
	char diff[400];

	/* Cut short under its users (only its owner can): every process that touches the lost
	 * part dies of SIGBUS, so joining it would only add one more. */
	if (h->magic == RLT_SHM_MAGIC && h->layout == RLT_SHM_LAYOUT && h->size > mapped)
		return fail(err, r, -EPROTO,
		          "%s is truncated (%zu bytes, its header says %llu): its users die of SIGBUS "
		          "when they touch the part cut off; remove it with `rlthrottle shm rm %s`",
		          obj, mapped, (unsigned long long)h->size, r->scope_name);
	/* Longer than its header says (extended by someone): the header and the state are
	 * whole and only the first h->size bytes are ever touched, so it is used as it is. */
	if (h->magic != RLT_SHM_MAGIC || h->layout != RLT_SHM_LAYOUT || h->size > mapped ||
	    h->state_off != STATE_OFF)
		return fail(err, r, -EPROTO,
		            "%s is not a segment of this version of rlthrottle (layout %u expected); "
		            "remove it with `rlthrottle shm rm %s`",
		            obj, RLT_SHM_LAYOUT, r->scope_name);
	memset(&mine, 0, sizeof mine);
	fill_params(&mine, r);
	if (describe_diff(h, &mine, diff, sizeof diff))
		return fail(err, r, -EINVAL,
		          "differs from the rule that created the segment (pid %d: \"%.100s\"): %s. "
		          "The first process to name a scope sets its params; use another NAME, or "
		          "remove the segment with `rlthrottle shm rm %s`",
		          (int)h->creator, h->text, diff, r->scope_name);
	if (STATE_OFF + state_size_of(r) > mapped)
		return fail(err, r, -EPROTO, "%s is too small for the rule's state", obj);
	return 0;
}

/* The side of a process that found the segment there. */
static int join(int fd, const struct rlt_rule *r, const char *obj, struct rlt__shm_hdr **out,
                struct rlt_error *err)
{
	struct rlt__shm_hdr *h = NULL;
	size_t mapped = 0;
	struct stat st;
	int rc = trusted(fd, r, obj, &st, err);

	if (rc == 0)
		rc = wait_ready(fd, r, obj, &st, &h, &mapped, err);
	if (rc != 0)
		return rc;
	rc = fits_rule(h, mapped, r, obj, err);
	if (rc != 0) {
		munmap(h, mapped);
		return rc;
	}
	*out = h;
	return ATTACHED;
}

struct rlt__shm_hdr *rlt__shm_hdr_of(void *state)
{
	return (struct rlt__shm_hdr *)((char *)state - STATE_OFF);
}

int rlt__shm_attach(const struct rlt_rule *r, void **state, _Atomic uint32_t **open,
                    struct rlt__shm_holder **holders, struct rlt_error *err)
{
	char obj[RLT_NAME_MAX + 32];
	struct rlt__shm_hdr *h = NULL;

	/* The parser allows no other NAME; checked again because this one becomes a path. */
	if (!rlt__shm_name_ok(r->scope_name))
		return fail(err, r, -EINVAL, "the NAME is not a valid scope name");
	object_name(obj, sizeof obj, r->scope_name);
	for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
		int rc, fd = shm_open(obj, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd >= 0) {
			rc = create(fd, r, obj, &h, err);
		} else if (errno == EEXIST) {
			fd = shm_open(obj, O_RDWR | O_NONBLOCK, 0);
			if (fd < 0) {
				if (errno == ENOENT)
					continue; /* removed as stale meanwhile: create it */
				if (errno == EACCES)
					return fail(err, r, -EACCES,
					            "%s exists but we may not open it (another user's?); "
					            "refused",
					            obj);
				return fail(err, r, -errno, "cannot open %s: %s", obj,
				            strerror(errno));
			}
			rc = join(fd, r, obj, &h, err);
		} else {
			return fail(err, r, -errno, "cannot create %s: %s", obj, strerror(errno));
		}
		close(fd);
		if (rc < 0)
			return rc;
		if (rc == ATTACHED) {
			*state = r->var == RLT_VAR_CONNS ? NULL : (char *)h + h->state_off;
			*open = &h->open;
			/* ftruncate gave zeroes: every holder free */
			*holders = r->var == RLT_VAR_CONNS
			                   ? (struct rlt__shm_holder *)((char *)h + h->state_off)
			                   : NULL;
			return 0;
		}
	}
	return fail(err, r, -EAGAIN, "could not open or create %s after %d attempts", obj,
	            ATTEMPTS);
}

static void read_info(const char *name, struct rlt__shm_info *in)
{
	char obj[RLT_NAME_MAX + 32];
	struct stat st;
	int fd;

	memset(in, 0, sizeof *in);
	snprintf(in->name, sizeof in->name, "%s", name);
	object_name(obj, sizeof obj, name);
	/* O_NONBLOCK: a FIFO planted under the name must not hang `shm list` */
	fd = shm_open(obj, O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0) {
		/* say what it is (shm_open does not follow a link another user may have planted) */
		char path[sizeof RLT_SHM_DIR + RLT_NAME_MAX + 32];
		snprintf(path, sizeof path, "%s%s", RLT_SHM_DIR, obj);
		if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
			in->uid = st.st_uid;
			in->mode = st.st_mode & 07777;
			in->not_file = S_ISLNK(st.st_mode)    ? "a symbolic link"
			               : S_ISFIFO(st.st_mode) ? "a FIFO"
			               : S_ISDIR(st.st_mode)  ? "a directory"
			               : S_ISSOCK(st.st_mode) ? "a socket"
			                                      : "not a regular file";
		}
		return;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		in->size = (uint64_t)st.st_size;
		in->uid = st.st_uid;
		in->mode = st.st_mode & 07777;
		/* opened read-only: what follows is about its contents, not our rights */
		in->readable = 1;
		if (st.st_size >= (off_t)sizeof in->hdr) {
			const struct rlt__shm_hdr *h =
				mmap(NULL, sizeof *h, PROT_READ, MAP_SHARED, fd, 0);
			if (h == MAP_FAILED) {
				in->readable = 0;
			} else {
				in->valid = h->magic == RLT_SHM_MAGIC && h->layout == RLT_SHM_LAYOUT &&
				            atomic_load_explicit(&((struct rlt__shm_hdr *)h)->ready,
				                                 memory_order_acquire);
				if (in->valid)
					memcpy(&in->hdr, h, sizeof in->hdr);
				munmap((void *)h, sizeof *h);
			}
		}
	}
	close(fd);
}

int rlt__shm_list(void (*each)(const struct rlt__shm_info *info, void *ctx), void *ctx,
                  struct rlt_error *err)
{
	DIR *d = opendir(RLT_SHM_DIR);
	struct dirent *de;
	size_t plen = strlen(RLT_SHM_PREFIX);

	if (!d) {
		snprintf(err->msg, sizeof err->msg, "cannot read %s: %s", RLT_SHM_DIR,
		         strerror(errno));
		return -errno;
	}
	while ((de = readdir(d)) != NULL) {
		struct rlt__shm_info info;
		if (strncmp(de->d_name, RLT_SHM_PREFIX, plen) != 0 ||
		    !rlt__shm_name_ok(de->d_name + plen))
			continue;
		read_info(de->d_name + plen, &info);
		each(&info, ctx);
	}
	closedir(d);
	return 0;
}

int rlt__shm_remove(const char *name, struct rlt_error *err)
{
	char obj[RLT_NAME_MAX + 32];

	if (!rlt__shm_name_ok(name)) {
		snprintf(err->msg, sizeof err->msg,
		         "\"%.200s\" is not a scope NAME (letters, digits, \".\", \"_\", \"-\")", name);
		return -EINVAL;
	}
	object_name(obj, sizeof obj, name);
	if (shm_unlink(obj) != 0) {
		int e = errno;
		snprintf(err->msg, sizeof err->msg, "cannot remove %s: %s", obj, strerror(e));
		return -e;
	}
	return 0;
}
