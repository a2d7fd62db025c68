/* control.c: libdrmaa's drmaa_control (suspend, resume, hold, release, terminate) and drmaa_job_ps, through qdel's, qhold's and qstat's requests. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "common/msg.h"
#include "common/msg_req.h"
#include "common/msg_rows.h"
#include "client/client.h"
#include "drmaa/drmaa_int.h"

/* Sends req (taken over); the reply, or NULL with the error in *rc. */
static json_t *
call(json_t *req, int *rc, char *diag, size_t dn)
{
	const char *why = NULL;
	json_t *rep = client_call(req, CLIENT_REPLY_MS, &why);

	json_decref(req);
	if (!rep)
		*rc = drmaa_fail(diag, dn, DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE, "%s", why);
	return rep;
}

/* The error of a refused action on a job. */
static int
control_error(int action, const char *message, char *diag, size_t dn)
{
	static const int codes[] = {
		[DRMAA_CONTROL_SUSPEND] = DRMAA_ERRNO_SUSPEND_INCONSISTENT_STATE,
		[DRMAA_CONTROL_RESUME] = DRMAA_ERRNO_RESUME_INCONSISTENT_STATE,
		[DRMAA_CONTROL_HOLD] = DRMAA_ERRNO_HOLD_INCONSISTENT_STATE,
		[DRMAA_CONTROL_RELEASE] = DRMAA_ERRNO_RELEASE_INCONSISTENT_STATE,
		[DRMAA_CONTROL_TERMINATE] = DRMAA_ERRNO_INVALID_JOB,
	};
	int code = strstr(message, "does not exist") ? DRMAA_ERRNO_INVALID_JOB :
	    strstr(message, "not allowed") || strstr(message, "permission") ? DRMAA_ERRNO_AUTH_FAILURE :
	    codes[action];
	return drmaa_fail(diag, dn, code, "%s", message);
}

/* One request of the action for jobs (ids) and tasks. */
static int
control_send(int action, json_t *ids, json_t *tasks, char *diag, size_t dn)
{
	static const enum msg_type types[] = {
		[DRMAA_CONTROL_SUSPEND] = MSG_SUSPEND, [DRMAA_CONTROL_RESUME] = MSG_UNSUSPEND,
		[DRMAA_CONTROL_HOLD] = MSG_HOLD, [DRMAA_CONTROL_RELEASE] = MSG_RELEASE,
		[DRMAA_CONTROL_TERMINATE] = MSG_DELETE,
	};
	struct msg_reply r;
	struct msg_result res;
	struct msg_results results;
	char err[256];
	json_t *rep, *v;
	size_t i;
	int rc = DRMAA_ERRNO_SUCCESS;

	if (json_array_size(ids) == 0)
		return DRMAA_ERRNO_SUCCESS;
	rep = call(msg_jobsel_pack(&(struct msg_jobsel){ .type = types[action], .jobs = ids,
	    .tasks = json_object_size(tasks) ? tasks : NULL }), &rc, diag, dn);
	if (!rep)
		return rc;
	if (msg_reply_unpack(rep, &r, err, sizeof err) < 0 || !r.ok)
		rc = control_error(action, r.message ? r.message : err, diag, dn);
	else
		json_array_foreach((msg_results_unpack(rep, &results), results.results), i, v) {
			msg_result_unpack(v, &res);
			if (!res.ok && rc == DRMAA_ERRNO_SUCCESS)
				rc = control_error(action, res.message ? res.message : "refused", diag, dn);
		}
	json_decref(rep);
	return rc;
}

/* Adds j to the request: a job's id, or a task (Grid Engine's "JOB.TASK")
 * to the request's tasks, which the master holds, releases, suspends,
 * resumes or terminates alone. */
static int
control_add(const struct drmaa_jobid *j, json_t *ids, json_t *tasks)
{
	char key[24], range[16];
	json_t *v;
	size_t i;

	json_array_foreach(ids, i, v)
		if (json_integer_value(v) == j->id)
			break;
	if (i == json_array_size(ids))
		json_array_append_new(ids, json_integer(j->id));
	if (j->task > 0) {
		snprintf(key, sizeof key, "%lld", (long long)j->id);
		snprintf(range, sizeof range, "%d", j->task);
		/* More than one task of one array: each its own request. */
		if (json_object_get(tasks, key))
			return DRMAA_NO_ERRNO;
		json_object_set_new(tasks, key, json_string(range));
	}
	return DRMAA_ERRNO_SUCCESS;
}

/* SESSION_ALL: every job of the session.  A bulk job is held, released,
 * suspended or resumed as a whole (its every task, one request); its
 * tasks are terminated one by one, a request at a time where they share
 * an array, so that none of another session is touched. */
static int
control_all(int action, char *diag, size_t dn)
{
	size_t n, left;
	struct drmaa_jobid *all = drmaa_session_jobs(&n);
	bool *sent = xcalloc(n + 1, sizeof *sent);
	int rc = DRMAA_ERRNO_SUCCESS;

	for (left = n; left > 0 && rc == DRMAA_ERRNO_SUCCESS;) {
		json_t *ids = json_array(), *tasks = json_object();
		for (size_t i = 0; i < n; i++) {
			struct drmaa_jobid j = all[i];
			int r;
			if (sent[i])
				continue;
			if (action != DRMAA_CONTROL_TERMINATE)
				j.task = 0;
			if ((r = control_add(&j, ids, tasks)) == DRMAA_NO_ERRNO)
				continue;
			sent[i] = true;
			left--;
		}
		rc = control_send(action, ids, tasks, diag, dn);
		json_decref(ids);
		json_decref(tasks);
	}
	free(sent);
	free(all);
	return rc;
}

