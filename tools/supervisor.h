/*
 * supervisor.h: what the files of the seccomp supervisor (--seccomp) share. The design note is
 * at the top of supervisor.c.
 */
#ifndef RLT_SUPERVISOR_H
#define RLT_SUPERVISOR_H

#include <linux/seccomp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "launcher.h"
#include "policy.h"
#include "settings.h"

/* ----- what we know of one fd of one process (fdcache.c) ----- */

struct rlt__sock {
	unsigned refs;                  /* the cache's reference and each job's */
	int dup;                        /* our duplicate of the program's socket (CLOEXEC) */
	int type;                       /* SOCK_STREAM, SOCK_DGRAM, ... */
	int af;                         /* the socket's family */
	struct rlt__peer peer;          /* the remote end (af 0: not connected) */
	uint16_t local_port;            /* host order: for accept rules (the listening port) */
	uint32_t mask[RLT_VAR_COUNT];   /* rules that apply to calls on it, by variable */
	uint32_t conns_mask;            /* RLT_CONNS rules in which it holds an open slot */
	void *conn_block;               /* connection-scope engine states (NULL: none) */
};

/* The cache's answer for an fd that is not a socket (file, pipe, terminal, ...). */
extern struct rlt__sock rlt__not_a_socket;
#define RLT_NOT_SOCKET (&rlt__not_a_socket)

/* A connection accepted for a call that was then given up for a signal handler (before its
 * slot): handed to the next accept on the same listening fd, its restart, rather than dropped. */
struct rlt__accepted {
	struct rlt__accepted *next;
	int lfd;                 /* the program's listening fd */
	int sock;                /* our fd of the connection */
	struct rlt__peer peer;
	uint32_t conns_mask;
};

struct rlt__proc {
	pid_t tgid;
	int pidfd;                   /* pidfd_open(tgid): for pidfd_getfd, and polled for its exit */
	struct rlt__sock **fds;      /* indexed by fd: NULL unknown, RLT_NOT_SOCKET, or facts */
	unsigned nfds;               /* length of fds[] */
	unsigned jobs;               /* jobs that still refer to it (freed at 0 once gone) */
	int gone;                    /* its pidfd reported the exit of the whole thread group */
	struct rlt__accepted *stash; /* connections accepted for it that no call took yet */
	struct rlt__ruleset *rs;     /* its budgets: the command's own, or a fork's (owns_rs) */
	int owns_rs;
	struct rlt__proc *next;      /* hash chain */
};

/* ----- a call that is not answered at once (jobs.c) ----- */

enum rlt__op {
	OP_CONTINUE,   /* charge, wait for the slot, then let the kernel make the call */
	OP_RECV,       /* a stream receive made on the program's behalf */
	OP_SEND,       /* a stream send made on the program's behalf */
	OP_SENDFILE,   /* sendfile to a stream, made on its behalf from our duplicate of the file */
	OP_SPLICE_SEND, /* splice from a pipe to a stream, made on its behalf (tee, send, consume) */
	OP_SPLICE_RECV, /* splice from a stream to a pipe, made on its behalf (recv, write) */
	OP_DGRAM_RECV, /* a datagram receive: learn its size, charge it whole, then CONTINUE */
	OP_ACCEPT,     /* accept made on the program's behalf, then the fd installed in it */
};

enum rlt__phase {
	PH_NEW,    /* not charged yet */
	PH_SLOT,   /* charged: waiting on the timer heap for the slot (t.go) */
	PH_READY,  /* parked: waiting for the socket to become readable/writable */
	PH_GONE,   /* ended: in the graveyard until no epoll batch can still name it */
};

struct rlt__job {
	/* the notification */
	uint64_t id;
	pid_t tid;
	int nr;
	uint64_t args[6];

	struct rlt__proc *proc;
	int fd;                 /* the program's fd of the call */
	struct rlt__sock *sock; /* its facts (owned by the cache; re-looked-up if dropped) */
	enum rlt__op op;
	enum rlt__phase phase;
	enum rlt_var var;
	uint32_t mask;

	/* the charge */
	struct rlt__ticket t;
	int charged;            /* t holds a charge not settled yet */
	uint64_t charge_bytes;  /* what the current piece (or the whole call) is charged */
	uint32_t nmask;         /* RLT_CONNS rules a connect or accept takes a slot in */
	int conns_held;         /* the slots of nmask are taken (given back unless handed on) */
	int waited;             /* it waited for its slot or an RLT_CONNS place */
	int paid;               /* restarted after a signal, its charge taken before (prepaid) */

