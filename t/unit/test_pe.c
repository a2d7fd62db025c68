/* test_pe.c: the allocation rules of parallel jobs: which hosts get how many slots under $round_robin, $fill_up, $pe_slots and N per host, and the rules' names. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qmaster/qmaster.h"

/* The allocation of nslots over hosts with these free slots, as "2 0 1"
 * (slots per host in order), or "none". */
static const char *
alloc(int rule, int nslots, const int *free, int n)
{
	static char buf[128];
	int out[16], used;

	assert_true(n <= 16);
	used = pe_alloc(rule, nslots, free, n, out);
	if (used == 0) {
		for (int i = 0; i < n; i++)
			assert_int_equal(out[i], 0);
		return "none";
	}
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (out[i])
			used--;
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%d", i ? " " : "", out[i]);
	}
	assert_int_equal(used, 0);
	return buf;
}

static void
test_round_robin(void **state)
{
	int f[] = { 4, 0, 2, 1 };
	(void)state;
	/* Grid Engine's: a slot on each host in turn, in order of preference,
	 * and round again while slots are wanted. */
	assert_string_equal(alloc(PE_ROUND_ROBIN, 3, f, 4), "1 0 1 1");
	assert_string_equal(alloc(PE_ROUND_ROBIN, 2, f, 4), "1 0 1 0");
	assert_string_equal(alloc(PE_ROUND_ROBIN, 1, f, 4), "1 0 0 0");
	assert_string_equal(alloc(PE_ROUND_ROBIN, 4, f, 4), "2 0 1 1");
	assert_string_equal(alloc(PE_ROUND_ROBIN, 6, f, 4), "3 0 2 1");
	assert_string_equal(alloc(PE_ROUND_ROBIN, 7, f, 4), "4 0 2 1");
	/* More than all free slots together: none. */
	assert_string_equal(alloc(PE_ROUND_ROBIN, 8, f, 4), "none");
	assert_string_equal(alloc(PE_ROUND_ROBIN, 1, f, 0), "none");
	/* 1 per host (-n): N distinct hosts or none. */
	assert_string_equal(alloc(1, 3, f, 4), "1 0 1 1");
	assert_string_equal(alloc(1, 4, f, 4), "none");
}

/* -pe NAME MIN-MAX: the most of the range that fits now, or none. */
static void
test_grant(void **state)
{
	int f[] = { 4, 0, 2, 1 }, out[4];
	(void)state;
	assert_int_equal(pe_grant(PE_ROUND_ROBIN, 2, 20, f, 4, out), 7);
	assert_int_equal(out[0] + out[2] + out[3], 7);
	assert_int_equal(pe_grant(PE_ROUND_ROBIN, 2, 5, f, 4, out), 5);
	assert_int_equal(pe_grant(PE_FILL_UP, 8, 9, f, 4, out), 0);
	assert_int_equal(pe_grant(PE_PE_SLOTS, 1, 8, f, 4, out), 4);
	assert_int_equal(out[0], 4);
	assert_int_equal(pe_grant(PE_PE_SLOTS, 5, 8, f, 4, out), 0);
	/* 2 per host: hosts 0 and 2 have two free. */
	assert_int_equal(pe_grant(2, 1, 7, f, 4, out), 4);
	assert_int_equal(pe_grant(2, 5, 7, f, 4, out), 0);
	assert_int_equal(pe_grant(1, 1, 9, f, 4, out), 3);
}

static void
test_fill_up(void **state)
{
	int f[] = { 3, 0, 2, 1 };
	(void)state;
	assert_string_equal(alloc(PE_FILL_UP, 2, f, 4), "2 0 0 0");
	assert_string_equal(alloc(PE_FILL_UP, 3, f, 4), "3 0 0 0");
	assert_string_equal(alloc(PE_FILL_UP, 4, f, 4), "3 0 1 0");
	assert_string_equal(alloc(PE_FILL_UP, 6, f, 4), "3 0 2 1");
	assert_string_equal(alloc(PE_FILL_UP, 7, f, 4), "none");
}

static void
test_pe_slots(void **state)
{
	int f[] = { 1, 3, 4 };
	(void)state;
	/* All on the first host that has room for all. */
	assert_string_equal(alloc(PE_PE_SLOTS, 3, f, 3), "0 3 0");
	assert_string_equal(alloc(PE_PE_SLOTS, 4, f, 3), "0 0 4");
	assert_string_equal(alloc(PE_PE_SLOTS, 5, f, 3), "none");
}

static void
test_per_host(void **state)
{
	int f[] = { 1, 2, 4, 2 };
	(void)state;
	assert_string_equal(alloc(2, 4, f, 4), "0 2 2 0");
	assert_string_equal(alloc(2, 6, f, 4), "0 2 2 2");
	assert_string_equal(alloc(2, 8, f, 4), "none");
	/* Not a multiple of the per-host count: never placed. */
	assert_string_equal(alloc(2, 3, f, 4), "none");
	assert_string_equal(alloc(4, 4, f, 4), "0 0 4 0");
}

static void
test_rule_names(void **state)
{
	char buf[32];
	(void)state;
	assert_int_equal(pe_rule_parse("$round_robin"), PE_ROUND_ROBIN);
	assert_int_equal(pe_rule_parse("round_robin"), PE_ROUND_ROBIN);
	assert_int_equal(pe_rule_parse("$fill_up"), PE_FILL_UP);
	assert_int_equal(pe_rule_parse("fill_up"), PE_FILL_UP);
	assert_int_equal(pe_rule_parse("$pe_slots"), PE_PE_SLOTS);
	assert_int_equal(pe_rule_parse("pack"), PE_PE_SLOTS);
	assert_int_equal(pe_rule_parse("4"), 4);
	assert_int_equal(pe_rule_parse("0"), 0);
	assert_int_equal(pe_rule_parse("-2"), 0);
	assert_int_equal(pe_rule_parse("4x"), 0);
	assert_int_equal(pe_rule_parse(""), 0);
	assert_int_equal(pe_rule_parse("$"), 0);
	assert_int_equal(pe_rule_parse("$spread"), 0);
	assert_int_equal(pe_rule_parse(NULL), 0);
	pe_rule_name(buf, sizeof buf, PE_FILL_UP);
	assert_string_equal(buf, "$fill_up");
	pe_rule_name(buf, sizeof buf, PE_ROUND_ROBIN);
	assert_string_equal(buf, "$round_robin");
	pe_rule_name(buf, sizeof buf, PE_PE_SLOTS);
	assert_string_equal(buf, "$pe_slots");
	pe_rule_name(buf, sizeof buf, 8);
	assert_string_equal(buf, "8");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_robin),
		cmocka_unit_test(test_grant),
		cmocka_unit_test(test_fill_up),
		cmocka_unit_test(test_pe_slots),
		cmocka_unit_test(test_per_host),
		cmocka_unit_test(test_rule_names),
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("pe", tests, NULL, NULL);
}
