/* qmaster.h: the queue master's shared declarations, sectioned by the file that defines them. */
#ifndef NOWQ_QMASTER_H
#define NOWQ_QMASTER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <jansson.h>

/* glibc's sys/queue.h lacks the BSD _SAFE walks. */
#ifndef TAILQ_FOREACH_SAFE
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = TAILQ_FIRST((head));				\
	    (var) && ((tvar) = TAILQ_NEXT((var), field), 1);		\
	    (var) = (tvar))
#endif

#include "common/common.h"

struct event_base;
struct bufferevent;
struct store;
struct msg_attempts;

/* conf.c: qmaster.conf (common/qmconf.c reads it) at run time. */
/* Returns NULL and prints "FILE:LINE: problem" on a bad file. */
struct qm_conf        *conf_load(const char *path);
void                   conf_free(struct qm_conf *c);
const struct qm_queue *conf_queue(const struct qm_conf *c, const char *name);
/* The queue's rerun default (-r not given); false for an unknown queue. */
bool                   queue_rerun_default(const char *queue);
/* Reads path into a new configuration and swaps it in, keeping the queues'
 * disabled flags; on a bad file the running one stays and err says why. */
int                    conf_reload(char *err, size_t errlen);
/* Another thread reads conf between these two (the loop swaps it on reload). */
void                   conf_read_begin(void);
void                   conf_read_end(void);
/* GE's "name value" lines of one queue, for qconf -sq. */
char                  *conf_queue_text(const struct qm_queue *q);
/* Grid Engine's global configuration lines nowq has a counterpart of, for qconf -sconf. */
char                  *conf_global_text(const struct qm_conf *c);
const struct qm_pe    *conf_pe(const struct qm_conf *c, const char *name);

/* net.c: listeners, connections, framing, and replies held until commit. */
/* peer: the other master (replication); witness: an execd's light link
 * for failover votes. */
enum conn_role { ROLE_NONE = 0, ROLE_CLIENT = 1, ROLE_EXECD = 2, ROLE_PEER = 4, ROLE_WITNESS = 8 };

struct exechost;

struct conn {
	TAILQ_ENTRY(conn)    entry;
	int                  fd;
	struct bufferevent  *bev;
	bool                 is_unix;
	char                 peer[64];      /* for logs */
	enum conn_role       role;          /* ROLE_NONE until HELLO */
	uid_t                uid;
	gid_t                gid;
	char                *user;
	bool                 manager;
	bool                 operator;      /* an operator or a manager */
	bool                 daemon;        /* the daemon identity (qm_is_daemon) */
	struct exechost     *host;          /* execd connections, after REGISTER */
	bool                 closing;       /* close once the output drains */
	bool                 redirected;    /* HELLO answered "ask another master" */
	int                  refs;          /* outgoing messages still queued for it */
	bool                 dead;          /* closed while still referenced */
	int64_t              lease_until;   /* mono ms: until then its execd votes for no one else */
	int64_t              hb_seq;        /* the highest sequence its execd echoed */
	int64_t              frame_since;   /* mono ms: a partial frame began; 0: none */
	json_t              *raw_msg;       /* a request waiting for its raw bytes (msg_raw_bytes) */
	size_t               raw;           /* those bytes: at the input's front once it is handled */
	bool                 asked;         /* a request was handled here since HELLO */
	bool                 promoted;      /* at PRIO_WORK (conn_promote) */
	bool                 query;         /* came in at the query endpoint (reader.c) */
	/* The bytes its uid's jobs hold in SPOOL/stage/, read at stage_held_at
	 * (mono ms; 0: never) for the limits of its uploads (stage.c). */
	int64_t              stage_held, stage_held_at;
};

/* Before HELLO a frame is small (a HELLO, a munge credential): a stranger
 * cannot make the master hold max_frame bytes for it. */
#define NET_HELLO_MAX_FRAME (64u * 1024)
/* After accept fails for want of descriptors, listening pauses this long
 * instead of spinning on a backlog it cannot take. */
#define NET_ACCEPT_PAUSE_MS 100

/* A new connection at PRIO_NEW waits at most about this long behind a
 * busy loop, which then serves this many of them (net_new_check). */
#define NET_NEW_WAIT_MS 5
#define NET_NEW_BOOST   2

int  net_listen(void);
void net_shutdown(void);
/* Once a busy turn (the group commit): new connections' wait bounded. */
void net_new_check(void);
/* sock.c: the listening sockets.  A listening socket (non-blocking), or
 * -1 with the reason logged. */
int  net_bind_tcp(const char *host, int port, int backlog);
int  net_bind_unix(const char *path, int backlog);
/* TCP_NODELAY and SO_KEEPALIVE on a socket; -1 errno. */
int  net_tcp_opts_set(int fd);
/* Whether an accepted socket needs them set (net_bind_tcp's are not
 * passed on by this kernel). */
bool net_tcp_opts_needed(int fd);
/* The descriptor limit raised as far as it may go. */
void net_raise_fd_limit(void);
/* "HOST:PORT" of an accepted peer, or "unix". */
void net_peer_name(const struct sockaddr_storage *ss, socklen_t len, char *buf, size_t n);
/* The uid of a client over TCP, from any thread: with munge (auth =
 * munge; munge_socket NULL for the default one) its credential, which
 * must carry payload, else the claimed uid if it owns the loopback socket
 * fd.  *gid from the credential, else -1.  0, or -1 with the refusal in err. */
