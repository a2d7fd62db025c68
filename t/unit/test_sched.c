/* test_sched.c: node-set expressions (parsing, precedence, errors), host matching and its reasons, and the dispatch order. */
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

/* A job and hosts for matching. */
static char *matlab_keys[] = { "matlab", NULL };
static char *fpu_keys[] = { "fpu", NULL };
static struct host_attrs big = { "x86_64", 64LL << 30, 1.0, matlab_keys, NULL };
static struct host_attrs small = { "aarch64", 4LL << 30, 2.0, fpu_keys, NULL };

static struct match_host
host(const char *name, const struct host_attrs *a)
{
	return (struct match_host){ name, a, 4, 4, 0, false, false, false, false };
}

static void
test_match_attrs(void **state)
{
	struct job j = { .id = 1, .slots = 1, .uid = 1000, .owner = "ann" };
	struct match_host hb = host("big", &big), hs = host("small", &small);
	const char *key = NULL;
	char *keys[] = { "matlab", NULL };
	(void)state;

	assert_int_equal(match_host(&j, NULL, NULL, &hs, true, &key), MW_OK);
	j.req.mem = 8LL << 30;
	assert_int_equal(match_host(&j, NULL, NULL, &hs, false, &key), MW_MEM);
	assert_int_equal(match_host(&j, NULL, NULL, &hb, false, &key), MW_OK);
	j.req.mem = 64LL << 30;                   /* equal is enough */
	assert_int_equal(match_host(&j, NULL, NULL, &hb, false, &key), MW_OK);
	j.req.mem = 0;
	j.req.arch = "aarch64";
	assert_int_equal(match_host(&j, NULL, NULL, &hb, false, &key), MW_ARCH);
	assert_int_equal(match_host(&j, NULL, NULL, &hs, false, &key), MW_OK);
	j.req.arch = NULL;
	j.req.keys = keys;
	assert_int_equal(match_host(&j, NULL, NULL, &hs, false, &key), MW_KEY);
	assert_string_equal(key, "matlab");
	assert_int_equal(match_host(&j, NULL, NULL, &hb, false, &key), MW_OK);
	j.req.keys = NULL;
	j.slots = 5;
	assert_int_equal(match_host(&j, NULL, NULL, &hb, false, &key), MW_SLOTS);
	j.slots = 1;
	/* A personal execd runs only its own user's jobs. */
	hb.uid = 1001;
	assert_int_equal(match_host(&j, NULL, NULL, &hb, false, &key), MW_USER);
	hb.uid = 1000;
	assert_int_equal(match_host(&j, NULL, NULL, &hb, false, &key), MW_OK);
}

static void
test_match_sets_and_state(void **state)
{
	struct job j = { .id = 1, .slots = 1, .owner = "ann" };
	struct match_host hb = host("big", &big), hs = host("small", &small);
	struct qm_queue q = { .name = "gpu.q", .hosts = "big" };
	char err[64];
	struct nodeset *jn = nodeset_parse("!big", err, sizeof err);
	const char *key;
	(void)state;

	q.hosts_ns = nodeset_parse(q.hosts, err, sizeof err);
	assert_int_equal(match_host(&j, NULL, &q, &hs, false, &key), MW_QUEUE_HOSTS);
	assert_int_equal(match_host(&j, NULL, &q, &hb, false, &key), MW_OK);
	assert_int_equal(match_host(&j, jn, &q, &hb, false, &key), MW_HOSTS);
	assert_int_equal(match_host(&j, jn, NULL, &hs, false, &key), MW_OK);
	/* State counts only when asked whether it can start now. */
	hb.disabled = true;
	assert_int_equal(match_host(&j, NULL, &q, &hb, false, &key), MW_OK);
	assert_int_equal(match_host(&j, NULL, &q, &hb, true, &key), MW_DISABLED);
	hb.disabled = false;
	hb.lost = true;
	assert_int_equal(match_host(&j, NULL, &q, &hb, true, &key), MW_LOST);
	hb.lost = false;
	q.disabled = true;
	assert_int_equal(match_host(&j, NULL, &q, &hb, true, &key), MW_QUEUE_DISABLED);
	q.disabled = false;
	hb.free = 0;
	assert_int_equal(match_host(&j, NULL, &q, &hb, true, &key), MW_BUSY);
	hb.free = 3;
	hb.has_jobs = true;
	assert_int_equal(match_host(&j, NULL, &q, &hb, true, &key), MW_OK);
	j.req.exclusive = true;
	assert_int_equal(match_host(&j, NULL, &q, &hb, true, &key), MW_EXCLUSIVE);
	hb.has_jobs = false;
	assert_int_equal(match_host(&j, NULL, &q, &hb, true, &key), MW_OK);
	j.req.exclusive = false;
	hb.has_exclusive = true;
	assert_int_equal(match_host(&j, NULL, &q, &hb, true, &key), MW_EXCLUSIVE);
	nodeset_free(jn);
	nodeset_free(q.hosts_ns);
}

