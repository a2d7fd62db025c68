/* client.h: the client programs' shared declarations, sectioned by the file defining them. */
#ifndef NOWQ_CLIENT_H
#define NOWQ_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <jansson.h>

#include "common/common.h"
#include "common/msg_rows.h"

/* main.c: every command is one entry of one table; the program dispatches on
 * the name it was called by (qsub, qstat, ...) or on "nowq CMD ...". */
struct cmd {
	const char *name;
	const char *usage;                 /* printed for -help and usage errors */
	int       (*run)(int argc, char **argv);  /* argv[0] is the command name */
};
extern const struct cmd cmd_qsub, cmd_qstat, cmd_qdel, cmd_qhold, cmd_qrls, cmd_qhost, cmd_nowq;
extern const struct cmd cmd_qacct, cmd_qconf, cmd_qalter, cmd_qmod, cmd_reserve, cmd_unreserve, cmd_qwait;
extern const struct cmd cmd_qrsh, cmd_qselect;

/* The one sentence for an option nowq does not have, whichever command. */
#define CLIENT_UNSUPPORTED "option \"%s\" is not supported by nowq"

/* lib.c: errors for people, the masters to try, and request/reply. */
extern const char *client_prog;    /* the command's name, for messages */
/* HELLO says any master will do (qconf -smasters, -takeover): a standby answers. */
extern bool client_any_master;
void client_warnx(const char *fmt, ...) NOWQ_ATTR_PRINTF(1, 2);
/* "PROG: error: ..." on stderr; client_die also exits 1. */
void client_errx(const char *fmt, ...) NOWQ_ATTR_PRINTF(1, 2);
void client_die(const char *fmt, ...) NOWQ_ATTR_PRINTF(1, 2) NOWQ_NORETURN;
void client_usage(const struct cmd *c, FILE *fp);
/* Progress for long waits, one line on stderr rewritten in place, and only
 * when stderr is a terminal: a pipe or a file gets nothing extra.  Clear the
 * line before printing anything else. */
void client_progress(const char *fmt, ...) NOWQ_ATTR_PRINTF(1, 2);
void client_progress_clear(void);
/* --json output: one document {"schema": CLIENT_JSON_SCHEMA, key: value}
 * (doc/json.md); the version grows when a field changes meaning or goes. */
#define CLIENT_JSON_SCHEMA 1
void client_print_json(const char *key, json_t *value);
/* The same text for a list too long to hold, an item at a time: *n counts
 * the items printed; _end closes the document (or prints an empty list). */
void client_print_json_item(const char *key, const json_t *item, size_t *n);
void client_print_json_end(const char *key, size_t n);
/* Splits a master list ("unix:PATH" or "HOST:PORT", separated by commas or
 * blanks) into a NULL-terminated vector; NULL when it holds no address. */
char **client_masters_parse(const char *s);
/* The masters to try: $NOWQ_MASTER, else SYSCONFDIR/nowq/master, else the default. */
char **client_masters(void);
/* Sends req (its "seq" is set here) and returns the reply with that seq,
 * connecting and saying HELLO first if need be.  timeout_ms < 0 waits
 * forever.  NULL with *why when no master can be reached or the connection
 * breaks.  A request with an idempotency "key" is sent again when its
 * reply is lost, to the next master or the same one after a reconnect,
 * for a bounded time; any other never is: the caller decides whether a
 * retry is safe. */
json_t *client_call(json_t *req, int timeout_ms, const char **why);
/* The timeout of a reply that comes at once: a master busier than this is broken. */
#define CLIENT_REPLY_MS 120000
/* client_call for requests that may not fail: takes req over, and dies
 * with a one-line error when no master answers.  A reply with ok false is
 * returned as it is. */
json_t *client_request(json_t *req);
/* client_request, but a refusal is printed (after what, e.g. "Unable to run
 * job: ") and gives NULL. */
json_t *client_request_ok(json_t *req, const char *what);
void    client_disconnect(void);
/* The master connection's descriptor (-1 when none), to poll beside others. */
int     client_fd(void);
/* Pipelining (qwait's many WAITs on one connection): client_send sends req
 * without reading its reply (its "seq" is set here, connecting first if need
 * be); client_recv returns the next reply, whichever request it answers.
 * -1 or NULL with *why; a broken connection is dropped, as client_call does.
 * client_recv gives NULL with *why NULL when timeout_ms (< 0: forever)
 * passes without a reply; the connection stays. */
