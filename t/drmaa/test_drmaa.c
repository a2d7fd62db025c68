/* test_drmaa.c: libdrmaa against a running cluster, one case per run: every DRMAA function and attribute, and their error paths. */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "drmaa/drmaa.h"

static char diag[DRMAA_ERROR_STRING_BUFFER];
static const char *work;   /* a scratch folder the jobs write in */
static int failures;

/* Expects rc from a call; prints the call's text and its diagnosis else. */
#define EXPECT(want, call) expect(want, (call), #call, __LINE__)
static void
expect(int want, int rc, const char *text, int line)
{
	if (rc != want) {
		printf("line %d: %s gave %d (%s: %s), not %d\n", line, text, rc,
		    drmaa_strerror(rc) ? drmaa_strerror(rc) : "?", diag, want);
		failures++;
	}
}
#define CHECK(cond) check((cond), #cond, __LINE__)
static void
check(int ok, const char *text, int line)
{
	if (!ok) {
		printf("line %d: %s is false\n", line, text);
		failures++;
	}
}

static drmaa_job_template_t *
template(const char *cmd, const char **argv)
{
	drmaa_job_template_t *jt = NULL;
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_allocate_job_template(&jt, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_REMOTE_COMMAND, cmd, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_OUTPUT_PATH, ":/dev/null", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_JOIN_FILES, "y", diag, sizeof diag));
	if (argv)
		EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_vector_attribute(jt, DRMAA_V_ARGV, argv, diag, sizeof diag));
	return jt;
}

/* Submits sh -c SCRIPT; its id in id. */
static void
run_sh(const char *script, char *id, drmaa_job_template_t **keep)
{
	const char *argv[] = { "-c", script, NULL };
	drmaa_job_template_t *jt = template("/bin/sh", argv);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_run_job(id, DRMAA_JOBNAME_BUFFER, jt, diag, sizeof diag));
	if (keep)
		*keep = jt;
	else
		drmaa_delete_job_template(jt, NULL, 0);
}

static int
ps(const char *id)
{
	int s = -1;
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_job_ps(id, &s, diag, sizeof diag));
	return s;
}

/* Waits (without a clock: each check is a round trip) until id is in state want. */
static void
ps_until(const char *id, int want)
{
	for (int i = 0; i < 3000 && ps(id) != want; i++)
		usleep(20000);
	CHECK(ps(id) == want);
}

static int
wait_stat(const char *id, drmaa_attr_values_t **ru)
{
	char out[DRMAA_JOBNAME_BUFFER];
	int stat = -1;
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wait(id, out, sizeof out, &stat, DRMAA_TIMEOUT_WAIT_FOREVER,
	    ru, diag, sizeof diag));
	CHECK(strcmp(out, id) == 0);
	return stat;
}

