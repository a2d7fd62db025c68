/* msg_req.h: the client requests of doc/protocol.md and their replies, each a typed structure with its pack and unpack. */
#ifndef NOWQ_MSG_REQ_H
#define NOWQ_MSG_REQ_H

#include "common/common.h"

/*
 * Conventions for every pair below.  pack builds the whole frame but "seq"
 * (client_send numbers it).  unpack checks types and bounds once, as the
 * master's handlers need them, and returns -1 with *why, the one-line
 * refusal of an `invalid` REPLY; what needs the master's state (does the
 * job exist, may the caller touch it) stays with the handler.  Strings and
 * lists of an unpacked structure borrow from the message, which must
 * outlive it; a list is the message's own JSON array, checked element by
 * element, so a listing costs no copy.  An absent field is NULL, 0 or
 * false, or the default protocol.md names.
 */

/* One element of a reply's "results": {id, ok, message}, or {target, ok,
 * message} for DISABLE and ENABLE. */
struct msg_result {
	int64_t     id;
	const char *target;   /* DISABLE, ENABLE: instead of id */
	bool        ok;
	const char *message;  /* quotes users' input: sent as proto_text */
};
void    msg_result_add(json_t *results, const struct msg_result *r);
void    msg_result_unpack(const json_t *o, struct msg_result *r);

/* DELETE, HOLD, RELEASE, SUSPEND, UNSUSPEND, CLEAR: which jobs. */
struct msg_jobsel {
	enum msg_type type;
	json_t       *jobs;    /* positive ids, at most 100,000 */
	json_t       *users;   /* user names, at most 10,000 */
	json_t       *tasks;   /* {"ID": "FIRST[-LAST[:STEP]]"}: only those tasks (not CLEAR) */
};
json_t *msg_jobsel_pack(const struct msg_jobsel *m);
int     msg_jobsel_unpack(const json_t *o, struct msg_jobsel *m, const char **why);
/* A change of one job (qrsh's DELETE of its own job). */
json_t *msg_jobsel_pack_one(enum msg_type t, int64_t id);

/* SUBMIT (qsub, qrsh): a job, or a cron entry making one per tick.  The job
 * object is job_from_json's to read, once the key found no earlier try. */
struct msg_submit {
	json_t     *job;
	bool        verify;    /* false: qsub -w n */
	json_t     *deps;      /* [{kind, job}], resolved by qmaster/deps.c */
	const char *cron;      /* a cron(8) schedule */
	const char *key;       /* 16 to 64 characters: a retry's key */
};
json_t *msg_submit_pack(const struct msg_submit *m);
int     msg_submit_unpack(const json_t *o, struct msg_submit *m, const char **why);
/* Whether a request carries SUBMIT's key: one a client may send twice. */
bool    msg_req_keyed(const json_t *o);
/* An element of SUBMIT's deps: kind (after afterok afternotok afterany)
 * and job (an id, a name or a glob), each NULL when absent. */
struct msg_dep {
	const char *kind, *job;
};
/* Adds nothing when a text is not UTF-8: it cannot travel. */
void    msg_dep_add(json_t *list, const struct msg_dep *m);
void    msg_dep_unpack(const json_t *o, struct msg_dep *m);

/* SUBMIT's reply: the job, or the cron entry. */
struct msg_submitted {
	int64_t     id;
	const char *name;
	bool        repeated;   /* a retry: the job of the first try */
	bool        qrsh_cred;  /* the shepherd will send a munge credential */
	int64_t     cron;       /* cron entries: its number, and */
	int64_t     next_run;   /* its first tick (ms) */
};
void    msg_submitted_add(json_t *rep, const struct msg_submitted *m);
void    msg_submitted_unpack(const json_t *o, struct msg_submitted *m);

/* STATUS: a listing (no jobs), or named jobs (qstat -j). */
struct msg_status {
	json_t     *jobs;        /* positive ids */
	json_t     *users;       /* names, or ["*"] */
	const char *states;      /* letters of p r z a (default "pr") */
	unsigned    state_mask;  /* unpack: 1 << JS_* of states */
	bool        brief;
	bool        by_prio;     /* order "prio" */
	int64_t     limit;       /* 0: no pages */
	int64_t     after;
	bool        has_after_prio;
	int64_t     after_prio;  /* INT64_MAX when absent */
};
json_t *msg_status_pack(const struct msg_status *m);
int     msg_status_unpack(const json_t *o, struct msg_status *m, const char **why);
/* The STATUS of one job, with its script and environment (qstat -j ID). */
json_t *msg_status_pack_one(int64_t id);

/* WAIT (qsub -sync y, qrsh, qwait, drmaa_wait): answered once the job id
 * has ended, or with task, once that task of an array job has. */
struct msg_wait {
	int64_t id;
	int64_t task;   /* 0: the whole job */
};
json_t *msg_wait_pack(const struct msg_wait *m);
int     msg_wait_unpack(const json_t *o, struct msg_wait *m, const char **why);
/* WAIT's reply: the ended job (or task view), job_from_json's to read;
 * NULL when the reply has none. */
