/* submit.c: libdrmaa's submission: a job template turned into qsub's options (the native specification parsed by qsub's own parser), then a SUBMIT. */
#include "config.h"

#include <assert.h>

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "common/msg.h"
#include "common/msg_req.h"
#include "client/client.h"
#include "drmaa/drmaa_int.h"

extern char **environ;

/* The submitter's home directory: $drmaa_hd_ph$ in a working directory. */
static const char *
home_dir(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;

	if (h && *h)
		return h;
	pw = getpwuid(getuid());
	return pw ? pw->pw_dir : "/";
}

/* s with each placeholder replaced by its value (NULL: s is refused,
 * *bad names the placeholder). */
static char *
expand(const char *s, const char *hd, const char *wd, const char *incr, const char **bad)
{
	const struct str_var ph[] = {
		{ DRMAA_PLACEHOLDER_HD, hd }, { DRMAA_PLACEHOLDER_WD, wd }, { DRMAA_PLACEHOLDER_INCR, incr },
	};

	return str_expand(s, ph, sizeof ph / sizeof ph[0], bad);
}

/* A DRMAA path, [hostname]:path: the path, placeholders expanded into
 * the pseudo variables of qsub -o ($HOME, $TASK_ID). */
static int
set_path(char **dst, const char *v, const char *wd, bool bulk, char *diag, size_t dn)
{
	const char *colon = strchr(v, ':'), *bad = NULL;
	char *p = expand(colon ? colon + 1 : v, "$HOME", wd, bulk ? "$TASK_ID" : NULL, &bad);

	if (!p)
		return drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
		    "%s is only for bulk jobs", bad);
	free(*dst);
	*dst = p;
	return DRMAA_ERRNO_SUCCESS;
}

/* The command: a program run as it is (-b y, as Grid Engine's library
 * does), or with "-b n" in the native specification, a script read here. */
static int
apply_command(struct qsub_opts *o, const drmaa_job_template_t *jt, char **script, char *diag, size_t dn)
{
	const char *cmd = jt->a[DA_REMOTE_COMMAND], *why = NULL;
	size_t n = jt->v[DV_ARGV] ? strv_len(jt->v[DV_ARGV]) : 0, len;

	if (!cmd || !*cmd)
		return drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ARGUMENT, "drmaa_remote_command is not set");
	strv_free(o->operands);
	o->operands = xcalloc(n + 2, sizeof *o->operands);
	o->operands[0] = xstrdup(cmd);
	for (size_t k = 0; k < n; k++)
		o->operands[k + 1] = xstrdup(jt->v[DV_ARGV][k]);
	if (o->binary == 0) {
		if ((*script = read_file(cmd, JOB_MAX_SCRIPT, &len, &why)) == NULL)
			return drmaa_fail(diag, dn, DRMAA_ERRNO_DENIED_BY_DRM,
			    "cannot read the script %s: %s", cmd, why);
	} else
		o->binary = 1;
	return DRMAA_ERRNO_SUCCESS;
}

/* Adds -l KEY=SECONDS. */
static void
add_limit(struct qsub_opts *o, const char *key, int64_t secs)
{
	char buf[64], err[256];

	snprintf(buf, sizeof buf, "%s=%lld", key, (long long)secs);
	if (req_parse(&o->req, buf, err, sizeof err) < 0)
		assert(!"a limit in seconds is a valid request");
}

/* The time limits: wall clock (h_rt, s_rt), CPU (h_cpu), and a deadline,
 * the job's hard wall clock limit from now. */
static int
apply_limits(struct qsub_opts *o, const drmaa_job_template_t *jt, char *diag, size_t dn)
{
	int64_t s;

	if (jt->a[DA_WCT_HLIMIT] && parse_duration(jt->a[DA_WCT_HLIMIT], &s) == 0)
		add_limit(o, "h_rt", s);
	if (jt->a[DA_WCT_SLIMIT] && parse_duration(jt->a[DA_WCT_SLIMIT], &s) == 0)
		add_limit(o, "s_rt", s);
	if (jt->a[DA_DURATION_HLIMIT] && parse_duration(jt->a[DA_DURATION_HLIMIT], &s) == 0)
		add_limit(o, "h_cpu", s);
	if (jt->a[DA_DEADLINE_TIME]) {
		time_t now = time(NULL);
		int64_t d = drmaa_parse_time(jt->a[DA_DEADLINE_TIME], now) - now;
		if (d <= 0)
			return drmaa_fail(diag, dn, DRMAA_ERRNO_DENIED_BY_DRM,
			    "the deadline %s has passed", jt->a[DA_DEADLINE_TIME]);
		if (!o->req.h_rt || o->req.h_rt > d)
			add_limit(o, "h_rt", d);
	}
	if (o->req.s_rt && o->req.h_rt && o->req.s_rt > o->req.h_rt)
		return drmaa_fail(diag, dn, DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES,
		    "the soft wall clock limit is above the hard one");
	return DRMAA_ERRNO_SUCCESS;
}