struct msg_hello;
int  net_tcp_identity(int fd, const struct msg_hello *m, const char *payload, bool munge,
    const char *munge_socket, uid_t *uid, gid_t *gid, char *err, size_t errlen);
struct handoff;
/* What the query thread needs of the configuration for h (its operator
 * flag set), as it is now; the thread calls it under conf_read_begin. */
void net_handoff_conf(struct handoff *h);
/* Did accept fail for nothing to worry about (errno err)? */
bool net_accept_transient(int err);
/* Queues msg (stolen) for c: sent at once when no transaction is open, else
 * right after the commit, in the order queued. */
void net_send(struct conn *c, json_t *msg);
/* The same for a reply to seq written as JSON text (stolen), for large replies. */
void net_send_text(struct conn *c, int64_t seq, char *text, size_t len);
/* Sends at once, never held (replication, heartbeats, votes). */
void net_send_now(struct conn *c, json_t *msg);
/* Sends at once unless an earlier message to c is held: for replies that
 * say nothing of the database (REDIRECT, the masters' roles). */
void net_send_unheld(struct conn *c, json_t *msg);
/* A reply followed by len raw bytes of fd from off (sent with sendfile; fd
 * is taken and closed), in order with the replies before it but not held
 * for the standby (as net_send_unheld: it reads, it changes nothing). */
void net_send_file(struct conn *c, json_t *msg, int fd, int64_t off, size_t len);
/* The raw bytes after the request being handled (msg_raw_bytes), at the
 * front of the returned input: the handler drains what it takes, the rest
 * is dropped after it. */
struct evbuffer *net_raw(struct conn *c, size_t *len);
/* Sends the messages held for the commit (after a successful commit). */
void net_flush_held(void);
/* Semi-synchronous replication: the messages of the transaction just
 * committed wait for the standby's acknowledgement of seq; net_release
 * sends those whose seq is acknowledged. */
void net_hold_tag(int64_t seq);
void net_release(int64_t acked);
/* After a commit failed and was rolled back: the replies held for it
 * become the error code/text, its other messages are dropped, and the
 * execds that were sent any are disconnected (they register again and
 * resend what they hold). */
void net_refuse_turn(const char *code, const char *text);
/* Every connection (for heartbeats to execds and votes from witnesses). */
struct conn *net_next(struct conn *c);
void net_close(struct conn *c, const char *why);

/* A client connection moving between the loop and the reader thread:
 * its socket, who it is (as HELLO found), and what it sent that the one
 * taking it must handle first. */
struct handoff {
	TAILQ_ENTRY(handoff) entry;
	int              fd;
	bool             is_unix;
	bool             stranger;        /* has not said HELLO: in holds all it sent */
	char             peer[64];
	uid_t            uid;
	gid_t            gid;
	char            *user;
	bool             manager, operator, daemon;
	bool             see_all;         /* show_all_jobs or an operator, at the handoff */
	bool             hold;            /* a standby: replies wait for repl_released */
	size_t           max_frame;
	int              client_timeout;
	json_t          *msg;             /* the request to answer first, or NULL */
	struct evbuffer *in;              /* what it sent after msg, not yet read */
	struct evbuffer *out;             /* to the reader: replies not yet written */
};
/* The loop takes back a connection the reader cannot answer (main thread). */
void net_adopt(struct handoff *h);
/* Puts what a connection sent before it moved (from, emptied) into the
 * input of its new bufferevent, whose end libevent keeps frozen. */
void net_input_add(struct bufferevent *bev, struct evbuffer *from);

/* reader.c: the query thread (query_thread): job listings answered from
 * its own read-only connection to the database, at idle priority, so that
 * clients polling qstat take no time from the loop's dispatch. */
int  reader_start(void);
void reader_stop(void);
/* Would the reader answer msg, the first request of a client connection? */
bool reader_takes(const json_t *msg);
/* The connection is the reader's now (h stolen). */
void reader_give(struct handoff *h);
/* The loop replaced the database file (a snapshot installed). */
void reader_store_replaced(void);

/* request.c: the one table of request handlers, and client requests. */
void request_dispatch(struct conn *c, json_t *msg);
/* The reply to a STATUS listing (proto_is_listing) read from st, as a user sees it
 * (all: show_all_jobs or an operator); or NULL, with the brief listing's
 * reply as JSON text in *text.  Reads only st: the reader thread calls it
 * with its own connection. */
json_t *status_listing(struct store *st, int64_t seq, json_t *msg, const char *user, bool all,
    char **text, size_t *len);
/* Who may send a request, beyond the connection's role (perm.c decides).
 * The owner forms let anyone in and leave the check per job (or cron
 * entry) to the handler, through perm_may_touch. */
enum perm {
	PERM_USER,            /* anyone; what they see follows perm_sees_all */
	PERM_OWNER_OPERATOR,  /* per job: its owner, an operator or a manager */
	PERM_OWNER_MANAGER,   /* per job or entry: its owner or a manager */
	PERM_OPERATOR,        /* operators and managers */
	PERM_MANAGER,
	PERM_DAEMON,          /* the daemon identity (qm_is_daemon) */
};
/* The perm of the table's row being handled (only inside a handler). */
enum perm request_current_perm(void);
/* The table as lines "TYPE ROLE WHO MUTATES", for qmaster --requests. */
void request_table_print(FILE *fp);
/* Deletes one job as qdel does (by c's user); a sentence for people in buf. */
const char *request_job_delete(struct conn *c, struct job *j, char *buf, size_t n);
/* "job ID", or "job-array task ID.TASK" for a task view: as Grid Engine
 * names them in its answers. */
