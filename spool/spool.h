/* spool.h: persistence shared by the daemons: the SQLite store of the master and spool-directory helpers. */
#ifndef NOWQ_SPOOL_H
#define NOWQ_SPOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/common.h"

/* store*.c: the master's database, DIR/nowq.db, WAL, synchronous=FULL,
 * foreign keys on, schema versioned by PRAGMA user_version.  Every SQL
 * statement of nowq lives in these files.  Functions return 0 on success and -1
 * on an SQLite error (logged with log_warnx); an error inside a transaction
 * means the caller must roll back. */
#define STORE_SCHEMA_VERSION 19

struct store;
struct store *store_open(const char *dir, const char **why);
void          store_close(struct store *st);
/* The database at path for reading only (qmaster --check, --dump), in one
 * read transaction: safe beside a live master.  NULL with why when it is not
 * a database, not nowq's, or from a newer nowq. */
struct store *store_open_readonly(const char *path, const char **why);
/* The same checks, for a thread that reads beside the master (qmaster's
 * reader): no transaction is held; each read is one snapshot, between
 * store_read_begin (which loads the snapshot's store_repl_seq) and
 * store_read_end.  A connection belongs to one thread. */
struct store *store_open_reader(const char *path, const char **why);
int           store_read_begin(struct store *st);
void          store_read_end(struct store *st);
/* Integrity check plus nowq's own invariants; prints problems to out, returns their count. */
int           store_check(struct store *st, FILE *out);
/* Every table's rows in primary-key order, one line each, the same for two
 * databases with the same content (a standby and its primary): diff them. */
int           store_dump(struct store *st, FILE *out);
int           store_schema_version(struct store *st);

/* Group commit: the master opens one transaction per loop turn. */
int  store_begin(struct store *st);
int  store_commit(struct store *st);
void store_rollback(struct store *st);
bool store_in_txn(const struct store *st);
/* Whether the last failure (a commit's, say) was for want of disk space. */
bool store_out_of_space(const struct store *st);

/* Replication (qmaster/repl.c).  With capture on, each transaction that
 * changes anything is numbered (meta repl.seq, written in it) and its
 * changeset (the session extension's format, every table with a key, and
 * sqlite_sequence) is kept after the commit until store_changeset_done. */
void        store_capture(struct store *st, bool on);  /* off: a standby's, foreign keys off too */
struct sqlite3 *store_sqlite(struct store *st);         /* the connection, for tests to compare with */
const void *store_changeset(struct store *st, int *n, int64_t *seq); /* NULL: none */
void        store_changeset_done(struct store *st);
int64_t     store_repl_seq(const struct store *st);
int64_t     store_epoch(struct store *st);              /* 1 when never set */
int         store_set_epoch(struct store *st, int64_t epoch);
/* The standby: applies changeset seq (which must follow the last one) and
 * records seq, in the open transaction (begun when none is); -1 with err,
 * everything since the last commit rolled back, when it does not apply.
 * store_apply_commit commits what was applied (the same on failure). */
int         store_apply(struct store *st, const void *cs, int n, int64_t seq, char *err, size_t errlen);
int         store_apply_commit(struct store *st, char *err, size_t errlen);
/* A consistent copy of the database in path (SQLite's online backup). */
int         store_backup(struct store *st, const char *path);
/* Submission keys (qsub's idempotency key): the job a key made, 0 when none. */
int64_t     store_key_job(struct store *st, const char *key);
int         store_key_put(struct store *st, const char *key, int64_t job_id, int64_t now);
int         store_key_purge(struct store *st, int64_t before);

/* Jobs.  store_job_insert assigns j->id (ids never repeat, even after purge)
 * and stores the script once per distinct content.  store_job_update writes
 * every mutable field (state, hold, error, delete_req, attempt, host, pid,
 * times, exit_status, signal, reason, rusage, prio, name, queue, req, rerun,
 * suspended, begin_time). */
int         store_job_insert(struct store *st, struct job *j);
int         store_job_update(struct store *st, const struct job *j);
/* Of j only what a dispatch and a start change: state, attempt, host, pid,
 * start_time (a task view's row whole, as store_job_update). */
int         store_job_run(struct store *st, const struct job *j);
struct job *store_job_get(struct store *st, int64_t id, bool with_script);
int         store_job_delete(struct store *st, int64_t id);

/* Iteration hands each job to cb, borrowed for the call only; cb returns
 * non-zero to stop.  Returns -1 on error, else 0. */
