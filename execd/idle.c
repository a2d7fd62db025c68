/* idle.c: whether this host is idle, from a snapshot of readings.
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

/* Monday is 0: struct tm counts from Sunday. */
static int
idle_monday0(int tm_wday)
{
	return (tm_wday + 6) % 7;
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
