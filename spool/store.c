/* store.c: the master's SQLite database: schema and migrations, cached statements, typed access to jobs, scripts, accounting, hosts and meta, the primary's capture of each transaction as a changeset, and the standby's applier of them. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Debian's libsqlite3 is built with the session extension; its
 * declarations are behind these. */
#define SQLITE_ENABLE_SESSION 1
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include <sqlite3.h>
#include <unistd.h>

#include "common/common.h"
#include "spool/spool.h"

/* Long enough to ride out a checkpoint or a `qmaster -C` reading alongside. */
#define STORE_BUSY_MS	5000
/* Hash collisions are astronomically rare; many in a row means a bug. */
#define STORE_MAX_SUFFIX 1000

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
	X(qrsh)
#define X_ENUM(c)	C_##c,
#define X_SEL(c)	", j." #c
#define X_NAME(c)	#c ", "
#define X_PARAM(c)	"?, "
#define X_STR(c)	#c,
enum job_col { C_id, JOB_COLUMNS(X_ENUM) C_env, C_body };

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
 * Forward migrations: step i takes user_version from i to i + 1, each in one
 * transaction.  Never edit a step that has shipped; add one.
 *
 * The partial indexes serve one query each: jobs_runnable and
 * jobs_runnable_uid hold exactly the jobs a PULL may start, already in
 * scheduling order, so matching reads the first rows instead of scanning;
 * jobs_finished holds only ended jobs, keyed by end time, for the purge.
 */
static const char *const store_migrations[STORE_SCHEMA_VERSION] = {
	/* 0 -> 1: jobs and their scripts. */
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE scripts (hash TEXT PRIMARY KEY, body BLOB NOT NULL);"
	"CREATE TABLE jobs ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" task INTEGER NOT NULL DEFAULT 0,"
	" attempt INTEGER NOT NULL DEFAULT 0,"
	" name TEXT,"
	" owner TEXT,"
	" uid INTEGER NOT NULL DEFAULT 0,"
	" gid INTEGER NOT NULL DEFAULT 0,"
	" sup_groups TEXT,"
	" queue TEXT,"
	" prio INTEGER NOT NULL DEFAULT 0,"
	" script_hash TEXT REFERENCES scripts(hash),"
	" argv TEXT,"
	" args TEXT,"
	" shell TEXT,"
	" cwd TEXT,"
	" home TEXT,"
	" out_path TEXT,"
	" err_path TEXT,"
	" join_out INTEGER NOT NULL DEFAULT 0,"
	" submit_host TEXT,"
	" submit_time INTEGER NOT NULL DEFAULT 0,"
	" start_time INTEGER NOT NULL DEFAULT 0,"
	" end_time INTEGER NOT NULL DEFAULT 0,"
	" state INTEGER NOT NULL DEFAULT 0,"
	" hold INTEGER NOT NULL DEFAULT 0,"
	" error INTEGER NOT NULL DEFAULT 0,"
	" delete_req INTEGER NOT NULL DEFAULT 0,"
	" host TEXT,"
	" pid INTEGER NOT NULL DEFAULT 0,"
	" exit_status INTEGER NOT NULL DEFAULT 0,"
	" signal INTEGER NOT NULL DEFAULT 0,"
	" reason TEXT,"
	" utime REAL NOT NULL DEFAULT 0,"
	" stime REAL NOT NULL DEFAULT 0,"
	" maxrss_kb INTEGER NOT NULL DEFAULT 0,"
	" env TEXT);"
	"CREATE INDEX jobs_runnable ON jobs (prio DESC, id)"
	" WHERE state = 0 AND hold = 0 AND error = 0;"
	"CREATE INDEX jobs_runnable_uid ON jobs (uid, prio DESC, id)"
	" WHERE state = 0 AND hold = 0 AND error = 0;"
	"CREATE INDEX jobs_state ON jobs (state);"
	"CREATE INDEX jobs_host ON jobs (host, state);"
	"CREATE INDEX jobs_owner ON jobs (owner, state);"
	"CREATE INDEX jobs_finished ON jobs (end_time) WHERE state >= 3;"
	"CREATE INDEX jobs_script ON jobs (script_hash);",

	/* 1 -> 2: accounting and hosts. */
	"CREATE TABLE accounting ("
	" id INTEGER PRIMARY KEY,"
	" job_id INTEGER NOT NULL,"
	" task INTEGER NOT NULL DEFAULT 0,"
	" attempt INTEGER NOT NULL DEFAULT 0,"
	" name TEXT,"
	" owner TEXT,"
	" uid INTEGER,"
	" gid INTEGER,"
	" queue TEXT,"
	" host TEXT,"
	" submit_time INTEGER,"
	" start_time INTEGER,"
	" end_time INTEGER,"
	" state INTEGER,"
	" exit_status INTEGER,"
	" signal INTEGER,"
	" failed TEXT,"
	" utime REAL,"
	" stime REAL,"
	" maxrss_kb INTEGER,"
	" UNIQUE (job_id, task, attempt));"
	"CREATE INDEX accounting_owner ON accounting (owner, end_time);"
	"CREATE INDEX accounting_end ON accounting (end_time);"
	"CREATE TABLE hosts ("
	" name TEXT PRIMARY KEY,"
	" slots INTEGER NOT NULL DEFAULT 0,"
	" load1 REAL NOT NULL DEFAULT 0,"
	" load5 REAL NOT NULL DEFAULT 0,"
	" load15 REAL NOT NULL DEFAULT 0,"
	" last_seen INTEGER NOT NULL DEFAULT 0);",

	/* 2 -> 3: what a job asks of the scheduler (issue 9). req is the -l
	 * request as JSON, NULL when empty. */
	"ALTER TABLE jobs ADD COLUMN req TEXT;"
	"ALTER TABLE jobs ADD COLUMN rerun INTEGER NOT NULL DEFAULT -1;"
	"ALTER TABLE jobs ADD COLUMN pe TEXT;"
	"ALTER TABLE jobs ADD COLUMN slots INTEGER NOT NULL DEFAULT 1;"
	"ALTER TABLE jobs ADD COLUMN t_first INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN t_last INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN t_step INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN tc INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN suspended INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE hosts ADD COLUMN attrs TEXT;",

	/* 3 -> 4: dependencies and start times (issue 3).  A deps row is one
	 * condition a job still waits for; it goes when met.  jobs_begin holds
	 * only jobs held for a start time (HOLD_TIME, 0x4). */
	"CREATE TABLE deps ("
	" job_id INTEGER NOT NULL,"
	" dep_id INTEGER NOT NULL,"
	" kind INTEGER NOT NULL,"
	" PRIMARY KEY (job_id, dep_id, kind)) WITHOUT ROWID;"
	"CREATE INDEX deps_dep ON deps (dep_id);"
	"ALTER TABLE jobs ADD COLUMN begin_time INTEGER NOT NULL DEFAULT 0;"
	"CREATE INDEX jobs_begin ON jobs (begin_time) WHERE hold & 4;",

	/* 4 -> 5: accounting as Grid Engine keeps it (issue: qacct): the
	 * group's name, priority, granted PE and slots, failed as a code
	 * (the text stays in failed), the wall clock, and wait4's whole
	 * rusage (utime, stime and maxrss_kb were there: ru_utime, ru_stime,
	 * ru_maxrss).  host holds a blank-separated list (parallel jobs).
	 * Rows of jobs deleted before they ran go: Grid Engine keeps none. */
	"ALTER TABLE accounting ADD COLUMN group_name TEXT;"
	"ALTER TABLE accounting ADD COLUMN prio INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE accounting ADD COLUMN pe TEXT;"
	"ALTER TABLE accounting ADD COLUMN slots INTEGER NOT NULL DEFAULT 1;"
	"ALTER TABLE accounting ADD COLUMN failed_code INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE accounting ADD COLUMN wallclock REAL NOT NULL DEFAULT 0;"
	"ALTER TABLE accounting ADD COLUMN ru_ixrss INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE accounting ADD COLUMN ru_ismrss INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE accounting ADD COLUMN ru_idrss INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE accounting ADD COLUMN ru_isrss INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE accounting ADD COLUMN ru_minflt INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE accounting ADD COLUMN ru_majflt INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE accounting ADD COLUMN ru_nswap INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE accounting ADD COLUMN ru_inblock INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE accounting ADD COLUMN ru_oublock INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE accounting ADD COLUMN ru_msgsnd INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE accounting ADD COLUMN ru_msgrcv INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE accounting ADD COLUMN ru_nsignals INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE accounting ADD COLUMN ru_nvcsw INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE accounting ADD COLUMN ru_nivcsw INTEGER NOT NULL DEFAULT 0;"
	"DELETE FROM accounting WHERE state = 5 AND coalesce(start_time, 0) = 0;"
	"UPDATE accounting SET"
	" wallclock = max(0, coalesce(end_time, 0) - coalesce(start_time, 0)) / 1000.0,"
	" failed_code = CASE WHEN signal > 0 OR failed LIKE 'lost:%' THEN 100"
	"  WHEN state = 0 THEN 1 ELSE 0 END,"
	" prio = coalesce((SELECT j.prio FROM jobs j WHERE j.id = job_id), 0),"
	" pe = (SELECT j.pe FROM jobs j WHERE j.id = job_id),"
	" slots = coalesce((SELECT j.slots FROM jobs j WHERE j.id = job_id), 1);"
	"CREATE INDEX accounting_name ON accounting (name, end_time);",

	/* 5 -> 6: cron entries (issue 3).  job is the job as submitted, as
	 * JSON with its script: every tick makes an ordinary job of it.
	 * cron_due holds only the entries that are not paused. */
	"CREATE TABLE cron ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" owner TEXT NOT NULL,"
	" uid INTEGER NOT NULL,"
	" spec TEXT NOT NULL,"
	" job TEXT NOT NULL,"
	" next_run INTEGER NOT NULL,"
	" last_job INTEGER NOT NULL DEFAULT 0,"
	" hold INTEGER NOT NULL DEFAULT 0,"
	" created INTEGER NOT NULL);"
	"CREATE INDEX cron_due ON cron (next_run) WHERE hold = 0;",

	/* 6 -> 7: mail (issue 3).  A message waits in mail_outbox until its
	 * mailer exited 0. */
	"ALTER TABLE jobs ADD COLUMN mail INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN mail_to TEXT;"
	"CREATE TABLE mail_outbox ("
	" id INTEGER PRIMARY KEY,"
	" job_id INTEGER NOT NULL,"
	" message TEXT NOT NULL,"
	" attempts INTEGER NOT NULL DEFAULT 0,"
	" next_try INTEGER NOT NULL,"
	" last_error TEXT,"
	" created INTEGER NOT NULL);"
	"CREATE INDEX mail_due ON mail_outbox (next_try);"
	"CREATE INDEX mail_job ON mail_outbox (job_id);",

	/* 7 -> 8: array tasks.  Only tasks that left the pending state have a
	 * row: the pending ones are the job's range minus its rows, so a
	 * million-task array costs one row until its tasks start. */
	"CREATE TABLE tasks ("
	" job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	" task INTEGER NOT NULL,"
	" attempt INTEGER NOT NULL DEFAULT 0,"
	" state INTEGER NOT NULL DEFAULT 0,"
	" error INTEGER NOT NULL DEFAULT 0,"
	" delete_req INTEGER NOT NULL DEFAULT 0,"
	" host TEXT,"
	" pid INTEGER NOT NULL DEFAULT 0,"
	" start_time INTEGER NOT NULL DEFAULT 0,"
	" end_time INTEGER NOT NULL DEFAULT 0,"
	" exit_status INTEGER NOT NULL DEFAULT 0,"
	" signal INTEGER NOT NULL DEFAULT 0,"
	" reason TEXT,"
	" utime REAL NOT NULL DEFAULT 0,"
	" stime REAL NOT NULL DEFAULT 0,"
	" maxrss_kb INTEGER NOT NULL DEFAULT 0,"
	" suspended INTEGER NOT NULL DEFAULT 0,"
	" PRIMARY KEY (job_id, task)) WITHOUT ROWID;"
	"CREATE INDEX tasks_active ON tasks (state, host) WHERE state < 3;"
	/* An array's cursor: no task below it is pending, so dispatch and
	 * listings read only the rows from it on. */
	"ALTER TABLE jobs ADD COLUMN t_next INTEGER NOT NULL DEFAULT 0;"
	"CREATE INDEX tasks_unfinished ON tasks (job_id, state) WHERE state < 3;",

	/* 8 -> 9: host lists and reservations (issue 4).  A host's users (who
	 * may run jobs there; NULL or empty: everyone) and owners (who may
	 * reserve it, besides managers) are JSON lists of user names; an alias
	 * is one row per host it names; a reservation's users and hosts are
	 * JSON lists, its window is in ms, state 0 waits for its start and 1
	 * is active (an ended one is deleted). */
	"ALTER TABLE hosts ADD COLUMN users TEXT;"
	"ALTER TABLE hosts ADD COLUMN owners TEXT;"
	"CREATE TABLE aliases ("
	" name TEXT NOT NULL,"
	" host TEXT NOT NULL,"
	" PRIMARY KEY (name, host)) WITHOUT ROWID;"
	"CREATE TABLE reservations ("
	" name TEXT PRIMARY KEY,"
	" owner TEXT NOT NULL,"
	" uid INTEGER NOT NULL,"
	" users TEXT,"
	" hosts TEXT NOT NULL,"
	" start_time INTEGER NOT NULL,"
	" end_time INTEGER NOT NULL,"
	" flags INTEGER NOT NULL DEFAULT 0,"
	" mail INTEGER NOT NULL DEFAULT 0,"
	" state INTEGER NOT NULL DEFAULT 0,"
	" created INTEGER NOT NULL);",

	/* 9 -> 10: the listing's pending section in its order (priority
	 * down, then id), held jobs included, so a page of a million
	 * pending jobs is a range of this index, not a sort. */
	"CREATE INDEX jobs_pending ON jobs (prio DESC, id) WHERE state = 0;",
	/* 10 -> 11: submissions' idempotency keys (issue 8).  A qsub retried
	 * after a failover finds the job its first try made; the tick
	 * purges keys older than a day. */
	"CREATE TABLE submit_keys ("
	" key TEXT PRIMARY KEY,"
	" job_id INTEGER NOT NULL,"
	" created INTEGER NOT NULL);"
	"CREATE INDEX submit_keys_job ON submit_keys (job_id);",
	/* 11 -> 12: qrsh jobs (issue 10): where the job's streams go, "HOST
	 * PORT SECRET"; NULL for a batch job. */
	"ALTER TABLE jobs ADD COLUMN qrsh TEXT;",
};

/*
 * The accounting table's columns after id, in the order they are written and
 * read.  host is a blank-separated list; failed is the reason's text and
 * failed_code Grid Engine's number for it; utime, stime and maxrss_kb are
 * wait4's ru_utime, ru_stime and ru_maxrss.
 */
#define ACCT_COLUMNS(X) \
	X(job_id) X(task) X(attempt) X(name) X(owner) X(uid) X(gid) X(group_name) \
	X(queue) X(host) X(submit_time) X(start_time) X(end_time) X(state) \
	X(exit_status) X(signal) X(failed_code) X(failed) X(prio) X(pe) X(slots) \
	X(wallclock) X(utime) X(stime) X(maxrss_kb) X(ru_ixrss) X(ru_ismrss) \
	X(ru_idrss) X(ru_isrss) X(ru_minflt) X(ru_majflt) X(ru_nswap) X(ru_inblock) \
	X(ru_oublock) X(ru_msgsnd) X(ru_msgrcv) X(ru_nsignals) X(ru_nvcsw)
#define A_ENUM(c)	A_##c,
enum acct_col { A_id, ACCT_COLUMNS(A_ENUM) A_ru_nivcsw };
#undef A_ENUM
/* ru_nivcsw closes each list, so none ends with a comma. */
#define ACCT_INSERT_COLS	ACCT_COLUMNS(X_NAME) "ru_nivcsw"
#define ACCT_INSERT_PARAMS	ACCT_COLUMNS(X_PARAM) "?"
#define ACCT_SELECT	"SELECT id, " ACCT_COLUMNS(X_NAME) "ru_nivcsw FROM accounting"
#define ACCT_PAGE	" AND end_time >= ?3 AND (end_time, id) > (?4, ?5)" \
			" ORDER BY end_time, id LIMIT ?6"
#define ACCT_SUM(group)	"SELECT " #group ", count(*), sum(wallclock), sum(utime)," \
			" sum(stime) FROM accounting"

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
	S_RUNNABLE, S_RUNNABLE_UID, S_PURGE, S_COUNT_ALL, S_COUNT_STATES, S_COUNT_BY_STATE,
	S_ACCT_INSERT, S_HOST_UPSERT, S_HOSTS_ALL,
	S_DEP_ADD, S_DEP_DEL, S_DEPS_OF, S_DEPENDENTS, S_DEPS_COUNT, S_BEGIN_DUE,
	S_ACCT_LAST,
	S_CRON_INSERT, S_CRON_UPDATE, S_CRON_DELETE, S_CRON_GET, S_CRON_ALL, S_CRON_DUE,
	S_MAIL_ADD, S_MAIL_DUE, S_MAIL_DONE, S_MAIL_RETRY, S_MAIL_OF_JOB,
	/* ACCT_BY_* in the order of enum acct_key; SUM_* + by_owner * 2 + has owner. */
	S_ACCT_BY_JOB, S_ACCT_BY_NAME, S_ACCT_BY_OWNER, S_ACCT_BY_END,
	S_ACCT_SUM_ALL, S_ACCT_SUM_ALL_OWNER, S_ACCT_SUM_BY_OWNER, S_ACCT_SUM_BY_OWNER_ONE,
	S_TASK_PUT, S_TASK_IDS, S_TASK_COUNTS, S_TASK_DEL, S_ARRAY_NEXT, S_ARRAY_SET_NEXT,
	S_TASK_UNFINISHED,
	S_HOST_LISTS, S_ALIAS_ADD, S_ALIAS_DEL, S_ALIAS_DEL_HOST, S_ALIASES_ALL,
	S_RESV_PUT, S_RESV_DEL, S_RESV_ALL,
	S_KEY_GET, S_KEY_PUT, S_KEY_PURGE,
	/* Task views, built by store_task_sql: parent columns with the task's own. */
	S_TASK_GET, S_TASK_GET_FULL, S_TASKS_OF, S_TASKS_ACTIVE, S_TASKS_ACTIVE_HOST,
	S_FOREACH,
	S_NSTMT = S_FOREACH + 1024
};
#define FE_STATES	0x1u
#define FE_OWNER	0x2u
#define FE_HOST		0x4u
#define FE_FULL		0x8u
#define FE_BRIEF	0x10u
/* Pending jobs in the listing's order (prio desc, id) from a cursor: the
 * rest of the cursor's priority (FE_PRIO), then every lower one (both). */
#define FE_PRIO		0x20u
#define FE_PRIO_LOWER	0x40u
/* Of the pending jobs only the arrays (their tasks may run). */
#define FE_ARRAYS	0x80u
/* A page of at most ?11 jobs, each state's read from jobs_state. */
#define FE_PAGE		0x100u
/* Only the columns the scheduler's usage counts read. */
#define FE_USAGE	0x200u

