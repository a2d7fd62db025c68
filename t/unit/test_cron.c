/* test_cron.c: cron schedules: parsing, the next firing time, and daylight-saving changes under a fixed TZ. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/common.h"

/* New York's rules written out, so no zone file is needed. */
#define TZ_NY "EST5EDT,M3.2.0,M11.1.0"

static time_t
at(int y, int mon, int d, int h, int m, int isdst)
{
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mon - 1, .tm_mday = d, .tm_hour = h,
		.tm_min = m, .tm_isdst = isdst };
	return mktime(&tm);
}

static time_t
next(const char *spec, time_t after)
{
	struct cron_sched c;
	char err[256];

	assert_int_equal(cron_parse(spec, &c, err, sizeof err), 0);
	return cron_next(&c, after);
}

static int
setup(void **state)
{
	(void)state;
	setenv("TZ", TZ_NY, 1);
	tzset();
	return 0;
}

static void
test_parse_errors(void **state)
{
	static const char *const bad[] = { "* * * *", "* * * * * *", "61 * * * *", "* 24 * * *",
		"* * 0 * *", "* * * 13 *", "* * * * 8", "5-1 * * * *", "*/0 * * * *", "a * * * *",
		"* * * foo *", "@sometimes", "1,,2 * * * *", "", NULL };
	struct cron_sched c;
	char err[256];

	(void)state;
	for (int i = 0; bad[i]; i++) {
		err[0] = '\0';
		assert_int_equal(cron_parse(bad[i], &c, err, sizeof err), -1);
		assert_true(err[0] != '\0');
	}
	assert_int_equal(cron_parse("0-59/15 */6 1,15 JAN-jun,dec sun-Sat", &c, err, sizeof err), 0);
	assert_true(c.min == (1ULL << 0 | 1ULL << 15 | 1ULL << 30 | 1ULL << 45));
	assert_true(c.hour == (1ULL << 0 | 1ULL << 6 | 1ULL << 12 | 1ULL << 18));
	assert_true(c.mon & 1ULL << 12);
	assert_false(c.mon & 1ULL << 7);
	assert_int_equal(cron_parse("0 0 * * 7", &c, err, sizeof err), 0);
	assert_true(c.dow == 1);   /* 7 is Sunday */
}

static void
test_next_basic(void **state)
{
	time_t t0 = at(2026, 6, 10, 10, 7, -1);   /* a Wednesday */

	(void)state;
	assert_int_equal(next("*/15 * * * *", t0), at(2026, 6, 10, 10, 15, -1));
	assert_int_equal(next("@hourly", t0), at(2026, 6, 10, 11, 0, -1));
	assert_int_equal(next("@daily", t0), at(2026, 6, 11, 0, 0, -1));
	assert_int_equal(next("@weekly", t0), at(2026, 6, 14, 0, 0, -1));
	assert_int_equal(next("@monthly", t0), at(2026, 7, 1, 0, 0, -1));
	assert_int_equal(next("@yearly", t0), at(2027, 1, 1, 0, 0, -1));
	/* Strictly after: a schedule that matches now fires next time. */
	assert_int_equal(next("7 10 * * *", t0), at(2026, 6, 11, 10, 7, -1));
	/* Only the day of week restricted: Mondays in January. */
	assert_int_equal(next("0 9 * jan mon", t0), at(2027, 1, 4, 9, 0, -1));
	/* Both restricted: either matches (the 13th, or any Friday). */
	assert_int_equal(next("0 0 13 * fri", t0), at(2026, 6, 12, 0, 0, -1));
	assert_int_equal(next("0 0 11 * fri", t0), at(2026, 6, 11, 0, 0, -1));
	/* Leap days come every four years; February 30th never. */
	assert_int_equal(next("0 0 29 2 *", t0), at(2028, 2, 29, 0, 0, -1));
	assert_int_equal(next("0 0 30 2 *", t0), (time_t)-1);
}

static void
test_dst_spring(void **state)
{
	/* 2026-03-08: 02:00 EST becomes 03:00 EDT; 02:30 does not exist. */
	time_t before = at(2026, 3, 7, 12, 0, 0), t;

	(void)state;
	t = next("30 2 * * *", before);
	assert_int_equal(t, at(2026, 3, 8, 3, 30, 1));        /* once, right after the gap */
	assert_int_equal(next("30 2 * * *", t), at(2026, 3, 9, 2, 30, 1));
	/* Hourly: 01:00 EST, then 03:00 EDT one hour later; nothing twice. */
	t = next("0 * * * *", at(2026, 3, 8, 0, 30, 0));
	assert_int_equal(t, at(2026, 3, 8, 1, 0, 0));
	assert_int_equal(next("0 * * * *", t) - t, 3600);
}

static void
test_dst_autumn(void **state)
{
	/* 2026-11-01: 02:00 EDT becomes 01:00 EST; 01:30 happens twice. */
	time_t t;

	(void)state;
	t = next("30 1 * * *", at(2026, 10, 31, 12, 0, 1));
	assert_int_equal(t, at(2026, 11, 1, 1, 30, 1));       /* the first 01:30 */
	assert_int_equal(next("30 1 * * *", t), at(2026, 11, 2, 1, 30, 0));  /* not the second */
	/* Hourly: 01:00 EDT, then 02:00 EST two hours later, once each. */
	t = next("0 * * * *", at(2026, 11, 1, 0, 30, 1));
	assert_int_equal(t, at(2026, 11, 1, 1, 0, 1));
	assert_int_equal(next("0 * * * *", t), at(2026, 11, 1, 2, 0, 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_next_basic),
		cmocka_unit_test(test_dst_spring),
		cmocka_unit_test(test_dst_autumn),
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("cron", tests, setup, NULL);
}
