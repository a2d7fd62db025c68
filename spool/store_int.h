/* store_int.h: what the files of the store share: struct store, its statement cache and the column lists. */
#ifndef NOWQ_STORE_INT_H
#define NOWQ_STORE_INT_H

#include <stdbool.h>
#include <stdint.h>

/* Debian's libsqlite3 is built with the session extension; its
 * declarations are behind these. */
#define SQLITE_ENABLE_SESSION 1
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include <sqlite3.h>

#include "common/common.h"
#include "spool/spool.h"

/*
 * The jobs table's columns after id, in the order rows are read and inserted;
 * the enum of column numbers below is built from the same list so the two
 * cannot drift apart.  env comes last because only some reads want it.
 */
#define JOB_COLUMNS(X) \
	X(task) X(attempt) X(name) X(owner) X(uid) X(gid) X(sup_groups) X(queue) \
	X(prio) X(script_hash) X(argv) X(args) X(shell) X(cwd) X(home) \
	X(out_path) X(err_path) X(join_out) X(submit_host) X(submit_time) \
	X(start_time) X(end_time) X(state) X(hold) X(error) X(delete_req) \
	X(host) X(pid) X(exit_status) X(signal) X(reason) X(utime) X(stime) \
	X(maxrss_kb) X(req) X(rerun) X(pe) X(slots) X(t_first) X(t_last) \
	X(t_step) X(tc) X(suspended) X(begin_time) X(mail) X(mail_to) \
	X(qrsh) X(soft_req) X(project) X(account) X(context) X(reserve) X(js) \
	X(binding) X(noshell) X(slots_min) X(stage_in) X(stage_out) X(in_path)
#define X_ENUM(c)	C_##c,
#define X_SEL(c)	", j." #c
#define X_NAME(c)	#c ", "
#define X_PARAM(c)	"?, "
#define X_STR(c)	#c,
enum job_col { C_id, JOB_COLUMNS(X_ENUM) C_env, C_body };

/* What a listing reads of a job (struct job_brief), its own select: no
 * struct job to fill and free a row.  B_x numbers them in that select,
 * and brief_in_job (store_row.c) finds them in a job's row. */
#define BRIEF_COLUMNS(X) \
	X(task) X(name) X(owner) X(queue) X(prio) X(submit_time) X(start_time) \
	X(state) X(hold) X(error) X(delete_req) X(host) X(slots) X(t_first) \
	X(t_last) X(t_step) X(suspended)
#define B_ENUM(c)	B_##c,
enum brief_col { B_id, BRIEF_COLUMNS(B_ENUM) B_N };
#undef B_ENUM
#define JOB_SEL_BRIEF	"SELECT j.id" BRIEF_COLUMNS(X_SEL) " FROM jobs j"
#define JOB_SEL_LIGHT	"SELECT j.id" JOB_COLUMNS(X_SEL) ", NULL, NULL FROM jobs j"
#define JOB_FULL_COLS	"SELECT j.id" JOB_COLUMNS(X_SEL) ", j.env, s.body FROM jobs j "
#define JOB_JOIN_SCRIPT	" LEFT JOIN scripts s ON s.hash = j.script_hash"
#define JOB_SEL_FULL	JOB_FULL_COLS JOB_JOIN_SCRIPT
/* Without statistics the planner would rather take jobs_state and sort every
 * pending job; INDEXED BY makes the walk of the partial index a promise (and
 * preparing fails loudly if the index ever stops matching the query). */
#define JOB_RUNNABLE(idx) JOB_FULL_COLS "INDEXED BY " idx JOB_JOIN_SCRIPT \
			" WHERE j.state = 0 AND j.hold = 0 AND j.error = 0"

/*
 * The accounting table's columns after id, in the order they are written and
 * read.  host is a blank-separated list; failed is the reason's text and
 * failed_code Grid Engine's number for it; utime, stime and maxrss_kb are
 * wait4's ru_utime, ru_stime and ru_maxrss; maxvmem the shepherd's peak.
 */