const char *request_job_label(const struct job *j, char *buf, size_t n);
/* A job reached a final state: answer WAITs for it. */
void request_job_finished(const struct job *j);
/* A connection went away: forget its WAITs. */
void request_conn_gone(struct conn *c);
/* DELETE, HOLD, RELEASE and qmod's job requests: the walk over "jobs" (ids)
 * or "users", the owner-or-manager check, one op per job; the reply lists
 * each job's result.  An op stores its change and says how it went in buf. */
typedef const char *(*job_op)(struct conn *c, struct job *j, char *buf, size_t n, bool *ok);
void request_job_op(struct conn *c, int64_t seq, json_t *msg, job_op op, const char *verb);
/* users.c: users and groups as the master's own user database knows them,
 * cached per thread (see users.c): NSS lookups can be slow and neither the
 * loop nor the query thread may wait on them often. */
struct user_cache {
	uid_t    uid;
	char    *name;
	char    *home;
	gid_t    gid;
	gid_t   *groups;
	int      ngroups;
	int64_t  fetched;
};
/* NULL: no such uid.  Valid in the calling thread until its next lookup. */
const struct user_cache *user_lookup(uid_t uid);
/* uid's name, freshly allocated (the number when it has none); *gid, if
 * (gid_t)-1, becomes its primary group (uid when it has none). */
char *user_name(uid_t uid, gid_t *gid);
/* How long a user's or group's entry is believed. */
#define USER_CACHE_MS 300000
/* The name of a group id, cached the same way; NULL: no such group. */
const char *group_lookup(gid_t gid);
/* Frees the calling thread's entries (a thread that ends). */
void users_forget(void);

/* exechost.c: exec hosts and their messages. */
struct exechost {
	TAILQ_ENTRY(exechost) entry;      /* all hosts, by name */
	struct exechost *hnext;           /* exechost_find's hash chain */
	char        *name;
	int          slots;
	uid_t        uid;         /* the execd's uid: 0 runs anyone's jobs */
	struct host_attrs attrs;  /* from its REGISTER */
	bool         disabled;    /* qmod -d HOST: takes no new work */
	char       **qdisabled;   /* qmod -d QUEUE@HOST: queues whose instance here is disabled */
	bool         lost;        /* no LOAD for host_timeout: state unknown */
	char        *busy_reason; /* why its execd says it is not idle, or NULL */
	char        *vmem_limit;  /* how it enforces h_vmem: "cgroup", "rlimit" or NULL */
	double       load[3];
	bool         idle;
	json_t      *stopped;     /* the jobs its idle policy stopped, as its last LOAD said */
	int64_t      last_seen;   /* ms */
	struct conn *conn;        /* NULL while disconnected */
	bool         pulling;     /* holds a PULL open (pullq.c) */
	int64_t      pull_seq;
	int          pull_free;
	uint64_t     pull_order;  /* its PULL's arrival, for the ties */
	int          pullq_at;    /* its place in pullq's heap + 1; 0: not there */
	int          pullq_free;  /* its pull_free as pullq counted it */
	/* Jobs on it, as the scheduler's last usage walk found (valid only
	 * when sched_gen is that walk's). */
	unsigned     sched_gen;
	int          sched_njobs;
	bool         sched_excl;  /* one of them asks for the whole host */
	struct served *sched_sv;  /* what the running pass gives it */
	/* Host lists (hostlist.c), kept in the database. */
	char       **aliases;     /* names it answers to; NULL: none */
	char       **users;       /* who may run jobs on it; NULL or empty: everyone */
	char       **owners;      /* who may reserve it besides managers */
	/* The reservations that hold it, waiting or active (resv.c's index). */
	const struct match_resv **resv;
	int          nresv;
	bool         stored;      /* exechost_reload: the database has its row */
};
TAILQ_HEAD(exechost_list, exechost);
void exechost_init(void);      /* the hosts of the database, before any calls */
void exechost_free_all(void);
/* After a rollback: each host's lists, aliases and disabled flag as the
 * database has them; a host it does not have (a REGISTER rolled back)
 * and no execd holds is forgotten.  resv_init must follow (its index). */
void exechost_reload(void);
/* From the tick: hosts silent for host_timeout are lost, their jobs end. */
void exechost_check_lost(void);
/* Whether a job may run again after a lost host, a vacate or exit 99 is
 * decided elsewhere; this is the -r flag with the queue's default. */
bool job_rerunnable(const struct job *j);
void exechost_register(struct conn *c, int64_t seq, json_t *msg);
void exechost_load(struct conn *c, int64_t seq, json_t *msg);
void exechost_pull(struct conn *c, int64_t seq, json_t *msg);
void exechost_child_register(struct conn *c, int64_t seq, json_t *msg);
void exechost_child_term(struct conn *c, int64_t seq, json_t *msg);
void exechost_conn_gone(struct conn *c);
struct exechost *exechost_find(const char *name);
/* The accounting row of an attempt that ended; ru NULL: no usage known. */
struct job_rusage;
void acct_record(const struct job *j, int failed, const struct job_rusage *ru);
/* Walks every host the master knows since it started, by name (the order
 * of the database's hosts table): NULL gives the first. */
