/*
 * hook_epoll.c: the epoll side of the waits (hook_poll.c): epoll's interest set is the
 * kernel's, so the registrations of sockets are kept here (epoll_ctl) and a held socket's event
 * is taken out of its registration (EPOLL_CTL_MOD) while it is held, put back when due: a
 * re-armed edge-triggered registration (Go's netpoller) then gets its edge. A non-blocking call
 * the budget refuses (EAGAIN, io_pacing.c) holds the socket's registrations at once
 * (rlt_pre_fd_refused); one this file cannot hold (one-shot, beyond the table) marks the
 * socket `unheld`, and a non-blocking call on it waits for one piece instead. A one-shot
 * registration is still kept, never held: the events a wait reports of its own (a listener's
 * queued connection) disarm it as the kernel's would, until the program re-arms it. A socket held
 * whole (a connect or accept due later) has its registration taken out (EPOLL_CTL_DEL) and
 * added back when due.
 *
 * Both fronts: the preload's exported hooks below, and the system-call front's dispatch
 * (trap_dispatch.c), which calls the rlt_pre_* forms with the kernel's arguments. There
 * epoll_ctl traps only once a wait could hold a socket (trap_waits.c): the registrations made
 * before are read back from the kernel then and recorded here (rlt_pre_epoll_adopt).
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <sys/epoll.h>

#include "accept_queue.h"
#include "clock.h"
#include "fdtable.h"
#include "hook_poll.h"
#include "load.h"
#include "net_delay.h"
#include "net_hook.h"
#include "preload.h"
#include "real.h"
#include "redis_client.h"

/*
 * The registrations of sockets on epoll instances, kept so that a wait knows which of its
 * sockets to look at and what to put back. A fixed table (no allocation in a hook), found by
 * (epfd, fd); a registration the kernel dropped with its last fd is found stale by the
 * EPOLL_CTL_MOD that fails, and its slot freed. A registration beyond the table is not held
 * back (its receive then waits for its budget, as before). One thread at a time changes a
 * slot (`busy`); a wait that finds a slot busy leaves it to the other thread.
 */
#define REGS_MAX 256
struct reg {
	_Atomic int epfd; /* the instance + 1; 0: free */
	_Atomic int fd;
	_Atomic uint32_t events;  /* as the program registered them */
	_Atomic uint64_t data;
	/* what is taken out of the kernel's registration now; RLT_PRE_HELD_WHOLE: the
	 * registration itself (EPOLL_CTL_DEL), to be added back when due */
	_Atomic uint32_t held;
	_Atomic int busy;
	/* EPOLLONESHOT: 1 armed, 2 reported (by the kernel or by us) until the program's MOD */
	_Atomic int oneshot;
};
static _Atomic int oneshots; /* a one-shot registration was ever kept */
static struct reg regs[REGS_MAX];
static _Atomic unsigned regs_top; /* slots ever used: a wait looks at these */

static struct reg *reg_find(int epfd, int fd)
{
	unsigned top = atomic_load_explicit(&regs_top, memory_order_acquire);

	for (unsigned i = 0; i < top; i++)
		if (atomic_load_explicit(&regs[i].epfd, memory_order_acquire) == epfd + 1 &&
		    atomic_load_explicit(&regs[i].fd, memory_order_relaxed) == fd)
			return &regs[i];
	return NULL;
}

static void reg_set(struct reg *g, const struct epoll_event *ev)
{
	atomic_store_explicit(&g->events, ev->events, memory_order_relaxed);
	atomic_store_explicit(&g->data, ev->data.u64, memory_order_relaxed);
	atomic_store_explicit(&g->held, 0, memory_order_relaxed);
	atomic_store_explicit(&g->oneshot, (ev->events & EPOLLONESHOT) ? 1 : 0, memory_order_relaxed);
	if (ev->events & EPOLLONESHOT)
		atomic_store_explicit(&oneshots, 1, memory_order_relaxed);
}

/* Records a registration: its slot, NULL when the table is full (it is not held then). */
static struct reg *reg_add(int epfd, int fd, const struct epoll_event *ev)
{
	struct reg *g = reg_find(epfd, fd);

