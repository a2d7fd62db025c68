/* test_qstat_fmt.c: qstat's table and -j layout, column for column. */
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

#include "common/common.h"
#include "client/client.h"

/* 2021-03-04 05:06:07 UTC, in ms. */
#define T0 1614834367000LL

struct capture {
	char  *buf;
	size_t len;
	FILE  *fp;
};

static void
cap_open(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->fp = open_memstream(&c->buf, &c->len);
	assert_non_null(c->fp);
}

static char *
cap_close(struct capture *c)
{
	fclose(c->fp);
	return c->buf;
}

static json_t *
load(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	if (!j)
		fail_msg("bad test JSON: %s", e.text);
	return j;
}

static int
setup_tz(void **state)
{
	setenv("TZ", "UTC", 1);
	tzset();
	return 0;
}

static void
test_time_format(void **state)
{
	char buf[32];
	qstat_format_time(buf, sizeof buf, T0);
	assert_string_equal(buf, "03/04/2021 05:06:07");
}

static void
test_empty_prints_nothing(void **state)
{
	struct capture c;
	json_t *jobs = json_array();
	char *out;

	cap_open(&c);
	qstat_print_table(c.fp, NULL, json_array_size(jobs));
	out = cap_close(&c);
	assert_string_equal(out, "");
	free(out);
	json_decref(jobs);
}

static void
test_table_columns(void **state)
{
	/* The lines Grid Engine prints for the same jobs, as scripts cut them. */
	static const char want[] =
	    "job-ID  prior   name       user         state submit/start at     queue"
	    "                          slots ja-task-ID \n"
	    "-----------------------------------------------------------------------"
	    "------------------------------------------\n"
	    "     12 0.50000 sleeper    alice        r     03/04/2021 05:06:17 all.q@node1"
	    "                        1        \n"
	    "1234567 0.00049 averyveryl averyverylon hqw   03/04/2021 05:06:07"
	    "                                    1        \n";
	json_t *jobs = load("["
	    "{\"id\":12,\"prio\":0,\"name\":\"sleeper\",\"owner\":\"alice\",\"state\":\"running\","
	    "\"state_letters\":\"r\",\"submit_time\":1614834367000,\"start_time\":1614834377000,"
	    "\"queue\":\"all.q\",\"host\":\"node1\"},"
	    "{\"id\":1234567,\"prio\":-1023,\"name\":\"averyverylongname\",\"owner\":\"averyverylonguser\","
	    "\"state\":\"pending\",\"state_letters\":\"hqw\",\"submit_time\":1614834367000,"
	    "\"queue\":\"all.q\"}]");
	struct capture c;
	struct msg_job_row rows[2];
	char *out;

	msg_job_row_unpack(json_array_get(jobs, 0), &rows[0]);
	msg_job_row_unpack(json_array_get(jobs, 1), &rows[1]);
	cap_open(&c);
	qstat_print_table(c.fp, rows, 2);
	out = cap_close(&c);
	assert_string_equal(out, want);
	free(out);

	/* The same jobs as a brief listing's rows print the same lines; a
	 * column this client does not know is ignored, a missing one is empty. */
	json_t *rep = load("{\"columns\":[\"id\",\"prio\",\"name\",\"owner\",\"state\","
	    "\"state_letters\",\"submit_time\",\"start_time\",\"queue\",\"host\",\"future\"],"
	    "\"rows\":[[12,0,\"sleeper\",\"alice\",\"running\",\"r\",1614834367000,"
	    "1614834377000,\"all.q\",\"node1\",[1]],"
	    "[1234567,-1023,\"averyverylongname\",\"averyverylonguser\",\"pending\",\"hqw\","
	    "1614834367000,0,\"all.q\",null]]}");
	size_t n;
	struct msg_job_row *r = msg_job_rows_unpack(rep, &n);
	assert_int_equal(n, 2);
	cap_open(&c);
	qstat_print_table(c.fp, r, n);
	out = cap_close(&c);
	assert_string_equal(out, want);
	free(out);
	msg_job_rows_free(r);
	json_decref(rep);
	/* An array: a running task's line with its id, then the pending
	 * tasks' line with Grid Engine's compact range. */
	rep = load("{\"columns\":[\"id\",\"task\",\"name\",\"owner\",\"state\",\"state_letters\","
	    "\"submit_time\",\"start_time\",\"queue\",\"host\",\"tasks\"],"
	    "\"rows\":[[12,0,\"arr\",\"alice\",\"pending\",\"qw\",1614834367000,0,\"all.q\",null,"
	    "\"3,7-9:2\"],[12,1,\"arr\",\"alice\",\"running\",\"r\",1614834367000,"
	    "1614834377000,\"all.q\",\"node1\",null]]}");
	r = msg_job_rows_unpack(rep, &n);
	assert_int_equal(n, 2);
	cap_open(&c);
	qstat_print_row(c.fp, &r[1]);
	qstat_print_row(c.fp, &r[0]);
	out = cap_close(&c);
	assert_string_equal(out,
	    "     12 0.50000 arr        alice        r     03/04/2021 05:06:17 all.q@node1"
	    "                        1 1      \n"
	    "     12 0.50000 arr        alice        qw    03/04/2021 05:06:07"
	    "                                    1 3,7-9:2\n");
	free(out);
	msg_job_rows_free(r);
	json_decref(rep);
	/* A reply without rows, or malformed, has none. */
	rep = load("{\"columns\":\"id\",\"rows\":[[1]]}");
	assert_null(msg_job_rows_unpack(rep, &n));
	assert_int_equal(n, 0);
	json_decref(rep);
	json_decref(jobs);
}

