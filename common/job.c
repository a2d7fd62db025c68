/* job.c: the job record: allocation, state letters, and its JSON form checked field by field. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

struct job *
job_new(void)
{
	struct job *j = xcalloc(1, sizeof *j);
	j->state = JS_PENDING;
	j->slots = 1;
	j->rerun = -1;
	return j;
}

/* Frees the members, zeroes the struct. */
static void
job_clear(struct job *j)
{
	free(j->name);
	free(j->owner);
	free(j->groups);
	free(j->queue);
	free(j->script);
	strv_free(j->argv);
	strv_free(j->args);
	free(j->shell);
	free(j->cwd);
	free(j->home);
	free(j->out_path);
	free(j->err_path);
	free(j->in_path);
	strv_free(j->env);
	free(j->submit_host);
	free(j->host);
	free(j->reason);
	req_clear(&j->req);
	free(j->pe);
	free(j->mail_to);
	free(j->qrsh);
	req_clear(&j->soft);
	free(j->project);
	free(j->account);
	strv_free(j->context);
	free(j->binding);
	json_decref(j->stage_in);
	strv_free(j->stage_out);
	json_decref(j->staged_out);
	memset(j, 0, sizeof *j);
}

void
job_fresh(struct job *j, int64_t now)
{
	j->task = 0;
	j->attempt = 0;
	j->state = JS_PENDING;
	j->hold &= HOLD_USER;
	j->error = j->delete_req = false;
	j->suspended = 0;
	free(j->host);
	j->host = NULL;
	free(j->reason);
	j->reason = NULL;
	j->submit_time = now;
	j->start_time = j->end_time = 0;
	j->pid = j->exit_status = j->signal = 0;
	j->utime = j->stime = 0;
	j->maxrss_kb = 0;
}

void
job_free(struct job *j)
{
	if (!j)
		return;
	job_clear(j);
	free(j);
}

static const char *state_names[] = {
	[JS_PENDING] = "pending", [JS_DISPATCHED] = "transferring", [JS_RUNNING] = "running",
	[JS_DONE] = "done", [JS_FAILED] = "failed", [JS_DELETED] = "deleted",
};

const char *
job_state_name(enum job_state s)
{
	assert((unsigned)s <= JS_DELETED);
	return state_names[s];
}

static int
job_state_parse(const char *s)
{
	for (int i = 0; i <= JS_DELETED; i++)
		if (strcmp(s, state_names[i]) == 0)
			return i;
	return -1;
}

void
job_brief_of(const struct job *j, struct job_brief *b)
{
	*b = (struct job_brief){ .id = j->id, .submit_time = j->submit_time,
	    .start_time = j->start_time, .task = j->task, .prio = j->prio, .slots = j->slots,
	    .t_first = j->t_first, .t_last = j->t_last, .t_step = j->t_step, .state = j->state,
	    .hold = j->hold, .suspended = j->suspended, .error = j->error,
	    .delete_req = j->delete_req, .name = j->name, .owner = j->owner, .queue = j->queue,
	    .host = j->host };
}

const char *
job_state_letters(const struct job *j)
{
	struct job_brief b;

	job_brief_of(j, &b);
	return job_brief_letters(&b);
}

/* Grid Engine's state column: tools read column 5, so keep its letters. */
const char *
job_brief_letters(const struct job_brief *j)
{
	switch (j->state) {
	case JS_PENDING:
		/* A start time still to come is no hold anybody placed: Grid
		 * Engine shows such a job as qw. */
		if (j->error)
			return j->hold & ~HOLD_TIME ? "hEqw" : "Eqw";
		return j->hold & ~HOLD_TIME ? "hqw" : "qw";
	case JS_DISPATCHED:
		return j->delete_req ? "dt" : "t";
	case JS_RUNNING:
		/* A stopped job is no longer r; s before T, as Grid Engine. */
		switch (j->suspended & (SUSP_USER | SUSP_HOST)) {
		case SUSP_USER:
			return j->delete_req ? "ds" : "s";
		case SUSP_HOST:
			return j->delete_req ? "dT" : "T";
		case SUSP_USER | SUSP_HOST:
			return j->delete_req ? "dsT" : "sT";
		}
		return j->delete_req ? "dr" : "r";
	default:
		return "z";
	}
}

