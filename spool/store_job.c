/* store_job.c: jobs, array tasks, their scripts and submission keys in the store. */
#include "config.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spool/store_int.h"

/* Hash collisions are astronomically rare; many in a row means a bug. */
#define STORE_MAX_SUFFIX 1000

/* Scripts: content-addressed, one row per distinct text. */

/* Stores body unless it is there already; hash receives its key. */
static int
store_script_put(struct store *st, const char *body, size_t n, char *hash, size_t hashlen)
{
	uint64_t h = hash_fnv1a64(body, n);
	sqlite3_stmt *s;
	bool own, same;
	int rc;

	for (int k = 0; k < STORE_MAX_SUFFIX; k++) {
		if (k == 0)
			snprintf(hash, hashlen, "%016" PRIx64, h);
		else
			snprintf(hash, hashlen, "%016" PRIx64 "-%d", h, k);
		rc = stmt_first(st, S_SCRIPT_FIND, &s, &own, "cannot look up a script",
		    BINDS(BIND(hash), BIND_BLOB(body, n)));
		if (rc < 0)
			return -1;
		if (rc == SQLITE_DONE)
			return stmt_do(st, S_SCRIPT_ADD, "cannot store a script",
			    BINDS(BIND(hash), BIND_BLOB(body, n)));
		same = sqlite3_column_int(s, 0) == 1;
		stmt_give(s, own);
		if (same)
			return 0;
		/* Same hash, other text: try the next suffix. */
	}
	log_warnx("store: %d scripts share hash %016" PRIx64 "; refusing another", STORE_MAX_SUFFIX, h);
	return -1;
}

/* Drops the script with this key if no job uses it any more. */
static int
store_script_gc(struct store *st, const char *hash)
{
	return stmt_do(st, S_SCRIPT_GC, "cannot remove an unused script", BINDS(BIND(hash)));
}

/* Runs a DELETE ... RETURNING script_hash, then collects the scripts it
 * freed.  Returns the number of jobs deleted. */
static int
store_delete_rows(struct store *st, sqlite3_stmt *s, bool own, const char *what)
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

/* Jobs: the API. */

int
store_job_insert(struct store *st, struct job *j)
{
	char hash[40], *groups, *argv, *args, *env, *req, *soft, *context, *sin, *sout;
	bool bad = false, own, mine;
	sqlite3_stmt *s;
	int rc = -1;

	req = req_to_text(&j->req);
	soft = req_empty(&j->soft) ? NULL : req_to_text(&j->soft);
	context = strv_to_text(j->context, &bad);
	sin = j->stage_in ? json_dumps(j->stage_in, JSON_COMPACT) : NULL;
	sout = strv_to_text(j->stage_out, &bad);
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
	bind_text(s, C_in_path, j->in_path);
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
	bind_text(s, C_soft_req, soft);
	bind_text(s, C_project, j->project);
	bind_text(s, C_account, j->account);
	bind_text(s, C_context, context);
	sqlite3_bind_int(s, C_reserve, j->reserve);
	sqlite3_bind_int(s, C_js, j->js);
	bind_text(s, C_binding, j->binding);
	sqlite3_bind_int(s, C_noshell, j->noshell);
	sqlite3_bind_int(s, C_slots_min, j->slots_min);
	bind_text(s, C_stage_in, sin);
	bind_text(s, C_stage_out, sout);
	bind_text(s, C_env, env);
	if (stmt_run(st, s, own, "cannot store a job") < 0)
		goto end;
	j->id = sqlite3_last_insert_rowid(st->db);
	rc = 0;
end:
	rc = op_end(st, mine, rc);
out:
	free(req);
	free(soft);
	free(context);
	free(sin);
	free(sout);
	free(groups);
	free(argv);
	free(args);
	free(env);
	return rc;
}

