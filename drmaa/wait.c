/* wait.c: libdrmaa's drmaa_wait and drmaa_synchronize on the master's WAIT (as qwait waits: no polling), the status word and the usage. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "common/msg.h"
#include "common/msg_req.h"
#include "client/client.h"
#include "drmaa/drmaa_int.h"

/* The status word drmaa_wait gives: like wait(2)'s, exit code << 8 or the
 * signal, and a bit of its own for a job that never ran. */
#define STAT_ABORTED  0x10000
#define STAT_CORE     0x80

/* One job waited for. */
struct waited {
	struct drmaa_jobid j;
	int64_t            seq;     /* of its WAIT */
	bool               ended;
	bool               purged;  /* the master no longer has it */
	struct job        *job;     /* its end, when ended and not purged */
};

/* Sends the WAITs, then a WAIT of no job: its answer (at once) comes after
 * those of jobs that have already ended, so a timeout of zero still finds
 * them.  The sentinel's seq, or -1 with the error in *rc. */
static int64_t
send_waits(struct waited *w, size_t n, int *rc, char *diag, size_t dn)
{
	const char *why = NULL;
	json_t *req;

	for (size_t i = 0; i <= n; i++) {
		req = msg_wait_pack(&(struct msg_wait){ .id = i < n ? w[i].j.id : 0,
		    .task = i < n ? w[i].j.task : 0 });
		if (client_send(req, &why) < 0) {
			json_decref(req);
			*rc = drmaa_fail(diag, dn, DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE, "%s", why);
			return -1;
		}
		if (i == n) {
			int64_t seq = msg_seq_of(req, 0);
			json_decref(req);
			return seq;
		}
		w[i].seq = msg_seq_of(req, 0);
		json_decref(req);
	}
	return -1;
}

/* Takes one WAIT reply into w; an error other than an end in *rc. */
static void
take_reply(struct waited *w, const json_t *rep, int *rc, char *diag, size_t dn)
{
	struct msg_reply r;
	struct msg_waited m;
	const char *why = NULL;
	char err[256], id[48];

	w->ended = true;
	if (msg_reply_unpack(rep, &r, err, sizeof err) < 0 || !r.ok) {
		if (r.error && strcmp(r.error, ERR_NOENT) == 0) {
			/* Submitted here and gone: purged after its end. */
			w->purged = true;
			return;
		}
		drmaa_jobid_format(&w->j, id, sizeof id);
		*rc = drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_JOB, "job %s: %s", id,
		    r.message ? r.message : err);
		return;
	}
	msg_waited_unpack(rep, &m);
	if (!m.job || (w->job = job_from_json(m.job, &why)) == NULL)
		*rc = drmaa_fail(diag, dn, DRMAA_ERRNO_INTERNAL_ERROR, "the master's reply has no job: %s",
		    why ? why : "none");
}

/* Waits for the first (any) or for every one of w to end, up to timeout
 * seconds (DRMAA_TIMEOUT_WAIT_FOREVER: no limit).  *first is the one
 * that ended first.  DRMAA_ERRNO_EXIT_TIMEOUT when time ran out. */