static void
case_session(void)
{
	char buf[DRMAA_CONTACT_BUFFER];
	unsigned major = 0, minor = 9;
	drmaa_job_template_t *jt = NULL;
	const char *master = getenv("NOWQ_MASTER");

	EXPECT(DRMAA_ERRNO_NO_ACTIVE_SESSION, drmaa_exit(diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_NO_ACTIVE_SESSION, drmaa_allocate_job_template(&jt, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_NO_ACTIVE_SESSION, drmaa_control("1", DRMAA_CONTROL_HOLD, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_CONTACT_STRING, drmaa_init(",", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_DRMS_INIT_FAILED, drmaa_init("unix:/nonexistent/sock", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_contact(buf, sizeof buf, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_init(master, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_ALREADY_ACTIVE_SESSION, drmaa_init(NULL, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_contact(buf, sizeof buf, diag, sizeof diag));
	CHECK(master && strcmp(buf, master) == 0);
	EXPECT(DRMAA_ERRNO_INVALID_ARGUMENT, drmaa_get_contact(buf, 3, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_version(&major, &minor, diag, sizeof diag));
	CHECK(major == 1 && minor == 0);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_DRM_system(buf, sizeof buf, diag, sizeof diag));
	CHECK(strncmp(buf, "nowq ", 5) == 0);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_DRMAA_implementation(buf, sizeof buf, diag, sizeof diag));
	CHECK(strstr(buf, "DRMAA 1.0") != NULL);
	for (int e = DRMAA_ERRNO_SUCCESS; e < DRMAA_NO_ERRNO; e++)
		CHECK(drmaa_strerror(e) && *drmaa_strerror(e));
	CHECK(drmaa_strerror(DRMAA_NO_ERRNO) == NULL && drmaa_strerror(-1) == NULL);
	CHECK(strcmp(drmaa_strerror(DRMAA_ERRNO_EXIT_TIMEOUT), "time-out condition") == 0);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_exit(diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_NO_ACTIVE_SESSION, drmaa_exit(diag, sizeof diag));
	/* A new session after the old one ended. */
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_init(NULL, diag, sizeof diag));
}

/* Two threads: only one session; drmaa_init from another is refused. */
static void *
second_init(void *arg)
{
	int *rc = arg;
	char d[DRMAA_ERROR_STRING_BUFFER];
	*rc = drmaa_init(NULL, d, sizeof d);
	return NULL;
}

struct waitarg {
	const char *id;
	int         rc, stat;
};

static void *
waiter(void *arg)
{
	struct waitarg *w = arg;
	char d[DRMAA_ERROR_STRING_BUFFER], out[DRMAA_JOBNAME_BUFFER];
	w->rc = drmaa_wait(w->id, out, sizeof out, &w->stat, DRMAA_TIMEOUT_WAIT_FOREVER, NULL, d, sizeof d);
	return NULL;
}

static void
case_threads(void)
{
	pthread_t t;
	char id[DRMAA_JOBNAME_BUFFER], ids[20][DRMAA_JOBNAME_BUFFER];
	struct waitarg wa;
	int rc = -1, exited = 0;

	pthread_create(&t, NULL, second_init, &rc);
	pthread_join(t, NULL);
	CHECK(rc == DRMAA_ERRNO_ALREADY_ACTIVE_SESSION);
	/* One thread waits while this one submits and waits: the blocked
	 * WAIT holds up nothing (each thread has its own connection). */
	run_sh("sleep 3", id, NULL);
	wa = (struct waitarg){ id, -1, -1 };
	pthread_create(&t, NULL, waiter, &wa);
	for (int i = 0; i < 20; i++)
		run_sh("exit 0", ids[i], NULL);
	for (int i = 0; i < 20; i++)
		CHECK(wait_stat(ids[i], NULL) == 0);
	pthread_join(t, NULL);
	CHECK(wa.rc == DRMAA_ERRNO_SUCCESS);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wifexited(&exited, wa.stat, diag, sizeof diag));
	CHECK(exited == 1);
}

/* Every attribute set and read back; the names lists; bad values. */
static void
case_template(void)
{
	static const struct { const char *name, *value; } good[] = {
		{ DRMAA_REMOTE_COMMAND, "/bin/true" }, { DRMAA_JS_STATE, DRMAA_SUBMISSION_STATE_HOLD },
		{ DRMAA_WD, DRMAA_PLACEHOLDER_HD "/x" }, { DRMAA_JOB_CATEGORY, "short" },
		{ DRMAA_NATIVE_SPECIFICATION, "-l h_rt=60 -p -5 -cwd" }, { DRMAA_BLOCK_EMAIL, "1" },
		{ DRMAA_START_TIME, "12:30" }, { DRMAA_JOB_NAME, "tname" }, { DRMAA_INPUT_PATH, ":/dev/null" },
		{ DRMAA_OUTPUT_PATH, ":" DRMAA_PLACEHOLDER_WD "/o." DRMAA_PLACEHOLDER_INCR },
		{ DRMAA_ERROR_PATH, "host:/tmp/e" }, { DRMAA_JOIN_FILES, "n" },
		{ DRMAA_DEADLINE_TIME, "2099/01/01 00:00" }, { DRMAA_WCT_HLIMIT, "1:00:00" },
		{ DRMAA_WCT_SLIMIT, "59:00" }, { DRMAA_DURATION_HLIMIT, "3600" },
		{ DRMAA_TRANSFER_FILES, "eo" },
	};
	static const struct { const char *name, *value; int rc; } bad[] = {
		{ DRMAA_JS_STATE, "drmaa_suspended", DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE },
		{ DRMAA_JOIN_FILES, "maybe", DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE },
		{ DRMAA_START_TIME, "noon", DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT },
		{ DRMAA_DEADLINE_TIME, "2099/13/01 00:00", DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT },
		{ DRMAA_WCT_HLIMIT, "soon", DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT },
		{ DRMAA_NATIVE_SPECIFICATION, "-bogus", DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE },
		{ DRMAA_NATIVE_SPECIFICATION, "-N a script.sh", DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE },
		{ DRMAA_TRANSFER_FILES, "ix", DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE },
		{ "no_such_attribute", "x", DRMAA_ERRNO_INVALID_ARGUMENT },
		{ DRMAA_V_ARGV, "x", DRMAA_ERRNO_INVALID_ARGUMENT },
	};
	const char *argv[] = { "a", "b c", NULL }, *env[] = { "A=1", "B=x=y", NULL }, *badenv[] = { "NOEQ", NULL };
	const char *mail[] = { "a@example.org", "b@example.org", NULL };
	drmaa_job_template_t *jt = NULL;
	drmaa_attr_names_t *names = NULL;
	drmaa_attr_values_t *vals = NULL;
	char buf[DRMAA_ATTR_BUFFER];
	int n = 0;

	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_allocate_job_template(&jt, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, drmaa_get_attribute(jt, DRMAA_JOB_NAME, buf, sizeof buf, diag, sizeof diag));
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, good[i].name, good[i].value, diag, sizeof diag));
		EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_attribute(jt, good[i].name, buf, sizeof buf, diag, sizeof diag));
		CHECK(strcmp(buf, good[i].value) == 0);
	}
	EXPECT(DRMAA_ERRNO_INVALID_ARGUMENT, drmaa_get_attribute(jt, DRMAA_JOB_NAME, buf, 3, diag, sizeof diag));
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		EXPECT(bad[i].rc, drmaa_set_attribute(jt, bad[i].name, bad[i].value, diag, sizeof diag));
	/* A refused value leaves the attribute as it was. */
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_attribute(jt, DRMAA_JS_STATE, buf, sizeof buf, diag, sizeof diag));
	CHECK(strcmp(buf, DRMAA_SUBMISSION_STATE_HOLD) == 0);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_vector_attribute(jt, DRMAA_V_ARGV, argv, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_vector_attribute(jt, DRMAA_V_ENV, env, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_vector_attribute(jt, DRMAA_V_EMAIL, mail, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT, drmaa_set_vector_attribute(jt, DRMAA_V_ENV, badenv, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_ARGUMENT, drmaa_set_vector_attribute(jt, DRMAA_JOB_NAME, argv, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_vector_attribute(jt, DRMAA_V_ENV, &vals, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_num_attr_values(vals, &n));
	CHECK(n == 2);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_next_attr_value(vals, buf, sizeof buf));
	CHECK(strcmp(buf, "A=1") == 0);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_next_attr_value(vals, buf, sizeof buf));
	CHECK(strcmp(buf, "B=x=y") == 0);
	EXPECT(DRMAA_ERRNO_NO_MORE_ELEMENTS, drmaa_get_next_attr_value(vals, buf, sizeof buf));
	drmaa_release_attr_values(vals);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_attribute_names(&names, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_num_attr_names(names, &n));
	CHECK(n == (int)(sizeof good / sizeof good[0]));
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_next_attr_name(names, buf, sizeof buf));
		CHECK(strcmp(buf, good[i].name) == 0);
	}
	EXPECT(DRMAA_ERRNO_NO_MORE_ELEMENTS, drmaa_get_next_attr_name(names, buf, sizeof buf));
	drmaa_release_attr_names(names);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_vector_attribute_names(&names, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_num_attr_names(names, &n));
	CHECK(n == 3);
	drmaa_release_attr_names(names);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_delete_job_template(jt, diag, sizeof diag));
}