int
store_task_put(struct store *st, const struct job *j)
{
	assert(j->task > 0);
	return stmt_do(st, S_TASK_PUT, "cannot store a task", BINDS(BIND(j->id), BIND(j->task),
	    BIND(j->attempt), BIND(j->state), BIND(j->error), BIND(j->delete_req), BIND(j->host),
	    BIND(j->pid), BIND(j->start_time), BIND(j->end_time), BIND(j->exit_status),
	    BIND(j->signal), BIND(j->reason), BIND(j->utime), BIND(j->stime), BIND(j->maxrss_kb),
	    BIND(j->suspended), BIND(j->hold)));
}

int
store_task_delete(struct store *st, int64_t id, int task)
{
	return stmt_do(st, S_TASK_DEL, "cannot remove a task", BINDS(BIND(id), BIND(task)));
}

struct job *
store_task_get(struct store *st, int64_t id, int task, bool with_script)
{
	sqlite3_stmt *s;
	struct job *j;
	bool own;

	if (stmt_first(st, with_script ? S_TASK_GET_FULL : S_TASK_GET, &s, &own,
	    "cannot read a task", BINDS(BIND(id), BIND(task))) != SQLITE_ROW)
		return NULL;
	j = row_to_job(s, with_script);
	stmt_give(s, own);
	return j;
}

int
store_array_next(struct store *st, int64_t id)
{
	sqlite3_stmt *s;
	bool own;
	int v = 0;

	if (!(s = stmt_bound(st, S_ARRAY_NEXT, &own, BINDS(BIND(id)))))
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	stmt_give(s, own);
	return v < 0 ? 0 : v;
}

int
store_array_set_next(struct store *st, int64_t id, int next)
{
	return stmt_do(st, S_ARRAY_SET_NEXT, "cannot store an array's cursor",
	    BINDS(BIND(id), BIND(next)));
}

int *
store_task_ids(struct store *st, int64_t id, int from, size_t *n)
{
	sqlite3_stmt *s;
	int *ids = NULL, rc;
	size_t cap = 0;
	bool own;

	*n = 0;
	if (!(s = stmt_bound(st, S_TASK_IDS, &own, BINDS(BIND(id), BIND(from)))))
		return NULL;
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

	memset(c, 0, sizeof *c);
	if (stmt_first(st, S_TASK_UNFINISHED, &s, &own, "cannot count tasks",
	    BINDS(BIND(id))) != SQLITE_ROW)
		return -1;
	c->unfinished = sqlite3_column_int64(s, 0);
	c->active = sqlite3_column_int64(s, 1);
	stmt_give(s, own);
	if (c->unfinished > 0)
		return 0;
	if (stmt_first(st, S_TASK_COUNTS, &s, &own, "cannot count tasks",
	    BINDS(BIND(id))) != SQLITE_ROW)
		return -1;
	c->failed = sqlite3_column_int64(s, 0);
	c->deleted = sqlite3_column_int64(s, 1);
	stmt_give(s, own);
	return 0;
}

/* Bound one by one, not by stmt_do: the master writes a job at each of its
 * steps, and the list of binds would cost more than the binds. */
int
store_job_update(struct store *st, const struct job *j)
{
	sqlite3_stmt *s;
	char *req, *soft, *context;
	bool own, bad = false;
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
	soft = req_empty(&j->soft) ? NULL : req_to_text(&j->soft);
	context = strv_to_text(j->context, &bad);
	bind_text(s, 25, soft);
	bind_text(s, 26, j->project);
	bind_text(s, 27, j->account);
	bind_text(s, 28, context);
	sqlite3_bind_int(s, 29, j->reserve);
	sqlite3_bind_int(s, 30, j->js);
	/* A -pe range's grant, at dispatch. */
	sqlite3_bind_int(s, 31, j->slots);
	bind_text(s, 32, j->in_path);   /* qalter -i */
	rc = stmt_run(st, s, own, "cannot update a job");
	free(soft);
	free(context);
	free(req);
	if (rc < 0)
		return -1;
	if (sqlite3_changes(st->db) != 1) {
		log_warnx("store: update of job %lld, which is not in the database", (long long)j->id);
		return -1;
	}
	return 0;
}