static json_t *
strv_to_json(char *const *v)
{
	json_t *a = json_array();
	for (size_t i = 0; v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static void
set_str(json_t *o, const char *k, const char *v)
{
	if (v)
		json_object_set_new(o, k, json_string(v));
}

json_t *
job_to_json(const struct job *j)
{
	json_t *o = json_object();
	json_t *g = json_array();

	json_object_set_new(o, "id", json_integer(j->id));
	json_object_set_new(o, "task", json_integer(j->task));
	json_object_set_new(o, "attempt", json_integer(j->attempt));
	set_str(o, "name", j->name);
	set_str(o, "owner", j->owner);
	json_object_set_new(o, "uid", json_integer(j->uid));
	json_object_set_new(o, "gid", json_integer(j->gid));
	for (int i = 0; i < j->ngroups; i++)
		json_array_append_new(g, json_integer(j->groups[i]));
	json_object_set_new(o, "groups", g);
	set_str(o, "queue", j->queue);
	json_object_set_new(o, "prio", json_integer(j->prio));
	set_str(o, "script", j->script);
	if (j->argv)
		json_object_set_new(o, "argv", strv_to_json(j->argv));
	if (j->args)
		json_object_set_new(o, "args", strv_to_json(j->args));
	set_str(o, "shell", j->shell);
	set_str(o, "cwd", j->cwd);
	set_str(o, "home", j->home);
	set_str(o, "out", j->out_path);
	set_str(o, "err", j->err_path);
	set_str(o, "in", j->in_path);
	json_object_set_new(o, "join", json_boolean(j->join));
	json_object_set_new(o, "env", strv_to_json(j->env));
	set_str(o, "submit_host", j->submit_host);
	json_object_set_new(o, "submit_time", json_integer(j->submit_time));
	json_object_set_new(o, "start_time", json_integer(j->start_time));
	json_object_set_new(o, "end_time", json_integer(j->end_time));
	json_object_set_new(o, "state", json_string(job_state_name(j->state)));
	json_object_set_new(o, "state_letters", json_string(job_state_letters(j)));
	json_object_set_new(o, "hold", json_integer(j->hold));
	json_object_set_new(o, "error", json_boolean(j->error));
	json_object_set_new(o, "delete_req", json_boolean(j->delete_req));
	set_str(o, "host", j->host);
	json_object_set_new(o, "pid", json_integer(j->pid));
	/* A job that never ran has no exit status, not a 0 that reads as success.
	 * An array's own row never starts (its tasks do) and carries the
	 * summary of their exits, so it always has one. */
	if (j->start_time > 0 || j->exit_status != 0 || j->t_first > 0)
		json_object_set_new(o, "exit_status", json_integer(j->exit_status));
	json_object_set_new(o, "signal", json_integer(j->signal));
	set_str(o, "reason", j->reason);
	json_object_set_new(o, "utime", json_real(j->utime));
	json_object_set_new(o, "stime", json_real(j->stime));
	json_object_set_new(o, "maxrss_kb", json_integer(j->maxrss_kb));
	if (!req_empty(&j->req))
		json_object_set_new(o, "req", req_to_json(&j->req));
	json_object_set_new(o, "rerun", json_integer(j->rerun));
	set_str(o, "pe", j->pe);
	json_object_set_new(o, "slots", json_integer(j->slots));
	if (j->slots_min)
		json_object_set_new(o, "slots_min", json_integer(j->slots_min));
	if (j->t_first) {
		json_object_set_new(o, "t_first", json_integer(j->t_first));
		json_object_set_new(o, "t_last", json_integer(j->t_last));
		json_object_set_new(o, "t_step", json_integer(j->t_step));
		json_object_set_new(o, "tc", json_integer(j->tc));
	}
	if (j->suspended & SUSP_USER)
		json_object_set_new(o, "suspended", json_true());
	if (j->suspended & SUSP_HOST)
		json_object_set_new(o, "suspended_by_host", json_true());
	if (j->begin_time)
		json_object_set_new(o, "begin_time", json_integer(j->begin_time));
	if (j->mail)
		json_object_set_new(o, "mail", json_integer(j->mail));
	set_str(o, "mail_to", j->mail_to);
	set_str(o, "qrsh", j->qrsh);
	if (!req_empty(&j->soft))
		json_object_set_new(o, "soft", req_to_json(&j->soft));
	set_str(o, "project", j->project);
	set_str(o, "account", j->account);
	if (j->context)
		json_object_set_new(o, "context", strv_to_json(j->context));
	if (j->reserve)
		json_object_set_new(o, "reserve", json_true());
	if (j->js)
		json_object_set_new(o, "js", json_integer(j->js));
	set_str(o, "binding", j->binding);
	if (j->noshell)
		json_object_set_new(o, "noshell", json_true());
	if (j->stage_in)
		json_object_set_new(o, "stage_in", json_deep_copy(j->stage_in));
	if (j->stage_out)
		json_object_set_new(o, "stage_out", strv_to_json(j->stage_out));
	if (j->staged_out)
		json_object_set_new(o, "staged_out", json_deep_copy(j->staged_out));
	return o;
}

/* The sentence of a limit that needs numbers; one at a time is enough, since
 * the first problem ends the decoding. */
static __thread char job_why[256];

static const char *
job_say(const char *fmt, ...) NOWQ_ATTR_PRINTF(1, 2);

static const char *
job_say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(job_why, sizeof job_why, fmt, ap);
	va_end(ap);
	return job_why;
}

const char *
job_name_problem(const char *s)
{
	if (!s || !*s)
		return "the job name is empty";
	if (strlen(s) > JOB_MAX_NAME)
		return job_say("the job name is %zu bytes, more than the limit of %d", strlen(s), JOB_MAX_NAME);
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || strchr("/:@\\*?", *s))
			return "the job name holds a control character or one of / : @ \\ * ?";
	return NULL;
}

