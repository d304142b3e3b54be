/*
 * internal.h: what the files of the seccomp supervisor (--seccomp) share; supervisor.h is what
 * the launcher sees. The design is in docs/DESIGN.md.
 */
#ifndef RLT_SUP_INTERNAL_H
#define RLT_SUP_INTERNAL_H

#include <linux/seccomp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "charge.h"
#include "conns.h"
#include "pacing.h"
#include "policy.h"
#include "settings.h"
#include "supervisor.h"

/* ----- what we know of one fd of one process (fd_facts.c) ----- */

struct rlt_sup_proc;

struct rlt_sup_sock {
	unsigned refs;                  /* the cache's reference, each job's, the notification's */
	int cached;                     /* still what the cache says its (process, fd) is */
	int dup;                        /* our duplicate of the program's socket (CLOEXEC) while a
	                                 * call uses it, else -1: kept any longer, it would keep the
	                                 * connection open after the program closed it */
	dev_t dev;                      /* which socket it is: its inode, compared with what the */
	ino_t ino;                      /* program's fd number refers to now (lazily, see fd_facts.c) */
	struct rlt_sup_proc *proc;      /* the process and fd number it was learnt at */
	int fd;
	int type;                       /* SOCK_STREAM, SOCK_DGRAM, ... */
	int af;                         /* the socket's family */
	struct rlt__peer peer;          /* the remote end (af 0: not connected) */
	uint16_t local_port;            /* host order: for accept rules (the listening port) */
	uint32_t mask[RLT_VAR_COUNT];   /* rules that apply to calls on it, by variable */
	uint32_t conns_mask;            /* RLT_CONNS rules in which it holds an open slot */
	struct rlt__peer conns_peer;    /* ... taken for this peer (key=: its release finds the key) */
	void *conn_block;               /* connection-scope engine states (NULL: none) */
	struct rlt_sup_sock *held_next, **held_prev; /* the sockets holding slots (the sweep's) */
	struct rlt_sup_sock *pin_next;  /* the sockets the notification in hand uses */
	int pinned;
};

/* The cache's answer for an fd that is not a socket (file, pipe, terminal, ...). */
extern struct rlt_sup_sock rlt_sup_not_a_socket;
#define RLT_NOT_SOCKET (&rlt_sup_not_a_socket)

/* A connection accepted for a call that was then given up for a signal handler (before its
 * slot): handed to the next accept on the same listening fd, its restart, rather than dropped. */
struct rlt_sup_accepted {
	struct rlt_sup_accepted *next;
	int lfd;                 /* the program's listening fd */
	int sock;                /* our fd of the connection */
	struct rlt__peer peer;
	uint32_t conns_mask;
	struct rlt__peer conns_peer; /* the peer its slots were taken for (key=) */
};

struct rlt_sup_proc {
	pid_t tgid;
	int pidfd;                   /* pidfd_open(tgid): for pidfd_getfd, and polled for its exit */
	int fd_dir;                  /* /proc/TGID/fd (O_PATH): what an fd number is now, in one
	                              * fstatat (-1: asked through pidfd_getfd) */
	struct rlt_sup_sock **fds;      /* indexed by fd: NULL unknown, RLT_NOT_SOCKET, or facts */
	unsigned nfds;               /* length of fds[] */
	unsigned jobs;               /* jobs that still refer to it (freed at 0 once gone) */
	int gone;                    /* its pidfd reported the exit of the whole thread group */
	struct rlt_sup_accepted *stash; /* connections accepted for it that no call took yet */
	struct rlt__ruleset *rs;     /* its budgets: the command's own, or a fork's (owns_rs) */
	int owns_rs;
	struct rlt_sup_proc *next;      /* hash chain */
};

/* ----- a call that is not answered at once (job_table.c) ----- */

enum rlt_sup_op {
	OP_CONTINUE,   /* charge, wait for the slot, then let the kernel make the call */
	OP_RECV,       /* a stream receive made on the program's behalf */
	OP_SEND,       /* a stream send made on the program's behalf */
	OP_SENDFILE,   /* sendfile to a stream, made on its behalf from our duplicate of the file */
	OP_SPLICE_SEND, /* splice from a pipe to a stream, made on its behalf (tee, send, consume) */
	OP_SPLICE_RECV, /* splice from a stream to a pipe, made on its behalf (recv, write) */
	OP_DGRAM_RECV, /* a datagram receive: learn its size, charge it whole, then CONTINUE */
	OP_ACCEPT,     /* accept made on the program's behalf, then the fd installed in it */
};