	for (unsigned i = 0; !g && i < REGS_MAX; i++) {
		int zero = 0;
		/* the fd first: a wait that sees the epfd sees an fd that goes with it */
		if (atomic_load_explicit(&regs[i].epfd, memory_order_relaxed) == 0 &&
		    !atomic_exchange_explicit(&regs[i].busy, 1, memory_order_acquire)) {
			if (atomic_load_explicit(&regs[i].epfd, memory_order_relaxed) == 0) {
				atomic_store_explicit(&regs[i].fd, fd, memory_order_relaxed);
				reg_set(&regs[i], ev);
				atomic_compare_exchange_strong(&regs[i].epfd, &zero, epfd + 1);
				g = &regs[i];
				unsigned top = atomic_load(&regs_top);
				while (top < i + 1 &&
				       !atomic_compare_exchange_weak(&regs_top, &top, i + 1))
					;
			}
			atomic_store_explicit(&regs[i].busy, 0, memory_order_release);
			if (g)
				return g;
		}
	}
	if (g)
		reg_set(g, ev);
	return g;
}

/* The program's epoll_ctl on a registration we took out whole (reg_hold): the kernel has none
 * now, so its MOD or DEL is ours to answer. 1 when answered (rc 0); the MOD's events come back
 * with the registration when it is due. */
static int ctl_taken_out(int epfd, int op, int fd, const struct epoll_event *ev)
{
	struct reg *g = reg_find(epfd, fd);

	if (!g || !(atomic_load_explicit(&g->held, memory_order_relaxed) & RLT_PRE_HELD_WHOLE) ||
	    (op != EPOLL_CTL_DEL && (op != EPOLL_CTL_MOD || !ev)))
		return 0;
	if (op == EPOLL_CTL_DEL) {
		atomic_store_explicit(&g->epfd, 0, memory_order_release);
	} else {
		atomic_store_explicit(&g->events, ev->events, memory_order_relaxed);
		atomic_store_explicit(&g->data, ev->data.u64, memory_order_relaxed);
	}
	return 1;
}

/* Whether registrations are kept: whenever the process has a rule or network conditions,
 * for what holds may come later (a non-blocking connect, a hang, `set`), and a registration
 * it does not know it cannot hold. */
static int keeps_regs(void)
{
	return (rlt_pre_vars_in_use || rlt_pre_net_on()) &&
	       atomic_load_explicit(&rlt_pre_active, memory_order_acquire) && !rlt__internal;
}

/* What an epoll_ctl the kernel took changes in the table; the slot of a registration added
 * (NULL: none). */
static struct reg *reg_note(int epfd, int op, int fd, const struct epoll_event *ev)
{
	struct rlt_pre_fd *e;
	struct reg *added = NULL;

	if (op == EPOLL_CTL_DEL) {
		struct reg *g = reg_find(epfd, fd);
		if (g)
			atomic_store_explicit(&g->epfd, 0, memory_order_release);
	} else if ((op == EPOLL_CTL_ADD || op == EPOLL_CTL_MOD) && ev) {
		e = rlt_pre_fd_get(fd);
		/* a socket (its rules may come with its connect); a one-shot registration is the
		 * program's to re-arm, so it is kept (for what a wait reports of its own) but not
		 * held. A socket whose registration is not held (that, or the table is full) is
		 * marked: a non-blocking call on it keeps waiting for one piece rather than fail
		 * with EAGAIN (io_pacing.c), as its program would never be told when to try again */
		int sock = e && atomic_load_explicit(&e->kind, memory_order_acquire) == RLT_FD_SOCKET;
		if (sock && (ev->events & EPOLLONESHOT)) {
			uint8_t was = 0;
			if (reg_add(epfd, fd, ev)) /* unless the socket is marked unheld already */
				atomic_compare_exchange_strong(&e->unheld, &was, RLT_PRE_UNHELD_ONESHOT);
			else /* the table is full */
				atomic_store_explicit(&e->unheld, RLT_PRE_UNHELD, memory_order_relaxed);
		} else if (!sock || !(added = reg_add(epfd, fd, ev))) {
			struct reg *g = op == EPOLL_CTL_MOD ? reg_find(epfd, fd) : NULL;
			if (sock)
				atomic_store_explicit(&e->unheld, RLT_PRE_UNHELD, memory_order_relaxed);
			if (g)
				atomic_store_explicit(&g->epfd, 0, memory_order_release);
		} else {
			atomic_store_explicit(&e->registered, 1, memory_order_relaxed);
		}
	}
	return added;
}