int
store_job_run(struct store *st, const struct job *j)
{
	sqlite3_stmt *s;
	bool own;

	if (j->task > 0)
		return store_task_put(st, j);
	if (!(s = stmt_take(st, S_JOB_RUN, &own)))
		return -1;
	sqlite3_bind_int64(s, 1, j->id);
	sqlite3_bind_int(s, 2, j->state);
	sqlite3_bind_int(s, 3, j->attempt);
	bind_text(s, 4, j->host);
	sqlite3_bind_int(s, 5, j->pid);
	sqlite3_bind_int64(s, 6, j->start_time);
	if (stmt_run(st, s, own, "cannot update a job") < 0)
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
	struct job *j;
	bool own;

	if (stmt_first(st, with_script ? S_JOB_GET_FULL : S_JOB_GET, &s, &own,
	    "cannot read a job", BINDS(BIND(id))) != SQLITE_ROW)
		return NULL;
	j = row_to_job(s, with_script);
	stmt_give(s, own);
	return j;
}

/* The DELETE id with ?1 = key and the scripts it frees, as one change. */
static int
store_delete_jobs(struct store *st, enum stmt_id id, int64_t key, const char *what)
{
	sqlite3_stmt *s;
	bool own, mine;

	if (op_begin(st, &mine) < 0)
		return -1;
	if (!(s = stmt_bound(st, id, &own, BINDS(BIND(key)))))
		return op_end(st, mine, -1);
	return op_end(st, mine, store_delete_rows(st, s, own, what));
}

int
store_job_delete(struct store *st, int64_t id)
{
	return store_delete_jobs(st, S_JOB_DELETE, id, "cannot delete a job") < 0 ? -1 : 0;
}

/* A walk hands each row to cb as a struct job, or to bcb as a brief row
 * read without one (a listing's thousands of rows). */
struct job_walk {
	store_job_cb   cb;
	store_brief_cb bcb;
	void          *arg;
	bool           full;
	bool           stopped;   /* a callback said stop */
};

static int
job_row(void *arg, sqlite3_stmt *s)
{
	struct job_walk *w = arg;
	struct job *j;

	if (w->bcb) {
		struct job_brief b;

		row_to_brief(s, &b);
		return w->stopped = w->bcb(w->arg, &b) != 0;
	}
	j = row_to_job(s, w->full);
	w->stopped = w->cb(w->arg, j) != 0;
	job_free(j);
	return w->stopped;
}

/* Hands each row of a running statement to w; the statement is given back. */
static int
store_jobs_walk(struct store *st, sqlite3_stmt *s, bool own, struct job_walk *w)
{
	return stmt_walk(st, s, own, "cannot list jobs", job_row, w);
}

static int
jobs_foreach(struct store *st, const struct store_job_filter *f, struct job_walk *w)
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
	if (w->bcb)
		v |= FE_BRIEF;
	else if (f->with_script)
		v |= FE_FULL;
	else if (f->usage)
		v |= FE_USAGE;
	if (f->pending_arrays_only)
		v |= FE_ARRAYS;
	if (f->running_pending_tasks_only)
		v |= FE_PENDING_TASKS;
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
	w->full = f->with_script && !w->bcb;
	return store_jobs_walk(st, s, own, w);
}

int
store_jobs_foreach(struct store *st, const struct store_job_filter *f, store_job_cb cb, void *arg)
{
	return jobs_foreach(st, f, &(struct job_walk){ .cb = cb, .arg = arg });
}

int
store_briefs_foreach(struct store *st, const struct store_job_filter *f, store_brief_cb cb, void *arg)
{
	return jobs_foreach(st, f, &(struct job_walk){ .bcb = cb, .arg = arg });
}