bool
job_valid_name(const char *s)
{
	return job_name_problem(s) == NULL;
}

const char *
job_deps_problem(size_t n)
{
	if (n <= JOB_MAX_DEPS)
		return NULL;
	return job_say("a job may wait for at most %d jobs (-hold_jid, -W depend), not %zu", JOB_MAX_DEPS, n);
}

/* Each getter fails on a present field of the wrong type or size; absent
 * fields keep their zero value. */
static int
get_str(const json_t *o, const char *k, char **dst, size_t max, const char **why)
{
	json_t *v = json_object_get(o, k);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		*why = job_say("the job's %s is not a text", k);
		return -1;
	}
	if (json_string_length(v) > max) {
		*why = job_say("the job's %s is %zu bytes, more than the limit of %zu", k,
		    json_string_length(v), max);
		return -1;
	}
	if (strlen(json_string_value(v)) != json_string_length(v)) {
		*why = job_say("the job's %s holds a NUL byte", k);
		return -1;
	}
	*dst = xstrdup(json_string_value(v));
	return 0;
}

static int
get_int(const json_t *o, const char *k, int64_t *dst, int64_t lo, int64_t hi, const char **why)
{
	json_t *v = json_object_get(o, k);
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
		*why = "a job number field is missing its type or out of range";
		return -1;
	}
	*dst = json_integer_value(v);
	return 0;
}

static int
get_bool(const json_t *o, const char *k, bool *dst, const char **why)
{
	json_t *v = json_object_get(o, k);
	if (!v)
		return 0;
	if (!json_is_boolean(v)) {
		*why = "a job flag is not true or false";
		return -1;
	}
	*dst = json_is_true(v);
	return 0;
}

/* CPU times: a number of seconds, never negative. */
static int
get_secs(const json_t *o, const char *k, double *dst, const char **why)
{
	json_t *v = json_object_get(o, k);
	if (!v)
		return 0;
	if (!json_is_number(v) || json_number_value(v) < 0) {
		*why = "a job time field is not a number of seconds";
		return -1;
	}
	*dst = json_number_value(v);
	return 0;
}

