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
	memset(r, 0, sizeof *r);
}

bool
req_empty(const struct job_req *r)
{
	return !r->mem && !r->arch && !r->keys && !r->hosts && !r->exclusive && !r->ar &&
	    !r->h_rt && !r->s_rt && !r->h_cpu && !r->h_vmem && !r->slots;
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

static void
add_key(struct job_req *r, const char *k)
{
	size_t n = strv_len(r->keys);
	for (size_t i = 0; i < n; i++)
		if (strcmp(r->keys[i], k) == 0)
			return;
	r->keys = xrealloc(r->keys, (n + 2) * sizeof *r->keys);
	r->keys[n] = xstrdup(k);
	r->keys[n + 1] = NULL;
}

static int
req_apply(struct job_req *r, const char *name, const char *v, char *err, size_t errlen)
{
	int64_t *size = NULL, *secs = NULL;

	/* Workflow tools written for Grid Engine (Nextflow, Snakemake's
	 * profiles) ask for memory as mem_free and h_rss.  nowq has one
	 * request against a host's memory and one hard limit (a cgroup's
	 * memory.max counts resident memory, so h_rss is that limit). */
	if (strcmp(name, "mem") == 0 || strcmp(name, "mem_total") == 0 ||
	    strcmp(name, "mem_free") == 0)
		size = &r->mem;
	else if (strcmp(name, "h_vmem") == 0 || strcmp(name, "h_rss") == 0)
		size = &r->h_vmem;
	else if (strcmp(name, "h_rt") == 0)
		secs = &r->h_rt;
	else if (strcmp(name, "s_rt") == 0)
		secs = &r->s_rt;
	else if (strcmp(name, "h_cpu") == 0)
		secs = &r->h_cpu;
	if (size || secs) {
		if (!v || !*v)
			return req_fail(err, errlen, "-l %s needs a value", name);
		if (size && (parse_size(v, size) < 0 || *size == 0))
			return req_fail(err, errlen, "-l %s=%s: not a size such as 512M or 4G", name, v);
		if (secs && (parse_duration(v, secs) < 0 || *secs == 0))
			return req_fail(err, errlen, "-l %s=%s: not a time such as 3600 or 1:00:00", name, v);
		return 0;
	}
	if (strcmp(name, "arch") == 0 || strcmp(name, "hosts") == 0 ||
	    strcmp(name, "hostname") == 0 || strcmp(name, "h") == 0) {
		char **dst = strcmp(name, "arch") == 0 ? &r->arch : &r->hosts;
		if (!v || !*v || strlen(v) > JOB_MAX_STRING)
			return req_fail(err, errlen, "-l %s needs a value", name);
		free(*dst);
		*dst = xstrdup(v);
		return 0;
	}
	/* Grid Engine's -l slots=N: N slots, all on one host (as a PE with
	 * allocation_rule $pe_slots would give them). */
	if (strcmp(name, "slots") == 0) {
		char *end;
		long n;
		if (!v || !*v)
			return req_fail(err, errlen, "-l slots needs a number of slots");
		errno = 0;
		n = strtol(v, &end, 10);
		if (errno || *end || *v < '0' || *v > '9' || n < 1 || n > JOB_MAX_SLOTS)
			return req_fail(err, errlen, "-l slots=%s: not a number of slots from 1 to %d",
			    v, JOB_MAX_SLOTS);
		r->slots = (int)n;
		return 0;
	}
	if (strcmp(name, "exclusive") == 0 || strcmp(name, "excl") == 0) {
		r->exclusive = is_true(v);
		return 0;
	}
	if (!req_valid_key(name))
		return req_fail(err, errlen, "-l: \"%s\" is not a resource name", name);
	if (v && !is_true(v))
		return req_fail(err, errlen, "-l %s=%s: %s is a key a host has or lacks; "
		    "request it as -l %s", name, v, name, name);
	add_key(r, name);
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
	return o;
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
