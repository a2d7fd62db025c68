/* req.c: a job's resource request (qsub -l) and an exec host's attributes.
 *
 * Grid Engine's size and time notations, the request list, and their JSON
 * forms. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common.h"

/*
 * Sizes as Grid Engine writes them: a plain number is bytes; k, m, g, t
 * multiply by powers of 1000 and K, M, G, T by powers of 1024.
 */
int
parse_size(const char *s, int64_t *out)
{
	char *end;
	unsigned long long v;
	int64_t mul = 1;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case '\0': break;
	case 'k': mul = 1000; break;
	case 'K': mul = 1024; break;
	case 'm': mul = 1000 * 1000; break;
	case 'M': mul = 1024 * 1024; break;
	case 'g': mul = 1000LL * 1000 * 1000; break;
	case 'G': mul = 1024LL * 1024 * 1024; break;
	case 't': mul = 1000LL * 1000 * 1000 * 1000; break;
	case 'T': mul = 1024LL * 1024 * 1024 * 1024; break;
	default: return -1;
	}
	if (*end && end[1])
		return -1;
	if (v > (unsigned long long)(INT64_MAX / mul))
		return -1;
	*out = (int64_t)v * mul;
	return 0;
}

/* Times: seconds, or [[HH:]MM:]SS with empty fields meaning 0 (Grid
 * Engine's "::30"); minutes and seconds after a colon stay below 60 only by
 * convention, so "0:90" is 90 seconds, as Grid Engine reads it. */
int
parse_duration(const char *s, int64_t *out)
{
	int64_t total = 0;
	int fields = 0;

	if (!s || !*s)
		return -1;
	for (;;) {
		int64_t v = 0;
		const char *p = s;
		while (*s >= '0' && *s <= '9') {
			if (v > (INT64_MAX / 60 - 9) / 10)
				return -1;
			v = v * 10 + (*s++ - '0');
		}
		if (p == s && *s != ':' && *s != '\0')
			return -1;
		if (++fields > 3)
			return -1;
		if (total > (INT64_MAX - v) / 60)
			return -1;
		total = total * 60 + v;
		if (*s == '\0')
			break;
		if (*s++ != ':')
			return -1;
	}
	*out = total;
	return 0;
}

void
req_clear(struct job_req *r)
{
	free(r->arch);
	strv_free(r->keys);
	free(r->hosts);
	free(r->ar);
	free(r->qname);
	free(r->hard_queue);
	strv_free(r->asked);
	memset(r, 0, sizeof *r);
}

bool
req_empty(const struct job_req *r)
{
	return !r->mem && !r->arch && !r->keys && !r->hosts && !r->exclusive && !r->ar &&
	    !r->h_rt && !r->s_rt && !r->h_cpu && !r->h_vmem && !r->slots && !r->lim_set &&
	    !r->asked && !r->qname && !r->hard_queue;
}

static int
req_fail(char *err, size_t errlen, const char *fmt, ...) NOWQ_ATTR_PRINTF(3, 4);

static int
req_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Key words as hosts declare them in execd.ini: letters, digits, _ - . */
bool
req_valid_key(const char *k)
{
	if (!*k || strlen(k) > 64)
		return false;
	for (; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
		    (*k >= '0' && *k <= '9') || *k == '_' || *k == '-' || *k == '.'))
			return false;
	return true;
}

static bool
is_true(const char *v)
{
	return !v || strcasecmp(v, "true") == 0 || strcasecmp(v, "1") == 0 ||
	    strcasecmp(v, "y") == 0 || strcasecmp(v, "yes") == 0;
}

static bool
is_false(const char *v)
{
	return v && (strcasecmp(v, "false") == 0 || strcasecmp(v, "0") == 0 ||
	    strcasecmp(v, "n") == 0 || strcasecmp(v, "no") == 0);
}

static void
add_word(char ***v, const char *k)
{
	size_t n = strv_len(*v);
	for (size_t i = 0; i < n; i++)
		if (strcmp((*v)[i], k) == 0)
			return;
	*v = xrealloc(*v, (n + 2) * sizeof **v);
	(*v)[n] = xstrdup(k);
	(*v)[n + 1] = NULL;
}

static void
add_key(struct job_req *r, const char *k)
{
	add_word(&r->keys, k);
}

/* NAME=VALUE as qstat -j shows it, replacing an earlier value of NAME. */
static void
asked_put(struct job_req *r, const char *name, const char *fmt, ...) NOWQ_ATTR_PRINTF(3, 4);