int rlt_pre_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct epoll_event quiet;
	struct epoll_event *kev = ev;
	struct rlt_pre_fd *e;

	/* A socket due later is not registered with the kernel yet (Go connects, then registers,
	 * while a thread of it may sleep in this instance's wait already: the kernel's event
	 * would reach that thread at once, and an error or hang-up, which no mask keeps out, as
	 * a black hole's unconnected socket has). The registration is kept here, taken out
	 * whole, and the wait adds it when due; beyond the table, or one-shot, it goes to the
	 * kernel without its events. */
	e = rlt_pre_fd_slot(fd);
	if (op == EPOLL_CTL_ADD && ev && !rlt__internal && e &&
	    atomic_load_explicit(&e->kind, memory_order_acquire) == RLT_FD_SOCKET &&
	    rlt_pre_fd_due_later(e)) {
		struct reg *kept = keeps_regs() && !(ev->events & EPOLLONESHOT)
		                           ? reg_note(epfd, op, fd, ev)
		                           : NULL;
		if (kept) {
			atomic_store_explicit(&kept->held,
			                      RLT_PRE_HELD_WHOLE |
			                              (ev->events & (RLT_PRE_IN_EVENTS | RLT_PRE_OUT_EVENTS)),
			                      memory_order_relaxed);
			return 0;
		}
		quiet = *ev;
		quiet.events &= ~(uint32_t)(RLT_PRE_IN_EVENTS | RLT_PRE_OUT_EVENTS);
		kev = &quiet;
	}
	int saved = errno, rc = real_epoll_ctl(epfd, op, fd, kev);

	if (rc != 0 && errno == ENOENT && ctl_taken_out(epfd, op, fd, ev)) {
		errno = saved;
		return 0;
	}
	if (rc != 0 || !keeps_regs())
		return rc;
	int err = errno;
	struct reg *added = reg_note(epfd, op, fd, ev);
	if (added && kev != ev) {
		/* registered without its events: held whole from here (out of the kernel) until
		 * due */
		atomic_store_explicit(&added->held, ev->events & (RLT_PRE_IN_EVENTS | RLT_PRE_OUT_EVENTS),
		                      memory_order_relaxed);
		rlt_pre_fd_hold_whole(fd);
	}
	errno = err;
	return rc;
}

void rlt_pre_epoll_adopt(int epfd, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = {.events = events};
	int saved = errno;

	ev.data.u64 = data;
	/* one in the table already is known better (its epoll_ctl, or what a wait holds of it) */
	if (keeps_regs() && !reg_find(epfd, fd))
		reg_note(epfd, EPOLL_CTL_ADD, fd, &ev);
	errno = saved;
}

/*
 * How often a wait on an epoll instance with an edge-triggered registration of a throttled
 * socket looks again at its budgets when nothing is held. Another thread may spend the budget
 * while this one sleeps in the kernel, and get EAGAIN (io_pacing.c): its edge is spent, and
 * only this wait can re-arm it when the budget allows (Go's netpoller waits on one thread for
 * goroutines reading on others). Level-triggered and poll/select need none: the kernel reports
 * the data again. A wakeup of the kernel every RECHECK_NS, no more.
 */
#define RECHECK_NS (10 * 1000 * 1000ull)

/* Takes `h` out of registration g on epfd now (its `busy` taken by the caller); its slot is
 * freed when the registration is gone. A registration held whole (RLT_PRE_HELD_WHOLE: an
 * event asked or not, epoll reports errors and hang-ups) goes out of the kernel (DEL) and
 * comes back (ADD) when due; so does an EPOLLEXCLUSIVE one, which takes no MOD. */