enum rlt_sup_phase {
	PH_NEW,    /* not charged yet */
	PH_SLOT,   /* charged: waiting on the timer heap for the slot (t.go) */
	PH_READY,  /* parked: waiting for the socket to become readable/writable */
	PH_GONE,   /* ended: in the graveyard until no epoll batch can still name it */
};

struct rlt_sup_job {
	/* the notification */
	uint64_t id;
	pid_t tid;
	int nr;
	uint64_t args[6];

	struct rlt_sup_proc *proc;
	int fd;                 /* the program's fd of the call */
	struct rlt_sup_sock *sock; /* its facts (owned by the cache; re-looked-up if dropped) */
	enum rlt_sup_op op;
	enum rlt_sup_phase phase;
	enum rlt_var var;
	uint32_t mask;

	/* the charge */
	struct rlt__ticket t;
	int charged;            /* t holds a charge not settled yet */
	uint64_t charge_bytes;  /* what the current piece (or the whole call) is charged */
	uint32_t nmask;         /* RLT_CONNS rules a connect or accept takes a slot in */
	int conns_held;         /* the slots of nmask are taken (given back unless handed on) */
	int waited;             /* it waited for its slot or an RLT_CONNS place */
	uint32_t counted_waiting; /* the rules it is counted on as a waiting thread (published) */
	int waiting_counted;    /* ... and whether it is */
	int paid;               /* restarted after a signal, its charge taken before (prepaid) */

	/* a call made on the program's behalf */
	uint64_t total;         /* bytes the program asked for */
	uint64_t done;          /* bytes moved so far */
	uint64_t piece;         /* bytes of the current piece */
	struct rlt__pace pace;  /* OP_SEND/OP_RECV/OP_SENDFILE/OP_SPLICE_*: how it is paced */
	int moved_unanswered;   /* a piece charged after it moved waits for its slot (t.go) ... */
	int go_on;              /* ... and then the call makes the next piece (else answers) */
	int nonblock;           /* O_NONBLOCK or MSG_DONTWAIT: answer EAGAIN rather than park */
	int flags;              /* the call's MSG_* flags */
	int park_fd;            /* our own duplicate registered with epoll while PH_READY ... */
	int park_src;           /* ... of this fd (the socket's duplicate, or src_fd) */
	uint32_t park_events;
	int accepted;           /* OP_ACCEPT: the connection we accepted (-1: none) */
	int cloexec;            /* OP_ACCEPT: SOCK_CLOEXEC asked for */
	int conns_waiting;      /* on the RLT_CONNS waiting list */
	struct rlt__conns_wait conns_wait; /* where its RLT_CONNS decision stands (conns.c) */
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
	struct rlt__peer kpeer; /* what key= rules key it on (rlt__charge_peer): the socket's peer,
	                         * a datagram's address, or an accepted connection's with the
	                         * listening port */

	/* scheduling */
	rlt_ns_t deadline;      /* timer heap key */
	size_t heap_i;          /* index in the heap (SIZE_MAX: not in it) */
	int status_fd;          /* /proc/TGID/task/TID/status, read for signals (-1: not open) */
	rlt_ns_t next_look;     /* the tick reads it again then (0: every tick) */
	rlt_ns_t parked_at;     /* when it last started waiting on its socket */
	rlt_ns_t timeout_at;    /* SO_RCVTIMEO/SO_SNDTIMEO: a wait on the socket gives up then */
	int timeout_known;      /* timeout_at was set at the call's first wait on its socket */
	struct rlt_sup_job *next;  /* tid hash chain */
	struct rlt_sup_job *wnext; /* RLT_CONNS waiting list */
};

/* ----- the timer heap (timer_heap.c) ----- */

struct rlt_sup_heap {
	struct rlt_sup_job **v;
	size_t n, cap;
};

int rlt_sup_heap_push(struct rlt_sup_heap *h, struct rlt_sup_job *j);
void rlt_sup_heap_remove(struct rlt_sup_heap *h, struct rlt_sup_job *j);
struct rlt_sup_job *rlt_sup_heap_top(const struct rlt_sup_heap *h);

/* ----- the supervisor's state ----- */

#define RLT_SUP_PROC_BUCKETS 256
#define RLT_SUP_TID_BUCKETS 1024
#define RLT_SUP_JOB_BUCKETS 1024

