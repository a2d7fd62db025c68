/* test_tasks.c: array task ranges: parsing -t, the next task to dispatch with a step, and Grid Engine's compact text of the pending tasks. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/common.h"

static struct task_range
range(const char *s)
{
	struct task_range r;
	assert_int_equal(task_range_parse(s, &r), 0);
	return r;
}

static void
test_parse(void **state)
{
	struct task_range r;

	(void)state;
	r = range("1-20:3");
	assert_int_equal(r.first, 1);
	assert_int_equal(r.last, 19);   /* the last task the step reaches */
	assert_int_equal(r.step, 3);
	r = range("7");
	assert_int_equal(r.first, 7);
	assert_int_equal(r.last, 7);
	assert_int_equal(r.step, 1);
	r = range("5-9");
	assert_int_equal(r.last, 9);
	assert_int_equal(task_range_count(&r), 5);
	assert_int_equal(task_range_count(&(struct task_range){ 1, 1000000, 1 }), 1000000);
	assert_int_equal(task_range_parse("0-5", &r), -1);
	assert_int_equal(task_range_parse("9-5", &r), -1);
	assert_int_equal(task_range_parse("5:2", &r), -1);
	assert_int_equal(task_range_parse("1-5:0", &r), -1);
	assert_int_equal(task_range_parse("1-2000000", &r), -1);
	assert_int_equal(task_range_parse("a-b", &r), -1);
	assert_int_equal(task_range_parse("", &r), -1);
	assert_int_equal(task_range_parse("-3", &r), -1);
	assert_int_equal(task_range_parse("1-", &r), -1);
	assert_int_equal(task_range_parse(NULL, &r), -1);
}

static void
test_in_range(void **state)
{
	struct task_range r = range("3-19:4");   /* 3 7 11 15 19 */

	(void)state;
	assert_true(task_in_range(&r, 3));
	assert_true(task_in_range(&r, 19));
	assert_false(task_in_range(&r, 4));
	assert_false(task_in_range(&r, 23));
	assert_false(task_in_range(&r, 1));
}

static void
test_next(void **state)
{
	struct task_range r = range("1-20:3");   /* 1 4 7 10 13 16 19 */
	int taken[] = { 1, 4, 5, 10 };           /* 5 is not a task of r */

	(void)state;
	assert_int_equal(task_next(&r, NULL, 0, 0), 1);
	assert_int_equal(task_next(&r, NULL, 0, 1), 4);
	assert_int_equal(task_next(&r, NULL, 0, 2), 4);
	assert_int_equal(task_next(&r, NULL, 0, 19), 0);
	assert_int_equal(task_next(&r, taken, 4, 0), 7);
	assert_int_equal(task_next(&r, taken, 4, 7), 13);
	assert_int_equal(task_next(&r, taken, 4, 16), 19);
	int all[] = { 1, 4, 7, 10, 13, 16, 19 };
	assert_int_equal(task_next(&r, all, 7, 0), 0);
	assert_int_equal(task_pending_count(&r, all, 7), 0);
	assert_int_equal(task_pending_count(&r, taken, 4), 4);
	assert_int_equal(task_pending_count(&r, NULL, 0), 7);
}

static void
check_fmt(const char *spec, const int *taken, size_t n, const char *want)
{
	struct task_range r = range(spec);
	char *s = task_pending_format(&r, taken, n);
	assert_string_equal(s, want);
	free(s);
}

static void
test_format(void **state)
{
	(void)state;
	check_fmt("1-1000:2", NULL, 0, "1-999:2");
	check_fmt("1-1000", (int[]){ 1, 2, 3, 4 }, 4, "5-1000:1");
	check_fmt("1-9", (int[]){ 1, 2, 4, 5, 6 }, 5, "3,7-9:1");
	check_fmt("3-11:2", (int[]){ 5 }, 1, "3,7-11:2");
	check_fmt("1-5", (int[]){ 1, 2, 3, 4, 5 }, 5, "");
	check_fmt("1-5", (int[]){ 5 }, 1, "1-4:1");
	check_fmt("4", NULL, 0, "4");
	check_fmt("1-20:3", (int[]){ 2, 3, 4, 100 }, 4, "1,7-19:3");
	/* A million tasks and a few taken cost the taken ones only. */
	check_fmt("1-1000000", (int[]){ 500000 }, 1, "1-499999:1,500001-1000000:1");
}

static void
check_list(const char *spec, const int *ids, size_t n, const char *want)
{
	struct task_range r = range(spec);
	char *s = task_list_format(&r, ids, n);
	assert_string_equal(s, want);
	free(s);
}

/* The tasks held on their own, as their qstat line lists them. */
static void
test_list_format(void **state)
{
	(void)state;
	check_list("1-10", NULL, 0, "");
	check_list("1-10", (int[]){ 3 }, 1, "3");
	check_list("1-10", (int[]){ 2, 3 }, 2, "2-3:1");
	check_list("1-10", (int[]){ 1, 3, 4, 5, 9 }, 5, "1,3-5:1,9");
	check_list("1-20:3", (int[]){ 4, 7, 10, 16 }, 4, "4-10:3,16");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_in_range),
		cmocka_unit_test(test_next),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_list_format),
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