static void reg_hold(struct reg *g, int epfd, int fd, uint32_t events, unsigned h)
{
	unsigned was = atomic_load_explicit(&g->held, memory_order_relaxed);
	struct epoll_event ev = {.events = events & ~(h & ~RLT_PRE_HELD_WHOLE)};
	int rc;

	if (h && (events & EPOLLEXCLUSIVE))
		h |= RLT_PRE_HELD_WHOLE;
	ev.data.u64 = atomic_load_explicit(&g->data, memory_order_relaxed);
	if (h & RLT_PRE_HELD_WHOLE)
		rc = (was & RLT_PRE_HELD_WHOLE) ? 0 : real_epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
	else if (was & RLT_PRE_HELD_WHOLE)
		rc = real_epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
	else
		rc = real_epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
	if (rc == 0)
		atomic_store_explicit(&g->held, h, memory_order_relaxed);
	else if (errno == ENOENT || errno == EBADF)
		atomic_store_explicit(&g->epfd, 0, memory_order_release); /* gone */
}

/* Adds `want` (events; RLT_PRE_HELD_WHOLE: the registration itself) to what every registration
 * of fd holds, now. */
static void hold_more(int fd, unsigned want)
{
	unsigned top = atomic_load_explicit(&regs_top, memory_order_acquire);
	int saved = errno;

	for (unsigned i = 0; i < top; i++) {
		struct reg *g = &regs[i];
		int epfd = atomic_load_explicit(&g->epfd, memory_order_acquire) - 1;
		if (epfd < 0 || atomic_load_explicit(&g->fd, memory_order_relaxed) != fd ||
		    atomic_load_explicit(&g->oneshot, memory_order_relaxed))
			continue;
		uint32_t events = atomic_load_explicit(&g->events, memory_order_relaxed);
		unsigned held = atomic_load_explicit(&g->held, memory_order_relaxed);
		unsigned h = held | (events & want) | (want & RLT_PRE_HELD_WHOLE);
		if (h == held || atomic_exchange_explicit(&g->busy, 1, memory_order_acquire))
			continue;
		reg_hold(g, epfd, fd, events, h);
		atomic_store_explicit(&g->busy, 0, memory_order_release);
	}
	errno = saved;
}

void rlt_pre_fd_hold_whole(int fd)
{
	hold_more(fd, RLT_PRE_IN_EVENTS | RLT_PRE_OUT_EVENTS | RLT_PRE_HELD_WHOLE);
}

void rlt_pre_fd_regs_closed(int fd)
{
	unsigned top = atomic_load_explicit(&regs_top, memory_order_acquire);

	/* one taken out whole has nothing in the kernel to go with the fd: it must not come back
	 * on the next file of that number */
	for (unsigned i = 0; i < top; i++)
		if (atomic_load_explicit(&regs[i].fd, memory_order_relaxed) == fd &&
		    atomic_load_explicit(&regs[i].epfd, memory_order_acquire))
			atomic_store_explicit(&regs[i].epfd, 0, memory_order_release);
}

/*
 * An edge-triggered registration told EAGAIN has no edge to come: the kernel's buffer did not
 * change. It may be long past due when a wait next looks (Go's netpoller polls when its
 * threads are free), and would then be found not held and never re-armed. So it is held at
 * once, here: the wait that finds it due puts the event back (epoll_hold), and re-arms it.
 * A system call per registration, on the EAGAIN path only.
 */
void rlt_pre_fd_refused(int fd, enum rlt_var var)
{
	hold_more(fd, var == RLT_VAR_SEND ? RLT_PRE_OUT_EVENTS : RLT_PRE_IN_EVENTS);
}

/* The events a wait reports of its own (rlt_pre_fd_ready_own), kept for one round. */
#define OWN_MAX 16
struct own {
	struct epoll_event ev[OWN_MAX];
	int n;
};

/* Brings epfd's registrations in line with their budgets; the earliest time one held is due,
 * no later than now + RECHECK_NS if one is edge-triggered. The events to report of our own
 * go to *own; the registrations a delay line answers for, to *lines (net_delay.h; NULL:
 * only held). */
static rlt_ns_t epoll_hold(int epfd, rlt_ns_t now, struct own *own,
                           struct rlt_pre_delay_round *lines)
{
	unsigned top = atomic_load_explicit(&regs_top, memory_order_acquire);
	rlt_ns_t due = RLT_NS_NEVER;
	int edge = 0;