int     client_send(json_t *req, const char **why);
json_t *client_recv(int timeout_ms, const char **why);
/* client_send, with len raw bytes after the frame (req's "bytes" says len). */
int     client_send_raw(json_t *req, const void *raw, size_t len, const char **why);
/* The same, the len raw bytes sent from fd at off by the kernel. */
int     client_send_file(json_t *req, int fd, int64_t off, size_t len, const char **why);
/* The raw bytes after the reply client_recv returned last (msg_raw_bytes):
 * valid until the next client_recv; NULL with *len 0 when it had none. */
const void *client_raw(size_t *len);
/* A submission's idempotency key, CLIENT_KEY_LEN hex digits: if the reply
 * is lost in a failover, the retry names the same key and gets the same
 * job.  -1 with *why when no random bytes can be read. */
#define CLIENT_KEY_LEN 32
int     client_submit_key(char key[CLIENT_KEY_LEN + 1], const char **why);
/* The caller's user name: $LOGNAME or $USER when set (no lookup on the
 * submission path), else the password database's. */
const char *client_user(void);
/* The reply's "message", or a generic sentence when it has none. */
const char *client_reply_message(const json_t *rep);
/* Whether a REPLY says ok (false for NULL). */
bool        client_reply_ok(const json_t *rep);
/* Prints the message of each of a reply's "results"; 1 if any failed. */
int client_print_results(const json_t *rep);
/* qdel, qhold and qrls: parse "ID[,ID]... | -u USER[,USER]...", send the
 * request of the given type, print each result's message, 1 if any failed. */
int client_job_op(const struct cmd *c, const char *type, int argc, char **argv);
/* Resolves job ids and names ("12", "12,13", "myjob") to ids.  Names are
 * looked up among the jobs in the given states ("prz" letters) the master
 * lists; a name no job has is appended to the array missing. */
json_t *client_resolve_jobs(char **args, int nargs, const char *states, json_t *missing);
bool    client_parse_id(const char *s, int64_t *id);
/* Adds the user names of "U1,U2" to the array users. */
void    client_add_users(json_t *users, const char *list);
/* Appends the words of "a,b c" to the NULL-terminated list *v (NULL: empty). */
void    client_add_words(char ***v, const char *list);

/* qsub_opts.c: qsub's options from the command line and the script's
 * directives, and the job they describe.  Pure: no I/O but what is passed in. */
