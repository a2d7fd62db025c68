/* msg_rows.h: the master's replies to the clients, their lists and the rows in them, each a typed structure with its pack beside its unpack. */
#ifndef NOWQ_MSG_ROWS_H
#define NOWQ_MSG_ROWS_H

#include "common/common.h"

/*
 * The master packs, the clients unpack.  An unpack never refuses: a field
 * that is absent or of another type reads as NULL, 0 or false (or the
 * default its comment names), so a client shows what it can of a master
 * that is older or newer than itself.  Texts and lists borrow from the
 * reply, which must outlive the structure.
 */

/* --- STATUS: one job of a listing --- */

/* A brief row (a JSON array of values in the order of job_brief_columns)
 * or a whole job object (qstat --json, qhost -j) reads into the same row. */
struct msg_job_row {
	int64_t       id, task, prio, submit_time, start_time, hold, slots;
	int64_t       t_first, t_last, t_step;
	const char   *name, *owner, *queue, *state, *state_letters, *host;
	const char   *tasks;     /* an array's pending tasks, "1-99:2"; NULL: none */
	const json_t *obj;       /* the job object it came from, or NULL */
};
/* The names of a brief row's values (NULL-terminated), in their order. */
extern const char *const job_brief_columns[];
/* The keys "columns" (those names) and "rows" of a listing, up to the
 * rows' opening bracket: the rows, then "]", follow. */
void    job_brief_head(struct jtext *t);
void    job_brief_text(const struct job *j, struct jtext *t);
/* The same with "tasks", an array's pending tasks as text ("1-99:2"). */
void    job_brief_text_tasks(const struct job *j, const char *tasks, struct jtext *t);
/* The row itself, the one writer of it (the store's listings read a
 * job_brief straight from their rows). */
void    job_brief_row(const struct job_brief *b, const char *tasks, struct jtext *t);
/* A job object (slots 1 when absent). */
void    msg_job_row_unpack(const json_t *job, struct msg_job_row *r);
/* The rows of a brief STATUS reply (a value a row lacks stays empty):
 * an array for msg_job_rows_free, NULL with *n 0 when there are none or
 * they are malformed. */
struct msg_job_row *msg_job_rows_unpack(const json_t *rep, size_t *n);
/* Rows msg_job_rows_unpack gave, when the caller is done with them: the
 * block of a listing read natively is lent, kept for the next listing. */
void    msg_job_rows_free(struct msg_job_row *rows);
/* Brief listings read by msg_job_rows_decode (on) or by jansson (off, the
 * default), for this thread; switching frees rows not unpacked (none may
 * be lent). */
void    msg_job_rows_native(bool on);
bool    msg_job_rows_native_on(void);
/* A frame's reply when it is a brief listing and native reading is on
 * (its rows wait for msg_job_rows_unpack, which must come before the next
 * frame is read): data (proto_frame_buf's) is then taken, and the rows'
 * texts point into it until the next listing is read or native reading is
 * switched.  NULL to leave the frame, unchanged, to jansson, or NULL with
 * *why when the frame is malformed; data stays the caller's. */
json_t *msg_job_rows_decode(char *data, size_t len, const char **why);
/* The rows of a STATUS reply's job objects ("jobs"): a new array. */
struct msg_job_row *msg_job_objects_unpack(const json_t *rep, size_t *n);

/* How a job ended, from its object (job_to_json's): WAIT's reply, qsub -sync. */
struct msg_job_end {
	const char *state, *name;   /* NULL when absent */
	int64_t     start_time;     /* 0: it never started */
	int64_t     exit_status, signal;
	int64_t     t_first;        /* an array job's first task; 0: not an array */
	const char *reason;         /* NULL: none */
};
void    msg_job_end_unpack(const json_t *job, struct msg_job_end *m);

/* STATUS of one job (qstat -j): what its object adds to the row.  The
 * job object is job_to_json's; the master adds the parts below. */