static void
asked_put(struct job_req *r, const char *name, const char *fmt, ...)
{
	size_t n = strlen(name), len = strv_len(r->asked);
	char *v, *e;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&v, fmt, ap) < 0)
		fatalx("out of memory");
	va_end(ap);
	e = xasprintf("%s=%s", name, v);
	free(v);
	for (size_t i = 0; i < len; i++)
		if (strncmp(r->asked[i], name, n) == 0 && r->asked[i][n] == '=') {
			free(r->asked[i]);
			r->asked[i] = e;
			return;
		}
	r->asked = xrealloc(r->asked, (len + 2) * sizeof *r->asked);
	r->asked[len] = e;
	r->asked[len + 1] = NULL;
}

/* A value of the attribute's type, checked as Grid Engine would; sizes and
 * times land in *num.  Texts are checked for length only. */
static int
cx_value(const struct cx_attr *cx, const char *v, int64_t *num, char *err, size_t errlen)
{
	char *end;
	double d;

	switch (cx->type) {
	case CX_MEMORY:
		if (parse_size(v, num) < 0)
			return req_fail(err, errlen, "-l %s=%s: not a size such as 512M or 4G", cx->name, v);
		return 0;
	case CX_TIME:
		if (parse_duration(v, num) < 0)
			return req_fail(err, errlen, "-l %s=%s: not a time such as 3600 or 1:00:00", cx->name, v);
		return 0;
	case CX_INT:
		errno = 0;
		*num = strtoll(v, &end, 10);
		if ((errno || *end || *v < '0' || *v > '9') && strcmp(cx->name, "slots") == 0)
			return req_fail(err, errlen, "-l slots=%s: not a number of slots from 1 to %d",
			    v, JOB_MAX_SLOTS);
		if (errno || *end || *v < '0' || *v > '9')
			return req_fail(err, errlen, "-l %s=%s: not a whole number", cx->name, v);
		return 0;
	case CX_DOUBLE:
		errno = 0;
		d = strtod(v, &end);
		if (errno || *end || !(d >= 0))
			return req_fail(err, errlen, "-l %s=%s: not a number", cx->name, v);
		return 0;
	case CX_BOOL:
		if (!is_true(v) && !is_false(v))
			return req_fail(err, errlen, "-l %s=%s: not TRUE or FALSE", cx->name, v);
		*num = is_true(v);
		return 0;
	case CX_STRING:
	case CX_HOST:
		if (strlen(v) > JOB_MAX_STRING)
			return req_fail(err, errlen, "-l %s: the value is too long", cx->name);
		return 0;
	}
	return 0;
}

/* One attribute of the complex list: checked by its type, then kept where
 * the host is picked or the limit set (complex.c says which), and always
 * in asked, as Grid Engine writes it (times in seconds). */
static int
req_apply_cx(struct job_req *r, const struct cx_attr *cx, const char *v, char *err, size_t errlen)
{
	const char *n = cx->name;
	int64_t num = 0;

	if (!cx->requestable)
		return req_fail(err, errlen, "resource \"%s\" configured as non requestable", n);
	if (cx->type == CX_BOOL && !v)
		v = "TRUE";
	if (!v || !*v)
		return req_fail(err, errlen, "-l %s needs a value", n);
	if (cx_value(cx, v, &num, err, errlen) < 0)
		return -1;
	if (cx->lim != REQ_NOLIM) {
		r->lim[cx->lim] = num;
		r->lim_set |= 1u << cx->lim;
	} else if (strcmp(n, "mem_free") == 0 || strcmp(n, "mem_total") == 0 ||
	    strcmp(n, "virtual_free") == 0 || strcmp(n, "virtual_total") == 0 ||
	    strcmp(n, "h_vmem") == 0 || strcmp(n, "h_rss") == 0 || strcmp(n, "h_rt") == 0 ||
	    strcmp(n, "s_rt") == 0 || strcmp(n, "h_cpu") == 0) {
		/* Workflow tools written for Grid Engine (Nextflow, Snakemake's
		 * profiles) ask for memory as mem_free or vf and h_rss: nowq has
		 * one request against a host's memory and one hard limit (a
		 * cgroup's memory.max counts resident memory, so h_rss is that
		 * limit). */
		int64_t *dst = n[0] == 'm' || n[0] == 'v' ? &r->mem :
		    strcmp(n, "h_rt") == 0 ? &r->h_rt : strcmp(n, "s_rt") == 0 ? &r->s_rt :
		    strcmp(n, "h_cpu") == 0 ? &r->h_cpu : &r->h_vmem;
		if (num == 0)
			return req_fail(err, errlen, "-l %s=%s: must be above 0", n, v);
		*dst = num;
	} else if (strcmp(n, "arch") == 0 || strcmp(n, "hostname") == 0 || strcmp(n, "qname") == 0) {
		char **dst = n[0] == 'a' ? &r->arch : n[0] == 'h' ? &r->hosts : &r->qname;
		free(*dst);
		*dst = xstrdup(v);
	} else if (strcmp(n, "slots") == 0) {
		/* Grid Engine's -l slots=N: N slots, all on one host (as a PE
		 * with allocation_rule $pe_slots would give them). */
		if (num < 1 || num > JOB_MAX_SLOTS)
			return req_fail(err, errlen, "-l slots=%s: not a number of slots from 1 to %d",
			    v, JOB_MAX_SLOTS);
		r->slots = (int)num;
	}
	if (cx->type == CX_TIME)
		asked_put(r, n, "%lld", (long long)num);
	else if (cx->type == CX_BOOL)
		asked_put(r, n, "%s", num ? "TRUE" : "FALSE");
	else
		asked_put(r, n, "%s", v);
	return 0;
}

