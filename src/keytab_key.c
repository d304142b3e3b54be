/*
 * keytab_key.c: the key value of a call under a rule's key= and how people read it. See
 * keytab_key.h.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "keytab.h"
#include "keytab_key.h"

/* The first `bits` (0..64) bits of an 8-byte word read from network-order bytes, as a mask of
 * that word in memory order. */
static inline uint64_t prefix_mask(unsigned bits)
{
	uint64_t m = bits >= 64 ? ~0ull : bits == 0 ? 0 : ~0ull << (64 - bits);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return m;
#else
	return __builtin_bswap64(m);
#endif
}

void rlt__key_of(enum rlt_key kind, unsigned prefix4, unsigned prefix6,
                 const struct rlt__peer *peer, uint16_t port, struct rlt__key *k)
{
	uint64_t w1 = 0, w2 = 0;
	unsigned bits = 0, kk = RLT_KEYKIND_NONE;

	if (kind == RLT_KEY_PORT) {
		k->w[0] = RLT_KEYKIND_PORT | (uint64_t)port << 8;
		k->w[1] = k->w[2] = 0;
		return;
	}
	/* The address's bytes as they lie in memory, the bits past the prefix cleared: two
	 * fixed-size copies and a mask of each word (a call's hot path: no loop, no call). */
	if (peer && peer->af == AF_INET) {
		uint32_t v4;
		kk = RLT_KEYKIND_V4;
		bits = prefix4 > 32 ? 32 : prefix4;
		memcpy(&v4, peer->addr, 4);
		w1 = v4;
	} else if (peer && peer->af == AF_INET6) {
		kk = RLT_KEYKIND_V6;
		bits = prefix6 > 128 ? 128 : prefix6;
		memcpy(&w1, peer->addr, 8);
		memcpy(&w2, peer->addr + 8, 8);
	}
	k->w[0] = kk;
	k->w[1] = w1 & prefix_mask(bits);
	k->w[2] = w2 & prefix_mask(bits > 64 ? bits - 64 : 0);
}

int rlt__key_format(const struct rlt__key *k, unsigned prefix4, unsigned prefix6, char *buf,
                    size_t len)
{
	char addr[INET6_ADDRSTRLEN];
	uint8_t a[16];
	unsigned kind = (unsigned)(k->w[0] & 0xff);

	memcpy(a, &k->w[1], 8);
	memcpy(a + 8, &k->w[2], 8);
	if (kind == RLT_KEYKIND_PORT)
		return snprintf(buf, len, "port %u", (unsigned)(k->w[0] >> 8 & 0xffff));
	if (kind == RLT_KEYKIND_V4 && inet_ntop(AF_INET, a, addr, sizeof addr))
		return prefix4 >= 32 ? snprintf(buf, len, "%s", addr)
		                     : snprintf(buf, len, "%s/%u", addr, prefix4);
	if (kind == RLT_KEYKIND_V6 && inet_ntop(AF_INET6, a, addr, sizeof addr))
		return prefix6 >= 128 ? snprintf(buf, len, "%s", addr)
		                      : snprintf(buf, len, "%s/%u", addr, prefix6);
	return snprintf(buf, len, "(no address)");
}