static int
wait_jobs(struct waited *w, size_t n, bool any, signed long timeout, size_t *first, char *diag, size_t dn)
{
	int64_t deadline = timeout < 0 ? -1 : mono_ms() + (int64_t)timeout * 1000, sentinel;
	size_t left = n;
	bool sentinel_seen = false;
	int rc = DRMAA_ERRNO_SUCCESS;

	if ((sentinel = send_waits(w, n, &rc, diag, dn)) < 0)
		return rc;
	while (left > 0 && rc == DRMAA_ERRNO_SUCCESS) {
		const char *why = NULL;
		int64_t seq, ms = deadline < 0 ? -1 : deadline - mono_ms();
		json_t *rep;
		size_t i;

		if (ms < 0 && deadline >= 0)
			ms = 0;
		/* The sentinel is waited for whatever the timeout. */
		if (!sentinel_seen && ms >= 0 && ms < CLIENT_REPLY_MS)
			ms = CLIENT_REPLY_MS;
		if ((rep = client_recv((int)ms, &why)) == NULL) {
			if (why)
				return drmaa_fail(diag, dn, DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE, "%s", why);
			/* A signal the program handles cut the poll short: not
			 * a timeout while time is left. */
			if (deadline < 0 || mono_ms() < deadline)
				continue;
			break;
		}
		seq = msg_seq_of(rep, -1);
		if (seq == sentinel) {
			sentinel_seen = true;
			json_decref(rep);
			if (deadline >= 0 && mono_ms() >= deadline)
				break;
			continue;
		}
		for (i = 0; i < n; i++)
			if (!w[i].ended && w[i].seq == seq)
				break;
		if (i < n) {
			take_reply(&w[i], rep, &rc, diag, dn);
			if (left-- == n)
				*first = i;
			if (any)
				left = 0;
		}
		json_decref(rep);
		if (left > 0 && sentinel_seen && deadline >= 0 && mono_ms() >= deadline)
			break;
	}
	if (rc == DRMAA_ERRNO_SUCCESS && left > 0)
		rc = drmaa_fail(diag, dn, DRMAA_ERRNO_EXIT_TIMEOUT, "the %s not ended within %ld s",
		    any || n == 1 ? "job has" : "jobs have", timeout);
	return rc;
}

static void
waited_free(struct waited *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		job_free(w[i].job);
	free(w);
}

/* The status word of an ended job. */
static int
stat_of(const struct job *j)
{
	if (j->start_time <= 0)
		return STAT_ABORTED;
	if (j->signal > 0)
		return j->signal & 0x7f;
	return (j->exit_status & 0xff) << 8;
}

/* Grid Engine's usage list: every name it gives, "%.4f" values, those
 * nowq does not measure as zero. */
static drmaa_attr_values_t *
rusage_of(const struct job *j)
{
	drmaa_attr_values_t *v = xcalloc(1, sizeof *v);
	double wall = j->end_time > j->start_time && j->start_time > 0 ?
	    (double)(j->end_time - j->start_time) / 1000 : 0;
	const struct { const char *name; double value; } u[] = {
		{ "acct_cpu", j->utime + j->stime }, { "acct_io", 0 }, { "acct_iow", 0 },
		{ "acct_maxvmem", 0 }, { "acct_mem", 0 }, { "cpu", j->utime + j->stime },
		{ "end_time", (double)(j->end_time / 1000) },
		{ "exit_status", j->signal > 0 ? 128 + j->signal : j->exit_status },
		{ "io", 0 }, { "iow", 0 }, { "maxvmem", 0 }, { "mem", 0 },
		{ "priority", j->prio }, { "ru_idrss", 0 }, { "ru_inblock", 0 }, { "ru_ismrss", 0 },
		{ "ru_isrss", 0 }, { "ru_ixrss", 0 }, { "ru_majflt", 0 },
		{ "ru_maxrss", (double)j->maxrss_kb }, { "ru_minflt", 0 }, { "ru_msgrcv", 0 },
		{ "ru_msgsnd", 0 }, { "ru_nivcsw", 0 }, { "ru_nsignals", 0 }, { "ru_nswap", 0 },
		{ "ru_nvcsw", 0 }, { "ru_oublock", 0 }, { "ru_stime", j->stime },
		{ "ru_utime", j->utime }, { "ru_wallclock", wall }, { "signal", j->signal },
		{ "start_time", (double)(j->start_time / 1000) },
		{ "submission_time", (double)(j->submit_time / 1000) }, { "vmem", 0 },
	};
	char buf[128];

	for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
		snprintf(buf, sizeof buf, "%s=%.4f", u[i].name, u[i].value);
		drmaa_list_add(&v->l, buf);
	}
	return v;
}

/* drmaa_transfer_files: an ended job's staged files, into the current
 * directory (no chdir: other threads share it).  Asked again for each
 * task of a bulk job, so each wait finds its task's file there. */