struct rlt_sup_tidmap {
	pid_t tid;
	struct rlt_sup_proc *proc;
	struct rlt_sup_tidmap *next;
};

/* A call that waited for the throttle and found a signal pending when its turn came is
 * answered a restart (the kernel's own call would fail with EINTR); it has paid, so the same
 * call (thread, number, arguments) coming back within RLT_SUP_PREPAID_NS goes through at once,
 * uncharged. */
#define RLT_SUP_PREPAID 64
#define RLT_SUP_PREPAID_NS (1000 * 1000000ull)

struct rlt_sup_prepaid {
	pid_t tid;              /* 0: free */
	int nr;
	uint64_t args[6];
	rlt_ns_t until;         /* forgotten then (a handler that never returns to the call) */
};

struct rlt_sup {
	struct rlt__ruleset *rs;
	int notify_fd;
	int epoll_fd;
	int timer_fd;
	rlt_ns_t timer_armed;                    /* the deadline timer_fd is set for, 0 none */
	rlt_ns_t next_tick;                      /* jobs look for signals then (rlt_sup_jobs_tick) */
	int loglevel;
	pid_t child;
	struct rlt_sup_heap heap;
	struct rlt_sup_proc *procs[RLT_SUP_PROC_BUCKETS];
	struct rlt_sup_tidmap *tids[RLT_SUP_TID_BUCKETS];
	struct rlt_sup_job *jobs[RLT_SUP_JOB_BUCKETS]; /* live jobs by tid: one call per thread */
	struct rlt_sup_job *conns_waiters;          /* jobs waiting for an RLT_CONNS slot */
	unsigned parked;                         /* jobs in PH_READY */
	unsigned njobs;                          /* jobs alive or remembered */
	struct rlt_sup_job *graveyard;              /* ended jobs, freed after the next batch */
	int tee_pipe[2];                         /* splice: where a pipe's bytes are looked at */
	uint64_t notifications, continued_fast;  /* counters for the debug log */

	int conns_dirty;                         /* a slot came free: retry the waiting list */
	struct rlt_sup_sock *conns_held;         /* sockets holding RLT_CONNS slots (fd_facts.c) */
	rlt_ns_t sweep_end, sweep_cost;          /* the last sweep of them: when, how long */
	struct rlt_sup_sock *pinned;             /* sockets the notification in hand uses */
	/* calls restarted for a signal after their wait */
	struct rlt_sup_prepaid prepaid[RLT_SUP_PREPAID];

	/* The notification lane (notify_loop.c): a thread blocked in NOTIF_RECV. Everything
	 * above is used under lock, by the lane and by the epoll loop alike. */
	pthread_mutex_t lock;
	pthread_t lane;
	int lane_running;
	atomic_int lane_stop, lane_done;
};

/* Log levels, as RLT_LOG names them. */

