/* session.c: libdrmaa's session (drmaa_init, drmaa_exit), its jobs, lists, error texts and the version functions. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "common/msg_req.h"
#include "client/client.h"
#include "drmaa/drmaa_int.h"

/* One session per process, as GFD.133 says: a second drmaa_init is
 * refused until drmaa_exit.  The mutex guards the session and its jobs;
 * the connection to the master is each thread's own (client/lib.c). */
static struct {
	pthread_mutex_t     mu;
	bool                active;
	char               *contact;
	struct drmaa_jobid *jobs;
	size_t              n, cap;
	int64_t            *staged;   /* jobs whose files come back */
	size_t              nstaged;
} sess = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* The texts of the error codes, in their order. */
static const char *const errtext[] = {
	[DRMAA_ERRNO_SUCCESS] = "success",
	[DRMAA_ERRNO_INTERNAL_ERROR] = "unexpected or internal DRMAA error",
	[DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE] = "could not contact DRM system",
	[DRMAA_ERRNO_AUTH_FAILURE] = "not enough privileges",
	[DRMAA_ERRNO_INVALID_ARGUMENT] = "invalid argument value",
	[DRMAA_ERRNO_NO_ACTIVE_SESSION] = "no active DRMAA session exists",
	[DRMAA_ERRNO_NO_MEMORY] = "failed allocating memory",
	[DRMAA_ERRNO_INVALID_CONTACT_STRING] = "invalid contact string",
	[DRMAA_ERRNO_DEFAULT_CONTACT_STRING_ERROR] = "can not use default contact string",
	[DRMAA_ERRNO_NO_DEFAULT_CONTACT_STRING_SELECTED] = "no default contact string selected",
	[DRMAA_ERRNO_DRMS_INIT_FAILED] = "DRM system initialization failed",
	[DRMAA_ERRNO_ALREADY_ACTIVE_SESSION] = "DRMAA session already exists",
	[DRMAA_ERRNO_DRMS_EXIT_ERROR] = "DRM system disengagement failed",
	[DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT] = "invalid format for job attribute",
	[DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE] = "invalid value for job attribute",
	[DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES] = "value of attribute conflicts with other attribute value",
	[DRMAA_ERRNO_TRY_LATER] = "DRM system is overloaded, try again later",
	[DRMAA_ERRNO_DENIED_BY_DRM] = "DRM rejected job due to its configuration or job attributes",
	[DRMAA_ERRNO_INVALID_JOB] = "job does not exist in DRMs queue",
	[DRMAA_ERRNO_RESUME_INCONSISTENT_STATE] = "resuming the job is not possible",
	[DRMAA_ERRNO_SUSPEND_INCONSISTENT_STATE] = "suspending the job is not possible",
	[DRMAA_ERRNO_HOLD_INCONSISTENT_STATE] = "holding the job is not possible",
	[DRMAA_ERRNO_RELEASE_INCONSISTENT_STATE] = "releasing the job is not possible",
	[DRMAA_ERRNO_EXIT_TIMEOUT] = "time-out condition",
	[DRMAA_ERRNO_NO_RUSAGE] = "no usage information was returned for the completed job",
	[DRMAA_ERRNO_NO_MORE_ELEMENTS] = "no more elements",
};

DRMAA_API const char *
drmaa_strerror(int drmaa_errno)
{
	if (drmaa_errno < 0 || drmaa_errno >= DRMAA_NO_ERRNO)
		return NULL;
	return errtext[drmaa_errno];
}

int
drmaa_fail(char *diag, size_t n, int code, const char *fmt, ...)
{
	va_list ap;

	if (diag && n > 0) {
		va_start(ap, fmt);
		vsnprintf(diag, n, fmt, ap);
		va_end(ap);
	}
	return code;
}

int
drmaa_copy(char *buf, size_t n, const char *s, char *diag, size_t dn)
{
	if (!buf || n == 0)
		return drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ARGUMENT, "no buffer given");
	if (strlen(s) >= n)
		return drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ARGUMENT,
		    "the buffer of %zu bytes is too small for %zu", n, strlen(s) + 1);
	memcpy(buf, s, strlen(s) + 1);
	return DRMAA_ERRNO_SUCCESS;
}

