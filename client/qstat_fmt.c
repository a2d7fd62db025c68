/* qstat_fmt.c: qstat's output in Grid Engine's layout, as pure functions over the master's JSON. */
#include "config.h"

#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/common.h"
#include "client/client.h"

/* Tools cut qstat's output by column, so every width is Grid Engine's:
 * id 7, prior 7, name 10, user 12, state 5, time 19, queue 30, slots 5. */
static const char qstat_header[] =
    "job-ID  prior   name       user         state submit/start at     "
    "queue                          slots ja-task-ID \n";
#define QSTAT_RULE_LEN 113

void
qstat_format_time(char *buf, size_t n, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (!localtime_r(&t, &tm) || strftime(buf, n, "%m/%d/%Y %H:%M:%S", &tm) == 0)
		snprintf(buf, n, "%-19s", "");
}

/* Grid Engine's "prior" is the scheduler's normalized priority, 0 to 1;
 * with only -p to go on that is -p mapped onto the same range. */
static double
normalized_prio(const json_t *job)
{
	return ((double)jint(job, "prio", 0) + 1024.0) / 2048.0;
}

static const char *
state_letters(const json_t *job)
{
	const char *s = jstr(job, "state_letters");
	const char *st = jstr(job, "state");

	if (s)
		return s;
	if (!st || strcmp(st, "pending") == 0)
		return "qw";
	if (strcmp(st, "transferring") == 0)
		return "t";
	if (strcmp(st, "running") == 0)
		return "r";
	return "z";
}

static bool
is_active(const json_t *job)
{
	const char *st = jstr(job, "state");
	return st && (strcmp(st, "running") == 0 || strcmp(st, "transferring") == 0);
}

void
qstat_print_row(FILE *fp, const json_t *job)
{
	char when[32], queue[128] = "";
	const char *q = jstr(job, "queue"), *h = jstr(job, "host");
	int64_t start = jint(job, "start_time", 0);
	bool active = is_active(job);

	qstat_format_time(when, sizeof when, active && start ? start : jint(job, "submit_time", 0));
	if (active && h)
		snprintf(queue, sizeof queue, "%s@%s", q ? q : "", h);
	fprintf(fp, "%7lld %7.5f %-10.10s %-12.12s %-5.5s %s %-30.30s %5d %7s\n",
	    (long long)jint(job, "id", 0), normalized_prio(job),
	    jstr(job, "name") ? jstr(job, "name") : "", jstr(job, "owner") ? jstr(job, "owner") : "",
	    state_letters(job), when, queue, 1, "");
}

void
qstat_print_table(FILE *fp, const json_t *jobs)
{
	size_t i;
	json_t *j;

	if (json_array_size(jobs) == 0)
		return;
	fputs(qstat_header, fp);
	for (i = 0; i < QSTAT_RULE_LEN; i++)
		fputc('-', fp);
	fputc('\n', fp);
	json_array_foreach(jobs, i, j)
		qstat_print_row(fp, j);
}

/* Keys end in a colon and values start in column 29, as in qstat -j. */
static void
kv(FILE *fp, const char *key, const char *fmt, ...) NOWQ_ATTR_PRINTF(3, 4);

static void
kv(FILE *fp, const char *key, const char *fmt, ...)
{
	char k[64];
	va_list ap;

	snprintf(k, sizeof k, "%s:", key);
	fprintf(fp, "%-28s", k);
	va_start(ap, fmt);
	vfprintf(fp, fmt, ap);
	va_end(ap);
	fputc('\n', fp);
}

static const char *
env_value(const json_t *env, const char *name)
{
	size_t i, n = strlen(name);
	json_t *e;

	json_array_foreach(env, i, e) {
		const char *s = json_string_value(e);
		if (s && strncmp(s, name, n) == 0 && s[n] == '=')
			return s + n + 1;
	}
	return NULL;
}

/* Joins the strings of a list from index first on, with sep. */
static char *
join_list(const json_t *a, size_t first, const char *sep, const char *skip_prefix)
{
	size_t i, len = 1;
	char *s;
	json_t *v;

	json_array_foreach(a, i, v)
		if (i >= first && json_string_value(v))
			len += strlen(json_string_value(v)) + strlen(sep);
	s = xcalloc(1, len);
	json_array_foreach(a, i, v) {
		const char *t = json_string_value(v);
		if (i < first || !t || (skip_prefix && strncmp(t, skip_prefix, strlen(skip_prefix)) == 0))
			continue;
		if (*s)
			strcat(s, sep);
		strcat(s, t);
	}
	return s;
}

static void
format_cpu(char *buf, size_t n, double secs)
{
	long s = (long)secs, d = s / 86400, h = s % 86400 / 3600, m = s % 3600 / 60;
	if (d > 0)
		snprintf(buf, n, "%ld:%02ld:%02ld:%02ld", d, h, m, s % 60);
	else
		snprintf(buf, n, "%02ld:%02ld:%02ld", h, m, s % 60);
}

static void
format_mem(char *buf, size_t n, int64_t kb)
{
	double b = (double)kb * 1024.0;
	if (kb <= 0)
		snprintf(buf, n, "N/A");
	else if (b >= 1024.0 * 1024 * 1024)
		snprintf(buf, n, "%.3fG", b / (1024.0 * 1024 * 1024));
	else if (b >= 1024.0 * 1024)
		snprintf(buf, n, "%.3fM", b / (1024.0 * 1024));
	else
		snprintf(buf, n, "%.3fK", b / 1024.0);
}