static int
wait_fetch(int64_t id, char *diag, size_t dn)
{
	char err[512];

	if (!drmaa_session_stages(id) || stage_fetch(id, NULL, false, true, err, sizeof err) == 0)
		return DRMAA_ERRNO_SUCCESS;
	return drmaa_fail(diag, dn, DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE,
	    "job %lld ended, but its files did not come back: %s", (long long)id, err);
}

/* The waited-for jobs of a drmaa_wait: one job, or the session's. */
static struct waited *
wait_targets(const char *job_id, size_t *n, int *rc, char *diag, size_t dn)
{
	struct waited *w;
	struct drmaa_jobid j;

	if (strcmp(job_id, DRMAA_JOB_IDS_SESSION_ANY) == 0) {
		struct drmaa_jobid *all = drmaa_session_jobs(n);
		w = xcalloc(*n + 1, sizeof *w);
		for (size_t i = 0; i < *n; i++)
			w[i].j = all[i];
		free(all);
		if (*n == 0) {
			free(w);
			*rc = drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_JOB, "the session has no jobs left to wait for");
			return NULL;
		}
		return w;
	}
	if (drmaa_jobid_parse(job_id, &j) < 0 || !drmaa_session_has(&j)) {
		*rc = drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_JOB,
		    "job %s is not a job of this session, or was waited for already", job_id);
		return NULL;
	}
	*n = 1;
	w = xcalloc(2, sizeof *w);
	w->j = j;
	return w;
}

DRMAA_API int
drmaa_wait(const char *job_id, char *job_id_out, size_t job_id_out_len, int *stat, signed long timeout,
    drmaa_attr_values_t **rusage, char *error_diagnosis, size_t error_diag_len)
{
	struct waited *w;
	size_t n = 0, first = 0;
	char id[48];
	int rc;

	if (rusage)
		*rusage = NULL;
	if ((rc = drmaa_check(job_id && timeout >= DRMAA_TIMEOUT_WAIT_FOREVER,
	    "job_id must not be NULL, nor timeout below -1", error_diagnosis, error_diag_len)) !=
	    DRMAA_ERRNO_SUCCESS)
		return rc;
	if ((w = wait_targets(job_id, &n, &rc, error_diagnosis, error_diag_len)) == NULL)
		return rc;
	rc = wait_jobs(w, n, true, timeout, &first, error_diagnosis, error_diag_len);
	if (rc != DRMAA_ERRNO_SUCCESS) {
		waited_free(w, n);
		return rc;
	}
	/* Reaped: its end is the caller's now. */
	drmaa_session_forget(&w[first].j);
	drmaa_jobid_format(&w[first].j, id, sizeof id);
	if (job_id_out && job_id_out_len > 0)
		snprintf(job_id_out, job_id_out_len, "%s", id);
	if (w[first].purged) {
		if (stat)
			*stat = STAT_ABORTED;
		rc = drmaa_fail(error_diagnosis, error_diag_len, DRMAA_ERRNO_NO_RUSAGE,
		    "job %s ended long ago: the master no longer has its usage", id);
	} else {
		if (stat)
			*stat = stat_of(w[first].job);
		if (rusage)
			*rusage = rusage_of(w[first].job);
		rc = wait_fetch(w[first].j.id, error_diagnosis, error_diag_len);
	}
	waited_free(w, n);
	return rc;
}