/* A job's argv, environment, working directory and paths reach it. */
static void
case_run(void)
{
	const char *argv[] = { "-c", "echo \"$0|$1|$A|$(pwd)\"; echo err >&2", "one two", NULL };
	const char *env[] = { "A=from drmaa", NULL };
	drmaa_job_template_t *jt = template("/bin/sh", argv);
	drmaa_attr_values_t *ru = NULL;
	char id[DRMAA_JOBNAME_BUFFER], path[4096], line[4096], want[4096], buf[256];
	int stat, v = -1, n = 0;
	FILE *fp;
	bool found = false;

	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_vector_attribute(jt, DRMAA_V_ENV, env, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_WD, work, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_JOB_NAME, "runjob", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_OUTPUT_PATH, ":" DRMAA_PLACEHOLDER_WD "/run.out", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_ERROR_PATH, ":" DRMAA_PLACEHOLDER_WD "/run.err", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_JOIN_FILES, "n", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_INPUT_PATH, ":/dev/null", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_JOB_CATEGORY, "any", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_WCT_HLIMIT, "600", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_WCT_SLIMIT, "500", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_DURATION_HLIMIT, "600", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_DEADLINE_TIME, "2099/01/01 00:00", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_BLOCK_EMAIL, "1", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_JS_STATE, DRMAA_SUBMISSION_STATE_ACTIVE, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_NATIVE_SPECIFICATION, "-p -3", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_run_job(id, sizeof id, jt, diag, sizeof diag));
	stat = wait_stat(id, &ru);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wifexited(&v, stat, diag, sizeof diag));
	CHECK(v == 1);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wexitstatus(&v, stat, diag, sizeof diag));
	CHECK(v == 0);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wifsignaled(&v, stat, diag, sizeof diag));
	CHECK(v == 0);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wifaborted(&v, stat, diag, sizeof diag));
	CHECK(v == 0);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wcoredump(&v, stat, diag, sizeof diag));
	CHECK(v == 0);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_num_attr_values(ru, &n));
	CHECK(n == 35);
	while (drmaa_get_next_attr_value(ru, buf, sizeof buf) == DRMAA_ERRNO_SUCCESS)
		if (strcmp(buf, "exit_status=0.0000") == 0 || strcmp(buf, "priority=-3.0000") == 0)
			found = true;
	CHECK(found);
	drmaa_release_attr_values(ru);
	snprintf(path, sizeof path, "%s/run.out", work);
	CHECK((fp = fopen(path, "r")) != NULL);
	if (fp) {
		CHECK(fgets(line, sizeof line, fp) != NULL);
		/* sh -c SCRIPT ARG: ARG is $0. */
		snprintf(want, sizeof want, "one two||from drmaa|%s\n", work);
		CHECK(strcmp(line, want) == 0);
		fclose(fp);
	}
	snprintf(path, sizeof path, "%s/run.err", work);
	CHECK(access(path, R_OK) == 0);
	/* Reaped: a second wait knows it no more. */
	EXPECT(DRMAA_ERRNO_INVALID_JOB, drmaa_wait(id, NULL, 0, &stat, 0, NULL, diag, sizeof diag));
	drmaa_delete_job_template(jt, NULL, 0);
}

