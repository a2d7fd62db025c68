/* store_stmt.c: the store's statements, prepared once and cached, and its transactions. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spool/store_int.h"


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
	    " begin_time = ?24, soft_req = ?25, project = ?26, account = ?27,"
	    " context = ?28, reserve = ?29, js = ?30, slots = ?31, in_path = ?32 WHERE id = ?1",
	/* Only the run's columns: SQLite rewrites just the indexes that hold
	 * a column it sets (not the priority, hold, begin or script ones). */
	[S_JOB_RUN] = "UPDATE jobs SET state = ?2, attempt = ?3, host = ?4, pid = ?5,"
	    " start_time = ?6 WHERE id = ?1",
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
	/* One row per group: ?4, ?5, ?6, ?17, ?18, ?19 say whether the host,
	 * the queue, the owner, the group, the parallel environment and the
	 * slots group (a column that does not is NULL in every row). */
	[S_ACCT_SUM] = "SELECT CASE ?4 WHEN 1 THEN " ACCT_HOST1 " END AS h,"
	    " CASE ?5 WHEN 1 THEN coalesce(queue, '') END AS q,"
	    " CASE ?17 WHEN 1 THEN " ACCT_GROUP " END AS g,"
	    " CASE ?6 WHEN 1 THEN coalesce(owner, '') END AS o,"
	    " CASE ?18 WHEN 1 THEN coalesce(pe, 'NONE') END AS p,"
	    " CASE ?19 WHEN 1 THEN slots END AS s,"
	    " count(*), sum(wallclock), sum(utime), sum(stime), max(maxvmem) FROM accounting"
	    " WHERE (?1 IS NULL OR owner = ?1)" ACCT_FILTER
	    " GROUP BY h, q, g, o, p, s ORDER BY h, q, g, o, p, s",
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
	    " suspended, hold) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
	    " ?15, ?16, ?17, ?18) ON CONFLICT (job_id, task) DO UPDATE SET attempt = excluded.attempt,"
	    " state = excluded.state, error = excluded.error, delete_req = excluded.delete_req,"
	    " host = excluded.host, pid = excluded.pid, start_time = excluded.start_time,"
	    " end_time = excluded.end_time, exit_status = excluded.exit_status,"
	    " signal = excluded.signal, reason = excluded.reason, utime = excluded.utime,"
	    " stime = excluded.stime, maxrss_kb = excluded.maxrss_kb, suspended = excluded.suspended,"
	    " hold = excluded.hold",
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
	[S_STAGE_OUT_ADD] = "INSERT OR REPLACE INTO stage_out_files (job_id, task, name, size, sha256,"
	    " mode) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[S_STAGE_OUT_OF] = "SELECT task, name, size, sha256, mode FROM stage_out_files WHERE job_id = ?1"
	    " ORDER BY task, name",
	[S_STAGE_USER_BYTES] = "SELECT coalesce((SELECT sum(json_extract(e.value, '$.size'))"
	    " FROM jobs j, json_each(j.stage_in) e WHERE j.uid = ?1 AND j.stage_in IS NOT NULL), 0)"
	    " + coalesce((SELECT sum(f.size) FROM stage_out_files f JOIN jobs j ON j.id = f.job_id"
	    " WHERE j.uid = ?1), 0)"
	    " + coalesce((SELECT sum(json_extract(e.value, '$.size'))"
	    " FROM cron c, json_each(c.job, '$.stage_in') e WHERE c.uid = ?1), 0)",
	/* Two forms, so a fetch's check (every chunk of it) finds its job by
	 * id: "?2 = 0 OR j.id = ?2" would scan the jobs table.  A cron
	 * entry's inputs keep a file only for the collection (?2 = 0). */
	[S_STAGE_USES] = "SELECT EXISTS (SELECT 1 FROM jobs j, json_each(j.stage_in) e"
	    " WHERE ?2 = 0 AND j.stage_in IS NOT NULL AND json_extract(e.value, '$.sha256') = ?1)"
	    " OR EXISTS (SELECT 1 FROM stage_out_files WHERE sha256 = ?1)"
	    " OR EXISTS (SELECT 1 FROM cron c, json_each(c.job, '$.stage_in') e"
	    " WHERE json_extract(e.value, '$.sha256') = ?1)",
	[S_STAGE_USES_JOB] = "SELECT EXISTS (SELECT 1 FROM jobs j, json_each(j.stage_in) e"
	    " WHERE j.id = ?2 AND json_extract(e.value, '$.sha256') = ?1)"
	    " OR EXISTS (SELECT 1 FROM stage_out_files WHERE job_id = ?2 AND sha256 = ?1)",
};

int
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

/* A listing reads its own select, only what a brief row shows
 * (row_to_brief); the scheduler's usage counts (sched.c's usage_one) only
 * where a job runs and whose it is, which it reads for every running job
 * at every pass. */