struct exechost *exechost_next(struct exechost *h);
size_t exechost_count(void);
/* Every host for HOSTS, by name; with each one's jobs when with_jobs (only
 * only_owner's when not NULL). */
json_t *exechost_list_json(bool with_jobs, const char *only_owner);
/* Asks the job's execd to signal it; false when its host is not connected. */
bool exechost_signal_job(const struct job *j, int sig);

/* qmod.c: disable/enable queues and hosts (kept in the database), suspend,
 * unsuspend, clear error state. */
bool qmod_host_disabled(const char *name);
/* The queues whose instance on host name qmod -d QUEUE@HOST disabled. */
char **qmod_instances_disabled(const char *name);
void qmod_apply_queues(void);   /* after conf_load: the stored flags */
/* A host that could not take a job's staged inputs (its cache, its disk,
 * its link) is disabled, as qmod -d would, so no job is lost into it;
 * qmod -e HOST once it is mended. */
void qmod_host_fault(struct exechost *h, const char *why);
/* Attempts a job gets whose inputs its hosts could not take. */
#define STAGE_HOST_TRIES 3
void qmod_disable(struct conn *c, int64_t seq, json_t *msg);
void qmod_enable(struct conn *c, int64_t seq, json_t *msg);
/* HOLD, RELEASE, SUSPEND, UNSUSPEND and CLEAR of jobs (and tasks). */
void qmod_job(struct conn *c, int64_t seq, json_t *msg);
/* Whether op acts on an array's tasks (suspension), not on its own row. */
bool qmod_op_per_task(job_op op);

/* pullq.c: the hosts holding a PULL open that may take work, by load. */
/* After h's pulling, disabled or lost flag, pull_free or load changed. */
void pullq_sync(struct exechost *h);
void pullq_add(struct exechost *h, int64_t seq, int free_slots);  /* a PULL */
void pullq_cancel(struct exechost *h);   /* its PULL is answered or gone */
struct exechost *pullq_take(void);       /* the best, off the heap (pullq_sync puts it back) */
int  pullq_count(void);                  /* hosts on the heap */
int  pullq_free(void);                   /* their free slots */
bool pullq_any(void);                    /* any PULL open, disabled hosts' too */

/* sched.c: matching pending jobs to open PULLs. */
void sched_kick(void);        /* something may have become runnable */
void sched_run(void);         /* from the commit step, inside the transaction */
bool sched_wanted(void);
struct user_cache;
/* The queue checks of SUBMIT and ALTER: users and groups, max_queued,
 * h_rt/h_vmem defaults (applied to j) and maxima, hosts=, and unless
 * !verify, that some registered host could ever run j.  -1 with err. */
int  sched_admit(struct job *j, const struct user_cache *u, bool verify, char *err, size_t n);
/* Why a pending job waits, for qstat -j; "" when nothing holds it back. */
void sched_why(const struct job *j, char *buf, size_t n);

/* match.c: can a host run a job: pure, so unit tests can drive it. */
/* A reservation holding a host, as matching needs it. */
struct match_resv {
	char    *name;
	char    *owner;
	char   **users;        /* who may run inside besides the owner; NULL: none */
	int64_t  start, end;   /* ms */
	bool     active;       /* its window is open */
};
/* May j run inside r (its owner is r's owner or one of its users)? */
bool match_resv_admits(const struct match_resv *r, const struct job *j);
struct match_host {
	const char              *name;
	const struct host_attrs *attrs;
	int                      slots;
	int                      free;        /* free slots now */
	uid_t                    uid;         /* the execd's uid: 0 runs anyone's */
	bool                     disabled, lost;
	char *const             *qdisabled;   /* queues disabled on this host alone */
	bool                     has_jobs;    /* runs any job */
	bool                     has_exclusive; /* runs a job asking for the whole host */
	char *const             *users;       /* the host's users list; NULL or empty: everyone */
	const struct match_resv *const *resv; /* the reservations holding it */
	int                      nresv;
	int64_t                  now;         /* ms, for reservation windows */
	nodeset_name_fn          names;       /* what names in expressions mean; NULL: host names */
	void                    *names_arg;
};
/* Why a host does not fit, in the order the checks run: a later value is
 * "closer" to fitting.  The reservation reasons name it in *key. */
enum match_why {
	MW_OK = 0, MW_USER, MW_SLOTS, MW_ARCH, MW_MEM, MW_KEY, MW_KEYS_APART, MW_QUEUE_HOSTS,
	MW_HOSTS, MW_AR, MW_HOST_USERS, MW_LOST, MW_DISABLED, MW_QUEUE_DISABLED, MW_AR_WAIT, MW_RESERVED,
	MW_RESV_SOON, MW_EXCLUSIVE, MW_BUSY,
};
/* now false: could the host ever run the job (its attributes and host
 * sets only); true: could it start it at once.  *key names the missing key. */
enum match_why match_host(const struct job *j, const struct nodeset *job_hosts,
    const struct qm_queue *q, const struct match_host *h, bool now, const char **key);
/* "no idle host has key matlab": the reason for people, after the best
 * (largest) why over the hosts; who is "host" or "idle host". */
void match_reason(char *buf, size_t n, enum match_why why, const struct job *j,
    const struct qm_queue *q, const char *key, const char *who);