/* Exit status, a signal, a job killed, a job that never ran. */
static void
case_ends(void)
{
	char a[DRMAA_JOBNAME_BUFFER], b[DRMAA_JOBNAME_BUFFER], c[DRMAA_JOBNAME_BUFFER];
	char d[DRMAA_JOBNAME_BUFFER], sig[DRMAA_SIGNAL_BUFFER];
	int stat, v = -1;

	run_sh("exit 7", a, NULL);
	run_sh("kill -SEGV $$", b, NULL);
	run_sh("sleep 300", c, NULL);
	run_sh("true", d, NULL);
	stat = wait_stat(a, NULL);
	CHECK(ps(a) == DRMAA_PS_FAILED);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wifexited(&v, stat, diag, sizeof diag));
	CHECK(v == 1);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wexitstatus(&v, stat, diag, sizeof diag));
	CHECK(v == 7);
	stat = wait_stat(b, NULL);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wifsignaled(&v, stat, diag, sizeof diag));
	CHECK(v == 1);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wtermsig(sig, sizeof sig, stat, diag, sizeof diag));
	CHECK(strcmp(sig, "SIGSEGV") == 0);
	ps_until(c, DRMAA_PS_RUNNING);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(c, DRMAA_CONTROL_TERMINATE, diag, sizeof diag));
	stat = wait_stat(c, NULL);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wifsignaled(&v, stat, diag, sizeof diag));
	CHECK(v == 1);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wtermsig(sig, sizeof sig, stat, diag, sizeof diag));
	CHECK(strcmp(sig, "SIGKILL") == 0);
	CHECK(ps(c) == DRMAA_PS_FAILED);
	CHECK(wait_stat(d, NULL) == 0);
	CHECK(ps(d) == DRMAA_PS_DONE);
}

/* Held at submission, released; held and released again; suspended. */
static void
case_hold(void)
{
	drmaa_job_template_t *jt;
	char a[DRMAA_JOBNAME_BUFFER], b[DRMAA_JOBNAME_BUFFER], when[64];
	int stat, v = -1;
	time_t t = time(NULL) + 3600;

	run_sh("exit 0", a, &jt);
	drmaa_delete_job_template(jt, NULL, 0);
	CHECK(wait_stat(a, NULL) == 0);
	{
		const char *argv[] = { "-c", "exit 0", NULL };
		jt = template("/bin/sh", argv);
	}
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_JS_STATE, DRMAA_SUBMISSION_STATE_HOLD, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_run_job(a, sizeof a, jt, diag, sizeof diag));
	CHECK(ps(a) == DRMAA_PS_USER_ON_HOLD);
	EXPECT(DRMAA_ERRNO_EXIT_TIMEOUT, drmaa_wait(a, NULL, 0, &stat, 1, NULL, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(a, DRMAA_CONTROL_RELEASE, diag, sizeof diag));
	CHECK(wait_stat(a, NULL) == 0);
	/* A start time to come is the system's hold. */
	strftime(when, sizeof when, "%Y/%m/%d %H:%M", localtime(&t));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_JS_STATE, DRMAA_SUBMISSION_STATE_ACTIVE, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_START_TIME, when, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_run_job(b, sizeof b, jt, diag, sizeof diag));
	CHECK(ps(b) == DRMAA_PS_SYSTEM_ON_HOLD);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(b, DRMAA_CONTROL_HOLD, diag, sizeof diag));
	CHECK(ps(b) == DRMAA_PS_USER_SYSTEM_ON_HOLD);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(b, DRMAA_CONTROL_TERMINATE, diag, sizeof diag));
	stat = wait_stat(b, NULL);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wifaborted(&v, stat, diag, sizeof diag));
	CHECK(v == 1);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wifexited(&v, stat, diag, sizeof diag));
	CHECK(v == 0);
	/* A deadline gone is refused. */
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_START_TIME, "00:00", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_DEADLINE_TIME, "2000/01/01 00:00", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_DENIED_BY_DRM, drmaa_run_job(b, sizeof b, jt, diag, sizeof diag));
	drmaa_delete_job_template(jt, NULL, 0);
	/* Suspended and resumed while running. */
	run_sh("sleep 300", a, NULL);
	ps_until(a, DRMAA_PS_RUNNING);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(a, DRMAA_CONTROL_SUSPEND, diag, sizeof diag));
	CHECK(ps(a) == DRMAA_PS_USER_SUSPENDED);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(a, DRMAA_CONTROL_RESUME, diag, sizeof diag));
	CHECK(ps(a) == DRMAA_PS_RUNNING);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(DRMAA_JOB_IDS_SESSION_ALL, DRMAA_CONTROL_TERMINATE, diag, sizeof diag));
	wait_stat(a, NULL);
}

/* Ids that are not jobs, timeouts. */
static volatile sig_atomic_t alarms;

