/*
 * net_cond.c: what the network conditions decide, pure: no clock (now comes in), no system
 * call, no allocation. The hooks (preload/net_hook.c) ask, then act.
 *
 * Random choices come from a counter-based sequence per socket: the n-th draw is a hash of
 * (seed, socket key, n), with n taken by an atomic increment, so the n-th choice on a socket is
 * the same on every run whichever thread makes it, and a forked child's copy goes on from
 * where its parent's stood.
 */
#include <string.h>
#include <sys/socket.h>

#include "net.h"

/* splitmix64's finaliser: a bijection that spreads every input bit over the output. */
static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

void rlt__net_rng_init(struct rlt__net_rng *r, uint64_t seed, uint64_t key)
{
	r->seed = mix(seed ^ mix(key + 0x9e3779b97f4a7c15ull));
	atomic_store_explicit(&r->n, 0, memory_order_relaxed);
}

uint64_t rlt__net_draw(struct rlt__net_rng *r)
{
	uint64_t n = atomic_fetch_add_explicit(&r->n, 1, memory_order_relaxed);
	return mix(r->seed + (n + 1) * 0x9e3779b97f4a7c15ull);
}

int rlt__net_chance(struct rlt__net_rng *r, uint32_t ppm)
{
	/* the draw scaled to [0, 1e6) without a modulo's bias */
	uint64_t x = (uint64_t)(((unsigned __int128)rlt__net_draw(r) * RLT_NET_PPM) >> 64);
	return x < ppm;
}

/* The rules' matching (policy.c rule_matches), each part negated on demand. A part that cannot
 * be told (no peer known yet) matches neither way. */
static int family_matches(const struct rlt__net_match *m, int af)
{
	int inet = af == AF_INET || af == AF_INET6;
	int fam = m->family == RLT_FAMILY_ALL ? 1 : m->family == RLT_FAMILY_INET ? inet : af == AF_UNIX;

	return fam != m->family_not;
}

int rlt__net_matches(const struct rlt__net_cond *c, int af, const struct rlt__peer *peer)
{
	const struct rlt__net_match *m = &c->m;
	int inet = af == AF_INET || af == AF_INET6;

	if (!family_matches(m, af))
		return 0;
	if (m->peer_af) {
		if (!peer || !(peer->af == AF_INET || peer->af == AF_INET6))
			return 0;
		int in = peer->af == m->peer_af && rlt__prefix_match(peer->addr, m->peer_addr, m->peer_prefix);
		if (in == m->peer_not)
			return 0;
	}
	if (m->port_lo != 0 || m->port_hi != 65535) {
		if (!inet || !peer || peer->port == 0)
			return 0;
		int in = peer->port >= m->port_lo && peer->port <= m->port_hi;
		if (in == m->port_not)
			return 0;
	}
	return 1;
}

void rlt__net_sock_open(struct rlt__net_sock *s, int af, int stream, const struct rlt__peer *peer,
                        uint64_t seed, uint64_t key, rlt_ns_t now)
{
	s->gen = 0;
	s->applies = 0;
	s->af = af;
	s->stream = stream;
	if (peer)
		s->peer = *peer;
	else
		memset(&s->peer, 0, sizeof s->peer);
	s->opened = now;
	atomic_store_explicit(&s->moved, 0, memory_order_relaxed);
	atomic_store_explicit(&s->hung_at, 0, memory_order_relaxed);
	atomic_store_explicit(&s->ended, 0, memory_order_relaxed);
	/* nothing of an earlier socket of the fd number: its timestamps asked, its arrivals */
	atomic_store_explicit(&s->lat_arrived, 0, memory_order_relaxed);
	atomic_store_explicit(&s->lat_due, 0, memory_order_relaxed);
	atomic_store_explicit(&s->lat_unstamped, 0, memory_order_relaxed);
	atomic_store_explicit(&s->lat_stamps, 0, memory_order_relaxed);
	rlt__net_rng_init(&s->rng, seed, key);
}