typedef int (*store_job_cb)(void *arg, struct job *j);
struct store_job_filter {
	unsigned     states;       /* bit (1 << JS_*) per wanted state; 0: all */
	const char  *owner;        /* NULL: anyone */
	const char  *host;         /* NULL: any */
	bool         with_script;  /* load script and env (DISPATCH needs them) */
	int64_t      after_id;     /* only jobs with a larger id (0: all) */
	bool         pending_arrays_only;  /* of the pending jobs, only arrays */
	bool         running_pending_tasks_only;  /* of the running jobs, only arrays
	                                          * with a task still pending (held
	                                          * on its own, or in error) */
	bool         usage;        /* only task, owner, queue, state, host, slots,
	                            * pe and req (ignored with brief or with_script) */
	int64_t      page;         /* > 0: at most that many jobs, read through the
	                            * state index (needs states and a brief
	                            * walk; no owner, host or arrays-only) */
};
int store_jobs_foreach(struct store *st, const struct store_job_filter *f, store_job_cb cb, void *arg);
/* The same walk for a listing: each job's brief row (its texts valid for
 * the call only), read without a struct job. */
typedef int (*store_brief_cb)(void *arg, const struct job_brief *b);
int store_briefs_foreach(struct store *st, const struct store_job_filter *f, store_brief_cb cb, void *arg);
/* Pending jobs in the listing's order, priority down then id up, from the
 * cursor (after_prio, after_id): the rest of that priority above the id,
 * then the lower priorities; among them the running arrays with a task
 * still pending (held on its own, or in error), for that task's line.  A
 * first page gives INT64_MAX and 0.  Each to cb as a job, or to bcb as a
 * brief row (the other NULL).  Stops when the callback returns nonzero. */
int store_pending_by_prio(struct store *st, int64_t after_prio, int64_t after_id, store_job_cb cb,
    store_brief_cb bcb, void *arg);
/* Pending jobs a host could start now, best first (prio desc, id asc): not
 * held, not in error; uid < 0 means any owner, else only that uid's.  Scripts
 * and env are loaded.  At most limit jobs (none when limit <= 0).  All rows
 * are read before the first callback, so cb may update the job it gets. */
int store_jobs_runnable(struct store *st, int64_t uid, int limit, store_job_cb cb, void *arg);
/* Removes finished jobs whose end_time is before before_ms; returns how many. */
int store_jobs_purge_finished(struct store *st, int64_t before_ms);
int64_t store_jobs_count(struct store *st, unsigned states);
/* Jobs by state in one query: counts[s] for each state s; 0 or -1. */
int store_jobs_count_by_state(struct store *st, int64_t counts[JS_DELETED + 1]);

/* Array tasks: a row per task that left the pending state (the pending
 * ones are the job's range minus its rows).  A task view is the job's
 * record with the task's own fields (task, attempt, state, error,
 * delete_req, host, pid, times, exit_status, signal, reason, usage,
 * suspended); store_job_update of a view (task > 0) writes its task's row,
 * creating it.  Rows go with their job. */
int         store_task_put(struct store *st, const struct job *j);
struct job *store_task_get(struct store *st, int64_t id, int task, bool with_script);
/* The task is pending again (it never started). */
int         store_task_delete(struct store *st, int64_t id, int task);
/* The task ids from `from` on that have rows, ascending; NULL on error,
 * else *n of them. */
int        *store_task_ids(struct store *st, int64_t id, int from, size_t *n);
/* An array's cursor: no task below it is pending (0: none dispatched yet). */
int         store_array_next(struct store *st, int64_t id);
int         store_array_set_next(struct store *st, int64_t id, int next);
struct store_task_counts {
	int64_t unfinished;   /* dispatched, running, or waiting in error */
	int64_t active;       /* dispatched or running */
	int64_t failed, deleted;  /* counted only when none is unfinished */
};
int store_task_counts(struct store *st, int64_t id, struct store_task_counts *c);
/* A job's task views in task order (states: bit (1 << JS_*) per wanted
 * state, 0 all); every job's dispatched and running ones, host NULL: any.
 * The callbacks must not write the store (the walk is still reading). */
int store_tasks_foreach(struct store *st, int64_t id, unsigned states, store_job_cb cb, void *arg);
int store_tasks_active(struct store *st, const char *host, store_job_cb cb, void *arg);

/* Accounting: one row per finished attempt, kept forever; storing the same
 * (id, task, attempt) again replaces its row, so a resent CHILD_TERM does not
 * count twice.  j gives who, where, when and how it ended (j->host may be a
 * blank-separated list, j->reason the failure's text); a the rest. */