DRMAA_API int
drmaa_control(const char *jobid, int action, char *error_diagnosis, size_t error_diag_len)
{
	struct drmaa_jobid j;
	json_t *ids, *tasks;
	int rc;

	if ((rc = drmaa_check(action >= DRMAA_CONTROL_SUSPEND && action <= DRMAA_CONTROL_TERMINATE && jobid,
	    "action must be one of DRMAA_CONTROL_*, and jobid not NULL", error_diagnosis, error_diag_len)) !=
	    DRMAA_ERRNO_SUCCESS)
		return rc;
	if (strcmp(jobid, DRMAA_JOB_IDS_SESSION_ALL) == 0)
		return control_all(action, error_diagnosis, error_diag_len);
	if (drmaa_jobid_parse(jobid, &j) < 0)
		return drmaa_fail(error_diagnosis, error_diag_len, DRMAA_ERRNO_INVALID_JOB,
		    "\"%s\" is not a job id", jobid);
	ids = json_array();
	tasks = json_object();
	if ((rc = control_add(&j, ids, tasks)) == DRMAA_ERRNO_SUCCESS)
		rc = control_send(action, ids, tasks, error_diagnosis, error_diag_len);
	json_decref(ids);
	json_decref(tasks);
	return rc;
}

/* DRMAA's state of a job or task: its state, holds, and letters. */
static int
ps_of(const char *state, unsigned hold, const char *letters)
{
	bool user, sys;

	if (!state)
		return DRMAA_PS_UNDETERMINED;
	if (strcmp(state, "pending") == 0) {
		user = hold & HOLD_USER;
		/* A dependency, a start time to come, or an error (Eqw). */
		sys = (hold & (HOLD_DEP | HOLD_TIME)) || (letters && strchr(letters, 'E'));
		return user && sys ? DRMAA_PS_USER_SYSTEM_ON_HOLD : user ? DRMAA_PS_USER_ON_HOLD :
		    sys ? DRMAA_PS_SYSTEM_ON_HOLD : DRMAA_PS_QUEUED_ACTIVE;
	}
	if (strcmp(state, "dispatched") == 0 || strcmp(state, "running") == 0) {
		user = letters && strchr(letters, 's');
		sys = letters && strchr(letters, 'T');
		return user && sys ? DRMAA_PS_USER_SYSTEM_SUSPENDED : user ? DRMAA_PS_USER_SUSPENDED :
		    sys ? DRMAA_PS_SYSTEM_SUSPENDED : DRMAA_PS_RUNNING;
	}
	return strcmp(state, "done") == 0 ? DRMAA_PS_DONE : DRMAA_PS_FAILED;
}

/* The state of task t of the array p (a row of a STATUS reply's job
 * objects): its row among the job's "tasks", or, pending with the array,
 * the array's holds. */
static int
ps_of_task(const struct msg_job_row *p, int t)
{
	struct msg_job_detail d;
	const json_t *v;
	size_t i;

	msg_job_detail_unpack(p->obj, &d);
	json_array_foreach(d.tasks, i, v) {
		struct msg_task_row r;
		msg_task_row_unpack(v, &r);
		if (r.task == t)
				/* A task's row of its own while pending: its own hold. */
			return ps_of(r.state, (r.state_letters && strchr(r.state_letters, 'h') ? HOLD_USER : 0) |
			    ((unsigned)p->hold & (HOLD_DEP | HOLD_TIME)), r.state_letters);
	}
	if (p->state && strcmp(p->state, "pending") != 0 && strcmp(p->state, "running") != 0 &&
	    strcmp(p->state, "dispatched") != 0)
		return DRMAA_PS_FAILED;
	return ps_of("pending", (unsigned)p->hold, "qw");
}

DRMAA_API int
drmaa_job_ps(const char *job_id, int *remote_ps, char *error_diagnosis, size_t error_diag_len)
{
	struct drmaa_jobid j;
	struct msg_job_row *rows;
	size_t n = 0;
	json_t *rep;
	int rc;

	if ((rc = drmaa_check(job_id && remote_ps, "job_id and remote_ps must not be NULL",
	    error_diagnosis, error_diag_len)) != DRMAA_ERRNO_SUCCESS)
		return rc;
	if (drmaa_jobid_parse(job_id, &j) < 0)
		return drmaa_fail(error_diagnosis, error_diag_len, DRMAA_ERRNO_INVALID_JOB,
		    "\"%s\" is not a job id", job_id);
	if ((rep = call(msg_status_pack_one(j.id), &rc, error_diagnosis, error_diag_len)) == NULL)
		return rc;
	rows = msg_job_objects_unpack(rep, &n);
	if (n == 0 || rows[0].id != j.id ||
	    (j.task > 0 && (rows[0].t_first == 0 || j.task < rows[0].t_first || j.task > rows[0].t_last)))
		rc = drmaa_fail(error_diagnosis, error_diag_len, DRMAA_ERRNO_INVALID_JOB,
		    "job %s does not exist", job_id);
	else
		*remote_ps = j.task > 0 ? ps_of_task(&rows[0], j.task) :
		    ps_of(rows[0].state, (unsigned)rows[0].hold, rows[0].state_letters);
	free(rows);
	json_decref(rep);
	return rc;
}