struct msg_waited {
	const json_t *job;
};
/* Sets the reply's job, taking job over. */
void    msg_waited_add(json_t *rep, json_t *job);
void    msg_waited_unpack(const json_t *o, struct msg_waited *m);

/* INHERIT (qrsh -inherit): start a task of running parallel job id on
 * host, one of the job's hosts.  The task travels as a job object as
 * qrsh's SUBMIT sends it, of which the master takes only these; the job
 * decoder checks them where they become the task's job object. */
struct msg_inherit {
	int64_t       id;      /* not a positive integer: no such job (noent) */
	const char   *host;
	const json_t *argv;    /* the command's words, or NULL */
	const json_t *env;     /* VAR=VALUE texts; NULL: the job's */
	const char   *cwd;     /* NULL: the job's */
	const char   *qrsh;    /* "HOST PORT SECRET": where its shepherd calls back; or NULL */
};
json_t *msg_inherit_pack(const struct msg_inherit *m);
int     msg_inherit_unpack(const json_t *o, struct msg_inherit *m, const char **why);
/* The task's argv, env, cwd and qrsh set on job, a job object of its job. */
void    msg_inherit_task_set(json_t *job, const struct msg_inherit *m);
/* INHERIT's reply: the task's number within the job, and whether its
 * shepherd will send a munge credential. */
struct msg_inherited {
	int64_t petask;
	bool    qrsh_cred;
};
void    msg_inherited_add(json_t *rep, const struct msg_inherited *m);
void    msg_inherited_unpack(const json_t *rep, struct msg_inherited *m);

/* ALTER (qalter): changes of pending jobs.  A field's problems are told
 * per job, as a submission's are, so unpack refuses only a bad jobs list. */
struct msg_alter {
	json_t     *jobs;       /* positive ids, at least one */
	bool        has_prio;
	bool        prio_ok;    /* an integer from -1023 to 1024 */
	int         prio;
	const char *hold;       /* "u" or "n" (other texts: refused per job) */
	const char *name;
	const char *queue;
	json_t     *req;        /* a -l request object, replacing the job's */
	bool        verify;     /* false: qalter -w n */
	json_t     *soft;       /* a -soft -l request object, replacing the job's */
	const char *project;    /* -P */
	const char *account;    /* -A */
	json_t     *context;    /* ["aNAME=V,...", "dNAME,...", "sNAME=V,..."]: -ac, -dc, -sc in order */
	int         reserve;    /* -R: 1 y, 0 n, -1 unchanged */
	int         js;         /* -js: 0 or more, -1 unchanged */
	const char *in;         /* -i: [[HOST]:]PATH,..., the job's standard input */
};
json_t *msg_alter_pack(const struct msg_alter *m);
int     msg_alter_unpack(const json_t *o, struct msg_alter *m, const char **why);

/* HOSTS (qhost, qstat -f). */
struct msg_hosts {
	bool jobs;   /* qhost -j: the jobs on each host too */
};
json_t *msg_hosts_pack(const struct msg_hosts *m);
int     msg_hosts_unpack(const json_t *o, struct msg_hosts *m, const char **why);

/* ACCT (qacct): records a page at a time, or their sums. */
#define MSG_ACCT_PAGE_MAX  1000
#define MSG_ACCT_BY_HOST	1
#define MSG_ACCT_BY_QUEUE	2
#define MSG_ACCT_BY_OWNER	4
#define MSG_ACCT_BY_GROUP	8
#define MSG_ACCT_BY_PE		16
#define MSG_ACCT_BY_SLOTS	32
struct msg_acct {
	int64_t     id;          /* 0: any job */
	const char *name;
	const char *owner;
	const char *project;     /* qacct -P: NULL: any */
	const char *account;     /* qacct -A: NULL: any */
	int64_t     since;
	const char *queue, *host;
	const char *group, *pe;  /* qacct -g, -pe (NONE: no PE): NULL: any */
	int64_t     slots;       /* qacct -slots: 0: any */
	int64_t     from, to;    /* start (end with by_end) in [from, to); 0: open */
	bool        by_end;
	/* NULL, "total", or what the sums are grouped by: "host", "queue",
	 * "owner", "group", "pe", "slots", or several joined by commas
	 * ("host,owner"); unpack sets groups from it. */
	const char *summary;
	unsigned    groups;      /* MSG_ACCT_BY_* */
	bool        has_after;
	int64_t     after_end, after_row;   /* -1, -1 without after */
	int64_t     limit;       /* 1..MSG_ACCT_PAGE_MAX */
};
json_t *msg_acct_pack(const struct msg_acct *m);
int     msg_acct_unpack(const json_t *o, struct msg_acct *m, const char **why);
/* A full page's reply: "next", the cursor of the page after it. */
void    msg_acct_next_add(json_t *rep, int64_t end_time, int64_t row);
/* Takes a reply's cursor into m's after: false when it has none. */
bool    msg_acct_next(const json_t *rep, struct msg_acct *m);