/* After MW_KEY on every host: MW_KEYS_APART when each of the job's keys
 * is on one of the nhosts hosts' keys but no host has them all, else
 * MW_KEY with *key a key no host has. */
enum match_why match_keys_apart(const struct job *j, char **const *hosts_keys, size_t nhosts,
    const char **key);
/* The first of keys that none of the nhosts hosts' key lists holds, or NULL. */
const char *match_key_nowhere(char *const *keys, char **const *hosts_keys, size_t nhosts);
/* Dispatch order: queue priority, job priority, submission order (id). */
int  match_job_cmp(const struct job *a, int qprio_a, const struct job *b, int qprio_b);
/* How many of j's soft requests (-soft -l: arch, memory, each key, the
 * hosts expression, parsed in soft_hosts) host h meets; higher is better. */
int  match_soft_score(const struct job *j, const struct nodeset *soft_hosts, const struct match_host *h);
/* Host preference: lower load per rating first. */
int  match_host_cmp(double load_a, double rating_a, double load_b, double rating_b);
/* Sizes as qsub takes them back: 64G, 512M, 1000 bytes. */
void match_fmt_size(char *buf, size_t n, int64_t bytes);
void match_fmt_time(char *buf, size_t n, int64_t secs);

/* pe.c: parallel jobs: where their slots go, and the life of their parts. */
/* A part's or task's state in the job's record. */
enum { PART_DISPATCHED = 0, PART_RUNNING = 1, PART_ENDED = 2 };
/* Gives out[i] slots to host i (free[i] free slots, hosts in order of
 * preference) so that nslots are placed under rule; returns how many hosts
 * take part, or 0 when they cannot hold the job now. */
int   pe_alloc(int rule, int nslots, const int *free, int nhosts, int *out);
/* The most slots from min to max that pe_alloc can place now (into out),
 * or 0. */
int   pe_grant(int rule, int min, int max, const int *free, int nhosts, int *out);
/* The fewest slots a job takes: the low end of its -pe range, else all. */
#define PE_JOB_MIN(j) ((j)->slots_min ? (j)->slots_min : (j)->slots)
/* "fill_up", "$round_robin", "4" ...: the rule, or 0 for a bad word. */
void  pe_rule_name(char *buf, size_t n, int rule);
/* The rule of a job: its PE's, or 1 per host for -n alone. */
int   pe_job_rule(const struct job *j);
char *pe_conf_text(const struct qm_pe *pe);
/* SUBMIT's checks of -pe and -n; -1 with err in Grid Engine's words. */
int   pe_admit(const struct job *j, char *err, size_t n);
/* The parts of a dispatched job: hosts (master first) and their slots. */
void  pe_parts_store(const struct job *j, char *const *hosts, const int *slots, int nparts);
/* [{host, slots}] of the job's current attempt, or NULL. */
json_t *pe_hosts_json(const struct job *j);
/* The job's hosts as a NULL-terminated list (its host field split). */
char **pe_host_list(const struct job *j);
bool  pe_signal(const struct job *j, int sig);
/* CHILD_REGISTER / CHILD_TERM of one part (inside the transaction). */
struct msg_child_register;
struct msg_child_term;
void  pe_child_register(struct conn *c, struct job *j, const struct msg_child_register *m);
void  pe_child_term(struct conn *c, struct job *j, const struct msg_child_term *m);
/* The parts on host are gone (listed: what its execd still has, from its
 * REGISTER; NULL when the host itself is declared lost): each ends failed
 * with why and the job's other parts are killed. */
void  pe_host_lost(const char *host, const struct msg_attempts *listed, const char *why);
/* The parts' and tasks' record (meta "pe.ID") of the job's attempt, or
 * NULL; pe_save replaces it (NULL: removes it) in the turn's transaction. */
json_t *pe_load(const struct job *j);
void  pe_save(const struct job *j, json_t *o);
/* Ends the job when its last part and task have ended, else saves o. */
void  pe_settle(struct job *j, json_t *o);
bool  pe_signal_host(const struct job *j, const char *host, int sig);

/* petask.c */
/* INHERIT (qrsh -inherit): a task of a running parallel job on one of its hosts. */
void  petask_request(struct conn *c, int64_t seq, json_t *msg);
/* A task's CHILD_REGISTER and CHILD_TERM (m->petask > 0). */
void  petask_register(struct conn *c, struct job *j, const struct msg_child_register *m);
void  petask_term(struct conn *c, struct job *j, const struct msg_child_term *m);

/* deps.c: dependencies and start times. */
struct deps;
/* The SUBMIT's "deps" ([{kind, job}]) resolved against the jobs there are
 * (ids, or names and patterns of owner's jobs); NULL with err if one names
 * nothing or is malformed.  Nothing is changed. */
struct deps *deps_resolve(const json_t *list, const struct job *j, char *err, size_t errlen);
void         deps_free(struct deps *d);
/* Before the job is stored: sets HOLD_TIME and HOLD_DEP as needed, or ends
 * the job as failed when a dependency can never be met.  Returns how many
 * dependencies it waits for. */
int          deps_submit(struct job *j, const struct deps *d);
/* After the job is stored (it has its id): records what it waits for. */
void         deps_store(const struct job *j, const struct deps *d);
/* A job started / reached a final state: release or fail its dependents,
 * down the whole chain. */
