/*
 * keytab_key.h: the key value of a call under a rule's key= (struct rlt__key, keytab.h), and
 * how people read it.
 */
#ifndef RLT_KEYTAB_KEY_H
#define RLT_KEYTAB_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "keytab.h"
#include "policy.h"

/* The key of a peer under a rule's key= (RLT_KEY_PEER cut to prefix4 / prefix6, or
 * RLT_KEY_PORT: `port`, which the caller chose: the remote port, or for accept the local). */
void rlt__key_of(enum rlt_key kind, unsigned prefix4, unsigned prefix6,
                 const struct rlt__peer *peer, uint16_t port, struct rlt__key *k);

/* A key as people read it: "10.1.2.0/24", "2001:db8::/64", "port 8080", "(no address)". */
int rlt__key_format(const struct rlt__key *k, unsigned prefix4, unsigned prefix6, char *buf,
                    size_t len);

#endif