static const char *const stmt_sql[S_FOREACH] = {
	[S_BEGIN] = "BEGIN IMMEDIATE",
	[S_COMMIT] = "COMMIT",
	[S_ROLLBACK] = "ROLLBACK",
	[S_META_GET] = "SELECT value FROM meta WHERE key = ?1",
	[S_META_SET] = "INSERT INTO meta (key, value) VALUES (?1, ?2)"
	    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
	[S_META_DEL] = "DELETE FROM meta WHERE key = ?1",
	[S_SCRIPT_FIND] = "SELECT body = ?2 FROM scripts WHERE hash = ?1",
	[S_SCRIPT_ADD] = "INSERT INTO scripts (hash, body) VALUES (?1, ?2)",
	[S_SCRIPT_GC] = "DELETE FROM scripts WHERE hash = ?1"
	    " AND NOT EXISTS (SELECT 1 FROM jobs WHERE script_hash = ?1)",
	[S_JOB_INSERT] = "INSERT INTO jobs (" JOB_COLUMNS(X_NAME) "env) VALUES ("
	    JOB_COLUMNS(X_PARAM) "?)",
	[S_JOB_UPDATE] = "UPDATE jobs SET state = ?2, hold = ?3, error = ?4,"
	    " delete_req = ?5, attempt = ?6, host = ?7, pid = ?8, submit_time = ?9,"
	    " start_time = ?10, end_time = ?11, exit_status = ?12, signal = ?13,"
	    " reason = ?14, utime = ?15, stime = ?16, maxrss_kb = ?17, prio = ?18,"
	    " name = ?19, queue = ?20, req = ?21, rerun = ?22, suspended = ?23,"
	    " begin_time = ?24 WHERE id = ?1",
	[S_JOB_GET] = JOB_SEL_LIGHT " WHERE j.id = ?1",
	[S_JOB_GET_FULL] = JOB_SEL_FULL " WHERE j.id = ?1",
	[S_JOB_DELETE] = "DELETE FROM jobs WHERE id = ?1 RETURNING script_hash",
	[S_RUNNABLE] = JOB_RUNNABLE("jobs_runnable") " ORDER BY j.prio DESC, j.id LIMIT ?1",
	[S_RUNNABLE_UID] = JOB_RUNNABLE("jobs_runnable_uid") " AND j.uid = ?2"
	    " ORDER BY j.prio DESC, j.id LIMIT ?1",
	/* "state >= 3" spelled as in the jobs_finished index, so it is used. */
	[S_PURGE] = "DELETE FROM jobs WHERE state >= 3 AND end_time < ?1 RETURNING script_hash",
	[S_COUNT_ALL] = "SELECT count(*) FROM jobs",
	[S_COUNT_STATES] = "SELECT count(*) FROM jobs WHERE state IN (?1, ?2, ?3, ?4, ?5, ?6)",
	[S_COUNT_BY_STATE] = "SELECT state, count(*) FROM jobs GROUP BY state",
	[S_ACCT_INSERT] = "INSERT OR REPLACE INTO accounting (" ACCT_INSERT_COLS
	    ") VALUES (" ACCT_INSERT_PARAMS ")",
	/* Each walks one index in (end_time, id) order, so a page after the
	 * cursor (?4, ?5) costs its own rows, not the table's. */
	[S_ACCT_BY_JOB] = ACCT_SELECT " WHERE job_id = ?1" ACCT_PAGE,
	[S_ACCT_BY_NAME] = ACCT_SELECT " WHERE name = ?1" ACCT_PAGE,
	[S_ACCT_BY_OWNER] = ACCT_SELECT " WHERE owner = ?1" ACCT_PAGE,
	[S_ACCT_BY_END] = ACCT_SELECT " WHERE ?1 IS NULL" ACCT_PAGE,
	[S_ACCT_SUM_ALL] = ACCT_SUM(NULL) " WHERE end_time >= ?2",
	[S_ACCT_SUM_ALL_OWNER] = ACCT_SUM(NULL) " WHERE owner = ?1 AND end_time >= ?2",
	[S_ACCT_SUM_BY_OWNER] = ACCT_SUM(owner) " WHERE end_time >= ?2"
	    " GROUP BY owner ORDER BY owner",
	[S_ACCT_SUM_BY_OWNER_ONE] = ACCT_SUM(owner) " WHERE owner = ?1 AND end_time >= ?2"
	    " GROUP BY owner",
	[S_HOST_UPSERT] = "INSERT INTO hosts (name, slots, load1, load5, load15, last_seen, attrs)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (name) DO UPDATE SET"
	    " slots = excluded.slots, load1 = excluded.load1, load5 = excluded.load5,"
	    " load15 = excluded.load15, last_seen = excluded.last_seen,"
	    " attrs = coalesce(excluded.attrs, attrs)",
	[S_HOSTS_ALL] = "SELECT name, slots, load1, load5, load15, last_seen, attrs, users, owners"
	    " FROM hosts ORDER BY name",
	[S_HOST_LISTS] = "UPDATE hosts SET users = ?2, owners = ?3 WHERE name = ?1",
	[S_ALIAS_ADD] = "INSERT OR IGNORE INTO aliases (name, host) VALUES (?1, ?2)",
	[S_ALIAS_DEL] = "DELETE FROM aliases WHERE name = ?1",
	[S_ALIAS_DEL_HOST] = "DELETE FROM aliases WHERE name = ?1 AND host = ?2",
	[S_ALIASES_ALL] = "SELECT name, host FROM aliases ORDER BY name, host",
#define RESV_COLS "name, owner, uid, users, hosts, start_time, end_time, flags, mail, state, created"
	[S_RESV_PUT] = "INSERT OR REPLACE INTO reservations (" RESV_COLS ")"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	[S_RESV_DEL] = "DELETE FROM reservations WHERE name = ?1",
	[S_RESV_ALL] = "SELECT " RESV_COLS " FROM reservations ORDER BY start_time, name",
	[S_DEP_ADD] = "INSERT OR IGNORE INTO deps (job_id, dep_id, kind) VALUES (?1, ?2, ?3)",
	[S_DEP_DEL] = "DELETE FROM deps WHERE job_id = ?1 AND dep_id = ?2 AND kind = ?3",
	[S_DEPS_OF] = "SELECT dep_id, kind FROM deps WHERE job_id = ?1 ORDER BY dep_id, kind",
	[S_DEPENDENTS] = "SELECT job_id, kind FROM deps WHERE dep_id = ?1 ORDER BY job_id",
	/* STORE_DEP_ARRAY (5) gates tasks, it does not hold the job. */
	[S_DEPS_COUNT] = "SELECT count(*) FROM deps WHERE job_id = ?1 AND kind <> 5",
	[S_BEGIN_DUE] = "SELECT id FROM jobs WHERE hold & 4 AND begin_time <= ?1 ORDER BY begin_time",
	[S_TASK_PUT] = "INSERT INTO tasks (job_id, task, attempt, state, error, delete_req, host,"
	    " pid, start_time, end_time, exit_status, signal, reason, utime, stime, maxrss_kb,"
	    " suspended) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
	    " ?15, ?16, ?17) ON CONFLICT (job_id, task) DO UPDATE SET attempt = excluded.attempt,"
	    " state = excluded.state, error = excluded.error, delete_req = excluded.delete_req,"
	    " host = excluded.host, pid = excluded.pid, start_time = excluded.start_time,"
	    " end_time = excluded.end_time, exit_status = excluded.exit_status,"
	    " signal = excluded.signal, reason = excluded.reason, utime = excluded.utime,"
	    " stime = excluded.stime, maxrss_kb = excluded.maxrss_kb, suspended = excluded.suspended",
	[S_TASK_DEL] = "DELETE FROM tasks WHERE job_id = ?1 AND task = ?2",
	[S_TASK_IDS] = "SELECT task FROM tasks WHERE job_id = ?1 AND task >= ?2 ORDER BY task",
	[S_ARRAY_NEXT] = "SELECT t_next FROM jobs WHERE id = ?1",
	[S_ARRAY_SET_NEXT] = "UPDATE jobs SET t_next = ?2 WHERE id = ?1",
	/* Per dispatch pass and task end: the partial index holds only the
	 * unfinished rows; the ended ones are counted once, at the end. */
	[S_TASK_UNFINISHED] = "SELECT count(*), coalesce(sum(state IN (1, 2)), 0) FROM tasks"
	    " INDEXED BY tasks_unfinished WHERE job_id = ?1 AND state < 3",
	[S_TASK_COUNTS] = "SELECT coalesce(sum(state = 4), 0), coalesce(sum(state = 5), 0)"
	    " FROM tasks WHERE job_id = ?1",
	[S_ACCT_LAST] = "SELECT state FROM accounting WHERE job_id = ?1"
	    " ORDER BY attempt DESC LIMIT 1",
#define CRON_COLS "id, owner, uid, spec, job, next_run, last_job, hold, created"
	[S_CRON_INSERT] = "INSERT INTO cron (owner, uid, spec, job, next_run, last_job, hold, created)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[S_CRON_UPDATE] = "UPDATE cron SET next_run = ?2, last_job = ?3, hold = ?4 WHERE id = ?1",
	[S_CRON_DELETE] = "DELETE FROM cron WHERE id = ?1",
	[S_CRON_GET] = "SELECT " CRON_COLS " FROM cron WHERE id = ?1",
	[S_CRON_ALL] = "SELECT " CRON_COLS " FROM cron ORDER BY id",
	[S_CRON_DUE] = "SELECT " CRON_COLS " FROM cron WHERE hold = 0 AND next_run <= ?1"
	    " ORDER BY next_run",
	[S_MAIL_ADD] = "INSERT INTO mail_outbox (job_id, message, next_try, created)"
	    " VALUES (?1, ?2, ?3, ?3)",
	[S_MAIL_DUE] = "SELECT id, job_id, message, attempts FROM mail_outbox WHERE next_try <= ?1"
	    " ORDER BY next_try LIMIT ?2",
	[S_MAIL_DONE] = "DELETE FROM mail_outbox WHERE id = ?1",
	[S_MAIL_RETRY] = "UPDATE mail_outbox SET attempts = ?2, next_try = ?3, last_error = ?4"
	    " WHERE id = ?1",
	[S_MAIL_OF_JOB] = "SELECT count(*), max(last_error), min(next_try) FROM mail_outbox"
	    " WHERE job_id = ?1",
	[S_KEY_GET] = "SELECT job_id FROM submit_keys WHERE key = ?1",
	[S_KEY_PUT] = "INSERT OR IGNORE INTO submit_keys (key, job_id, created) VALUES (?1, ?2, ?3)",
	[S_KEY_PURGE] = "DELETE FROM submit_keys WHERE created < ?1",
};

/* The primary's capture of a transaction (cap_hook and below). */
struct cap_buf {
	unsigned char *p;
	size_t         n, cap;
};

struct cap_row {
	struct cap_row *hnext;      /* in its hash bucket */
	struct cap_row *next;       /* its table's, in order of first change */
	uint32_t        hash;
	int             op;         /* the first change's */
	bool            indirect;
	size_t          nkey, nold;
	unsigned char  *key;        /* the key's values, a record */
	unsigned char  *old;        /* UPDATE, DELETE: the row before, a record */
};

struct cap_tab {
	struct cap_tab   *next;
	struct apply_tab *t;
	struct cap_row   *head, **tail;
	bool              inserted;  /* a row was: its AUTOINCREMENT may have moved */
};

struct capture {
	struct cap_tab  *tabs, **tail;
	struct cap_row **bucket;
	int              nbucket, nrow;
	int              err;       /* SQLite's error met in the hook */
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

static void apply_free(struct store *st);
static void cap_free(struct store *st);
static void cap_reset(struct capture *c);
static int cap_changeset(struct store *st);
static bool apply_varint(const unsigned char *p, int n, int *i, uint64_t *v);
static void cap_hook(void *arg, sqlite3 *db, int op, const char *zdb, const char *ztab,
    sqlite3_int64 k1, sqlite3_int64 k2);

static int
store_fail(struct store *st, const char *what)
{
	int e = sqlite3_system_errno(st->db);

	/* SQLite says SQLITE_FULL for ENOSPC; a quota is an I/O error with EDQUOT. */
	st->nospace = sqlite3_errcode(st->db) == SQLITE_FULL || e == ENOSPC || e == EDQUOT;
	log_warnx("store: %s: %s", what, sqlite3_errmsg(st->db));
	return -1;
}

/* A select of only the columns in want; the others read as NULL, so
 * row_to_job needs no second form. */
static char *
store_cols_select(const char *const *want, size_t nwant)
{
	static const char *const cols[] = { JOB_COLUMNS(X_STR) };
	size_t n = 64, i, k;
	char *sql = xmalloc(n);

	strcpy(sql, "SELECT j.id");
	for (i = 0; i < sizeof cols / sizeof cols[0]; i++) {
		bool w = false;
		for (k = 0; k < nwant; k++)
			w |= strcmp(cols[i], want[k]) == 0;
		n = strlen(sql) + strlen(cols[i]) + 8;
		sql = xrealloc(sql, n);
		strcat(sql, w ? ", j." : ", NULL");
		if (w)
			strcat(sql, cols[i]);
	}
	n = strlen(sql) + 32;
	sql = xrealloc(sql, n);
	strcat(sql, ", NULL, NULL FROM jobs j");
	return sql;
}

/* A listing reads only what job_to_json_brief shows; the scheduler's usage
 * counts (sched.c's usage_one) only where a job runs and whose it is,
 * which it reads for every running job at every pass. */
static char *
store_slim_select(unsigned v)
{
	static const char *const brief[] = { "task", "name", "owner", "queue", "prio",
		"submit_time", "start_time", "state", "hold", "error", "delete_req",
		"host", "slots", "t_first", "t_last", "t_step", "suspended" };
	static const char *const usage[] = { "task", "owner", "queue", "state", "host",
		"slots", "pe", "req" };

	if (v & FE_BRIEF)
		return store_cols_select(brief, sizeof brief / sizeof brief[0]);
	if (v & FE_USAGE)
		return store_cols_select(usage, sizeof usage / sizeof usage[0]);
	return NULL;
}

static char *
store_foreach_sql(unsigned v)
{
	char *slim = store_slim_select(v), *sql;
	bool brief = v & FE_BRIEF;

	/* ?9: the walk starts after that id (0: from the first), so a
	 * page of a long list is found by the primary key, not by reading
	 * the rows before it.  A listing (brief) walks the primary key and
	 * only tests the state ("+" keeps SQLite off its index): by the
	 * state index it read every matching row after ?9 and sorted them by
	 * id for each page, n^2/page over a listing.  The other walks
	 * (running jobs) want that index: they read few rows among many. */
	if (v & FE_PRIO) {
		/* The listing's pending section, found by jobs_pending's
		 * range: the cursor's priority above ids ?9, or the lower
		 * priorities from their start.  ?10 is the cursor's priority. */
		sql = xasprintf("%s INDEXED BY jobs_pending WHERE j.state = 0 AND %s%s",
		    slim ? slim : v & FE_FULL ? JOB_SEL_FULL : JOB_SEL_LIGHT,
		    v & FE_PRIO_LOWER ? "j.prio < ?10" : "j.prio = ?10 AND j.id > ?9",
		    v & FE_PRIO_LOWER ? " ORDER BY j.prio DESC, j.id" : " ORDER BY j.id");
		free(slim);
		return sql;
	}
	if (v & FE_PAGE) {
		/* A page of some states among many jobs (the status page's
		 * running or finished jobs behind 100,000 pending ones): each
		 * state's range of jobs_state (state, then id) from the cursor,
		 * at most a page of each, merged by id, so a page costs its own
		 * rows, not the jobs of other states between them. */
		char *in = xstrdup(""), *t;

		assert(v == (FE_PAGE | FE_STATES | FE_BRIEF));
		for (int i = 1; i <= 6; i++) {
			t = xasprintf("%s%sSELECT id FROM (SELECT id FROM jobs INDEXED BY jobs_state"
			    " WHERE state = ?%d AND id > ?9 ORDER BY id LIMIT ?11)", in,
			    i > 1 ? " UNION ALL " : "", i);
			free(in);
			in = t;
		}
		sql = xasprintf("%s WHERE j.id IN (%s) ORDER BY j.id LIMIT ?11", slim, in);
		free(in);
		free(slim);
		return sql;
	}
	sql = xasprintf("%s WHERE j.id > ?9%s%s%s%s ORDER BY j.id",
	    slim ? slim : v & FE_FULL ? JOB_SEL_FULL : JOB_SEL_LIGHT,
	    v & FE_STATES ? (brief ? " AND +j.state IN (?1, ?2, ?3, ?4, ?5, ?6)" :
	    " AND j.state IN (?1, ?2, ?3, ?4, ?5, ?6)") : "",
	    v & FE_ARRAYS ? " AND (+j.state <> 0 OR j.t_first > 0)" : "",
	    v & FE_OWNER ? " AND j.owner = ?7" : "",
	    v & FE_HOST ? " AND j.host = ?8" : "");
	free(slim);
	return sql;
}

/* A task view reads the job's row with the task's own columns in place of
 * the job's, so row_to_job makes it a struct job with task set. */
static char *
store_task_sql(enum stmt_id id)
{
	static const char *const cols[] = { JOB_COLUMNS(X_STR) };
	static const char *const own[] = { "task", "attempt", "state", "error", "delete_req",
		"host", "pid", "start_time", "end_time", "exit_status", "signal", "reason",
		"utime", "stime", "maxrss_kb", "suspended" };
	bool full = id == S_TASK_GET_FULL;
	char *sql = xstrdup("SELECT j.id"), *t;
	const char *where;

	for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
		bool mine = false;
		for (size_t k = 0; k < sizeof own / sizeof own[0]; k++)
			mine |= strcmp(cols[i], own[k]) == 0;
		t = xasprintf("%s, %s.%s", sql, mine ? "t" : "j", cols[i]);
		free(sql);
		sql = t;
	}
	switch (id) {
	case S_TASK_GET:
	case S_TASK_GET_FULL:
		where = " WHERE t.job_id = ?1 AND t.task = ?2";
		break;
	case S_TASKS_OF:
		where = " WHERE t.job_id = ?1 AND (?2 = 0 OR (1 << t.state) & ?2) ORDER BY t.task";
		break;
	case S_TASKS_ACTIVE:
		where = " WHERE t.state < 3 AND t.state IN (1, 2) ORDER BY t.job_id, t.task";
		break;
	default:
		assert(id == S_TASKS_ACTIVE_HOST);
		where = " WHERE t.state < 3 AND t.state IN (1, 2) AND t.host = ?1"
		    " ORDER BY t.job_id, t.task";
		break;
	}
	t = xasprintf("%s%s FROM tasks t JOIN jobs j ON j.id = t.job_id%s%s", sql,
	    full ? ", j.env, s.body" : ", NULL, NULL", full ? JOB_JOIN_SCRIPT : "", where);
	free(sql);
	return t;
}

/*
 * The cached statement, or, when it is still running because a callback
 * re-entered the store (a listing inside a listing), a private one that
 * stmt_give finalizes.
 */
static sqlite3_stmt *
stmt_take(struct store *st, enum stmt_id id, bool *own)
{
	sqlite3_stmt *s;
	char *built = NULL;
	const char *sql;
	int rc;

	assert(id < S_NSTMT);
	*own = false;
	if (st->stmt[id] && !sqlite3_stmt_busy(st->stmt[id]))
		return st->stmt[id];
	if (id >= S_TASK_GET && id < S_FOREACH)
		sql = built = store_task_sql(id);
	else
		sql = id < S_FOREACH ? stmt_sql[id] : (built = store_foreach_sql(id - S_FOREACH));
	rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL);
	free(built);
	if (rc != SQLITE_OK) {
		store_fail(st, "cannot prepare a statement");
		return NULL;
	}
	if (!st->stmt[id])
		st->stmt[id] = s;
	else
		*own = true;
	return s;
}