	for (unsigned i = 0; i < top; i++) {
		struct reg *g = &regs[i];
		if (atomic_load_explicit(&g->epfd, memory_order_acquire) != epfd + 1)
			continue;
		int fd = atomic_load_explicit(&g->fd, memory_order_relaxed);
		uint32_t events = atomic_load_explicit(&g->events, memory_order_relaxed);
		int once = atomic_load_explicit(&g->oneshot, memory_order_relaxed);
		if (once) { /* never held: only reported of our own, while armed */
			unsigned o = once == 1 && own->n < OWN_MAX
			                     ? rlt_pre_fd_ready_own(fd, events, now, &due)
			                     : 0;
			if (o) {
				own->ev[own->n].events = o;
				own->ev[own->n++].data.u64 =
					atomic_load_explicit(&g->data, memory_order_relaxed);
				atomic_store_explicit(&g->oneshot, 2, memory_order_relaxed);
			}
			continue;
		}
		unsigned h = rlt_pre_fd_held(fd, events, now, &due);
		if (h & RLT_PRE_NET_OWN)
			h = rlt_pre_delay_round_add(lines, fd, events,
			                            atomic_load_explicit(&g->data, memory_order_relaxed), h);
		edge |= (events & EPOLLET) && rlt_pre_wait_may_hold_fd(fd, events);
		unsigned o = own->n < OWN_MAX ? rlt_pre_fd_ready_own(fd, events, now, &due) : 0;
		if (o) {
			own->ev[own->n].events = o;
			own->ev[own->n++].data.u64 = atomic_load_explicit(&g->data, memory_order_relaxed);
		}
		if (h == atomic_load_explicit(&g->held, memory_order_relaxed) ||
		    atomic_exchange_explicit(&g->busy, 1, memory_order_acquire))
			continue;
		reg_hold(g, epfd, fd, events, h);
		atomic_store_explicit(&g->busy, 0, memory_order_release);
	}
	/* A hold that begins inside a call (a connect held, a listener's queue, RLT_NET) may come
	 * on a registration another thread adds while this one sleeps: that thread could not cut
	 * this wait short, so the wait looks again every RECHECK_NS (Go's netpoller sleeps until
	 * its next timer, seconds away, while a dial registers its socket held). */
	if ((edge || rlt_pre_holds_in_calls()) && due - now > RECHECK_NS)
		due = now + RECHECK_NS;
	return due;
}

void rlt_pre_epoll_hold_now(int epfd)
{
	int saved = errno;
	struct own own = {.n = 0}; /* reported by the wait itself, not here */

	if (rlt_pre_wait_may_hold())
		epoll_hold(epfd, rlt__now(), &own, NULL);
	errno = saved;
}

/* One round of an epoll wait that holds something back: epoll_pwait in whole ms, rounded up
 * (epoll_pwait2 is Linux 5.11's and not in every C library). */
static int epoll_round(int epfd, struct epoll_event *evs, int max, rlt_ns_t deadline,
                       rlt_ns_t due, rlt_ns_t now, const sigset_t *sig)
{
	rlt_ns_t until = due < deadline ? due : deadline;
	int ms = -1;

	if (until != RLT_NS_NEVER) {
		rlt_ns_t left = until > now ? until - now : 0;
		uint64_t m = (left + 999999) / 1000000;
		ms = m > INT_MAX ? INT_MAX : (int)m;
	}
	return real_epoll_pwait(epfd, evs, max, ms, sig);
}

/* The one-shot registrations of epfd the kernel reported in evs: disarmed, as the kernel's. */
static void oneshots_fired(int epfd, const struct epoll_event *evs, int rc)
{
	unsigned top = atomic_load_explicit(&regs_top, memory_order_acquire);

	if (!atomic_load_explicit(&oneshots, memory_order_relaxed))
		return;
	for (unsigned i = 0; i < top; i++) {
		struct reg *g = &regs[i];
		if (atomic_load_explicit(&g->epfd, memory_order_acquire) != epfd + 1 ||
		    atomic_load_explicit(&g->oneshot, memory_order_relaxed) != 1)
			continue;
		uint64_t data = atomic_load_explicit(&g->data, memory_order_relaxed);
		for (int j = 0; j < rc; j++)
			if (evs[j].data.u64 == data)
				atomic_store_explicit(&g->oneshot, 2, memory_order_relaxed);
	}
}