void         deps_job_started(const struct job *j);
void         deps_job_ended(const struct job *j);
/* From the tick: jobs whose start time has come (inside a transaction). */
void         deps_tick(int64_t now);
/* [{id, kind}] the job still waits for. */
json_t      *deps_waiting_json(int64_t id);
/* [{id, kind}] the jobs that still wait for it. */
json_t      *deps_successors_json(int64_t id);
/* -hold_jid_ad: the arrays an array job's tasks wait for, task i for their
 * task i (by position); NULL when none is left unfinished. */
struct deps_gates;
struct deps_gates *deps_gates_open(const struct job *j);
void               deps_gates_close(struct deps_gates *g);
int                deps_task_ready(const struct deps_gates *g, int task);
int64_t            deps_task_gate(const struct deps_gates *g, int task, int *their_task);

/* http.c: the status page, /api/v1/ and /metrics on http_listen (off when
 * unset); the scheduler and the commit feed its histograms. */
int  http_start(void);
void http_stop(void);
void http_observe_dispatch(const struct job *j);
void http_observe_commit(int64_t usec);

/* cron.c: cron entries. */
/* SUBMIT with "cron": stores the entry for the checked job j (borrowed)
 * and replies. */
void cron_submit(struct conn *c, int64_t seq, const char *spec, struct job *j);
/* From the tick: one job per due entry (inside a transaction). */
void cron_tick(int64_t now);
void cron_request(struct conn *c, int64_t seq, json_t *msg);
/* The entries as qstat --cron lists them: one owner's, or all (NULL);
 * NULL when the database cannot be read. */
json_t *cron_list_json(const char *only_owner);

/* mailer.c: mail about jobs (qsub -m/-M). */
void    mailer_init(void);
void    mailer_shutdown(void);
/* Events of a job: each stores a message when the job asked for it. */
void    mail_job_started(const struct job *j);
void    mail_job_ended(const struct job *j);
void    mail_job_suspended(const struct job *j);
/* A message to every admin_mail address (host lost, jobs requeued). */
void    mail_admin(const char *subject, const char *body);
/* The same, handed to the mailer now without the outbox (which needs the
 * database), and not retried: for a spool that is full. */
void    mail_admin_now(const char *subject, const char *body);
/* A message to one user (a reservation's owner). */
void    mail_user(const char *to, const char *subject, const char *body);
/* {count, error, next_try} of a job's undelivered mail, or NULL. */
json_t *mail_pending_json(int64_t job_id);

/* array.c: array jobs (qsub -t, -tc) and their tasks. */
struct array_sched;
struct task_range;
struct jtext;
/* A scheduler pass over one array (j, the parent, must outlive it). */
struct array_sched *array_sched_open(struct job *j);
/* The next task to dispatch, as a task view to hand to the dispatch (the
 * caller frees it), or NULL when none is pending or -tc is reached. */
struct job *array_sched_next(struct array_sched *a);
bool        array_sched_done(const struct array_sched *a);
void        array_sched_close(struct array_sched *a);
/* A task reached a final state: ends the parent after its last task. */
void        array_task_ended(const struct job *t);
/* The view of task of p (the caller frees it): its row, or one made from
 * p, pending, or deleted when p has ended; NULL when p has no such task. */
struct job *array_task_view(const struct job *p, int task);
bool        array_started(const struct job *p);
/* One task's own hold released: its row goes and it is pending with the
 * others.  false when it has no row of its own (its hold is its array's). */
bool        array_task_unhold(struct job *t);
/* Every task of p held on its own released (qrls of the whole array). */
void        array_unhold_all(struct job *p);
/* op on each task of p in only (task views: hold, release, suspend,
 * resume), each result added to results; only NULL: every running task. */
void        array_task_op(struct conn *c, struct job *p, const struct task_range *only, job_op op,
    json_t *results);
void        array_fail_pending(struct job *p, const char *why);
/* qdel of the whole array (only NULL) or of some of its tasks. */
const char *array_delete(struct conn *c, struct job *j, const struct task_range *only,
    char *buf, size_t n, bool *ok);
/* A listing's rows: the pending tasks' line, then one per task out of it. */
void        array_brief(struct store *st, const struct job_brief *j, struct jtext *t, int64_t *n);
/* Adds "tasks_pending" (and with_tasks, "tasks": every task's row) to o. */
void        array_status_json(struct store *st, const struct job *j, json_t *o, bool with_tasks);
/* An execd (re)registered listing jobs ({id, task, attempt}): tasks it
 * does not have are pending again if they never started, else failed. */
void        array_reconcile(const char *host, const struct msg_attempts *listed);
/* Why an array's pending tasks wait when -tc holds them back: false if not. */
bool        array_why(const struct job *j, char *buf, size_t n);
/* Every dispatched or running task (host NULL: anywhere), as task views. */
int         array_tasks_active(const char *host, int (*cb)(void *, struct job *), void *arg);

/* perm.c: who may do what: the one place those decisions are made. */
const char *perm_name(enum perm p);
/* Does c's identity pass the check p of a request's row? */
bool perm_allows(const struct conn *c, enum perm p);
/* May c change something owned by owner under the request being handled
 * (its owner, a manager, or an operator where the table says so)? */