void
drmaa_jobid_format(const struct drmaa_jobid *j, char *buf, size_t n)
{
	if (j->task > 0)
		snprintf(buf, n, "%lld.%d", (long long)j->id, j->task);
	else
		snprintf(buf, n, "%lld", (long long)j->id);
}

int
drmaa_jobid_parse(const char *s, struct drmaa_jobid *j)
{
	char *end;
	long long id, task = 0;

	if (!s || !*s || *s < '0' || *s > '9')
		return -1;
	id = strtoll(s, &end, 10);
	if (*end == '.') {
		const char *t = end + 1;
		if (*t < '0' || *t > '9')
			return -1;
		task = strtoll(t, &end, 10);
		if (task <= 0 || task > INT32_MAX)
			return -1;
	}
	if (*end || id <= 0)
		return -1;
	j->id = id;
	j->task = (int)task;
	return 0;
}

int
drmaa_session_check(char *diag, size_t n)
{
	bool active;

	pthread_mutex_lock(&sess.mu);
	active = sess.active;
	pthread_mutex_unlock(&sess.mu);
	return active ? DRMAA_ERRNO_SUCCESS :
	    drmaa_fail(diag, n, DRMAA_ERRNO_NO_ACTIVE_SESSION, "no active session: call drmaa_init first");
}

int
drmaa_check(bool ok, const char *what, char *diag, size_t n)
{
	int rc;

	if ((rc = drmaa_session_check(diag, n)) != DRMAA_ERRNO_SUCCESS)
		return rc;
	return ok ? DRMAA_ERRNO_SUCCESS : drmaa_fail(diag, n, DRMAA_ERRNO_INVALID_ARGUMENT, "%s", what);
}

void
drmaa_session_add(const struct drmaa_jobid *j)
{
	pthread_mutex_lock(&sess.mu);
	if (sess.n == sess.cap) {
		sess.cap = sess.cap ? 2 * sess.cap : 64;
		sess.jobs = xrealloc(sess.jobs, sess.cap * sizeof *sess.jobs);
	}
	sess.jobs[sess.n++] = *j;
	pthread_mutex_unlock(&sess.mu);
}

/* The index of j among the session's jobs, or n; under the mutex. */
static size_t
session_find(const struct drmaa_jobid *j)
{
	size_t i;

	for (i = 0; i < sess.n; i++)
		if (sess.jobs[i].id == j->id && sess.jobs[i].task == j->task)
			break;
	return i;
}

bool
drmaa_session_forget(const struct drmaa_jobid *j)
{
	bool found;
	size_t i;

	pthread_mutex_lock(&sess.mu);
	i = session_find(j);
	if ((found = i < sess.n))
		sess.jobs[i] = sess.jobs[--sess.n];
	pthread_mutex_unlock(&sess.mu);
	return found;
}

bool
drmaa_session_has(const struct drmaa_jobid *j)
{
	bool found;

	pthread_mutex_lock(&sess.mu);
	found = session_find(j) < sess.n;
	pthread_mutex_unlock(&sess.mu);
	return found;
}

struct drmaa_jobid *
drmaa_session_jobs(size_t *n)
{
	struct drmaa_jobid *v;

	pthread_mutex_lock(&sess.mu);
	*n = sess.n;
	v = xmalloc((sess.n + 1) * sizeof *v);
	memcpy(v, sess.jobs, sess.n * sizeof *v);
	pthread_mutex_unlock(&sess.mu);
	return v;
}

void
drmaa_session_stage(int64_t id)
{
	pthread_mutex_lock(&sess.mu);
	sess.staged = xrealloc(sess.staged, (sess.nstaged + 1) * sizeof *sess.staged);
	sess.staged[sess.nstaged++] = id;
	pthread_mutex_unlock(&sess.mu);
}

