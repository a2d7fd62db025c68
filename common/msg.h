/* msg.h: the typed connection, execd and replication messages of doc/protocol.md, each with its pack and unpack. */
#ifndef NOWQ_MSG_H
#define NOWQ_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/common.h"

/*
 * One structure per message type, and beside it the two functions that are
 * the only place its fields are named:
 *
 *   json_t *msg_X_pack(const struct msg_X *m);
 *       the message as a new JSON object, "type" included.
 *   int msg_X_unpack(const json_t *o, struct msg_X *m, char *err, size_t n);
 *       0, or -1 with one sentence in err (what the handler answers, with
 *       ERR_INVAL unless it says otherwise), m then unusable.
 *
 * Texts and JSON values an unpack fills in point into o: they live as long
 * as o does.  Those a pack reads are the caller's, copied.  A field that
 * may be absent from a message unpacks to the default its comment names,
 * the one every reader of it uses.
 */

/* A 64-bit field a sender left out, where no value can stand for "absent". */
#define MSG_ABSENT INT64_MIN

/* HELLO: the first frame on every connection. */
struct msg_hello {
	int64_t     seq;
	const char *role;         /* client execd peer witness */
	const char *auth_method;  /* none munge; NULL: no auth object */
	const char *auth_cred;    /* the munge credential, or NULL */
	int64_t     uid;          /* the claimed uid; -1 when absent */
	const char *user;         /* a client's name, or NULL */
	const char *nonce;        /* a daemon's, 32 hex digits, or NULL */
	bool        any;          /* a client that takes whichever master */
};
json_t *msg_hello_pack(const struct msg_hello *m);
/* Refuses another version and an unknown role (ERR_PROTO). */
int     msg_hello_unpack(const json_t *o, struct msg_hello *m, char *err, size_t n);
/* auth.c: the auth of a daemon's HELLO on TCP (an execd, its witness
 * link, a master to the other): with method "munge" a credential carrying
 * payload, in *cred for the caller to free (without one, logged there, the
 * master refuses and says why), else none. */
void    auth_hello_daemon(struct msg_hello *m, const char *method, const char *sock,
            const char *payload, char **cred);

/* The REPLY envelope: every request's answer; error and message on failure. */
struct msg_reply {
	int64_t     seq;
	bool        ok;
	const char *error;        /* one of the ERR_ codes, or NULL */
	const char *message;      /* one sentence, or NULL */
	const char *master;       /* a redirect's: the primary's address, or NULL */
};
json_t *msg_reply_pack(const struct msg_reply *m);
int     msg_reply_unpack(const json_t *o, struct msg_reply *m, char *err, size_t n);

/* The REPLY to HELLO. */
struct msg_hello_reply {
	int64_t     seq;
	const char *master;       /* its host name */
	int64_t     epoch, failover_timeout;
	int64_t     uid;
	const char *user;
	bool        manager, operator;
	bool        query;        /* endpoint: "query" */
	const char *auth_cred;    /* the master's proof to a daemon, or NULL */
};
json_t *msg_hello_reply_pack(const struct msg_hello_reply *m);
/* Refuses a refusal, with its message. */
int     msg_hello_reply_unpack(const json_t *o, struct msg_hello_reply *m, char *err, size_t n);

/* An attempt of a job, as REGISTER's jobs, LOAD's stopped and SIGNAL name it. */
struct msg_attempt {
	int64_t id, task, attempt;
};
json_t *msg_attempt_pack(const struct msg_attempt *a);
/* id and attempt -1, task 0 when absent. */
void    msg_attempt_unpack(const json_t *o, struct msg_attempt *a);

/* A list of attempts read, as REGISTER's jobs: those an execd still has. */
struct msg_attempts {
	struct msg_attempt *a;
	size_t              n;
};
/* Whether j's attempt is one of l's (l may be NULL: none). */
bool    msg_attempts_has(const struct msg_attempts *l, const struct job *j);

