/* test_limits.c: execd/limits.c: the h_vmem mode probe, job cgroups on folders that are not cgroups, memory.events and size wording. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "execd/execd.h"

/* SIGKILL at h_rt, but not within 90 s of the last SIGUSR1, as Grid
 * Engine kills an s_rt=5,h_rt=10 job near 96 s (t/sge/gaps/srt-hrt.acct). */
static void
test_rt_kill_at(void **state)
{
	(void)state;
	assert_int_equal(limits_rt_kill_at(10000, 0), 10000);
	assert_int_equal(limits_rt_kill_at(10000, 5000), 95000);
	assert_int_equal(limits_rt_kill_at(200000, 5000), 200000);
	assert_int_equal(limits_rt_kill_at(0, 5000), 0);
	assert_int_equal(limits_rt_kill_at(95000, 5000), 95000);
}

static void
test_size_str(void **state)
{
	static const struct { int64_t bytes; const char *want; } cases[] = {
		{ 2LL << 30, "2G" }, { 200LL << 20, "200M" }, { 3LL << 40, "3T" },
		{ 1536LL << 10, "1536K" }, { 3000000, "3m" }, { 2000000000, "2g" },
		{ 1500, "1500" }, { 2000, "2k" }, { 1025, "1025" }, { 0, "0" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		limits_size_str(cases[i].bytes, buf, sizeof buf);
		assert_string_equal(buf, cases[i].want);
	}
}

static void
test_oom_count(void **state)
{
	assert_int_equal(limits_oom_count("low 0\nhigh 4\nmax 9\noom 3\noom_kill 2\n"
	    "oom_group_kill 0\n"), 2);
	assert_int_equal(limits_oom_count("oom 1\noom_group_kill 5\n"), 0);
	assert_int_equal(limits_oom_count("oom_kill 0\n"), 0);
	assert_int_equal(limits_oom_count("oom_kill 7"), 7);
	assert_int_equal(limits_oom_count(""), 0);
	assert_int_equal(limits_oom_count("garbage\n\n\n"), 0);
}

/* A plain folder is no cgroup: the probe says so and chooses RLIMIT_AS. */
static void
test_probe_not_cgroup(void **state)
{
	char dir[] = "/tmp/nowq-limits.XXXXXX", why[256];

	assert_non_null(mkdtemp(dir));
	assert_string_equal(limits_probe(dir, why, sizeof why), LIMITS_VMEM_RLIMIT);
	assert_string_equal(limits_vmem_mode, LIMITS_VMEM_RLIMIT);
	assert_null(limits_cgroup_parent);
	assert_non_null(strstr(why, "is not a cgroup v2 folder"));
	assert_string_equal(limits_probe("/nonexistent/nowq", why, sizeof why), LIMITS_VMEM_RLIMIT);
	assert_null(limits_cgroup_parent);
	assert_int_equal(rmdir(dir), 0);
}

/* Whatever this host offers, the probe's answer is consistent, and a cgroup
 * answer leaves a parent in which a job cgroup can really be made. */
static void
test_probe_this_host(void **state)
{
	char why[256], cgwhy[256];
	const char *mode = limits_probe(NULL, why, sizeof why);
	char *cg;
	int fd;

	print_message("# this host: %s (%s)\n", mode, why);
	if (strcmp(mode, LIMITS_VMEM_RLIMIT) == 0) {
		assert_null(limits_cgroup_parent);
		return;
	}
	assert_string_equal(mode, LIMITS_VMEM_CGROUP);
	assert_non_null(limits_cgroup_parent);
	cg = limits_cgroup_create(limits_cgroup_parent, "0.0.0", 64LL << 20, &fd, cgwhy, sizeof cgwhy);
	assert_non_null(cg);
	assert_true(fd >= 0);
	close(fd);
	assert_false(limits_cgroup_oom(cg));
	limits_cgroup_remove(cg);
	assert_int_equal(access(cg, F_OK), -1);
	free(cg);
}

/* A parent that is no cgroup: the folder is made, memory.max is missing
 * (a cgroup's files are never created by us), the folder goes again. */
static void
test_cgroup_create_fails_cleanly(void **state)
{
	char dir[] = "/tmp/nowq-limits.XXXXXX", why[256], *path;
	int fd = 5;

	assert_non_null(mkdtemp(dir));
	assert_null(limits_cgroup_create(dir, "7.0.1", 1 << 20, &fd, why, sizeof why));
	assert_int_equal(fd, -1);
	assert_non_null(strstr(why, "memory.max"));
	path = xasprintf("%s/nowq.7.0.1.%d", dir, (int)getpid());
	assert_int_equal(access(path, F_OK), -1);
	free(path);
	assert_null(limits_cgroup_create("/nonexistent/nowq", "7.0.1", 1 << 20, &fd, why, sizeof why));
	assert_non_null(strstr(why, "cannot create the job's cgroup"));
	assert_int_equal(rmdir(dir), 0);
}

/* The success path on a stand-in: a folder already holding the files the
 * kernel would put in a cgroup.  memory.max gets the limit in bytes, and
 * cgroup.procs is open for writing, as the job's process needs it. */
static void
test_cgroup_create_on_stand_in(void **state)
{
	char dir[] = "/tmp/nowq-limits.XXXXXX", why[256], *cgdir, *path, *cg, *text;
	const char *rwhy;
	int fd;

	assert_non_null(mkdtemp(dir));
	cgdir = xasprintf("%s/nowq.3.0.1.%d", dir, (int)getpid());
	assert_int_equal(mkdir(cgdir, 0755), 0);
	path = xasprintf("%s/memory.max", cgdir);
	assert_int_equal(spool_write_file(path, "max\n", 4, 0644, false), 0);
	free(path);
	path = xasprintf("%s/cgroup.procs", cgdir);
	assert_int_equal(spool_write_file(path, "", 0, 0644, false), 0);
	cg = limits_cgroup_create(dir, "3.0.1", 2LL << 30, &fd, why, sizeof why);
	assert_non_null(cg);
	assert_string_equal(cg, cgdir);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0", 1), 1);
	close(fd);
	text = read_file(path, 64, NULL, &rwhy);
	assert_string_equal(text, "0");
	free(text);
	free(path);
	path = xasprintf("%s/memory.max", cgdir);
	text = read_file(path, 64, NULL, &rwhy);
	assert_string_equal(text, "2147483648");
	free(text);
	free(path);
	assert_false(limits_cgroup_oom(cg));
	free(cg);
	assert_int_equal(spool_rmtree(dir), 0);
	free(cgdir);
}

/* The OOM verdict reads memory.events as the kernel writes it. */
static void
test_cgroup_oom(void **state)
{
	char dir[] = "/tmp/nowq-limits.XXXXXX", *path;

	assert_non_null(mkdtemp(dir));
	assert_false(limits_cgroup_oom(dir));
	path = xasprintf("%s/memory.events", dir);
	assert_int_equal(spool_write_file(path, "low 0\nhigh 0\nmax 1\noom 0\noom_kill 0\n", 36, 0644, false), 0);
	assert_false(limits_cgroup_oom(dir));
	assert_int_equal(spool_write_file(path, "low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\n", 36, 0644, false), 0);
	assert_true(limits_cgroup_oom(dir));
	unlink(path);
	free(path);
	assert_int_equal(rmdir(dir), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rt_kill_at),
		cmocka_unit_test(test_size_str),
		cmocka_unit_test(test_oom_count),
		cmocka_unit_test(test_probe_not_cgroup),
		cmocka_unit_test(test_probe_this_host),
		cmocka_unit_test(test_cgroup_create_fails_cleanly),
		cmocka_unit_test(test_cgroup_create_on_stand_in),
		cmocka_unit_test(test_cgroup_oom),
	};

	log_init("test_limits", LOG_LVL_ERR, NULL);
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("limits", tests, NULL, NULL);
}