bool perm_may_touch(const struct conn *c, const char *owner);
/* Does someone (an operator or manager: operator) see everyone's jobs? */
bool perm_sees_all(bool operator);
bool perm_manager(const struct conn *c);
/* Whether user (uid) is a manager, and an operator (a manager is one). */
void perm_roles(const char *user, uid_t uid, bool *manager, bool *operator);
/* The HOLD_* bits c may set or clear on a job it may touch (qalter -h). */
unsigned perm_hold_bits(const struct conn *c);
bool perm_job_private(const struct conn *c, const char *owner);
/* May c start a qrsh -inherit task of j on host?  NULL, or why in buf. */
const char *perm_inherit(const struct conn *c, int64_t id, const struct job *j, const char *host,
    char *buf, size_t n);
bool perm_reserve_host(const struct conn *c, const struct exechost *h);
struct resv;
bool perm_resv(const struct conn *c, const struct resv *r);
/* May c read j's staged files (STAGE_GET)? */
bool perm_stage_read(const struct conn *c, const struct job *j);

/* stage.c: file staging: SPOOL/stage/, STAGE_PUT, STAGE_GET, the limits. */
void stage_init(void);
void stage_put(struct conn *c, int64_t seq, json_t *msg);
void stage_get(struct conn *c, int64_t seq, json_t *msg);
/* SUBMIT: the job's inputs are here and within the limits; 0, or -1 with
 * one sentence in err. */
int  stage_admit(const struct job *j, uid_t uid, char *err, size_t n);
/* A closed connection's uploads wait for their client to come back. */
void stage_conn_gone(struct conn *c);
/* Stale uploads and files no job names any more go. */
void stage_tick(int64_t now);
/* A standby promoted: the uploads the primary shipped to it as they came
 * wait for their clients, as those of a lost connection do. */
void stage_promoted(void);
/* For stage_repl.c: SPOOL/stage/, a file's path there (to free), whether
 * it is there (size -1: any), STAGE_PUT's reply, and a chunk shipped by
 * the primary (1: the file is complete and durable, 0: more to come, -1). */
const char *stage_spool(void);
char *stage_blob(const char *sha);
bool  stage_have(const char *sha, int64_t size);
void  stage_reply(struct conn *c, int64_t seq, bool have, int64_t off);
struct evbuffer;
struct msg_stage_blob;
int   stage_blob_chunk(const struct msg_stage_blob *m, struct evbuffer *in, size_t len, char *err,
    size_t n);

/* stage_repl.c: staged files shipped to the standby (doc/staging.md):
 * an upload's chunks as they come (stream, grow; abandon when it is
 * dropped), then the stored file's rest (ship). */
void stage_repl_ship(const char *sha, int64_t size);
void stage_repl_stream(const char *sha, int64_t size, const char *tmp, uid_t uid);
void stage_repl_grow(const char *sha, const char *tmp, int64_t avail);
void stage_repl_abandon(const char *sha, const char *tmp);
void stage_repl_touch(const char *sha, int64_t size);
/* The STAGE_PUT reply to (c, seq) waits for the in-sync standby's copy: true. */
bool stage_repl_wait(const char *sha, struct conn *c, int64_t seq);
void stage_repl_pump(void);
void stage_repl_tick(void);
void stage_repl_stored(struct conn *c, int64_t seq, json_t *msg);
void stage_repl_want(struct conn *c, int64_t seq, json_t *msg);
void stage_repl_offer(struct conn *standby);
bool stage_repl_idle(void);
void stage_repl_standby_gone(void);
void stage_repl_conn_gone(struct conn *c);
/* The standby's read of its primary's link: staged files' frames (trusted:
 * the primary proved itself) taken and handled here; 1 with any other
 * frame in *msg, 0 when more bytes must come, -1 with why. */
int  stage_repl_frame_take(struct evbuffer *in, json_t **msg, bool trusted, const char **why);
void stage_repl_frame_reset(void);

/* hostlist.c: aliases, host users and owners, and what names in node-set
 * expressions denote. */
void hostlist_init(void);       /* after exechost_init: the aliases */
/* Resolvers for nodeset_contains, arg the struct exechost (or NULL: looked
 * up by name): a host's own name, its aliases, and the reservations holding
 * it, those open now (_now) or any (_ever: could it ever run there). */
bool hostlist_name_now(void *arg, const char *name, const char *host);
bool hostlist_name_ever(void *arg, const char *name, const char *host);
/* Is name a host, alias or reservation name?  arg: an extra NULL-terminated
 * list of host names (those of the database), or NULL. */
bool hostlist_known(void *arg, const char *name);
bool hostlist_is_alias(const char *name);
/* Alias and reservation names: a letter, then letters, digits, - . _. */
bool hostlist_valid_name(const char *s);
bool strv_has(char *const *v, const char *s);
/* The hosts an expression denotes now, sorted; NULL with err if it does
 * not parse or names something unknown. */
char **hostlist_eval(const char *expr, char *err, size_t n);
void hostlist_request(struct conn *c, int64_t seq, json_t *msg);

/* resv.c: reservations. */
#define RESV_EXCLUSIVE 0x1u   /* -x: jobs of others are vacated at start */
#define RESV_OVERRUN   0x2u   /* -o: its jobs are not killed at the end */
struct resv {
	TAILQ_ENTRY(resv) entry;
	struct match_resv m;
	uid_t    uid;
	char   **hosts;
	unsigned flags;
	unsigned mail;          /* MAIL_BEGIN, MAIL_END */
	int64_t  created;
};
void resv_init(void);           /* after exechost_init: from the database */
void resv_free_all(void);
struct resv *resv_find(const char *name);
/* From the tick: windows that open or close (inside a transaction). */
void resv_tick(int64_t now);
/* The active reservation holding h, or NULL. */
const struct match_resv *resv_active_on(const struct exechost *h);
const struct match_resv *resv_next_on(const struct exechost *h);
/* The end of an attempt the reservation code killed: NULL if it did not,
 * else the reason (to free), and *requeue says whether the job runs again. */
