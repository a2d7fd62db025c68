/* test_nodeset.c: node-set expressions: golden cases over a fixed set of hosts, precedence, errors, the resolver seam for aliases and reservation names, and random input that must parse or fail cleanly. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/common.h"

/* Is host in the set expr describes? Fails the test on a parse error. */
static bool
in(const char *expr, const char *host)
{
	char err[128];
	struct nodeset *n = nodeset_parse(expr, err, sizeof err);
	bool r;

	if (!n)
		fail_msg("\"%s\" does not parse: %s", expr, err);
	r = nodeset_contains(n, host, NULL, NULL);
	nodeset_free(n);
	return r;
}

/* The members of {a, b, c, node-1} that expr selects, as a string. */
static const char *
members(const char *expr)
{
	static char buf[64];
	const char *hosts[] = { "a", "b", "c", "node-1" };
	buf[0] = '\0';
	for (size_t i = 0; i < 4; i++)
		if (in(expr, hosts[i])) {
			if (*buf)
				strcat(buf, " ");
			strcat(buf, hosts[i]);
		}
	return buf;
}

static void
test_nodeset_basic(void **state)
{
	(void)state;
	assert_string_equal(members("a"), "a");
	assert_string_equal(members("@all"), "a b c node-1");
	assert_string_equal(members("a | b"), "a b");
	assert_string_equal(members("a|b|c"), "a b c");
	assert_string_equal(members("@all - a"), "b c node-1");
	assert_string_equal(members("!a"), "b c node-1");
	assert_string_equal(members("(a | b) & b"), "b");
	assert_string_equal(members("node-1"), "node-1");        /* "-" inside a name */
	assert_string_equal(members("@all -node-1"), "a b c");    /* operator, then a name */
	assert_string_equal(members("(@all)-a"), "b c node-1");
	assert_string_equal(members("  a\t|\tc  "), "a c");
}

static void
test_nodeset_precedence(void **state)
{
	(void)state;
	/* ! binds tighter than &, & tighter than | and -. */
	assert_string_equal(members("!a & !b"), "c node-1");
	assert_string_equal(members("!(a | b)"), "c node-1");
	assert_string_equal(members("a | b & c"), "a");           /* a | (b & c) */
	assert_string_equal(members("(a | b) & c"), "");
	/* | and - share a level and group left to right. */
	assert_string_equal(members("a | b - b"), "a");           /* (a | b) - b */
	assert_string_equal(members("@all - a | a"), "a b c node-1"); /* (@all - a) | a */
	assert_string_equal(members("@all - (a | b)"), "c node-1");
	assert_string_equal(members("!!a"), "a");
}

static void
check_error(const char *expr, const char *want)
{
	char err[128] = "";
	struct nodeset *n = nodeset_parse(expr, err, sizeof err);
	assert_null(n);
	if (!strstr(err, want))
		fail_msg("\"%s\": error \"%s\" does not say \"%s\"", expr, err, want);
}

static void
test_nodeset_errors(void **state)
{
	char deep[300];
	(void)state;
	check_error("", "empty");
	check_error("a |", "missing at the end");
	check_error("(a | b", "missing \")\"");
	check_error("a b", "unexpected \"b\"");
	check_error("a )", "unexpected \")\"");
	check_error("& a", "unexpected \"&\"");
	check_error("@nodes", "unknown host group \"@nodes\"");
	check_error("a ; b", "unexpected \";\"");
	memset(deep, '(', 200);
	strcpy(deep + 200, "a");
	check_error(deep, "nested deeper");
}

static bool
known_ab(void *arg, const char *name)
{
	(void)arg;
	return strcmp(name, "a") == 0 || strcmp(name, "b") == 0;
}

static bool
alias_gpu(void *arg, const char *name, const char *host)
{
	(void)arg;
	/* The resolver seam: "gpu" names hosts a and c. */
	if (strcmp(name, "gpu") == 0)
		return strcmp(host, "a") == 0 || strcmp(host, "c") == 0;
	return strcmp(name, host) == 0;
}

