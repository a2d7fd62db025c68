/* drmaa_int.h: what the files of libdrmaa share: the session, templates, lists and error helpers. */
#ifndef NOWQ_DRMAA_INT_H
#define NOWQ_DRMAA_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "drmaa/drmaa.h"

/* Every exported symbol is declared in drmaa.h; the rest stays inside. */
#define DRMAA_API __attribute__((visibility("default")))

/* A list handed to the caller: attribute names, values or job ids. */
struct drmaa_list {
	char  **v;
	size_t  n, next;
};
struct drmaa_attr_names_s  { struct drmaa_list l; };
struct drmaa_attr_values_s { struct drmaa_list l; };
struct drmaa_job_ids_s     { struct drmaa_list l; };
void drmaa_list_add(struct drmaa_list *l, const char *s);
void drmaa_list_free(struct drmaa_list *l);

/* session.c: the one session of the process, its jobs, and errors. */
/* A job of the session: a job, or a task of a bulk job. */
struct drmaa_jobid {
	int64_t id;
	int     task;    /* 0: not a task */
};
/* Writes "ID" or "ID.TASK" into buf. */
void drmaa_jobid_format(const struct drmaa_jobid *j, char *buf, size_t n);
/* Parses a job id as drmaa_jobid_format writes it; -1 when it is not one. */
int  drmaa_jobid_parse(const char *s, struct drmaa_jobid *j);
/* Fills diag (when given) with the sentence and returns code. */
int  drmaa_fail(char *diag, size_t n, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* DRMAA_ERRNO_NO_ACTIVE_SESSION unless a session is open. */
int  drmaa_session_check(char *diag, size_t n);
/* drmaa_session_check, then DRMAA_ERRNO_INVALID_ARGUMENT saying what
 * unless ok: a function's checks of its arguments. */
int  drmaa_check(bool ok, const char *what, char *diag, size_t n);
/* The session's jobs: adds one, forgets one (false when it was not there),
 * and a copy of all (the caller frees it). */
void drmaa_session_add(const struct drmaa_jobid *j);
bool drmaa_session_forget(const struct drmaa_jobid *j);
bool drmaa_session_has(const struct drmaa_jobid *j);
struct drmaa_jobid *drmaa_session_jobs(size_t *n);
/* Job id's files come back when it ends (drmaa_transfer_files): marks it,
 * and tells. */
void drmaa_session_stage(int64_t id);
bool drmaa_session_stages(int64_t id);
/* Copies s into buf of n bytes; DRMAA_ERRNO_INVALID_ARGUMENT when it does
 * not fit (or buf is NULL). */
int  drmaa_copy(char *buf, size_t n, const char *s, char *diag, size_t dn);

/* template.c: job templates. */
enum drmaa_attr {
	DA_REMOTE_COMMAND, DA_JS_STATE, DA_WD, DA_JOB_CATEGORY, DA_NATIVE_SPECIFICATION,
	DA_BLOCK_EMAIL, DA_START_TIME, DA_JOB_NAME, DA_INPUT_PATH, DA_OUTPUT_PATH,
	DA_ERROR_PATH, DA_JOIN_FILES, DA_DEADLINE_TIME, DA_WCT_HLIMIT, DA_WCT_SLIMIT,
	DA_DURATION_HLIMIT, DA_TRANSFER_FILES, DA_NSCALAR
};
enum drmaa_vattr { DV_ARGV, DV_ENV, DV_EMAIL, DV_NVECTOR };
struct drmaa_job_template_s {
	char  *a[DA_NSCALAR];     /* NULL: not set */
	char **v[DV_NVECTOR];     /* NULL-terminated, NULL: not set */
};
/* DRMAA's time notation, [[[[CC]YY/]MM/]DD] hh:mm[:ss] [{-|+}UU:uu], as
 * seconds since the epoch: the next such time from now.  -1 when malformed. */
int64_t drmaa_parse_time(const char *s, time_t now);

/* submit.c: a template submitted as a job or an array. */
int drmaa_submit(const drmaa_job_template_t *jt, int first, int last, int step, int64_t *id,
    char *diag, size_t dn);

#endif