struct msg_job_detail {
	struct msg_job_row row;
	int64_t       uid, gid, begin_time, tc, signal, maxrss_kb;
	int64_t       t_step;          /* 1 when absent */
	bool          has_exit_status;
	int64_t       exit_status;
	bool          join, error;
	double        utime, stime;
	const char   *cwd, *out, *err, *in, *shell, *reason, *scheduling_info;
	const char   *account, *project, *binding, *pe;   /* NULL: none */
	const char   *mail_to;             /* -M as given (USER[@HOST],...), NULL: none */
	bool          reserve, rerun;
	int64_t       mail;                /* the -m bits, 0 when absent */
	int64_t       js;                  /* the job share, 0 when absent */
	const json_t *env, *argv, *args;   /* lists of texts, or NULL */
	const json_t *context;             /* -ac's VAR=VALUE texts, or NULL */
	const json_t *stage_in;            /* stage_file_unpack's elements, or NULL */
	const json_t *stage_out;           /* --stage-out's patterns, or NULL */
	const json_t *staged_out;          /* stage_file_unpack's elements, or NULL */
	const json_t *req, *soft;          /* the hard and soft -l request objects, or NULL */
	const json_t *waiting_for;         /* msg_job_wait_unpack's elements */
	const json_t *successors;          /* the same: the jobs waiting for it */
	const json_t *tasks;               /* msg_task_row_unpack's elements */
	const json_t *pe_hosts;            /* msg_pe_host_unpack's (common/msg.h) */
	bool          has_mail;            /* mail_pending: */
	int64_t       mail_count, mail_next_try;
	const char   *mail_error;          /* NULL: not tried yet */
};
void    msg_job_detail_unpack(const json_t *job, struct msg_job_detail *m);
/* "waiting_for": a job it waits for, and how. */
struct msg_job_wait {
	int64_t     id;
	const char *kind;      /* after afterok afternotok afterany, or "?" */
};
void    msg_job_wait_add(json_t *list, const struct msg_job_wait *m);
void    msg_job_wait_unpack(const json_t *o, struct msg_job_wait *m);
/* "mail_pending": mail of the job not delivered yet. */
json_t *msg_job_mail_pack(int64_t count, const char *error, int64_t next_try);
/* What the master adds to the job object of a single-job STATUS (and
 * tasks_pending to an array job's in any listing), from its own state at
 * the time of asking.  add sets those not NULL (taking the lists over);
 * unpack reads each as NULL when absent or of another type. */
struct msg_job_more {
	const char *scheduling_info;         /* why it waits */
	json_t     *waiting_for, *successors;  /* msg_job_wait_add's lists */
	json_t     *mail_pending;            /* msg_job_mail_pack's object */
	json_t     *staged_out;              /* stage_file_unpack's elements */
	json_t     *pe_hosts;                /* msg_pe_host_unpack's (common/msg.h) */
	const char *tasks_pending;           /* an array's pending tasks, "1-99:2" */
	json_t     *tasks;                   /* msg_task_row_pack's, one per task */
};
void    msg_job_more_add(json_t *job, const struct msg_job_more *m);
void    msg_job_more_unpack(const json_t *job, struct msg_job_more *m);
/* "tasks" of a single-job STATUS of an array job: one row per task that
 * left the pending state. */
struct msg_task_row {
	int64_t     task, attempt, start_time, end_time, maxrss_kb;
	int64_t     exit_status, signal;   /* signal: what killed it, 0: none */
	double      utime, stime;
	const char *state, *state_letters;
	const char *host, *reason;         /* NULL: none */
};
json_t *msg_task_row_pack(const struct msg_task_row *m);
void    msg_task_row_unpack(const json_t *o, struct msg_task_row *m);

/* A page of a listing that has more after it: where the next begins. */
struct msg_status_next {
	bool    has;        /* false: the last page */
	int64_t id;         /* the page's last job id */
	bool    has_prio;   /* order "prio" only: */
	int64_t prio;       /* and its priority */
};
void    msg_status_next_add(json_t *rep, const struct msg_status_next *m);
/* The same keys written as text after a brief reply's rows. */
void    msg_status_next_text(struct jtext *t, const struct msg_status_next *m);
void    msg_status_next_unpack(const json_t *rep, struct msg_status_next *m);

/* --- HOSTS: one exec host --- */

/* A reservation holding a host now, or its next one. */
struct msg_host_resv {
	bool        has;
	const char *name, *owner;
	int64_t     start;   /* reserved_next only */
	int64_t     end;
};
/* A queue whose host set holds the host (qstat -f's queue instance). */
struct msg_host_queue {
	const char *name;
	bool        disabled;
	int64_t     used;    /* the slots its jobs use there */
};
struct msg_host_row {
	const char       *name;
	int64_t           slots, used;
	bool              has_load;
	double            load[3];
	const char       *state;          /* idle busy reserved suspended disabled unknown */
	bool              connected, disabled, lost;
	int64_t           last_seen;
	const char       *busy_reason;    /* NULL: none */
	const char       *vmem_limit;     /* NULL: not told */
	struct host_attrs attrs;          /* pack: borrowed; unpack: owned (msg_host_row_clear) */
	struct msg_host_resv reserved, reserved_next;
	json_t           *queues;         /* pack: msg_host_queue_add's list (stolen) */
	json_t           *jobs;           /* HOSTS jobs: job objects (pack: stolen); NULL: not asked */
};
json_t *msg_host_row_pack(const struct msg_host_row *m);
void    msg_host_row_unpack(const json_t *o, struct msg_host_row *m);
void    msg_host_row_clear(struct msg_host_row *m);
/* The rows of a HOSTS reply's "hosts": a new array (*n of them), freed
 * with msg_host_rows_free. */
