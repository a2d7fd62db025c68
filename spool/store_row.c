/* store_row.c: a job's row in the jobs table: the list fields as text and a row read back as a struct job. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spool/store_int.h"

/* Jobs: encoding of the list fields. */

/* A JSON array of texts, or NULL for a NULL vector; *bad when a text cannot
 * be JSON (not UTF-8), which job_from_json never lets through. */
char *
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

char *
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

int64_t
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

char *
col_str(sqlite3_stmt *s, int c)
{
	const unsigned char *t = sqlite3_column_text(s, c);
	return t ? xstrdup((const char *)t) : NULL;
}

/* A column holding JSON the master wrote itself; NULL when empty. */
static json_t *
col_json(sqlite3_stmt *s, int c)
{
	const char *t = (const char *)sqlite3_column_text(s, c);

	return t ? json_loadb(t, (size_t)sqlite3_column_bytes(s, c), 0, NULL) : NULL;
}

/* A column holding a JSON list of texts (text_to_strv). */
char **
col_strv(sqlite3_stmt *s, int c, int64_t id, const char *col)
{
	const char *t = (const char *)sqlite3_column_text(s, c);

	return text_to_strv(t, sqlite3_column_bytes(s, c), id, col);
}

/* The -l request is kept as its JSON text; NULL when there is none. */
char *
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
text_to_req(struct job *j, struct job_req *r, const char *text)
{
	json_t *o;
	const char *why = NULL;

	if (!text)
		return;
	o = json_loads(text, 0, NULL);
	if (!o || req_from_json(r, o, &why) < 0) {
		log_warnx("store: job %lld: its resource request is unreadable (%s); ignored",
		    (long long)j->id, why ? why : "not JSON");
		req_clear(r);
	}
	json_decref(o);
}

/* Where each brief column is in a job's row; the listing's own select
 * (JOB_SEL_BRIEF) has them in B_ order. */
#define X_JOBCOL(c)	C_##c,
static const int brief_in_job[B_N] = { C_id, BRIEF_COLUMNS(X_JOBCOL) };
#undef X_JOBCOL

static enum job_state
col_state(sqlite3_stmt *s, int c, int64_t id)
{
	int64_t state = sqlite3_column_int64(s, c);

	if (state < JS_PENDING || state > JS_DELETED) {
		/* Shown as failed, so it stays visible, can be purged, and is
		 * never started. */
		log_warnx("store: job %lld: unknown state %lld; shown as failed",
		    (long long)id, (long long)state);
		return JS_FAILED;
	}
	return (enum job_state)state;
}

/* The brief columns at the places at[] says; texts borrowed from the row
 * (valid until the statement steps). */
static void
brief_read(sqlite3_stmt *s, const int *at, struct job_brief *b)
{
	int64_t id = sqlite3_column_int64(s, at[B_id]);

#define INT(f, lo, hi)	col_int(s, at[B_##f], lo, hi, id, #f)
#define TEXT(f)		(const char *)sqlite3_column_text(s, at[B_##f])
	b->id = id;
	b->task = (int)INT(task, 0, INT32_MAX);
	b->name = TEXT(name);
	b->owner = TEXT(owner);
	b->queue = TEXT(queue);
	b->prio = (int)INT(prio, -1023, 1024);
	b->submit_time = INT(submit_time, 0, INT64_MAX);
	b->start_time = INT(start_time, 0, INT64_MAX);
	b->state = col_state(s, at[B_state], id);
	b->hold = (unsigned)INT(hold, 0, 0xff);
	b->error = sqlite3_column_int64(s, at[B_error]) != 0;
	b->delete_req = sqlite3_column_int64(s, at[B_delete_req]) != 0;
	b->host = TEXT(host);
	b->slots = (int)INT(slots, 1, JOB_MAX_SLOTS);
	b->t_first = (int)INT(t_first, 0, JOB_MAX_TASKS);
	b->t_last = (int)INT(t_last, 0, JOB_MAX_TASKS);
	b->t_step = (int)INT(t_step, 0, JOB_MAX_TASKS);
	b->suspended = (unsigned)INT(suspended, 0, SUSP_USER | SUSP_HOST);
#undef INT
#undef TEXT
}