static int
req_apply(struct job_req *r, const char *name, const char *v, char *err, size_t errlen)
{
	const struct cx_attr *cx = complex_find(name);

	if (cx)
		return req_apply_cx(r, cx, v, err, errlen);
	/* nowq's own: mem=, hosts= (a node-set expression), exclusive. */
	if (strcmp(name, "mem") == 0) {
		if (!v || !*v)
			return req_fail(err, errlen, "-l %s needs a value", name);
		if (parse_size(v, &r->mem) < 0 || r->mem == 0)
			return req_fail(err, errlen, "-l %s=%s: not a size such as 512M or 4G", name, v);
		asked_put(r, name, "%s", v);
		return 0;
	}
	if (strcmp(name, "hosts") == 0) {
		if (!v || !*v || strlen(v) > JOB_MAX_STRING)
			return req_fail(err, errlen, "-l %s needs a value", name);
		free(r->hosts);
		r->hosts = xstrdup(v);
		asked_put(r, name, "%s", v);
		return 0;
	}
	if (strcmp(name, "exclusive") == 0 || strcmp(name, "excl") == 0) {
		r->exclusive = is_true(v);
		asked_put(r, "exclusive", "%s", r->exclusive ? "TRUE" : "FALSE");
		return 0;
	}
	if (!req_valid_key(name))
		return req_fail(err, errlen, "-l: \"%s\" is not a resource name", name);
	if (v && !is_true(v))
		return req_fail(err, errlen, "-l %s=%s: %s is a key a host has or lacks; "
		    "request it as -l %s", name, v, name, name);
	add_key(r, name);
	asked_put(r, name, "TRUE");
	return 0;
}

/* NAME[=VALUE] entries separated by commas; the value of hosts= may hold
 * commas only inside parentheses, so a node-set expression survives. */
int
req_parse(struct job_req *r, const char *list, char *err, size_t errlen)
{
	const char *p = list;

	if (!*list)
		return req_fail(err, errlen, "-l needs a list of resources");
	while (*p) {
		const char *q = p, *eq = NULL;
		int depth = 0;
		char *name, *val = NULL;
		int rc;

		while (*q && (*q != ',' || depth > 0)) {
			if (*q == '=' && !eq)
				eq = q;
			if (*q == '(')
				depth++;
			else if (*q == ')' && depth > 0)
				depth--;
			q++;
		}
		if (q == p)
			return req_fail(err, errlen, "-l: empty entry in \"%s\"", list);
		name = strndup(p, (size_t)((eq ? eq : q) - p));
		if (eq)
			val = strndup(eq + 1, (size_t)(q - eq - 1));
		if (!name || (eq && !val))
			fatalx("out of memory");
		rc = req_apply(r, name, val, err, errlen);
		free(name);
		free(val);
		if (rc < 0)
			return -1;
		p = *q ? q + 1 : q;
	}
	return 0;
}