void rlt__net_sock_choose(struct rlt__net_sock *s, const struct rlt__net_set *set, uint32_t gen)
{
	uint32_t bits = 0;

	for (unsigned i = 0; i < set->n; i++) {
		const struct rlt__net_cond *c = &set->c[i];
		/* a datagram socket without a peer: its latency is matched per datagram, by the
		 * source (rlt__net_find_from), as its loss is (rlt__net_drop) */
		int per_datagram = c->kind == RLT_NET_LATENCY && !s->stream && !s->peer.af &&
		                   family_matches(&c->m, s->af);
		if (!per_datagram && !rlt__net_matches(c, s->af, &s->peer))
			continue;
		/* connect and loss choose per attempt and per datagram, latency per datagram on a
		 * datagram socket (rlt__net_datagram_due); the others per connection */
		int each = c->kind == RLT_NET_CONNECT || c->kind == RLT_NET_LOSS ||
		           (c->kind == RLT_NET_LATENCY && !s->stream);
		if (!each && c->p_ppm < RLT_NET_PPM && !rlt__net_chance(&s->rng, c->p_ppm))
			continue;
		bits |= 1u << i;
	}
	s->applies = bits;
	s->gen = gen;
}

/* rlt__net_find, and with `from` (not NULL) rlt__net_find_from. */
static const struct rlt__net_cond *find(const struct rlt__net_set *set,
                                        const struct rlt__net_sock *s, enum rlt__net_kind k,
                                        unsigned dir, const struct rlt__peer *from)
{
	for (unsigned i = 0; i < set->n; i++)
		if ((s->applies & (1u << i)) && set->c[i].kind == k && (!dir || (set->c[i].dir & dir)) &&
		    (!from || rlt__net_matches(&set->c[i], s->af, from)))
			return &set->c[i];
	return NULL;
}

const struct rlt__net_cond *rlt__net_find(const struct rlt__net_set *set,
                                          const struct rlt__net_sock *s, enum rlt__net_kind k,
                                          unsigned dir)
{
	return find(set, s, k, dir, NULL);
}

const struct rlt__net_cond *rlt__net_find_from(const struct rlt__net_set *set,
                                               const struct rlt__net_sock *s,
                                               enum rlt__net_kind k, unsigned dir,
                                               const struct rlt__peer *from)
{
	return find(set, s, k, dir, from);
}

int rlt__net_drop(const struct rlt__net_set *set, struct rlt__net_sock *s, unsigned dir,
                  const struct rlt__peer *to)
{
	const struct rlt__peer *peer = s->peer.af ? &s->peer : to;
	int drop = 0;

	for (unsigned i = 0; i < set->n; i++) {
		const struct rlt__net_cond *c = &set->c[i];
		if (c->kind != RLT_NET_LOSS || !(c->dir & dir) || !rlt__net_matches(c, s->af, peer))
			continue;
		if (c->p_ppm < RLT_NET_PPM && !rlt__net_chance(&s->rng, c->p_ppm))
			continue;
		/* every condition draws, so that one's drop never shifts another's sequence */
		if (rlt__net_chance(&s->rng, c->loss_ppm))
			drop = 1;
	}
	return drop;
}

uint64_t rlt__net_slice(const struct rlt__net_set *set, struct rlt__net_sock *s, unsigned dir,
                        uint64_t want)
{
	const struct rlt__net_cond *c = rlt__net_find(set, s, RLT_NET_SLICE, dir);
	uint64_t size;

	if (!c || want == 0)
		return want;
	size = c->slice_lo;
	if (c->slice_hi > c->slice_lo)
		size += rlt__net_draw(&s->rng) % (c->slice_hi - c->slice_lo + 1);
	return size < want ? size : want;
}