/* The events of *own merged into the rc the kernel reported: the new count. */
static int epoll_own(struct epoll_event *evs, int rc, int max, const struct own *own)
{
	for (int j = 0; j < own->n; j++) {
		int i = 0;
		while (i < rc && evs[i].data.u64 != own->ev[j].data.u64)
			i++;
		if (i < rc)
			evs[i].events |= own->ev[j].events;
		else if (rc < max)
			evs[rc++] = own->ev[j];
	}
	return rc;
}

/* The wait of epoll_wait, epoll_pwait (tmo from ms) and epoll_pwait2. */
static int epoll_held_wait(int epfd, struct epoll_event *evs, int max,
                           const struct timespec *tmo, const sigset_t *sig)
{
	rlt_ns_t now = rlt__now(), deadline = rlt_pre_wait_deadline(tmo, now);
	int saved = errno;

	/* bounded for a finite timeout; each round sleeps in the kernel (1 ms at the least) */
	for (int round = 0; round < RLT_PRE_WAIT_ROUNDS || deadline == RLT_NS_NEVER; round++) {
		struct own own = {.n = 0};
		struct rlt_pre_delay_round lines;
		lines.n = 0;
		rlt_ns_t due = epoll_hold(epfd, now, &own, &lines);
		errno = saved;
		rlt_ns_t until = own.n ? now : due < deadline ? due : deadline;
		int rc = lines.n ? rlt_pre_delay_epoll(epfd, evs, max, until, sig, &lines)
		                 : epoll_round(epfd, evs, max, deadline, own.n ? now : due, now, sig);
		if (rc > 0)
			oneshots_fired(epfd, evs, rc);
		if (rc >= 0 && own.n)
			rc = epoll_own(evs, rc, max, &own);
		if (rc != 0 || (due == RLT_NS_NEVER && !lines.n))
			return rc;
		now = rlt__now();
		if (now >= deadline)
			return 0;
	}
	return 0;
}

/* Whether an epoll wait has registrations to look at, or may have some before it ends. */
static int epoll_tracked(void)
{
	return rlt_pre_wait_may_hold() &&
	       (atomic_load_explicit(&regs_top, memory_order_acquire) != 0 || rlt_pre_holds_in_calls());
}

int rlt_pre_epoll_pwait2(int epfd, struct epoll_event *evs, int max, const struct timespec *tmo,
                         const sigset_t *sig)
{
	if (!epoll_tracked())
		return real_epoll_pwait2 ? real_epoll_pwait2(epfd, evs, max, tmo, sig)
		                         : rlt_pre_fail(ENOSYS);
	return epoll_held_wait(epfd, evs, max, tmo, sig);
}

int rlt_pre_epoll_pwait(int epfd, struct epoll_event *evs, int max, int ms, const sigset_t *sig)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	if (!epoll_tracked())
		return real_epoll_pwait(epfd, evs, max, ms, sig);
	return epoll_held_wait(epfd, evs, max, ms < 0 ? NULL : &ts, sig);
}

/* ----- the hooks (the freestanding build has its own way in: trap_dispatch.c) ----- */

#ifndef RLT_NOLIBC
RLT_EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	rlt_pre_ensure_real();
	return rlt_pre_epoll_ctl(epfd, op, fd, ev);
}

RLT_EXPORT int epoll_wait(int epfd, struct epoll_event *evs, int max, int ms)
{
	rlt_pre_ensure_real();
	return rlt_pre_epoll_pwait(epfd, evs, max, ms, NULL);
}

RLT_EXPORT int epoll_pwait(int epfd, struct epoll_event *evs, int max, int ms,
                           const sigset_t *s)
{
	rlt_pre_ensure_real();
	return rlt_pre_epoll_pwait(epfd, evs, max, ms, s);
}

RLT_EXPORT int epoll_pwait2(int epfd, struct epoll_event *evs, int max,
                            const struct timespec *t, const sigset_t *s)
{
	rlt_pre_ensure_real();
	return rlt_pre_epoll_pwait2(epfd, evs, max, t, s);
}
#endif