static json_t *
words_to_json(char *const *v)
{
	json_t *a = json_array();
	for (size_t i = 0; v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

json_t *
host_attrs_to_json(const struct host_attrs *a)
{
	json_t *o = json_object();

	if (a->arch)
		json_object_set_new(o, "arch", json_string(a->arch));
	json_object_set_new(o, "mem", json_integer(a->mem));
	json_object_set_new(o, "rating", json_real(a->rating));
	json_object_set_new(o, "keys", words_to_json(a->keys));
	json_object_set_new(o, "mounts", words_to_json(a->mounts));
	return o;
}

/* A list of at most max words, each accepted by ok. */
static int
words_from_json(const json_t *v, char ***dst, size_t max, bool (*ok)(const char *))
{
	json_t *e;
	size_t i;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > max)
		return -1;
	*dst = xcalloc(json_array_size(v) + 1, sizeof **dst);
	json_array_foreach(v, i, e) {
		if (!json_is_string(e) || !ok(json_string_value(e)))
			return -1;
		(*dst)[i] = xstrdup(json_string_value(e));
	}
	return 0;
}

json_t *
req_to_json(const struct job_req *r)
{
	json_t *o = json_object();

	if (r->mem)
		json_object_set_new(o, "mem", json_integer(r->mem));
	if (r->arch)
		json_object_set_new(o, "arch", json_string(r->arch));
	if (r->keys) {
		json_t *a = json_array();
		for (size_t i = 0; r->keys[i]; i++)
			json_array_append_new(a, json_string(r->keys[i]));
		json_object_set_new(o, "keys", a);
	}
	if (r->hosts)
		json_object_set_new(o, "hosts", json_string(r->hosts));
	if (r->exclusive)
		json_object_set_new(o, "exclusive", json_true());
	if (r->ar)
		json_object_set_new(o, "ar", json_string(r->ar));
	if (r->h_rt)
		json_object_set_new(o, "h_rt", json_integer(r->h_rt));
	if (r->s_rt)
		json_object_set_new(o, "s_rt", json_integer(r->s_rt));
	if (r->h_cpu)
		json_object_set_new(o, "h_cpu", json_integer(r->h_cpu));
	if (r->h_vmem)
		json_object_set_new(o, "h_vmem", json_integer(r->h_vmem));
	if (r->slots)
		json_object_set_new(o, "slots", json_integer(r->slots));
	if (r->qname)
		json_object_set_new(o, "qname", json_string(r->qname));
	if (r->hard_queue)
		json_object_set_new(o, "hard_queue", json_string(r->hard_queue));
	if (r->lim_set) {
		json_t *l = json_object();
		for (int i = 0; i < REQ_NLIM; i++)
			if (r->lim_set & (1u << i))
				json_object_set_new(l, complex_of_lim(i)->name, json_integer(r->lim[i]));
		json_object_set_new(o, "lim", l);
	}
	if (r->asked)
		json_object_set_new(o, "asked", words_to_json(r->asked));
	return o;
}

/* lim: {"s_vmem": bytes, "s_cpu": seconds, ...}, names of complex.c's limits. */
static int
lim_from_json(struct job_req *r, const json_t *o, const char **why)
{
	const char *k;
	json_t *v;

	if (!o)
		return 0;
	if (!json_is_object(o)) {
		*why = "the requested limits are not an object";
		return -1;
	}
	json_object_foreach((json_t *)o, k, v) {
		const struct cx_attr *cx = complex_find(k);
		if (!cx || cx->lim == REQ_NOLIM || strcmp(cx->name, k) != 0) {
			*why = "a requested limit is not one of s_vmem, h_data ...";
			return -1;
		}
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			*why = "a requested limit is not a non-negative integer";
			return -1;
		}
		r->lim[cx->lim] = json_integer_value(v);
		r->lim_set |= 1u << cx->lim;
	}
	return 0;
}

static bool
valid_asked(const char *s)
{
	return strlen(s) <= JOB_MAX_STRING + 64 && strchr(s, '=') != NULL;
}