/* The template's attributes over the native specification's options. */
static int
apply_template(struct qsub_opts *o, const drmaa_job_template_t *jt, bool bulk, char *diag, size_t dn)
{
	const char *bad = NULL;
	const char *const *a = (const char *const *)jt->a;
	int rc;

	if (a[DA_WD]) {
		char *wd = expand(a[DA_WD], home_dir(), NULL, NULL, &bad);
		if (!wd)
			return drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
			    "%s cannot be in drmaa_wd: nowq gives a bulk job one working directory", bad);
		free(o->wd);
		o->wd = wd;
		o->use_cwd = false;
	}
	if (a[DA_JS_STATE])
		o->hold = strcmp(a[DA_JS_STATE], DRMAA_SUBMISSION_STATE_HOLD) == 0 ? 1 : QO_UNSET;
	if (a[DA_JOB_NAME] && *a[DA_JOB_NAME]) {
		free(o->name);
		o->name = xstrdup(a[DA_JOB_NAME]);
	}
	{
		const char *wd = o->wd ? o->wd : o->use_cwd ? "." : "$HOME";
		if (a[DA_OUTPUT_PATH] && (rc = set_path(&o->out_path, a[DA_OUTPUT_PATH], wd, bulk, diag, dn)))
			return rc;
		if (a[DA_ERROR_PATH] && (rc = set_path(&o->err_path, a[DA_ERROR_PATH], wd, bulk, diag, dn)))
			return rc;
		if (a[DA_INPUT_PATH] && (rc = set_path(&o->in_path, a[DA_INPUT_PATH], wd, bulk, diag, dn)))
			return rc;
	}
	if (a[DA_JOIN_FILES])
		o->join = a[DA_JOIN_FILES][0] == '1' || a[DA_JOIN_FILES][0] == 'y';
	if (a[DA_START_TIME])
		o->begin_time = drmaa_parse_time(a[DA_START_TIME], time(NULL)) * 1000;
	if (jt->v[DV_EMAIL] && jt->v[DV_EMAIL][0]) {
		size_t k = 0, len = 1;
		for (k = 0; jt->v[DV_EMAIL][k]; k++)
			len += strlen(jt->v[DV_EMAIL][k]) + 1;
		free(o->mail_to);
		o->mail_to = xcalloc(1, len);
		for (k = 0; jt->v[DV_EMAIL][k]; k++) {
			if (k)
				strcat(o->mail_to, ",");
			strcat(o->mail_to, jt->v[DV_EMAIL][k]);
		}
	}
	if (a[DA_BLOCK_EMAIL] && (a[DA_BLOCK_EMAIL][0] == '1' || a[DA_BLOCK_EMAIL][0] == 'y'))
		o->mail = 0;
	if (jt->v[DV_ENV]) {
		size_t n = strv_len(o->vars), m = strv_len(jt->v[DV_ENV]);
		o->vars = xrealloc(o->vars, (n + m + 1) * sizeof *o->vars);
		for (size_t k = 0; k < m; k++)
			o->vars[n + k] = xstrdup(jt->v[DV_ENV][k]);
		o->vars[n + m] = NULL;
	}
	return apply_limits(o, jt, diag, dn);
}

/* drmaa_transfer_files' i: the input file, relative to the session's
 * current directory, is staged in with the job (--stage-in) and the job,
 * which runs in a fresh working directory holding it, reads it under the
 * same relative name.  Every task of a bulk job gets the same inputs. */