static void
test_row_widths(void **state)
{
	json_t *job = load("{\"id\":7,\"prio\":1024,\"name\":\"n\",\"owner\":\"u\",\"state\":\"done\","
	    "\"state_letters\":\"z\",\"submit_time\":1614834367000,\"start_time\":1614834368000,"
	    "\"queue\":\"all.q\",\"host\":\"h\"}");
	struct capture c;
	struct msg_job_row row;
	char *out;

	msg_job_row_unpack(job, &row);
	cap_open(&c);
	qstat_print_row(c.fp, &row);
	out = cap_close(&c);
	/* A finished job shows its submission time and no queue. */
	assert_string_equal(out, "      7 1.00000 n          u            z     03/04/2021 05:06:07 "
	    "                                   1        \n");
	/* Column 5 (1-based, blank-separated) is the state, as tools expect. */
	assert_int_equal(strlen(out), 111);
	free(out);
	json_decref(job);
}

/* Names in other scripts keep the columns where they are: widths count
 * characters, a long name is cut between characters, never inside one. */
static void
test_row_widths_utf8(void **state)
{
	static const char *const names[] = { "n", "\u00e9t\u00e9", "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9",
		"\u65e5\u672c\u8a9e\u306e\u30b8\u30e7\u30d6\u540d\u524d\u3067\u3059", "abcdefghijklmnop" };
	size_t first = 0;

	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		char *text = xasprintf("{\"id\":7,\"name\":\"%s\",\"owner\":\"u\",\"state\":\"done\","
		    "\"state_letters\":\"z\",\"submit_time\":1614834367000}", names[i]);
		json_t *job = load(text);
		struct capture c;
		struct msg_job_row row;
		size_t chars = 0;
		char *out;

		msg_job_row_unpack(job, &row);
		cap_open(&c);
		qstat_print_row(c.fp, &row);
		out = cap_close(&c);
		for (const char *p = out; *p; p++)
			chars += ((unsigned char)*p & 0xc0) != 0x80;
		if (i == 0)
			first = chars;
		/* As many characters as the ASCII row, and valid UTF-8. */
		assert_int_equal(chars, first);
		{
			json_t *valid = json_string(out);
			assert_non_null(valid);
			json_decref(valid);
		}
		free(out);
		free(text);
		json_decref(job);
	}
}