/* CONF (qconf -sql, -sq, -sp, reload). */
struct msg_conf {
	const char *op;      /* "list", "show", "global" or "reload" */
	const char *queue;   /* show */
	const char *pe;      /* show: a parallel environment instead */
};
json_t *msg_conf_pack(const struct msg_conf *m);
int     msg_conf_unpack(const json_t *o, struct msg_conf *m, const char **why);

/* CRON: list the entries, or change some. */
struct msg_cron {
	const char *action;  /* "list", "delete", "hold" or "release" */
	json_t     *ids;     /* not list: entry numbers, 1 to 10,000 of them */
	bool        force;   /* delete: the latest tick's job too */
};
json_t *msg_cron_pack(const struct msg_cron *m);
int     msg_cron_unpack(const json_t *o, struct msg_cron *m, const char **why);

/* DISABLE, ENABLE (qmod -d, -e): queues and hosts. */
struct msg_flags {
	enum msg_type type;
	json_t       *targets;   /* 1 to 10,000 names of 1 to 255 bytes */
};
json_t *msg_flags_pack(const struct msg_flags *m);
int     msg_flags_unpack(const json_t *o, struct msg_flags *m, const char **why);

/* RESERVE: list, or create.  What a field means depends on the hosts and
 * the reservations there are, so the handler checks them in its order. */
struct msg_reserve {
	const char *op;        /* "list" or "create" (absent: create) */
	const char *name;
	int64_t     count;     /* either a number of hosts */
	const char *hosts;     /* or a node-set expression */
	const char *attrs;     /* with count: a -l list */
	int64_t     start, end, duration;
	json_t     *users;     /* user names */
	const char *mail;      /* "b", "e" or "be" */
	bool        exclusive, overrun;
};
json_t *msg_reserve_pack(const struct msg_reserve *m);
int     msg_reserve_unpack(const json_t *o, struct msg_reserve *m, const char **why);

/* ALIAS: host aliases, node-set expressions, and a host's users and owners. */
struct msg_alias {
	const char *op;      /* add delete show expr mhost shost */
	const char *name;    /* add, delete, show */
	const char *expr;    /* add, expr */
	const char *host;    /* mhost, shost */
	json_t     *users;   /* mhost: the new lists, checked by the handler */
	json_t     *owners;
};
json_t *msg_alias_pack(const struct msg_alias *m);
int     msg_alias_unpack(const json_t *o, struct msg_alias *m, const char **why);

/* UNRESERVE: end a reservation. */
struct msg_unreserve {
	const char *name;
};
json_t *msg_unreserve_pack(const struct msg_unreserve *m);
int     msg_unreserve_unpack(const json_t *o, struct msg_unreserve *m, const char **why);

/* Every client request type with its pair, for the fuzz target and tests:
 * unpack fills a structure of size bytes (zeroed by the caller). */
struct msg_req_type {
	enum msg_type type;
	size_t        size;
	json_t     *(*pack)(const void *m);
	int         (*unpack)(const json_t *o, void *m, const char **why);
};
extern const struct msg_req_type msg_req_types[];
extern const size_t msg_req_ntypes;
const struct msg_req_type *msg_req_type_of(enum msg_type t);

/* A frame whose message has "bytes" N (STAGE_PUT, STAGE_GET's reply) is
 * followed on the same connection by N raw bytes, at most STAGE_CHUNK:
 * N, 0 for none, -1 when "bytes" is not an integer. */
int64_t msg_raw_bytes(const json_t *msg);

/* STAGE_PUT: one chunk of a file a job stages (doc/staging.md).  A chunk
 * at offset 0 without data asks whether the master may take the file (size
 * within the per-file limit, total, the job's whole input, within the
 * per-job and per-user ones) and whether it has it already. */
struct msg_stage_put {
	const char *sha256;
	int64_t     size, total, offset;
	int64_t     bytes;     /* raw bytes after the frame, at most STAGE_CHUNK; 0: none */
	bool        last;      /* the file is complete with this chunk */
};
json_t *msg_stage_put_pack(const struct msg_stage_put *m);
int     msg_stage_put_unpack(const json_t *o, struct msg_stage_put *m, const char **why);
/* Its reply: have, the master holds the file; offset, the next byte it wants. */
struct msg_stage_putted {
	bool    have;
	int64_t offset;
};
void    msg_stage_putted_add(json_t *rep, const struct msg_stage_putted *m);
void    msg_stage_putted_unpack(const json_t *rep, struct msg_stage_putted *m);

/* STAGE_GET: up to STAGE_CHUNK bytes of a staged file from offset; job
 * names the job the file belongs to (the owner may read only those). */
struct msg_stage_get {
	const char *sha256;
	int64_t     offset, job;
};
json_t *msg_stage_get_pack(const struct msg_stage_get *m);
int     msg_stage_get_unpack(const json_t *o, struct msg_stage_get *m, const char **why);
struct msg_stage_got {
	int64_t     bytes;     /* raw bytes after the reply's frame, at most STAGE_CHUNK */
	int64_t     size;      /* the whole file's */
	bool        eof;
};
void    msg_stage_got_add(json_t *rep, const struct msg_stage_got *m);
int     msg_stage_got_unpack(const json_t *rep, struct msg_stage_got *m, const char **why);

#endif