static int
apply_transfer_in(struct qsub_opts *o, char *diag, size_t dn)
{
	const char *p = o->in_path, *why = NULL;

	while (strncmp(p, "./", 2) == 0)
		p += 2;
	if (strstr(p, "$TASK_ID"))
		return drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
		    "drmaa_transfer_files i: every task of a bulk job is sent the same input, so "
		    "drmaa_input_path cannot hold %s", DRMAA_PLACEHOLDER_INCR);
	if (!stage_path_ok(p, &why))
		return drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
		    "drmaa_transfer_files i: %s \"%s\" cannot be sent: %s (a path relative to the "
		    "current directory can)", DRMAA_INPUT_PATH, o->in_path, why);
	strv_push(&o->stage_in, xstrdup(p));
	return DRMAA_ERRNO_SUCCESS;
}

/* drmaa_transfer_files' o and e: the job's output and error files are
 * staged back (doc/staging.md): each path, relative to the working
 * directory the job gets on its host, becomes a --stage-out pattern
 * ($TASK_ID a glob: each task's own file), and drmaa_wait brings it back
 * under the same name into the session's current directory. */
static int
apply_transfer(struct qsub_opts *o, const drmaa_job_template_t *jt, char *diag, size_t dn)
{
	const char *letters = jt->a[DA_TRANSFER_FILES];
	const struct { char letter; const char *path; const char *attr; } f[] = {
		{ 'o', o->out_path, DRMAA_OUTPUT_PATH },
		{ 'e', o->join ? NULL : o->err_path, DRMAA_ERROR_PATH },
	};
	int rc;

	if (letters && strchr(letters, 'i') && o->in_path && *o->in_path &&
	    (rc = apply_transfer_in(o, diag, dn)) != DRMAA_ERRNO_SUCCESS)
		return rc;
	for (size_t i = 0; letters && i < sizeof f / sizeof f[0]; i++) {
		const char *p = f[i].path, *why = NULL;
		char *pat, *t;

		if (!strchr(letters, f[i].letter) || !p || !*p)
			continue;
		while (strncmp(p, "./", 2) == 0)
			p += 2;
		pat = xstrdup(p);
		while ((t = strstr(pat, "$TASK_ID")) != NULL) {
			*t = '*';
			memmove(t + 1, t + 8, strlen(t + 8) + 1);
		}
		if (!stage_pattern_ok(pat, &why)) {
			free(pat);
			return drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
			    "drmaa_transfer_files %c: %s \"%s\" cannot come back: %s (a path relative to "
			    "the working directory can)", f[i].letter, f[i].attr, p, why);
		}
		strv_push(&o->stage_out, pat);
	}
	return DRMAA_ERRNO_SUCCESS;
}

/* Sends the SUBMIT; the job's id, or the error. */
static int
send_submit(json_t *job, const struct qsub_opts *o, int64_t *id, char *diag, size_t dn)
{
	char key[CLIENT_KEY_LEN + 1];
	const char *why = NULL;
	json_t *deps = o->deps ? qsub_deps_json(o) : NULL, *req, *rep;
	struct msg_submitted done;
	struct msg_reply r;
	char err[128];
	int rc = DRMAA_ERRNO_SUCCESS;

	if (client_submit_key(key, &why) < 0) {
		json_decref(deps);
		return drmaa_fail(diag, dn, DRMAA_ERRNO_INTERNAL_ERROR, "%s", why);
	}
	req = msg_submit_pack(&(struct msg_submit){ .job = job, .verify = o->verify != 'n',
	    .deps = deps, .key = key });
	json_decref(deps);
	rep = client_call(req, CLIENT_REPLY_MS, &why);
	json_decref(req);
	if (!rep)
		return drmaa_fail(diag, dn, DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE, "%s", why);
	if (msg_reply_unpack(rep, &r, err, sizeof err) < 0 || !r.ok)
		rc = drmaa_fail(diag, dn, DRMAA_ERRNO_DENIED_BY_DRM, "%s", client_reply_message(rep));
	else {
		msg_submitted_unpack(rep, &done);
		*id = done.id;
	}
	json_decref(rep);
	return rc;
}