static void
stmt_give(sqlite3_stmt *s, bool own)
{
	if (own) {
		sqlite3_finalize(s);
		return;
	}
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

/* Steps a statement that returns no rows (or whose rows are not wanted). */
static int
stmt_run(struct store *st, sqlite3_stmt *s, bool own, const char *what)
{
	int rc;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		;
	if (rc != SQLITE_DONE)
		store_fail(st, what);
	stmt_give(s, own);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int
bind_text(sqlite3_stmt *s, int i, const char *v)
{
	return v ? sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC) : sqlite3_bind_null(s, i);
}

/* Binds ?1..?6 to the states wanted by mask; unused places get -1, which no row has. */
static int
bind_states(sqlite3_stmt *s, unsigned mask)
{
	int n = 0, rc = SQLITE_OK;

	for (int state = JS_PENDING; state <= JS_DELETED; state++)
		if (mask & (1u << state))
			rc |= sqlite3_bind_int(s, ++n, state);
	while (n < 6)
		rc |= sqlite3_bind_int(s, ++n, -1);
	return rc;
}

/* Plain SQL with no parameters, for opening, migrations and checks. */
static int
store_exec(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* An integer PRAGMA or query with one result; -1 on error. */
static int64_t
store_query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	int64_t v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* Opening and migrations. */

/* Per thread: qmaster's query thread opens the database too. */
static _Thread_local char store_why[512];

static int
store_migrate(sqlite3 *db, const char *path)
{
	int64_t v;

	for (;;) {
		if (store_exec(db, "BEGIN IMMEDIATE") != SQLITE_OK)
			goto fail;
		/* Read again under the write lock: another process may have
		 * upgraded the file while we waited. */
		if ((v = store_query_int(db, "PRAGMA user_version")) < 0)
			goto fail_rollback;
		if (v >= STORE_SCHEMA_VERSION) {
			store_exec(db, "COMMIT");
			return 0;
		}
		if (store_exec(db, store_migrations[v]) != SQLITE_OK)
			goto fail_rollback;
		{
			char pragma[64];
			snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", (int)v + 1);
			if (store_exec(db, pragma) != SQLITE_OK)
				goto fail_rollback;
		}
		if (store_exec(db, "COMMIT") != SQLITE_OK)
			goto fail_rollback;
		log_info("store: %s upgraded to schema version %d", path, (int)v + 1);
	}

fail_rollback:
	snprintf(store_why, sizeof store_why, "cannot upgrade the schema of %s: %s",
	    path, sqlite3_errmsg(db));
	store_exec(db, "ROLLBACK");
	return -1;
fail:
	snprintf(store_why, sizeof store_why, "cannot upgrade the schema of %s: %s",
	    path, sqlite3_errmsg(db));
	return -1;
}

/* The last committed replication sequence, from meta (0: none yet). */
static void
store_load_seq(struct store *st)
{
	int64_t v = store_query_int(st->db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'repl.seq'");

	st->seq = st->seq_committed = v > 0 ? v : 0;
}

/* The connection both opens share; NULL, with store_why, when it fails. */
static sqlite3 *
store_db_open(const char *path, int flags)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, NULL);

	if (rc != SQLITE_OK) {
		snprintf(store_why, sizeof store_why, "cannot open %s: %s", path,
		    db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_extended_result_codes(db, 1);
	sqlite3_busy_timeout(db, STORE_BUSY_MS);
	return db;
}

struct store *
store_open(const char *dir, const char **why)
{
	char *path = xasprintf("%s/nowq.db", dir);
	sqlite3 *db = NULL;
	struct store *st;
	sqlite3_stmt *s;
	int64_t v;

	if ((db = store_db_open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) == NULL)
		goto fail;
	/* Read the version before changing anything, so a file from a newer
	 * nowq (or not a database at all) is left exactly as it was. */
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_ROW) {
		snprintf(store_why, sizeof store_why, "cannot read %s: %s", path, sqlite3_errmsg(db));
		sqlite3_finalize(s);
		goto fail;
	}
	v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	if (v < 0) {
		snprintf(store_why, sizeof store_why, "%s has an invalid schema version %lld",
		    path, (long long)v);
		goto fail;
	}
	if (v > STORE_SCHEMA_VERSION) {
		snprintf(store_why, sizeof store_why, "%s has schema version %lld, but this nowq "
		    "knows only up to %d: it was written by a newer nowq; run that version",
		    path, (long long)v, STORE_SCHEMA_VERSION);
		goto fail;
	}
	/* cache_spill off: a transaction's pages reach the WAL only at its
	 * COMMIT, so a full disk fails the commit, which the master rolls back
	 * and refuses, never a statement in the middle of a handler. */
	if (store_exec(db, "PRAGMA foreign_keys = ON") != SQLITE_OK ||
	    store_exec(db, "PRAGMA synchronous = FULL") != SQLITE_OK ||
	    store_exec(db, "PRAGMA cache_spill = OFF") != SQLITE_OK) {
		snprintf(store_why, sizeof store_why, "cannot configure %s: %s", path, sqlite3_errmsg(db));
		goto fail;
	}
	/* journal_mode answers with the mode in force, which is not WAL when
	 * the file system cannot do it; then durability promises do not hold. */
	if (sqlite3_prepare_v2(db, "PRAGMA journal_mode = WAL", -1, &s, NULL) != SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_ROW ||
	    sqlite3_stricmp((const char *)sqlite3_column_text(s, 0), "wal") != 0) {
		snprintf(store_why, sizeof store_why, "cannot put %s in WAL mode: %s", path,
		    sqlite3_errmsg(db));
		sqlite3_finalize(s);
		goto fail;
	}
	sqlite3_finalize(s);
	if (v < STORE_SCHEMA_VERSION && store_migrate(db, path) < 0)
		goto fail;
	st = xcalloc(1, sizeof *st);
	st->db = db;
	store_load_seq(st);
	free(path);
	return st;

fail:
	sqlite3_close(db);
	free(path);
	*why = store_why;
	return NULL;
}

/* For --check and --dump, beside a live master: never creates, migrates or
 * writes anything (WAL lets it read while the master writes), and the one
 * read transaction it opens makes the check and the dump see one commit. */
static struct store *
store_open_ro(const char *path, bool hold, const char **why)
{
	sqlite3 *db = NULL;
	struct store *st;
	int64_t v;

	if ((db = store_db_open(path, SQLITE_OPEN_READONLY)) == NULL)
		goto fail;
	/* The first read of the file: a file that is not SQLite fails here. */
	if (store_exec(db, "BEGIN") != SQLITE_OK ||
	    (v = store_query_int(db, "PRAGMA user_version")) < 0) {
		snprintf(store_why, sizeof store_why, "cannot read %s: %s", path, sqlite3_errmsg(db));
		goto fail;
	}
	if (v > STORE_SCHEMA_VERSION) {
		snprintf(store_why, sizeof store_why, "%s has schema version %lld, but this nowq "
		    "knows only up to %d: it was written by a newer nowq", path, (long long)v,
		    STORE_SCHEMA_VERSION);
		goto fail;
	}
	/* An SQLite file of someone else's has neither our version nor our tables. */
	if (v == 0 || store_query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
	    " AND name IN ('meta', 'jobs', 'scripts')") != 3) {
		snprintf(store_why, sizeof store_why, "%s is an SQLite database, but not nowq's "
		    "(schema version %lld, no meta, jobs and scripts tables)", path, (long long)v);
		goto fail;
	}
	st = xcalloc(1, sizeof *st);
	st->db = db;
	st->readonly = hold;
	store_load_seq(st);
	if (!hold)
		store_exec(db, "ROLLBACK");
	return st;

fail:
	sqlite3_close(db);
	*why = store_why;
	return NULL;
}

struct store *
store_open_readonly(const char *path, const char **why)
{
	return store_open_ro(path, true, why);
}

struct store *
store_open_reader(const char *path, const char **why)
{
	return store_open_ro(path, false, why);
}

/* A deferred BEGIN takes its snapshot at the first read: the sequence
 * read here is the last commit the reads that follow see. */
int
store_read_begin(struct store *st)
{
	assert(!st->readonly && !st->in_txn);
	if (store_exec(st->db, "BEGIN") != SQLITE_OK)
		return store_fail(st, "begin a read");
	store_load_seq(st);
	return 0;
}

void
store_read_end(struct store *st)
{
	if (store_exec(st->db, "ROLLBACK") != SQLITE_OK)
		store_fail(st, "end a read");
}

void
store_close(struct store *st)
{
	if (!st)
		return;
	if (st->readonly)
		store_exec(st->db, "ROLLBACK");
	if (st->in_txn) {
		log_warnx("store: closed inside a transaction; its changes are discarded");
		store_rollback(st);
	}
	cap_free(st);
	free(st->cs);
	apply_free(st);
	for (int i = 0; i < S_NSTMT; i++)
		sqlite3_finalize(st->stmt[i]);
	if (sqlite3_close(st->db) != SQLITE_OK)
		log_warnx("store: close: %s", sqlite3_errmsg(st->db));
	free(st);
}

int
store_schema_version(struct store *st)
{
	return (int)store_query_int(st->db, "PRAGMA user_version");
}

/* Transactions. */

int
store_begin(struct store *st)
{
	bool own;
	sqlite3_stmt *s;

	if (st->in_txn) {
		log_warnx("store: begin inside a transaction");
		return -1;
	}
	if (!(s = stmt_take(st, S_BEGIN, &own)) || stmt_run(st, s, own, "begin") < 0)
		return -1;
	st->in_txn = true;
	return 0;
}

/* Inside the transaction about to commit: when it changed anything, the
 * next sequence number goes into meta (so the standby records it in the
 * same transaction that applies the changes) and the changeset is kept. */
static int
store_capture_end(struct store *st)
{
	char v[32];

	free(st->cs);
	st->cs = NULL;
	st->ncs = 0;
	if (!st->capture || !st->cap)
		return 0;
	if (st->cap->nrow > 0) {
		snprintf(v, sizeof v, "%lld", (long long)(st->seq + 1));
		if (store_meta_set(st, "repl.seq", v) < 0)
			return -1;
		if (cap_changeset(st) < 0)
			return store_fail(st, "cannot take the changeset for the standby");
		st->cs_seq = st->seq + 1;
	}
	cap_reset(st->cap);
	return 0;
}

int
store_commit(struct store *st)
{
	bool own;
	sqlite3_stmt *s;

	if (!st->in_txn)
		return 0;
	if (store_capture_end(st) < 0)
		return -1;
	if (!(s = stmt_take(st, S_COMMIT, &own)) || stmt_run(st, s, own, "commit") < 0) {
		/* SQLite may already have rolled back (disk full, I/O error). */
		st->in_txn = !sqlite3_get_autocommit(st->db);
		return -1;
	}
	st->in_txn = false;
	if (st->cs)
		st->seq = st->cs_seq;
	st->seq_committed = st->seq;
	return 0;
}

void
store_rollback(struct store *st)
{
	bool own;
	sqlite3_stmt *s;

	st->in_txn = false;
	st->seq = st->seq_committed;
	if (st->cap)
		cap_reset(st->cap);
	free(st->cs);
	st->cs = NULL;
	if (sqlite3_get_autocommit(st->db))
		return;
	if (!(s = stmt_take(st, S_ROLLBACK, &own)) || stmt_run(st, s, own, "rollback") < 0)
		log_warnx("store: rollback failed; closing the database is the way out");
}

bool
store_in_txn(const struct store *st)
{
	return st->in_txn;
}

bool
store_out_of_space(const struct store *st)
{
	return st->nospace;
}

/* Operations of several statements must land together; inside the caller's
 * transaction they do already, outside it they get one of their own. */
static int
op_begin(struct store *st, bool *mine)
{
	*mine = false;
	if (st->in_txn)
		return 0;
	if (store_begin(st) < 0)
		return -1;
	*mine = true;
	return 0;
}

static int
op_end(struct store *st, bool mine, int rc)
{
	if (!mine)
		return rc;
	if (rc < 0) {
		store_rollback(st);
		return rc;
	}
	if (store_commit(st) < 0) {
		store_rollback(st);
		return -1;
	}
	return rc;
}

/* Scripts: content-addressed, one row per distinct text. */

/* Stores body unless it is there already; hash receives its key. */
static int
store_script_put(struct store *st, const char *body, size_t n, char *hash, size_t hashlen)
{
	uint64_t h = hash_fnv1a64(body, n);
	sqlite3_stmt *s;
	bool own;
	int rc;

	for (int k = 0; k < STORE_MAX_SUFFIX; k++) {
		if (k == 0)
			snprintf(hash, hashlen, "%016" PRIx64, h);
		else
			snprintf(hash, hashlen, "%016" PRIx64 "-%d", h, k);
		if (!(s = stmt_take(st, S_SCRIPT_FIND, &own)))
			return -1;
		sqlite3_bind_text(s, 1, hash, -1, SQLITE_STATIC);
		sqlite3_bind_blob64(s, 2, body, n, SQLITE_STATIC);
		rc = sqlite3_step(s);
		if (rc == SQLITE_ROW) {
			bool same = sqlite3_column_int(s, 0) == 1;
			stmt_give(s, own);
			if (same)
				return 0;
			/* Same hash, other text: try the next suffix. */
			continue;
		}
		if (rc != SQLITE_DONE) {
			store_fail(st, "cannot look up a script");
			stmt_give(s, own);
			return -1;
		}
		stmt_give(s, own);
		if (!(s = stmt_take(st, S_SCRIPT_ADD, &own)))
			return -1;
		sqlite3_bind_text(s, 1, hash, -1, SQLITE_STATIC);
		sqlite3_bind_blob64(s, 2, body, n, SQLITE_STATIC);
		return stmt_run(st, s, own, "cannot store a script");
	}
	log_warnx("store: %d scripts share hash %016" PRIx64 "; refusing another", STORE_MAX_SUFFIX, h);
	return -1;
}

/* Drops the script with this key if no job uses it any more. */
static int
store_script_gc(struct store *st, const char *hash)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_SCRIPT_GC, &own)))
		return -1;
	sqlite3_bind_text(s, 1, hash, -1, SQLITE_STATIC);
	return stmt_run(st, s, own, "cannot remove an unused script");
}

/* Runs a DELETE ... RETURNING script_hash, then collects the scripts it
 * freed.  Returns the number of jobs deleted. */
static int
store_delete_jobs(struct store *st, sqlite3_stmt *s, bool own, const char *what)
{
	char **hashes = NULL;
	size_t nh = 0, cap = 0;
	int rc, n = 0;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *h = (const char *)sqlite3_column_text(s, 0);
		n++;
		if (!h)
			continue;
		for (size_t i = 0; i < nh; i++)
			if (strcmp(hashes[i], h) == 0) {
				h = NULL;
				break;
			}
		if (!h)
			continue;
		if (nh == cap) {
			cap = cap ? cap * 2 : 8;
			hashes = xrealloc(hashes, cap * sizeof *hashes);
		}
		hashes[nh++] = xstrdup(h);
	}
	if (rc != SQLITE_DONE) {
		store_fail(st, what);
		n = -1;
	}
	stmt_give(s, own);
	for (size_t i = 0; i < nh; i++) {
		if (n >= 0 && store_script_gc(st, hashes[i]) < 0)
			n = -1;
		free(hashes[i]);
	}
	free(hashes);
	return n;
}

/* Jobs: encoding of the list fields. */

/* A JSON array of texts, or NULL for a NULL vector; *bad when a text cannot
 * be JSON (not UTF-8), which job_from_json never lets through. */
static char *
strv_to_text(char *const *v, bool *bad)
{
	json_t *a;
	char *s;

	if (!v)
		return NULL;
	a = json_array();
	for (size_t i = 0; v[i]; i++)
		if (json_array_append_new(a, json_string(v[i])) < 0)
			*bad = true;
	s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	if (!s)
		*bad = true;
	return s;
}

static char *
groups_to_text(const gid_t *g, int n)
{
	char *s, *p;

	if (!g || n <= 0)
		return NULL;
	p = s = xmalloc((size_t)n * 12 + 3);
	*p++ = '[';
	for (int i = 0; i < n; i++)
		p += sprintf(p, "%s%u", i ? "," : "", (unsigned)g[i]);
	*p++ = ']';
	*p = '\0';
	return s;
}

static char **
text_to_strv(const char *t, int len, int64_t id, const char *col)
{
	json_error_t jerr;
	json_t *a, *v;
	char **out;
	size_t i;

	if (!t)
		return NULL;
	a = json_loadb(t, (size_t)len, 0, &jerr);
	if (!json_is_array(a)) {
		log_warnx("store: job %lld: column %s is not a JSON list; ignored", (long long)id, col);
		json_decref(a);
		return NULL;
	}
	out = xcalloc(json_array_size(a) + 1, sizeof *out);
	json_array_foreach(a, i, v) {
		if (!json_is_string(v)) {
			log_warnx("store: job %lld: column %s holds a non-text; ignored", (long long)id, col);
			strv_free(out);
			json_decref(a);
			return NULL;
		}
		out[i] = xstrdup(json_string_value(v));
	}
	json_decref(a);
	return out;
}

static void
text_to_groups(struct job *j, const char *t, int len)
{
	json_error_t jerr;
	json_t *a, *v;
	size_t i;

	if (!t)
		return;
	a = json_loadb(t, (size_t)len, 0, &jerr);
	if (!json_is_array(a) || json_array_size(a) > 65536) {
		log_warnx("store: job %lld: sup_groups is not a list of ids; ignored", (long long)j->id);
		json_decref(a);
		return;
	}
	j->groups = xcalloc(json_array_size(a) + 1, sizeof *j->groups);
	json_array_foreach(a, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > UINT32_MAX) {
			log_warnx("store: job %lld: a group id is out of range; skipped", (long long)j->id);
			continue;
		}
		j->groups[j->ngroups++] = (gid_t)json_integer_value(v);
	}
	json_decref(a);
}

/* Jobs: decoding of one row.  The database is trusted no more than the
 * network: a value out of range is clamped and logged, never acted on. */

static int64_t
col_int(sqlite3_stmt *s, int c, int64_t lo, int64_t hi, int64_t id, const char *col)
{
	int64_t v = sqlite3_column_int64(s, c);

	if (v < lo || v > hi) {
		int64_t to = v < lo ? lo : hi;
		log_warnx("store: job %lld: %s is %lld, out of range; using %lld",
		    (long long)id, col, (long long)v, (long long)to);
		return to;
	}
	return v;
}

static char *
col_str(sqlite3_stmt *s, int c)
{
	const unsigned char *t = sqlite3_column_text(s, c);
	return t ? xstrdup((const char *)t) : NULL;
}

/* The -l request is kept as its JSON text; NULL when there is none. */
static char *
req_to_text(const struct job_req *r)
{
	json_t *o;
	char *t;

	if (req_empty(r))
		return NULL;
	o = req_to_json(r);
	t = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!t)
		fatalx("out of memory");
	return t;
}

static void
text_to_req(struct job *j, const char *text)
{
	json_t *o;
	const char *why = NULL;

	if (!text)
		return;
	o = json_loads(text, 0, NULL);
	if (!o || req_from_json(&j->req, o, &why) < 0) {
		log_warnx("store: job %lld: its resource request is unreadable (%s); ignored",
		    (long long)j->id, why ? why : "not JSON");
		req_clear(&j->req);
	}
	json_decref(o);
}

static struct job *
row_to_job(sqlite3_stmt *s, bool full)
{
	struct job *j = job_new();
	int64_t id = sqlite3_column_int64(s, C_id);
	int64_t state;

#define INT(f, lo, hi)	col_int(s, C_##f, lo, hi, id, #f)
	j->id = id;
	j->task = (int)INT(task, 0, INT32_MAX);
	j->attempt = (int)INT(attempt, 0, INT32_MAX);
	j->name = col_str(s, C_name);
	j->owner = col_str(s, C_owner);
	j->uid = (uint32_t)INT(uid, 0, UINT32_MAX);
	j->gid = (uint32_t)INT(gid, 0, UINT32_MAX);
	text_to_groups(j, (const char *)sqlite3_column_text(s, C_sup_groups),
	    sqlite3_column_bytes(s, C_sup_groups));
	j->queue = col_str(s, C_queue);
	j->prio = (int)INT(prio, -1023, 1024);
	j->argv = text_to_strv((const char *)sqlite3_column_text(s, C_argv),
	    sqlite3_column_bytes(s, C_argv), id, "argv");
	if (j->argv && !j->argv[0]) {
		log_warnx("store: job %lld: empty argv; ignored", (long long)id);
		strv_free(j->argv);
		j->argv = NULL;
	}
	j->args = text_to_strv((const char *)sqlite3_column_text(s, C_args),
	    sqlite3_column_bytes(s, C_args), id, "args");
	j->shell = col_str(s, C_shell);
	j->cwd = col_str(s, C_cwd);
	j->home = col_str(s, C_home);
	j->out_path = col_str(s, C_out_path);
	j->err_path = col_str(s, C_err_path);
	j->join = sqlite3_column_int64(s, C_join_out) != 0;
	j->submit_host = col_str(s, C_submit_host);
	j->submit_time = INT(submit_time, 0, INT64_MAX);
	j->start_time = INT(start_time, 0, INT64_MAX);
	j->end_time = INT(end_time, 0, INT64_MAX);
	state = sqlite3_column_int64(s, C_state);
	if (state < JS_PENDING || state > JS_DELETED) {
		/* Shown as failed, so it stays visible, can be purged, and is
		 * never started. */
		log_warnx("store: job %lld: unknown state %lld; shown as failed",
		    (long long)id, (long long)state);
		state = JS_FAILED;
	}
	j->state = (enum job_state)state;
	j->hold = (unsigned)INT(hold, 0, 0xff);
	j->error = sqlite3_column_int64(s, C_error) != 0;
	j->delete_req = sqlite3_column_int64(s, C_delete_req) != 0;
	j->host = col_str(s, C_host);
	j->pid = (int)INT(pid, 0, INT32_MAX);
	j->exit_status = (int)INT(exit_status, -1, 65535);
	j->signal = (int)INT(signal, 0, 128);
	j->reason = col_str(s, C_reason);
	j->utime = sqlite3_column_double(s, C_utime);
	j->stime = sqlite3_column_double(s, C_stime);
	j->maxrss_kb = INT(maxrss_kb, 0, INT64_MAX);
	text_to_req(j, (const char *)sqlite3_column_text(s, C_req));
	j->rerun = (int)INT(rerun, -1, 1);
	j->pe = col_str(s, C_pe);
	j->slots = (int)INT(slots, 1, JOB_MAX_SLOTS);
	j->t_first = (int)INT(t_first, 0, JOB_MAX_TASKS);
	j->t_last = (int)INT(t_last, 0, JOB_MAX_TASKS);
	j->t_step = (int)INT(t_step, 0, JOB_MAX_TASKS);
	j->tc = (int)INT(tc, 0, JOB_MAX_TASKS);
	j->suspended = (unsigned)INT(suspended, 0, SUSP_USER | SUSP_HOST);
	j->begin_time = INT(begin_time, 0, INT64_MAX);
	j->mail = (unsigned)INT(mail, 0, MAIL_BEGIN | MAIL_END | MAIL_ABORT | MAIL_SUSPEND);
	j->mail_to = col_str(s, C_mail_to);
	j->qrsh = col_str(s, C_qrsh);
#undef INT
	if (full) {
		const void *body;
		int n;

		j->env = text_to_strv((const char *)sqlite3_column_text(s, C_env),
		    sqlite3_column_bytes(s, C_env), id, "env");
		body = sqlite3_column_blob(s, C_body);
		n = sqlite3_column_bytes(s, C_body);
		if (body || sqlite3_column_type(s, C_body) != SQLITE_NULL) {
			j->script = xmalloc((size_t)n + 1);
			if (n > 0)
				memcpy(j->script, body, (size_t)n);
			j->script[n] = '\0';
		} else if (sqlite3_column_type(s, C_script_hash) != SQLITE_NULL)
			log_warnx("store: job %lld: its script is missing", (long long)id);
	}
	return j;
}