	/* a call made on the program's behalf */
	uint64_t total;         /* bytes the program asked for */
	uint64_t done;          /* bytes moved so far */
	uint64_t piece;         /* bytes of the current piece */
	int nonblock;           /* O_NONBLOCK or MSG_DONTWAIT: answer EAGAIN rather than park */
	int waitall;            /* MSG_WAITALL */
	int flags;              /* the call's MSG_* flags */
	int park_fd;            /* our own duplicate registered with epoll while PH_READY ... */
	int park_src;           /* ... of this fd (the socket's duplicate, or src_fd) */
	uint32_t park_events;
	int accepted;           /* OP_ACCEPT: the connection we accepted (-1: none) */
	int cloexec;            /* OP_ACCEPT: SOCK_CLOEXEC asked for */
	int conns_waiting;      /* on the RLT_CONNS waiting list */
	rlt_ns_t conns_since;   /* when it started waiting for a slot */
	void *buf;              /* OP_RECV/OP_SEND: our buffer of one piece */
	size_t buf_len;
	struct iovec *iov;      /* the program's iovec (readv/writev/recvmsg/sendmsg) or NULL */
	unsigned iovcnt;
	uint64_t msg_addr;      /* recvmsg: the program's struct msghdr, to write back */
	uint64_t from_addr, fromlen_addr; /* recvfrom: the address out-parameters */
	int src_fd;             /* OP_SENDFILE: our duplicate of the file; OP_SPLICE_*: of the pipe */
	int64_t src_off;        /* OP_SENDFILE: where the next piece is read from */
	uint64_t off_addr;      /* OP_SENDFILE: the program's offset argument (0: the file's own) */
	struct rlt__peer apeer; /* OP_ACCEPT: its remote end */

	/* scheduling */
	rlt_ns_t deadline;      /* timer heap key */
	size_t heap_i;          /* index in the heap (SIZE_MAX: not in it) */
	int status_fd;          /* /proc/TGID/task/TID/status, read for signals (-1: not open) */
	rlt_ns_t next_look;     /* the tick reads it again then (0: every tick) */
	rlt_ns_t parked_at;     /* when it last started waiting on its socket */
	rlt_ns_t timeout_at;    /* SO_RCVTIMEO/SO_SNDTIMEO: a wait on the socket gives up then */
	int timeout_known;      /* timeout_at was set at the call's first wait on its socket */
	struct rlt__job *next;  /* tid hash chain */
	struct rlt__job *wnext; /* RLT_CONNS waiting list */
};

/* ----- the timer heap (timer_heap.c) ----- */

struct rlt__heap {
	struct rlt__job **v;
	size_t n, cap;
};

int rlt__heap_push(struct rlt__heap *h, struct rlt__job *j);
void rlt__heap_remove(struct rlt__heap *h, struct rlt__job *j);
struct rlt__job *rlt__heap_top(const struct rlt__heap *h);

/* ----- the supervisor's state ----- */

#define RLT__PROC_BUCKETS 256
#define RLT__TID_BUCKETS 1024
#define RLT__JOB_BUCKETS 1024

struct rlt__tidmap {
	pid_t tid;
	struct rlt__proc *proc;
	struct rlt__tidmap *next;
};

/* A call that waited for the throttle and found a signal pending when its turn came is
 * answered a restart (the kernel's own call would fail with EINTR); it has paid, so the same
 * call (thread, number, arguments) coming back within RLT__PREPAID_NS goes through at once,
 * uncharged. */
#define RLT__PREPAID 64
#define RLT__PREPAID_NS (1000 * 1000000ull)

struct rlt__prepaid {
	pid_t tid;              /* 0: free */
	int nr;
	uint64_t args[6];
	rlt_ns_t until;         /* forgotten then (a handler that never returns to the call) */
};

struct rlt__sup {
	struct rlt__ruleset *rs;
	int notify_fd;
	int epoll_fd;
	int timer_fd;
	rlt_ns_t timer_armed;                    /* the deadline timer_fd is set for, 0 none */
	rlt_ns_t next_tick;                      /* jobs look for signals then (rlt__jobs_tick) */
	int loglevel;
	pid_t child;
	struct rlt__heap heap;
	struct rlt__proc *procs[RLT__PROC_BUCKETS];
	struct rlt__tidmap *tids[RLT__TID_BUCKETS];
	struct rlt__job *jobs[RLT__JOB_BUCKETS]; /* live jobs by tid: one call per thread */
	struct rlt__job *conns_waiters;          /* jobs waiting for an RLT_CONNS slot */
	unsigned parked;                         /* jobs in PH_READY */
	unsigned njobs;                          /* jobs alive or remembered */
	struct rlt__job *graveyard;              /* ended jobs, freed after the next batch */
	int tee_pipe[2];                         /* splice: where a pipe's bytes are looked at */
	uint64_t notifications, continued_fast;  /* counters for the debug log */