static char *
store_slim_select(unsigned v)
{
	static const char *const usage[] = { "task", "owner", "queue", "state", "host",
		"slots", "pe", "req" };

	if (v & FE_BRIEF)
		return xstrdup(JOB_SEL_BRIEF);
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
	 * state index it would read every matching row after ?9 and sort
	 * them by id for each page.  The other walks
	 * (running jobs) want that index: they read few rows among many. */
	if (v & FE_PRIO) {
		/* The listing's pending section, found by jobs_pending's
		 * range: the cursor's priority above ids ?9, or the lower
		 * priorities from their start.  ?10 is the cursor's priority.
		 * A running array with a task still pending (held on its own,
		 * or in error) has a pending line too: those few arrays are
		 * merged in, in the same order, so the walk still reads only a
		 * page of the index. */
		const char *sel = slim ? slim : JOB_SEL_LIGHT;
		const char *from = v & FE_PRIO_LOWER ? "j.prio < ?10" : "j.prio = ?10 AND j.id > ?9";

		assert(!(v & FE_FULL));
		sql = xasprintf("%s INDEXED BY jobs_pending WHERE j.state = 0 AND %s UNION ALL"
		    " %s WHERE +j.state IN (1, 2) AND j.id IN (" SQL_PENDING_TASKS ") AND %s"
		    " ORDER BY prio DESC, id", sel, from, sel, from);
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
	sql = xasprintf("%s WHERE j.id > ?9%s%s%s%s%s ORDER BY j.id",
	    slim ? slim : v & FE_FULL ? JOB_SEL_FULL : JOB_SEL_LIGHT,
	    v & FE_STATES ? (brief ? " AND +j.state IN (?1, ?2, ?3, ?4, ?5, ?6)" :
	    " AND j.state IN (?1, ?2, ?3, ?4, ?5, ?6)") : "",
	    v & FE_ARRAYS ? " AND (+j.state <> 0 OR j.t_first > 0)" : "",
	    v & FE_PENDING_TASKS ? " AND (+j.state NOT IN (1, 2) OR j.id IN (" SQL_PENDING_TASKS "))" : "",
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
		"utime", "stime", "maxrss_kb", "suspended", "hold" };
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
sqlite3_stmt *
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

void
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
int
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

int
bind_text(sqlite3_stmt *s, int i, const char *v)
{
	return v ? sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC) : sqlite3_bind_null(s, i);
}

/* Binds ?1..?6 to the states wanted by mask; unused places get -1, which no row has. */
int
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

/* The cached statement (stmt_take) with binds on ?1, ?2, ...; NULL when
 * it cannot be prepared. */
sqlite3_stmt *
stmt_bound(struct store *st, enum stmt_id id, bool *own, const struct bind *b, int n)
{
	sqlite3_stmt *s;

	if (!(s = stmt_take(st, id, own)))
		return NULL;
	for (int i = 0; i < n; i++)
		switch (b[i].type) {
		case BIND_INT:
			sqlite3_bind_int64(s, i + 1, b[i].i);
			break;
		case BIND_REAL:
			sqlite3_bind_double(s, i + 1, b[i].d);
			break;
		case BIND_TEXT:
			bind_text(s, i + 1, b[i].p);
			break;
		case BIND_BLOB:
			sqlite3_bind_blob64(s, i + 1, b[i].p, (sqlite3_uint64)b[i].n, SQLITE_STATIC);
			break;
		}
	return s;
}

/* Runs a statement that returns no rows (or whose rows are not wanted)
 * with these binds; a failure is logged as what. */
int
stmt_do(struct store *st, enum stmt_id id, const char *what, const struct bind *b, int n)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_bound(st, id, &own, b, n)))
		return -1;
	return stmt_run(st, s, own, what);
}

/* Steps a taken statement to its end, handing each row to row, which
 * returns nonzero to stop there; the statement is given back and a
 * failure logged as what. */
int
stmt_walk(struct store *st, sqlite3_stmt *s, bool own, const char *what,
    int (*row)(void *, sqlite3_stmt *), void *arg)
{
	int rc;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if (row(arg, s)) {
			rc = SQLITE_DONE;
			break;
		}
	if (rc != SQLITE_DONE)
		store_fail(st, what);
	stmt_give(s, own);
	return rc == SQLITE_DONE ? 0 : -1;
}

/*
 * Steps a statement with these binds to its first row: SQLITE_ROW with *sp
 * on it (the caller reads it, then gives it back with stmt_give),
 * SQLITE_DONE when there is none, -1 when it fails (logged as what); the
 * statement is given back but on SQLITE_ROW.
 */
int
stmt_first(struct store *st, enum stmt_id id, sqlite3_stmt **sp, bool *own, const char *what,
    const struct bind *b, int n)
{
	int rc;

	if (!(*sp = stmt_bound(st, id, own, b, n)))
		return -1;
	if ((rc = sqlite3_step(*sp)) == SQLITE_ROW)
		return rc;
	if (rc != SQLITE_DONE) {
		store_fail(st, what);
		rc = -1;
	}
	stmt_give(*sp, *own);
	return rc;
}

/* Plain SQL with no parameters, for opening, migrations and checks. */
int
store_exec(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* An integer PRAGMA or query with one result; -1 on error. */
int64_t
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

/* Transactions. */

int
store_begin(struct store *st)
{
	if (st->in_txn) {
		log_warnx("store: begin inside a transaction");
		return -1;
	}
	if (stmt_do(st, S_BEGIN, "begin", NO_BINDS) < 0)
		return -1;
	st->in_txn = true;
	return 0;
}


int
store_commit(struct store *st)
{
	if (!st->in_txn)
		return 0;
	if (store_capture_end(st) < 0)
		return -1;
	if (stmt_do(st, S_COMMIT, "commit", NO_BINDS) < 0) {
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
	st->in_txn = false;
	st->seq = st->seq_committed;
	if (st->cap)
		cap_reset(st->cap);
	free(st->cs);
	st->cs = NULL;
	if (sqlite3_get_autocommit(st->db))
		return;
	if (stmt_do(st, S_ROLLBACK, "rollback", NO_BINDS) < 0)
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
int
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

int
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