/* A list of texts; *bytes adds up their sizes (with their NULs, as execve
 * counts them). */
static int
get_strv(const json_t *o, const char *k, char ***dst, size_t maxn, size_t *bytes, const char **why)
{
	json_t *a = json_object_get(o, k), *v;
	size_t i;
	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a)) {
		*why = job_say("the job's %s is not a list", k);
		return -1;
	}
	if (json_array_size(a) > maxn) {
		*why = job_say("the job's %s has %zu entries, more than the limit of %zu", k,
		    json_array_size(a), maxn);
		return -1;
	}
	*dst = xcalloc(json_array_size(a) + 1, sizeof **dst);
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
			*why = job_say("the job's %s holds something other than a text without NUL bytes", k);
			return -1;
		}
		*bytes += json_string_length(v) + 1;
		if (*bytes > JOB_MAX_ARG_BYTES) {
			*why = job_say("the job's arguments and environment take more than the limit of %u bytes",
			    JOB_MAX_ARG_BYTES);
			return -1;
		}
		(*dst)[i] = xstrdup(json_string_value(v));
	}
	return 0;
}

/* A context entry's name: a word without '=' or ',' (Grid Engine's
 * variable names), at most JOB_MAX_NAME bytes. */
static bool
context_name_ok(const char *s, size_t n)
{
	if (n == 0 || n > JOB_MAX_NAME)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '=' || s[i] == ',' || (unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

static int
context_put(char ***ctx, const char *e, size_t namelen)
{
	size_t n = strv_len(*ctx);

	for (size_t i = 0; i < n; i++)
		if (strncmp((*ctx)[i], e, namelen) == 0 && (*ctx)[i][namelen] == '=') {
			free((*ctx)[i]);
			(*ctx)[i] = xstrdup(e);
			return 0;
		}
	if (n >= JOB_MAX_CONTEXT)
		return -1;
	*ctx = xrealloc(*ctx, (n + 2) * sizeof **ctx);
	(*ctx)[n] = xstrdup(e);
	(*ctx)[n + 1] = NULL;
	return 0;
}

static void
context_del(char **ctx, const char *name, size_t namelen)
{
	size_t w = 0;

	for (size_t i = 0; ctx && ctx[i]; i++) {
		if (strncmp(ctx[i], name, namelen) == 0 && ctx[i][namelen] == '=')
			free(ctx[i]);
		else
			ctx[w++] = ctx[i];
	}
	if (ctx)
		ctx[w] = NULL;
}

int
job_context_apply(char ***ctx, char op, const char *list, const char **why)
{
	char **v = op == 's' ? NULL : strv_dup(*ctx);
	char *copy = xstrdup(list), *tok, *save = NULL;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t n = strcspn(tok, "=");
		if (!context_name_ok(tok, n) || strlen(tok) > JOB_MAX_STRING ||
		    (op == 'd' && tok[n]) || (op != 'd' && !tok[n])) {
			*why = job_say("-%cc: \"%.40s\" is not %s", op, tok,
			    op == 'd' ? "a variable name" : "NAME=VALUE");
			goto bad;
		}
		if (op == 'd')
			context_del(v, tok, n);
		else if (context_put(&v, tok, n) < 0) {
			*why = job_say("a job's context holds at most %d variables", JOB_MAX_CONTEXT);
			goto bad;
		}
	}
	free(copy);
	strv_free(*ctx);
	*ctx = v && v[0] ? v : NULL;
	if (v && !v[0])
		strv_free(v);
	return 0;
bad:
	free(copy);
	strv_free(v);
	return -1;
}

/* --stage-in's files and --stage-out's patterns (common/stage.c checks
 * them); staged_out is what came back, the master's to fill. */
static int
get_stage(const json_t *o, struct job *j, const char **why)
{
	json_t *in = json_object_get(o, "stage_in"), *got = json_object_get(o, "staged_out");
	size_t bytes = 0;

	if (in && !json_is_null(in)) {
		if (!stage_files_ok(in, STAGE_MAX_FILES, why))
			return -1;
		j->stage_in = json_deep_copy(in);
	}
	if (got && !json_is_null(got)) {
		if (!json_is_array(got)) {
			*why = "staged_out is not a list";
			return -1;
		}
		j->staged_out = json_deep_copy(got);
	}
	if (get_strv(o, "stage_out", &j->stage_out, 256, &bytes, why) < 0)
		return -1;
	for (char **p = j->stage_out; p && *p; p++)
		if (!stage_pattern_ok(*p, why))
			return -1;
	return 0;
}

/* The job's context: NAME=VALUE entries, each checked as -ac checks them. */
static int
get_context(const json_t *o, char ***dst, const char **why)
{
	json_t *a = json_object_get(o, "context"), *v;
	size_t i;

	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a) || json_array_size(a) > JOB_MAX_CONTEXT) {
		*why = "the job's context is not a list of at most 256 NAME=VALUE entries";
		return -1;
	}
	json_array_foreach(a, i, v) {
		const char *s = json_string_value(v);
		if (!s || strlen(s) != json_string_length(v) || strlen(s) > JOB_MAX_STRING ||
		    !context_name_ok(s, strcspn(s, "=")) || !strchr(s, '=')) {
			*why = "the job's context holds an entry that is not NAME=VALUE";
			return -1;
		}
		if (context_put(dst, s, strcspn(s, "=")) < 0)
			return -1;
	}
	return 0;
}