/* Jobs: the API. */

int
store_job_insert(struct store *st, struct job *j)
{
	char hash[40], *groups, *argv, *args, *env, *req;
	bool bad = false, own, mine;
	sqlite3_stmt *s;
	int rc = -1;

	req = req_to_text(&j->req);
	groups = groups_to_text(j->groups, j->ngroups);
	argv = strv_to_text(j->argv, &bad);
	args = strv_to_text(j->args, &bad);
	env = strv_to_text(j->env, &bad);
	if (bad) {
		log_warnx("store: job has a list entry that is not UTF-8 text; not stored");
		goto out;
	}
	if (op_begin(st, &mine) < 0)
		goto out;
	if (j->script && store_script_put(st, j->script, strlen(j->script), hash, sizeof hash) < 0)
		goto end;
	if (!(s = stmt_take(st, S_JOB_INSERT, &own)))
		goto end;
	sqlite3_bind_int(s, C_task, j->task);
	sqlite3_bind_int(s, C_attempt, j->attempt);
	bind_text(s, C_name, j->name);
	bind_text(s, C_owner, j->owner);
	sqlite3_bind_int64(s, C_uid, j->uid);
	sqlite3_bind_int64(s, C_gid, j->gid);
	bind_text(s, C_sup_groups, groups);
	bind_text(s, C_queue, j->queue);
	sqlite3_bind_int(s, C_prio, j->prio);
	bind_text(s, C_script_hash, j->script ? hash : NULL);
	bind_text(s, C_argv, argv);
	bind_text(s, C_args, args);
	bind_text(s, C_shell, j->shell);
	bind_text(s, C_cwd, j->cwd);
	bind_text(s, C_home, j->home);
	bind_text(s, C_out_path, j->out_path);
	bind_text(s, C_err_path, j->err_path);
	sqlite3_bind_int(s, C_join_out, j->join);
	bind_text(s, C_submit_host, j->submit_host);
	sqlite3_bind_int64(s, C_submit_time, j->submit_time);
	sqlite3_bind_int64(s, C_start_time, j->start_time);
	sqlite3_bind_int64(s, C_end_time, j->end_time);
	sqlite3_bind_int(s, C_state, j->state);
	sqlite3_bind_int64(s, C_hold, j->hold);
	sqlite3_bind_int(s, C_error, j->error);
	sqlite3_bind_int(s, C_delete_req, j->delete_req);
	bind_text(s, C_host, j->host);
	sqlite3_bind_int(s, C_pid, j->pid);
	sqlite3_bind_int(s, C_exit_status, j->exit_status);
	sqlite3_bind_int(s, C_signal, j->signal);
	bind_text(s, C_reason, j->reason);
	sqlite3_bind_double(s, C_utime, j->utime);
	sqlite3_bind_double(s, C_stime, j->stime);
	sqlite3_bind_int64(s, C_maxrss_kb, j->maxrss_kb);
	bind_text(s, C_req, req);
	sqlite3_bind_int(s, C_rerun, j->rerun);
	bind_text(s, C_pe, j->pe);
	sqlite3_bind_int(s, C_slots, j->slots);
	sqlite3_bind_int(s, C_t_first, j->t_first);
	sqlite3_bind_int(s, C_t_last, j->t_last);
	sqlite3_bind_int(s, C_t_step, j->t_step);
	sqlite3_bind_int(s, C_tc, j->tc);
	sqlite3_bind_int(s, C_suspended, j->suspended);
	sqlite3_bind_int64(s, C_begin_time, j->begin_time);
	sqlite3_bind_int(s, C_mail, (int)j->mail);
	bind_text(s, C_mail_to, j->mail_to);
	bind_text(s, C_qrsh, j->qrsh);
	bind_text(s, C_env, env);
	if (stmt_run(st, s, own, "cannot store a job") < 0)
		goto end;
	j->id = sqlite3_last_insert_rowid(st->db);
	rc = 0;
end:
	rc = op_end(st, mine, rc);
out:
	free(req);
	free(groups);
	free(argv);
	free(args);
	free(env);
	return rc;
}

int
store_task_put(struct store *st, const struct job *j)
{
	sqlite3_stmt *s;
	bool own;

	assert(j->task > 0);
	if (!(s = stmt_take(st, S_TASK_PUT, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, j->id);
	sqlite3_bind_int(s, 2, j->task);
	sqlite3_bind_int(s, 3, j->attempt);
	sqlite3_bind_int(s, 4, j->state);
	sqlite3_bind_int(s, 5, j->error);
	sqlite3_bind_int(s, 6, j->delete_req);
	bind_text(s, 7, j->host);
	sqlite3_bind_int(s, 8, j->pid);
	sqlite3_bind_int64(s, 9, j->start_time);
	sqlite3_bind_int64(s, 10, j->end_time);
	sqlite3_bind_int(s, 11, j->exit_status);
	sqlite3_bind_int(s, 12, j->signal);
	bind_text(s, 13, j->reason);
	sqlite3_bind_double(s, 14, j->utime);
	sqlite3_bind_double(s, 15, j->stime);
	sqlite3_bind_int64(s, 16, j->maxrss_kb);
	sqlite3_bind_int(s, 17, j->suspended);
	return stmt_run(st, s, own, "cannot store a task");
}

int
store_task_delete(struct store *st, int64_t id, int task)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_TASK_DEL, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int(s, 2, task);
	return stmt_run(st, s, own, "cannot remove a task");
}

struct job *
store_task_get(struct store *st, int64_t id, int task, bool with_script)
{
	sqlite3_stmt *s;
	struct job *j = NULL;
	bool own;
	int rc;

	if (!(s = stmt_take(st, with_script ? S_TASK_GET_FULL : S_TASK_GET, &own)))
		return NULL;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int(s, 2, task);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		j = row_to_job(s, with_script);
	else if (rc != SQLITE_DONE)
		store_fail(st, "cannot read a task");
	stmt_give(s, own);
	return j;
}

int
store_array_next(struct store *st, int64_t id)
{
	sqlite3_stmt *s;
	bool own;
	int v = 0;

	if (!(s = stmt_take(st, S_ARRAY_NEXT, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	stmt_give(s, own);
	return v < 0 ? 0 : v;
}

int
store_array_set_next(struct store *st, int64_t id, int next)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_ARRAY_SET_NEXT, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int(s, 2, next);
	return stmt_run(st, s, own, "cannot store an array's cursor");
}

int *
store_task_ids(struct store *st, int64_t id, int from, size_t *n)
{
	sqlite3_stmt *s;
	int *ids = NULL, rc;
	size_t cap = 0;
	bool own;

	*n = 0;
	if (!(s = stmt_take(st, S_TASK_IDS, &own)))
		return NULL;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int(s, 2, from);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			ids = xrealloc(ids, cap * sizeof *ids);
		}
		ids[(*n)++] = sqlite3_column_int(s, 0);
	}
	stmt_give(s, own);
	if (rc != SQLITE_DONE) {
		store_fail(st, "cannot read task ids");
		free(ids);
		*n = 0;
		return NULL;
	}
	if (!ids)
		ids = xmalloc(sizeof *ids);
	return ids;
}

int
store_task_counts(struct store *st, int64_t id, struct store_task_counts *c)
{
	sqlite3_stmt *s;
	bool own;
	int rc;

	memset(c, 0, sizeof *c);
	if (!(s = stmt_take(st, S_TASK_UNFINISHED, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		c->unfinished = sqlite3_column_int64(s, 0);
		c->active = sqlite3_column_int64(s, 1);
	}
	stmt_give(s, own);
	if (rc != SQLITE_ROW)
		return store_fail(st, "cannot count tasks");
	if (c->unfinished > 0)
		return 0;
	if (!(s = stmt_take(st, S_TASK_COUNTS, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		c->failed = sqlite3_column_int64(s, 0);
		c->deleted = sqlite3_column_int64(s, 1);
	}
	stmt_give(s, own);
	return rc == SQLITE_ROW ? 0 : store_fail(st, "cannot count tasks");
}

int
store_job_update(struct store *st, const struct job *j)
{
	sqlite3_stmt *s;
	char *req;
	bool own;
	int rc;

	if (j->task > 0)
		return store_task_put(st, j);
	if (!(s = stmt_take(st, S_JOB_UPDATE, &own)))
		return -1;
	req = req_to_text(&j->req);
	sqlite3_bind_int64(s, 1, j->id);
	sqlite3_bind_int(s, 2, j->state);
	sqlite3_bind_int64(s, 3, j->hold);
	sqlite3_bind_int(s, 4, j->error);
	sqlite3_bind_int(s, 5, j->delete_req);
	sqlite3_bind_int(s, 6, j->attempt);
	bind_text(s, 7, j->host);
	sqlite3_bind_int(s, 8, j->pid);
	sqlite3_bind_int64(s, 9, j->submit_time);
	sqlite3_bind_int64(s, 10, j->start_time);
	sqlite3_bind_int64(s, 11, j->end_time);
	sqlite3_bind_int(s, 12, j->exit_status);
	sqlite3_bind_int(s, 13, j->signal);
	bind_text(s, 14, j->reason);
	sqlite3_bind_double(s, 15, j->utime);
	sqlite3_bind_double(s, 16, j->stime);
	sqlite3_bind_int64(s, 17, j->maxrss_kb);
	sqlite3_bind_int(s, 18, j->prio);
	bind_text(s, 19, j->name);
	bind_text(s, 20, j->queue);
	bind_text(s, 21, req);
	sqlite3_bind_int(s, 22, j->rerun);
	sqlite3_bind_int(s, 23, j->suspended);
	sqlite3_bind_int64(s, 24, j->begin_time);
	rc = stmt_run(st, s, own, "cannot update a job");
	free(req);
	if (rc < 0)
		return -1;
	if (sqlite3_changes(st->db) != 1) {
		log_warnx("store: update of job %lld, which is not in the database", (long long)j->id);
		return -1;
	}
	return 0;
}

struct job *
store_job_get(struct store *st, int64_t id, bool with_script)
{
	sqlite3_stmt *s;
	struct job *j = NULL;
	bool own;
	int rc;

	if (!(s = stmt_take(st, with_script ? S_JOB_GET_FULL : S_JOB_GET, &own)))
		return NULL;
	sqlite3_bind_int64(s, 1, id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		j = row_to_job(s, with_script);
	else if (rc != SQLITE_DONE)
		store_fail(st, "cannot read a job");
	stmt_give(s, own);
	return j;
}

int
store_job_delete(struct store *st, int64_t id)
{
	sqlite3_stmt *s;
	bool own, mine;
	int rc;

	if (op_begin(st, &mine) < 0)
		return -1;
	if (!(s = stmt_take(st, S_JOB_DELETE, &own)))
		return op_end(st, mine, -1);
	sqlite3_bind_int64(s, 1, id);
	rc = store_delete_jobs(st, s, own, "cannot delete a job");
	return op_end(st, mine, rc < 0 ? -1 : 0);
}

/* Hands each row of a running statement to cb; the statement is given back. */
static int
store_jobs_walk(struct store *st, sqlite3_stmt *s, bool own, bool full, store_job_cb cb, void *arg)
{
	int rc;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct job *j = row_to_job(s, full);
		int stop = cb(arg, j);
		job_free(j);
		if (stop) {
			rc = SQLITE_DONE;
			break;
		}
	}
	if (rc != SQLITE_DONE)
		store_fail(st, "cannot list jobs");
	stmt_give(s, own);
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_jobs_foreach(struct store *st, const struct store_job_filter *f, store_job_cb cb, void *arg)
{
	static const struct store_job_filter all;
	unsigned v = 0;
	sqlite3_stmt *s;
	bool own;

	if (!f)
		f = &all;
	if (f->states)
		v |= FE_STATES;
	if (f->owner)
		v |= FE_OWNER;
	if (f->host)
		v |= FE_HOST;
	if (f->with_script)
		v |= FE_FULL;
	else if (f->brief)
		v |= FE_BRIEF;
	else if (f->usage)
		v |= FE_USAGE;
	if (f->pending_arrays_only)
		v |= FE_ARRAYS;
	if (f->page)
		v |= FE_PAGE;
	if (!(s = stmt_take(st, S_FOREACH + v, &own)))
		return -1;
	if (f->states)
		bind_states(s, f->states);
	if (f->owner)
		sqlite3_bind_text(s, 7, f->owner, -1, SQLITE_STATIC);
	if (f->host)
		sqlite3_bind_text(s, 8, f->host, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 9, f->after_id);
	if (f->page)
		sqlite3_bind_int64(s, 11, f->page);
	return store_jobs_walk(st, s, own, f->with_script, cb, arg);
}

struct prio_walk {
	store_job_cb cb;
	void        *arg;
	bool         stopped;
};

static int
prio_walk_one(void *arg, struct job *j)
{
	struct prio_walk *w = arg;

	if (w->cb(w->arg, j))
		w->stopped = true;
	return w->stopped;
}

int
store_pending_by_prio(struct store *st, int64_t after_prio, int64_t after_id, bool brief,
    store_job_cb cb, void *arg)
{
	struct prio_walk w = { cb, arg, false };

	/* The cursor's own priority first (nothing there before a first
	 * page), then the lower ones: two range scans of jobs_pending. */
	for (unsigned v = FE_PRIO; v <= (FE_PRIO | FE_PRIO_LOWER) && !w.stopped; v += FE_PRIO_LOWER) {
		sqlite3_stmt *s;
		bool own;

		if (!(s = stmt_take(st, S_FOREACH + (v | (brief ? FE_BRIEF : 0)), &own)))
			return -1;
		sqlite3_bind_int64(s, 9, after_id);
		sqlite3_bind_int64(s, 10, after_prio);
		if (store_jobs_walk(st, s, own, false, prio_walk_one, &w) < 0)
			return -1;
	}
	return 0;
}

int
store_tasks_foreach(struct store *st, int64_t id, unsigned states, store_job_cb cb, void *arg)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_TASKS_OF, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, states);
	return store_jobs_walk(st, s, own, false, cb, arg);
}

int
store_tasks_active(struct store *st, const char *host, store_job_cb cb, void *arg)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, host ? S_TASKS_ACTIVE_HOST : S_TASKS_ACTIVE, &own)))
		return -1;
	if (host)
		sqlite3_bind_text(s, 1, host, -1, SQLITE_STATIC);
	return store_jobs_walk(st, s, own, false, cb, arg);
}

/*
 * The rows are read before any callback runs: the scheduler's callback
 * dispatches the job it is given, which moves it out of the very index this
 * query walks.
 */
int
store_jobs_runnable(struct store *st, int64_t uid, int limit, store_job_cb cb, void *arg)
{
	struct job **jobs;
	sqlite3_stmt *s;
	int rc = SQLITE_DONE, n = 0, i;
	bool own;

	if (limit <= 0)
		return 0;
	if (!(s = stmt_take(st, uid < 0 ? S_RUNNABLE : S_RUNNABLE_UID, &own)))
		return -1;
	sqlite3_bind_int(s, 1, limit);
	if (uid >= 0)
		sqlite3_bind_int64(s, 2, uid);
	jobs = xcalloc((size_t)limit, sizeof *jobs);
	while (n < limit && (rc = sqlite3_step(s)) == SQLITE_ROW)
		jobs[n++] = row_to_job(s, true);
	if (n < limit && rc != SQLITE_DONE) {
		store_fail(st, "cannot read runnable jobs");
		stmt_give(s, own);
		for (i = 0; i < n; i++)
			job_free(jobs[i]);
		free(jobs);
		return -1;
	}
	stmt_give(s, own);
	for (i = 0; i < n; i++)
		if (cb(arg, jobs[i]))
			break;
	for (i = 0; i < n; i++)
		job_free(jobs[i]);
	free(jobs);
	return 0;
}

int
store_jobs_purge_finished(struct store *st, int64_t before_ms)
{
	sqlite3_stmt *s;
	bool own, mine;
	int n;

	if (op_begin(st, &mine) < 0)
		return -1;
	if (!(s = stmt_take(st, S_PURGE, &own)))
		return op_end(st, mine, -1);
	sqlite3_bind_int64(s, 1, before_ms);
	n = store_delete_jobs(st, s, own, "cannot purge finished jobs");
	return op_end(st, mine, n);
}

int64_t
store_jobs_count(struct store *st, unsigned states)
{
	sqlite3_stmt *s;
	int64_t n = -1;
	bool own;

	if (!(s = stmt_take(st, states ? S_COUNT_STATES : S_COUNT_ALL, &own)))
		return -1;
	if (states)
		bind_states(s, states);
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	else
		store_fail(st, "cannot count jobs");
	stmt_give(s, own);
	return n;
}

int
store_jobs_count_by_state(struct store *st, int64_t counts[JS_DELETED + 1])
{
	sqlite3_stmt *s;
	bool own;
	int rc;

	for (int i = 0; i <= JS_DELETED; i++)
		counts[i] = 0;
	if (!(s = stmt_take(st, S_COUNT_BY_STATE, &own)))
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int state = sqlite3_column_int(s, 0);
		/* A state no build wrote (a damaged row) is counted nowhere,
		 * as the query per state did. */
		if (state >= 0 && state <= JS_DELETED)
			counts[state] = sqlite3_column_int64(s, 1);
	}
	if (rc != SQLITE_DONE) {
		store_fail(st, "cannot count jobs");
		stmt_give(s, own);
		return -1;
	}
	stmt_give(s, own);
	return 0;
}

/* Accounting. */

int
store_acct_insert(struct store *st, const struct job *j, const struct acct_info *a)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_ACCT_INSERT, &own)))
		return -1;
	sqlite3_bind_int64(s, A_job_id, j->id);
	sqlite3_bind_int(s, A_task, j->task);
	sqlite3_bind_int(s, A_attempt, j->attempt);
	bind_text(s, A_name, j->name);
	bind_text(s, A_owner, j->owner);
	sqlite3_bind_int64(s, A_uid, j->uid);
	sqlite3_bind_int64(s, A_gid, j->gid);
	bind_text(s, A_group_name, a->group);
	bind_text(s, A_queue, j->queue);
	bind_text(s, A_host, j->host);
	sqlite3_bind_int64(s, A_submit_time, j->submit_time);
	sqlite3_bind_int64(s, A_start_time, j->start_time);
	sqlite3_bind_int64(s, A_end_time, j->end_time);
	sqlite3_bind_int(s, A_state, j->state);
	sqlite3_bind_int(s, A_exit_status, j->exit_status);
	sqlite3_bind_int(s, A_signal, j->signal);
	sqlite3_bind_int(s, A_failed_code, a->failed);
	bind_text(s, A_failed, j->reason);
	sqlite3_bind_int(s, A_prio, j->prio);
	bind_text(s, A_pe, j->pe);
	sqlite3_bind_int(s, A_slots, j->slots);
	sqlite3_bind_double(s, A_wallclock, j->start_time > 0 && j->end_time > j->start_time ?
	    (double)(j->end_time - j->start_time) / 1000.0 : 0.0);
	sqlite3_bind_double(s, A_utime, a->ru.utime);
	sqlite3_bind_double(s, A_stime, a->ru.stime);
	/* maxrss_kb, then ru_ixrss ... ru_nivcsw: rusage_int's order. */
	for (int i = 0; i < RUSAGE_NINT; i++)
		sqlite3_bind_int64(s, A_maxrss_kb + i, rusage_int(&a->ru, i));
	return stmt_run(st, s, own, "cannot store accounting");
}