int
req_from_json(struct job_req *r, const json_t *o, const char **why)
{
	static const char *const nums[] = { "mem", "h_rt", "s_rt", "h_cpu", "h_vmem" };
	int64_t *dst[] = { &r->mem, &r->h_rt, &r->s_rt, &r->h_cpu, &r->h_vmem };
	json_t *v;
	size_t i;

	if (!o || json_is_null(o))
		return 0;
	if (!json_is_object(o)) {
		*why = "the resource request is not an object";
		return -1;
	}
	for (i = 0; i < sizeof nums / sizeof nums[0]; i++) {
		v = json_object_get(o, nums[i]);
		if (!v)
			continue;
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			*why = "a resource request number is not a non-negative integer";
			return -1;
		}
		*dst[i] = json_integer_value(v);
	}
	if (((v = json_object_get(o, "arch")) && (!json_is_string(v) ||
	    json_string_length(v) > JOB_MAX_STRING)) ||
	    ((v = json_object_get(o, "hosts")) && (!json_is_string(v) ||
	    json_string_length(v) > JOB_MAX_STRING)) ||
	    ((v = json_object_get(o, "ar")) && (!json_is_string(v) ||
	    json_string_length(v) == 0 || json_string_length(v) > 255))) {
		*why = "a resource request text is not a short text";
		return -1;
	}
	if ((v = json_object_get(o, "arch")))
		r->arch = xstrdup(json_string_value(v));
	if ((v = json_object_get(o, "hosts")))
		r->hosts = xstrdup(json_string_value(v));
	if ((v = json_object_get(o, "ar")))
		r->ar = xstrdup(json_string_value(v));
	if ((v = json_object_get(o, "slots"))) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > JOB_MAX_SLOTS) {
			*why = "the requested slots are not a number of slots";
			return -1;
		}
		r->slots = (int)json_integer_value(v);
	}
	if ((v = json_object_get(o, "exclusive"))) {
		if (!json_is_boolean(v)) {
			*why = "the exclusive request is not true or false";
			return -1;
		}
		r->exclusive = json_is_true(v);
	}
	if (((v = json_object_get(o, "qname")) && (!json_is_string(v) ||
	    json_string_length(v) == 0 || json_string_length(v) > JOB_MAX_STRING))) {
		*why = "the requested queue is not a short text";
		return -1;
	}
	if (v)
		r->qname = xstrdup(json_string_value(v));
	if (((v = json_object_get(o, "hard_queue")) && (!json_is_string(v) ||
	    json_string_length(v) == 0 || json_string_length(v) > JOB_MAX_STRING))) {
		*why = "the hard requested queue is not a short text";
		return -1;
	}
	if (v)
		r->hard_queue = xstrdup(json_string_value(v));
	if (lim_from_json(r, json_object_get(o, "lim"), why) < 0)
		return -1;
	if (words_from_json(json_object_get(o, "asked"), &r->asked, 256, valid_asked) < 0) {
		*why = "the resource request's asked list is not a short list of NAME=VALUE";
		return -1;
	}
	if ((v = json_object_get(o, "keys"))) {
		json_t *k;
		if (!json_is_array(v) || json_array_size(v) > 256) {
			*why = "the requested keys are not a short list";
			return -1;
		}
		json_array_foreach(v, i, k) {
			if (!json_is_string(k) || !req_valid_key(json_string_value(k))) {
				*why = "a requested key is not a key word";
				return -1;
			}
			add_key(r, json_string_value(k));
		}
	}
	return 0;
}

void
host_attrs_clear(struct host_attrs *a)
{
	free(a->arch);
	strv_free(a->keys);
	strv_free(a->mounts);
	memset(a, 0, sizeof *a);
}

static bool
valid_mount(const char *m)
{
	return m[0] == '/' && strlen(m) < 1024;
}

int
host_attrs_from_json(struct host_attrs *a, const json_t *o, const char **why)
{
	json_t *v;

	/* Load is divided by the rating: a host that sends no attributes
	 * rates 1, never 0. */
	a->rating = 1.0;
	if (!o || json_is_null(o))
		return 0;
	if (!json_is_object(o)) {
		*why = "host attributes are not an object";
		return -1;
	}
	if ((v = json_object_get(o, "arch"))) {
		if (!json_is_string(v) || !req_valid_key(json_string_value(v))) {
			*why = "the host's arch is not a word";
			return -1;
		}
		a->arch = xstrdup(json_string_value(v));
	}
	if ((v = json_object_get(o, "mem"))) {
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			*why = "the host's memory is not a number of bytes";
			return -1;
		}
		a->mem = json_integer_value(v);
	}
	if ((v = json_object_get(o, "rating"))) {
		if (!json_is_number(v) || !(json_number_value(v) > 0) || json_number_value(v) > 1e6) {
			*why = "the host's rating is not a positive number";
			return -1;
		}
		a->rating = json_number_value(v);
	}
	if (words_from_json(json_object_get(o, "keys"), &a->keys, 256, req_valid_key) < 0) {
		*why = "the host's keys are not a short list of words";
		return -1;
	}
	if (words_from_json(json_object_get(o, "mounts"), &a->mounts, 256, valid_mount) < 0) {
		*why = "the host's mounts are not a short list of absolute paths";
		return -1;
	}
	return 0;
}
