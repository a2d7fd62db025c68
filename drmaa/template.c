/* template.c: libdrmaa's job templates: their attributes, checked as they are set, and the names of those nowq supports. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/common.h"
#include "client/client.h"
#include "drmaa/drmaa_int.h"

/* The scalar attributes nowq honours, in enum drmaa_attr's order. */
static const char *const scalar_names[DA_NSCALAR] = {
	[DA_REMOTE_COMMAND] = DRMAA_REMOTE_COMMAND,
	[DA_JS_STATE] = DRMAA_JS_STATE,
	[DA_WD] = DRMAA_WD,
	[DA_JOB_CATEGORY] = DRMAA_JOB_CATEGORY,
	[DA_NATIVE_SPECIFICATION] = DRMAA_NATIVE_SPECIFICATION,
	[DA_BLOCK_EMAIL] = DRMAA_BLOCK_EMAIL,
	[DA_START_TIME] = DRMAA_START_TIME,
	[DA_JOB_NAME] = DRMAA_JOB_NAME,
	[DA_INPUT_PATH] = DRMAA_INPUT_PATH,
	[DA_OUTPUT_PATH] = DRMAA_OUTPUT_PATH,
	[DA_ERROR_PATH] = DRMAA_ERROR_PATH,
	[DA_JOIN_FILES] = DRMAA_JOIN_FILES,
	[DA_DEADLINE_TIME] = DRMAA_DEADLINE_TIME,
	[DA_WCT_HLIMIT] = DRMAA_WCT_HLIMIT,
	[DA_WCT_SLIMIT] = DRMAA_WCT_SLIMIT,
	[DA_DURATION_HLIMIT] = DRMAA_DURATION_HLIMIT,
	[DA_TRANSFER_FILES] = DRMAA_TRANSFER_FILES,
};
static const char *const vector_names[DV_NVECTOR] = {
	[DV_ARGV] = DRMAA_V_ARGV,
	[DV_ENV] = DRMAA_V_ENV,
	[DV_EMAIL] = DRMAA_V_EMAIL,
};

/* The index of name in names, or -1. */
static int
name_index(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}
#define scalar_of(name) name_index(scalar_names, DA_NSCALAR, (name))
#define vector_of(name) name_index(vector_names, DV_NVECTOR, (name))

DRMAA_API int
drmaa_allocate_job_template(drmaa_job_template_t **jt, char *error_diagnosis, size_t error_diag_len)
{
	int rc;

	if ((rc = drmaa_check(jt != NULL, "jt must not be NULL", error_diagnosis, error_diag_len)) !=
	    DRMAA_ERRNO_SUCCESS)
		return rc;
	*jt = xcalloc(1, sizeof **jt);
	return DRMAA_ERRNO_SUCCESS;
}

DRMAA_API int
drmaa_delete_job_template(drmaa_job_template_t *jt, char *error_diagnosis, size_t error_diag_len)
{
	int rc;

	if ((rc = drmaa_check(jt != NULL, "jt must not be NULL", error_diagnosis, error_diag_len)) !=
	    DRMAA_ERRNO_SUCCESS)
		return rc;
	for (int i = 0; i < DA_NSCALAR; i++)
		free(jt->a[i]);
	for (int i = 0; i < DV_NVECTOR; i++)
		strv_free(jt->v[i]);
	free(jt);
	return DRMAA_ERRNO_SUCCESS;
}

/* Two decimal digits of s at *p, advancing it; -1 if there are none. */
static int
two_digits(const char **p)
{
	const char *s = *p;
	if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9')
		return -1;
	*p += 2;
	return (s[0] - '0') * 10 + (s[1] - '0');
}

/* The date fields before the time: [[[[CC]YY/]MM/]DD] into tm; -1 if bad. */
static int
parse_date_part(const char *s, size_t len, struct tm *tm, bool *has_day, bool *has_month, bool *has_year)
{
	int f[4], nf = 0, cc = -1;
	const char *p = s;

	while ((size_t)(p - s) < len && nf < 4) {
		int v = two_digits(&p);
		if (v < 0)
			return -1;
		/* CCYY is four digits with no slash between. */
		if (nf == 0 && cc < 0 && *p >= '0' && *p <= '9') {
			cc = v;
			continue;
		}
		f[nf++] = v;
		if ((size_t)(p - s) < len && *p++ != '/')
			return -1;
	}
	if ((size_t)(p - s) != len || nf == 0 || (cc >= 0 && nf != 3))
		return -1;
	*has_day = true;
	tm->tm_mday = f[nf - 1];
	if (nf >= 2) {
		*has_month = true;
		tm->tm_mon = f[nf - 2] - 1;
	}
	if (nf == 3) {
		*has_year = true;
		tm->tm_year = (cc >= 0 ? cc * 100 : 2000) + f[0] - 1900;
	}
	return 0;
}