enum { QO_UNSET = -1 };
struct qsub_opts {
	char   *name;            /* -N */
	char   *queue;           /* -q */
	char   *out_path;        /* -o, as given */
	char   *err_path;        /* -e, as given */
	char   *in_path;         /* -i, as given: [[HOST]:]PATH,... */
	int     join;            /* -j y|n, or QO_UNSET */
	bool    use_cwd;         /* -cwd */
	char   *wd;              /* -wd DIR, as given (the last of -cwd/-wd wins) */
	bool    export_all;      /* -V */
	char  **vars;            /* -v entries in order: "NAME=VALUE" or "NAME" */
	int     hold;            /* -h: 1, or QO_UNSET */
	int     prio;            /* -p */
	bool    prio_set;
	bool    terse;           /* -terse */
	int     sync;            /* -sync y|n, or QO_UNSET */
	char   *shell;           /* -S */
	int     binary;          /* -b y|n, or QO_UNSET */
	char   *prefix;          /* -C; NULL: "#$" */
	bool    help;            /* -help */
	struct job_req req;      /* -l, accumulated */
	int     rerun;           /* -r y|n, or QO_UNSET */
	char   *pe;              /* -pe NAME N, or -n N (pe NULL) */
	int     slots;           /* 0: not given */
	int     slots_min;       /* -pe NAME MIN-MAX: MIN (slots is MAX); 0: no range */
	int     t_first, t_last, t_step; /* -t; t_first 0: none */
	int     tc;              /* -tc */
	char    verify;          /* -w e|w|n|v|p; 0: not given (e) */
	char  **deps;            /* -hold_jid, -W depend: "KIND:JOB" entries */
	int64_t begin_time;      /* -a, ms since the epoch; 0: none */
	char   *cron;            /* --cron "MIN HOUR DOM MON DOW" */
	unsigned mail;           /* -m: MAIL_* bits */
	char   *mail_to;         /* -M addresses, comma-separated */
	char  **operands;        /* script or command, then its arguments; NULL if none */
	/* qrsh only (set qrsh before parsing; qsub refuses these): */
	bool    qrsh;
	int     now;             /* -now y|n, or QO_UNSET */
	int     pty;             /* -pty y|n, or QO_UNSET */
	bool    prefix_rank;     /* -prefix: each output line starts with its rank */
	/* Grid Engine's, kept and shown (qstat -j, qacct): */
	bool    soft_mode;       /* after -soft, until -hard: -l adds to soft */
	struct job_req soft;     /* -soft -l */
	char   *project;         /* -P */
	char   *account;         /* -A */
	char  **context;         /* -ac, -dc, -sc applied in order */
	int     reserve;         /* -R y|n, or QO_UNSET */
	int     js;              /* -js */
	char   *binding;         /* -binding: "TYPE STRATEGY" */
	int     shell_yn;        /* -shell y|n, or QO_UNSET */
	char  **stage_in;        /* --stage-in, -W stagein: paths of the submit directory */
	char  **stage_out;       /* --stage-out, -W stageout: patterns of the working directory */
	char    err[512];        /* the one-line error of a failed parse */
};
#define QSUB_DEFAULT_PREFIX "#$"
void qsub_opts_init(struct qsub_opts *o);
void qsub_opts_free(struct qsub_opts *o);
/* Parses argv[0..argc) (no program name) onto o: later options override
 * earlier ones, -v lists accumulate.  Options end at the first operand; it
 * and everything after it are the operands.  -1 with o->err on bad input. */
int  qsub_opts_parse_argv(struct qsub_opts *o, int argc, char *const *argv);
/* Applies the directive lines of a script (lines starting with prefix; the
 * whole script is scanned, as Grid Engine does).  Operands, -b and -C are not
 * allowed there (-C is ignored, as in Grid Engine).  -1 with o->err. */
int  qsub_opts_parse_script(struct qsub_opts *o, const char *script, const char *prefix);
/* Splits one directive's text into words: blanks separate, quotes group and
 * are removed, a '#' outside quotes starts a comment.  NULL-terminated. */
char **qsub_split_words(const char *line);

/* Parses -a's [[CC]YY]MMDDhhmm[.SS] as local time; -1 on a malformed or
 * impossible date.  now decides the year when it is left out. */
int      qsub_parse_date(const char *s, time_t now, int64_t *ms);
/* The SUBMIT's "deps" list, [{kind, job}], or NULL when there are none. */
json_t  *qsub_deps_json(const struct qsub_opts *o);

/* What the job is built from besides the options. */
struct qsub_env {
	char *const *envp;       /* the submitter's environment */
	const char  *cwd;        /* getcwd() */
	const char  *host;       /* the submit host's short name */
	const char  *user;       /* the submitter's user name */
};
/* The SUBMIT job object.  script is the script text (NULL with -b y).
 * NULL with err on bad input (no command, an environment too large, a value
 * that is not UTF-8). */
json_t *qsub_job_json(const struct qsub_opts *o, const char *script, const struct qsub_env *e,
    char *err, size_t errlen);
/* The job's default name: the base name of the script or command, "STDIN". */
char  *qsub_default_name(const struct qsub_opts *o);

/* qstat_fmt.c: qstat's output, pure functions over the listing's rows
 * (common/msg_rows.h).  The header and one row per job, in Grid Engine's
 * columns; nothing at all when there are no rows. */
void qstat_print_table(FILE *fp, const struct msg_job_row *rows, size_t n);
void qstat_print_row(FILE *fp, const struct msg_job_row *r);
/* A row's columns as every view shows them: Grid Engine's "prior" (-p
 * mapped onto 0 to 1), its state letters, QUEUE@HOST of what runs (else
 * ""), and its ja-task-ID (a task, an array's pending tasks, else ""). */
