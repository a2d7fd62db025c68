/* store_cron.c: cron entries, the mail outbox and job dependencies in the store. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "spool/store_int.h"

/* Cron entries. */

int
store_cron_insert(struct store *st, struct cron_rec *r)
{
	if (stmt_do(st, S_CRON_INSERT, "cannot store a cron entry", BINDS(BIND(r->owner),
	    BIND(r->uid), BIND(r->spec), BIND(r->job), BIND(r->next_run), BIND(r->last_job),
	    BIND(r->hold), BIND(r->created))) < 0)
		return -1;
	r->id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int
store_cron_update(struct store *st, const struct cron_rec *r)
{
	return stmt_do(st, S_CRON_UPDATE, "cannot update a cron entry", BINDS(BIND(r->id),
	    BIND(r->next_run), BIND(r->last_job), BIND(r->hold)));
}

int
store_cron_delete(struct store *st, int64_t id)
{
	return stmt_do(st, S_CRON_DELETE, "cannot delete a cron entry", BINDS(BIND(id)));
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
	struct cron_rec *r;
	bool own;

	if (stmt_first(st, S_CRON_GET, &s, &own, "cannot read a cron entry",
	    BINDS(BIND(id))) != SQLITE_ROW)
		return NULL;
	r = row_to_cron(s);
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
	return stmt_do(st, S_MAIL_ADD, "cannot store a mail",
	    BINDS(BIND(job_id), BIND(message), BIND(now)));
}

int
store_mail_due(struct store *st, int64_t now, int limit, store_mail_cb cb, void *arg)
{
	struct { int64_t id, job; char *msg; int attempts; } *v = NULL;
	sqlite3_stmt *s;
	size_t n = 0, i;
	bool own, stop = false;
	int rc;

	if (!(s = stmt_bound(st, S_MAIL_DUE, &own, BINDS(BIND(now), BIND(limit)))))
		return -1;
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
	return stmt_do(st, S_MAIL_DONE, "cannot remove a sent mail", BINDS(BIND(id)));
}

int
store_mail_retry(struct store *st, int64_t id, int attempts, int64_t next_try, const char *error)
{
	return stmt_do(st, S_MAIL_RETRY, "cannot store a mail's retry",
	    BINDS(BIND(id), BIND(attempts), BIND(next_try), BIND(error)));
}

int
store_mail_of_job(struct store *st, int64_t job_id, int *count, char **last_error, int64_t *next_try)
{
	sqlite3_stmt *s;
	bool own;

	if (stmt_first(st, S_MAIL_OF_JOB, &s, &own, "cannot read the mail outbox",
	    BINDS(BIND(job_id))) != SQLITE_ROW)
		return -1;
	*count = sqlite3_column_int(s, 0);
	*last_error = col_str(s, 1);
	*next_try = sqlite3_column_int64(s, 2);
	stmt_give(s, own);
	return 0;
}

/* Dependencies. */

static int
dep_stmt(struct store *st, enum stmt_id id, int64_t job, int64_t dep, int kind)
{
	return stmt_do(st, id, "cannot change a dependency", BINDS(BIND(job), BIND(dep), BIND(kind)));
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

	if (!(s = stmt_bound(st, id, &own, BINDS(BIND(key)))))
		return -1;
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
	int64_t n;

	if (stmt_first(st, S_DEPS_COUNT, &s, &own, "cannot count dependencies",
	    BINDS(BIND(job))) != SQLITE_ROW)
		return -1;
	n = sqlite3_column_int64(s, 0);
	stmt_give(s, own);
	return n;
}

int
store_jobs_begin_due(struct store *st, int64_t now, store_dep_cb cb, void *arg)
{
	return deps_walk(st, S_BEGIN_DUE, now, cb, arg);
}