/* What no field alone can say of a job: its tasks, its -pe range, mail
 * addresses, qrsh address, command and environment entries. */
static int
job_check(const struct job *j, const char **why)
{
	size_t i;

	if (j->t_first && (j->t_last < j->t_first || j->t_step < 1)) {
		*why = "array job tasks are not FIRST-LAST:STEP with FIRST <= LAST";
		return -1;
	}
	if (!j->t_first && (j->t_last || j->t_step || j->tc)) {
		*why = "array job fields without a first task";
		return -1;
	}
	if (j->slots_min > j->slots || (j->slots_min && !j->pe)) {
		*why = "a range of slots is MIN-MAX with MIN <= MAX, and needs -pe";
		return -1;
	}
	if (j->mail_to) {
		char *copy = xstrdup(j->mail_to), *tok, *save = NULL;
		bool ok = true;
		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			ok &= mail_valid_address(tok);
		free(copy);
		if (!ok || !*j->mail_to || strstr(j->mail_to, ",,")) {
			*why = "a mail address (-M) holds characters an address cannot";
			return -1;
		}
	}
	if (j->qrsh) {
		struct qrsh_addr a;
		if (job_qrsh_parse(j->qrsh, &a) < 0) {
			*why = "qrsh is not \"HOST PORT SECRET\"";
			return -1;
		}
		if (!j->argv) {
			*why = "a qrsh job is a command, not a script";
			return -1;
		}
	}
	if (j->argv && !j->argv[0]) {
		*why = "binary job has an empty command";
		return -1;
	}
	for (i = 0; j->env && j->env[i]; i++)
		if (!strchr(j->env[i], '=') || j->env[i][0] == '=') {
			*why = "an environment entry is not NAME=VALUE";
			return -1;
		}
	return 0;
}

