/* store_acct.c: the accounting table: one row per ended attempt, listed and summed. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/msg_rows.h"
#include "spool/store_int.h"

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
	bind_text(s, A_project, j->project);
	bind_text(s, A_account, j->account);
	sqlite3_bind_double(s, A_wallclock, j->start_time > 0 && j->end_time > j->start_time ?
	    (double)(j->end_time - j->start_time) / 1000.0 : 0.0);
	sqlite3_bind_double(s, A_utime, a->ru.utime);
	sqlite3_bind_double(s, A_stime, a->ru.stime);
	sqlite3_bind_int64(s, A_maxvmem, a->ru.maxvmem);
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
	struct msg_acct_row m;
	const char *h = (const char *)sqlite3_column_text(s, A_host);
	char *dup, *tok, *save;
	double wall = sqlite3_column_double(s, A_wallclock);

#define INT(f, lo, hi)	col_int(s, A_##f, lo, hi, id, #f)
#define STR(f)		((const char *)sqlite3_column_text(s, A_##f))
	memset(&m, 0, sizeof m);
	m.hosts = json_array();
	if (h) {
		dup = xstrdup(h);
		for (tok = strtok_r(dup, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			json_array_append_new(m.hosts, json_string(tok));
		free(dup);
	}
	m.ru.utime = sqlite3_column_double(s, A_utime);
	m.ru.stime = sqlite3_column_double(s, A_stime);
	if (m.ru.utime < 0)
		m.ru.utime = 0;
	if (m.ru.stime < 0)
		m.ru.stime = 0;
	for (int i = 0; i < RUSAGE_NINT; i++)
		rusage_set_int(&m.ru, i, col_int(s, A_maxrss_kb + i, 0, INT64_MAX, id, rusage_int_names[i]));
	m.ru.maxvmem = col_int(s, A_maxvmem, 0, INT64_MAX, id, "maxvmem");
	m.row = sqlite3_column_int64(s, A_id);
	m.id = id;
	m.task = INT(task, 0, INT32_MAX);
	m.attempt = INT(attempt, 0, INT32_MAX);
	m.name = STR(name);
	m.owner = STR(owner);
	m.uid = INT(uid, 0, UINT32_MAX);
	m.gid = INT(gid, 0, UINT32_MAX);
	m.group = STR(group_name);
	m.queue = STR(queue);
	m.submit_time = INT(submit_time, 0, INT64_MAX);
	m.start_time = INT(start_time, 0, INT64_MAX);
	m.end_time = INT(end_time, 0, INT64_MAX);
	m.state = job_state_name((enum job_state)INT(state, JS_PENDING, JS_DELETED));
	m.has_exit_status = sqlite3_column_int64(s, A_failed_code) != ACCT_FAILED_BEFORE;
	if (m.has_exit_status)
		m.exit_status = INT(exit_status, -1, 65535);
	m.signal = INT(signal, 0, 128);
	m.failed = INT(failed_code, 0, 65535);
	m.reason = STR(failed);
	m.prio = INT(prio, -1023, 1024);
	m.pe = STR(pe);
	m.slots = INT(slots, 1, JOB_MAX_SLOTS);
	m.project = STR(project);
	m.account = STR(account);
	m.ru_wallclock = wall < 0 ? 0 : wall;
#undef INT
#undef STR
	return msg_acct_row_pack(&m);
}

struct acct_walk {
	const struct store_acct_filter *f;
	bool          by_key;    /* the statement picks the owner's rows */
	store_acct_cb cb;
	void         *arg;
};

static int
acct_row(void *arg, sqlite3_stmt *s)
{
	struct acct_walk *w = arg;
	json_t *row;
	int stop;

	/* The job id and name indexes do not know the owner: the few
	 * rows of one job are filtered here. */
	if (w->f->owner && !w->by_key) {
		const char *o = (const char *)sqlite3_column_text(s, A_owner);
		if (!o || strcmp(o, w->f->owner) != 0)
			return 0;
	}

	row = acct_row_json(s);
	stop = w->cb(w->arg, row);
	json_decref(row);
	return stop;
}

/* ACCT_FILTER's parameters: ?3 and ?7 to ?16 (NULL: any). */
static void
acct_bind_filter(sqlite3_stmt *s, const struct store_acct_filter *f)
{
	sqlite3_bind_int64(s, 3, f->since);
	if (f->project)
		sqlite3_bind_text(s, 7, f->project, -1, SQLITE_STATIC);
	if (f->account)
		sqlite3_bind_text(s, 8, f->account, -1, SQLITE_STATIC);
	if (f->queue)
		sqlite3_bind_text(s, 9, f->queue, -1, SQLITE_STATIC);
	if (f->host)
		sqlite3_bind_text(s, 10, f->host, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 11, f->from);
	sqlite3_bind_int64(s, 12, f->to);
	sqlite3_bind_int(s, 13, f->by_end);
	if (f->group)
		sqlite3_bind_text(s, 14, f->group, -1, SQLITE_STATIC);
	if (f->pe)
		sqlite3_bind_text(s, 15, f->pe, -1, SQLITE_STATIC);
	if (f->slots > 0)
		sqlite3_bind_int64(s, 16, f->slots);
}