/* REGISTER: an execd's first request. */
struct msg_register {
	int64_t            seq;
	const char        *host;
	int64_t            slots, uid;
	double             load[3];     /* NAN where the sender gave none */
	bool               idle;
	json_t            *jobs;        /* pack: [{id, task, attempt}], or NULL */
	struct msg_attempts attempts;   /* unpack: jobs' attempts (msg_register_clear frees them) */
	struct host_attrs  attrs;       /* unpack fills it: msg_register_clear frees it */
	const char        *vmem_limit;  /* cgroup rlimit; NULL for any other */
};
json_t *msg_register_pack(const struct msg_register *m);
int     msg_register_unpack(const json_t *o, struct msg_register *m, char *err, size_t n);
void    msg_register_clear(struct msg_register *m);

/* LOAD: an execd's load and idle state. */
struct msg_load {
	int64_t     seq;
	double      load[3];          /* NAN where the sender gave none */
	bool        idle;             /* true when absent */
	const char *reason;           /* why busy, or NULL */
	json_t     *stopped;          /* [{id, task, attempt}], or NULL */
};
json_t *msg_load_pack(const struct msg_load *m);
int     msg_load_unpack(const json_t *o, struct msg_load *m, char *err, size_t n);

/* PULL: the execd asks for up to free slots' work. */
struct msg_pull {
	int64_t seq;
	int64_t free;                 /* -1 when absent */
};
json_t *msg_pull_pack(const struct msg_pull *m);
int     msg_pull_unpack(const json_t *o, struct msg_pull *m, char *err, size_t n);

/* CHILD_REGISTER: a job's process started. */
struct msg_child_register {
	int64_t     seq;
	int64_t     id, task, attempt;   /* 0, 0, -1 when absent */
	int64_t     petask;              /* a qrsh -inherit task's number; 0 when absent */
	const char *host;
	int64_t     pid;                 /* 0 when absent */
	int64_t     start_time;          /* MSG_ABSENT when absent */
};
json_t *msg_child_register_pack(const struct msg_child_register *m);
int     msg_child_register_unpack(const json_t *o, struct msg_child_register *m, char *err, size_t n);

/* CHILD_TERM: a job's attempt ended, with its usage. */
struct msg_child_term {
	int64_t           seq;
	int64_t           id, task, attempt;   /* 0, 0, -1 when absent */
	int64_t           petask;              /* a qrsh -inherit task's number; 0 when absent */
	const char       *host;
	int64_t           exit_status;         /* -1 when absent */
	int64_t           signal;              /* 0 when absent */
	double            utime, stime;        /* NAN when absent */
	int64_t           maxrss_kb;           /* 0 when absent */
	int64_t           end_time;            /* MSG_ABSENT when absent */
	const char       *failed, *vacated, *limit, *lost;  /* the end's kind, or NULL */
	const char       *requeue;             /* the job never started for a fault of its host */
	const json_t     *rusage;              /* as sent, or NULL */
	struct job_rusage ru;                  /* rusage read, when rusage_why is NULL */
	const char       *rusage_why;          /* why rusage is unusable, or NULL */
	const json_t     *staged_out;          /* [{name, size, sha256}] sent back, or NULL */
};
json_t *msg_child_term_pack(const struct msg_child_term *m);
/* Never refuses: an end is recorded whatever its usage says (rusage_why). */
int     msg_child_term_unpack(const json_t *o, struct msg_child_term *m, char *err, size_t n);

/* DISPATCH: the jobs answering a PULL, each a job object (job_to_json) with,
 * for a parallel job's part, part and pe_hosts; or, unasked (seq 0), a task
 * of a running parallel job (qrsh -inherit), which also has petask. */
struct msg_dispatch {
	int64_t  seq;                 /* the PULL's */
	json_t  *jobs;
};
json_t *msg_dispatch_pack(const struct msg_dispatch *m);
int     msg_dispatch_unpack(const json_t *o, struct msg_dispatch *m, char *err, size_t n);
/* A host of a parallel job and its slots there: an element of pe_hosts
 * (in DISPATCH, and in qstat -j's job object). */
struct msg_pe_host {
	const char *host;     /* NULL when absent */
	int64_t     slots;    /* 1 when absent */
};
void    msg_pe_host_add(json_t *list, const struct msg_pe_host *h);
void    msg_pe_host_unpack(const json_t *o, struct msg_pe_host *h);
/* A parallel job's part in a DISPATCH: the job object with its part (0 for
 * the master part) and pe_hosts ([{host, slots}], master host first),
 * which the execd keeps in job.json for the shepherd. */