/* One accounting row as ACCT sends it.  Like job rows, values out of range
 * are clamped, never trusted. */
static json_t *
acct_row_json(sqlite3_stmt *s)
{
	int64_t id = sqlite3_column_int64(s, A_job_id);
	struct job_rusage ru;
	json_t *o, *hosts = json_array();
	const char *h = (const char *)sqlite3_column_text(s, A_host);
	char *dup, *tok, *save;

#define INT(f, lo, hi)	json_integer(col_int(s, A_##f, lo, hi, id, #f))
#define STR(f)		(sqlite3_column_type(s, A_##f) == SQLITE_NULL ? json_null() : \
			    json_string((const char *)sqlite3_column_text(s, A_##f)))
	memset(&ru, 0, sizeof ru);
	if (h) {
		dup = xstrdup(h);
		for (tok = strtok_r(dup, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			json_array_append_new(hosts, json_string(tok));
		free(dup);
	}
	ru.utime = sqlite3_column_double(s, A_utime);
	ru.stime = sqlite3_column_double(s, A_stime);
	if (ru.utime < 0)
		ru.utime = 0;
	if (ru.stime < 0)
		ru.stime = 0;
	for (int i = 0; i < RUSAGE_NINT; i++)
		rusage_set_int(&ru, i, col_int(s, A_maxrss_kb + i, 0, INT64_MAX, id, rusage_int_names[i]));
	o = json_object();
	json_object_set_new(o, "row", json_integer(sqlite3_column_int64(s, A_id)));
	json_object_set_new(o, "id", json_integer(id));
	json_object_set_new(o, "task", INT(task, 0, INT32_MAX));
	json_object_set_new(o, "attempt", INT(attempt, 0, INT32_MAX));
	json_object_set_new(o, "name", STR(name));
	json_object_set_new(o, "owner", STR(owner));
	json_object_set_new(o, "uid", INT(uid, 0, UINT32_MAX));
	json_object_set_new(o, "gid", INT(gid, 0, UINT32_MAX));
	json_object_set_new(o, "group", STR(group_name));
	json_object_set_new(o, "queue", STR(queue));
	json_object_set_new(o, "hosts", hosts);
	json_object_set_new(o, "submit_time", INT(submit_time, 0, INT64_MAX));
	json_object_set_new(o, "start_time", INT(start_time, 0, INT64_MAX));
	json_object_set_new(o, "end_time", INT(end_time, 0, INT64_MAX));
	json_object_set_new(o, "state", json_string(job_state_name(
	    (enum job_state)col_int(s, A_state, JS_PENDING, JS_DELETED, id, "state"))));
	/* An attempt that could not start has no exit status (json.md: a key
	 * that does not apply is left out). */
	if (sqlite3_column_int64(s, A_failed_code) != ACCT_FAILED_BEFORE)
		json_object_set_new(o, "exit_status", INT(exit_status, -1, 65535));
	json_object_set_new(o, "signal", INT(signal, 0, 128));
	json_object_set_new(o, "failed", INT(failed_code, 0, 65535));
	json_object_set_new(o, "reason", STR(failed));
	json_object_set_new(o, "prio", INT(prio, -1023, 1024));
	json_object_set_new(o, "pe", STR(pe));
	json_object_set_new(o, "slots", INT(slots, 1, JOB_MAX_SLOTS));
	json_object_set_new(o, "ru_wallclock", json_real(sqlite3_column_double(s, A_wallclock) < 0 ?
	    0 : sqlite3_column_double(s, A_wallclock)));
	json_object_set_new(o, "rusage", rusage_to_json(&ru));
#undef INT
#undef STR
	return o;
}

int
store_acct_foreach(struct store *st, const struct store_acct_filter *f, store_acct_cb cb, void *arg)
{
	enum stmt_id id;
	sqlite3_stmt *s;
	bool own;
	int rc;

	id = f->job_id > 0 ? S_ACCT_BY_JOB : f->name ? S_ACCT_BY_NAME :
	    f->owner ? S_ACCT_BY_OWNER : S_ACCT_BY_END;
	if (!(s = stmt_take(st, id, &own)))
		return -1;
	if (id == S_ACCT_BY_JOB)
		sqlite3_bind_int64(s, 1, f->job_id);
	else if (id == S_ACCT_BY_NAME)
		sqlite3_bind_text(s, 1, f->name, -1, SQLITE_STATIC);
	else if (id == S_ACCT_BY_OWNER)
		sqlite3_bind_text(s, 1, f->owner, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, f->since);
	sqlite3_bind_int64(s, 4, f->after_end);
	sqlite3_bind_int64(s, 5, f->after_row);
	sqlite3_bind_int64(s, 6, f->limit > 0 ? f->limit : -1);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		json_t *row;
		int stop;

		/* The job id and name indexes do not know the owner: the few
		 * rows of one job are filtered here. */
		if (f->owner && id != S_ACCT_BY_OWNER) {
			const char *o = (const char *)sqlite3_column_text(s, A_owner);
			if (!o || strcmp(o, f->owner) != 0)
				continue;
		}
		row = acct_row_json(s);
		stop = cb(arg, row);
		json_decref(row);
		if (stop) {
			rc = SQLITE_DONE;
			break;
		}
	}
	if (rc != SQLITE_DONE)
		store_fail(st, "cannot list accounting");
	stmt_give(s, own);
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_acct_summary(struct store *st, const struct store_acct_filter *f, bool by_owner,
    store_acct_cb cb, void *arg)
{
	sqlite3_stmt *s;
	bool own;
	int rc;

	if (!(s = stmt_take(st, S_ACCT_SUM_ALL + (by_owner ? 2 : 0) + (f->owner ? 1 : 0), &own)))
		return -1;
	if (f->owner)
		sqlite3_bind_text(s, 1, f->owner, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, f->since);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		json_t *row = json_object();
		int stop;

		if (by_owner)
			json_object_set_new(row, "owner", json_string(
			    sqlite3_column_text(s, 0) ? (const char *)sqlite3_column_text(s, 0) : ""));
		json_object_set_new(row, "jobs", json_integer(sqlite3_column_int64(s, 1)));
		json_object_set_new(row, "ru_wallclock", json_real(sqlite3_column_double(s, 2)));
		json_object_set_new(row, "ru_utime", json_real(sqlite3_column_double(s, 3)));
		json_object_set_new(row, "ru_stime", json_real(sqlite3_column_double(s, 4)));
		stop = cb(arg, row);
		json_decref(row);
		if (stop) {
			rc = SQLITE_DONE;
			break;
		}
	}
	if (rc != SQLITE_DONE)
		store_fail(st, "cannot sum accounting");
	stmt_give(s, own);
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_acct_last_state(struct store *st, int64_t id, enum job_state *state)
{
	sqlite3_stmt *s;
	bool own;
	int rc, ret = -1;

	if (!(s = stmt_take(st, S_ACCT_LAST, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		int64_t v = sqlite3_column_int64(s, 0);
		*state = v >= JS_DONE && v <= JS_DELETED ? (enum job_state)v : JS_FAILED;
		ret = 0;
	} else if (rc == SQLITE_DONE)
		ret = 1;
	else
		store_fail(st, "cannot read accounting");
	stmt_give(s, own);
	return ret;
}

/* Cron entries. */

int
store_cron_insert(struct store *st, struct cron_rec *r)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_CRON_INSERT, &own)))
		return -1;
	bind_text(s, 1, r->owner);
	sqlite3_bind_int64(s, 2, r->uid);
	bind_text(s, 3, r->spec);
	bind_text(s, 4, r->job);
	sqlite3_bind_int64(s, 5, r->next_run);
	sqlite3_bind_int64(s, 6, r->last_job);
	sqlite3_bind_int(s, 7, r->hold);
	sqlite3_bind_int64(s, 8, r->created);
	if (stmt_run(st, s, own, "cannot store a cron entry") < 0)
		return -1;
	r->id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int
store_cron_update(struct store *st, const struct cron_rec *r)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_CRON_UPDATE, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, r->id);
	sqlite3_bind_int64(s, 2, r->next_run);
	sqlite3_bind_int64(s, 3, r->last_job);
	sqlite3_bind_int(s, 4, r->hold);
	return stmt_run(st, s, own, "cannot update a cron entry");
}

int
store_cron_delete(struct store *st, int64_t id)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_CRON_DELETE, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, id);
	return stmt_run(st, s, own, "cannot delete a cron entry");
}

void
cron_rec_free(struct cron_rec *r)
{
	if (!r)
		return;
	free(r->owner);
	free(r->spec);
	free(r->job);
	free(r);
}

static struct cron_rec *
row_to_cron(sqlite3_stmt *s)
{
	struct cron_rec *r = xcalloc(1, sizeof *r);

	r->id = sqlite3_column_int64(s, 0);
	r->owner = col_str(s, 1);
	r->uid = (uint32_t)sqlite3_column_int64(s, 2);
	r->spec = col_str(s, 3);
	r->job = col_str(s, 4);
	r->next_run = sqlite3_column_int64(s, 5);
	r->last_job = sqlite3_column_int64(s, 6);
	r->hold = sqlite3_column_int(s, 7) != 0;
	r->created = sqlite3_column_int64(s, 8);
	if (!r->owner || !r->spec || !r->job) {
		log_warnx("store: cron entry %lld is missing a field; skipped", (long long)r->id);
		cron_rec_free(r);
		return NULL;
	}
	return r;
}

struct cron_rec *
store_cron_get(struct store *st, int64_t id)
{
	sqlite3_stmt *s;
	struct cron_rec *r = NULL;
	bool own;
	int rc;

	if (!(s = stmt_take(st, S_CRON_GET, &own)))
		return NULL;
	sqlite3_bind_int64(s, 1, id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		r = row_to_cron(s);
	else if (rc != SQLITE_DONE)
		store_fail(st, "cannot read a cron entry");
	stmt_give(s, own);
	return r;
}

/* Rows are read before the first callback, which may update them. */
static int
cron_walk(struct store *st, enum stmt_id id, int64_t now, store_cron_cb cb, void *arg)
{
	struct cron_rec **v = NULL, *r;
	size_t n = 0, i;
	sqlite3_stmt *s;
	bool own;
	int rc;

	if (!(s = stmt_take(st, id, &own)))
		return -1;
	if (id == S_CRON_DUE)
		sqlite3_bind_int64(s, 1, now);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if ((r = row_to_cron(s)) != NULL) {
			v = xrealloc(v, (n + 1) * sizeof *v);
			v[n++] = r;
		}
	if (rc != SQLITE_DONE)
		store_fail(st, "cannot read the cron entries");
	stmt_give(s, own);
	for (i = 0; i < n; i++) {
		if (rc == SQLITE_DONE && cb(arg, v[i]))
			rc = SQLITE_DONE + 1000;   /* stopped; free the rest */
		cron_rec_free(v[i]);
	}
	free(v);
	return rc == SQLITE_DONE || rc == SQLITE_DONE + 1000 ? 0 : -1;
}

int
store_cron_foreach(struct store *st, store_cron_cb cb, void *arg)
{
	return cron_walk(st, S_CRON_ALL, 0, cb, arg);
}

int
store_cron_due(struct store *st, int64_t now, store_cron_cb cb, void *arg)
{
	return cron_walk(st, S_CRON_DUE, now, cb, arg);
}

/* Mail outbox. */

int
store_mail_add(struct store *st, int64_t job_id, const char *message, int64_t now)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_MAIL_ADD, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, job_id);
	bind_text(s, 2, message);
	sqlite3_bind_int64(s, 3, now);
	return stmt_run(st, s, own, "cannot store a mail");
}

int
store_mail_due(struct store *st, int64_t now, int limit, store_mail_cb cb, void *arg)
{
	struct { int64_t id, job; char *msg; int attempts; } *v = NULL;
	sqlite3_stmt *s;
	size_t n = 0, i;
	bool own, stop = false;
	int rc;

	if (!(s = stmt_take(st, S_MAIL_DUE, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, now);
	sqlite3_bind_int(s, 2, limit);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		v = xrealloc(v, (n + 1) * sizeof *v);
		v[n].id = sqlite3_column_int64(s, 0);
		v[n].job = sqlite3_column_int64(s, 1);
		v[n].msg = col_str(s, 2);
		v[n++].attempts = sqlite3_column_int(s, 3);
	}
	if (rc != SQLITE_DONE)
		store_fail(st, "cannot read the mail outbox");
	stmt_give(s, own);
	for (i = 0; i < n; i++) {
		if (rc == SQLITE_DONE && !stop && v[i].msg)
			stop = cb(arg, v[i].id, v[i].job, v[i].msg, v[i].attempts) != 0;
		free(v[i].msg);
	}
	free(v);
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_mail_done(struct store *st, int64_t id)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_MAIL_DONE, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, id);
	return stmt_run(st, s, own, "cannot remove a sent mail");
}

int
store_mail_retry(struct store *st, int64_t id, int attempts, int64_t next_try, const char *error)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_MAIL_RETRY, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int(s, 2, attempts);
	sqlite3_bind_int64(s, 3, next_try);
	bind_text(s, 4, error);
	return stmt_run(st, s, own, "cannot store a mail's retry");
}

int
store_mail_of_job(struct store *st, int64_t job_id, int *count, char **last_error, int64_t *next_try)
{
	sqlite3_stmt *s;
	bool own;
	int rc;

	if (!(s = stmt_take(st, S_MAIL_OF_JOB, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, job_id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*count = sqlite3_column_int(s, 0);
		*last_error = col_str(s, 1);
		*next_try = sqlite3_column_int64(s, 2);
	} else
		store_fail(st, "cannot read the mail outbox");
	stmt_give(s, own);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* Dependencies. */

static int
dep_stmt(struct store *st, enum stmt_id id, int64_t job, int64_t dep, int kind)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, id, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, job);
	sqlite3_bind_int64(s, 2, dep);
	sqlite3_bind_int(s, 3, kind);
	return stmt_run(st, s, own, "cannot change a dependency");
}

int
store_dep_add(struct store *st, int64_t job, int64_t dep, int kind)
{
	return dep_stmt(st, S_DEP_ADD, job, dep, kind);
}

int
store_dep_remove(struct store *st, int64_t job, int64_t dep, int kind)
{
	return dep_stmt(st, S_DEP_DEL, job, dep, kind);
}

/* Both walks read every row before the first callback, which may change
 * the very rows walked. */
static int
deps_walk(struct store *st, enum stmt_id id, int64_t key, store_dep_cb cb, void *arg)
{
	struct { int64_t id; int kind; } *rows = NULL;
	size_t n = 0, cap = 0, i;
	sqlite3_stmt *s;
	bool own;
	int rc;

	if (!(s = stmt_take(st, id, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, key);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			rows = xrealloc(rows, cap * sizeof *rows);
		}
		rows[n].id = sqlite3_column_int64(s, 0);
		rows[n++].kind = sqlite3_column_int(s, 1);
	}
	if (rc != SQLITE_DONE)
		store_fail(st, "cannot read dependencies");
	stmt_give(s, own);
	for (i = 0; rc == SQLITE_DONE && i < n; i++)
		if (cb(arg, rows[i].id, rows[i].kind))
			break;
	free(rows);
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_deps_of(struct store *st, int64_t job, store_dep_cb cb, void *arg)
{
	return deps_walk(st, S_DEPS_OF, job, cb, arg);
}

int
store_dependents(struct store *st, int64_t dep, store_dep_cb cb, void *arg)
{
	return deps_walk(st, S_DEPENDENTS, dep, cb, arg);
}

_Static_assert(STORE_DEP_ARRAY == 5, "S_DEPS_COUNT spells the array kind out");

int64_t
store_deps_count(struct store *st, int64_t job)
{
	sqlite3_stmt *s;
	bool own;
	int64_t n = -1;

	if (!(s = stmt_take(st, S_DEPS_COUNT, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, job);
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	else
		store_fail(st, "cannot count dependencies");
	stmt_give(s, own);
	return n;
}

int
store_jobs_begin_due(struct store *st, int64_t now, store_dep_cb cb, void *arg)
{
	return deps_walk(st, S_BEGIN_DUE, now, cb, arg);
}

/* Hosts. */

int
store_host_upsert(struct store *st, const struct host_rec *h)
{
	sqlite3_stmt *s;
	bool own;

	if (!h->name) {
		log_warnx("store: host without a name");
		return -1;
	}
	if (!(s = stmt_take(st, S_HOST_UPSERT, &own)))
		return -1;
	sqlite3_bind_text(s, 1, h->name, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 2, h->slots);
	sqlite3_bind_double(s, 3, h->load[0]);
	sqlite3_bind_double(s, 4, h->load[1]);
	sqlite3_bind_double(s, 5, h->load[2]);
	sqlite3_bind_int64(s, 6, h->last_seen);
	bind_text(s, 7, h->attrs);
	return stmt_run(st, s, own, "cannot store a host");
}

int
store_hosts_foreach(struct store *st, store_host_cb cb, void *arg)
{
	sqlite3_stmt *s;
	bool own;
	int rc;

	if (!(s = stmt_take(st, S_HOSTS_ALL, &own)))
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct host_rec h;
		int stop;

		h.name = col_str(s, 0);
		if (!h.name) {
			log_warnx("store: a host row has no name; skipped");
			continue;
		}
		h.slots = sqlite3_column_int(s, 1);
		if (h.slots < 0)
			h.slots = 0;
		h.load[0] = sqlite3_column_double(s, 2);
		h.load[1] = sqlite3_column_double(s, 3);
		h.load[2] = sqlite3_column_double(s, 4);
		h.last_seen = sqlite3_column_int64(s, 5);
		h.attrs = col_str(s, 6);
		h.users = text_to_strv((const char *)sqlite3_column_text(s, 7), sqlite3_column_bytes(s, 7), 0, "hosts.users");
		h.owners = text_to_strv((const char *)sqlite3_column_text(s, 8), sqlite3_column_bytes(s, 8), 0, "hosts.owners");
		stop = cb(arg, &h);
		free(h.name);
		free(h.attrs);
		strv_free(h.users);
		strv_free(h.owners);
		if (stop) {
			rc = SQLITE_DONE;
			break;
		}
	}
	if (rc != SQLITE_DONE)
		store_fail(st, "cannot list hosts");
	stmt_give(s, own);
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_host_lists(struct store *st, const char *host, char *const *users, char *const *owners)
{
	sqlite3_stmt *s;
	bool own, bad = false;
	char *u = strv_to_text(users, &bad), *o = strv_to_text(owners, &bad);
	int rc;

	if (bad || !(s = stmt_take(st, S_HOST_LISTS, &own))) {
		free(u);
		free(o);
		return -1;
	}
	sqlite3_bind_text(s, 1, host, -1, SQLITE_STATIC);
	bind_text(s, 2, u);
	bind_text(s, 3, o);
	rc = stmt_run(st, s, own, "cannot store a host's lists");
	free(u);
	free(o);
	return rc;
}

/* Aliases. */

int
store_alias_add(struct store *st, const char *name, const char *host)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_ALIAS_ADD, &own)))
		return -1;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, host, -1, SQLITE_STATIC);
	return stmt_run(st, s, own, "cannot store an alias");
}

int
store_alias_delete(struct store *st, const char *name, const char *host)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, host ? S_ALIAS_DEL_HOST : S_ALIAS_DEL, &own)))
		return -1;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	if (host)
		sqlite3_bind_text(s, 2, host, -1, SQLITE_STATIC);
	return stmt_run(st, s, own, "cannot delete an alias");
}

int
store_aliases_foreach(struct store *st, store_alias_cb cb, void *arg)
{
	sqlite3_stmt *s;
	bool own;
	int rc;

	if (!(s = stmt_take(st, S_ALIASES_ALL, &own)))
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *n = (const char *)sqlite3_column_text(s, 0);
		const char *h = (const char *)sqlite3_column_text(s, 1);
		if (n && h && cb(arg, n, h)) {
			rc = SQLITE_DONE;
			break;
		}
	}
	if (rc != SQLITE_DONE)
		store_fail(st, "cannot list aliases");
	stmt_give(s, own);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Reservations. */