struct msg_host_row *msg_host_rows_unpack(const json_t *hosts, size_t *n);
void    msg_host_rows_free(struct msg_host_row *rows, size_t n);
void    msg_host_queue_add(json_t *list, const struct msg_host_queue *q);
void    msg_host_queue_unpack(const json_t *o, struct msg_host_queue *q);
/* "reserved": {name, owner, end}, in HOSTS and ALIAS shost alike (and
 * "reserved_next" with its start). */
json_t *msg_host_resv_pack(const struct msg_host_resv *r, bool with_start);
void    msg_host_resv_unpack(const json_t *o, struct msg_host_resv *r);

/* --- CRON list: one entry --- */
struct msg_cron_row {
	int64_t     id;
	const char *owner, *schedule;
	const char *name;         /* the job's; NULL: none */
	int64_t     next_run;     /* ms */
	int64_t     last_job;     /* 0: none yet */
	const char *last_state;   /* of that job; NULL: none */
	bool        hold;
	const char *queue;        /* NULL: the default */
};
json_t *msg_cron_row_pack(const struct msg_cron_row *m);
void    msg_cron_row_unpack(const json_t *o, struct msg_cron_row *m);

/* --- RESERVE list and create: one reservation --- */
struct msg_resv_row {
	const char *name, *owner;
	json_t     *users, *hosts;   /* lists of names (pack: stolen) */
	int64_t     start, end;      /* ms */
	const char *state;           /* "active" or "waiting" */
	bool        exclusive, overrun;
	const char *mail;            /* "", "b", "e" or "be" */
};
json_t *msg_resv_row_pack(const struct msg_resv_row *m);
void    msg_resv_row_unpack(const json_t *o, struct msg_resv_row *m);

/* --- ALIAS: an alias with its hosts (show), a host's lists (shost) --- */
struct msg_alias_row {
	const char *name;
	json_t     *hosts;           /* host names (pack: borrowed) */
};
json_t *msg_alias_row_pack(const struct msg_alias_row *m);
void    msg_alias_row_unpack(const json_t *o, struct msg_alias_row *m);
struct msg_host_lists {
	const char          *name;
	json_t              *aliases, *users, *owners;   /* lists of names (pack: stolen) */
	struct msg_host_resv reserved;                   /* the one holding it now */
};
json_t *msg_host_lists_pack(const struct msg_host_lists *m);
void    msg_host_lists_unpack(const json_t *o, struct msg_host_lists *m);

/* --- ACCT: one finished attempt, or a sum of them --- */
struct msg_acct_row {
	int64_t           row;          /* the cursor's tie-break */
	int64_t           id, task, attempt;
	const char       *name, *owner; /* NULL: null */
	int64_t           uid, gid;
	const char       *group, *queue;
	json_t           *hosts;        /* host names (pack: stolen) */
	int64_t           submit_time, start_time, end_time;
	const char       *state;
	bool              has_exit_status;   /* false: the attempt never started */
	int64_t           exit_status;
	int64_t           signal, failed;
	const char       *reason, *pe;
	int64_t           prio;
	int64_t           slots;        /* 1 when absent */
	const char       *project, *account;   /* NULL: none (left out) */
	double            ru_wallclock;
	struct job_rusage ru;           /* zero when absent or unusable */
};
json_t *msg_acct_row_pack(const struct msg_acct_row *m);
void    msg_acct_row_unpack(const json_t *o, struct msg_acct_row *m);
struct msg_acct_sum {
	const char *host, *queue, *owner;   /* the groupings asked; NULL: not grouped by it */
	const char *group, *pe;             /* the same; pe NONE: no parallel environment */
	bool        has_slots;
	int64_t     slots;
	int64_t     jobs;
	double      ru_wallclock, ru_utime, ru_stime;
	int64_t     maxvmem;                /* bytes */
};
json_t *msg_acct_sum_pack(const struct msg_acct_sum *m);
void    msg_acct_sum_unpack(const json_t *o, struct msg_acct_sum *m);

