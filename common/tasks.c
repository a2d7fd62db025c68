/* tasks.c: array job task ranges (FIRST-LAST:STEP), the pending tasks and the next one. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

static long
tasks_number(const char *s)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > JOB_MAX_TASKS)
		return -1;
	return v;
}

int
task_range_parse(const char *s, struct task_range *r)
{
	char buf[64], *dash, *colon;
	long a, b = -1, st = 1;

	if (!s || strlen(s) >= sizeof buf)
		return -1;
	strcpy(buf, s);
	if ((colon = strchr(buf, ':'))) {
		*colon = '\0';
		if ((st = tasks_number(colon + 1)) < 0)
			return -1;
	}
	if ((dash = strchr(buf, '-'))) {
		*dash = '\0';
		if ((b = tasks_number(dash + 1)) < 0)
			return -1;
	}
	if ((a = tasks_number(buf)) < 0)
		return -1;
	if (b < 0)
		b = a;
	if (b < a || (colon && !dash))
		return -1;
	r->first = (int)a;
	/* Grid Engine keeps the last task a step reaches, not the bound given. */
	r->last = (int)(a + (b - a) / st * st);
	r->step = (int)st;
	return 0;
}

bool
task_in_range(const struct task_range *r, int t)
{
	return r->step > 0 && t >= r->first && t <= r->last && (t - r->first) % r->step == 0;
}

int64_t
task_range_count(const struct task_range *r)
{
	if (r->step < 1 || r->last < r->first)
		return 0;
	return (int64_t)(r->last - r->first) / r->step + 1;
}

/* The index of the first taken id >= t (taken is sorted). */
static size_t
tasks_lower(const int *taken, size_t n, int t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (taken[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
task_next(const struct task_range *r, const int *taken, size_t n, int after)
{
	int64_t t;
	size_t i;

	if (r->step < 1)
		return 0;
	if (after < r->first)
		t = r->first;
	else
		t = r->first + ((int64_t)(after - r->first) / r->step + 1) * r->step;
	i = tasks_lower(taken, n, (int)(t > r->last ? r->last : t));
	while (t <= r->last) {
		while (i < n && taken[i] < t)
			i++;
		if (i == n || taken[i] != t)
			return (int)t;
		t += r->step;
	}
	return 0;
}

int64_t
task_pending_count(const struct task_range *r, const int *taken, size_t n)
{
	int64_t c = task_range_count(r);

	for (size_t i = 0; i < n; i++)
		if (task_in_range(r, taken[i]) && (i == 0 || taken[i] != taken[i - 1]))
			c--;
	return c;
}

static void
tasks_group(char **out, size_t *len, int64_t a, int64_t b, int step)
{
	char buf[64];
	int k;

	if (a == b)
		k = snprintf(buf, sizeof buf, "%s%lld", *len ? "," : "", (long long)a);
	else
		k = snprintf(buf, sizeof buf, "%s%lld-%lld:%d", *len ? "," : "", (long long)a,
		    (long long)b, step);
	*out = xrealloc(*out, *len + (size_t)k + 1);
	memcpy(*out + *len, buf, (size_t)k + 1);
	*len += (size_t)k;
}

char *
task_pending_format(const struct task_range *r, const int *taken, size_t n)
{
	char *out = xstrdup("");
	size_t len = 0;
	int64_t cur = r->first;

	if (r->step < 1)
		return out;
	for (size_t i = 0; i < n && cur <= r->last; i++) {
		if (!task_in_range(r, taken[i]) || taken[i] < cur)
			continue;
		if (taken[i] > cur)
			tasks_group(&out, &len, cur, taken[i] - r->step, r->step);
		cur = (int64_t)taken[i] + r->step;
	}
	if (cur <= r->last)
		tasks_group(&out, &len, cur, r->last, r->step);
	return out;
}

char *
task_list_format(const struct task_range *r, const int *ids, size_t n)
{
	char *out = xstrdup("");
	size_t len = 0, i = 0;

	while (i < n) {
		size_t k = i;
		while (k + 1 < n && (int64_t)ids[k + 1] == (int64_t)ids[k] + r->step)
			k++;
		tasks_group(&out, &len, ids[i], ids[k], r->step);
		i = k + 1;
	}
	return out;
}
