/* idle.c: whether this host is idle, from a snapshot of readings, and idle_windows syntax.
 *
 * Pure functions, no I/O. */
#include "config.h"

#include <assert.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "execd/execd.h"

static const char *idle_day_names[7] = { "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun" };

/* Monday is 0: struct tm counts from Sunday. */
static int
idle_monday0(int tm_wday)
{
	return (tm_wday + 6) % 7;
}

static int
idle_day_parse(const char *s, size_t n)
{
	if (n != 3)
		return -1;
	for (int d = 0; d < 7; d++)
		if (strncasecmp(s, idle_day_names[d], 3) == 0)
			return d;
	return -1;
}

/* "Mon", "Mon-Fri", "Fri-Mon" (wraps over the week's end): a bit set. */
static int
idle_days_parse(const char *tok, uint8_t *days)
{
	const char *dash = strchr(tok, '-');
	int a, b;

	if (!dash) {
		if ((a = idle_day_parse(tok, strlen(tok))) < 0)
			return -1;
		*days |= (uint8_t)(1u << a);
		return 0;
	}
	if ((a = idle_day_parse(tok, (size_t)(dash - tok))) < 0 ||
	    (b = idle_day_parse(dash + 1, strlen(dash + 1))) < 0)
		return -1;
	for (int d = a;; d = (d + 1) % 7) {
		*days |= (uint8_t)(1u << d);
		if (d == b)
			break;
	}
	return 0;
}

/* "H:MM" or "HH:MM", 00:00 to 24:00, in minutes of the day. */
static int
idle_clock_parse(const char *s, size_t n)
{
	int h, m;

	if (n == 4 && isdigit((unsigned char)s[0]) && s[1] == ':' &&
	    isdigit((unsigned char)s[2]) && isdigit((unsigned char)s[3]))
		h = s[0] - '0', m = (s[2] - '0') * 10 + (s[3] - '0');
	else if (n == 5 && isdigit((unsigned char)s[0]) && isdigit((unsigned char)s[1]) &&
	    s[2] == ':' && isdigit((unsigned char)s[3]) && isdigit((unsigned char)s[4]))
		h = (s[0] - '0') * 10 + (s[1] - '0'), m = (s[3] - '0') * 10 + (s[4] - '0');
	else
		return -1;
	if (m > 59 || h > 24 || (h == 24 && m != 0))
		return -1;
	return h * 60 + m;
}

static bool
idle_is_clock_range(const char *tok)
{
	return isdigit((unsigned char)tok[0]) && strchr(tok, ':') != NULL;
}

static int
idle_clock_range_parse(const char *tok, int16_t *start, int16_t *end)
{
	const char *dash = strchr(tok, '-');
	int a, b;

	if (!dash || (a = idle_clock_parse(tok, (size_t)(dash - tok))) < 0 ||
	    (b = idle_clock_parse(dash + 1, strlen(dash + 1))) < 0 || a == 24 * 60)
		return -1;
	if (a == b)
		return -2;
	*start = (int16_t)a;
	*end = (int16_t)b;
	return 0;
}

static void
idle_windows_add(struct idle_window **w, int *n, uint8_t days, int start, int end)
{
	*w = xrealloc(*w, (size_t)(*n + 1) * sizeof **w);
	(*w)[*n] = (struct idle_window){ days, (int16_t)start, (int16_t)end };
	(*n)++;
}

/*
 * Tokens are separated by commas and blanks.  Day items (Mon, Mon-Fri)
 * gather into a set; a clock range (19:00-07:00) closes a window over the
 * days gathered since the last range, or over the last range's days when
 * none were named in between, or over every day when no day was named at
 * all.  Days left at the end without a range are whole days.  So
 * "Mon-Fri 19:00-07:00, Sat-Sun" is weekday nights plus the weekend, and
 * "Mon,Wed 18:00-08:00" is two evenings, not Monday plus Wednesday evening.
 */
int
idle_windows_parse(const char *text, struct idle_window **out, int *nout, char *err, size_t errlen)
{
	char *copy = xstrdup(text), *tok, *save = NULL;
	struct idle_window *w = NULL;
	uint8_t days = 0, last = IDLE_ALL_DAYS;
	bool fresh = true;    /* the next day item starts a new set */
	int n = 0, r;
	int16_t start, end;

	for (tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		if (idle_is_clock_range(tok)) {
			if ((r = idle_clock_range_parse(tok, &start, &end)) < 0) {
				snprintf(err, errlen, r == -2 ? "\"%s\" is an empty time range" :
				    "\"%s\" is not a time range HH:MM-HH:MM (00:00 to 24:00)", tok);
				goto bad;
			}
			if (days)
				last = days;
			idle_windows_add(&w, &n, last, start, end);
			days = 0;
			fresh = true;
			continue;
		}
		if (fresh)
			days = 0;
		fresh = false;
		if (idle_days_parse(tok, &days) < 0) {
			snprintf(err, errlen, "\"%s\" is neither a day (Mon to Sun), a range of days "
			    "(Mon-Fri) nor a time range (19:00-07:00)", tok);
			goto bad;
		}
	}
	if (days)
		idle_windows_add(&w, &n, days, 0, 24 * 60);
	free(copy);
	if (n == 0) {
		snprintf(err, errlen, "no window given");
		return -1;
	}
	*out = w;
	*nout = n;
	return 0;
bad:
	free(copy);
	free(w);
	return -1;
}

