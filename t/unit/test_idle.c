/* test_idle.c: the idle policies decided from injected readings and a fake clock: windows, keyboard minutes, users, the site command, their combination and reasons. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "execd/execd.h"

/* A local time in the week of Monday 2026-11-16 (TZ=UTC in these tests):
 * day 0 is Monday. */
static time_t
at(int day, int hour, int min)
{
	struct tm tm = { .tm_year = 2026 - 1900, .tm_mon = 10, .tm_mday = 16 + day,
	    .tm_hour = hour, .tm_min = min, .tm_isdst = -1 };
	return mktime(&tm);
}

static int
setup_tz(void **state)
{
	setenv("TZ", "UTC", 1);
	tzset();
	return 0;
}

/* A policy with everything off, as conf_load leaves it. */
static void
conf_off(struct execd_conf *c)
{
	memset(c, 0, sizeof *c);
	c->owner_returns = OWNER_FINISH;
}

static void
inputs_quiet(struct idle_inputs *in, time_t now)
{
	memset(in, 0, sizeof *in);
	in->now = now;
	in->load_known = true;
	in->np_load = 0.1;
	in->command = IDLE_CMD_IDLE;
}

static void
set_windows(struct execd_conf *c, const char *text)
{
	char err[256];
	free(c->idle_windows);
	c->idle_windows = NULL;
	if (idle_windows_parse(text, &c->idle_windows, &c->idle_nwindows, err, sizeof err) < 0)
		fail_msg("cannot parse \"%s\": %s", text, err);
	c->idle_windows_text = (char *)text;
}

static bool
in_windows(const char *text, time_t t)
{
	struct idle_window *w = NULL;
	char err[256];
	int n = 0;
	bool r;

	if (idle_windows_parse(text, &w, &n, err, sizeof err) < 0)
		fail_msg("cannot parse \"%s\": %s", text, err);
	r = idle_in_windows(w, n, t);
	free(w);
	return r;
}

static void
test_fake_clock_is_monday(void **state)
{
	time_t t = at(0, 12, 0);
	struct tm tm;
	localtime_r(&t, &tm);
	assert_int_equal(tm.tm_wday, 1);
	localtime_r(&(time_t){ at(6, 12, 0) }, &tm);
	assert_int_equal(tm.tm_wday, 0);
}

static void
test_windows_weekdays(void **state)
{
	assert_true(in_windows("Mon-Fri 09:00-17:00", at(0, 9, 0)));
	assert_true(in_windows("Mon-Fri 09:00-17:00", at(4, 16, 59)));
	assert_false(in_windows("Mon-Fri 09:00-17:00", at(4, 17, 0)));
	assert_false(in_windows("Mon-Fri 09:00-17:00", at(0, 8, 59)));
	assert_false(in_windows("Mon-Fri 09:00-17:00", at(5, 12, 0)));
	assert_false(in_windows("Mon-Fri 09:00-17:00", at(6, 12, 0)));
	/* Lists, a single day, case, and a range over the week's end. */
	assert_true(in_windows("mon,WED 10:00-11:00", at(2, 10, 30)));
	assert_false(in_windows("Mon,Wed 10:00-11:00", at(1, 10, 30)));
	assert_true(in_windows("Fri-Mon", at(6, 3, 0)));
	assert_true(in_windows("Fri-Mon", at(0, 23, 59)));
	assert_false(in_windows("Fri-Mon", at(1, 0, 0)));
	/* No days: every day. */
	assert_true(in_windows("12:00-13:00", at(3, 12, 30)));
	assert_true(in_windows("12:00-13:00", at(6, 12, 30)));
	assert_false(in_windows("12:00-13:00", at(6, 13, 0)));
	/* Whole days until 24:00. */
	assert_true(in_windows("Sat 00:00-24:00", at(5, 23, 59)));
	assert_false(in_windows("Sat 00:00-24:00", at(6, 0, 0)));
}

static void
test_windows_cross_midnight(void **state)
{
	const char *w = "Mon-Fri 19:00-07:00, Sat-Sun";

	assert_true(in_windows(w, at(0, 19, 0)));
	assert_true(in_windows(w, at(0, 23, 59)));
	assert_true(in_windows(w, at(1, 0, 0)));     /* Monday's night, Tuesday morning */
	assert_true(in_windows(w, at(1, 6, 59)));
	assert_false(in_windows(w, at(1, 7, 0)));
	assert_false(in_windows(w, at(1, 18, 59)));
	/* Friday's night runs into Saturday, which is whole anyway. */
	assert_true(in_windows(w, at(5, 3, 0)));
	assert_true(in_windows(w, at(6, 23, 59)));
	/* A window belongs to the day it starts on: Monday 03:00 follows
	 * Sunday, which has no night window, only its whole day until 24:00. */
	assert_false(in_windows(w, at(0, 3, 0)));
	assert_true(in_windows("Sun-Fri 19:00-07:00", at(0, 3, 0)));
	/* Only Friday night: Saturday morning yes, Friday morning no. */
	assert_true(in_windows("Fri 22:00-02:00", at(5, 1, 59)));
	assert_false(in_windows("Fri 22:00-02:00", at(5, 2, 0)));
	assert_false(in_windows("Fri 22:00-02:00", at(4, 1, 0)));
	assert_true(in_windows("Fri 22:00-02:00", at(4, 22, 0)));
}