double      qstat_row_prior(const struct msg_job_row *r);
/* Its "%.5f" text, in a buffer of the thread's that the next call reuses. */
const char *qstat_row_prior_text(const struct msg_job_row *r);
const char *qstat_row_state(const struct msg_job_row *r);
void        qstat_row_queue(const struct msg_job_row *r, char *buf, size_t n);
void        qstat_row_tasks(const struct msg_job_row *r, char *buf, size_t n);
/* Calls fn with each NAME=VALUE of a job's -l request ("matlab", "TRUE"
 * for a key). */
void qstat_req_each(const json_t *req, void (*fn)(void *arg, const char *name, const char *value),
    void *arg);
/* The -q a job's request names (Grid Engine's "Hard requested queues"),
 * allocated, or NULL when it asked for none. */
char *qstat_req_hard_queue(const json_t *req);
/* How many NAME=VALUE qstat_req_each gives. */
size_t qstat_req_count(const json_t *req);
/* VALUE of NAME=VALUE in a job's environment list, or NULL. */
const char *qstat_env_value(const json_t *env, const char *name);
/* Calls fn with each address a job's mail goes to, as Grid Engine's
 * mail_list holds them: -M's USER[@HOST] (host NULL when none was given),
 * else the owner at the submit host. */
void qstat_mail_each(const struct msg_job_detail *d,
    void (*fn)(void *arg, const char *user, const char *host), void *arg);
/* A queue instance (QUEUE@HOST) of the HOSTS reply, as qstat -f, -g c,
 * qselect and qhost -q show it; states holds Grid Engine's letters (u
 * unknown, d disabled, a alarm). */
struct qstat_qinst {
	const char                *queue, *host;
	const struct msg_host_row *h;   /* the host */
	struct msg_host_queue      q;   /* and its queue */
	int64_t       resv, used, tot;
	bool          has_load;
	double        load;
	const char   *arch;
	char          states[4];
};
/* The queue instances of some host rows, by queue then host: a new array
 * (NULL, *n 0 if none) pointing into the rows. */
struct qstat_qinst *qstat_host_qinsts(const struct msg_host_row *hosts, size_t nhosts, size_t *n);
/* Those of a HOSTS reply's "hosts", with the rows they point into. */
struct qstat_qinsts {
	struct msg_host_row *hosts;
	size_t               nhosts;
	struct qstat_qinst  *qi;
	size_t               n;
};
void qstat_qinsts_load(struct qstat_qinsts *all, const json_t *hosts);
void qstat_qinsts_free(struct qstat_qinsts *all);
/* Whether a running row's master runs on the instance. */
bool qstat_row_on(const struct msg_job_row *r, const struct qstat_qinst *qi);
/* qstat -f: Grid Engine's full format, in two parts so the pending rows
 * can be printed as they come.  A block per queue instance (QUEUE@HOST,
 * from each host's "queues" in the HOSTS reply, by queue then host) with
 * its running rows below it; rows is a sorted listing whose running rows
 * go to their queue instance (a parallel job's to its master host).  Then
 * the pending rows of a page under the PENDING JOBS banner, the banner
 * first when banner is set; true when it printed a row. */
void qstat_print_queues(FILE *fp, const json_t *hosts, const struct msg_job_row *rows, size_t n);
bool qstat_print_pending(FILE *fp, const struct msg_job_row *rows, size_t n, bool banner);
/* qstat -j: "key: value" lines in Grid Engine's layout, after a "====" line. */
void qstat_print_job(FILE *fp, const json_t *job);
bool qstat_job_ended(const json_t *job);
/* MM/DD/YYYY HH:MM:SS, local time, from milliseconds since the epoch. */
void qstat_format_time(char *buf, size_t n, int64_t ms);
/* qstat_views.c: qstat -r, -ext, -pri and -g c in Grid Engine's plain layout. */
enum qstat_view { QV_PLAIN, QV_EXT, QV_PRI };
/* The table of a view (its header before the first row when header is
 * set); with req, each job's -r lines below it (rows from job objects). */
void qstat_view_rows(FILE *fp, const struct msg_job_row *rows, size_t n, enum qstat_view v, bool req,
    bool header);