/* A window belongs to the day it starts on: Fri 19:00-07:00 runs into
 * Saturday morning, and Monday 03:00 is in no window named Mon-Fri. */
bool
idle_in_windows(const struct idle_window *w, int n, time_t now)
{
	struct tm tm;
	int day, prev, m;

	if (!localtime_r(&now, &tm))
		return false;
	day = idle_monday0(tm.tm_wday);
	prev = (day + 6) % 7;
	m = tm.tm_hour * 60 + tm.tm_min;
	for (int i = 0; i < n; i++) {
		if (w[i].start < w[i].end) {
			if ((w[i].days & (1u << day)) && m >= w[i].start && m < w[i].end)
				return true;
		} else if (((w[i].days & (1u << day)) && m >= w[i].start) ||
		    ((w[i].days & (1u << prev)) && m < w[i].end)) {
			return true;
		}
	}
	return false;
}

static void
idle_why_add(char *why, size_t whylen, const char *fmt, ...) NOWQ_ATTR_PRINTF(3, 4);

/* Appends "; reason": a busy host names every policy that holds it back. */
static void
idle_why_add(char *why, size_t whylen, const char *fmt, ...)
{
	size_t len = strlen(why);
	va_list ap;

	if (len && len + 2 < whylen) {
		memcpy(why + len, "; ", 3);
		len += 2;
	}
	if (len + 1 >= whylen)
		return;
	va_start(ap, fmt);
	vsnprintf(why + len, whylen - len, fmt, ap);
	va_end(ap);
}

/*
 * The one verdict every policy feeds: the host is idle only if every
 * configured policy says so.  When busy, why lists each policy that says
 * busy, in the order of execd.ini(5); when idle, it says why briefly.
 */
bool
idle_decide(const struct execd_conf *c, const struct idle_inputs *in, char *why, size_t whylen)
{
	assert(whylen > 0);
	why[0] = '\0';
	if (c->load_threshold > 0 && in->load_known && in->np_load >= c->load_threshold)
		idle_why_add(why, whylen, "load %.2f above %.2f", in->np_load, c->load_threshold);
	if (c->idle_keyboard > 0 && in->last_input > 0 &&
	    in->now - in->last_input < (time_t)c->idle_keyboard * 60) {
		time_t ago = in->now > in->last_input ? in->now - in->last_input : 0;
		idle_why_add(why, whylen, "keyboard used %lld min ago", (long long)(ago / 60));
	}
	if (c->idle_no_users && in->nusers > 0) {
		if (in->nusers == 1)
			idle_why_add(why, whylen, "user %s logged in", in->user);
		else
			idle_why_add(why, whylen, "user %s and %d other%s logged in", in->user,
			    in->nusers - 1, in->nusers == 2 ? "" : "s");
	}
	if (c->idle_nwindows > 0 && !idle_in_windows(c->idle_windows, c->idle_nwindows, in->now))
		idle_why_add(why, whylen, "outside %s", c->idle_windows_text);
	if (c->idle_command) {
		if (in->command == IDLE_CMD_UNKNOWN)
			idle_why_add(why, whylen, "site command has not answered yet");
		else if (in->command == IDLE_CMD_BUSY)
			idle_why_add(why, whylen, "site command said busy%s%s",
			    in->command_why[0] ? " " : "", in->command_why);
	}
	if (why[0])
		return false;
	if (c->load_threshold > 0 && !in->load_known)
		snprintf(why, whylen, "load unknown");
	else if (c->load_threshold > 0)
		snprintf(why, whylen, "load %.2f below %.2f", in->np_load, c->load_threshold);
	else
		snprintf(why, whylen, "no policy says busy");
	return true;
}

const char *
idle_owner_returns_name(enum owner_returns o)
{
	switch (o) {
	case OWNER_SUSPEND: return "suspend";
	case OWNER_VACATE:  return "vacate";
	case OWNER_FINISH:  return "finish";
	}
	return "?";
}