int64_t
drmaa_parse_time(const char *s, time_t now)
{
	struct tm tm;
	const char *sp = strchr(s, ' '), *t = s, *p;
	bool has_day = false, has_month = false, has_year = false, has_zone = false;
	int hh, mm, ss = 0, zone = 0;
	time_t r;

	localtime_r(&now, &tm);
	if (sp && strchr(s, ':') > sp) {
		if (parse_date_part(s, (size_t)(sp - s), &tm, &has_day, &has_month, &has_year) < 0)
			return -1;
		t = sp + 1;
	}
	p = t;
	if ((hh = two_digits(&p)) < 0 || *p++ != ':' || (mm = two_digits(&p)) < 0)
		return -1;
	if (*p == ':' && (p++, (ss = two_digits(&p)) < 0))
		return -1;
	if (*p == ' ' && (p[1] == '+' || p[1] == '-')) {
		int sign = p[1] == '-' ? -1 : 1, zh, zm;
		p += 2;
		if ((zh = two_digits(&p)) < 0 || *p++ != ':' || (zm = two_digits(&p)) < 0)
			return -1;
		zone = sign * (zh * 3600 + zm * 60);
		has_zone = true;
	}
	if (*p || hh > 23 || mm > 59 || ss > 60 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
	    tm.tm_mon < 0 || tm.tm_mon > 11)
		return -1;
	tm.tm_hour = hh;
	tm.tm_min = mm;
	tm.tm_sec = ss;
	tm.tm_isdst = -1;
	if (has_zone) {
		r = timegm(&tm) - zone;
	} else
		r = mktime(&tm);
	/* Fields left out are the next such time from now. */
	if (r < now && !has_year) {
		if (!has_day)
			r += 86400;
		else if (!has_month) {
			tm.tm_mon++;
			r = has_zone ? timegm(&tm) - zone : mktime(&tm);
		} else {
			tm.tm_year++;
			r = has_zone ? timegm(&tm) - zone : mktime(&tm);
		}
	}
	return (int64_t)r;
}

/* Checks value for attribute i: DRMAA_ERRNO_SUCCESS, or the error with diag. */
static int
scalar_check(int i, const char *value, char *diag, size_t dn)
{
	int64_t secs;

	switch (i) {
	case DA_JS_STATE:
		if (strcmp(value, DRMAA_SUBMISSION_STATE_ACTIVE) && strcmp(value, DRMAA_SUBMISSION_STATE_HOLD))
			return drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
			    "drmaa_js_state must be drmaa_active or drmaa_hold, not \"%s\"", value);
		break;
	case DA_BLOCK_EMAIL:
	case DA_JOIN_FILES:
		if (strcmp(value, "0") && strcmp(value, "1") && strcmp(value, "y") && strcmp(value, "n"))
			return drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
			    "%s must be 0 or 1 (y or n), not \"%s\"", scalar_names[i], value);
		break;
	case DA_START_TIME:
	case DA_DEADLINE_TIME:
		if (drmaa_parse_time(value, time(NULL)) < 0)
			return drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
			    "%s \"%s\" is not [[[[CC]YY/]MM/]DD] hh:mm[:ss] [{-|+}UU:uu]",
			    scalar_names[i], value);
		break;
	case DA_WCT_HLIMIT:
	case DA_WCT_SLIMIT:
	case DA_DURATION_HLIMIT:
		if (parse_duration(value, &secs) < 0 || secs <= 0)
			return drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
			    "%s \"%s\" is not [[h:]m:]s", scalar_names[i], value);
		break;
	case DA_TRANSFER_FILES:
		if (strspn(value, "ioe") != strlen(value))
			return drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
			    "drmaa_transfer_files takes the letters i, o and e, not \"%s\"", value);
		break;
	case DA_NATIVE_SPECIFICATION: {
		struct qsub_opts o;
		char **w = qsub_split_words(value);
		int rc = DRMAA_ERRNO_SUCCESS;
		qsub_opts_init(&o);
		if (qsub_opts_parse_argv(&o, (int)strv_len(w), w) < 0)
			rc = drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
			    "native specification: %s", o.err);
		else if (o.operands)
			rc = drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
			    "native specification: \"%s\" is not a qsub option", o.operands[0]);
		qsub_opts_free(&o);
		strv_free(w);
		return rc;
	}
	default:
		break;
	}
	return DRMAA_ERRNO_SUCCESS;
}

/* The session, the template and the name: the checks every setter and
 * getter starts with. */
static int
attr_args(drmaa_job_template_t *jt, const char *name, char *diag, size_t dn)
{
	int rc;

	if ((rc = drmaa_session_check(diag, dn)) != DRMAA_ERRNO_SUCCESS)
		return rc;
	if (!jt || !name)
		return drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ARGUMENT, "jt and name must not be NULL");
	return DRMAA_ERRNO_SUCCESS;
}

/* A setter's checks: the session, the arguments, and that name is an
 * attribute of the kind (vector or not) being set; its index in *i. */