int
store_resv_put(struct store *st, const struct resv_rec *r)
{
	sqlite3_stmt *s;
	bool own, bad = false;
	char *u = strv_to_text(r->users, &bad), *h = strv_to_text(r->hosts, &bad);
	int rc;

	if (bad || !r->name || !r->owner || !h || !(s = stmt_take(st, S_RESV_PUT, &own))) {
		log_warnx("store: a reservation without a name, owner or hosts");
		free(u);
		free(h);
		return -1;
	}
	sqlite3_bind_text(s, 1, r->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, r->owner, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, r->uid);
	bind_text(s, 4, u);
	bind_text(s, 5, h);
	sqlite3_bind_int64(s, 6, r->start);
	sqlite3_bind_int64(s, 7, r->end);
	sqlite3_bind_int(s, 8, (int)r->flags);
	sqlite3_bind_int(s, 9, (int)r->mail);
	sqlite3_bind_int(s, 10, r->state);
	sqlite3_bind_int64(s, 11, r->created);
	rc = stmt_run(st, s, own, "cannot store a reservation");
	free(u);
	free(h);
	return rc;
}

int
store_resv_delete(struct store *st, const char *name)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_RESV_DEL, &own)))
		return -1;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	return stmt_run(st, s, own, "cannot delete a reservation");
}

int
store_resv_foreach(struct store *st, store_resv_cb cb, void *arg)
{
	sqlite3_stmt *s;
	bool own;
	int rc;

	if (!(s = stmt_take(st, S_RESV_ALL, &own)))
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct resv_rec r = { 0 };
		int stop;

		r.name = col_str(s, 0);
		r.owner = col_str(s, 1);
		r.uid = sqlite3_column_int64(s, 2);
		r.users = text_to_strv((const char *)sqlite3_column_text(s, 3), sqlite3_column_bytes(s, 3), 0, "reservations.users");
		r.hosts = text_to_strv((const char *)sqlite3_column_text(s, 4), sqlite3_column_bytes(s, 4), 0, "reservations.hosts");
		r.start = sqlite3_column_int64(s, 5);
		r.end = sqlite3_column_int64(s, 6);
		r.flags = (unsigned)sqlite3_column_int(s, 7);
		r.mail = (unsigned)sqlite3_column_int(s, 8);
		r.state = sqlite3_column_int(s, 9);
		r.created = sqlite3_column_int64(s, 10);
		if (!r.name || !r.owner || !r.hosts) {
			log_warnx("store: a reservation row lacks its name, owner or hosts; skipped");
			stop = 0;
		} else
			stop = cb(arg, &r);
		resv_rec_clear(&r);
		if (stop) {
			rc = SQLITE_DONE;
			break;
		}
	}
	if (rc != SQLITE_DONE)
		store_fail(st, "cannot list reservations");
	stmt_give(s, own);
	return rc == SQLITE_DONE ? 0 : -1;
}

void
resv_rec_clear(struct resv_rec *r)
{
	free(r->name);
	free(r->owner);
	strv_free(r->users);
	strv_free(r->hosts);
	memset(r, 0, sizeof *r);
}

/* Meta. */

int
store_meta_get(struct store *st, const char *key, char **val)
{
	sqlite3_stmt *s;
	bool own;
	int rc, ret = -1;

	*val = NULL;
	if (!(s = stmt_take(st, S_META_GET, &own)))
		return -1;
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(s, 0);
		*val = xstrdup(t ? (const char *)t : "");
		ret = 0;
	} else if (rc == SQLITE_DONE)
		ret = 1;
	else
		store_fail(st, "cannot read a meta value");
	stmt_give(s, own);
	return ret;
}

/* A NULL val removes the key. */
int
store_meta_set(struct store *st, const char *key, const char *val)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, val ? S_META_SET : S_META_DEL, &own)))
		return -1;
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	if (val)
		sqlite3_bind_text(s, 2, val, -1, SQLITE_STATIC);
	return stmt_run(st, s, own, "cannot store a meta value");
}

/* Replication. */

void
store_capture(struct store *st, bool on)
{
	assert(!st->in_txn);
	st->capture = on;
	if (on && !st->cap) {
		st->cap = xcalloc(1, sizeof *st->cap);
		st->cap->tail = &st->cap->tabs;
	}
	sqlite3_preupdate_hook(st->db, on ? cap_hook : NULL, st);
	/* A standby's rows change only by changesets, which hold what the
	 * primary's foreign keys did (a job's tasks deleted with it): its own
	 * cascades would do it twice and fail the changeset. */
	if (store_exec(st->db, on ? "PRAGMA foreign_keys = ON" : "PRAGMA foreign_keys = OFF") != SQLITE_OK)
		log_warnx("store: cannot switch foreign keys %s: %s", on ? "on" : "off", sqlite3_errmsg(st->db));
}

const void *
store_changeset(struct store *st, int *n, int64_t *seq)
{
	*n = st->ncs;
	*seq = st->cs_seq;
	return st->cs;
}

void
store_changeset_done(struct store *st)
{
	free(st->cs);
	st->cs = NULL;
	st->ncs = 0;
}

sqlite3 *
store_sqlite(struct store *st)
{
	return st->db;
}

int64_t
store_repl_seq(const struct store *st)
{
	return st->seq;
}

int64_t
store_epoch(struct store *st)
{
	char *v = NULL;
	int64_t e = 1;
	if (store_meta_get(st, "epoch", &v) == 0)
		e = strtoll(v, NULL, 10);
	free(v);
	return e > 0 ? e : 1;
}

int
store_set_epoch(struct store *st, int64_t epoch)
{
	char v[32];
	snprintf(v, sizeof v, "%lld", (long long)epoch);
	return store_meta_set(st, "epoch", v);
}

/*
 * The standby's applier.  sqlite3changeset_apply prepares its statements
 * and reads the table's columns anew at every call, and its PRAGMA
 * defer_foreign_keys makes every statement of the connection prepare
 * again: most of a standby's time per changeset.  Here the statements live
 * as long as the store, and what counts as a conflict is what
 * sqlite3changeset_apply finds (any conflict abandons the changeset: the
 * standby then asks for a snapshot): a row to update or delete that is
 * not there or differs, a row to insert whose key is taken.  A change that
 * fails another constraint is tried again once the rest of its table is
 * in, as there (INSERT OR REPLACE into accounting can come as the new row
 * before the old one's delete); one that fails a foreign key is tried
 * again at the end of the changeset, which is what deferring foreign keys
 * while applying amounts to, without the pragma.
 */
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

enum apply_res { AP_DONE, AP_RETRY, AP_CONFLICT, AP_ERROR };

/* A change that failed a constraint, its values copied to try it again. */
struct apply_retry {
	struct apply_tab *t;
	int               ncs, op, rc;
	sqlite3_value    *old[APPLY_MAXCOL], *new[APPLY_MAXCOL];
};

static void
apply_tab_reset(struct apply_tab *t, int ncs)
{
	sqlite3_finalize(t->ins);
	sqlite3_finalize(t->del);
	for (int i = 0; i < t->nup; i++)
		sqlite3_finalize(t->up[i]);
	t->ins = t->del = NULL;
	t->nup = t->upnext = 0;
	t->ncs = ncs;
}

static void
apply_free(struct store *st)
{
	struct apply_tab *t;

	while ((t = st->apply) != NULL) {
		st->apply = t->next;
		apply_tab_reset(t, 0);
		sqlite3_finalize(t->sel);
		for (int i = 0; i < t->ncol; i++)
			sqlite3_free(t->col[i]);
		free(t->name);
		free(t);
	}
}

/* The table's columns, read from the schema once per store; NULL with *rc
 * SQLITE_OK when there is no such table. */
static struct apply_tab *
apply_tab(struct store *st, const char *name, int *rc)
{
	struct apply_tab *t;
	sqlite3_stmt *s;
	char *sql;

	for (t = st->apply; t; t = t->next)
		if (strcmp(t->name, name) == 0)
			return t;
	if (!(sql = sqlite3_mprintf("PRAGMA main.table_info(%Q)", name))) {
		*rc = SQLITE_NOMEM;
		return NULL;
	}
	*rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	sqlite3_free(sql);
	if (*rc != SQLITE_OK)
		return NULL;
	t = xcalloc(1, sizeof *t);
	while ((*rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *c = (const char *)sqlite3_column_text(s, 1);

		/* The tables are ours: a wider one needs wider sets. */
		assert(t->ncol < APPLY_MAXCOL);
		if (!c || !(t->col[t->ncol] = sqlite3_mprintf("\"%w\"", c))) {
			*rc = SQLITE_NOMEM;
			break;
		}
		if (sqlite3_column_int(s, 5) > 0) {
			t->pk |= 1ULL << t->ncol;
			t->pkpos[t->ncol] = (unsigned char)sqlite3_column_int(s, 5);
		}
		t->ncol++;
	}
	sqlite3_finalize(s);
	/* AUTOINCREMENT's record has no key, but one row per table: keyed by
	 * name, it travels with the rest (apply_autoinc), so ids a standby
	 * never saw (a job made and deleted in one transaction) are not given
	 * again after a failover. */
	if (*rc == SQLITE_DONE && strcmp(name, "sqlite_sequence") == 0 && t->ncol == 2 && !t->pk) {
		t->pk = 1;
		t->pkpos[0] = 1;
		t->autoinc = true;
	}
	if (*rc != SQLITE_DONE || t->ncol == 0) {
		if (*rc == SQLITE_DONE)
			*rc = SQLITE_OK;
		for (int i = 0; i < t->ncol; i++)
			sqlite3_free(t->col[i]);
		free(t);
		return NULL;
	}
	*rc = SQLITE_OK;
	t->name = xstrdup(name);
	t->next = st->apply;
	st->apply = t;
	return t;
}

/*
 * The primary's capture of each transaction as a changeset, in the format
 * of the session extension (what apply_changeset and SQLite's reader take),
 * by the session's rules but without it: a session made anew for every
 * transaction read each table's columns with a PRAGMA and prepared a SELECT
 * per table for its changeset, each time: a quarter of a primary's CPU per
 * job.  Here the columns and the SELECT are the store's (struct apply_tab).
 * The preupdate hook notes the first change of each row in the transaction:
 * its operation and, for an UPDATE or a DELETE, the row as it was.  At the
 * commit each noted row is read as it is now: an INSERT whose row is still
 * there is an INSERT of what it holds; an UPDATE or DELETE is an UPDATE of
 * the columns that differ (none: nothing) when the row is there, else a
 * DELETE of the row as it was.  Reading at the end, as the session does,
 * leaves out what a failed statement rolled back.  Tables without a
 * primary key (sqlite_sequence) are left out, as the session leaves them.
 * Changes come table by table, each table's in the order of their first
 * change; a change made by a foreign key's action is marked indirect.
 */
static void
cap_grow(struct cap_buf *b, size_t more)
{
	if (b->n + more <= b->cap)
		return;
	b->cap = b->cap ? b->cap * 2 : 256;
	while (b->cap < b->n + more)
		b->cap *= 2;
	b->p = xrealloc(b->p, b->cap);
}

static void
cap_byte(struct cap_buf *b, unsigned char c)
{
	cap_grow(b, 1);
	b->p[b->n++] = c;
}

static void
cap_bytes(struct cap_buf *b, const void *p, size_t n)
{
	cap_grow(b, n);
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
}

/* SQLite's varint, which apply_varint reads. */
static void
cap_varint(struct cap_buf *b, uint64_t v)
{
	unsigned char tmp[10];
	int n = 0;

	if (v > 0x00ffffffffffffffULL) {
		tmp[8] = (unsigned char)v;
		v >>= 8;
		for (int i = 7; i >= 0; i--) {
			tmp[i] = (unsigned char)((v & 0x7f) | 0x80);
			v >>= 7;
		}
		cap_bytes(b, tmp, 9);
		return;
	}
	do {
		tmp[n++] = (unsigned char)((v & 0x7f) | 0x80);
		v >>= 7;
	} while (v);
	tmp[0] &= 0x7f;
	for (int i = n - 1; i >= 0; i--)
		cap_byte(b, tmp[i]);
}

static void
cap_be64(struct cap_buf *b, uint64_t v)
{
	unsigned char tmp[8];

	for (int i = 7; i >= 0; i--, v >>= 8)
		tmp[i] = (unsigned char)v;
	cap_bytes(b, tmp, 8);
}

/* One value of a record: its type, then its bytes. */
static void
cap_put(struct cap_buf *b, int type, sqlite3_int64 i, double d, const void *p, int n)
{
	uint64_t u;

	cap_byte(b, (unsigned char)type);
	switch (type) {
	case SQLITE_INTEGER:
		cap_be64(b, (uint64_t)i);
		break;
	case SQLITE_FLOAT:
		memcpy(&u, &d, sizeof u);
		cap_be64(b, u);
		break;
	case SQLITE_TEXT:
	case SQLITE_BLOB:
		cap_varint(b, (uint64_t)(n > 0 ? n : 0));
		cap_bytes(b, p, (size_t)(n > 0 ? n : 0));
		break;
	default:
		break;
	}
}

static void
cap_value(struct cap_buf *b, sqlite3_value *v)
{
	int type = sqlite3_value_type(v);
	const void *p = NULL;

	if (type == SQLITE_TEXT)
		p = sqlite3_value_text(v);
	else if (type == SQLITE_BLOB)
		p = sqlite3_value_blob(v);
	cap_put(b, type, type == SQLITE_INTEGER ? sqlite3_value_int64(v) : 0,
	    type == SQLITE_FLOAT ? sqlite3_value_double(v) : 0, p,
	    p ? sqlite3_value_bytes(v) : 0);
}

static void
cap_column(struct cap_buf *b, sqlite3_stmt *s, int i)
{
	int type = sqlite3_column_type(s, i);
	const void *p = NULL;

	if (type == SQLITE_TEXT)
		p = sqlite3_column_text(s, i);
	else if (type == SQLITE_BLOB)
		p = sqlite3_column_blob(s, i);
	cap_put(b, type, type == SQLITE_INTEGER ? sqlite3_column_int64(s, i) : 0,
	    type == SQLITE_FLOAT ? sqlite3_column_double(s, i) : 0, p,
	    p ? sqlite3_column_bytes(s, i) : 0);
}

/* The length of the record's value at p (records we wrote). */
static size_t
cap_vlen(const unsigned char *p)
{
	uint64_t v;
	int i = 1;

	switch (p[0]) {
	case SQLITE_INTEGER:
	case SQLITE_FLOAT:
		return 9;
	case SQLITE_TEXT:
	case SQLITE_BLOB:
		(void)apply_varint(p, 1 + 9, &i, &v);
		return (size_t)i + (size_t)v;
	default:
		return 1;
	}
}

static void
cap_reset(struct capture *c)
{
	struct cap_tab *ct;
	struct cap_row *r;

	while ((ct = c->tabs) != NULL) {
		c->tabs = ct->next;
		while ((r = ct->head) != NULL) {
			ct->head = r->next;
			free(r->key);
			free(r->old);
			free(r);
		}
		free(ct);
	}
	c->tail = &c->tabs;
	if (c->nrow && c->bucket)
		memset(c->bucket, 0, (size_t)c->nbucket * sizeof *c->bucket);
	c->nrow = 0;
	c->err = 0;
}

static void
cap_free(struct store *st)
{
	if (!st->cap)
		return;
	cap_reset(st->cap);
	free(st->cap->bucket);
	free(st->cap);
	st->cap = NULL;
}

static uint32_t
cap_hash(const struct apply_tab *t, const unsigned char *p, size_t n)
{
	uint32_t h = 2166136261u ^ (uint32_t)(uintptr_t)t;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static void
cap_rehash(struct capture *c)
{
	int n = c->nbucket ? c->nbucket * 2 : 256;
	struct cap_row **b = xcalloc((size_t)n, sizeof *b), *r, *next;

	for (int i = 0; i < c->nbucket; i++)
		for (r = c->bucket[i]; r; r = next) {
			next = r->hnext;
			r->hnext = b[r->hash & (uint32_t)(n - 1)];
			b[r->hash & (uint32_t)(n - 1)] = r;
		}
	free(c->bucket);
	c->bucket = b;
	c->nbucket = n;
}

/* Notes one change (op) of the row whose values get() gives. */
static void
cap_note(struct store *st, struct apply_tab *t, int op, int (*get)(sqlite3 *, int, sqlite3_value **))
{
	struct capture *c = st->cap;
	struct cap_buf key = { 0 }, old = { 0 };
	struct cap_tab *ct;
	struct cap_row *r;
	sqlite3_value *v;
	bool indirect = sqlite3_preupdate_depth(st->db) > 0;
	uint32_t h;

	for (int i = 0; i < t->ncol; i++)
		if (t->pk >> i & 1) {
			if (get(st->db, i, &v) != SQLITE_OK) {
				c->err = SQLITE_ERROR;
				free(key.p);
				return;
			}
			cap_value(&key, v);
		}
	h = cap_hash(t, key.p, key.n);
	if (c->nbucket)
		for (r = c->bucket[h & (uint32_t)(c->nbucket - 1)]; r; r = r->hnext)
			if (r->hash == h && r->nkey == key.n && memcmp(r->key, key.p, key.n) == 0) {
				/* The session's rule: direct once, direct. */
				if (!indirect)
					r->indirect = false;
				free(key.p);
				return;
			}
	if (op != SQLITE_INSERT)
		for (int i = 0; i < t->ncol; i++) {
			if (sqlite3_preupdate_old(st->db, i, &v) != SQLITE_OK) {
				c->err = SQLITE_ERROR;
				free(key.p);
				free(old.p);
				return;
			}
			cap_value(&old, v);
		}
	for (ct = c->tabs; ct && ct->t != t; ct = ct->next)
		;
	if (!ct) {
		ct = xcalloc(1, sizeof *ct);
		ct->t = t;
		ct->tail = &ct->head;
		*c->tail = ct;
		c->tail = &ct->next;
	}
	ct->inserted |= op == SQLITE_INSERT;
	r = xcalloc(1, sizeof *r);
	r->hash = h;
	r->op = op;
	r->indirect = indirect;
	r->key = key.p;
	r->nkey = key.n;
	r->old = old.p;
	r->nold = old.n;
	*ct->tail = r;
	ct->tail = &r->next;
	if (++c->nrow > c->nbucket)
		cap_rehash(c);
	r->hnext = c->bucket[h & (uint32_t)(c->nbucket - 1)];
	c->bucket[h & (uint32_t)(c->nbucket - 1)] = r;
}

static void
cap_hook(void *arg, sqlite3 *db, int op, const char *zdb, const char *ztab, sqlite3_int64 k1,
    sqlite3_int64 k2)
{
	struct store *st = arg;
	struct apply_tab *t;
	int rc;

	(void)db;
	/* Only inside store_begin's transactions, as the session made per
	 * transaction had it. */
	if (!st->capture || !st->in_txn || st->cap->err || strcmp(zdb, "main") != 0)
		return;
	if (!(t = apply_tab(st, ztab, &rc))) {
		st->cap->err = rc != SQLITE_OK ? rc : SQLITE_ERROR;
		return;
	}
	if (!t->pk)
		return;
	if (sqlite3_preupdate_count(st->db) != t->ncol) {
		/* The table changed under a store that read its columns. */
		st->cap->err = SQLITE_SCHEMA;
		return;
	}
	/* A new rowid is a row of its own: the old one goes, as the session
	 * has it. */
	if (op == SQLITE_UPDATE && k1 != k2) {
		cap_note(st, t, SQLITE_DELETE, sqlite3_preupdate_old);
		cap_note(st, t, SQLITE_INSERT, sqlite3_preupdate_new);
		return;
	}
	cap_note(st, t, op, op == SQLITE_INSERT ? sqlite3_preupdate_new : sqlite3_preupdate_old);
}

/* The capture's read of one row of t by its key: SELECT * with the key's
 * columns compared by IS, as the session's. */
static sqlite3_stmt *
cap_select(struct store *st, struct apply_tab *t)
{
	sqlite3_str *q;
	const char *sep = " WHERE ";
	char *sql;
	int n = 0;

	if (t->sel)
		return t->sel;
	q = sqlite3_str_new(st->db);
	sqlite3_str_appendf(q, "SELECT * FROM main.\"%w\"", t->name);
	for (int i = 0; i < t->ncol; i++)
		if (t->pk >> i & 1) {
			sqlite3_str_appendf(q, "%s%s IS ?%d", sep, t->col[i], ++n);
			sep = " AND ";
		}
	if (!(sql = sqlite3_str_finish(q)))
		return NULL;
	if (sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &t->sel, NULL) != SQLITE_OK)
		t->sel = NULL;
	sqlite3_free(sql);
	return t->sel;
}

/* Binds the key's record to s's parameters 1, 2, ... */
static int
cap_bind_key(sqlite3_stmt *s, const unsigned char *p, size_t n)
{
	uint64_t u;
	double d;
	int k = 0, rc = SQLITE_OK, i;
	size_t at = 0;

	while (at < n && rc == SQLITE_OK) {
		const unsigned char *v = p + at;
		size_t len = cap_vlen(v);

		u = 0;
		if (v[0] == SQLITE_INTEGER || v[0] == SQLITE_FLOAT)
			for (i = 1; i <= 8; i++)
				u = u << 8 | v[i];
		switch (v[0]) {
		case SQLITE_INTEGER:
			rc = sqlite3_bind_int64(s, ++k, (sqlite3_int64)u);
			break;
		case SQLITE_FLOAT:
			memcpy(&d, &u, sizeof d);
			rc = sqlite3_bind_double(s, ++k, d);
			break;
		case SQLITE_TEXT:
		case SQLITE_BLOB: {
			uint64_t m;
			int j = 1;
			(void)apply_varint(v, 10, &j, &m);
			rc = v[0] == SQLITE_TEXT ?
			    sqlite3_bind_text(s, ++k, (const char *)v + j, (int)m, SQLITE_STATIC) :
			    sqlite3_bind_blob(s, ++k, v + j, (int)m, SQLITE_STATIC);
			break;
		}
		default:
			rc = sqlite3_bind_null(s, ++k);
			break;
		}
		at += len;
	}
	return rc;
}

/* The change of one noted row, as the row is now; cur holds its record. */
static int
cap_emit(struct cap_buf *out, struct apply_tab *t, struct cap_row *r, sqlite3_stmt *s,
    struct cap_buf *cur, bool *hdr)
{
	const unsigned char *o, *nw;
	size_t ol, nl;
	bool there;
	int rc;
	uint64_t diff = 0;

	if ((rc = cap_bind_key(s, r->key, r->nkey)) != SQLITE_OK)
		return rc;
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return rc;
	there = rc == SQLITE_ROW;
	cur->n = 0;
	if (there)
		for (int i = 0; i < t->ncol; i++)
			cap_column(cur, s, i);
	rc = sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_OK)
		return rc;
	if (r->op == SQLITE_INSERT && !there)
		return SQLITE_OK;
	if (r->op != SQLITE_INSERT && there) {
		/* The columns that differ; none but the key: nothing to say. */
		o = r->old;
		nw = cur->p;
		for (int i = 0; i < t->ncol; i++, o += ol, nw += nl) {
			ol = cap_vlen(o);
			nl = cap_vlen(nw);
			if (!(t->pk >> i & 1) && (ol != nl || memcmp(o, nw, ol) != 0))
				diff |= 1ULL << i;
		}
		if (!diff)
			return SQLITE_OK;
	}
	if (!*hdr) {
		cap_byte(out, 'T');
		cap_varint(out, (uint64_t)t->ncol);
		cap_bytes(out, t->pkpos, (size_t)t->ncol);
		cap_bytes(out, t->name, strlen(t->name) + 1);
		*hdr = true;
	}
	if (r->op == SQLITE_INSERT) {
		cap_byte(out, SQLITE_INSERT);
		cap_byte(out, r->indirect);
		cap_bytes(out, cur->p, cur->n);
	} else if (!there) {
		cap_byte(out, SQLITE_DELETE);
		cap_byte(out, r->indirect);
		cap_bytes(out, r->old, r->nold);
	} else {
		/* The old record: the key and the changed columns' old values;
		 * the new one: the changed columns' new values; 0 elsewhere. */
		cap_byte(out, SQLITE_UPDATE);
		cap_byte(out, r->indirect);
		o = r->old;
		for (int i = 0; i < t->ncol; i++, o += ol) {
			ol = cap_vlen(o);
			if (t->pk >> i & 1 || diff >> i & 1)
				cap_bytes(out, o, ol);
			else
				cap_byte(out, 0);
		}
		nw = cur->p;
		for (int i = 0; i < t->ncol; i++, nw += nl) {
			nl = cap_vlen(nw);
			if (diff >> i & 1)
				cap_bytes(out, nw, nl);
			else
				cap_byte(out, 0);
		}
	}
	return SQLITE_OK;
}