char *resv_job_killed(const struct job *j, bool *requeue);
void resv_request(struct conn *c, int64_t seq, json_t *msg);
/* Every reservation as reserve -l --json lists it. */
json_t *resv_list_json(void);
void unresv_request(struct conn *c, int64_t seq, json_t *msg);

/* How long a submission key is kept: a qsub retried across a failover
 * comes back within seconds; a day leaves room for any client's retry. */
#define SUBMIT_KEY_KEEP_MS (24 * 3600 * 1000LL)

/* repl.c: which master is primary, and replication to the standby. */
enum repl_role { REPL_STARTING = 0, REPL_PRIMARY, REPL_STANDBY };
/* At start-up (store and loop ready): probe the other master, then serve
 * as primary or follow as standby.  rejoin: we stepped down; follow. */
void           repl_start(char **argv, bool rejoin);
void           repl_stop(void);
enum repl_role repl_role(void);
const char    *repl_role_name(void);
int64_t        repl_epoch(void);
const char    *repl_primary_addr(void);   /* a standby's primary, or NULL */
/* Primary that may accept writes: no peer configured, or a fresh lease
 * from the standby, or from a majority of the registered execds. */
bool           repl_writable(void);
/* From any thread: true when this master is a primary whose writability
 * needs no check of the loop's (no standby, or the standby's lease is
 * fresh); false means "ask the loop".  Its epoch in *epoch. */
bool           repl_surely_writable(int64_t *epoch);
/* The highest sequence sent to an in-sync standby and not yet acknowledged, or 0. */
int64_t        repl_unacked(void);
/* The highest sequence whose replies may go (with a standby configured);
 * safe to call from any thread. */
int64_t        repl_released(void);
/* After each commit: ship the changeset, hold or release the replies. */
void           repl_committed(void);
void           repl_become_primary(int64_t epoch, const char *why);
int64_t        repl_quiet_ms(void);       /* standby: since the primary's last frame */
bool           repl_following(void);      /* standby: linked to the primary */
bool           repl_primary_gone(void);   /* standby: the primary's port refused us: it is dead */
void           repl_conn_gone(struct conn *c);
void           repl_probe(struct conn *c, int64_t seq, json_t *msg);
void           repl_sync(struct conn *c, int64_t seq, json_t *msg);
void           repl_applied(struct conn *c, int64_t seq, json_t *msg);
void           repl_heartbeat(struct conn *c, int64_t seq, json_t *msg);
void           repl_masters(struct conn *c, int64_t seq, json_t *msg);
/* The standby's connection (and whether replies wait for it), or NULL;
 * the in-sync check again once staged files reached it; a frame from a
 * standby to its primary. */
struct conn   *repl_standby_conn(bool *in_sync);
void           repl_check_in_sync(void);
void           repl_up_send(json_t *msg);
/* Every master: name, role, epoch, seq, lag, since...; "self" marks this one. */
json_t        *repl_masters_json(void);

/* failover.c: votes, leases, promotion. */
bool failover_have_majority(void);
/* The highest sequence a majority of the registered execds has echoed. */
int64_t failover_witness_seq(void);
void failover_tick(int64_t now);
void failover_vote(struct conn *c, int64_t seq, json_t *msg);
void failover_takeover(struct conn *c, int64_t seq, json_t *msg);
void failover_conn_gone(struct conn *c);
void failover_free(void);

/* space.c: a full spool. */
/* Before the database is opened: takes the reserve, or starts full. */
void space_init(void);
bool space_full(void);
/* Whether a request of type t on c waits for space (refused with ERR_NOSPACE). */
bool space_refuses(const struct conn *c, enum msg_type t);
/* A commit failed for want of space (and was rolled back). */
void space_commit_failed(void);
/* Once a second: recovery, and mail to the admins. */
void space_tick(void);

/* main.c: the loop, the group commit, the periodic duties. */
/* The loop's priorities.  Everything is PRIO_WORK (libevent's default, the
 * middle one) except what a new connection does until it asks for work:
 * its accept and its HELLO wait, one callback at a time, for the commits,
 * dispatches and execd messages that are due, so a storm of qstat
 * connections cannot queue ahead of them. */
enum { PRIO_WORK = 1, PRIO_NEW = 2, PRIO_COUNT = 3 };

extern struct qm_conf *conf;
extern struct store   *store;
extern struct event_base *base;
/* Opens the loop turn's transaction (if not yet open) and makes sure the
 * commit runs after every request already read this turn. */
void qm_txn(void);
/* Requests the commit step even without a mutation (to run the scheduler). */
void qm_wake(void);
bool qm_is_manager(const char *user, uid_t uid);
bool qm_is_operator(const char *user);
/* The daemon identity, which alone may register an execd, act as the
 * other master or cast an execd's vote: root, the user qmaster runs as,
 * and admin_user. */
bool qm_is_daemon(uid_t uid);
/* Becoming primary: hosts, queue flags, mailer and the tick start. */
void qm_serve(void);

#endif
