/* store.c: opening the master's SQLite database, its schema and forward migrations, and the meta table. */
#include "config.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spool/store_int.h"

/* Long enough to ride out a checkpoint or a `qmaster -C` reading alongside. */
#define STORE_BUSY_MS	5000

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
	/* 12 -> 13: Grid Engine's options that are kept and shown (issue
	 * 23): the -soft request (JSON as req), -P, -A, the -ac context (a
	 * JSON list of NAME=VALUE), -R, -js, -binding and -shell n; project
	 * and account in accounting too, for qacct -P and -A. */
	"ALTER TABLE jobs ADD COLUMN soft_req TEXT;"
	"ALTER TABLE jobs ADD COLUMN project TEXT;"
	"ALTER TABLE jobs ADD COLUMN account TEXT;"
	"ALTER TABLE jobs ADD COLUMN context TEXT;"
	"ALTER TABLE jobs ADD COLUMN reserve INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN js INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN binding TEXT;"
	"ALTER TABLE jobs ADD COLUMN noshell INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE accounting ADD COLUMN project TEXT;"
	"ALTER TABLE accounting ADD COLUMN account TEXT;",

	/* 13 -> 14: -pe NAME MIN-MAX (issue 23): the fewest slots the job
	 * takes; 0 for a job without a range. */
	"ALTER TABLE jobs ADD COLUMN slots_min INTEGER NOT NULL DEFAULT 0;",

	/* 14 -> 15: qacct's maxvmem (issue 23): the job's peak memory in
	 * bytes as its shepherd measured it; 0 for older rows. */
	"ALTER TABLE accounting ADD COLUMN maxvmem INTEGER NOT NULL DEFAULT 0;",

	/* 15 -> 16: file staging (issue 25).  stage_in is the job's inputs as
	 * JSON [{name, size, sha256}], stage_out its --stage-out patterns (a
	 * JSON list); stage_out_files one row per file a task sent back.  The
	 * bytes are files in SPOOL/stage/, named by their SHA-256. */
	"ALTER TABLE jobs ADD COLUMN stage_in TEXT;"
	"ALTER TABLE jobs ADD COLUMN stage_out TEXT;"
	"CREATE TABLE stage_out_files ("
	" job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	" task INTEGER NOT NULL,"
	" name TEXT NOT NULL,"
	" size INTEGER NOT NULL,"
	" sha256 TEXT NOT NULL,"
	" PRIMARY KEY (job_id, task, name)) WITHOUT ROWID;"
	"CREATE INDEX stage_out_sha ON stage_out_files (sha256);",

	/* 16 -> 17: holds per task (qhold JOB.TASK, DRMAA's control of one
	 * task of a bulk job).  A pending task held on its own gets a row
	 * (state 0, hold 1), so the scheduler, which starts only tasks
	 * without one, passes it by; its release removes the row. */
	"ALTER TABLE tasks ADD COLUMN hold INTEGER NOT NULL DEFAULT 0;",

	/* 17 -> 18: qsub -i, DRMAA's drmaa_input_path (issue 24): the file
	 * the job reads as its standard input; NULL reads /dev/null. */
	"ALTER TABLE jobs ADD COLUMN in_path TEXT;",

	/* 18 -> 19: a staged output's permission bits (0777 at most), so
	 * that nowq fetch gives them back; 0 for older rows (0666 less the
	 * umask, as before). */
	"ALTER TABLE stage_out_files ADD COLUMN mode INTEGER NOT NULL DEFAULT 0;",
};

/* Opening. */

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
store_db_open(const char *path, int flags, const char *vfs)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, vfs);

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

	if ((db = store_db_open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, store_walbuf_vfs())) == NULL)
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

	if ((db = store_db_open(path, SQLITE_OPEN_READONLY, NULL)) == NULL)
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

/* The listings' connection reads the file through a mapping: a page
 * read again costs no pread and no copy into SQLite's cache, which a
 * commit by the master empties anyway.  Up to 256 MiB (some 250,000
 * jobs); what lies beyond is read as before. */
struct store *
store_open_reader(const char *path, const char **why)
{
	struct store *st = store_open_ro(path, false, why);

	if (st)
		store_exec(st->db, "PRAGMA mmap_size = 268435456");
	return st;
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

/* Meta. */

int
store_meta_get(struct store *st, const char *key, char **val)
{
	const unsigned char *t;
	sqlite3_stmt *s;
	bool own;
	int rc;

	*val = NULL;
	rc = stmt_first(st, S_META_GET, &s, &own, "cannot read a meta value", BINDS(BIND(key)));
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? 1 : -1;
	t = sqlite3_column_text(s, 0);
	*val = xstrdup(t ? (const char *)t : "");
	stmt_give(s, own);
	return 0;
}

/* A NULL val removes the key. */
int
store_meta_set(struct store *st, const char *key, const char *val)
{
	if (!val)
		return stmt_do(st, S_META_DEL, "cannot store a meta value", BINDS(BIND(key)));
	return stmt_do(st, S_META_SET, "cannot store a meta value", BINDS(BIND(key), BIND(val)));
}