void rlt_sup_log(const struct rlt_sup *s, int level, pid_t pid, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ----- the child side (filter.c) ----- */

/*
 * Forks the command under a user-notification filter. On success *pid is the child (stopped
 * before exec, waiting for rlt_sup_child_go) and *notify_fd the listener. Returns 0, or -errno
 * with err saying what failed (nothing has run: the child is reaped).
 */
int rlt_sup_child_spawn(char **cmd, pid_t *pid, int *notify_fd, int *ctl_fd, struct rlt_error *err);

/* Lets the child exec the command. Returns 0 or -errno. */
int rlt_sup_child_go(int ctl_fd);

/* Kills and reaps a child that has not been let go. */
void rlt_sup_child_abort(pid_t pid, int ctl_fd);

/* ----- the keeper: the tree dies with the supervisor (keeper.c) ----- */

/* Forks the keeper, holding a duplicate of the listener and a pidfd of this process. Call it
 * before the command runs, while this process has one thread. 0, or -1 with err filled. */
int rlt_sup_keeper_start(int notify_fd, struct rlt_error *err);
/* Records a supervised process / forgets one that ended (the keeper kills the recorded ones if
 * the supervisor dies). No-ops without a keeper. */
void rlt_sup_keeper_add(pid_t pid);
void rlt_sup_keeper_del(pid_t pid);
/* The supervisor's normal end: the keeper is killed and reaped. */
void rlt_sup_keeper_stop(void);

/* ----- the processes (proc_table.c) and what their fds are (fd_facts.c) ----- */

/* The process a thread belongs to (learnt once per tid). Returns NULL with *rc = -errno when
 * the thread is gone or cannot be inspected. */
struct rlt_sup_proc *rlt_sup_proc_of_tid(struct rlt_sup *s, pid_t tid, int *rc);

/* The facts of fd in proc, checked against what the number refers to now: RLT_NOT_SOCKET, a
 * socket's facts (with our duplicate open until rlt_sup_fd_unpin), or NULL with *rc = -errno
 * (the fd is not open: EBADF; or it cannot be fetched). */
struct rlt_sup_sock *rlt_sup_fd_facts(struct rlt_sup *s, struct rlt_sup_proc *p, int fd, int *rc);

/* The notification is answered or made a job: the duplicates no job holds are closed. */
void rlt_sup_fd_unpin(struct rlt_sup *s);

/* A job's hold on a socket's facts (and its duplicate), so that neither goes while it runs. */
struct rlt_sup_sock *rlt_sup_sock_hold(struct rlt_sup_sock *k);
void rlt_sup_sock_put(struct rlt_sup *s, struct rlt_sup_sock *k);

/* The socket holds RLT_CONNS slots in mask from now until its fd no longer refers to it (given
 * back at once when that is so already). */
void rlt_sup_sock_take_conns(struct rlt_sup *s, struct rlt_sup_sock *k, uint32_t mask,
                             const struct rlt__peer *peer);

/* The sockets holding RLT_CONNS slots whose fd number no longer refers to them (closed, or
 * replaced: close is not notified) are forgotten and their slots given back. Returns how many. */
unsigned rlt_sup_fd_sweep(struct rlt_sup *s);

/* Recomputes the rule masks of a socket after its peer changed. */
void rlt_sup_sock_rematch(struct rlt_sup *s, struct rlt_sup_sock *k);

/* Registers a socket we installed in the program ourselves (an accepted connection). */
int rlt_sup_fd_adopt(struct rlt_sup *s, struct rlt_sup_proc *p, int fd, int ourfd, int type,
                     const struct rlt__peer *peer, uint32_t conns_mask,
                     const struct rlt__peer *conns_peer);

/* The fd is closed or replaced: forget it (and give back its RLT_CONNS slots). */
void rlt_sup_fd_forget(struct rlt_sup *s, struct rlt_sup_proc *p, int fd);
/* Every fd of p (its end, or its exec). */
void rlt_sup_fd_forget_all(struct rlt_sup *s, struct rlt_sup_proc *p);
/* Connections accepted for the listener at lfd (lfd < 0: any) that no accept took go. */
void rlt_sup_fd_stash_drop(struct rlt_sup *s, struct rlt_sup_proc *p, int lfd);

/* The pidfd of a process reported its exit. */
void rlt_sup_proc_gone(struct rlt_sup *s, struct rlt_sup_proc *p);

/* Drops a job's reference to its process (frees the process once gone and unreferenced). */
void rlt_sup_proc_put(struct rlt_sup *s, struct rlt_sup_proc *p);

/* Forgets thread ids that ended (the periodic sweep), before the kernel reuses them. */
void rlt_sup_tids_sweep(struct rlt_sup *s);

/* Forgets every process (at the end). */
void rlt_sup_procs_free(struct rlt_sup *s);

/* Gives back RLT_CONNS slots taken for peer (key=) and wakes connects waiting for one
 * (job_conns.c). */
void rlt_sup_conns_release(struct rlt_sup *s, uint32_t mask, const struct rlt__peer *peer);

/* A close is seen by a sweep (fd_facts.c), not notified: when a call must wait for an RLT_CONNS
 * slot or be refused (job_conns.c), and periodically while a connect waits for one, here or in
 * another process of a shared scope (job_conns.c). rlt_sup_conns_sweep_due: when the next
 * periodic sweep is due (0: none is wanted); rlt_sup_conns_sweep_run: makes it if due. */
rlt_ns_t rlt_sup_conns_sweep_due(struct rlt_sup *s);
void rlt_sup_conns_sweep_run(struct rlt_sup *s, rlt_ns_t now);

/* ----- jobs (job_table.c) and what a notification becomes (notif_dispatch.c) ----- */

/* A job is tagged with bit 0 in epoll (our own fds are small even numbers, processes the
 * rest). */
#define RLT_SUP_JOB_TAG(j) ((void *)((uintptr_t)(j) | 1))

struct rlt_sup_job *rlt_sup_job_new(struct rlt_sup *s, const struct seccomp_notif *req,
                                    struct rlt_sup_proc *p, int fd, struct rlt_sup_sock *k,
                                    enum rlt_sup_op op, enum rlt_var var, uint32_t mask);
/* Reads the program's iovec into the job. 0 or -errno. */
int rlt_sup_job_iov(struct rlt_sup_job *j, uint64_t addr, uint64_t cnt);
/* The job of a thread (one call at a time), or NULL. */
struct rlt_sup_job *rlt_sup_job_of_tid(struct rlt_sup *s, pid_t tid);
/* The call is O_NONBLOCK or MSG_DONTWAIT. */
int rlt_sup_job_nonblocking(const struct rlt_sup_job *j);
/* Moves a job on: from new, from its slot, from its socket being ready. */
void rlt_sup_job_step(struct rlt_sup *s, struct rlt_sup_job *j);
/* The call is over: what it holds goes back; it is freed after the loop's next batch. */
void rlt_sup_job_end(struct rlt_sup *s, struct rlt_sup_job *j);
/* Steps the jobs whose time has come (slots, SO_*TIMEO, RLT_CONNS max-wait). */
void rlt_sup_jobs_run_due(struct rlt_sup *s);
/* Retries the jobs waiting for an RLT_CONNS slot, oldest first. */
void rlt_sup_jobs_retry_conns(struct rlt_sup *s);
/* Every waiting job looks whether its thread has a signal to take (and ends the call for its
 * handler) or has died. Made every RLT_SUP_TICK_NS while any job is alive. */
#define RLT_SUP_TICK_NS (5 * 1000000ull)
void rlt_sup_jobs_tick(struct rlt_sup *s);
/* Ends waiting jobs whose notification died; forgets ended threads; RLT_CONNS waiters look
 * again (a slot freed in shared scope). */
void rlt_sup_jobs_sweep(struct rlt_sup *s);
/* Frees the ended jobs: only when no harvested epoll event can still name them. */
void rlt_sup_jobs_graveyard_free(struct rlt_sup *s);

/* What the job files share (job_table.c unless said). Answers the call with moved bytes or
 * -errno and ends it. */
void rlt_sup_job_finish(struct rlt_sup *s, struct rlt_sup_job *j, int64_t moved);
/* Waits for fd (the socket's duplicate, or a pipe's) on epoll for events. */
void rlt_sup_job_park_on(struct rlt_sup *s, struct rlt_sup_job *j, int fd, uint32_t events);
void rlt_sup_job_park(struct rlt_sup *s, struct rlt_sup_job *j, uint32_t events);
/* Stops waiting on epoll. */
void rlt_sup_job_unpark(struct rlt_sup *s, struct rlt_sup_job *j);
/* Takes the job off every queue (heap, epoll, RLT_CONNS list). */
void rlt_sup_job_idle(struct rlt_sup *s, struct rlt_sup_job *j);
/* Waits on the timer heap when the slot is still ahead. 1: waiting (or finished); 0: go now. */
int rlt_sup_job_wait_slot(struct rlt_sup *s, struct rlt_sup_job *j, rlt_ns_t at);
/* Charges bytes and msgs to the job's rules (0 or -errno); settles what was moved. */
int rlt_sup_job_charge(struct rlt_sup_job *j, uint64_t bytes, uint64_t msgs);
void rlt_sup_job_settle(struct rlt_sup_job *j, uint64_t bytes, uint64_t msgs);
/* A paced call's next piece (src/pacing.c): its size, our buffer for it and, unless charged
 * after, its charge. 0, or not: the call was answered (what moved, or the error). */
int rlt_sup_job_piece_charge(struct rlt_sup *s, struct rlt_sup_job *j);
/* n bytes of the piece moved: charged now if the call is charged after, then settled. */
void rlt_sup_job_charge_moved(struct rlt_sup_job *j, uint64_t n);
/* The job's buffer, at least len bytes. 0 or -ENOMEM (job_stream.c). */
int rlt_sup_job_buf(struct rlt_sup_job *j, size_t len);
/* Leaves the RLT_CONNS waiting list (job_conns.c). */
void rlt_sup_conns_unwait(struct rlt_sup *s, struct rlt_sup_job *j);
/* The slot, then an RLT_CONNS place: 0 when both are had; 1 when the job waits or was
 * finished (job_conns.c). */
int rlt_sup_slot_then_conns(struct rlt_sup *s, struct rlt_sup_job *j);

/* Whether the job's thread has a signal to take now (job_signals.c). */
enum rlt_sup_sig { RLT_SIG_NONE, RLT_SIG_MAYBE, RLT_SIG_YES, RLT_SIG_GONE };
enum rlt_sup_sig rlt_sup_signal_for(struct rlt_sup_job *j);
/* The thread has a signal to take: the call ends now, for its handler (job_signals.c). */
void rlt_sup_job_interrupt(struct rlt_sup *s, struct rlt_sup_job *j);
/* A call that waited and has a signal pending when its turn comes is answered a restart, its
 * charge kept for the call that comes back: 1 when answered so (job_signals.c). */
int rlt_sup_job_restart_paid(struct rlt_sup *s, struct rlt_sup_job *j);
/* The end of a call that waited and goes on in the kernel: answered a restart (above), or
 * CONTINUEd and settled as msgs messages. 1 when the job is over (restarted, or its thread
 * gone: ended here), 0 when CONTINUEd and settled (job_signals.c). */
int rlt_sup_job_continue_paid(struct rlt_sup *s, struct rlt_sup_job *j, uint64_t msgs);
/* Whether this call is one restarted by rlt_sup_job_restart_paid (then forgotten: it goes
 * through once) (job_signals.c). */
int rlt_sup_job_prepaid_take(struct rlt_sup *s, const struct rlt_sup_job *j);

/* One step of each kind of job (job_conns.c, job_stream.c, job_splice.c, job_dgram.c,
 * job_accept.c). */
void rlt_sup_step_continue(struct rlt_sup *s, struct rlt_sup_job *j);
void rlt_sup_step_stream(struct rlt_sup *s, struct rlt_sup_job *j);
void rlt_sup_step_splice(struct rlt_sup *s, struct rlt_sup_job *j);
void rlt_sup_step_dgram_recv(struct rlt_sup *s, struct rlt_sup_job *j);
void rlt_sup_step_accept(struct rlt_sup *s, struct rlt_sup_job *j);

/* Answers or turns into a job one notification (notif_dispatch.c). */
void rlt_sup_on_notification(struct rlt_sup *s, const struct seccomp_notif *req);

/* ----- the program's memory and calls made for it (target_mem.c) ----- */

/* Copies len bytes at the program's address into buf / from buf. 0 or -errno (-EFAULT when
 * the range is not all there). */
int rlt_sup_mem_read(pid_t tid, uint64_t addr, void *buf, size_t len);
int rlt_sup_mem_write(pid_t tid, uint64_t addr, const void *buf, size_t len);

/* Reads the program's iovec array (cnt entries at addr) into iov[]; *total = the sum of the
 * lengths. 0 or -errno (-EINVAL for a bad count). */
#define RLT_SUP_IOV_MAX 1024
int rlt_sup_iov_read(pid_t tid, uint64_t addr, uint64_t cnt, struct iovec *iov, uint64_t *total);

/* Gathers bytes [off, off + len) of the program's iovec into buf / scatters buf there. */
int rlt_sup_iov_gather(pid_t tid, const struct iovec *iov, unsigned cnt, uint64_t off, void *buf,
                       size_t len);
int rlt_sup_iov_scatter(pid_t tid, const struct iovec *iov, unsigned cnt, uint64_t off,
                        const void *buf, size_t len);

/* Is the notification still pending (its thread has not died in the call)? */
int rlt_sup_notif_valid(int notify_fd, uint64_t id);

/* Answers: CONTINUE, a return value, or an error. 0, or -ENOENT when the thread died. */
int rlt_sup_notif_continue(int notify_fd, uint64_t id);
int rlt_sup_notif_return(int notify_fd, uint64_t id, int64_t val);
int rlt_sup_notif_error(int notify_fd, uint64_t id, int err);

/* Installs our fd in the program and answers the call with its number (SECCOMP_ADDFD_FLAG_SEND).
 * Returns the program's fd number, or -errno. */
int rlt_sup_notif_addfd_send(int notify_fd, uint64_t id, int ourfd, int cloexec);

/* The program's fd, duplicated into this process (pidfd_getfd). fd >= 0 or -errno. */
int rlt_sup_getfd(int pidfd, int fd);

/* ----- the loop (notify_loop.c) ----- */

/* Answers notifications until the notify fd hangs up (no task of the command is left) or the
 * command exited and `hup_deadline` passed. Returns 0 or -errno with err filled. */
int rlt_sup_notify_loop(struct rlt_sup *s, int child_pidfd, int sig_fd, int *status,
                        struct rlt_error *err);

#endif