static void
test_windows_days_carry_over(void **state)
{
	/* A second range without new days reuses the first one's days. */
	const char *w = "Mon-Fri 08:00-09:00 12:00-13:00, Sun";

	assert_true(in_windows(w, at(2, 12, 30)));
	assert_false(in_windows(w, at(5, 12, 30)));
	assert_true(in_windows(w, at(6, 15, 0)));
	assert_false(in_windows(w, at(2, 10, 0)));
}

static void
test_windows_bad(void **state)
{
	const char *bad[] = { "", "Mon-Fry", "Funday", "25:00-26:00", "Mon 9-17", "Mon 09:00-09:00",
	    "Mon 09:60-10:00", "Mon 24:00-01:00", "Mon 09:00", "Mon 09:00-", "Mon--Fri",
	    "Mon 09:00-17:00x", "," };
	struct idle_window *w = NULL;
	char err[256];
	int n = 0;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		if (idle_windows_parse(bad[i], &w, &n, err, sizeof err) == 0)
			fail_msg("\"%s\" was accepted", bad[i]);
		assert_true(err[0] != '\0');
	}
	assert_int_equal(idle_windows_parse("Mon 09:00-09:00", &w, &n, err, sizeof err), -1);
	assert_non_null(strstr(err, "empty"));
}

static void
test_load(void **state)
{
	struct execd_conf c;
	struct idle_inputs in;
	char why[256];

	conf_off(&c);
	c.load_threshold = 1.75;
	inputs_quiet(&in, at(0, 12, 0));
	in.np_load = 3.1;
	assert_false(idle_decide(&c, &in, why, sizeof why));
	assert_string_equal(why, "load 3.10 above 1.75");
	in.np_load = 1.2;
	assert_true(idle_decide(&c, &in, why, sizeof why));
	assert_string_equal(why, "load 1.20 below 1.75");
	/* No load figure holds no work back. */
	in.load_known = false;
	in.np_load = 9;
	assert_true(idle_decide(&c, &in, why, sizeof why));
	c.load_threshold = 0;
	in.load_known = true;
	assert_true(idle_decide(&c, &in, why, sizeof why));
}

static void
test_keyboard_minutes(void **state)
{
	struct execd_conf c;
	struct idle_inputs in;
	char why[256];
	time_t now = at(2, 10, 0);

	conf_off(&c);
	c.idle_keyboard = 15;
	inputs_quiet(&in, now);
	in.last_input = now - 2 * 60 - 30;
	assert_false(idle_decide(&c, &in, why, sizeof why));
	assert_string_equal(why, "keyboard used 2 min ago");
	in.last_input = now;
	assert_false(idle_decide(&c, &in, why, sizeof why));
	assert_string_equal(why, "keyboard used 0 min ago");
	in.last_input = now - 15 * 60 + 1;
	assert_false(idle_decide(&c, &in, why, sizeof why));
	assert_string_equal(why, "keyboard used 14 min ago");
	in.last_input = now - 15 * 60;
	assert_true(idle_decide(&c, &in, why, sizeof why));
	/* No input device at all: nobody types. */
	in.last_input = 0;
	assert_true(idle_decide(&c, &in, why, sizeof why));
	/* A device stamped in the future (clock stepped back) is "just now". */
	in.last_input = now + 100;
	assert_false(idle_decide(&c, &in, why, sizeof why));
	assert_string_equal(why, "keyboard used 0 min ago");
	/* Off: any activity is fine. */
	c.idle_keyboard = 0;
	in.last_input = now;
	assert_true(idle_decide(&c, &in, why, sizeof why));
}

static void
test_users(void **state)
{
	struct execd_conf c;
	struct idle_inputs in;
	char why[256];

	conf_off(&c);
	inputs_quiet(&in, at(0, 12, 0));
	in.nusers = 1;
	snprintf(in.user, sizeof in.user, "alice");
	assert_true(idle_decide(&c, &in, why, sizeof why));
	c.idle_no_users = true;
	assert_false(idle_decide(&c, &in, why, sizeof why));
	assert_string_equal(why, "user alice logged in");
	in.nusers = 3;
	assert_false(idle_decide(&c, &in, why, sizeof why));
	assert_string_equal(why, "user alice and 2 others logged in");
	in.nusers = 0;
	assert_true(idle_decide(&c, &in, why, sizeof why));
}