rlt_ns_t rlt__net_latency_due(const struct rlt__net_cond *c, struct rlt__net_rng *rng,
                              rlt_ns_t arrived, rlt_ns_t floor)
{
	int64_t delay = (int64_t)c->dur_ns, j = (int64_t)c->jitter_ns;

	if (j > 0 && c->dist == RLT_NET_UNIFORM) {
		delay += (int64_t)(rlt__net_draw(rng) % (uint64_t)(2 * j + 1)) - j;
	} else if (j > 0) {
		/* twelve uniforms less six: a normal deviate (Irwin-Hall), no libm in the
		 * system-call front's build; within six deviations */
		int64_t sum = 0;
		for (int k = 0; k < 12; k++)
			sum += (int64_t)(rlt__net_draw(rng) >> 44); /* 20 bits: 0..1048575 */
		delay += (int64_t)(((__int128)(sum - 6 * 1048576) * j) / 1048576);
	}
	rlt_ns_t due = arrived + (delay > 0 ? (rlt_ns_t)delay : 0);
	return due > floor ? due : floor;
}

rlt_ns_t rlt__net_datagram_due(const struct rlt__net_cond *c, struct rlt__net_rng *rng,
                               rlt_ns_t arrived)
{
	if (c->p_ppm < RLT_NET_PPM && !rlt__net_chance(rng, c->p_ppm))
		return arrived;
	return rlt__net_latency_due(c, rng, arrived, 0);
}

/* Whether condition c's point (after=) is reached; *room narrowed to the bytes left before it. */
static int point_reached(const struct rlt__net_cond *c, const struct rlt__net_sock *s,
                         rlt_ns_t now, uint64_t *room)
{
	uint64_t moved = atomic_load_explicit(&s->moved, memory_order_relaxed);

	switch (c->after) {
	case RLT_NET_AFTER_TIME: return now >= s->opened && now - s->opened >= c->after_ns;
	case RLT_NET_AFTER_BYTES:
		if (moved >= c->after_bytes)
			return 1;
		if (c->after_bytes - moved < *room)
			*room = c->after_bytes - moved;
		return 0;
	default: return 1;
	}
}

int rlt__net_reset_due(const struct rlt__net_set *set, const struct rlt__net_sock *s,
                       rlt_ns_t now, uint64_t *room)
{
	int due = 0;

	*room = UINT64_MAX;
	if (!s->stream || atomic_load_explicit(&s->ended, memory_order_relaxed))
		return 0;
	for (unsigned i = 0; i < set->n; i++)
		if ((s->applies & (1u << i)) && set->c[i].kind == RLT_NET_RESET &&
		    point_reached(&set->c[i], s, now, room))
			due = 1;
	return due;
}

int rlt__net_hang_state(const struct rlt__net_set *set, struct rlt__net_sock *s, rlt_ns_t now,
                        uint64_t *room, rlt_ns_t *until)
{
	*room = UINT64_MAX;
	*until = RLT_NS_NEVER;
	for (unsigned i = 0; i < set->n; i++) {
		const struct rlt__net_cond *c = &set->c[i];
		if (!(s->applies & (1u << i)) || c->kind != RLT_NET_HANG ||
		    !point_reached(c, s, now, room))
			continue;
		rlt_ns_t zero = 0, at;
		atomic_compare_exchange_strong_explicit(&s->hung_at, &zero, now ? now : 1,
		                                        memory_order_relaxed, memory_order_relaxed);
		at = atomic_load_explicit(&s->hung_at, memory_order_relaxed);
		if (c->close_ns) {
			*until = at + c->close_ns;
			if (now >= *until)
				return 2;
		}
		return 1;
	}
	return 0;
}

int rlt__net_connect_fault(const struct rlt__net_set *set, int af, const struct rlt__peer *peer,
                           struct rlt__net_rng *rng, uint64_t *after_ns)
{
	for (unsigned i = 0; i < set->n; i++) {
		const struct rlt__net_cond *c = &set->c[i];
		if (c->kind != RLT_NET_CONNECT || !rlt__net_matches(c, af, peer))
			continue;
		if (c->p_ppm < RLT_NET_PPM && !rlt__net_chance(rng, c->p_ppm))
			continue;
		*after_ns = c->connect_ns;
		return (int)c->connect;
	}
	return -1;
}