int
drmaa_submit(const drmaa_job_template_t *jt, int first, int last, int step, int64_t *id,
    char *diag, size_t dn)
{
	struct qsub_opts o;
	struct qsub_env env;
	char cwd[PATH_MAX], err[512], *script = NULL, **w = NULL;
	const char *spec = jt->a[DA_NATIVE_SPECIFICATION];
	json_t *job;
	int rc;

	qsub_opts_init(&o);
	w = spec ? qsub_split_words(spec) : NULL;
	if (w && qsub_opts_parse_argv(&o, (int)strv_len(w), w) < 0) {
		rc = drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, "native specification: %s", o.err);
		goto out;
	}
	if (o.cron || o.t_first) {
		rc = drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
		    "native specification: %s is not for DRMAA jobs (use drmaa_run_bulk_jobs)",
		    o.cron ? "--cron" : "-t");
		goto out;
	}
	if ((rc = apply_command(&o, jt, &script, diag, dn)) != DRMAA_ERRNO_SUCCESS ||
	    (rc = apply_template(&o, jt, first > 0, diag, dn)) != DRMAA_ERRNO_SUCCESS ||
	    (rc = apply_transfer(&o, jt, diag, dn)) != DRMAA_ERRNO_SUCCESS)
		goto out;
	if (first > 0) {
		o.t_first = first;
		o.t_last = last;
		o.t_step = step;
	}
	if (!getcwd(cwd, sizeof cwd)) {
		rc = drmaa_fail(diag, dn, DRMAA_ERRNO_INTERNAL_ERROR, "cannot tell the current directory: %s",
		    strerror(errno));
		goto out;
	}
	env = (struct qsub_env){ .envp = environ, .cwd = cwd, .host = my_hostname(), .user = client_user() };
	if ((job = qsub_job_json(&o, script, &env, err, sizeof err)) == NULL) {
		rc = drmaa_fail(diag, dn, DRMAA_ERRNO_DENIED_BY_DRM, "%s", err);
		goto out;
	}
	/* Inputs go ahead of the SUBMIT, as qsub --stage-in sends them. */
	if (o.stage_in) {
		json_t *in = stage_inputs_send(o.stage_in, err, sizeof err);
		if (!in) {
			json_decref(job);
			rc = drmaa_fail(diag, dn, DRMAA_ERRNO_DENIED_BY_DRM, "%s", err);
			goto out;
		}
		json_object_set_new(job, "stage_in", in);
	}
	rc = send_submit(job, &o, id, diag, dn);
	json_decref(job);
	if (rc == DRMAA_ERRNO_SUCCESS && o.stage_out)
		drmaa_session_stage(*id);
out:
	free(script);
	strv_free(w);
	qsub_opts_free(&o);
	return rc;
}

DRMAA_API int
drmaa_run_job(char *job_id, size_t job_id_len, const drmaa_job_template_t *jt, char *error_diagnosis,
    size_t error_diag_len)
{
	struct drmaa_jobid j = { 0 };
	char buf[32];
	int rc;

	if ((rc = drmaa_check(jt && job_id, "job_id and jt must not be NULL", error_diagnosis,
	    error_diag_len)) != DRMAA_ERRNO_SUCCESS)
		return rc;
	if ((rc = drmaa_submit(jt, 0, 0, 0, &j.id, error_diagnosis, error_diag_len)) !=
	    DRMAA_ERRNO_SUCCESS)
		return rc;
	drmaa_session_add(&j);
	drmaa_jobid_format(&j, buf, sizeof buf);
	return drmaa_copy(job_id, job_id_len, buf, error_diagnosis, error_diag_len);
}

DRMAA_API int
drmaa_run_bulk_jobs(drmaa_job_ids_t **jobids, const drmaa_job_template_t *jt, int start, int end,
    int incr, char *error_diagnosis, size_t error_diag_len)
{
	struct drmaa_jobid j = { 0 };
	char buf[48];
	int rc;

	if ((rc = drmaa_check(jt && jobids, "jobids and jt must not be NULL", error_diagnosis,
	    error_diag_len)) != DRMAA_ERRNO_SUCCESS)
		return rc;
	if (start < 1 || end < start || incr < 1)
		return drmaa_fail(error_diagnosis, error_diag_len, DRMAA_ERRNO_INVALID_ARGUMENT,
		    "a bulk job's range needs 1 <= start <= end and incr >= 1, not %d-%d:%d",
		    start, end, incr);
	if ((rc = drmaa_submit(jt, start, end, incr, &j.id, error_diagnosis, error_diag_len)) !=
	    DRMAA_ERRNO_SUCCESS)
		return rc;
	*jobids = xcalloc(1, sizeof **jobids);
	for (int t = start; t <= end && t > 0; t += incr) {
		j.task = t;
		drmaa_session_add(&j);
		drmaa_jobid_format(&j, buf, sizeof buf);
		drmaa_list_add(&(*jobids)->l, buf);
		if (t > INT32_MAX - incr)
			break;
	}
	return DRMAA_ERRNO_SUCCESS;
}