static bool
has_line(const char *out, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = out; p && *p; ) {
		if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
			return true;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

static void
test_job_details(void **state)
{
	json_t *job = load("{\"id\":42,\"name\":\"calc\",\"owner\":\"bob\",\"uid\":1234,\"gid\":4242424,"
	    "\"state\":\"failed\",\"state_letters\":\"z\",\"submit_time\":1614834367000,"
	    "\"start_time\":1614834368000,\"end_time\":1614834400000,\"queue\":\"all.q\","
	    "\"prio\":-10,\"cwd\":\"/data\",\"out\":\"o.txt\",\"err\":\"/e.txt\",\"join\":true,"
	    "\"shell\":\"/bin/bash\",\"args\":[\"a\",\"b c\"],\"exit_status\":3,\"signal\":0,"
	    "\"reason\":\"exit status 3\",\"utime\":61.5,\"stime\":1.0,\"maxrss_kb\":2048,"
	    "\"env\":[\"SGE_O_HOME=/home/bob\",\"SGE_O_WORKDIR=/data\",\"X=1\",\"Y=two\"]}");
	struct capture c;
	char *out;

	cap_open(&c);
	qstat_print_job(c.fp, job);
	out = cap_close(&c);
	assert_true(has_line(out, "=============================================================="));
	assert_true(has_line(out, "job_number:                 42"));
	assert_true(has_line(out, "submission_time:            Thu Mar  4 05:06:07 2021"));
	assert_true(has_line(out, "owner:                      bob"));
	assert_true(has_line(out, "uid:                        1234"));
	assert_true(has_line(out, "group:                      4242424"));
	assert_true(has_line(out, "gid:                        4242424"));
	assert_true(has_line(out, "sge_o_home:                 /home/bob"));
	assert_true(has_line(out, "sge_o_workdir:              /data"));
	assert_true(has_line(out, "cwd:                        /data"));
	assert_true(has_line(out, "stderr_path_list:           NONE:NONE:/e.txt"));
	assert_true(has_line(out, "merge:                      y"));
	assert_true(has_line(out, "job_name:                   calc"));
	assert_true(has_line(out, "stdout_path_list:           NONE:NONE:o.txt"));
	assert_true(has_line(out, "priority:                   -10"));
	assert_true(has_line(out, "hard_queue_list:            all.q"));
	assert_true(has_line(out, "shell_list:                 NONE:/bin/bash"));
	/* SGE_O_* have their own lines, as in Grid Engine. */
	assert_true(has_line(out, "env_list:                   X=1,Y=two"));
	assert_true(has_line(out, "job_args:                   a,b c"));
	assert_true(has_line(out, "usage    1:                 cpu=00:01:02, mem=0.00000 GBs, "
	    "io=0.00000, vmem=N/A, maxvmem=2.000M"));
	assert_true(has_line(out, "exit_status:                3"));
	assert_true(has_line(out, "error reason    1:          exit status 3"));
	assert_null(strstr(out, "signal:"));
	free(out);
	json_decref(job);
}

static void
test_job_details_pending_binary(void **state)
{
	/* env as another user is shown it: only the submission context. */
	json_t *job = load("{\"id\":5,\"name\":\"sleep\",\"owner\":\"bob\",\"uid\":1,\"gid\":0,"
	    "\"state\":\"pending\",\"state_letters\":\"qw\",\"submit_time\":1614834367000,"
	    "\"argv\":[\"/bin/sleep\",\"60\"],\"prio\":0,\"env\":[\"SGE_O_HOME=/home/bob\"]}");
	struct capture c;
	char *out;

	cap_open(&c);
	qstat_print_job(c.fp, job);
	out = cap_close(&c);
	assert_true(has_line(out, "script_file:                /bin/sleep"));
	assert_true(has_line(out, "job_args:                   60"));
	/* Nothing a pending job cannot have yet. */
	assert_null(strstr(out, "usage"));
	assert_null(strstr(out, "exit_status"));
	assert_null(strstr(out, "priority:"));
	assert_null(strstr(out, "env_list:"));
	free(out);
	json_decref(job);
}

/* qstat -f, line for line: queue instances sorted by queue then host, a
 * rule before each, running jobs under their instance (a parallel job under
 * its master host) without the queue column, the states (u, d, a), a reserved
 * host said in words with its reservation, owner and end (never as
 * unknown), and the pending banner. */
/* qstat -f of one page: what show_full in cmd_qstat.c prints. */
static void
qstat_print_full(FILE *fp, const json_t *hosts, const struct msg_job_row *rows, size_t n)
{
	qstat_print_queues(fp, hosts, rows, n);
	qstat_print_pending(fp, rows, n, true);
}

/* Three hosts: an answering one with two queues (one disabled), a busy
 * reserved one, a lost one; a running job, a parallel one, a pending one. */
static const char full_hosts[] = "["
	    "{\"name\":\"c3\",\"slots\":1,\"used\":0,\"load\":[0,0,0],\"state\":\"unknown\","
	    "\"connected\":false,\"disabled\":false,\"lost\":true,\"attrs\":{},"
	    "\"queues\":[{\"name\":\"all.q\",\"disabled\":false,\"used\":0}]},"
	    "{\"name\":\"a1\",\"slots\":2,\"used\":1,\"load\":[0.25,0,0],\"state\":\"idle\","
	    "\"connected\":true,\"disabled\":false,\"lost\":false,\"attrs\":{\"arch\":\"lx-amd64\"},"
	    "\"queues\":[{\"name\":\"hi.q\",\"disabled\":true,\"used\":0},"
	    "{\"name\":\"all.q\",\"disabled\":false,\"used\":1}]},"
	    "{\"name\":\"b2\",\"slots\":4,\"used\":0,\"load\":[1.5,0,0],\"state\":\"busy\","
	    "\"connected\":true,\"disabled\":false,\"lost\":false,\"attrs\":{\"arch\":\"lx-amd64\"},"
	    "\"reserved\":{\"name\":\"maint\",\"owner\":\"bob\",\"end\":1614837967000},"
	    "\"queues\":[{\"name\":\"all.q\",\"disabled\":false,\"used\":0}]}]";
static const char full_rows[] = "{\"columns\":[\"id\",\"name\",\"owner\",\"state\",\"state_letters\","
	    "\"submit_time\",\"start_time\",\"queue\",\"host\",\"slots\"],\"rows\":["
	    "[12,\"sleeper\",\"alice\",\"running\",\"r\",1614834367000,1614834377000,\"all.q\",\"a1\",1],"
	    "[14,\"mpi\",\"alice\",\"running\",\"r\",1614834367000,1614834377000,\"all.q\",\"a1 c3\",3],"
	    "[13,\"waiter\",\"alice\",\"pending\",\"qw\",1614834367000,0,\"all.q\",null,1]]}";

static void
test_full_format(void **state)
{
	static const char want[] =
	    "queuename                      qtype resv/used/tot. load_avg arch          states\n"
	    "---------------------------------------------------------------------------------\n"
	    "all.q@a1                       BP    0/1/2          0.25     lx-amd64      \n"
	    "     12 0.50000 sleeper    alice        r     03/04/2021 05:06:17     1        \n"
	    "     14 0.50000 mpi        alice        r     03/04/2021 05:06:17     3        \n"
	    "---------------------------------------------------------------------------------\n"
	    "all.q@b2                       BP    4/0/4          1.50     lx-amd64      a reserved maint by bob until 03/04/2021 06:06:07\n"
	    "---------------------------------------------------------------------------------\n"
	    "all.q@c3                       BP    0/0/1          -NA-     -NA-          u\n"
	    "---------------------------------------------------------------------------------\n"
	    "hi.q@a1                        BP    0/0/2          0.25     lx-amd64      d\n"
	    "\n"
	    "############################################################################\n"
	    " - PENDING JOBS - PENDING JOBS - PENDING JOBS - PENDING JOBS - PENDING JOBS\n"
	    "############################################################################\n"
	    "     13 0.50000 waiter     alice        qw    03/04/2021 05:06:07     1        \n";
	json_t *hosts = load(full_hosts), *rep = load(full_rows);
	struct capture c;
	struct msg_job_row *rows;
	size_t n;
	char *out;

	rows = msg_job_rows_unpack(rep, &n);
	assert_int_equal(n, 3);
	cap_open(&c);
	qstat_print_full(c.fp, hosts, rows, n);
	out = cap_close(&c);
	assert_string_equal(out, want);
	free(out);

	/* No host, no job: nothing at all. */
	json_t *none = json_array();
	cap_open(&c);
	qstat_print_full(c.fp, none, NULL, 0);
	out = cap_close(&c);
	assert_string_equal(out, "");
	free(out);
	json_decref(none);
	msg_job_rows_free(rows);
	json_decref(rep);
	json_decref(hosts);
}

/* Every character a user writes comes back from a parser as written; the
 * control characters XML 1.0 cannot hold show as "?". */
static void
test_xml_escape(void **state)
{
	struct capture c;
	char *out;

	cap_open(&c);
	xml_text(c.fp, "a<b>&'\"c\001d\te");
	xml_elem(c.fp, 2, "JB_name", "x&y");
	out = cap_close(&c);
	assert_string_equal(out, "a&lt;b&gt;&amp;&apos;&quot;c?d\te  <JB_name>x&amp;y</JB_name>\n");
	free(out);
}

/* qstat -xml, element for element as Grid Engine 8.1.9 writes them
 * (t/sge/xml/qstat.xml): running rows in queue_info, the others in
 * job_info, both always present. */
static void
test_xml_listing(void **state)
{
	static const char want[] =
	    "<?xml version='1.0'?>\n"
	    "<job_info  xmlns:xsd=\"http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/qstat/qstat.xsd\">\n"
	    "  <queue_info>\n"
	    "    <job_list state=\"running\">\n"
	    "      <JB_job_number>12</JB_job_number>\n"
	    "      <JAT_prio>0.50000</JAT_prio>\n"
	    "      <JB_name>sleeper</JB_name>\n"
	    "      <JB_owner>alice</JB_owner>\n"
	    "      <state>r</state>\n"
	    "      <JAT_start_time>2021-03-04T05:06:17</JAT_start_time>\n"
	    "      <queue_name>all.q@a1</queue_name>\n"
	    "      <slots>1</slots>\n"
	    "    </job_list>\n"
	    "  </queue_info>\n"
	    "  <job_info>\n"
	    "    <job_list state=\"pending\">\n"
	    "      <JB_job_number>13</JB_job_number>\n"
	    "      <JAT_prio>0.50000</JAT_prio>\n"
	    "      <JB_name>waiter</JB_name>\n"
	    "      <JB_owner>alice</JB_owner>\n"
	    "      <state>qw</state>\n"
	    "      <JB_submission_time>2021-03-04T05:06:07</JB_submission_time>\n"
	    "      <queue_name></queue_name>\n"
	    "      <slots>1</slots>\n"
	    "    </job_list>\n"
	    "  </job_info>\n"
	    "</job_info>\n";
	json_t *rep = load(full_rows);
	struct capture c;
	size_t n;
	struct msg_job_row *rows = msg_job_rows_unpack(rep, &n);
	struct qstat_xml x = { NULL, 0, 0 };
	char *out;

	cap_open(&c);
	x.fp = c.fp;
	qstat_xml_begin(&x);
	qstat_xml_rows(&x, &rows[0], 1);
	qstat_xml_rows(&x, &rows[2], 1);
	qstat_xml_end(&x);
	out = cap_close(&c);
	assert_string_equal(out, want);
	free(out);

	/* No rows: both sections, empty, as Grid Engine prints them. */
	cap_open(&c);
	x.fp = c.fp;
	qstat_xml_begin(&x);
	qstat_xml_end(&x);
	out = cap_close(&c);
	assert_non_null(strstr(out, "  <queue_info>\n  </queue_info>\n  <job_info>\n  </job_info>\n</job_info>\n"));
	free(out);
	msg_job_rows_free(rows);
	json_decref(rep);
}

/* qstat -f -xml's Queue-List and qstat -g c, plain and -xml, from the
 * hosts qstat -f shows: a lost host's slots are not available, a busy
 * host's count as temporarily disabled. */
static void
test_xml_full_and_cqueues(void **state)
{
	json_t *hosts = load(full_hosts), *rep = load(full_rows);
	struct capture c;
	size_t n;
	struct msg_job_row *rows = msg_job_rows_unpack(rep, &n);
	struct qstat_xml x = { NULL, QX_FULL, 0 };
	char *out;

	cap_open(&c);
	x.fp = c.fp;
	qstat_xml_begin(&x);
	qstat_xml_queues(&x, hosts, rows, n);
	qstat_xml_rows(&x, &rows[2], 1);
	qstat_xml_end(&x);
	out = cap_close(&c);
	assert_non_null(strstr(out, "  <queue_info>\n    <Queue-List>\n      <name>all.q@a1</name>\n"
	    "      <qtype>BP</qtype>\n      <slots_used>1</slots_used>\n      <slots_resv>0</slots_resv>\n"
	    "      <slots_total>2</slots_total>\n      <load_avg>0.25000</load_avg>\n      <arch>lx-amd64</arch>\n"
	    "      <job_list state=\"running\">\n        <JB_job_number>12</JB_job_number>\n"));
	assert_non_null(strstr(out, "<name>all.q@c3</name>\n      <qtype>BP</qtype>\n      <slots_used>0</slots_used>\n"
	    "      <slots_resv>0</slots_resv>\n      <slots_total>1</slots_total>\n      <state>u</state>\n"));
	/* Under its queue instance a job has no queue_name; nor has a pending one. */
	assert_null(strstr(out, "queue_name"));
	assert_non_null(strstr(out, "  </queue_info>\n  <job_info>\n    <job_list state=\"pending\">\n"));
	free(out);

	cap_open(&c);
	qstat_print_cqueues(c.fp, hosts);
	out = cap_close(&c);
	assert_string_equal(out,
	    "CLUSTER QUEUE                   CQLOAD   USED    RES  AVAIL  TOTAL aoACDS  cdsuE  \n"
	    "--------------------------------------------------------------------------------\n"
	    "all.q                             0.88      1      4      1      7      4      1 \n"
	    "hi.q                              0.25      0      0      0      2      0      2 \n");
	free(out);
	cap_open(&c);
	qstat_xml_cqueues(c.fp, hosts);
	out = cap_close(&c);
	assert_non_null(strstr(out, "  <cluster_queue_summary>\n    <name>all.q</name>\n    <load>0.87500</load>\n"
	    "    <used>1</used>\n    <resv>4</resv>\n    <available>1</available>\n    <total>7</total>\n"
	    "    <temp_disabled>4</temp_disabled>\n    <manual_intervention>1</manual_intervention>\n"
	    "  </cluster_queue_summary>\n"));
	free(out);
	msg_job_rows_free(rows);
	json_decref(rep);
	json_decref(hosts);
}

/* qstat -j -xml: Grid Engine's detailed_job_info fields in its order, and
 * unknown_jobs when no job is known. */
static void
test_xml_jobs(void **state)
{
	json_t *jobs = load("[{\"id\":7,\"name\":\"a&b\",\"owner\":\"alice\",\"uid\":1000,\"gid\":0,"
	    "\"submit_time\":1614834367000,\"state\":\"pending\",\"prio\":-5,\"queue\":\"all.q\","
	    "\"out\":\"/tmp/o\",\"env\":[\"SGE_O_HOME=/home/alice\",\"FOO=bar\"],"
	    "\"argv\":[\"/bin/sleep\",\"1\"],\"req\":{\"h_rt\":3600,\"hard_queue\":\"all.q\"},"
	    "\"waiting_for\":[{\"id\":5,\"kind\":\"afterany\"}],"
	    "\"successors\":[{\"id\":9,\"kind\":\"afterok\"}]}]");
	json_t *none = json_array(), *missing = load("[\"99\"]");
	struct capture c;
	char *out;
	const char *order[] = { "<JB_job_number>7<", "<JB_owner>alice<", "<MR_user>alice<",
		"<JB_job_name>a&amp;b<", "<PN_path>/tmp/o<", "<CE_name>h_rt<", "<CE_stringval>3600<",
		"<QR_name>all.q<", "<VA_variable>__SGE_PREFIX__O_HOME<", "<VA_value>bar<", "<ST_name>1<",
		"<JB_script_file>/bin/sleep<", "<JRE_job_number>5<", "<JRE_job_name>5<",
		"<JB_jid_successor_list>", "<JRE_job_number>9<", "<JB_priority>1019<", "<JRE_job_name>5<", "<RN_max>1<", "<JB_type>64<",
		"<BN_strategy>no_job_binding<", "</djob_info>" };
	const char *at;

	cap_open(&c);
	qstat_xml_jobs(c.fp, jobs, missing);
	out = cap_close(&c);
	at = out;
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		const char *p = strstr(at, order[i]);
		if (!p)
			fail_msg("%s missing or out of order in:\n%s", order[i], out);
		at = p;
	}
	assert_null(strstr(out, "unknown_jobs"));
	free(out);
	cap_open(&c);
	qstat_xml_jobs(c.fp, none, missing);
	out = cap_close(&c);
	assert_string_equal(out, "<?xml version='1.0'?>\n<unknown_jobs >\n    <ST_name>99</ST_name>\n</unknown_jobs>\n");
	free(out);
	json_decref(jobs);
	json_decref(none);
	json_decref(missing);
}