/* The open transaction's changeset, into st->cs. */
static int
cap_changeset(struct store *st)
{
	struct capture *c = st->cap;
	struct cap_buf out = { 0 }, cur = { 0 };
	struct cap_tab *ct;
	struct cap_row *r;
	sqlite3_stmt *s;
	int rc = c->err;

	for (ct = c->tabs; ct && rc == SQLITE_OK; ct = ct->next) {
		bool hdr = false;

		if (!(s = cap_select(st, ct->t))) {
			rc = SQLITE_ERROR;
			break;
		}
		for (r = ct->head; r && rc == SQLITE_OK; r = r->next)
			rc = cap_emit(&out, ct->t, r, s, &cur, &hdr);
	}
	/* SQLite writes sqlite_sequence without the preupdate hook: the
	 * record of each table that had rows inserted goes as an INSERT,
	 * which apply_autoinc takes as "at least this". */
	if (rc == SQLITE_OK) {
		struct apply_tab *seqt = NULL;
		bool hdr = false;

		for (ct = c->tabs; ct && rc == SQLITE_OK; ct = ct->next) {
			struct cap_buf key = { 0 };
			struct cap_row row = { .op = SQLITE_INSERT };

			if (!ct->inserted)
				continue;
			if (!seqt && (!(seqt = apply_tab(st, "sqlite_sequence", &rc)) ||
			    !(s = cap_select(st, seqt)))) {
				rc = rc != SQLITE_OK ? rc : SQLITE_ERROR;
				break;
			}
			cap_put(&key, SQLITE_TEXT, 0, 0, ct->t->name, (int)strlen(ct->t->name));
			row.key = key.p;
			row.nkey = key.n;
			rc = cap_emit(&out, seqt, &row, s, &cur, &hdr);
			free(key.p);
		}
	}
	free(cur.p);
	if (rc != SQLITE_OK) {
		free(out.p);
		return -1;
	}
	st->cs = out.p;
	st->ncs = (int)out.n;
	return 0;
}

/* sqlite3changeset_apply's test of a table: the changeset may lack columns
 * added since (they take their defaults), never have more, and has the
 * same primary key, which a table needs to take changes at all. */
static bool
apply_fits(const struct apply_tab *t, int ncs, const unsigned char *pk)
{
	uint64_t k = 0;

	if (ncs < 1 || ncs > t->ncol)
		return false;
	for (int i = 0; i < ncs; i++)
		if (pk[i])
			k |= 1ULL << i;
	return k != 0 && k == t->pk;
}

static sqlite3_stmt *
apply_prepare(struct store *st, sqlite3_str *q, int *rc)
{
	sqlite3_stmt *s = NULL;
	char *sql = sqlite3_str_finish(q);

	if (!sql) {
		*rc = SQLITE_NOMEM;
		return NULL;
	}
	*rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL);
	sqlite3_free(sql);
	return *rc == SQLITE_OK ? s : NULL;
}

/* INSERT INTO "t" ("a", "b") VALUES (?1, ?2) */
static sqlite3_stmt *
apply_insert(struct store *st, struct apply_tab *t, int *rc)
{
	sqlite3_str *q;
	int i;

	if (t->ins)
		return t->ins;
	q = sqlite3_str_new(st->db);
	sqlite3_str_appendf(q, "INSERT INTO main.\"%w\" (", t->name);
	for (i = 0; i < t->ncs; i++)
		sqlite3_str_appendf(q, "%s%s", i ? ", " : "", t->col[i]);
	sqlite3_str_appendall(q, ") VALUES (");
	for (i = 0; i < t->ncs; i++)
		sqlite3_str_appendf(q, "%s?%d", i ? ", " : "", i + 1);
	sqlite3_str_appendall(q, ")");
	return t->ins = apply_prepare(st, q, rc);
}

/* DELETE FROM "t" WHERE "k" = ?1 AND "b" IS ?2: the row must be as the
 * primary had it, every column, or it is a conflict. */
static sqlite3_stmt *
apply_delete(struct store *st, struct apply_tab *t, int *rc)
{
	sqlite3_str *q;

	if (t->del)
		return t->del;
	q = sqlite3_str_new(st->db);
	sqlite3_str_appendf(q, "DELETE FROM main.\"%w\" WHERE ", t->name);
	for (int i = 0; i < t->ncs; i++)
		sqlite3_str_appendf(q, "%s%s %s ?%d", i ? " AND " : "", t->col[i],
		    t->pk >> i & 1 ? "=" : "IS", i + 1);
	return t->del = apply_prepare(st, q, rc);
}

/* UPDATE "t" SET "b" = ?2 WHERE "k" IS ?65 AND "b" IS ?66: new values at
 * the column's number, old ones APPLY_MAXCOL further, so one statement
 * serves every change of the same columns. */
static sqlite3_stmt *
apply_update(struct store *st, struct apply_tab *t, uint64_t set, int *rc)
{
	sqlite3_stmt *s;
	sqlite3_str *q;
	const char *sep;
	int i;

	for (i = 0; i < t->nup; i++)
		if (t->upset[i] == set)
			return t->up[i];
	q = sqlite3_str_new(st->db);
	sqlite3_str_appendf(q, "UPDATE main.\"%w\" SET ", t->name);
	for (i = 0, sep = ""; i < t->ncs; i++)
		if (set >> i & 1) {
			sqlite3_str_appendf(q, "%s%s = ?%d", sep, t->col[i], i + 1);
			sep = ", ";
		}
	sqlite3_str_appendall(q, " WHERE ");
	for (i = 0, sep = ""; i < t->ncs; i++)
		if ((set | t->pk) >> i & 1) {
			sqlite3_str_appendf(q, "%s%s IS ?%d", sep, t->col[i], APPLY_MAXCOL + i + 1);
			sep = " AND ";
		}
	if (!(s = apply_prepare(st, q, rc)))
		return NULL;
	if (t->nup < APPLY_NUP)
		i = t->nup++;
	else {
		i = t->upnext;
		t->upnext = (i + 1) % APPLY_NUP;
		sqlite3_finalize(t->up[i]);
	}
	t->up[i] = s;
	t->upset[i] = set;
	return s;
}

/* The columns an UPDATE sets: those with a new value, but the key, which
 * sqlite3changeset_apply never sets either. */
static uint64_t
apply_set(const struct apply_tab *t, int ncs, sqlite3_value **new)
{
	uint64_t set = 0;

	for (int i = 0; i < ncs; i++)
		if (new[i] && !(t->pk >> i & 1))
			set |= 1ULL << i;
	return set;
}

/* The values of the change at it.  A changeset is input: one without the
 * values its operation needs is corrupt, as sqlite3changeset_apply has it. */
static int
apply_read(sqlite3_changeset_iter *it, const struct apply_tab *t, int ncs, int op,
    sqlite3_value **old, sqlite3_value **new)
{
	uint64_t need;
	int i;

	for (i = 0; i < ncs; i++) {
		old[i] = new[i] = NULL;
		if ((op == SQLITE_DELETE || op == SQLITE_UPDATE) &&
		    sqlite3changeset_old(it, i, &old[i]) != SQLITE_OK)
			return SQLITE_CORRUPT;
		if ((op == SQLITE_INSERT || op == SQLITE_UPDATE) &&
		    sqlite3changeset_new(it, i, &new[i]) != SQLITE_OK)
			return SQLITE_CORRUPT;
	}
	need = ~0ULL;
	if (op == SQLITE_UPDATE && (need = apply_set(t, ncs, new)) == 0)
		return SQLITE_CORRUPT;
	if (op == SQLITE_UPDATE)
		need |= t->pk;
	for (i = 0; i < ncs; i++)
		if ((op == SQLITE_INSERT ? !new[i] : !old[i]) && need >> i & 1)
			return SQLITE_CORRUPT;
	return SQLITE_OK;
}

/* Applies one change; *rc has SQLite's error when it did not. */
static enum apply_res
apply_one(struct store *st, struct apply_tab *t, int ncs, int op, sqlite3_value **old,
    sqlite3_value **new, int *rc)
{
	sqlite3_stmt *s;
	uint64_t set = 0;
	int i, changes;

	if (t->ncs != ncs)
		apply_tab_reset(t, ncs);
	*rc = SQLITE_OK;
	if (op == SQLITE_INSERT) {
		if (!(s = apply_insert(st, t, rc)))
			return AP_ERROR;
		for (i = 0; i < ncs && *rc == SQLITE_OK; i++)
			*rc = sqlite3_bind_value(s, i + 1, new[i]);
	} else if (op == SQLITE_DELETE) {
		if (!(s = apply_delete(st, t, rc)))
			return AP_ERROR;
		for (i = 0; i < ncs && *rc == SQLITE_OK; i++)
			*rc = sqlite3_bind_value(s, i + 1, old[i]);
	} else {
		assert(op == SQLITE_UPDATE);
		set = apply_set(t, ncs, new);
		if (!(s = apply_update(st, t, set, rc)))
			return AP_ERROR;
		for (i = 0; i < ncs && *rc == SQLITE_OK; i++) {
			if (set >> i & 1)
				*rc = sqlite3_bind_value(s, i + 1, new[i]);
			if (*rc == SQLITE_OK && (set | t->pk) >> i & 1)
				*rc = sqlite3_bind_value(s, APPLY_MAXCOL + i + 1, old[i]);
		}
	}
	if (*rc == SQLITE_OK && (*rc = sqlite3_step(s)) == SQLITE_DONE)
		*rc = SQLITE_OK;
	changes = sqlite3_changes(st->db);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (*rc == SQLITE_OK) {
		if (op == SQLITE_INSERT || changes == 1)
			return AP_DONE;
		log_debug("store: applying a changeset: the %s of a row of %s finds it missing "
		    "or different", op == SQLITE_DELETE ? "delete" : "update", t->name);
		*rc = SQLITE_ABORT;
		return AP_CONFLICT;
	}
	if ((*rc & 0xff) != SQLITE_CONSTRAINT)
		return AP_ERROR;
	if (*rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
		log_debug("store: applying a changeset: a row of %s is there already", t->name);
		*rc = SQLITE_ABORT;
		return AP_CONFLICT;
	}
	return AP_RETRY;
}

static void
apply_retry_free(struct apply_retry *r)
{
	for (int i = 0; i < r->ncs; i++) {
		sqlite3_value_free(r->old[i]);
		sqlite3_value_free(r->new[i]);
	}
}

/* Keeps the change for another try; its values live only until the
 * iterator moves on. */
static int
apply_keep(struct apply_retry **rv, int *nrv, struct apply_tab *t, int ncs, int op, int rc,
    sqlite3_value **old, sqlite3_value **new)
{
	struct apply_retry *r;

	*rv = xrealloc(*rv, (size_t)(*nrv + 1) * sizeof **rv);
	r = &(*rv)[(*nrv)++];
	memset(r, 0, sizeof *r);
	r->t = t;
	r->ncs = ncs;
	r->op = op;
	r->rc = rc;
	for (int i = 0; i < ncs; i++)
		if ((old[i] && !(r->old[i] = sqlite3_value_dup(old[i]))) ||
		    (new[i] && !(r->new[i] = sqlite3_value_dup(new[i]))))
			return SQLITE_NOMEM;
	return SQLITE_OK;
}

/* Tries the kept changes again, round after round while a round applies
 * any.  At a table's end what still fails a constraint other than a
 * foreign key is a conflict; at the changeset's end anything is. */
static enum apply_res
apply_retry(struct store *st, struct apply_retry *rv, int *nrv, bool last, int *rc)
{
	enum apply_res res = AP_DONE, r;
	bool progress = true;
	int i, kept, n = *nrv;

	while (n > 0 && progress && res == AP_DONE) {
		progress = false;
		for (i = kept = 0; i < n; i++) {
			if (res == AP_DONE) {
				r = apply_one(st, rv[i].t, rv[i].ncs, rv[i].op, rv[i].old,
				    rv[i].new, &rv[i].rc);
				if (r == AP_DONE) {
					apply_retry_free(&rv[i]);
					progress = true;
					continue;
				}
				if (r != AP_RETRY) {
					res = r;
					*rc = rv[i].rc;
				}
			}
			if (kept != i)
				rv[kept] = rv[i];
			kept++;
		}
		n = kept;
	}
	*nrv = n;
	if (res != AP_DONE)
		return res;
	for (i = 0; i < n; i++)
		if (last || rv[i].rc != SQLITE_CONSTRAINT_FOREIGNKEY) {
			log_debug("store: applying a changeset: a change of %s fails: %s",
			    rv[i].t->name, sqlite3_errstr(rv[i].rc));
			*rc = rv[i].rc;
			return AP_CONFLICT;
		}
	return AP_DONE;
}

/* An SQLite varint at *i, all of it inside the n bytes. */
static bool
apply_varint(const unsigned char *p, int n, int *i, uint64_t *v)
{
	*v = 0;
	for (int k = 0; k < 9; k++) {
		if (*i >= n)
			return false;
		if (k == 8) {
			*v = *v << 8 | p[(*i)++];
			return true;
		}
		*v = *v << 7 | (p[*i] & 0x7f);
		if (!(p[(*i)++] & 0x80))
			return true;
	}
	return true;
}

/*
 * Whether the changeset has a changeset's shape: table headers ('T', the
 * number of columns, a key flag per column, the name and its NUL) each
 * followed by changes (the operation, the indirect flag, the old and the
 * new record as the operation has them, a type byte per value and the
 * value's bytes).  SQLite 3.40's reader never returns from a header that
 * runs past the end, and reads a varint or a value past it, so a
 * changeset, which is input, is walked once before it is read.
 */
static bool
apply_shape_ok(const unsigned char *p, int n)
{
	uint64_t v;
	int i = 0, ncol = 0, nval;
	const unsigned char *nul;

	while (i < n) {
		switch (p[i++]) {
		case 'T':
			/* SQLite's own bound on a header's columns. */
			if (!apply_varint(p, n, &i, &v) || v == 0 || v > 65536 ||
			    v > (uint64_t)(n - i))
				return false;
			ncol = (int)v;
			i += ncol;
			if (!(nul = memchr(p + i, 0, (size_t)(n - i))))
				return false;
			i = (int)(nul - p) + 1;
			continue;
		case SQLITE_INSERT:
		case SQLITE_DELETE:
			nval = ncol;
			break;
		case SQLITE_UPDATE:
			nval = 2 * ncol;
			break;
		default:
			return false;
		}
		if (ncol == 0 || i++ >= n)
			return false;
		while (nval-- > 0) {
			if (i >= n)
				return false;
			switch (p[i++]) {
			case 0:			/* not in the record */
			case SQLITE_NULL:
				break;
			case SQLITE_INTEGER:
			case SQLITE_FLOAT:
				if (n - i < 8)
					return false;
				i += 8;
				break;
			case SQLITE_TEXT:
			case SQLITE_BLOB:
				if (!apply_varint(p, n, &i, &v) || v > (uint64_t)(n - i))
					return false;
				i += (int)v;
				break;
			default:
				return false;
			}
		}
	}
	return true;
}

/* A change of sqlite_sequence raises the standby's to the primary's, never
 * lowers it: the standby's own inserts of the primary's rows move it too,
 * so its old value is no test of a conflict.  Its ins and del statements
 * are the raise's two halves. */
static enum apply_res
apply_autoinc(struct store *st, struct apply_tab *t, int op, sqlite3_value **old,
    sqlite3_value **new, int *rc)
{
	sqlite3_value *name = op == SQLITE_INSERT ? new[0] : old[0];

	*rc = SQLITE_OK;
	if (op == SQLITE_DELETE || !new[1])
		return AP_DONE;
	if (!t->ins && (*rc = sqlite3_prepare_v3(st->db, "INSERT INTO sqlite_sequence (name, seq)"
	    " SELECT ?1, ?2 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?1)", -1,
	    SQLITE_PREPARE_PERSISTENT, &t->ins, NULL)) != SQLITE_OK)
		return AP_ERROR;
	if (!t->del && (*rc = sqlite3_prepare_v3(st->db, "UPDATE sqlite_sequence SET seq = ?2"
	    " WHERE name = ?1 AND seq < ?2", -1, SQLITE_PREPARE_PERSISTENT, &t->del, NULL)) != SQLITE_OK)
		return AP_ERROR;
	for (int k = 0; k < 2; k++) {
		sqlite3_stmt *s = k ? t->del : t->ins;

		sqlite3_bind_value(s, 1, name);
		sqlite3_bind_value(s, 2, new[1]);
		*rc = sqlite3_step(s);
		sqlite3_reset(s);
		sqlite3_clear_bindings(s);
		if (*rc != SQLITE_DONE)
			return AP_ERROR;
	}
	*rc = SQLITE_OK;
	return AP_DONE;
}