static int
setter_args(drmaa_job_template_t *jt, const char *name, const void *value, bool vector, int *i,
    char *diag, size_t dn)
{
	int rc;

	if ((rc = attr_args(jt, name, diag, dn)) != DRMAA_ERRNO_SUCCESS)
		return rc;
	if ((*i = vector ? vector_of(name) : scalar_of(name)) < 0)
		return drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ARGUMENT, "\"%s\" is %s", name,
		    (vector ? scalar_of(name) : vector_of(name)) >= 0 ?
		    vector ? "not a vector attribute" : "a vector attribute" :
		    "not an attribute nowq supports");
	if (!value)
		return drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ARGUMENT, "value must not be NULL");
	return DRMAA_ERRNO_SUCCESS;
}

DRMAA_API int
drmaa_set_attribute(drmaa_job_template_t *jt, const char *name, const char *value,
    char *error_diagnosis, size_t error_diag_len)
{
	int i, rc;

	if ((rc = setter_args(jt, name, value, false, &i, error_diagnosis, error_diag_len)) !=
	    DRMAA_ERRNO_SUCCESS)
		return rc;
	if ((rc = scalar_check(i, value, error_diagnosis, error_diag_len)) != DRMAA_ERRNO_SUCCESS)
		return rc;
	free(jt->a[i]);
	jt->a[i] = xstrdup(value);
	return DRMAA_ERRNO_SUCCESS;
}

DRMAA_API int
drmaa_get_attribute(drmaa_job_template_t *jt, const char *name, char *value, size_t value_len,
    char *error_diagnosis, size_t error_diag_len)
{
	int i, rc;

	if ((rc = attr_args(jt, name, error_diagnosis, error_diag_len)) != DRMAA_ERRNO_SUCCESS)
		return rc;
	if ((i = scalar_of(name)) < 0 || !jt->a[i])
		return drmaa_fail(error_diagnosis, error_diag_len, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
		    i < 0 ? "\"%s\" is not an attribute nowq supports" : "\"%s\" is not set", name);
	return drmaa_copy(value, value_len, jt->a[i], error_diagnosis, error_diag_len);
}

DRMAA_API int
drmaa_set_vector_attribute(drmaa_job_template_t *jt, const char *name, const char *value[],
    char *error_diagnosis, size_t error_diag_len)
{
	int i, rc;
	size_t n = 0;

	if ((rc = setter_args(jt, name, value, true, &i, error_diagnosis, error_diag_len)) !=
	    DRMAA_ERRNO_SUCCESS)
		return rc;
	while (value[n])
		n++;
	if (i == DV_ENV)
		for (size_t k = 0; k < n; k++)
			if (!strchr(value[k], '=') || value[k][0] == '=')
				return drmaa_fail(error_diagnosis, error_diag_len,
				    DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
				    "drmaa_v_env entries are NAME=VALUE, not \"%s\"", value[k]);
	strv_free(jt->v[i]);
	jt->v[i] = strv_dup((char *const *)value);
	return DRMAA_ERRNO_SUCCESS;
}

DRMAA_API int
drmaa_get_vector_attribute(drmaa_job_template_t *jt, const char *name, drmaa_attr_values_t **values,
    char *error_diagnosis, size_t error_diag_len)
{
	int i, rc;

	if ((rc = attr_args(jt, name, error_diagnosis, error_diag_len)) != DRMAA_ERRNO_SUCCESS)
		return rc;
	if (!values)
		return drmaa_fail(error_diagnosis, error_diag_len, DRMAA_ERRNO_INVALID_ARGUMENT,
		    "values must not be NULL");
	if ((i = vector_of(name)) < 0 || !jt->v[i])
		return drmaa_fail(error_diagnosis, error_diag_len, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
		    i < 0 ? "\"%s\" is not a vector attribute nowq supports" : "\"%s\" is not set", name);
	*values = xcalloc(1, sizeof **values);
	for (size_t k = 0; jt->v[i][k]; k++)
		drmaa_list_add(&(*values)->l, jt->v[i][k]);
	return DRMAA_ERRNO_SUCCESS;
}

/* A list of names, for the two functions below. */
static int
names_list(drmaa_attr_names_t **values, const char *const *names, int n, char *diag, size_t dn)
{
	int rc;

	if ((rc = drmaa_session_check(diag, dn)) != DRMAA_ERRNO_SUCCESS)
		return rc;
	if (!values)
		return drmaa_fail(diag, dn, DRMAA_ERRNO_INVALID_ARGUMENT, "values must not be NULL");
	*values = xcalloc(1, sizeof **values);
	for (int i = 0; i < n; i++)
		drmaa_list_add(&(*values)->l, names[i]);
	return DRMAA_ERRNO_SUCCESS;
}

DRMAA_API int
drmaa_get_attribute_names(drmaa_attr_names_t **values, char *error_diagnosis, size_t error_diag_len)
{
	return names_list(values, scalar_names, DA_NSCALAR, error_diagnosis, error_diag_len);
}

DRMAA_API int
drmaa_get_vector_attribute_names(drmaa_attr_names_t **values, char *error_diagnosis,
    size_t error_diag_len)
{
	return names_list(values, vector_names, DV_NVECTOR, error_diagnosis, error_diag_len);
}
