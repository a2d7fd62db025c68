/* cron.c: cron(8) schedules and the next time one fires, in local time across DST changes.
 *
 * The five fields with lists, ranges, steps and names, and the @ shorthands. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common.h"

static const char *const month_names[] = {
	"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec", NULL,
};
static const char *const dow_names[] = { "sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL };

static const struct { const char *name, *spec; } shorthands[] = {
	{ "@hourly", "0 * * * *" }, { "@daily", "0 0 * * *" }, { "@midnight", "0 0 * * *" },
	{ "@weekly", "0 0 * * 0" }, { "@monthly", "0 0 1 * *" }, { "@yearly", "0 0 1 1 *" },
	{ "@annually", "0 0 1 1 *" },
};

static int
cron_fail(char *err, size_t errlen, const char *problem, const char *what, const char *field)
{
	snprintf(err, errlen, "%s \"%s\" (%s)", problem, what, field);
	return -1;
}

/* One number or name of a field; -1 when it is neither. */
static int
field_value(const char *s, size_t n, int lo, int hi, const char *const *names, int name_base)
{
	char buf[8];
	char *end;
	long v;

	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (names && n == 3)
		for (int i = 0; names[i]; i++)
			if (strcasecmp(buf, names[i]) == 0)
				return i + name_base;
	v = strtol(buf, &end, 10);
	if (*end || buf[0] < '0' || buf[0] > '9' || v < lo || v > hi)
		return -1;
	return (int)v;
}

/* "*", "*\/S", "A", "A-B", "A-B/S", "A/S" and comma lists of these. */
static int
field_parse(const char *f, int lo, int hi, const char *const *names, int name_base,
    uint64_t *bits, bool *star, const char *fname, char *err, size_t errlen)
{
	const char *p = f;

	*bits = 0;
	*star = strcmp(f, "*") == 0;
	while (*p) {
		size_t n = strcspn(p, ",");
		const char *dash, *slash, *end = p + n;
		int a, b, step = 1;

		slash = memchr(p, '/', n);
		dash = memchr(p, '-', slash ? (size_t)(slash - p) : n);
		if (slash) {
			step = field_value(slash + 1, (size_t)(end - slash - 1), 1, hi, NULL, 0);
			if (step < 1)
				return cron_fail(err, errlen, "bad step in", f, fname);
		}
		if (*p == '*' && (p + 1 == end || p + 1 == slash)) {
			a = lo;
			b = hi;
		} else {
			const char *first_end = dash ? dash : slash ? slash : end;
			a = field_value(p, (size_t)(first_end - p), lo, hi, names, name_base);
			if (dash)
				b = field_value(dash + 1, (size_t)((slash ? slash : end) - dash - 1), lo, hi,
				    names, name_base);
			else
				b = slash ? hi : a;
			if (a < 0 || b < 0 || b < a)
				return cron_fail(err, errlen, "not a valid field:", f, fname);
		}
		for (int v = a; v <= b; v += step)
			*bits |= 1ULL << v;
		p = *end ? end + 1 : end;
		if (n == 0)
			return cron_fail(err, errlen, "empty entry in", f, fname);
	}
	return 0;
}

