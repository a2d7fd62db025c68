/* test_qhost_fmt.c: qhost's table, its -F attribute lines and -j job lines, column for column. */
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
#include "client/client.h"

static json_t *
load(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, 0, &e);
	assert_non_null(v);
	return v;
}

static char *
render(const json_t *hosts, const struct qhost_view *v)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	assert_non_null(fp);
	qhost_print(fp, hosts, v);
	fclose(fp);
	return buf;
}

static const char hosts_json[] =
    "[{\"name\":\"node1\",\"slots\":4,\"used\":1,\"load\":[0.5,0.25,0.1],\"connected\":true,"
    "\"lost\":false,\"state\":\"idle\",\"attrs\":{\"arch\":\"x86_64\",\"mem\":8589934592,"
    "\"rating\":1.5,\"keys\":[\"fpu\",\"matlab\"],\"mounts\":[\"/data\"]},"
    "\"jobs\":[{\"id\":42,\"prio\":0,\"name\":\"sleeper\",\"owner\":\"alice\","
    "\"state_letters\":\"r\",\"queue\":\"all.q\",\"start_time\":0,\"submit_time\":0}]},"
    "{\"name\":\"node2\",\"slots\":8,\"used\":0,\"load\":[3,1,1],\"connected\":true,"
    "\"lost\":false,\"state\":\"busy\",\"busy_reason\":\"owner returned (keyboard)\","
    "\"attrs\":{\"mem\":536870912,\"keys\":[],\"mounts\":[]}},"
    "{\"name\":\"node3\",\"slots\":2,\"used\":0,\"load\":[9,9,9],\"connected\":false,"
    "\"lost\":true,\"state\":\"unknown\",\"attrs\":{}}]";

static void
test_table(void **state)
{
	json_t *hosts = load(hosts_json);
	char *out = render(hosts, NULL);

	assert_string_equal(out,
	    "HOSTNAME                ARCH         NSLOT NUSED  LOAD  MEMTOT STATE\n"
	    "--------------------------------------------------------------------\n"
	    "node1                   x86_64           4     1  0.50    8.0G idle\n"
	    "node2                   -                8     0  3.00  512.0M busy (owner returned (keyboard))\n"
	    "node3                   -                2     0     -       - unknown\n");
	free(out);
	json_decref(hosts);
}

static void
test_attrs_and_filter(void **state)
{
	json_t *hosts = load(hosts_json);
	char *only[] = { "node1", NULL }, *names[] = { "arch", "matlab", NULL };
	struct qhost_view v = { .hosts = only, .attrs = true };
	char *out = render(hosts, &v);

	assert_non_null(strstr(out, "node1 "));
	assert_null(strstr(out, "node2"));
	assert_non_null(strstr(out, "\n    hl:load_avg=0.50\n"));
	assert_non_null(strstr(out, "\n    hf:arch=x86_64\n"));
	assert_non_null(strstr(out, "\n    hf:mem_total=8.0G\n"));
	assert_non_null(strstr(out, "\n    hf:rating=1.5\n"));
	assert_non_null(strstr(out, "\n    hf:fpu=TRUE\n    hf:matlab=TRUE\n"));
	assert_non_null(strstr(out, "\n    hf:mount=/data\n"));
	free(out);
	v.attr_names = names;
	out = render(hosts, &v);
	assert_non_null(strstr(out, "hf:arch=x86_64\n    hf:matlab=TRUE\n"));
	assert_null(strstr(out, "fpu"));
	assert_null(strstr(out, "mem_total"));
	free(out);
	json_decref(hosts);
}

static void
test_jobs(void **state)
{
	json_t *hosts = load(hosts_json);
	struct qhost_view v = { .jobs = true };
	char *out = render(hosts, &v), *line, when[32];

	qstat_format_time(when, sizeof when, 0);
	line = xasprintf("node1                   x86_64           4     1  0.50    8.0G idle\n"
	    "   job-ID  prior   name       user         state submit/start at     queue      master ja-task-ID\n"
	    "   ----------------------------------------------------------------------------------------------\n"
	    "        42 0.50000 sleeper    alice        r     %s all.q      MASTER\n"
	    "node2 ", when);
	assert_non_null(strstr(out, line));
	free(line);
	free(out);
	json_decref(hosts);
}

static void
test_mem(void **state)
{
	char b[16];
	qhost_format_mem(b, sizeof b, 0);
	assert_string_equal(b, "-");
	qhost_format_mem(b, sizeof b, 1000);
	assert_string_equal(b, "1000");
	qhost_format_mem(b, sizeof b, 1536);
	assert_string_equal(b, "1.5K");
	qhost_format_mem(b, sizeof b, 3LL << 40);
	assert_string_equal(b, "3.0T");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_attrs_and_filter),
		cmocka_unit_test(test_jobs),
		cmocka_unit_test(test_mem),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("qhost_fmt", tests, NULL, NULL);
}