static enum apply_res
apply_changeset(struct store *st, const void *cs, int n, int *rc)
{
	sqlite3_changeset_iter *it = NULL;
	sqlite3_value *old[APPLY_MAXCOL], *new[APPLY_MAXCOL];
	struct apply_tab *t = NULL;
	struct apply_retry *rv = NULL;
	enum apply_res res = AP_DONE;
	unsigned char *pk;
	const char *name;
	int nrv = 0, ncs, op, npk, fk, hi;

	*rc = SQLITE_CORRUPT;
	if (n < 0 || !apply_shape_ok(cs, n) ||
	    (*rc = sqlite3changeset_start(&it, n, (void *)cs)) != SQLITE_OK)
		return AP_ERROR;
	while ((*rc = sqlite3changeset_next(it)) == SQLITE_ROW) {
		res = AP_ERROR;
		if ((*rc = sqlite3changeset_op(it, &name, &ncs, &op, NULL)) != SQLITE_OK ||
		    (*rc = sqlite3changeset_pk(it, &pk, &npk)) != SQLITE_OK)
			break;
		*rc = SQLITE_CORRUPT;
		if (!name || npk != ncs || (op != SQLITE_INSERT && op != SQLITE_DELETE &&
		    op != SQLITE_UPDATE))
			break;
		if (!t || strcmp(name, t->name) != 0 || !apply_fits(t, ncs, pk)) {
			/* The end of a table: the changes that failed a
			 * constraint get another try. */
			if (t && (res = apply_retry(st, rv, &nrv, false, rc)) != AP_DONE)
				break;
			res = AP_ERROR;
			/* sqlite_stat1 has rules of its own there; ANALYZE never runs here. */
			if (sqlite3_stricmp(name, "sqlite_stat1") == 0) {
				*rc = SQLITE_SCHEMA;
				break;
			}
			/* sqlite3changeset_apply skips such a table's
			 * changes with a log line; here a standby whose
			 * tables are not the primary's asks for a snapshot. */
			if (!(t = apply_tab(st, name, rc)) || !apply_fits(t, ncs, pk)) {
				log_debug("store: applying a changeset: table %s is not as the "
				    "primary's", name);
				if (*rc == SQLITE_OK)
					*rc = SQLITE_SCHEMA;
				break;
			}
		}
		if ((*rc = apply_read(it, t, ncs, op, old, new)) != SQLITE_OK)
			break;
		res = t->autoinc ? apply_autoinc(st, t, op, old, new, rc) :
		    apply_one(st, t, ncs, op, old, new, rc);
		if (res == AP_RETRY) {
			res = AP_DONE;
			if ((*rc = apply_keep(&rv, &nrv, t, ncs, op, *rc, old, new)) != SQLITE_OK)
				res = AP_ERROR;
		}
		if (res != AP_DONE)
			break;
	}
	if (res == AP_DONE && *rc != SQLITE_DONE)
		res = AP_ERROR;
	if (res == AP_DONE)
		res = apply_retry(st, rv, &nrv, true, rc);
	fk = sqlite3changeset_finalize(it);
	if (res == AP_DONE && fk != SQLITE_OK) {
		*rc = fk;
		res = AP_ERROR;
	}
	/* sqlite3changeset_apply's last test; no foreign key here is
	 * deferrable, so this is for one that ever is. */
	if (res == AP_DONE && (sqlite3_db_status(st->db, SQLITE_DBSTATUS_DEFERRED_FKS, &fk, &hi,
	    0) != SQLITE_OK || fk != 0)) {
		*rc = SQLITE_CONSTRAINT_FOREIGNKEY;
		res = AP_CONFLICT;
	}
	for (int i = 0; i < nrv; i++)
		apply_retry_free(&rv[i]);
	free(rv);
	return res;
}

int
store_apply(struct store *st, const void *cs, int n, int64_t seq, char *err, size_t errlen)
{
	enum apply_res res;
	int conflicts, rc;

	if (seq != st->seq + 1) {
		snprintf(err, errlen, "changeset %lld does not follow %lld", (long long)seq,
		    (long long)st->seq);
		return -1;
	}
	if (!st->in_txn && store_begin(st) < 0) {
		snprintf(err, errlen, "cannot begin: %s", sqlite3_errmsg(st->db));
		return -1;
	}
	/* Applied inside our transaction, which also holds the meta row
	 * repl.seq the changeset sets; any conflict means the standby is not
	 * the copy it claims to be, and everything since the last commit goes. */
	res = apply_changeset(st, cs, n, &rc);
	if (res != AP_DONE) {
		conflicts = res == AP_CONFLICT;
		snprintf(err, errlen, "changeset %lld does not apply (%s, %d conflict%s)", (long long)seq,
		    sqlite3_errstr(rc), conflicts, conflicts == 1 ? "" : "s");
		store_rollback(st);
		return -1;
	}
	if (store_meta_set(st, "repl.seq", NULL) == 0) {
		char v[32];
		snprintf(v, sizeof v, "%lld", (long long)seq);
		store_meta_set(st, "repl.seq", v);
	}
	st->seq = seq;
	return 0;
}

int
store_apply_commit(struct store *st, char *err, size_t errlen)
{
	int64_t seq = st->seq;

	if (store_commit(st) < 0) {
		snprintf(err, errlen, "cannot commit changesets up to %lld: %s", (long long)seq,
		    sqlite3_errmsg(st->db));
		store_rollback(st);
		return -1;
	}
	return 0;
}

int
store_backup(struct store *st, const char *path)
{
	sqlite3 *dst = NULL;
	sqlite3_backup *b;
	int rc;

	unlink(path);
	if (sqlite3_open_v2(path, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		log_warnx("store: cannot create %s: %s", path, dst ? sqlite3_errmsg(dst) : "out of memory");
		sqlite3_close(dst);
		return -1;
	}
	if (!(b = sqlite3_backup_init(dst, "main", st->db, "main"))) {
		log_warnx("store: cannot back up to %s: %s", path, sqlite3_errmsg(dst));
		sqlite3_close(dst);
		return -1;
	}
	rc = sqlite3_backup_step(b, -1);
	sqlite3_backup_finish(b);
	if (rc != SQLITE_DONE) {
		log_warnx("store: backup to %s failed: %s", path, sqlite3_errstr(rc));
		sqlite3_close(dst);
		return -1;
	}
	/* A backup of a WAL database is in WAL mode; one file is easier to ship. */
	sqlite3_exec(dst, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL);
	sqlite3_close(dst);
	return 0;
}

int64_t
store_key_job(struct store *st, const char *key)
{
	sqlite3_stmt *s;
	bool own;
	int64_t id = 0;

	if (!(s = stmt_take(st, S_KEY_GET, &own)))
		return -1;
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW)
		id = sqlite3_column_int64(s, 0);
	stmt_give(s, own);
	return id;
}

int
store_key_put(struct store *st, const char *key, int64_t job_id, int64_t now)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_KEY_PUT, &own)))
		return -1;
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, job_id);
	sqlite3_bind_int64(s, 3, now);
	return stmt_run(st, s, own, "cannot store a submission key");
}

int
store_key_purge(struct store *st, int64_t before)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_KEY_PURGE, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, before);
	return stmt_run(st, s, own, "cannot purge submission keys");
}

/* Checking. */

/*
 * nowq's own invariants, each a query returning (what, detail) per broken
 * row.  json_type runs only on valid JSON (CASE evaluates lazily), since it
 * raises an error on anything else.
 */
#define BAD_LIST(col) \
	"CASE WHEN json_valid(" col ") THEN json_type(" col ") <> 'array' ELSE 1 END"
static const struct {
	const char *sql;
	const char *problem;
} store_invariants[] = {
	{ "SELECT 'job ' || id, state FROM jobs WHERE state NOT BETWEEN 0 AND 5",
	  "has an unknown state" },
	{ "SELECT 'job ' || id, state FROM jobs WHERE state IN (1, 2)"
	  " AND (host IS NULL OR host = '')",
	  "is dispatched or running but has no host" },
	{ "SELECT 'job ' || id, state FROM jobs WHERE state IN (3, 4, 5) AND end_time <= 0",
	  "has finished but has no end time" },
	{ "SELECT 'job ' || id, '' FROM jobs WHERE script_hash IS NULL AND argv IS NULL",
	  "has neither a script nor a command" },
	{ "SELECT 'job ' || id, argv FROM jobs WHERE argv IS NOT NULL AND (" BAD_LIST("argv")
	  " OR json_array_length(argv) = 0)",
	  "has a malformed command (argv)" },
	{ "SELECT 'job ' || id, args FROM jobs WHERE args IS NOT NULL AND " BAD_LIST("args"),
	  "has malformed script arguments (args)" },
	{ "SELECT 'job ' || id, '' FROM jobs WHERE env IS NOT NULL AND " BAD_LIST("env"),
	  "has a malformed environment (env)" },
	{ "SELECT 'job ' || id, sup_groups FROM jobs WHERE sup_groups IS NOT NULL AND "
	  BAD_LIST("sup_groups"),
	  "has malformed supplementary groups" },
	{ "SELECT 'job ' || id, prio FROM jobs WHERE prio NOT BETWEEN -1023 AND 1024",
	  "has a priority out of range" },
	{ "SELECT 'job ' || id, hold || '/' || error || '/' || delete_req FROM jobs"
	  " WHERE hold NOT BETWEEN 0 AND 255 OR error NOT IN (0, 1) OR delete_req NOT IN (0, 1)",
	  "has hold/error/delete flags out of range" },
	{ "SELECT 'job id sequence', seq FROM sqlite_sequence WHERE name = 'jobs'"
	  " AND seq < (SELECT max(id) FROM jobs)",
	  "is behind the largest job id, so ids could repeat" },
	{ "SELECT 'host ' || name, slots FROM hosts WHERE slots < 0",
	  "has a negative slot count" },
	{ "SELECT 'accounting row ' || id, 'job ' || job_id FROM accounting WHERE wallclock < 0"
	  " OR utime < 0 OR stime < 0 OR maxrss_kb < 0 OR ru_minflt < 0 OR ru_majflt < 0"
	  " OR ru_inblock < 0 OR ru_oublock < 0 OR ru_nvcsw < 0 OR ru_nivcsw < 0",
	  "has a negative usage" },
	{ "SELECT 'accounting row ' || id, 'job ' || job_id FROM accounting"
	  " WHERE failed_code NOT BETWEEN 0 AND 65535 OR end_time < start_time",
	  "has a failed code out of range or ends before it starts" },
	{ "SELECT 'task ' || t.job_id || '.' || t.task, 'job ' || t.job_id FROM tasks t"
	  " JOIN jobs j ON j.id = t.job_id WHERE j.t_first = 0 OR t.task < j.t_first"
	  " OR t.task > j.t_last OR (t.task - j.t_first) % j.t_step != 0",
	  "is not a task of its job's range (qsub -t)" },
	{ "SELECT 'task ' || job_id || '.' || task, state FROM tasks WHERE state NOT BETWEEN 0 AND 5"
	  " OR (state IN (1, 2) AND (host IS NULL OR host = ''))",
	  "has an unknown state, or runs without a host" },
	/* An array ends only after its last task (array_check_end). */
	{ "SELECT 'job ' || j.id, 'task ' || t.task || ' in state ' || t.state FROM jobs j"
	  " JOIN tasks t ON t.job_id = j.id WHERE j.state IN (3, 4, 5) AND t.state < 3",
	  "has finished while a task of it has not" },
	/* The runnable query refuses to run without its index; say so here first. */
	{ "WITH want (name) AS (VALUES ('jobs_runnable'), ('jobs_runnable_uid'), ('jobs_state'),"
	  " ('jobs_host'), ('jobs_owner'), ('jobs_finished'), ('jobs_script'),"
	  " ('accounting_owner'), ('accounting_end'), ('accounting_name'), ('tasks_unfinished'),"
	  " ('jobs_pending'))"
	  " SELECT 'index ' || name, '' FROM want"
	  " WHERE name NOT IN (SELECT name FROM sqlite_master WHERE type = 'index')",
	  "is missing" },
};

static int
store_check_rows(sqlite3 *db, const char *sql, const char *problem, FILE *out)
{
	sqlite3_stmt *s;
	int n = 0, rc;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		if (out)
			fprintf(out, "check cannot run (%s): %s\n", problem, sqlite3_errmsg(db));
		return 1;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *what = (const char *)sqlite3_column_text(s, 0);
		const char *detail = (const char *)sqlite3_column_text(s, 1);
		if (out)
			fprintf(out, "%s %s%s%s%s\n", what ? what : "?", problem,
			    detail && *detail ? " (" : "", detail && *detail ? detail : "",
			    detail && *detail ? ")" : "");
		n++;
	}
	if (rc != SQLITE_DONE) {
		if (out)
			fprintf(out, "check stopped (%s): %s\n", problem, sqlite3_errmsg(db));
		n++;
	}
	sqlite3_finalize(s);
	return n;
}

/* Each script's key must be the hash of its text (plus a collision suffix). */
static int
store_check_scripts(sqlite3 *db, FILE *out)
{
	sqlite3_stmt *s;
	int n = 0, rc;
	char want[24];

	if (sqlite3_prepare_v2(db, "SELECT hash, body FROM scripts", -1, &s, NULL) != SQLITE_OK) {
		if (out)
			fprintf(out, "check cannot read scripts: %s\n", sqlite3_errmsg(db));
		return 1;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *hash = (const char *)sqlite3_column_text(s, 0);
		const void *body = sqlite3_column_blob(s, 1);
		size_t len = (size_t)sqlite3_column_bytes(s, 1);

		snprintf(want, sizeof want, "%016" PRIx64, hash_fnv1a64(body ? body : "", len));
		if (!hash || strncmp(hash, want, 16) != 0 || (hash[16] && hash[16] != '-')) {
			if (out)
				fprintf(out, "script %s does not match its content (hash %s)\n",
				    hash ? hash : "NULL", want);
			n++;
		}
	}
	if (rc != SQLITE_DONE) {
		if (out)
			fprintf(out, "check stopped reading scripts: %s\n", sqlite3_errmsg(db));
		n++;
	}
	sqlite3_finalize(s);
	return n;
}

int
store_check(struct store *st, FILE *out)
{
	sqlite3_stmt *s;
	int n = 0, v, rc;

	v = store_schema_version(st);
	if (v != STORE_SCHEMA_VERSION) {
		if (out)
			fprintf(out, "schema version is %d, expected %d\n", v, STORE_SCHEMA_VERSION);
		n++;
	}
	/* integrity_check says "ok" alone when all is well, else one row per problem. */
	if (sqlite3_prepare_v2(st->db, "PRAGMA integrity_check", -1, &s, NULL) == SQLITE_OK) {
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			const char *t = (const char *)sqlite3_column_text(s, 0);
			if (t && strcmp(t, "ok") == 0)
				continue;
			/* One line per problem, though SQLite's may span two. */
			if (out) {
				fputs("integrity: ", out);
				for (; t && *t; t++)
					if (*t == '\n')
						fputs("; ", out);
					else
						fputc(*t, out);
				fputc('\n', out);
			}
			n++;
		}
		if (rc != SQLITE_DONE) {
			if (out)
				fprintf(out, "integrity check stopped: %s\n", sqlite3_errmsg(st->db));
			n++;
		}
		sqlite3_finalize(s);
	} else {
		if (out)
			fprintf(out, "integrity check cannot run: %s\n", sqlite3_errmsg(st->db));
		n++;
	}
	/* Past a damaged file or another schema the queries below would only
	 * repeat the same problem. */
	if (n > 0)
		return n;
	n += store_check_rows(st->db, "SELECT \"table\" || ' row ' || rowid, 'refers to a missing "
	    "row of ' || parent FROM pragma_foreign_key_check", "breaks a foreign key", out);
	for (size_t i = 0; i < sizeof store_invariants / sizeof *store_invariants; i++)
		n += store_check_rows(st->db, store_invariants[i].sql, store_invariants[i].problem, out);
	n += store_check_scripts(st->db, out);
	return n;
}

/* Dumping. */

/* One value on one line: text escaped so that rows stay lines, reals with
 * every digit, blobs (scripts) by length and hash to keep the dump small;
 * their content is what the check verifies against the key. */
static void
store_dump_value(sqlite3_stmt *s, int i, FILE *out)
{
	const unsigned char *t;
	int n;

	switch (sqlite3_column_type(s, i)) {
	case SQLITE_NULL:
		fputs("NULL", out);
		break;
	case SQLITE_INTEGER:
		fprintf(out, "%lld", (long long)sqlite3_column_int64(s, i));
		break;
	case SQLITE_FLOAT:
		fprintf(out, "%.17g", sqlite3_column_double(s, i));
		break;
	case SQLITE_BLOB: {
		const void *b = sqlite3_column_blob(s, i);
		n = sqlite3_column_bytes(s, i);
		fprintf(out, "blob(%d,%016" PRIx64 ")", n, hash_fnv1a64(b ? b : "", (size_t)n));
		break;
	}
	default:
		t = sqlite3_column_text(s, i);
		n = sqlite3_column_bytes(s, i);
		fputc('"', out);
		for (int k = 0; k < n; k++) {
			unsigned char c = t[k];
			if (c == '"' || c == '\\')
				fprintf(out, "\\%c", c);
			else if (c == '\n')
				fputs("\\n", out);
			else if (c < 0x20 || c == 0x7f)
				fprintf(out, "\\x%02x", c);
			else
				fputc(c, out);
		}
		fputc('"', out);
	}
}

/* The columns of table in order, and the ORDER BY of its primary key
 * (rowid for a table without one declared, all columns for one without
 * rowid either: sqlite_sequence). */
static int
store_dump_table(sqlite3 *db, const char *table, FILE *out)
{
	sqlite3_stmt *s;
	char *cols = NULL, *order = NULL, *sql;
	int rc, ncol, npk = 0, ret = -1;
	bool rowid;

	/* Names come from the file, which may be anyone's: quoted, never pasted. */
	sql = sqlite3_mprintf("SELECT name, pk FROM pragma_table_info(%Q) ORDER BY pk = 0, pk, cid", table);
	rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 0);
		char *q = sqlite3_mprintf("\"%w\"", name), *t;
		t = cols ? xasprintf("%s, %s", cols, q) : xstrdup(q);
		free(cols);
		cols = t;
		if (sqlite3_column_int(s, 1) > 0) {
			t = order ? xasprintf("%s, %s", order, q) : xstrdup(q);
			free(order);
			order = t;
			npk++;
		}
		sqlite3_free(q);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE || !cols)
		goto out;
	/* A rowid table's order is its rowid when no key is declared. */
	sql = sqlite3_mprintf("SELECT 1 FROM sqlite_master WHERE name = %Q AND sql LIKE '%%WITHOUT ROWID%%'",
	    table);
	rowid = store_query_int(db, sql) != 1 && strcmp(table, "sqlite_sequence") != 0;
	sqlite3_free(sql);
	if (!npk) {
		free(order);
		order = xstrdup(rowid ? "rowid" : cols);
	}
	/* Column names go in the table's line, so a column added on one side
	 * alone shows in the diff. */
	sql = sqlite3_mprintf("SELECT %s FROM \"%w\" ORDER BY %s", cols, table, order);
	rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		goto out;
	fprintf(out, "table %s (%s)\n", table, cols);
	ncol = sqlite3_column_count(s);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		for (int i = 0; i < ncol; i++) {
			if (i)
				fputc('|', out);
			store_dump_value(s, i, out);
		}
		fputc('\n', out);
	}
	sqlite3_finalize(s);
	ret = rc == SQLITE_DONE ? 0 : -1;
out:
	free(cols);
	free(order);
	return ret;
}

int
store_dump(struct store *st, FILE *out)
{
	sqlite3_stmt *s;
	int rc, ret = 0;

	fprintf(out, "nowq database, schema version %d\n", store_schema_version(st));
	/* Every table, in name order: a table added by a later migration is
	 * dumped (and compared) without a word here.  Indexes are derived. */
	if (sqlite3_prepare_v2(st->db, "SELECT name FROM sqlite_master WHERE type = 'table'"
	    " AND name NOT LIKE 'sqlite_stat%' ORDER BY name", -1, &s, NULL) != SQLITE_OK)
		return store_fail(st, "cannot list the tables");
	while (ret == 0 && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 0);
		if (store_dump_table(st->db, name, out) < 0) {
			log_warnx("store: cannot dump table %s: %s", name, sqlite3_errmsg(st->db));
			ret = -1;
		}
	}
	if (ret == 0 && rc != SQLITE_DONE)
		ret = store_fail(st, "cannot list the tables");
	sqlite3_finalize(s);
	return ret;
}