bool
drmaa_session_stages(int64_t id)
{
	bool found = false;

	pthread_mutex_lock(&sess.mu);
	for (size_t i = 0; i < sess.nstaged && !found; i++)
		found = sess.staged[i] == id;
	pthread_mutex_unlock(&sess.mu);
	return found;
}

/* Asks the master the cheapest question there is (WAIT of no job, answered
 * at once without touching its store), to learn that it is there. */
static int
session_ping(char *diag, size_t n)
{
	const char *why = NULL;
	json_t *req = msg_wait_pack(&(struct msg_wait){ .id = 0 });
	json_t *rep = client_call(req, CLIENT_REPLY_MS, &why);

	json_decref(req);
	if (!rep)
		return drmaa_fail(diag, n, DRMAA_ERRNO_DRMS_INIT_FAILED, "%s", why);
	json_decref(rep);
	return DRMAA_ERRNO_SUCCESS;
}

DRMAA_API int
drmaa_init(const char *contact, char *error_diagnosis, size_t error_diag_len)
{
	const char *env = getenv("NOWQ_MASTER");
	char *before = env ? xstrdup(env) : NULL, **masters;
	int rc;

	pthread_mutex_lock(&sess.mu);
	if (sess.active) {
		rc = drmaa_fail(error_diagnosis, error_diag_len, DRMAA_ERRNO_ALREADY_ACTIVE_SESSION,
		    "a session is already active in this process");
		goto out;
	}
	if (contact && *contact) {
		if ((masters = client_masters_parse(contact)) == NULL) {
			rc = drmaa_fail(error_diagnosis, error_diag_len, DRMAA_ERRNO_INVALID_CONTACT_STRING,
			    "contact \"%s\" names no master (unix:PATH or HOST:PORT)", contact);
			goto out;
		}
		strv_free(masters);
		/* The client library reads the masters from there. */
		setenv("NOWQ_MASTER", contact, 1);
	}
	client_prog = "libdrmaa";
	client_disconnect();
	if ((rc = session_ping(error_diagnosis, error_diag_len)) == DRMAA_ERRNO_SUCCESS) {
		const char *m = getenv("NOWQ_MASTER");
		sess.active = true;
		free(sess.contact);
		sess.contact = xstrdup(m && *m ? m : "");
		sess.n = sess.nstaged = 0;
	} else if (contact && *contact) {
		/* A contact that failed leaves the default as it was. */
		if (before)
			setenv("NOWQ_MASTER", before, 1);
		else
			unsetenv("NOWQ_MASTER");
	}
out:
	pthread_mutex_unlock(&sess.mu);
	free(before);
	return rc;
}

DRMAA_API int
drmaa_exit(char *error_diagnosis, size_t error_diag_len)
{
	pthread_mutex_lock(&sess.mu);
	if (!sess.active) {
		pthread_mutex_unlock(&sess.mu);
		return drmaa_fail(error_diagnosis, error_diag_len, DRMAA_ERRNO_NO_ACTIVE_SESSION,
		    "no active session to exit");
	}
	/* The session's jobs go on running: DRMAA only forgets them. */
	sess.active = false;
	sess.n = sess.nstaged = 0;
	client_disconnect();
	pthread_mutex_unlock(&sess.mu);
	return DRMAA_ERRNO_SUCCESS;
}

DRMAA_API int
drmaa_get_contact(char *contact, size_t contact_len, char *error_diagnosis, size_t error_diag_len)
{
	char buf[DRMAA_CONTACT_BUFFER];
	char **m;

	pthread_mutex_lock(&sess.mu);
	if (sess.active && sess.contact && *sess.contact)
		snprintf(buf, sizeof buf, "%s", sess.contact);
	else if ((m = client_masters())) {
		/* Before drmaa_init: the masters it would try. */
		size_t k = 0;
		buf[0] = '\0';
		for (size_t i = 0; m[i]; i++)
			k += (size_t)snprintf(buf + k, k < sizeof buf ? sizeof buf - k : 0, "%s%s",
			    i ? "," : "", m[i]);
		strv_free(m);
	} else
		buf[0] = '\0';
	pthread_mutex_unlock(&sess.mu);
	return drmaa_copy(contact, contact_len, buf, error_diagnosis, error_diag_len);
}