/* A row of JOB_SEL_BRIEF. */
void
row_to_brief(sqlite3_stmt *s, struct job_brief *b)
{
	static const int own[B_N] = {
#define X_OWN(c)	B_##c,
		B_id, BRIEF_COLUMNS(X_OWN)
#undef X_OWN
	};

	brief_read(s, own, b);
}

static char *
dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

struct job *
row_to_job(sqlite3_stmt *s, bool full)
{
	struct job *j = job_new();
	struct job_brief b;
	int64_t id;

	brief_read(s, brief_in_job, &b);
	id = b.id;
#define INT(f, lo, hi)	col_int(s, C_##f, lo, hi, id, #f)
	j->id = id;
	j->task = b.task;
	j->attempt = (int)INT(attempt, 0, INT32_MAX);
	j->name = dup_or_null(b.name);
	j->owner = dup_or_null(b.owner);
	j->uid = (uint32_t)INT(uid, 0, UINT32_MAX);
	j->gid = (uint32_t)INT(gid, 0, UINT32_MAX);
	text_to_groups(j, (const char *)sqlite3_column_text(s, C_sup_groups),
	    sqlite3_column_bytes(s, C_sup_groups));
	j->queue = dup_or_null(b.queue);
	j->prio = b.prio;
	j->argv = col_strv(s, C_argv, id, "argv");
	if (j->argv && !j->argv[0]) {
		log_warnx("store: job %lld: empty argv; ignored", (long long)id);
		strv_free(j->argv);
		j->argv = NULL;
	}
	j->args = col_strv(s, C_args, id, "args");
	j->shell = col_str(s, C_shell);
	j->cwd = col_str(s, C_cwd);
	j->home = col_str(s, C_home);
	j->out_path = col_str(s, C_out_path);
	j->err_path = col_str(s, C_err_path);
	j->in_path = col_str(s, C_in_path);
	j->join = sqlite3_column_int64(s, C_join_out) != 0;
	j->submit_host = col_str(s, C_submit_host);
	j->submit_time = b.submit_time;
	j->start_time = b.start_time;
	j->end_time = INT(end_time, 0, INT64_MAX);
	j->state = b.state;
	j->hold = b.hold;
	j->error = b.error;
	j->delete_req = b.delete_req;
	j->host = dup_or_null(b.host);
	j->pid = (int)INT(pid, 0, INT32_MAX);
	j->exit_status = (int)INT(exit_status, -1, 65535);
	j->signal = (int)INT(signal, 0, 128);
	j->reason = col_str(s, C_reason);
	j->utime = sqlite3_column_double(s, C_utime);
	j->stime = sqlite3_column_double(s, C_stime);
	j->maxrss_kb = INT(maxrss_kb, 0, INT64_MAX);
	text_to_req(j, &j->req, (const char *)sqlite3_column_text(s, C_req));
	text_to_req(j, &j->soft, (const char *)sqlite3_column_text(s, C_soft_req));
	j->rerun = (int)INT(rerun, -1, 1);
	j->pe = col_str(s, C_pe);
	j->slots = b.slots;
	j->slots_min = (int)INT(slots_min, 0, JOB_MAX_SLOTS);
	j->t_first = b.t_first;
	j->t_last = b.t_last;
	j->t_step = b.t_step;
	j->tc = (int)INT(tc, 0, JOB_MAX_TASKS);
	j->suspended = b.suspended;
	j->begin_time = INT(begin_time, 0, INT64_MAX);
	j->mail = (unsigned)INT(mail, 0, MAIL_BEGIN | MAIL_END | MAIL_ABORT | MAIL_SUSPEND);
	j->mail_to = col_str(s, C_mail_to);
	j->qrsh = col_str(s, C_qrsh);
	j->project = col_str(s, C_project);
	j->account = col_str(s, C_account);
	j->context = col_strv(s, C_context, id, "context");
	j->reserve = sqlite3_column_int64(s, C_reserve) != 0;
	j->js = (int)INT(js, 0, INT32_MAX);
	j->binding = col_str(s, C_binding);
	j->noshell = sqlite3_column_int64(s, C_noshell) != 0;
	j->stage_in = col_json(s, C_stage_in);
	j->stage_out = col_strv(s, C_stage_out, id, "stage_out");
#undef INT
	if (full) {
		const void *body;
		int n;

		j->env = col_strv(s, C_env, id, "env");
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