static void
test_windows_policy(void **state)
{
	struct execd_conf c;
	struct idle_inputs in;
	char why[256];

	conf_off(&c);
	set_windows(&c, "Mon-Fri 19:00-07:00, Sat-Sun");
	inputs_quiet(&in, at(2, 12, 0));
	assert_false(idle_decide(&c, &in, why, sizeof why));
	assert_string_equal(why, "outside Mon-Fri 19:00-07:00, Sat-Sun");
	in.now = at(2, 20, 0);
	assert_true(idle_decide(&c, &in, why, sizeof why));
	free(c.idle_windows);
}

static void
test_command(void **state)
{
	struct execd_conf c;
	struct idle_inputs in;
	char why[256];

	conf_off(&c);
	c.idle_command = (char *)"/usr/local/sbin/is-idle";
	inputs_quiet(&in, at(0, 12, 0));
	in.command = IDLE_CMD_UNKNOWN;
	assert_false(idle_decide(&c, &in, why, sizeof why));
	assert_string_equal(why, "site command has not answered yet");
	in.command = IDLE_CMD_BUSY;
	assert_false(idle_decide(&c, &in, why, sizeof why));
	assert_string_equal(why, "site command said busy");
	snprintf(in.command_why, sizeof in.command_why, "(exit status 1)");
	assert_false(idle_decide(&c, &in, why, sizeof why));
	assert_string_equal(why, "site command said busy (exit status 1)");
	in.command = IDLE_CMD_IDLE;
	assert_true(idle_decide(&c, &in, why, sizeof why));
	/* Without a command its verdict does not matter. */
	c.idle_command = NULL;
	in.command = IDLE_CMD_BUSY;
	assert_true(idle_decide(&c, &in, why, sizeof why));
}

static void
test_combination(void **state)
{
	struct execd_conf c;
	struct idle_inputs in;
	char why[256], small[40];
	time_t now = at(4, 18, 0);

	conf_off(&c);
	c.load_threshold = 1.75;
	c.idle_keyboard = 10;
	c.idle_no_users = true;
	set_windows(&c, "Mon-Fri 19:00-07:00");
	c.idle_command = (char *)"/bin/true";

	/* Everything quiet, inside the window: idle. */
	inputs_quiet(&in, at(4, 20, 0));
	assert_true(idle_decide(&c, &in, why, sizeof why));
	/* Each policy alone makes it busy. */
	in.np_load = 2;
	assert_false(idle_decide(&c, &in, why, sizeof why));
	in.np_load = 0.1;
	in.last_input = in.now - 60;
	assert_false(idle_decide(&c, &in, why, sizeof why));
	in.last_input = 0;
	in.nusers = 1;
	snprintf(in.user, sizeof in.user, "bob");
	assert_false(idle_decide(&c, &in, why, sizeof why));
	assert_string_equal(why, "user bob logged in");
	in.nusers = 0;
	in.command = IDLE_CMD_BUSY;
	assert_false(idle_decide(&c, &in, why, sizeof why));
	in.command = IDLE_CMD_IDLE;
	in.now = now;
	assert_false(idle_decide(&c, &in, why, sizeof why));
	assert_string_equal(why, "outside Mon-Fri 19:00-07:00");

	/* All at once: every reason, in the order of execd.ini(5). */
	in.np_load = 3.1;
	in.last_input = now - 5 * 60;
	in.nusers = 2;
	snprintf(in.user, sizeof in.user, "alice");
	in.command = IDLE_CMD_BUSY;
	assert_false(idle_decide(&c, &in, why, sizeof why));
	assert_string_equal(why, "load 3.10 above 1.75; keyboard used 5 min ago; "
	    "user alice and 1 other logged in; outside Mon-Fri 19:00-07:00; site command said busy");
	/* A short buffer is cut, never overrun. */
	assert_false(idle_decide(&c, &in, small, sizeof small));
	assert_true(strlen(small) < sizeof small);
	assert_memory_equal(small, "load 3.10 above 1.75; ", 22);
	free(c.idle_windows);
}

static void
test_owner_returns_names(void **state)
{
	assert_string_equal(idle_owner_returns_name(OWNER_FINISH), "finish");
	assert_string_equal(idle_owner_returns_name(OWNER_SUSPEND), "suspend");
	assert_string_equal(idle_owner_returns_name(OWNER_VACATE), "vacate");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fake_clock_is_monday),
		cmocka_unit_test(test_windows_weekdays),
		cmocka_unit_test(test_windows_cross_midnight),
		cmocka_unit_test(test_windows_days_carry_over),
		cmocka_unit_test(test_windows_bad),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_keyboard_minutes),
		cmocka_unit_test(test_users),
		cmocka_unit_test(test_windows_policy),
		cmocka_unit_test(test_command),
		cmocka_unit_test(test_combination),
		cmocka_unit_test(test_owner_returns_names),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, setup_tz, NULL);
}