/* qstat -g c: a line per cluster queue. */
void qstat_print_cqueues(FILE *fp, const json_t *hosts);
/* The cluster queues' sums (qstat -g c, plain and -xml). */
struct qstat_cqueue {
	const char *name;
	double      load;           /* the mean of its answering hosts' loads */
	bool        has_load;
	int64_t     used, resv, avail, total, alarm, disabled;
};
struct qstat_cqueue *qstat_cqueues(const json_t *hosts, size_t *n);
void qstat_cqueues_free(struct qstat_cqueue *cq, size_t n);

/* qstat_xml.c: -xml of qstat and qhost in Grid Engine's elements, one
 * pass over the same rows and hosts the plain views print. */
/* Text with &, <, >, " and ' escaped; control characters as "?". */
void xml_text(FILE *fp, const char *s);
/* <name>value</name> on a line of its own, indented by depth spaces. */
void xml_elem(FILE *fp, int depth, const char *name, const char *value);
void xml_elemf(FILE *fp, int depth, const char *name, const char *fmt, ...) NOWQ_ATTR_PRINTF(4, 5);
/* A listing: qstat_xml_begin, then rows (running first, then pending,
 * then finished) or qstat -f's queue instances, then qstat_xml_end. */
#define QX_EXT     0x1   /* -ext */
#define QX_REQ     0x2   /* -r: rows from job objects */
#define QX_FULL    0x4   /* -f: running rows in their queue instances */
struct qstat_xml {
	FILE    *fp;
	unsigned flags;
	int      section;        /* 0: none open, 1: queue_info, 2: job_info */
};
void qstat_xml_begin(struct qstat_xml *x);
void qstat_xml_rows(struct qstat_xml *x, const struct msg_job_row *rows, size_t n);
void qstat_xml_queues(struct qstat_xml *x, const json_t *hosts, const struct msg_job_row *rows, size_t n);
void qstat_xml_end(struct qstat_xml *x);
/* qstat -g c -xml. */
void qstat_xml_cqueues(FILE *fp, const json_t *hosts);
/* qstat -j -xml: the jobs, or when there are none the ids not found. */
void qstat_xml_jobs(FILE *fp, const json_t *jobs, const json_t *missing);
/* qhost -xml. */
struct qhost_view;
void qhost_xml(FILE *fp, const json_t *hosts, const struct qhost_view *v);

/* qconf_show.c: Grid Engine's read-only qconf views (-sm managers, -so,
 * -sel, -sh, -ss, -sconf, -shgrpl, -shgrp, -sul, -su, -sprjl, -sprj):
 * the exit status, or -1 when argv is none of them. */
int qconf_show_view(int argc, char **argv);
/* A CONF reply's text (-sq, -sp, -sconf) on stdout. */
void qconf_print_text(const json_t *rep);

/* qhost_fmt.c: qhost's table, pure functions over the HOSTS reply. */
struct qhost_view {
	char **hosts;        /* -h: only these (NULL: all) */
	bool   attrs;        /* -F: each host's attributes below it */
	char **attr_names;   /* -F LIST: only these (NULL: all) */
	bool   jobs;         /* -j: each host's jobs below it */
	bool   queues;       /* -q: each host's queue instances below it */
};
void qhost_print(FILE *fp, const json_t *hosts, const struct qhost_view *v);
/* Grid Engine's memory sizes: 7.7G, 512.0M, "-" for unknown. */
void qhost_format_mem(char *buf, size_t n, int64_t bytes);

/* stage.c: file staging's transfers (doc/staging.md), for qsub, nowq
 * fetch and the shepherd (stage_put_fd and stage_get_fd are declared in
 * common/common.h).  Each -1 with one sentence in err. */
/* --stage-in's paths (relative to the current directory) hashed, checked
 * and sent: the SUBMIT's stage_in list, or NULL. */
json_t *stage_inputs_send(char *const *names, char *err, size_t n);
/* The job's staged outputs written into dir (NULL: the submit directory
 * when submit_dir and it is here, else the current one), each name
 * printed unless quiet. */
int     stage_fetch(int64_t id, const char *dir, bool submit_dir, bool quiet, char *err, size_t n);
/* nowq fetch [-d DIR] ID... */
int     stage_fetch_main(int argc, char **argv);

#endif