int
store_pending_by_prio(struct store *st, int64_t after_prio, int64_t after_id, store_job_cb cb,
    store_brief_cb bcb, void *arg)
{
	struct job_walk w = { .cb = cb, .bcb = bcb, .arg = arg };

	assert(!cb != !bcb);
	/* The cursor's own priority first (nothing there before a first
	 * page), then the lower ones: two range scans of jobs_pending. */
	for (unsigned v = FE_PRIO; v <= (FE_PRIO | FE_PRIO_LOWER) && !w.stopped; v += FE_PRIO_LOWER) {
		sqlite3_stmt *s;
		bool own;

		if (!(s = stmt_take(st, S_FOREACH + (v | (bcb ? FE_BRIEF : 0)), &own)))
			return -1;
		sqlite3_bind_int64(s, 9, after_id);
		sqlite3_bind_int64(s, 10, after_prio);
		if (store_jobs_walk(st, s, own, &w) < 0)
			return -1;
	}
	return 0;
}

int
store_tasks_foreach(struct store *st, int64_t id, unsigned states, store_job_cb cb, void *arg)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_bound(st, S_TASKS_OF, &own, BINDS(BIND(id), BIND(states)))))
		return -1;
	return store_jobs_walk(st, s, own, &(struct job_walk){ .cb = cb, .arg = arg });
}

int
store_tasks_active(struct store *st, const char *host, store_job_cb cb, void *arg)
{
	sqlite3_stmt *s;
	bool own;

	s = host ? stmt_bound(st, S_TASKS_ACTIVE_HOST, &own, BINDS(BIND(host))) :
	    stmt_take(st, S_TASKS_ACTIVE, &own);
	if (!s)
		return -1;
	return store_jobs_walk(st, s, own, &(struct job_walk){ .cb = cb, .arg = arg });
}

/*
 * The rows are read before any callback runs: the scheduler's callback
 * dispatches the job it is given, which moves it out of the very index this
 * query walks.
 */
int
store_jobs_runnable(struct store *st, int64_t uid, int limit, store_job_cb cb, void *arg)
{
	struct job **jobs = NULL;
	sqlite3_stmt *s;
	int rc = SQLITE_DONE, n = 0, size = 0, i;
	bool own;

	if (limit <= 0)
		return 0;
	if (!(s = stmt_take(st, uid < 0 ? S_RUNNABLE : S_RUNNABLE_UID, &own)))
		return -1;
	sqlite3_bind_int(s, 1, limit);
	if (uid >= 0)
		sqlite3_bind_int64(s, 2, uid);
	/* Grown as rows come: the scheduler's limit is often thousands for
	 * the few rows a pass finds. */
	while (n < limit && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (n == size) {
			size = size ? 2 * size : 16;
			jobs = xrealloc(jobs, (size_t)size * sizeof *jobs);
		}
		jobs[n++] = row_to_job(s, true);
	}
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
	return store_delete_jobs(st, S_PURGE, before_ms, "cannot purge finished jobs");
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
		/* A state no build writes (a damaged row) is counted nowhere. */
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


int64_t
store_key_job(struct store *st, const char *key)
{
	sqlite3_stmt *s;
	bool own;
	int64_t id = 0;

	if (!(s = stmt_bound(st, S_KEY_GET, &own, BINDS(BIND(key)))))
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		id = sqlite3_column_int64(s, 0);
	stmt_give(s, own);
	return id;
}

int
store_key_put(struct store *st, const char *key, int64_t job_id, int64_t now)
{
	return stmt_do(st, S_KEY_PUT, "cannot store a submission key",
	    BINDS(BIND(key), BIND(job_id), BIND(now)));
}

int
store_key_purge(struct store *st, int64_t before)
{
	return stmt_do(st, S_KEY_PURGE, "cannot purge submission keys", BINDS(BIND(before)));
}

