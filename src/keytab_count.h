/*
 * keytab_count.h: RLT_CONNS with key=, an open count per key value in a keytab.h table (a
 * table without params). A slot's word is the count in its low 32 bits and the threads waiting
 * for it to drop in its high 32.
 */
#ifndef RLT_KEYTAB_COUNT_H
#define RLT_KEYTAB_COUNT_H

#include <stdatomic.h>
#include <stdint.h>

#include "keytab.h"

/* RLT_CONNS per key (a table without params): take one of `limit` connections of key k (1),
 * or not (0: the key is at its limit, or no slot: every key of its set holds connections).
 * Release gives one back, and returns the word to wake (rlt__wake_all) when threads wait on
 * the key (NULL: none). A key holding connections or waiters is never replaced, so it is
 * found again. A slot's word is the count in its low 32 bits and the waiters in its high 32. */
int rlt__keytab_count_take(struct rlt__keytab *t, const struct rlt__key *k, uint64_t limit,
                           rlt_ns_t now);
_Atomic uint32_t *rlt__keytab_count_release(struct rlt__keytab *t, const struct rlt__key *k);
/* A thread that will wait for key k's count to drop (action=delay): registers as a waiter of
 * the key's slot (inserted if need be) and returns the 32-bit futex word to wait on (the
 * count's low half: the first 4 bytes of the slot's word on a little-endian machine), *val
 * the count read after registering (wait only while the word still holds it); *slot for
 * rlt__keytab_count_unwatch, which must follow. NULL: no slot (every key of the set holds
 * connections or waiters): poll. Bound: a fork's child inherits the parent's other threads'
 * registrations, so such a key stays in its table (as one holding connections would). */
_Atomic uint32_t *rlt__keytab_count_watch(struct rlt__keytab *t, const struct rlt__key *k,
                                          rlt_ns_t now, struct rlt__keyslot **slot,
                                          uint32_t *val);
void rlt__keytab_count_unwatch(struct rlt__keyslot *s);
/* Key k's open count now (0 when it is not in the table). */
uint32_t rlt__keytab_count(struct rlt__keytab *t, const struct rlt__key *k);

#endif