struct msg_dispatch_part {
	int64_t       part;           /* -1 when absent */
	const json_t *pe_hosts;       /* msg_pe_host_unpack's elements, or NULL */
	int64_t       petask;         /* a qrsh -inherit task's number; 0: the part itself */
};
json_t *msg_dispatch_part_pack(const struct job *j, const struct msg_dispatch_part *m);
/* The part and its hosts, checked against the job's slots limit: NULL, or
 * why they are unusable. */
const char *msg_dispatch_part_unpack(const json_t *o, struct msg_dispatch_part *m);
/* One of its jobs: job_from_json, and the part's share of this host.  A
 * job must have exactly one of script and argv, and its uid and gid; on
 * failure job is NULL, *why says why and a names the attempt as far as it
 * can (-1 where it cannot). */
struct msg_dispatch_job {
	struct msg_attempt a;
	struct job   *job;            /* the caller frees it */
	struct msg_dispatch_part pe;  /* part -1 and no pe_hosts for a serial job */
};
int     msg_dispatch_job_unpack(const json_t *o, struct msg_dispatch_job *m, const char **why);

/* SIGNAL: deliver a signal to an attempt's processes. */
struct msg_signal {
	struct msg_attempt a;         /* -1 where absent, task too */
	int64_t            signal;    /* -1 when absent */
};
json_t *msg_signal_pack(const struct msg_signal *m);
/* Refuses fields out of range, as an execd ignores them. */
int     msg_signal_unpack(const json_t *o, struct msg_signal *m, char *err, size_t n);

/* ACK: the CHILD_ event of seq is durable on the master. */
struct msg_ack {
	int64_t seq;                  /* -1 when absent */
};
json_t *msg_ack_pack(const struct msg_ack *m);
int     msg_ack_unpack(const json_t *o, struct msg_ack *m, char *err, size_t n);

/* PROBE: a master asks the other its role; SYNC: a standby asks to follow.
 * Their replies carry role (PROBE), epoch and last. */
struct msg_probe {
	int64_t     seq;
	int64_t     epoch;            /* 0 when absent */
	int64_t     last;             /* -1 when absent */
	int64_t     schema;           /* SYNC only; -1 when absent */
	const char *role;             /* a reply's, or NULL */
};
json_t *msg_probe_pack(const struct msg_probe *m);
int     msg_probe_unpack(const json_t *o, struct msg_probe *m, char *err, size_t n);
json_t *msg_sync_pack(const struct msg_probe *m);
int     msg_sync_unpack(const json_t *o, struct msg_probe *m, char *err, size_t n);
/* The replies to both: seq, ok, role (PROBE only), epoch and last.  The
 * reply's unpack reads an absent epoch or last as 0, and needs ok. */
json_t *msg_probe_reply_pack(const struct msg_probe *m);
int     msg_probe_reply_unpack(const json_t *o, struct msg_probe *m, char *err, size_t n);

/* SNAPSHOT: a frame of the primary's database. */
struct msg_snapshot {
	int64_t     seq, epoch, offset;  /* 0, 1, -1 when absent */
	const char *data;                /* base64 */
	bool        last;
};
json_t *msg_snapshot_pack(const struct msg_snapshot *m);
int     msg_snapshot_unpack(const json_t *o, struct msg_snapshot *m, char *err, size_t n);

/* CHANGESET: one committed transaction for the standby. */
struct msg_changeset {
	int64_t     seq, epoch;          /* -1, 0 when absent */
	const char *cs;                  /* base64 */
};
json_t *msg_changeset_pack(const struct msg_changeset *m);
int     msg_changeset_unpack(const json_t *o, struct msg_changeset *m, char *err, size_t n);

/* APPLIED: the standby's durable sequence. */
struct msg_applied {
	int64_t applied;                 /* -1 when absent */
};
json_t *msg_applied_pack(const struct msg_applied *m);
int     msg_applied_unpack(const json_t *o, struct msg_applied *m, char *err, size_t n);