static void
test_nodeset_names(void **state)
{
	char err[128];
	struct nodeset *n = nodeset_parse("(a | zz) - !b | yy", err, sizeof err);
	(void)state;
	assert_non_null(n);
	assert_string_equal(nodeset_unknown(n, known_ab, NULL), "zz");
	nodeset_free(n);
	n = nodeset_parse("gpu - c", err, sizeof err);
	assert_true(nodeset_contains(n, "a", alias_gpu, NULL));
	assert_false(nodeset_contains(n, "c", alias_gpu, NULL));
	assert_false(nodeset_contains(n, "b", alias_gpu, NULL));
	nodeset_free(n);
	n = nodeset_parse("@all", err, sizeof err);
	assert_true(nodeset_is_all(n));
	assert_null(nodeset_unknown(n, known_ab, NULL));
	nodeset_free(n);
}

/* Golden cases: each expression and the hosts it denotes among a, b, c, node-1. */
static const struct {
	const char *expr, *want;
} golden[] = {
	{ "a", "a" },
	{ "b | a", "a b" },
	{ "@all & !c", "a b node-1" },
	{ "@all - a - b", "c node-1" },
	{ "@all - (a - b)", "b c node-1" },
	{ "!(a & b)", "a b c node-1" },
	{ "(a | b) & (b | c)", "b" },
	{ "a & b | c", "c" },                   /* (a & b) | c */
	{ "a | b & c | node-1", "a node-1" },   /* a | (b & c) | node-1 */
	{ "!a | a", "a b c node-1" },
	{ "!a & a", "" },
	{ "((((a))))", "a" },
	{ "c-node-1", "" },                     /* one name: no such host */
	{ "c -node-1", "c" },
	{ "x.y_z", "" },
};

static void
test_nodeset_golden(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++)
		if (strcmp(members(golden[i].expr), golden[i].want) != 0)
			fail_msg("\"%s\" gives \"%s\", expected \"%s\"", golden[i].expr,
			    members(golden[i].expr), golden[i].want);
}

static void
test_nodeset_mentions(void **state)
{
	char err[128];
	struct nodeset *n = nodeset_parse("@all - (maint | x) & !y", err, sizeof err);
	(void)state;
	assert_non_null(n);
	assert_true(nodeset_names(n, "maint"));
	assert_true(nodeset_names(n, "y"));
	assert_false(nodeset_names(n, "all"));
	assert_false(nodeset_names(n, "main"));
	nodeset_free(n);
}

/* Random strings over the grammar's characters: each parses or fails with a
 * message, and never crashes (the sanitizers watch). */
static void
test_nodeset_random(void **state)
{
	static const char alphabet[] = "ab-|&!() @all\t.";
	char expr[40], err[128];
	unsigned seed = 12345;
	(void)state;
	for (int i = 0; i < 20000; i++) {
		int len = (int)(rand_r(&seed) % (sizeof expr - 1));
		struct nodeset *n;
		for (int k = 0; k < len; k++)
			expr[k] = alphabet[rand_r(&seed) % (sizeof alphabet - 1)];
		expr[len] = '\0';
		err[0] = '\0';
		n = nodeset_parse(expr, err, sizeof err);
		if (!n && !err[0])
			fail_msg("\"%s\" failed without a message", expr);
		if (n)
			(void)nodeset_contains(n, "a", NULL, NULL);
		nodeset_free(n);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodeset_basic),
		cmocka_unit_test(test_nodeset_precedence),
		cmocka_unit_test(test_nodeset_errors),
		cmocka_unit_test(test_nodeset_names),
		cmocka_unit_test(test_nodeset_golden),
		cmocka_unit_test(test_nodeset_mentions),
		cmocka_unit_test(test_nodeset_random),
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