/* qstat -ext and -pri, column for column as Grid Engine prints the same
 * jobs (t/sge/xml/qstat-ext.txt, qstat-pri.txt). */
static void
test_views_ext_pri(void **state)
{
	json_t *rep = load(full_rows);
	struct capture c;
	size_t n;
	struct msg_job_row *rows = msg_job_rows_unpack(rep, &n);
	char *out;

	cap_open(&c);
	qstat_view_rows(c.fp, rows, n, QV_EXT, false, true);
	out = cap_close(&c);
	assert_non_null(strstr(out, "job-ID  prior   ntckts  name       user         project          department state "
	    "cpu        mem     io      tckts ovrts otckt ftckt stckt share queue                          slots ja-task-ID \n"));
	assert_non_null(strstr(out, "\n     12 0.50000 0.00000 sleeper    alice        NA               defaultdep r     "
	    "0:00:00:00 0.00000 0.00000     0     0     0     0     0 0.00  all.q@a1                           1        \n"));
	assert_non_null(strstr(out, "\n     13 0.50000 0.00000 waiter     alice        NA               defaultdep qw                                   0     0     0     0     0 0.00                                     1        \n"));
	free(out);
	cap_open(&c);
	qstat_view_rows(c.fp, rows, 1, QV_PRI, false, true);
	out = cap_close(&c);
	assert_string_equal(out,
	    "job-ID  prior   nurg    npprior ntckts   ppri name       user         state submit/start at     queue"
	    "                          slots ja-task-ID \n"
	    "----------------------------------------------------------------------------------------------------"
	    "------------------------------------------------\n"
	    "     12 0.50000 0.00000 0.50000 0.00000     0 sleeper    alice        r     03/04/2021 05:06:17 all.q@a1"
	    "                           1        \n");
	free(out);
	msg_job_rows_free(rows);
	json_decref(rep);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_format),
		cmocka_unit_test(test_empty_prints_nothing),
		cmocka_unit_test(test_table_columns),
		cmocka_unit_test(test_row_widths),
		cmocka_unit_test(test_row_widths_utf8),
		cmocka_unit_test(test_job_details),
		cmocka_unit_test(test_job_details_pending_binary),
		cmocka_unit_test(test_full_format),
		cmocka_unit_test(test_xml_escape),
		cmocka_unit_test(test_xml_listing),
		cmocka_unit_test(test_xml_full_and_cqueues),
		cmocka_unit_test(test_xml_jobs),
		cmocka_unit_test(test_views_ext_pri),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("qstat_fmt", tests, setup_tz, NULL);
}