/* STAGE_BLOB (primary to standby; "bytes" raw bytes follow the frame)
 * and STAGE_STORED (the standby's word that the file is durable there,
 * only sha256 and size): a file of SPOOL/stage/ shipped to the standby.
 * uid: the uploader's, for an upload shipped as it comes (the standby
 * takes it up with that client should it be promoted). */
struct msg_stage_blob {
	const char *sha256;              /* or NULL */
	int64_t     size, offset, bytes; /* -1, -1, 0 when absent */
	int64_t     uid;                 /* -1 when absent */
	bool        last;
};
json_t *msg_stage_blob_pack(const struct msg_stage_blob *m);
int     msg_stage_blob_unpack(const json_t *o, struct msg_stage_blob *m, char *err, size_t n);
json_t *msg_stage_stored_pack(const struct msg_stage_blob *m);
int     msg_stage_stored_unpack(const json_t *o, struct msg_stage_blob *m, char *err, size_t n);

/* STAGE_OFFER (primary to a standby that connects: files it holds) and
 * STAGE_WANT (the standby: those of them it lacks; always one answering
 * the offer's last frame). */
struct msg_stage_files {
	const json_t *files;             /* [{sha256, size}], borrowed; NULL: none */
	bool          last;              /* the offer's last frame, and the answer to it */
};
json_t *msg_stage_offer_pack(const struct msg_stage_files *m);
json_t *msg_stage_want_pack(const struct msg_stage_files *m);
int     msg_stage_files_unpack(const json_t *o, struct msg_stage_files *m, char *err, size_t n);

/* HEARTBEAT: the primary's, and its echo (t, and last from an execd). */
struct msg_heartbeat {
	int64_t epoch, last;             /* MSG_ABSENT when absent (an echo) */
	int64_t t;                       /* 0 when absent */
};
json_t *msg_heartbeat_pack(const struct msg_heartbeat *m);
int     msg_heartbeat_unpack(const json_t *o, struct msg_heartbeat *m, char *err, size_t n);

/* VOTE_REQUEST: a candidate asks a witness. */
struct msg_vote_request {
	int64_t     epoch, timeout, t;   /* 0 when absent */
	int64_t     last;                /* -1 when absent */
	const char *candidate;           /* or NULL */
};
json_t *msg_vote_request_pack(const struct msg_vote_request *m);
int     msg_vote_request_unpack(const json_t *o, struct msg_vote_request *m, char *err, size_t n);

/* VOTE: a witness's answer. */
struct msg_vote {
	int64_t     epoch, t;            /* 0 when absent */
	bool        granted;
	const char *host, *why;          /* or NULL */
};
json_t *msg_vote_pack(const struct msg_vote *m);
int     msg_vote_unpack(const json_t *o, struct msg_vote *m, char *err, size_t n);

/* MASTERS and TAKEOVER: requests of nothing but their seq. */
struct msg_bare {
	int64_t seq;
};
json_t *msg_masters_pack(const struct msg_bare *m);
json_t *msg_takeover_pack(const struct msg_bare *m);
int     msg_bare_unpack(const json_t *o, struct msg_bare *m, char *err, size_t n);
/* TAKEOVER's reply: the master's new epoch (0 when absent); the
 * envelope's message says what it risks. */
struct msg_takeover_reply {
	int64_t epoch;
};
void    msg_takeover_reply_add(json_t *rep, const struct msg_takeover_reply *m);
void    msg_takeover_reply_unpack(const json_t *rep, struct msg_takeover_reply *m);

/* The table of the types above: what the docs and the fuzz target follow. */
struct msg_def {
	enum msg_type  type;
	const char    *name;
	const char    *from;          /* who sends it: "any", "execd", "master", "peer", ... */
	size_t         size;          /* of its structure */
	json_t      *(*pack)(const void *m);
	int          (*unpack)(const json_t *o, void *m, char *err, size_t n);
	void         (*clear)(void *m);   /* or NULL */
};
extern const struct msg_def msg_defs[];
extern const size_t msg_ndefs;
const struct msg_def *msg_def_of(enum msg_type t);

#endif
