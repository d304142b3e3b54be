/*
 * redis_client.h: a bounded Redis client, just what a redis:// scope needs: a connection,
 * AUTH, a request written and its reply read and parsed before a deadline, into a fixed buffer.
 *
 * hiredis only makes the connection. Requests are written and replies read and parsed here
 * because whatever sits at the other end decides what hiredis' reader allocates and how long it
 * waits: a header of *2147483647 or $2147483647, a deep nesting or an endless stream made 0.14
 * allocate gigabytes and spin on the program's thread. The scripts' answers are tiny and flat,
 * so anything else (longer than RLT__RESP_REPLY_MAX, an array longer than RLT__RESP_ELEMS_MAX,
 * an array inside one, bytes after the reply) is refused at once: no reply costs more than
 * RLT__RESP_REPLY_MAX bytes of stack, nor a round trip more than its deadline.
 *
 * Functions that fail say why in why[wl] (never a password) and return -1; the caller drops
 * the connection then (what is left on it cannot be trusted).
 */
#ifndef RLT_REDIS_CLIENT_H
#define RLT_REDIS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "rlthrottle.h"

/* Set (per thread) while the library itself makes network calls (the Redis client): the hooks
 * then pass every call straight through, so that the throttle never charges or re-enters
 * itself. Counted up and down around each of the
 * client's calls (redis_client.c, scope_redis.c); in the freestanding build (RLT_NOLIBC, which has no TLS
 * and no Redis scope) a field of the thread block (preload/nolibc/nolibc.h, pre-included). */
#ifdef RLT_NOLIBC
#define rlt__internal (rlt_trap_self()->internal)
#else
extern _Thread_local int rlt__internal __attribute__((tls_model("initial-exec")));
#endif


#define RLT__RESP_REPLY_MAX 4096 /* bytes of one reply: the scripts' are under 200 */
#define RLT__RESP_ELEMS_MAX 8    /* elements of an array reply: the scripts' have 4 */
#define RLT__RESP_STR_MAX 127    /* bytes kept of a string or error (longer is cut, not refused) */

struct rlt__resp_item {
	char type;                       /* '+' status, '-' error, ':' integer, '$' bulk, '*' array */
	int nil;                         /* $-1 or *-1 */
	long long integer;               /* ':' */
	char str[RLT__RESP_STR_MAX + 1]; /* '+', '-', '$': NUL-terminated, cut, printable ASCII */
	size_t len;                      /* the string's whole length */
};

struct rlt__resp_reply {
	struct rlt__resp_item top;
	int elements;                                /* '*': how many are in el */
	struct rlt__resp_item el[RLT__RESP_ELEMS_MAX];
};

/* A whole reply in b[0..n). 1: parsed (*used: its bytes), 0: more bytes needed, -1: refused. */
int rlt__resp_parse(const char *b, size_t n, struct rlt__resp_reply *r, size_t *used, char *why,
                    size_t wl);

/* A connection hiredis made, non-blocking and close-on-exec from then on. ctx NULL: none. */
struct redisContext;
struct rlt__redis_conn {
	struct redisContext *ctx; /* freed by hiredis (rlt__redis_close) */
	int fd;                   /* its socket */
};

/* Connects within timeout_us (name resolution too). 0, or -1 with why. */
int rlt__redis_open(struct rlt__redis_conn *c, const char *host, uint16_t port,
                    unsigned long timeout_us, char *why, size_t wl);
void rlt__redis_close(struct rlt__redis_conn *c);

/* Writes a command (an array of at most 12 bulk strings) within the deadline. 0 or -1. */
int rlt__redis_send(int fd, int argc, const char *const *argv, rlt_ns_t deadline, char *why,
                    size_t wl);

/* One request and its whole reply, before the deadline. 0 or -1. A reply is the last thing a
 * server sends before the next request: bytes after it are refused too. */
int rlt__redis_roundtrip(int fd, int argc, const char *const *argv, rlt_ns_t deadline,
                         struct rlt__resp_reply *rep, char *why, size_t wl);

/* AUTH when pass is neither NULL nor empty (user NULL or empty: the default user), else
 * nothing. 0 or -1. */
int rlt__redis_auth(int fd, const char *user, const char *pass, rlt_ns_t deadline, char *why,
                    size_t wl);

/* --check: does the server answer PING within timeout_ms (after AUTH when pass is neither NULL
 * nor empty; user NULL or empty: the default user)? 0, or a negative errno with err (which
 * never holds the password). */
int rlt__redis_ping(const char *host, uint16_t port, const char *user, const char *pass,
                    unsigned timeout_ms, struct rlt_error *err);

#endif