#define ACCT_COLUMNS(X) \
	X(job_id) X(task) X(attempt) X(name) X(owner) X(uid) X(gid) X(group_name) \
	X(queue) X(host) X(submit_time) X(start_time) X(end_time) X(state) \
	X(exit_status) X(signal) X(failed_code) X(failed) X(prio) X(pe) X(slots) \
	X(project) X(account) X(wallclock) X(utime) X(stime) X(maxvmem) X(maxrss_kb) \
	X(ru_ixrss) X(ru_ismrss) X(ru_idrss) X(ru_isrss) X(ru_minflt) X(ru_majflt) X(ru_nswap) X(ru_inblock) \
	X(ru_oublock) X(ru_msgsnd) X(ru_msgrcv) X(ru_nsignals) X(ru_nvcsw)
#define A_ENUM(c)	A_##c,
enum acct_col { A_id, ACCT_COLUMNS(A_ENUM) A_ru_nivcsw };
#undef A_ENUM
/* ru_nivcsw closes each list, so none ends with a comma. */
#define ACCT_INSERT_COLS	ACCT_COLUMNS(X_NAME) "ru_nivcsw"
#define ACCT_INSERT_PARAMS	ACCT_COLUMNS(X_PARAM) "?"
#define ACCT_SELECT	"SELECT id, " ACCT_COLUMNS(X_NAME) "ru_nivcsw FROM accounting"
/* The filters every listing and the sum share: ?3 since (end_time), ?7
 * project and ?8 account (qacct -P, -A; few sites have many projects, so
 * no index), ?9 queue, ?10 a host among the row's, ?11 and ?12 a time
 * range (0: open) of the start, or of the end when ?13 is 1 (an attempt
 * that never started is in no range of starts), ?14 group, ?15 parallel
 * environment (NONE: none), ?16 slots (NULL: any). */
#define ACCT_FILTER	" AND end_time >= ?3 AND (?7 IS NULL OR project = ?7)" \
			" AND (?14 IS NULL OR " ACCT_GROUP " = ?14)" \
			" AND (?15 IS NULL OR coalesce(pe, 'NONE') = ?15) AND (?16 IS NULL OR slots = ?16)" \
			" AND (?8 IS NULL OR account = ?8) AND (?9 IS NULL OR queue = ?9)" \
			" AND (?10 IS NULL OR instr(' ' || lower(host) || ' ', ' ' || lower(?10) || ' ') > 0)" \
			" AND (CASE ?13 WHEN 1 THEN end_time ELSE start_time END) >= ?11" \
			" AND (?12 = 0 OR (CASE ?13 WHEN 1 THEN end_time ELSE start_time END) < ?12)" \
			" AND ((?11 = 0 AND ?12 = 0) OR ?13 = 1 OR start_time > 0)"
#define ACCT_PAGE	ACCT_FILTER " AND (end_time, id) > (?4, ?5)" \
			" ORDER BY end_time, id LIMIT ?6"
/* The row's group name, else its number. */
#define ACCT_GROUP	"coalesce(group_name, CAST(gid AS TEXT))"
/* The first host of the row's list: a parallel job's master host. */
#define ACCT_HOST1	"coalesce(CASE WHEN instr(host, ' ') > 0" \
			" THEN substr(host, 1, instr(host, ' ') - 1) ELSE host END, '')"


/*
 * Every statement is prepared once and kept; S_FOREACH is the first of the
 * variants of the job listing (which FE_ filters are present), built on
 * demand.
 */