int
cron_parse(const char *spec, struct cron_sched *c, char *err, size_t errlen)
{
	char *copy, *fields[6], *save = NULL, *tok;
	int n = 0, rc = -1;
	bool star;

	memset(c, 0, sizeof *c);
	for (size_t i = 0; i < sizeof shorthands / sizeof shorthands[0]; i++)
		if (strcasecmp(spec, shorthands[i].name) == 0)
			spec = shorthands[i].spec;
	if (spec[0] == '@') {
		snprintf(err, errlen, "unknown schedule \"%s\" (want @hourly, @daily, @weekly, "
		    "@monthly or @yearly)", spec);
		return -1;
	}
	copy = xstrdup(spec);
	for (tok = strtok_r(copy, " \t", &save); tok && n < 6; tok = strtok_r(NULL, " \t", &save))
		fields[n++] = tok;
	if (n != 5) {
		snprintf(err, errlen, "a schedule has five fields, MIN HOUR DOM MON DOW, not \"%s\"", spec);
		goto out;
	}
	if (field_parse(fields[0], 0, 59, NULL, 0, &c->min, &star, "minute", err, errlen) < 0 ||
	    field_parse(fields[1], 0, 23, NULL, 0, &c->hour, &star, "hour", err, errlen) < 0 ||
	    field_parse(fields[2], 1, 31, NULL, 0, &c->dom, &c->dom_star, "day of month", err, errlen) < 0 ||
	    field_parse(fields[3], 1, 12, month_names, 1, &c->mon, &star, "month", err, errlen) < 0 ||
	    field_parse(fields[4], 0, 7, dow_names, 0, &c->dow, &c->dow_star, "day of week", err, errlen) < 0)
		goto out;
	/* 7 is Sunday too. */
	if (c->dow & 1ULL << 7)
		c->dow = (c->dow & ~(1ULL << 7)) | 1;
	rc = 0;
out:
	free(copy);
	return rc;
}

/* cron(8): when both day fields are restricted, either may match. */
static bool
day_matches(const struct cron_sched *c, const struct tm *tm)
{
	bool dom = c->dom & 1ULL << tm->tm_mday, dow = c->dow & 1ULL << tm->tm_wday;

	if (!(c->mon & 1ULL << (tm->tm_mon + 1)))
		return false;
	if (c->dom_star && c->dow_star)
		return true;
	if (c->dom_star)
		return dow;
	if (c->dow_star)
		return dom;
	return dom || dow;
}

/*
 * The instant of a local time.  mktime's guess for tm_isdst = -1 depends on
 * its previous calls, so both readings are tried: a time that exists twice
 * (the hour repeated in autumn) is its first instant, so it fires once; a
 * time that does not exist (the hour skipped in spring) is taken as the
 * instant after the gap it falls in, so it still fires once.
 */
static time_t
slot_time(const struct tm *day, int h, int m)
{
	time_t t[2], best = (time_t)-1, late = (time_t)-1;

	for (int dst = 0; dst < 2; dst++) {
		struct tm tm = { .tm_year = day->tm_year, .tm_mon = day->tm_mon,
			.tm_mday = day->tm_mday, .tm_hour = h, .tm_min = m, .tm_isdst = dst };
		t[dst] = mktime(&tm);
		if (t[dst] == (time_t)-1)
			continue;
		if (late == (time_t)-1 || t[dst] > late)
			late = t[dst];
		/* A reading that mktime did not have to move is a real time. */
		if (tm.tm_hour == h && tm.tm_min == m && tm.tm_mday == day->tm_mday &&
		    tm.tm_isdst == dst && (best == (time_t)-1 || t[dst] < best))
			best = t[dst];
	}
	return best != (time_t)-1 ? best : late;
}

/* Days are walked by their local date; eight years cover every leap-day
 * schedule. */
time_t
cron_next(const struct cron_sched *c, time_t after)
{
	struct tm base;

	if (!localtime_r(&after, &base))
		return (time_t)-1;
	for (int d = 0; d < 366 * 8 + 2; d++) {
		struct tm day = { .tm_year = base.tm_year, .tm_mon = base.tm_mon,
			.tm_mday = base.tm_mday + d, .tm_hour = 12, .tm_isdst = -1 };
		time_t best = (time_t)-1;

		if (mktime(&day) == (time_t)-1)
			return (time_t)-1;
		if (!day_matches(c, &day))
			continue;
		for (int h = 0; h < 24; h++) {
			if (!(c->hour & 1ULL << h))
				continue;
			for (int m = 0; m < 60; m++) {
				time_t t;

				if (!(c->min & 1ULL << m))
					continue;
				t = slot_time(&day, h, m);
				if (t != (time_t)-1 && t > after && (best == (time_t)-1 || t < best))
					best = t;
			}
		}
		if (best != (time_t)-1)
			return best;
	}
	return (time_t)-1;
}