struct job *
job_from_json(const json_t *o, const char **why)
{
	struct job *j = job_new();
	int64_t v;
	json_t *g, *e;
	size_t i;
	const char *st;
	size_t arg_bytes = 0;
	bool susp_user = false, susp_host = false;

	if (!json_is_object(o)) {
		*why = "job is not an object";
		goto bad;
	}
#define INT(key, field, lo, hi) do {				\
		v = j->field;					\
		if (get_int(o, key, &v, lo, hi, why) < 0)	\
			goto bad;				\
		j->field = v;					\
	} while (0)
	INT("id", id, 0, INT64_MAX);
	INT("task", task, 0, INT32_MAX);
	INT("attempt", attempt, 0, INT32_MAX);
	INT("uid", uid, 0, UINT32_MAX);
	INT("gid", gid, 0, UINT32_MAX);
	INT("prio", prio, -1023, 1024);
	INT("submit_time", submit_time, 0, INT64_MAX);
	INT("start_time", start_time, 0, INT64_MAX);
	INT("end_time", end_time, 0, INT64_MAX);
	INT("hold", hold, 0, 0xff);
	INT("pid", pid, 0, INT32_MAX);
	INT("exit_status", exit_status, -1, 65535);
	INT("signal", signal, 0, 128);
	INT("maxrss_kb", maxrss_kb, 0, INT64_MAX);
	INT("rerun", rerun, -1, 1);
	INT("slots", slots, 1, JOB_MAX_SLOTS);
	INT("slots_min", slots_min, 0, JOB_MAX_SLOTS);
	if (jint(o, "t_last", 0) > JOB_MAX_TASKS) {
		*why = job_say("array task %lld is above the limit of %d", (long long)jint(o, "t_last", 0),
		    JOB_MAX_TASKS);
		goto bad;
	}
	INT("t_first", t_first, 0, JOB_MAX_TASKS);
	INT("t_last", t_last, 0, JOB_MAX_TASKS);
	INT("t_step", t_step, 0, JOB_MAX_TASKS);
	INT("tc", tc, 0, JOB_MAX_TASKS);
	INT("begin_time", begin_time, 0, INT64_MAX);
	INT("mail", mail, 0, MAIL_BEGIN | MAIL_END | MAIL_ABORT | MAIL_SUSPEND);
	INT("js", js, 0, INT32_MAX);
#undef INT
	if (get_str(o, "name", &j->name, JOB_MAX_STRING, why) < 0 ||
	    get_str(o, "owner", &j->owner, JOB_MAX_STRING, why) < 0 ||
	    get_str(o, "queue", &j->queue, JOB_MAX_STRING, why) < 0 ||
	    get_str(o, "script", &j->script, JOB_MAX_SCRIPT, why) < 0 ||
	    get_str(o, "shell", &j->shell, JOB_MAX_STRING, why) < 0 ||
	    get_str(o, "cwd", &j->cwd, JOB_MAX_STRING, why) < 0 ||
	    get_str(o, "home", &j->home, JOB_MAX_STRING, why) < 0 ||
	    get_str(o, "out", &j->out_path, JOB_MAX_STRING, why) < 0 ||
	    get_str(o, "err", &j->err_path, JOB_MAX_STRING, why) < 0 ||
	    get_str(o, "in", &j->in_path, JOB_MAX_STRING, why) < 0 ||
	    get_str(o, "submit_host", &j->submit_host, JOB_MAX_STRING, why) < 0 ||
	    get_str(o, "host", &j->host, JOB_MAX_STRING, why) < 0 ||
	    get_str(o, "reason", &j->reason, JOB_MAX_STRING, why) < 0 ||
	    get_str(o, "pe", &j->pe, JOB_MAX_STRING, why) < 0 ||
	    get_str(o, "mail_to", &j->mail_to, JOB_MAX_STRING, why) < 0 ||
	    get_str(o, "qrsh", &j->qrsh, JOB_MAX_STRING, why) < 0 ||
	    get_str(o, "project", &j->project, JOB_MAX_NAME, why) < 0 ||
	    get_str(o, "account", &j->account, JOB_MAX_NAME, why) < 0 ||
	    get_str(o, "binding", &j->binding, JOB_MAX_NAME, why) < 0 ||
	    get_strv(o, "argv", &j->argv, JOB_MAX_ARGV, &arg_bytes, why) < 0 ||
	    get_strv(o, "args", &j->args, JOB_MAX_ARGV, &arg_bytes, why) < 0 ||
	    get_strv(o, "env", &j->env, JOB_MAX_ENV, &arg_bytes, why) < 0)
		goto bad;
	if (get_bool(o, "suspended", &susp_user, why) < 0 ||
	    get_bool(o, "suspended_by_host", &susp_host, why) < 0)
		goto bad;
	j->suspended = (susp_user ? SUSP_USER : 0) | (susp_host ? SUSP_HOST : 0);
	if (get_bool(o, "join", &j->join, why) < 0 ||
	    get_bool(o, "error", &j->error, why) < 0 ||
	    get_bool(o, "delete_req", &j->delete_req, why) < 0 ||
	    req_from_json(&j->req, json_object_get(o, "req"), why) < 0 ||
	    req_from_json(&j->soft, json_object_get(o, "soft"), why) < 0 ||
	    get_bool(o, "reserve", &j->reserve, why) < 0 ||
	    get_bool(o, "noshell", &j->noshell, why) < 0 ||
	    get_context(o, &j->context, why) < 0 ||
	    get_stage(o, j, why) < 0 ||
	    get_secs(o, "utime", &j->utime, why) < 0 ||
	    get_secs(o, "stime", &j->stime, why) < 0)
		goto bad;
	if ((e = json_object_get(o, "state")) && !json_is_string(e)) {
		*why = "job state is not a text";
		goto bad;
	}
	if ((st = jstr(o, "state"))) {
		int s = job_state_parse(st);
		if (s < 0) {
			*why = "unknown job state";
			goto bad;
		}
		j->state = (enum job_state)s;
	}
	g = json_object_get(o, "groups");
	if (g && !json_is_null(g)) {
		if (!json_is_array(g) || json_array_size(g) > 65536) {
			*why = "job groups is not a list of group ids";
			goto bad;
		}
		j->groups = xcalloc(json_array_size(g) + 1, sizeof *j->groups);
		json_array_foreach(g, i, e) {
			if (!json_is_integer(e) || json_integer_value(e) < 0 ||
			    json_integer_value(e) > UINT32_MAX) {
				*why = "job groups holds something other than a group id";
				goto bad;
			}
			j->groups[j->ngroups++] = (gid_t)json_integer_value(e);
		}
	}
	if (job_check(j, why) < 0)
		goto bad;
	return j;