DRMAA_API int
drmaa_version(unsigned int *major, unsigned int *minor, char *error_diagnosis, size_t error_diag_len)
{
	if (!major || !minor)
		return drmaa_fail(error_diagnosis, error_diag_len, DRMAA_ERRNO_INVALID_ARGUMENT,
		    "major and minor must not be NULL");
	*major = 1;
	*minor = 0;
	return DRMAA_ERRNO_SUCCESS;
}

DRMAA_API int
drmaa_get_DRM_system(char *drm_system, size_t drm_system_len, char *error_diagnosis,
    size_t error_diag_len)
{
	return drmaa_copy(drm_system, drm_system_len, "nowq " PACKAGE_VERSION, error_diagnosis,
	    error_diag_len);
}

DRMAA_API int
drmaa_get_DRMAA_implementation(char *drmaa_impl, size_t drmaa_impl_len, char *error_diagnosis,
    size_t error_diag_len)
{
	return drmaa_copy(drmaa_impl, drmaa_impl_len, "nowq libdrmaa " PACKAGE_VERSION
	    " (DRMAA 1.0, GFD.133)", error_diagnosis, error_diag_len);
}

void
drmaa_list_add(struct drmaa_list *l, const char *s)
{
	l->v = xrealloc(l->v, (l->n + 2) * sizeof *l->v);
	l->v[l->n++] = xstrdup(s);
	l->v[l->n] = NULL;
}

void
drmaa_list_free(struct drmaa_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* The next element of a list into value. */
static int
list_next(struct drmaa_list *l, char *value, size_t value_len)
{
	if (!l)
		return DRMAA_ERRNO_INVALID_ARGUMENT;
	if (l->next >= l->n)
		return DRMAA_ERRNO_NO_MORE_ELEMENTS;
	if (!value || value_len == 0)
		return DRMAA_ERRNO_INVALID_ARGUMENT;
	/* As Grid Engine's: a value too long for the buffer is cut. */
	snprintf(value, value_len, "%s", l->v[l->next++]);
	return DRMAA_ERRNO_SUCCESS;
}

static int
list_num(const struct drmaa_list *l, int *size)
{
	if (!l || !size)
		return DRMAA_ERRNO_INVALID_ARGUMENT;
	*size = (int)l->n;
	return DRMAA_ERRNO_SUCCESS;
}

DRMAA_API int
drmaa_get_next_attr_name(drmaa_attr_names_t *values, char *value, size_t value_len)
{
	return list_next(values ? &values->l : NULL, value, value_len);
}

DRMAA_API int
drmaa_get_next_attr_value(drmaa_attr_values_t *values, char *value, size_t value_len)
{
	return list_next(values ? &values->l : NULL, value, value_len);
}

DRMAA_API int
drmaa_get_next_job_id(drmaa_job_ids_t *values, char *value, size_t value_len)
{
	return list_next(values ? &values->l : NULL, value, value_len);
}

DRMAA_API int
drmaa_get_num_attr_names(drmaa_attr_names_t *values, int *size)
{
	return list_num(values ? &values->l : NULL, size);
}

DRMAA_API int
drmaa_get_num_attr_values(drmaa_attr_values_t *values, int *size)
{
	return list_num(values ? &values->l : NULL, size);
}

DRMAA_API int
drmaa_get_num_job_ids(drmaa_job_ids_t *values, int *size)
{
	return list_num(values ? &values->l : NULL, size);
}

DRMAA_API void
drmaa_release_attr_names(drmaa_attr_names_t *values)
{
	if (values) {
		drmaa_list_free(&values->l);
		free(values);
	}
}

DRMAA_API void
drmaa_release_attr_values(drmaa_attr_values_t *values)
{
	if (values) {
		drmaa_list_free(&values->l);
		free(values);
	}
}

DRMAA_API void
drmaa_release_job_ids(drmaa_job_ids_t *values)
{
	if (values) {
		drmaa_list_free(&values->l);
		free(values);
	}
}