struct acct_info {
	const char        *group;   /* the name of j->gid; NULL: unknown */
	int                failed;  /* Grid Engine's failed code: 0 ran and ended */
	struct job_rusage  ru;      /* wait4's and maxvmem; zero when the job never ran */
};
#define ACCT_FAILED_BEFORE	1    /* "assumedly before job": could not start */
#define ACCT_FAILED_LIMIT	37   /* ended by a limit of its own (h_rt, h_cpu, h_vmem) */
#define ACCT_FAILED_AFTER	100  /* "assumedly after job": killed, or its host lost */
int store_acct_insert(struct store *st, const struct job *j, const struct acct_info *a);
/* Rows in (end_time, id) order, each walking one index: by job id, else by
 * job name, else by owner, else by end time.  A row is handed to cb as a
 * JSON object (borrowed; doc/protocol.md, ACCT); cb returns non-zero to stop. */
struct store_acct_filter {
	int64_t      job_id;     /* 0: any */
	const char  *name;       /* NULL: any */
	const char  *owner;      /* NULL: anyone */
	const char  *project;    /* qacct -P: NULL: any */
	const char  *account;    /* qacct -A: NULL: any */
	int64_t      since;      /* only rows with end_time >= since (ms) */
	const char  *queue;      /* NULL: any */
	const char  *host;       /* NULL: any; else one of the row's hosts, any case */
	const char  *group;      /* NULL: any */
	const char  *pe;         /* NULL: any; NONE: no parallel environment */
	int64_t      slots;      /* 0: any */
	int64_t      from, to;   /* start_time (end_time with by_end) in [from, to); to 0: open */
	bool         by_end;
	int64_t      after_end;  /* the cursor: only rows after (after_end, after_row) */
	int64_t      after_row;
	int          limit;      /* at most this many rows; <= 0: no limit */
};
typedef int (*store_acct_cb)(void *arg, json_t *row);
int store_acct_foreach(struct store *st, const struct store_acct_filter *f, store_acct_cb cb, void *arg);
/* Sums of wallclock, utime and stime, the count and the largest maxvmem of
 * the rows f selects, as one total or one row per group: by the first host
 * of each row (a parallel job's master host), queue, group, owner, parallel
 * environment and slots, as groups asks; a group with no row is left out. */
#define ACCT_BY_HOST	1
#define ACCT_BY_QUEUE	2
#define ACCT_BY_OWNER	4
#define ACCT_BY_GROUP	8
#define ACCT_BY_PE	16
#define ACCT_BY_SLOTS	32
int store_acct_summary(struct store *st, const struct store_acct_filter *f, unsigned groups,
    store_acct_cb cb, void *arg);
/* The final state of a job's last attempt: 0 and *state, 1 if none, -1 error. */
int store_acct_last_state(struct store *st, int64_t id, enum job_state *state);

/* Cron entries: a schedule and the job (JSON text, script included) each
 * tick makes an ordinary job of.  Walks read all rows before the first
 * callback (which may update them and gets them borrowed); cb returns
 * non-zero to stop. */
struct cron_rec {
	int64_t   id;
	char     *owner;
	uint32_t  uid;
	char     *spec;       /* as given: "0 3 * * *", "@daily" */
	char     *job;        /* the job as submitted, JSON */
	int64_t   next_run;   /* ms */
	int64_t   last_job;   /* the id of the latest job made, 0: none yet */
	bool      hold;       /* paused (qhold) */
	int64_t   created;    /* ms */
};
typedef int (*store_cron_cb)(void *arg, struct cron_rec *r);
int              store_cron_insert(struct store *st, struct cron_rec *r);   /* sets r->id */
int              store_cron_update(struct store *st, const struct cron_rec *r); /* next_run, last_job, hold */
int              store_cron_delete(struct store *st, int64_t id);
struct cron_rec *store_cron_get(struct store *st, int64_t id);              /* NULL: none */
int              store_cron_foreach(struct store *st, store_cron_cb cb, void *arg);
/* Entries not paused whose next_run is at or before now, soonest first. */
int              store_cron_due(struct store *st, int64_t now, store_cron_cb cb, void *arg);
void             cron_rec_free(struct cron_rec *r);

/* Mail outbox: a message stays until its mailer exited 0. */
typedef int (*store_mail_cb)(void *arg, int64_t id, int64_t job_id, const char *message, int attempts);
int store_mail_add(struct store *st, int64_t job_id, const char *message, int64_t now);
/* At most limit messages whose next try has come, oldest first; all rows
 * are read before the first callback. */