static void
on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void
case_errors(void)
{
	const char *none[] = { "999999", NULL }, *one[2] = { NULL, NULL };
	char a[DRMAA_JOBNAME_BUFFER], out[DRMAA_JOBNAME_BUFFER];
	int v = 0, stat;

	EXPECT(DRMAA_ERRNO_INVALID_JOB, drmaa_job_ps("999999", &v, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_JOB, drmaa_job_ps("12x", &v, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_JOB, drmaa_control("999999", DRMAA_CONTROL_HOLD, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_JOB, drmaa_control("999999", DRMAA_CONTROL_TERMINATE, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_ARGUMENT, drmaa_control("1", 42, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_JOB, drmaa_wait("999999", out, sizeof out, &stat, 0, NULL, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_JOB, drmaa_wait(DRMAA_JOB_IDS_SESSION_ANY, out, sizeof out, &stat, 0, NULL, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_JOB, drmaa_synchronize(none, 0, 1, diag, sizeof diag));
	run_sh("sleep 300", a, NULL);
	one[0] = a;
	EXPECT(DRMAA_ERRNO_EXIT_TIMEOUT, drmaa_wait(a, out, sizeof out, &stat, DRMAA_TIMEOUT_NO_WAIT, NULL, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_EXIT_TIMEOUT, drmaa_wait(DRMAA_JOB_IDS_SESSION_ANY, out, sizeof out, &stat, 1, NULL, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_EXIT_TIMEOUT, drmaa_synchronize(one, 1, 1, diag, sizeof diag));
	/* A signal the program handles, without SA_RESTART, ends no wait
	 * early: only the job's end or the timeout does. */
	{
		struct sigaction sa = { .sa_handler = on_alarm };
		char b[DRMAA_JOBNAME_BUFFER];
		sigemptyset(&sa.sa_mask);
		CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
		run_sh("sleep 2", b, NULL);
		alarm(1);
		EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wait(b, out, sizeof out, &stat, DRMAA_TIMEOUT_WAIT_FOREVER, NULL, diag, sizeof diag));
		CHECK(alarms == 1);
	}
	/* Running: not releasable, not resumable. */
	ps_until(a, DRMAA_PS_RUNNING);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(a, DRMAA_CONTROL_TERMINATE, diag, sizeof diag));
	/* An ended job answers a wait of no time at once. */
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_synchronize(one, DRMAA_TIMEOUT_WAIT_FOREVER, 0, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wait(a, out, sizeof out, &stat, DRMAA_TIMEOUT_NO_WAIT, NULL, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_JOB, drmaa_wait(a, out, sizeof out, &stat, DRMAA_TIMEOUT_NO_WAIT, NULL, diag, sizeof diag));
	/* A job the master refuses. */
	{
		drmaa_job_template_t *jt = template("/bin/true", NULL);
		EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_NATIVE_SPECIFICATION, "-q nosuchqueue", diag, sizeof diag));
		EXPECT(DRMAA_ERRNO_DENIED_BY_DRM, drmaa_run_job(a, sizeof a, jt, diag, sizeof diag));
		drmaa_delete_job_template(jt, NULL, 0);
		jt = NULL;
		EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_allocate_job_template(&jt, diag, sizeof diag));
		EXPECT(DRMAA_ERRNO_INVALID_ARGUMENT, drmaa_run_job(a, sizeof a, jt, diag, sizeof diag));
		drmaa_delete_job_template(jt, NULL, 0);
	}
}

/* A bulk job of 100 tasks, synchronized, then reaped one by one. */
static void
case_bulk(void)
{
	const char *argv[] = { "-c", "echo $SGE_TASK_ID", NULL }, *all[] = { DRMAA_JOB_IDS_SESSION_ALL, NULL };
	drmaa_job_template_t *jt = template("/bin/sh", argv);
	drmaa_job_ids_t *ids = NULL;
	char id[DRMAA_JOBNAME_BUFFER], out[DRMAA_JOBNAME_BUFFER], path[4096], first[64];
	int n = 0, stat, seen[101] = { 0 };

	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_OUTPUT_PATH, ":" DRMAA_PLACEHOLDER_WD "/t." DRMAA_PLACEHOLDER_INCR, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_WD, work, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_ARGUMENT, drmaa_run_bulk_jobs(&ids, jt, 5, 1, 1, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_run_bulk_jobs(&ids, jt, 1, 100, 1, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_num_job_ids(ids, &n));
	CHECK(n == 100);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_next_job_id(ids, first, sizeof first));
	CHECK(strstr(first, ".1") != NULL);
	drmaa_release_job_ids(ids);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_synchronize(all, DRMAA_TIMEOUT_WAIT_FOREVER, 0, diag, sizeof diag));
	CHECK(ps(first) == DRMAA_PS_DONE);
	for (int i = 0; i < 100; i++) {
		int task;
		EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wait(DRMAA_JOB_IDS_SESSION_ANY, out, sizeof out, &stat, 0, NULL, diag, sizeof diag));
		CHECK(stat == 0);
		task = atoi(strchr(out, '.') ? strchr(out, '.') + 1 : "0");
		CHECK(task >= 1 && task <= 100 && !seen[task]);
		if (task >= 1 && task <= 100)
			seen[task] = 1;
	}
	EXPECT(DRMAA_ERRNO_INVALID_JOB, drmaa_wait(DRMAA_JOB_IDS_SESSION_ANY, out, sizeof out, &stat, 0, NULL, diag, sizeof diag));
	snprintf(path, sizeof path, "%s/t.100", work);
	CHECK(access(path, R_OK) == 0);
	/* Tasks of a stepped range, terminated one at a time and all. */
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_vector_attribute(jt, DRMAA_V_ARGV, (const char *[]){ "-c", "sleep 300", NULL }, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_run_bulk_jobs(&ids, jt, 2, 10, 4, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_num_job_ids(ids, &n));
	CHECK(n == 3);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_next_job_id(ids, id, sizeof id));
	drmaa_release_job_ids(ids);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(id, DRMAA_CONTROL_TERMINATE, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wait(id, out, sizeof out, &stat, DRMAA_TIMEOUT_WAIT_FOREVER, NULL, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(DRMAA_JOB_IDS_SESSION_ALL, DRMAA_CONTROL_TERMINATE, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_synchronize(all, DRMAA_TIMEOUT_WAIT_FOREVER, 1, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_JOB, drmaa_wait(DRMAA_JOB_IDS_SESSION_ANY, out, sizeof out, &stat, 0, NULL, diag, sizeof diag));
	drmaa_delete_job_template(jt, NULL, 0);
}

/* A script job (-b n in the native specification) and a hard limit. */
static void
case_native(void)
{
	drmaa_job_template_t *jt;
	char id[DRMAA_JOBNAME_BUFFER], path[4096];
	int stat, v = -1;
	FILE *fp;

	snprintf(path, sizeof path, "%s/job.sh", work);
	fp = fopen(path, "w");
	CHECK(fp != NULL);
	if (!fp)
		return;
	fputs("#!/bin/sh\n#$ -N fromscript\nexit 5\n", fp);
	fclose(fp);
	jt = template(path, NULL);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_NATIVE_SPECIFICATION, "-b n -S /bin/sh", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_run_job(id, sizeof id, jt, diag, sizeof diag));
	stat = wait_stat(id, NULL);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wexitstatus(&v, stat, diag, sizeof diag));
	CHECK(v == 5);
	drmaa_delete_job_template(jt, NULL, 0);
	/* The hard wall clock limit ends a job that runs past it. */
	jt = template("/bin/sleep", (const char *[]){ "300", NULL });
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_WCT_HLIMIT, "00:00:02", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_run_job(id, sizeof id, jt, diag, sizeof diag));
	stat = wait_stat(id, NULL);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wifsignaled(&v, stat, diag, sizeof diag));
	CHECK(v == 1);
	drmaa_delete_job_template(jt, NULL, 0);
}

/* The next id of a bulk job into buf. */
static void
bulk_id(drmaa_job_ids_t *ids, char *buf, size_t len)
{
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_get_next_job_id(ids, buf, len));
}

/* One task of a bulk job suspended, resumed, held, released and
 * terminated alone, as Grid Engine's "JOB.TASK"; job_ps of each task its own. */
static void
case_tasks(void)
{
	drmaa_job_template_t *jt = template("/bin/sleep", (const char *[]){ "300", NULL });
	const char *all[] = { DRMAA_JOB_IDS_SESSION_ALL, NULL };
	drmaa_job_ids_t *ids = NULL;
	char t1[64], t2[64], t3[64], bad[80], when[64];
	time_t t = time(NULL) + 3600;
	int stat, v;

	/* Running: the second task stopped and continued, the first runs on. */
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_run_bulk_jobs(&ids, jt, 1, 2, 1, diag, sizeof diag));
	bulk_id(ids, t1, sizeof t1);
	bulk_id(ids, t2, sizeof t2);
	drmaa_release_job_ids(ids);
	ps_until(t1, DRMAA_PS_RUNNING);
	ps_until(t2, DRMAA_PS_RUNNING);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(t2, DRMAA_CONTROL_SUSPEND, diag, sizeof diag));
	CHECK(ps(t2) == DRMAA_PS_USER_SUSPENDED);
	CHECK(ps(t1) == DRMAA_PS_RUNNING);
	EXPECT(DRMAA_ERRNO_HOLD_INCONSISTENT_STATE, drmaa_control(t1, DRMAA_CONTROL_HOLD, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(t2, DRMAA_CONTROL_RESUME, diag, sizeof diag));
	CHECK(ps(t2) == DRMAA_PS_RUNNING);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(t1, DRMAA_CONTROL_TERMINATE, diag, sizeof diag));
	stat = wait_stat(t1, NULL);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wifsignaled(&v, stat, diag, sizeof diag));
	CHECK(v == 1);
	CHECK(ps(t2) == DRMAA_PS_RUNNING);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(t2, DRMAA_CONTROL_TERMINATE, diag, sizeof diag));
	wait_stat(t2, NULL);
	/* Pending (a start time an hour ahead): the second task held and
	 * released alone. */
	strftime(when, sizeof when, "%Y/%m/%d %H:%M", localtime(&t));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_START_TIME, when, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_run_bulk_jobs(&ids, jt, 1, 3, 1, diag, sizeof diag));
	bulk_id(ids, t1, sizeof t1);
	bulk_id(ids, t2, sizeof t2);
	bulk_id(ids, t3, sizeof t3);
	drmaa_release_job_ids(ids);
	CHECK(ps(t2) == DRMAA_PS_SYSTEM_ON_HOLD);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(t2, DRMAA_CONTROL_HOLD, diag, sizeof diag));
	CHECK(ps(t2) == DRMAA_PS_USER_SYSTEM_ON_HOLD);
	CHECK(ps(t1) == DRMAA_PS_SYSTEM_ON_HOLD);
	CHECK(ps(t3) == DRMAA_PS_SYSTEM_ON_HOLD);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(t2, DRMAA_CONTROL_RELEASE, diag, sizeof diag));
	CHECK(ps(t2) == DRMAA_PS_SYSTEM_ON_HOLD);
	snprintf(bad, sizeof bad, "%.*s.9", (int)(strchr(t1, '.') - t1), t1);
	EXPECT(DRMAA_ERRNO_INVALID_JOB, drmaa_control(bad, DRMAA_CONTROL_HOLD, diag, sizeof diag));
	/* A terminated task is its own: the others stay. */
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(t3, DRMAA_CONTROL_TERMINATE, diag, sizeof diag));
	stat = wait_stat(t3, NULL);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_wifaborted(&v, stat, diag, sizeof diag));
	CHECK(v == 1);
	CHECK(ps(t1) == DRMAA_PS_SYSTEM_ON_HOLD);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_control(DRMAA_JOB_IDS_SESSION_ALL, DRMAA_CONTROL_TERMINATE, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_synchronize(all, DRMAA_TIMEOUT_WAIT_FOREVER, 1, diag, sizeof diag));
	drmaa_delete_job_template(jt, NULL, 0);
}