	int conns_dirty;                         /* a slot came free: retry the waiting list */
	struct rlt__prepaid prepaid[RLT__PREPAID]; /* calls restarted for a signal after their wait */

	/* The notification lane (notify_loop.c): a thread blocked in NOTIF_RECV. Everything
	 * above is used under lock, by the lane and by the epoll loop alike. */
	pthread_mutex_t lock;
	pthread_t lane;
	int lane_running;
	atomic_int lane_stop, lane_done;
};

/* Log levels, as RLT_LOG names them. */

void rlt__sup_log(const struct rlt__sup *s, int level, pid_t pid, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ----- the child side (seccomp_child.c) ----- */

/*
 * Forks the command under a user-notification filter. On success *pid is the child (stopped
 * before exec, waiting for rlt__child_go) and *notify_fd the listener. Returns 0, or -errno
 * with err saying what failed (nothing has run: the child is reaped).
 */
int rlt__child_spawn(char **cmd, pid_t *pid, int *notify_fd, int *ctl_fd, struct rlt_error *err);

/* Lets the child exec the command. Returns 0 or -errno. */
int rlt__child_go(int ctl_fd);

/* Kills and reaps a child that has not been let go. */
void rlt__child_abort(pid_t pid, int ctl_fd);

/* ----- the keeper: the tree dies with the supervisor (keeper.c) ----- */

/* Forks the keeper, holding a duplicate of the listener and a pidfd of this process. Call it
 * before the command runs, while this process has one thread. 0, or -1 with err filled. */
int rlt__keeper_start(int notify_fd, struct rlt_error *err);
/* Records a supervised process / forgets one that ended (the keeper kills the recorded ones if
 * the supervisor dies). No-ops without a keeper. */
void rlt__keeper_add(pid_t pid);
void rlt__keeper_del(pid_t pid);
/* The supervisor's normal end: the keeper is killed and reaped. */
void rlt__keeper_stop(void);

/* ----- the (pid, fd) cache (fdcache.c) ----- */

/* The process a thread belongs to (learnt once per tid). Returns NULL with *rc = -errno when
 * the thread is gone or cannot be inspected. */
struct rlt__proc *rlt__proc_of_tid(struct rlt__sup *s, pid_t tid, int *rc);

/* The facts of fd in proc: RLT_NOT_SOCKET, a socket's facts, or NULL with *rc = -errno (the fd
 * is not open: EBADF; or it cannot be fetched). */
struct rlt__sock *rlt__fd_facts(struct rlt__sup *s, struct rlt__proc *p, int fd, int *rc);

/* A job's hold on a socket's facts, so that a close by another thread does not free them. */
struct rlt__sock *rlt__sock_hold(struct rlt__sock *k);
void rlt__sock_put(struct rlt__sup *s, struct rlt__sock *k);

/* Recomputes the rule masks of a socket after its peer changed. */
void rlt__sock_rematch(struct rlt__sup *s, struct rlt__sock *k);

/* Registers a socket we installed in the program ourselves (an accepted connection). */
int rlt__fd_adopt(struct rlt__sup *s, struct rlt__proc *p, int fd, int ourfd, int type,
                  const struct rlt__peer *peer, uint32_t conns_mask);

/* The fd is closed or replaced: forget it (and give back its RLT_CONNS slots). */
void rlt__fd_forget(struct rlt__sup *s, struct rlt__proc *p, int fd);
void rlt__fd_forget_range(struct rlt__sup *s, struct rlt__proc *p, unsigned lo, unsigned hi);

/* The process execs: forget every fd (close-on-exec ones go away) and its threads' ids. */
void rlt__proc_exec(struct rlt__sup *s, struct rlt__proc *p);

/* The pidfd of a process reported its exit. */
void rlt__proc_gone(struct rlt__sup *s, struct rlt__proc *p);

/* Drops a job's reference to its process (frees the process once gone and unreferenced). */
void rlt__proc_put(struct rlt__sup *s, struct rlt__proc *p);

/* Forgets thread ids that ended (the periodic sweep), before the kernel reuses them. */
void rlt__tids_sweep(struct rlt__sup *s);

/* Forgets every process (at the end). */
void rlt__procs_free(struct rlt__sup *s);

/* Gives back RLT_CONNS slots and wakes connects waiting for one (jobs.c). */
void rlt__conns_give_back(struct rlt__sup *s, uint32_t mask);

/* ----- jobs (jobs.c) and what a notification becomes (on_call.c) ----- */

/* A job is tagged with bit 0 in epoll (our own fds are small even numbers, processes the
 * rest). */
#define RLT__JOB_TAG(j) ((void *)((uintptr_t)(j) | 1))

struct rlt__job *rlt__job_new(struct rlt__sup *s, const struct seccomp_notif *req,
                              struct rlt__proc *p, int fd, struct rlt__sock *k, enum rlt__op op,
                              enum rlt_var var, uint32_t mask);
/* Reads the program's iovec into the job. 0 or -errno. */
int rlt__job_iov(struct rlt__job *j, uint64_t addr, uint64_t cnt);
/* The job of a thread (one call at a time), or NULL. */
struct rlt__job *rlt__job_of_tid(struct rlt__sup *s, pid_t tid);
/* The call is O_NONBLOCK or MSG_DONTWAIT. */
int rlt__job_nonblocking(const struct rlt__job *j);
/* Moves a job on: from new, from its slot, from its socket being ready. */
void rlt__job_step(struct rlt__sup *s, struct rlt__job *j);
/* The call is over: what it holds goes back; it is freed after the loop's next batch. */
void rlt__job_end(struct rlt__sup *s, struct rlt__job *j);
/* Steps the jobs whose time has come (slots, SO_*TIMEO, RLT_CONNS max-wait). */
void rlt__jobs_run_due(struct rlt__sup *s);
/* Retries the jobs waiting for an RLT_CONNS slot, oldest first. */
void rlt__jobs_retry_conns(struct rlt__sup *s);
/* Every waiting job looks whether its thread has a signal to take (and ends the call for its
 * handler) or has died. Made every RLT__TICK_NS while any job is alive. */
#define RLT__TICK_NS (5 * 1000000ull)
void rlt__jobs_tick(struct rlt__sup *s);
/* Ends waiting jobs whose notification died; forgets ended threads; RLT_CONNS waiters look
 * again (a slot freed in shared scope). */
void rlt__jobs_sweep(struct rlt__sup *s);
/* Frees the ended jobs: only when no harvested epoll event can still name them. */
void rlt__jobs_graveyard_free(struct rlt__sup *s);
/* Answers or turns into a job one notification (on_call.c). */
void rlt__on_notification(struct rlt__sup *s, const struct seccomp_notif *req);

/* ----- the program's memory and calls made for it (remote_io.c) ----- */

/* Copies len bytes at the program's address into buf / from buf. 0 or -errno (-EFAULT when
 * the range is not all there). */
int rlt__mem_read(pid_t tid, uint64_t addr, void *buf, size_t len);
int rlt__mem_write(pid_t tid, uint64_t addr, const void *buf, size_t len);

/* Reads the program's iovec array (cnt entries at addr) into iov[]; *total = the sum of the
 * lengths. 0 or -errno (-EINVAL for a bad count). */
#define RLT__IOV_MAX 1024
int rlt__iov_read(pid_t tid, uint64_t addr, uint64_t cnt, struct iovec *iov, uint64_t *total);

/* Gathers bytes [off, off + len) of the program's iovec into buf / scatters buf there. */
int rlt__iov_gather(pid_t tid, const struct iovec *iov, unsigned cnt, uint64_t off, void *buf,
                    size_t len);
int rlt__iov_scatter(pid_t tid, const struct iovec *iov, unsigned cnt, uint64_t off,
                     const void *buf, size_t len);

/* Is the notification still pending (its thread has not died in the call)? */
int rlt__notif_valid(int notify_fd, uint64_t id);

/* Answers: CONTINUE, a return value, or an error. 0, or -ENOENT when the thread died. */
int rlt__notif_continue(int notify_fd, uint64_t id);
int rlt__notif_return(int notify_fd, uint64_t id, int64_t val);
int rlt__notif_error(int notify_fd, uint64_t id, int err);

/* Installs our fd in the program and answers the call with its number (SECCOMP_ADDFD_FLAG_SEND).
 * Returns the program's fd number, or -errno. */
int rlt__notif_addfd_send(int notify_fd, uint64_t id, int ourfd, int cloexec);

/* The program's fd, duplicated into this process (pidfd_getfd). fd >= 0 or -errno. */
int rlt__getfd(int pidfd, int fd);

/* ----- the loop (notify_loop.c) ----- */

/* Answers notifications until the notify fd hangs up (no task of the command is left) or the
 * command exited and `hup_deadline` passed. Returns 0 or -errno with err filled. */
int rlt__notify_loop(struct rlt__sup *s, int child_pidfd, int sig_fd, int *status,
                     struct rlt_error *err);

#endif