int
store_acct_foreach(struct store *st, const struct store_acct_filter *f, store_acct_cb cb, void *arg)
{
	struct acct_walk w = { f, false, cb, arg };
	enum stmt_id id;
	sqlite3_stmt *s;
	bool own;

	id = f->job_id > 0 ? S_ACCT_BY_JOB : f->name ? S_ACCT_BY_NAME :
	    f->owner ? S_ACCT_BY_OWNER : S_ACCT_BY_END;
	w.by_key = id == S_ACCT_BY_OWNER;
	if (!(s = stmt_take(st, id, &own)))
		return -1;
	if (id == S_ACCT_BY_JOB)
		sqlite3_bind_int64(s, 1, f->job_id);
	else if (id == S_ACCT_BY_NAME)
		sqlite3_bind_text(s, 1, f->name, -1, SQLITE_STATIC);
	else if (id == S_ACCT_BY_OWNER)
		sqlite3_bind_text(s, 1, f->owner, -1, SQLITE_STATIC);
	acct_bind_filter(s, f);
	sqlite3_bind_int64(s, 4, f->after_end);
	sqlite3_bind_int64(s, 5, f->after_row);
	sqlite3_bind_int64(s, 6, f->limit > 0 ? f->limit : -1);
	return stmt_walk(st, s, own, "cannot list accounting", acct_row, &w);
}

/* One row of a sum, with the host, queue, group, owner, parallel
 * environment and slots it is grouped by. */
static int
acct_sum_row(void *arg, sqlite3_stmt *s)
{
	struct acct_walk *w = arg;
	struct msg_acct_sum m = { .jobs = sqlite3_column_int64(s, 6), .ru_wallclock =
	    sqlite3_column_double(s, 7), .ru_utime = sqlite3_column_double(s, 8),
	    .ru_stime = sqlite3_column_double(s, 9), .maxvmem = sqlite3_column_int64(s, 10) };
	const char **key[] = { &m.host, &m.queue, &m.group, &m.owner, &m.pe };
	json_t *row;
	int stop;

	/* The sum of no row at all: nothing to show, as Grid Engine shows it. */
	if (m.jobs == 0)
		return 0;
	for (int k = 0; k < 5; k++)
		*key[k] = (const char *)sqlite3_column_text(s, k);
	m.has_slots = sqlite3_column_type(s, 5) != SQLITE_NULL;
	m.slots = sqlite3_column_int64(s, 5);
	row = msg_acct_sum_pack(&m);
	stop = w->cb(w->arg, row);
	json_decref(row);
	return stop;
}

int
store_acct_summary(struct store *st, const struct store_acct_filter *f, unsigned groups,
    store_acct_cb cb, void *arg)
{
	struct acct_walk w = { f, true, cb, arg };
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_ACCT_SUM, &own)))
		return -1;
	if (f->owner)
		sqlite3_bind_text(s, 1, f->owner, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 4, (groups & ACCT_BY_HOST) != 0);
	sqlite3_bind_int(s, 5, (groups & ACCT_BY_QUEUE) != 0);
	sqlite3_bind_int(s, 6, (groups & ACCT_BY_OWNER) != 0);
	sqlite3_bind_int(s, 17, (groups & ACCT_BY_GROUP) != 0);
	sqlite3_bind_int(s, 18, (groups & ACCT_BY_PE) != 0);
	sqlite3_bind_int(s, 19, (groups & ACCT_BY_SLOTS) != 0);
	acct_bind_filter(s, f);
	return stmt_walk(st, s, own, "cannot sum accounting", acct_sum_row, &w);
}

int
store_acct_last_state(struct store *st, int64_t id, enum job_state *state)
{
	sqlite3_stmt *s;
	bool own;
	int64_t v;
	int rc;

	rc = stmt_first(st, S_ACCT_LAST, &s, &own, "cannot read accounting", BINDS(BIND(id)));
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? 1 : -1;
	v = sqlite3_column_int64(s, 0);
	*state = v >= JS_DONE && v <= JS_DELETED ? (enum job_state)v : JS_FAILED;
	stmt_give(s, own);
	return 0;
}