/* The contents of work's file name, or "" (at most 255 bytes). */
static const char *
file_text(const char *name)
{
	static char buf[256];
	char path[4096];
	FILE *f;
	size_t n = 0;

	snprintf(path, sizeof path, "%s/%s", work, name);
	if ((f = fopen(path, "r")) != NULL) {
		n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

/* drmaa_transfer_files: the output and error files staged back into the
 * current directory when the job is waited for. */
static void
case_transfer(void)
{
	const char *argv[] = { "-c", "echo out-$SGE_TASK_ID; echo err >&2", NULL };
	const char *all[] = { DRMAA_JOB_IDS_SESSION_ALL, NULL };
	drmaa_job_template_t *jt = template("/bin/sh", argv);
	drmaa_job_ids_t *ids = NULL;
	char id[DRMAA_JOBNAME_BUFFER];

	CHECK(chdir(work) == 0);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_JOIN_FILES, "n", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_OUTPUT_PATH, ":o.txt", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_ERROR_PATH, "somehost:e.txt", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_TRANSFER_FILES, "ioe", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_run_job(id, sizeof id, jt, diag, sizeof diag));
	CHECK(wait_stat(id, NULL) == 0);
	CHECK(strcmp(file_text("o.txt"), "out-undefined\n") == 0);
	CHECK(strcmp(file_text("e.txt"), "err\n") == 0);
	/* Only the error file: the output stays on the exec host's side. */
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_OUTPUT_PATH, ":o2.txt", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_ERROR_PATH, ":e2.txt", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_TRANSFER_FILES, "e", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_run_job(id, sizeof id, jt, diag, sizeof diag));
	CHECK(wait_stat(id, NULL) == 0);
	CHECK(strcmp(file_text("e2.txt"), "err\n") == 0);
	CHECK(access("o2.txt", F_OK) != 0);
	/* A bulk job: each task's file comes back with its task's suffix,
	 * as staging names an array's outputs. */
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_OUTPUT_PATH, ":b." DRMAA_PLACEHOLDER_INCR, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_TRANSFER_FILES, "o", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_run_bulk_jobs(&ids, jt, 1, 2, 1, diag, sizeof diag));
	drmaa_release_job_ids(ids);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_synchronize(all, DRMAA_TIMEOUT_WAIT_FOREVER, 1, diag, sizeof diag));
	CHECK(strcmp(file_text("b.1.1"), "out-1\n") == 0);
	CHECK(strcmp(file_text("b.2.2"), "out-2\n") == 0);
	/* Joined, the error file is the output file's. */
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_JOIN_FILES, "y", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_OUTPUT_PATH, ":j.txt", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_TRANSFER_FILES, "eo", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_run_job(id, sizeof id, jt, diag, sizeof diag));
	CHECK(wait_stat(id, NULL) == 0);
	CHECK(strcmp(file_text("j.txt"), "out-undefined\nerr\n") == 0);
	/* A path that cannot come back: absolute, or above the directory. */
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_OUTPUT_PATH, ":/tmp/o.txt", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, drmaa_run_job(id, sizeof id, jt, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_OUTPUT_PATH, ":../o.txt", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, drmaa_run_job(id, sizeof id, jt, diag, sizeof diag));
	drmaa_delete_job_template(jt, NULL, 0);
}