int store_mail_due(struct store *st, int64_t now, int limit, store_mail_cb cb, void *arg);
int store_mail_done(struct store *st, int64_t id);
int store_mail_retry(struct store *st, int64_t id, int attempts, int64_t next_try, const char *error);
/* How many of a job's messages wait, the latest error, and the next try. */
int store_mail_of_job(struct store *st, int64_t job_id, int *count, char **last_error, int64_t *next_try);

/* Dependencies: (job, dep, kind) rows, one per condition job still waits
 * for (kinds are deps.c's).  Walks read all rows before the first callback;
 * cb returns non-zero to stop. */
typedef int (*store_dep_cb)(void *arg, int64_t id, int kind);
int     store_dep_add(struct store *st, int64_t job, int64_t dep, int kind);
int     store_dep_remove(struct store *st, int64_t job, int64_t dep, int kind);
int     store_deps_of(struct store *st, int64_t job, store_dep_cb cb, void *arg);   /* (dep, kind) */
int     store_dependents(struct store *st, int64_t dep, store_dep_cb cb, void *arg); /* (job, kind) */
/* The rows that hold the job: all but STORE_DEP_ARRAY's (-hold_jid_ad),
 * which gate its tasks instead. */
#define STORE_DEP_ARRAY 5
int64_t store_deps_count(struct store *st, int64_t job);
/* Jobs held for a start time (HOLD_TIME) whose time has come: (id, 0). */
int     store_jobs_begin_due(struct store *st, int64_t now, store_dep_cb cb, void *arg);

/* Hosts the master has seen (name, slots, last load, last contact, and
 * the attributes of its last REGISTER as JSON text). */
struct host_rec {
	char    *name;
	int      slots;
	double   load[3];
	int64_t  last_seen;   /* ms */
	char    *attrs;       /* NULL: none known */
	char   **users;       /* who may run jobs there; NULL: everyone */
	char   **owners;      /* who may reserve it besides managers; NULL: nobody */
};
/* The upsert leaves users and owners as they are. */
int store_host_upsert(struct store *st, const struct host_rec *h);
typedef int (*store_host_cb)(void *arg, const struct host_rec *h);
int store_hosts_foreach(struct store *st, store_host_cb cb, void *arg);
int store_host_lists(struct store *st, const char *host, char *const *users, char *const *owners);

/* Aliases: one (name, host) row per host an alias names.  host NULL
 * deletes the whole alias. */
typedef int (*store_alias_cb)(void *arg, const char *name, const char *host);
int store_alias_add(struct store *st, const char *name, const char *host);
int store_alias_delete(struct store *st, const char *name, const char *host);
int store_aliases_foreach(struct store *st, store_alias_cb cb, void *arg);

/* Reservations (an ended one is deleted). */
struct resv_rec {
	char    *name;
	char    *owner;
	int64_t  uid;
	char   **users;       /* who may run inside besides the owner; NULL: none */
	char   **hosts;
	int64_t  start, end;  /* ms */
	unsigned flags;       /* RESV_* of qmaster/resv.c */
	unsigned mail;        /* MAIL_BEGIN, MAIL_END */
	int      state;       /* 0 waiting, 1 active */
	int64_t  created;
};
typedef int (*store_resv_cb)(void *arg, const struct resv_rec *r);
int  store_resv_put(struct store *st, const struct resv_rec *r);   /* insert or replace */
int  store_resv_delete(struct store *st, const char *name);
int  store_resv_foreach(struct store *st, store_resv_cb cb, void *arg);  /* by start */
void resv_rec_clear(struct resv_rec *r);

/* Small named values: next ids, the epoch, the cluster id. */
int     store_meta_get(struct store *st, const char *key, char **val); /* 0 found, 1 absent, -1 error */
int     store_meta_set(struct store *st, const char *key, const char *val); /* val NULL: remove */

/* store_stage.c: file staging (doc/staging.md): what came back of each
 * task, and what the staged files of a user, a job or a blob add up to. */
int     store_stage_out_add(struct store *st, int64_t job, int task, const char *name,
            int64_t size, const char *sha256, int64_t mode);
/* [{task, name, size, sha256}] of the job's outputs by task and name, new. */
json_t *store_stage_out_of(struct store *st, int64_t job);
/* Bytes the user's jobs and cron entries still hold in the spool, inputs and
 * outputs; -1 on error. */
int64_t store_stage_user_bytes(struct store *st, int64_t uid);
/* 1 if a job or a cron entry still names the blob (job > 0: that job), 0 if
 * not, -1 on error. */
int     store_stage_uses(struct store *st, const char *sha256, int64_t job);

#endif