static void
test_match_reasons(void **state)
{
	struct job j = { .id = 1, .slots = 1, .owner = "ann" };
	struct qm_queue q = { .name = "all.q", .hosts = "@all" };
	char buf[160];
	(void)state;

	match_reason(buf, sizeof buf, MW_KEY, &j, &q, "matlab", "idle host");
	assert_string_equal(buf, "no idle host has key matlab");
	j.req.mem = 64LL << 30;
	match_reason(buf, sizeof buf, MW_MEM, &j, &q, NULL, "host");
	assert_string_equal(buf, "no host has 64G of memory");
	j.req.arch = "sparc";
	match_reason(buf, sizeof buf, MW_ARCH, &j, &q, NULL, "host");
	assert_string_equal(buf, "no host has arch sparc");
	match_reason(buf, sizeof buf, MW_QUEUE_DISABLED, &j, &q, NULL, "host");
	assert_string_equal(buf, "queue all.q is disabled");
	match_fmt_size(buf, sizeof buf, 1000);
	assert_string_equal(buf, "1000");
	match_fmt_size(buf, sizeof buf, 512LL << 20);
	assert_string_equal(buf, "512M");
	match_fmt_time(buf, sizeof buf, 3723);
	assert_string_equal(buf, "1:02:03");
}

static void
test_order(void **state)
{
	struct job a = { .id = 1, .prio = 0 }, b = { .id = 2, .prio = 0 }, c = { .id = 3, .prio = 10 };
	(void)state;
	/* Submission order among equals. */
	assert_true(match_job_cmp(&a, 0, &b, 0) < 0);
	assert_true(match_job_cmp(&b, 0, &a, 0) > 0);
	assert_int_equal(match_job_cmp(&a, 0, &a, 0), 0);
	/* Job priority before submission order. */
	assert_true(match_job_cmp(&c, 0, &a, 0) < 0);
	/* Queue priority before job priority. */
	assert_true(match_job_cmp(&b, 5, &c, 0) < 0);
	assert_true(match_job_cmp(&c, -1, &a, 0) > 0);
	/* Hosts: load per rating, lower first. */
	assert_true(match_host_cmp(1.0, 2.0, 0.8, 1.0) < 0);   /* 0.5 before 0.8 */
	assert_true(match_host_cmp(0.8, 1.0, 1.0, 2.0) > 0);
	assert_int_equal(match_host_cmp(1.0, 1.0, 2.0, 2.0), 0);
	assert_true(match_host_cmp(0.5, 0, 1.0, 0) < 0);       /* no rating counts as 1 */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodeset_basic),
		cmocka_unit_test(test_nodeset_precedence),
		cmocka_unit_test(test_nodeset_errors),
		cmocka_unit_test(test_nodeset_names),
		cmocka_unit_test(test_match_attrs),
		cmocka_unit_test(test_match_sets_and_state),
		cmocka_unit_test(test_match_reasons),
		cmocka_unit_test(test_order),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("sched", tests, NULL, NULL);
}