/* drmaa_input_path: the job's standard input, read where the job runs
 * (qsub -i), or with drmaa_transfer_files i sent with the job (staged in)
 * from the session's current directory. */
static void
case_input(void)
{
	const char *argv[] = { "-c", "tr a-z A-Z; echo task-$SGE_TASK_ID", NULL };
	const char *all[] = { DRMAA_JOB_IDS_SESSION_ALL, NULL };
	drmaa_job_template_t *jt = template("/bin/sh", argv);
	drmaa_job_ids_t *ids = NULL;
	char id[DRMAA_JOBNAME_BUFFER], path[4096], in[4200];
	FILE *fp;

	CHECK(chdir(work) == 0);
	CHECK((fp = fopen("in.txt", "w")) != NULL && fputs("from a file\n", fp) >= 0 && fclose(fp) == 0);
	/* Read in place: the host's path, as qsub -i takes it. */
	snprintf(in, sizeof in, "somehost:%s/in.txt", work);
	snprintf(path, sizeof path, ":%s/in.out", work);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_INPUT_PATH, in, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_OUTPUT_PATH, path, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_JOIN_FILES, "y", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_run_job(id, sizeof id, jt, diag, sizeof diag));
	CHECK(wait_stat(id, NULL) == 0);
	CHECK(strcmp(file_text("in.out"), "FROM A FILE\ntask-undefined\n") == 0);
	/* Sent with the job and read there; the output comes back. */
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_INPUT_PATH, ":in.txt", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_OUTPUT_PATH, ":staged.out", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_TRANSFER_FILES, "io", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_run_job(id, sizeof id, jt, diag, sizeof diag));
	CHECK(wait_stat(id, NULL) == 0);
	CHECK(strcmp(file_text("staged.out"), "FROM A FILE\ntask-undefined\n") == 0);
	/* Every task of a bulk job reads the same input. */
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_OUTPUT_PATH, ":bi." DRMAA_PLACEHOLDER_INCR, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_run_bulk_jobs(&ids, jt, 1, 2, 1, diag, sizeof diag));
	drmaa_release_job_ids(ids);
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_synchronize(all, DRMAA_TIMEOUT_WAIT_FOREVER, 1, diag, sizeof diag));
	CHECK(strcmp(file_text("bi.1.1"), "FROM A FILE\ntask-1\n") == 0);
	CHECK(strcmp(file_text("bi.2.2"), "FROM A FILE\ntask-2\n") == 0);
	/* An input that cannot be sent: absolute, above the directory, a
	 * task's own, or missing. */
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_OUTPUT_PATH, ":staged.out", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_INPUT_PATH, in, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, drmaa_run_job(id, sizeof id, jt, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_INPUT_PATH, ":../in.txt", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, drmaa_run_job(id, sizeof id, jt, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_INPUT_PATH, ":in." DRMAA_PLACEHOLDER_INCR, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, drmaa_run_bulk_jobs(&ids, jt, 1, 2, 1, diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_set_attribute(jt, DRMAA_INPUT_PATH, ":missing.txt", diag, sizeof diag));
	EXPECT(DRMAA_ERRNO_DENIED_BY_DRM, drmaa_run_job(id, sizeof id, jt, diag, sizeof diag));
	drmaa_delete_job_template(jt, NULL, 0);
}

int
main(int argc, char **argv)
{
	static const struct { const char *name; void (*run)(void); } cases[] = {
		{ "template", case_template }, { "threads", case_threads }, { "run", case_run },
		{ "ends", case_ends }, { "hold", case_hold }, { "errors", case_errors },
		{ "bulk", case_bulk }, { "native", case_native }, { "tasks", case_tasks },
		{ "transfer", case_transfer }, { "input", case_input },
	};

	/* Run bare (make check TESTS='$(check_PROGRAMS)', as debian/rules
	 * does), it has no cluster: TAP's skip. */
	if (argc == 1) {
		printf("1..0 # SKIP needs a cluster: t/e2e/drmaa.bats runs each case\n");
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: test_drmaa session|CASE WORKDIR (CASE: template, run, input ...)\n");
		return 2;
	}
	work = argv[2];
	if (strcmp(argv[1], "session") == 0)
		case_session();
	else {
		size_t i;
		for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
			if (strcmp(cases[i].name, argv[1]) == 0)
				break;
		if (i == sizeof cases / sizeof cases[0]) {
			fprintf(stderr, "test_drmaa: no case \"%s\"\n", argv[1]);
			return 2;
		}
		EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_init(NULL, diag, sizeof diag));
		cases[i].run();
	}
	EXPECT(DRMAA_ERRNO_SUCCESS, drmaa_exit(diag, sizeof diag));
	printf("%s: %d failures\n", argv[1], failures);
	return failures ? 1 : 0;
}