static double
jreal(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : 0.0;
}

static const char *
signal_name(int sig, char *buf, size_t n)
{
	const char *abbrev = sigabbrev_np(sig);
	if (abbrev)
		snprintf(buf, n, "SIG%s", abbrev);
	else
		snprintf(buf, n, "%d", sig);
	return buf;
}

void
qstat_print_job(FILE *fp, const json_t *job)
{
	static const struct { const char *key, *var; } o_vars[] = {
		{ "sge_o_home", "SGE_O_HOME" }, { "sge_o_log_name", "SGE_O_LOGNAME" },
		{ "sge_o_path", "SGE_O_PATH" }, { "sge_o_shell", "SGE_O_SHELL" },
		{ "sge_o_tz", "SGE_O_TZ" }, { "sge_o_workdir", "SGE_O_WORKDIR" },
		{ "sge_o_host", "SGE_O_HOST" },
	};
	const json_t *env = json_object_get(job, "env");
	const json_t *argv = json_object_get(job, "argv");
	const json_t *args = json_object_get(job, "args");
	const char *st = jstr(job, "state"), *s, *reason = jstr(job, "reason");
	bool finished = st && strcmp(st, "pending") != 0 && !is_active(job);
	time_t t = (time_t)(jint(job, "submit_time", 0) / 1000);
	struct group *gr;
	char tbuf[64], cpu[32], mem[32];
	int64_t gid = jint(job, "gid", 0);
	char *list;

	fputs("==============================================================\n", fp);
	kv(fp, "job_number", "%lld", (long long)jint(job, "id", 0));
	if (!ctime_r(&t, tbuf))
		snprintf(tbuf, sizeof tbuf, "\n");
	fprintf(fp, "%-28s%s", "submission_time:", tbuf);
	kv(fp, "owner", "%s", jstr(job, "owner") ? jstr(job, "owner") : "");
	kv(fp, "uid", "%lld", (long long)jint(job, "uid", 0));
	gr = getgrgid((gid_t)gid);
	if (gr)
		kv(fp, "group", "%s", gr->gr_name);
	else
		kv(fp, "group", "%lld", (long long)gid);
	kv(fp, "gid", "%lld", (long long)gid);
	for (size_t i = 0; env && i < sizeof o_vars / sizeof o_vars[0]; i++)
		if ((s = env_value(env, o_vars[i].var)) != NULL)
			kv(fp, o_vars[i].key, "%s", s);
	kv(fp, "account", "sge");
	if ((s = jstr(job, "cwd")) != NULL)
		kv(fp, "cwd", "%s", s);
	if ((s = jstr(job, "err")) != NULL)
		kv(fp, "stderr_path_list", "NONE:NONE:%s", s);
	if (jbool(job, "join", false))
		kv(fp, "merge", "y");
	kv(fp, "notify", "FALSE");
	kv(fp, "job_name", "%s", jstr(job, "name") ? jstr(job, "name") : "");
	if ((s = jstr(job, "out")) != NULL)
		kv(fp, "stdout_path_list", "NONE:NONE:%s", s);
	if (jint(job, "prio", 0) != 0)
		kv(fp, "priority", "%lld", (long long)jint(job, "prio", 0));
	kv(fp, "jobshare", "0");
	if ((s = jstr(job, "queue")) != NULL)
		kv(fp, "hard_queue_list", "%s", s);
	if ((s = jstr(job, "shell")) != NULL)
		kv(fp, "shell_list", "NONE:%s", s);
	if (json_is_array(env)) {
		list = join_list(env, 0, ",", "SGE_O_");
		kv(fp, "env_list", "%s", list);
		free(list);
	}
	if (json_is_array(argv) && json_array_size(argv) > 0) {
		if (json_array_size(argv) > 1) {
			list = join_list(argv, 1, ",", NULL);
			kv(fp, "job_args", "%s", list);
			free(list);
		}
		kv(fp, "script_file", "%s", json_string_value(json_array_get(argv, 0)) ?
		    json_string_value(json_array_get(argv, 0)) : "");
	} else if (json_is_array(args) && json_array_size(args) > 0) {
		list = join_list(args, 0, ",", NULL);
		kv(fp, "job_args", "%s", list);
		free(list);
	}
	if (is_active(job) || (finished && jint(job, "start_time", 0) > 0)) {
		format_cpu(cpu, sizeof cpu, jreal(job, "utime") + jreal(job, "stime"));
		format_mem(mem, sizeof mem, jint(job, "maxrss_kb", 0));
		fprintf(fp, "usage %4d:                 cpu=%s, mem=0.00000 GBs, io=0.00000, "
		    "vmem=N/A, maxvmem=%s\n", 1, cpu, mem);
	}
	if (finished) {
		int sig = (int)jint(job, "signal", 0);
		kv(fp, "exit_status", "%lld", (long long)jint(job, "exit_status", 0));
		if (sig > 0) {
			char sb[32];
			kv(fp, "signal", "%s", signal_name(sig, sb, sizeof sb));
		}
	}
	if (reason && (jbool(job, "error", false) || (finished && strcmp(st, "done") != 0)))
		fprintf(fp, "%s %4d:          %s\n", "error reason", 1, reason);
}