enum stmt_id {
	S_BEGIN, S_COMMIT, S_ROLLBACK,
	S_META_GET, S_META_SET, S_META_DEL,
	S_SCRIPT_FIND, S_SCRIPT_ADD, S_SCRIPT_GC,
	S_JOB_INSERT, S_JOB_UPDATE, S_JOB_GET, S_JOB_GET_FULL, S_JOB_DELETE,
	S_JOB_RUN,
	S_RUNNABLE, S_RUNNABLE_UID, S_PURGE, S_COUNT_ALL, S_COUNT_STATES, S_COUNT_BY_STATE,
	S_ACCT_INSERT, S_HOST_UPSERT, S_HOSTS_ALL,
	S_DEP_ADD, S_DEP_DEL, S_DEPS_OF, S_DEPENDENTS, S_DEPS_COUNT, S_BEGIN_DUE,
	S_ACCT_LAST,
	S_CRON_INSERT, S_CRON_UPDATE, S_CRON_DELETE, S_CRON_GET, S_CRON_ALL, S_CRON_DUE,
	S_MAIL_ADD, S_MAIL_DUE, S_MAIL_DONE, S_MAIL_RETRY, S_MAIL_OF_JOB,
	/* ACCT_BY_* in the order of enum acct_key. */
	S_ACCT_BY_JOB, S_ACCT_BY_NAME, S_ACCT_BY_OWNER, S_ACCT_BY_END, S_ACCT_SUM,
	S_TASK_PUT, S_TASK_IDS, S_TASK_COUNTS, S_TASK_DEL, S_ARRAY_NEXT, S_ARRAY_SET_NEXT,
	S_TASK_UNFINISHED,
	S_HOST_LISTS, S_ALIAS_ADD, S_ALIAS_DEL, S_ALIAS_DEL_HOST, S_ALIASES_ALL,
	S_RESV_PUT, S_RESV_DEL, S_RESV_ALL,
	S_KEY_GET, S_KEY_PUT, S_KEY_PURGE,
	S_STAGE_OUT_ADD, S_STAGE_OUT_OF, S_STAGE_USER_BYTES, S_STAGE_USES, S_STAGE_USES_JOB,
	/* Task views, built by store_task_sql: parent columns with the task's own. */
	S_TASK_GET, S_TASK_GET_FULL, S_TASKS_OF, S_TASKS_ACTIVE, S_TASKS_ACTIVE_HOST,
	S_FOREACH,
	S_NSTMT = S_FOREACH + 2048
};
#define FE_STATES	0x1u
#define FE_OWNER	0x2u
#define FE_HOST		0x4u
#define FE_FULL		0x8u
#define FE_BRIEF	0x10u
/* Pending jobs (and running arrays with a task still pending) in the
 * listing's order (prio desc, id) from a cursor: the rest of the cursor's
 * priority (FE_PRIO), then every lower one (both). */
#define FE_PRIO		0x20u
#define FE_PRIO_LOWER	0x40u
/* Of the pending jobs only the arrays (their tasks may run). */
#define FE_ARRAYS	0x80u
/* A page of at most ?11 jobs, each state's read from jobs_state. */
#define FE_PAGE		0x100u
/* Only the columns the scheduler's usage counts read. */
#define FE_USAGE	0x200u
/* Of the running jobs only the arrays with a task still pending. */
#define FE_PENDING_TASKS 0x400u
/* The arrays with a task whose row is still pending (state 0): held on
 * its own (hold 1) or waiting in error (Eqw), while its parent may run.
 * "state < 3" lets SQLite take the partial index tasks_active, so this
 * reads the tasks in flight only. */
#define SQL_PENDING_TASKS	"SELECT job_id FROM tasks WHERE state < 3 AND state = 0"

#define APPLY_MAXCOL	64	/* a set of columns is a uint64_t */
#define APPLY_NUP	16	/* UPDATE statements kept per table, one per set of columns */

struct apply_tab {
	struct apply_tab *next;
	char             *name;
	int               ncol;                 /* the table's */
	char             *col[APPLY_MAXCOL];    /* quoted, in cid order */
	uint64_t          pk;                   /* the primary key's columns */
	unsigned char     pkpos[APPLY_MAXCOL];  /* each column's place in the key, 0: not in it */
	sqlite3_stmt     *sel;                  /* the capture's read of a row by its key */
	bool              autoinc;              /* sqlite_sequence: applied by apply_autoinc */
	int               ncs;                  /* the changeset's columns the statements are for */
	sqlite3_stmt     *ins, *del;
	sqlite3_stmt     *up[APPLY_NUP];
	uint64_t          upset[APPLY_NUP];     /* the columns up[i] sets */
	int               nup, upnext;
};