/* --- MASTERS: one master as the answering one sees it (qconf -sm) --- */
struct msg_master_row {
	const char *name, *role;
	bool        has_epoch, has_seq, has_lag, has_in_sync, has_since, has_writable, has_quiet;
	int64_t     epoch, seq, lag;   /* lag: sequence numbers behind */
	bool        in_sync, writable;
	int64_t     since;             /* ms */
	bool        self;              /* the master that answered */
	const char *state;             /* a sentence; NULL: none */
	int64_t     quiet_ms;          /* a standby: since it last heard the primary */
};
json_t *msg_master_row_pack(const struct msg_master_row *m);
void    msg_master_row_unpack(const json_t *o, struct msg_master_row *m);

/* --- The replies: the lists each one carries --- */

/*
 * Beside the reply's envelope (msg_reply, common/msg.h), each reply that
 * carries lists is one structure of them.  An add sets those that are not
 * NULL on the reply, taking them over; an unpack reads each as the reply's
 * array (its object for one row), or NULL when it has none or another
 * type.  doc/protocol.md's reply column names them (t/unit/test_msg_req).
 */

/* STATUS, not brief: jobs, job objects (msg_job_row_unpack's, and
 * msg_job_detail_unpack's for a single-job STATUS). */
struct msg_status_reply {
	json_t *jobs;
};
void    msg_status_reply_add(json_t *rep, const struct msg_status_reply *m);
void    msg_status_reply_unpack(const json_t *rep, struct msg_status_reply *m);
/* The job of a single-job STATUS's reply, or NULL. */
json_t *msg_status_reply_one(const json_t *rep);

/* HOSTS: hosts, msg_host_row_pack's rows by name. */
struct msg_hosts_reply {
	json_t *hosts;
};
void    msg_hosts_reply_add(json_t *rep, const struct msg_hosts_reply *m);
void    msg_hosts_reply_unpack(const json_t *rep, struct msg_hosts_reply *m);

/* CRON list: entries, msg_cron_row_pack's (its other actions answer with
 * msg_results, common/msg_req.h). */
struct msg_cron_reply {
	json_t *entries;
};
void    msg_cron_reply_add(json_t *rep, const struct msg_cron_reply *m);
void    msg_cron_reply_unpack(const json_t *rep, struct msg_cron_reply *m);

/* RESERVE: list: reservations; create: reservation; msg_resv_row_pack's. */
struct msg_reserve_reply {
	json_t *reservations;
	json_t *reservation;
};
void    msg_reserve_reply_add(json_t *rep, const struct msg_reserve_reply *m);
void    msg_reserve_reply_unpack(const json_t *rep, struct msg_reserve_reply *m);

/* ALIAS: add and expr: hosts, names; show: aliases, msg_alias_row_pack's;
 * shost: host, msg_host_lists_pack's. */
struct msg_alias_reply {
	json_t *hosts;
	json_t *aliases;
	json_t *host;
};
void    msg_alias_reply_add(json_t *rep, const struct msg_alias_reply *m);
void    msg_alias_reply_unpack(const json_t *rep, struct msg_alias_reply *m);

/* MASTERS: masters, msg_master_row_pack's. */
struct msg_masters_reply {
	json_t *masters;
};
void    msg_masters_reply_add(json_t *rep, const struct msg_masters_reply *m);
void    msg_masters_reply_unpack(const json_t *rep, struct msg_masters_reply *m);

/* DELETE, HOLD, RELEASE, SUSPEND, UNSUSPEND, CLEAR, CRON but list,
 * DISABLE, ENABLE: results, msg_result_add's (common/msg_req.h). */
struct msg_results {
	json_t *results;
};
void    msg_results_add(json_t *rep, const struct msg_results *m);
void    msg_results_unpack(const json_t *rep, struct msg_results *m);

/* ACCT: rows, msg_acct_row_pack's, or with summary, summary,
 * msg_acct_sum_pack's (next: msg_acct_next, common/msg_req.h). */
struct msg_acct_reply {
	json_t *rows;
	json_t *summary;
};
void    msg_acct_reply_add(json_t *rep, const struct msg_acct_reply *m);
void    msg_acct_reply_unpack(const json_t *rep, struct msg_acct_reply *m);

/* CONF: list: queues, pes, managers and operators, lists of names; show
 * and global: text, which add copies (reload says it in the envelope's
 * message). */
struct msg_conf_reply {
	json_t     *queues, *pes, *managers, *operators;
	const char *text;
};
void    msg_conf_reply_add(json_t *rep, const struct msg_conf_reply *m);
void    msg_conf_reply_unpack(const json_t *rep, struct msg_conf_reply *m);

#endif