bad:
	job_free(j);
	return NULL;
}

int
job_qrsh_parse(const char *s, struct qrsh_addr *a)
{
	const char *p = s, *sp;
	char *end;
	long port;
	size_t n;

	memset(a, 0, sizeof *a);
	if ((sp = strchr(p, ' ')) == NULL || (n = (size_t)(sp - p)) == 0 || n >= sizeof a->host)
		return -1;
	memcpy(a->host, p, n);
	for (size_t i = 0; i < n; i++)
		if (!((a->host[i] >= 'a' && a->host[i] <= 'z') || (a->host[i] >= 'A' && a->host[i] <= 'Z') ||
		    (a->host[i] >= '0' && a->host[i] <= '9') || strchr(".-_:", a->host[i])))
			return -1;
	p = sp + 1;
	if (*p < '1' || *p > '9')
		return -1;
	errno = 0;
	port = strtol(p, &end, 10);
	if (errno || *end != ' ' || port < 1 || port > 65535)
		return -1;
	a->port = (int)port;
	p = end + 1;
	if (strlen(p) != QRSH_SECRET_LEN || strspn(p, "0123456789abcdef") != QRSH_SECRET_LEN)
		return -1;
	memcpy(a->secret, p, QRSH_SECRET_LEN + 1);
	return 0;
}

void
job_json_public(json_t *o)
{
	if (json_object_get(o, "qrsh"))
		json_object_set_new(o, "qrsh", json_true());
}

void
job_json_private_drop(json_t *o)
{
	json_t *env = json_object_get(o, "env"), *keep = json_array(), *v;
	size_t i;

	/* The submission context (SGE_O_HOME, SGE_O_WORKDIR, ...) is what
	 * qstat -j shows of any job as sge_o_* lines; the rest is the owner's. */
	json_array_foreach(env, i, v)
		if (json_is_string(v) && strncmp(json_string_value(v), "SGE_O_", 6) == 0)
			json_array_append(keep, v);
	json_object_set_new(o, "env", keep);
	json_object_del(o, "script");
}