struct store {
	sqlite3      *db;
	sqlite3_stmt *stmt[S_NSTMT];
	bool          in_txn;    /* between store_begin and store_commit/rollback */
	/* Replication: with capture on, the preupdate hook records each
	 * transaction's changes on every table with a primary key (so tables
	 * added later are covered without a word here), and the commit leaves
	 * its changeset for the taking (capture below). */
	bool             capture;
	struct capture  *cap;
	void            *cs;      /* the last commit's changeset (malloc), or NULL */
	int              ncs;
	int64_t          cs_seq;
	int64_t          seq;     /* last replication sequence (meta repl.seq), applied in the open transaction on a standby */
	int64_t          seq_committed; /* seq as committed: a rollback goes back to it */
	bool             readonly; /* store_open_readonly: one read transaction, ended by close */
	struct apply_tab *apply;   /* the standby's statements per table (store_apply) */
	bool             nospace;  /* the last failure was for want of space (store_out_of_space) */
};

/*
 * One value for a statement's parameter: stmt_do, stmt_first and
 * stmt_bound bind a list of them to ?1, ?2, ... in order.  BIND(x) picks
 * the type from x's: text for a string (NULL binds NULL), a real for a
 * double, an integer for the rest.
 */
struct bind {
	enum { BIND_INT, BIND_REAL, BIND_TEXT, BIND_BLOB } type;
	int64_t n;              /* BIND_BLOB: its length */
	union {
		int64_t     i;
		double      d;
		const void *p;  /* BIND_TEXT (NULL binds NULL), BIND_BLOB */
	};
};

static inline struct bind
bind_int(int64_t v)
{
	return (struct bind){ .type = BIND_INT, .i = v };
}

static inline struct bind
bind_real(double v)
{
	return (struct bind){ .type = BIND_REAL, .d = v };
}

static inline struct bind
bind_str(const char *v)
{
	return (struct bind){ .type = BIND_TEXT, .p = v };
}

#define BIND(x)		_Generic((x), char *: bind_str, const char *: bind_str, 			    double: bind_real, default: bind_int)(x)
#define BIND_BLOB(v, len) ((struct bind){ .type = BIND_BLOB, .n = (int64_t)(len), .p = (v) })
/* The list and its length, as the stmt_* functions take them. */
#define BINDS(...)	(const struct bind[]){ __VA_ARGS__ }, \
			(int)(sizeof((const struct bind[]){ __VA_ARGS__ }) / sizeof(struct bind))
#define NO_BINDS	NULL, 0

struct capture;

/* store_stmt.c */
int		 store_fail(struct store *, const char *);
sqlite3_stmt	*stmt_take(struct store *, enum stmt_id, bool *);
void		 stmt_give(sqlite3_stmt *, bool);
int		 stmt_run(struct store *, sqlite3_stmt *, bool, const char *);
sqlite3_stmt	*stmt_bound(struct store *, enum stmt_id, bool *, const struct bind *, int);
int		 stmt_do(struct store *, enum stmt_id, const char *, const struct bind *, int);
int		 stmt_walk(struct store *, sqlite3_stmt *, bool, const char *,
		    int (*)(void *, sqlite3_stmt *), void *);
int		 stmt_first(struct store *, enum stmt_id, sqlite3_stmt **, bool *, const char *,
		    const struct bind *, int);
int		 bind_text(sqlite3_stmt *, int, const char *);
int		 bind_states(sqlite3_stmt *, unsigned);
int		 store_exec(sqlite3 *, const char *);
int64_t		 store_query_int(sqlite3 *, const char *);
int		 op_begin(struct store *, bool *);
int		 op_end(struct store *, bool, int);

/* store_row.c */
char		*strv_to_text(char *const *, bool *);
char		*groups_to_text(const gid_t *, int);
int64_t		 col_int(sqlite3_stmt *, int, int64_t, int64_t, int64_t, const char *);
char		*col_str(sqlite3_stmt *, int);
char	       **col_strv(sqlite3_stmt *, int, int64_t, const char *);
char		*req_to_text(const struct job_req *);
struct job	*row_to_job(sqlite3_stmt *, bool);
void		 row_to_brief(sqlite3_stmt *, struct job_brief *);
/* The VFS the writing connection opens with (walbuf.c): its name. */
const char	*store_walbuf_vfs(void);

/* store_cap.c */
int		 store_capture_end(struct store *);
void		 cap_reset(struct capture *);
void		 cap_free(struct store *);

/* store_apply.c */
struct apply_tab *apply_tab(struct store *, const char *, int *);
void		 apply_free(struct store *);
bool		 apply_varint(const unsigned char *, int, int *, uint64_t *);

#endif