DRMAA_API int
drmaa_synchronize(const char *job_ids[], signed long timeout, int dispose, char *error_diagnosis,
    size_t error_diag_len)
{
	struct waited *w = NULL;
	size_t n = 0, first = 0;
	int rc;

	if ((rc = drmaa_check(job_ids && timeout >= DRMAA_TIMEOUT_WAIT_FOREVER,
	    "job_ids must not be NULL, nor timeout below -1", error_diagnosis, error_diag_len)) !=
	    DRMAA_ERRNO_SUCCESS)
		return rc;
	for (size_t k = 0; job_ids[k]; k++) {
		struct drmaa_jobid j, *all;
		size_t m;
		if (strcmp(job_ids[k], DRMAA_JOB_IDS_SESSION_ALL) == 0) {
			all = drmaa_session_jobs(&m);
			w = xrealloc(w, (n + m + 1) * sizeof *w);
			for (size_t i = 0; i < m; i++)
				w[n++] = (struct waited){ .j = all[i] };
			free(all);
			continue;
		}
		if (drmaa_jobid_parse(job_ids[k], &j) < 0 || !drmaa_session_has(&j)) {
			free(w);
			return drmaa_fail(error_diagnosis, error_diag_len, DRMAA_ERRNO_INVALID_JOB,
			    "job %s is not a job of this session, or was waited for already", job_ids[k]);
		}
		w = xrealloc(w, (n + 2) * sizeof *w);
		w[n++] = (struct waited){ .j = j };
	}
	if (n == 0) {
		free(w);
		return DRMAA_ERRNO_SUCCESS;
	}
	rc = wait_jobs(w, n, false, timeout, &first, error_diagnosis, error_diag_len);
	for (size_t i = 0; i < n && rc == DRMAA_ERRNO_SUCCESS; i++)
		if (i == 0 || w[i].j.id != w[i - 1].j.id)
			rc = wait_fetch(w[i].j.id, error_diagnosis, error_diag_len);
	if (rc == DRMAA_ERRNO_SUCCESS && dispose)
		for (size_t i = 0; i < n; i++)
			drmaa_session_forget(&w[i].j);
	waited_free(w, n);
	return rc;
}

/* Sets *out to a test of the status word; *out NULL is an error. */
static int
stat_test(int *out, int value, const char *name, char *diag, size_t n)
{
	if (!out)
		return drmaa_fail(diag, n, DRMAA_ERRNO_INVALID_ARGUMENT, "%s is NULL", name);
	*out = value;
	return DRMAA_ERRNO_SUCCESS;
}

DRMAA_API int
drmaa_wifexited(int *exited, int stat, char *error_diagnosis, size_t error_diag_len)
{
	return stat_test(exited, !(stat & STAT_ABORTED) && (stat & 0x7f) == 0, "exited",
	    error_diagnosis, error_diag_len);
}

DRMAA_API int
drmaa_wexitstatus(int *exit_status, int stat, char *error_diagnosis, size_t error_diag_len)
{
	return stat_test(exit_status, (stat >> 8) & 0xff, "exit_status", error_diagnosis, error_diag_len);
}

DRMAA_API int
drmaa_wifsignaled(int *signaled, int stat, char *error_diagnosis, size_t error_diag_len)
{
	return stat_test(signaled, !(stat & STAT_ABORTED) && (stat & 0x7f) != 0, "signaled",
	    error_diagnosis, error_diag_len);
}

DRMAA_API int
drmaa_wtermsig(char *signal, size_t signal_len, int stat, char *error_diagnosis, size_t error_diag_len)
{
	char buf[DRMAA_SIGNAL_BUFFER];
	int sig = stat & 0x7f;
	const char *abbrev = sig && !(stat & STAT_ABORTED) ? sigabbrev_np(sig) : NULL;

	/* Grid Engine's names: SIGKILL, SIGTERM ... */
	if (abbrev)
		snprintf(buf, sizeof buf, "SIG%s", abbrev);
	else if (sig && !(stat & STAT_ABORTED))
		snprintf(buf, sizeof buf, "SIG%d", sig);
	else
		buf[0] = '\0';
	return drmaa_copy(signal, signal_len, buf, error_diagnosis, error_diag_len);
}

DRMAA_API int
drmaa_wcoredump(int *core_dumped, int stat, char *error_diagnosis, size_t error_diag_len)
{
	return stat_test(core_dumped, !(stat & STAT_ABORTED) && (stat & 0x7f) && (stat & STAT_CORE),
	    "core_dumped", error_diagnosis, error_diag_len);
}

DRMAA_API int
drmaa_wifaborted(int *aborted, int stat, char *error_diagnosis, size_t error_diag_len)
{
	return stat_test(aborted, (stat & STAT_ABORTED) != 0, "aborted", error_diagnosis, error_diag_len);
}
