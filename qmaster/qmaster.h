/* qmaster.h: the queue master's shared declarations, sectioned by the file that defines them. */
#ifndef NOWQ_QMASTER_H
#define NOWQ_QMASTER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
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

/* conf.c: qmaster.conf, read with libconfuse. */
struct qm_queue {
	char *name;
	int   priority;
	char *hosts;           /* node-set expression; "@all" until issue 4 adds more */
	bool  disabled;        /* qmod -d QUEUE: nothing new starts from it */
};

struct qm_conf {
	char            *path;
	char            *spool_dir;
	char            *listen;        /* HOST:PORT, or NULL */
	char            *listen_host;
	int              listen_port;
	char            *unix_socket;   /* or NULL */
	char            *auth;          /* "none" | "munge" */
	char           **managers;      /* NULL-terminated */
	int              log_level;
	char            *log_file;
	char            *pid_file;
	int64_t          finished_keep_ms;
	int64_t          host_timeout_ms; /* silence after which a host is lost */
	bool             show_all_jobs;
	size_t           max_frame;
	struct qm_queue *queues;
	int              nqueues;
};
/* Returns NULL and prints "FILE:LINE: problem" on a bad file. */
struct qm_conf        *conf_load(const char *path);
void                   conf_free(struct qm_conf *c);
const struct qm_queue *conf_queue(const struct qm_conf *c, const char *name);

/* net.c: listeners, connections, framing, and replies held until commit. */
enum conn_role { ROLE_NONE = 0, ROLE_CLIENT = 1, ROLE_EXECD = 2 };

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
	struct exechost     *host;          /* execd connections, after REGISTER */
	bool                 closing;       /* close once the output drains */
	int                  refs;          /* outgoing messages still queued for it */
	bool                 dead;          /* closed while still referenced */
};

int  net_listen(void);
void net_shutdown(void);
/* Queues msg (stolen) for c: sent at once when no transaction is open, else
 * right after the commit, in the order queued. */
void net_send(struct conn *c, json_t *msg);
/* Sends the messages held for the commit (after a successful commit). */
void net_flush_held(void);
void net_close(struct conn *c, const char *why);

/* request.c: the one table of request handlers, and client requests. */
void request_dispatch(struct conn *c, json_t *msg);
/* A job reached a final state: answer WAITs for it. */
void request_job_finished(const struct job *j);
/* A connection went away: forget its WAITs. */
void request_conn_gone(struct conn *c);
/* DELETE, HOLD, RELEASE and qmod's job requests: the walk over "jobs" (ids)
 * or "users", the owner-or-manager check, one op per job; the reply lists
 * each job's result.  An op stores its change and says how it went in buf. */
typedef const char *(*job_op)(struct conn *c, struct job *j, char *buf, size_t n, bool *ok);
void request_job_op(struct conn *c, int64_t seq, json_t *msg, job_op op, const char *verb);
/* Users as the master's own user database knows them, cached: NSS lookups
 * can be slow and the loop must not wait on them often. NULL: no such uid. */
struct user_cache {
	uid_t    uid;
	char    *name;
	char    *home;
	gid_t    gid;
	gid_t   *groups;
	int      ngroups;
	int64_t  fetched;
};
const struct user_cache *user_lookup(uid_t uid);

/* exechost.c: exec hosts and their messages. */
struct exechost {
	TAILQ_ENTRY(exechost) entry;      /* all hosts */
	TAILQ_ENTRY(exechost) pull_entry; /* hosts with a PULL open */
	char        *name;
	int          slots;
	uid_t        uid;         /* the execd's uid: 0 runs anyone's jobs */
	struct host_attrs attrs;  /* from its REGISTER */
	bool         disabled;    /* qmod -d HOST: takes no new work */
	bool         lost;        /* no LOAD for host_timeout: state unknown */
	char        *busy_reason; /* why its execd says it is not idle, or NULL */
	double       load[3];
	bool         idle;
	int64_t      last_seen;   /* ms */
	struct conn *conn;        /* NULL while disconnected */
	bool         pulling;
	int64_t      pull_seq;
	int          pull_free;
};
TAILQ_HEAD(exechost_list, exechost);
extern struct exechost_list pulling_hosts;
void exechost_init(void);      /* the hosts of the database, before any calls */
void exechost_free_all(void);
/* From the tick: hosts silent for host_timeout are lost, their jobs end. */
void exechost_check_lost(void);
/* Whether a job may run again after a lost host, a vacate or exit 99 is
 * decided elsewhere; this is the -r flag with the queue's default. */
bool job_rerunnable(const struct job *j);
const char *exechost_state(const struct exechost *h, bool suspended);
void exechost_register(struct conn *c, int64_t seq, json_t *msg);
void exechost_load(struct conn *c, int64_t seq, json_t *msg);
void exechost_pull(struct conn *c, int64_t seq, json_t *msg);
void exechost_child_register(struct conn *c, int64_t seq, json_t *msg);
void exechost_child_term(struct conn *c, int64_t seq, json_t *msg);
void exechost_conn_gone(struct conn *c);
struct exechost *exechost_find(const char *name);
/* Every host for HOSTS, by name; with each one's jobs when with_jobs (only
 * only_owner's when not NULL). */
json_t *exechost_list_json(bool with_jobs, const char *only_owner);
/* Asks the job's execd to signal it; false when its host is not connected. */
bool exechost_signal_job(const struct job *j, int sig);

/* qmod.c: disable/enable queues and hosts (kept in the database), suspend,
 * unsuspend, clear error state. */
bool qmod_host_disabled(const char *name);
bool qmod_queue_disabled(const char *name);
void qmod_apply_queues(void);   /* after conf_load: the stored flags */
void qmod_disable(struct conn *c, int64_t seq, json_t *msg);
void qmod_enable(struct conn *c, int64_t seq, json_t *msg);
void qmod_suspend(struct conn *c, int64_t seq, json_t *msg);
void qmod_unsuspend(struct conn *c, int64_t seq, json_t *msg);
void qmod_clear(struct conn *c, int64_t seq, json_t *msg);

/* sched.c: matching pending jobs to open PULLs. */
void sched_kick(void);        /* something may have become runnable */
void sched_run(void);         /* from the commit step, inside the transaction */
bool sched_wanted(void);

/* main.c: the loop, the group commit, the periodic duties. */
extern struct qm_conf *conf;
extern struct store   *store;
extern struct event_base *base;
/* Opens the loop turn's transaction (if not yet open) and makes sure the
 * commit runs after every request already read this turn. */
void qm_txn(void);
/* Requests the commit step even without a mutation (to run the scheduler). */
void qm_wake(void);
bool qm_is_manager(const char *user, uid_t uid);

#endif
