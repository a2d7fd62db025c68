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
#include "common/msg.h"
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
normalized_prio(const struct msg_job_row *r)
{
	return ((double)r->prio + 1024.0) / 2048.0;
}

static void kv(FILE *fp, const char *key, const char *fmt, ...) NOWQ_ATTR_PRINTF(3, 4);

static const char *
state_letters(const struct msg_job_row *r)
{
	const char *st = r->state;

	if (r->state_letters)
		return r->state_letters;
	if (!st || strcmp(st, "pending") == 0)
		return "qw";
	if (strcmp(st, "transferring") == 0)
		return "t";
	if (strcmp(st, "running") == 0)
		return "r";
	return "z";
}

static bool
state_active(const char *st)
{
	return st && (strcmp(st, "running") == 0 || strcmp(st, "transferring") == 0);
}

static bool
is_active(const json_t *job)
{
	return state_active(jstr(job, "state"));
}

/* Done, failed or deleted: what Grid Engine no longer knows as a job. */
bool
qstat_job_ended(const json_t *job)
{
	const char *st = jstr(job, "state");
	return st && strcmp(st, "pending") != 0 && !state_active(st);
}

/* One fixed-width column: at most width characters of s, padded with
 * blanks.  Counted in UTF-8 characters, not bytes, so a name in another
 * script neither shifts the columns after it nor is cut inside a
 * character; a control character shows as "?". */
static const char *
qstat_col(char *dst, size_t dstlen, const char *s, int width)
{
	size_t n = 0;
	int chars = 0;

	for (s = s ? s : ""; *s && n + 5 < dstlen; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c & 0xc0) != 0x80) {        /* the first byte of a character */
			if (chars == width)
				break;
			chars++;
		}
		dst[n++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	while (chars++ < width && n + 1 < dstlen)
		dst[n++] = ' ';
	dst[n] = '\0';
	return dst;
}

/* One job line; qstat -f's lines under a queue instance have no queue
 * column, since the block names it. */
static void
print_row(FILE *fp, const struct msg_job_row *r, bool with_queue)
{
	char when[32], queue[128] = "", ja[32] = "", name[64], owner[64], qcol[160];
	bool active = state_active(r->state);

	qstat_format_time(when, sizeof when, active && r->start_time ? r->start_time : r->submit_time);
	/* A parallel job's host is its hosts' list: the master host shows. */
	if (active && r->host)
		snprintf(queue, sizeof queue, "%s@%.*s", r->queue ? r->queue : "",
		    (int)strcspn(r->host, " "), r->host);

	/* ja-task-ID: a task's id, or an array's pending tasks ("1-99:2"). */
	if (r->tasks && *r->tasks)
		snprintf(ja, sizeof ja, "%s", r->tasks);
	else if (r->task > 0)
		snprintf(ja, sizeof ja, "%lld", (long long)r->task);
	fprintf(fp, "%7lld %7.5f %s %s %-5.5s %s ", (long long)r->id, normalized_prio(r),
	    qstat_col(name, sizeof name, r->name, 10), qstat_col(owner, sizeof owner, r->owner, 12),
	    state_letters(r), when);
	if (with_queue)
		fprintf(fp, "%s ", qstat_col(qcol, sizeof qcol, queue, 30));
	fprintf(fp, "%5lld %-7s\n", (long long)r->slots, ja);
}

void
qstat_print_row(FILE *fp, const struct msg_job_row *r)
{
	print_row(fp, r, true);
}

/* qstat -f. */

static const char full_header[] =
    "queuename                      qtype resv/used/tot. load_avg arch          states\n";
#define FULL_RULE_LEN 81
#define FULL_BANNER_LEN 76

struct qinst {
	const struct msg_host_row *h;
	struct msg_host_queue      q;
};

static int
qinst_cmp(const void *a, const void *b)
{
	const struct qinst *x = a, *y = b;
	int c = strcmp(x->q.name, y->q.name);
	return c ? c : strcmp(x->h->name, y->h->name);
}

static void
rule(FILE *fp, int c, int n)
{
	for (int i = 0; i < n; i++)
		fputc(c, fp);
	fputc('\n', fp);
}

/* Grid Engine's state letters of a queue instance: u(nknown) for a host
 * that does not answer, d(isabled) for a disabled queue or host, a(larm)
 * for a host that is not idle; and, in words, the open reservation that
 * holds it: reserved is a state of its own, never "unknown" or down. */
static void
full_states(FILE *fp, const struct qinst *qi)
{
	const struct msg_host_row *h = qi->h;
	const struct msg_host_resv *r = &h->reserved;
	bool unknown = !h->connected || h->lost;
	char letters[4], until[32];
	int n = 0;

	if (unknown)
		letters[n++] = 'u';
	if (h->disabled || qi->q.disabled)
		letters[n++] = 'd';
	if (!unknown && h->state && strcmp(h->state, "busy") == 0)
		letters[n++] = 'a';
	letters[n] = '\0';
	fputs(letters, fp);
	if (r->has) {
		qstat_format_time(until, sizeof until, r->end);
		fprintf(fp, "%sreserved %s by %s until %s", n ? " " : "", r->name ? r->name : "?",
		    r->owner ? r->owner : "?", until);
	}
}

static bool
row_on(const struct msg_job_row *r, const struct qinst *qi)
{
	size_t n;

	if (!state_active(r->state) || !r->queue || !r->host || strcmp(r->queue, qi->q.name) != 0)
		return false;
	n = strcspn(r->host, " ");
	return strlen(qi->h->name) == n && strncmp(r->host, qi->h->name, n) == 0;
}

/* The queue instances of the hosts, by queue then host. */
static struct qinst *
qinsts(const struct msg_host_row *hosts, size_t nhosts, size_t *nqi)
{
	struct qinst *qi = NULL;
	const json_t *q;
	size_t i, k;

	*nqi = 0;
	for (i = 0; i < nhosts; i++) {
		if (!hosts[i].name || !hosts[i].queues)
			continue;
		json_array_foreach(hosts[i].queues, k, q) {
			struct msg_host_queue mq;
			msg_host_queue_unpack(q, &mq);
			if (!mq.name)
				continue;
			qi = xrealloc(qi, (*nqi + 1) * sizeof *qi);
			qi[(*nqi)++] = (struct qinst){ &hosts[i], mq };
		}
	}
	if (*nqi > 1)
		qsort(qi, *nqi, sizeof *qi, qinst_cmp);
	return qi;
}

void
qstat_print_queues(FILE *fp, const json_t *hosts, const struct msg_job_row *rows, size_t n)
{
	size_t nhosts, nqi, i, k;
	struct msg_host_row *hr = msg_host_rows_unpack(hosts, &nhosts);
	struct qinst *qi = qinsts(hr, nhosts, &nqi);

	if (nqi > 0)
		fputs(full_header, fp);
	for (i = 0; i < nqi; i++) {
		const struct msg_host_row *h = qi[i].h;
		int64_t tot = h->slots, used = qi[i].q.used, resv = 0;
		char name[512], counts[64], load[16];

		/* A reserved host's free slots are the reservation's. */
		if (h->reserved.has)
			resv = tot - h->used > 0 ? tot - h->used : 0;
		snprintf(name, sizeof name, "%s@%s", qi[i].q.name, h->name);
		snprintf(counts, sizeof counts, "%lld/%lld/%lld", (long long)resv, (long long)used, (long long)tot);
		if (h->connected && h->has_load)
			snprintf(load, sizeof load, "%.2f", h->load[0]);
		else
			snprintf(load, sizeof load, "-NA-");
		rule(fp, '-', FULL_RULE_LEN);
		fprintf(fp, "%-30s %-5s %-14s %-8s %-13s ", name, "BP", counts, load,
		    h->attrs.arch ? h->attrs.arch : "-NA-");
		full_states(fp, &qi[i]);
		fputc('\n', fp);
		for (k = 0; k < n; k++)
			if (row_on(&rows[k], &qi[i]))
				print_row(fp, &rows[k], false);
	}
	free(qi);
	msg_host_rows_free(hr, nhosts);
}

bool
qstat_print_pending(FILE *fp, const struct msg_job_row *rows, size_t n, bool banner)
{
	bool any = false;

	for (size_t k = 0; k < n; k++) {
		if (!rows[k].state || strcmp(rows[k].state, "pending") != 0)
			continue;
		if (!any && banner) {
			fputc('\n', fp);
			rule(fp, '#', FULL_BANNER_LEN);
			fputs(" - PENDING JOBS - PENDING JOBS - PENDING JOBS - PENDING JOBS - PENDING JOBS\n", fp);
			rule(fp, '#', FULL_BANNER_LEN);
		}
		any = true;
		print_row(fp, &rows[k], false);
	}
	return any;
}

void
qstat_print_table(FILE *fp, const struct msg_job_row *rows, size_t n)
{
	size_t i;

	if (n == 0)
		return;
	fputs(qstat_header, fp);
	for (i = 0; i < QSTAT_RULE_LEN; i++)
		fputc('-', fp);
	fputc('\n', fp);
	for (i = 0; i < n; i++)
		qstat_print_row(fp, &rows[i]);
}

/* Keys end in a colon and values start in column 29, as in qstat -j. */
static void
kv(FILE *fp, const char *key, const char *fmt, ...) NOWQ_ATTR_PRINTF(3, 4);

static void
kv(FILE *fp, const char *key, const char *fmt, ...)
{
	char k[64], *raw, *v;
	va_list ap;

	snprintf(k, sizeof k, "%s:", key);
	va_start(ap, fmt);
	if (vasprintf(&raw, fmt, ap) < 0)
		fatalx("out of memory");
	va_end(ap);
	/* A path, a reason or a variable may hold a newline: a field is one line. */
	v = text_oneline(raw);
	fprintf(fp, "%-28s%s\n", k, v);
	free(v);
	free(raw);
}

/* exec_host_list: "host:slots" of every host, master host first (Grid
 * Engine's line); a parallel job's come from its pe_hosts. */
static void
qstat_print_hosts(FILE *fp, const json_t *job, const char *host)
{
	json_t *ph = json_object_get(job, "pe_hosts"), *h;
	size_t i;

	if (!json_is_array(ph) || json_array_size(ph) == 0) {
		kv(fp, "exec_host_list        1", "%s:%lld", host, (long long)jint(job, "slots", 1));
		return;
	}
	fprintf(fp, "%-28s", "exec_host_list        1:");
	json_array_foreach(ph, i, h) {
		struct msg_pe_host p;
		msg_pe_host_unpack(h, &p);
		fprintf(fp, "%s%s:%lld", i ? ", " : "", p.host ? p.host : "?", (long long)p.slots);
	}
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

/* What a job still waits for: Grid Engine's predecessor list, then each
 * with its kind, for people ("waiting for 12 (afterok), 13 (afterany)"). */
static void
print_waiting(FILE *fp, const json_t *w)
{
	size_t i, off = 0, n = json_array_size(w);
	char *ids, *why;
	json_t *e;

	if (n == 0)
		return;
	ids = xcalloc(n, 24);
	why = xcalloc(n, 40);
	json_array_foreach(w, i, e) {
		off += (size_t)sprintf(ids + off, "%s%lld", i ? "," : "", (long long)jint(e, "id", 0));
	}
	off = 0;
	json_array_foreach(w, i, e) {
		const char *k = jstr(e, "kind");
		off += (size_t)snprintf(why + off, n * 40 - off, "%s%lld (%.16s)", i ? ", " : "",
		    (long long)jint(e, "id", 0), k ? k : "?");
	}
	kv(fp, "jid_predecessor_list (req)", "%s", ids);
	kv(fp, "dependencies", "waiting for %s", why);
	free(ids);
	free(why);
}

/* An array's tasks that ran or run: Grid Engine's usage line numbered by
 * task, and where the running ones are. */
static void
print_tasks(FILE *fp, const json_t *tasks)
{
	char cpu[32], mem[32], key[64];
	size_t i;
	json_t *t;

	json_array_foreach(tasks, i, t) {
		const char *host = jstr(t, "host"), *st = jstr(t, "state");
		if (jint(t, "start_time", 0) <= 0)
			continue;
		format_cpu(cpu, sizeof cpu, jreal(t, "utime") + jreal(t, "stime"));
		format_mem(mem, sizeof mem, jint(t, "maxrss_kb", 0));
		fprintf(fp, "usage %4lld:                 cpu=%s, mem=0.00000 GBs, io=0.00000, "
		    "vmem=N/A, maxvmem=%s\n", (long long)jint(t, "task", 0), cpu, mem);
		if (host && st && state_active(st)) {
			snprintf(key, sizeof key, "exec_host_list %8lld", (long long)jint(t, "task", 0));
			kv(fp, key, "%s:1", host);
		}
	}
}

/* "hard resource_list: h_vmem=4G,matlab=TRUE": the -l request as asked
 * (its "asked" list, Grid Engine's full names), or, for a job from before
 * there was one, as the request's fields say. */
static void
print_req(FILE *fp, const char *what, const json_t *req)
{
	const char *k;
	json_t *v, *w;
	char *line = xstrdup(""), *t;
	size_t i;

	if (!json_is_object(req))
		goto out;
	if (json_is_array(json_object_get(req, "asked"))) {
		free(line);
		line = join_list(json_object_get(req, "asked"), 0, ",", NULL);
		goto out;
	}
	json_object_foreach((json_t *)req, k, v) {
		t = line;
		if (json_is_array(v)) {
			json_array_foreach(v, i, w)
				if (json_is_string(w)) {
					line = xasprintf("%s%s%s=TRUE", t, *t ? "," : "", json_string_value(w));
					free(t);
					t = line;
				}
			continue;
		}
		if (json_is_string(v))
			line = xasprintf("%s%s%s=%s", t, *t ? "," : "", k, json_string_value(v));
		else if (json_is_integer(v))
			line = xasprintf("%s%s%s=%lld", t, *t ? "," : "", k, (long long)json_integer_value(v));
		else if (json_is_true(v))
			line = xasprintf("%s%s%s=TRUE", t, *t ? "," : "", k);
		else
			continue;
		free(t);
	}
out:
	if (*line)
		kv(fp, what, "%s", line);
	free(line);
}

/* -P, -ac and -binding, where Grid Engine shows them: after the script. */
static void
print_recorded(FILE *fp, const json_t *job)
{
	const json_t *ctx = json_object_get(job, "context");
	const char *s;

	if ((s = jstr(job, "project")) != NULL)
		kv(fp, "project", "%s", s);
	if (json_is_array(ctx) && json_array_size(ctx) > 0) {
		char *list = join_list(ctx, 0, ",", NULL);
		kv(fp, "context", "%s", list);
		free(list);
	}
	if ((s = jstr(job, "binding")) != NULL)
		kv(fp, "binding", "%s", s);
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
	bool finished = qstat_job_ended(job);
	time_t t = (time_t)(jint(job, "submit_time", 0) / 1000);
	struct group *gr;
	char tbuf[64], cpu[32], mem[32];
	int64_t gid = jint(job, "gid", 0);
	char *list;
	const json_t *mp;

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
	kv(fp, "account", "%s", jstr(job, "account") ? jstr(job, "account") : "sge");
	if (jbool(job, "reserve", false))
		kv(fp, "reserve", "y");
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
	kv(fp, "jobshare", "%lld", (long long)jint(job, "js", 0));
	if ((s = jstr(job, "queue")) != NULL)
		kv(fp, "hard_queue_list", "%s", s);
	print_req(fp, "hard resource_list", json_object_get(job, "req"));
	print_req(fp, "soft resource_list", json_object_get(job, "soft"));
	if ((s = jstr(job, "shell")) != NULL)
		kv(fp, "shell_list", "NONE:%s", s);
	if (json_is_array(env)) {
		list = join_list(env, 0, ",", "SGE_O_");
		/* Nothing but SGE_O_*: no -v or -V, or another user's job, whose
		 * environment the master shows only to its owner and operators. */
		if (*list)
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
	print_recorded(fp, job);
	if (jint(job, "begin_time", 0) > 0) {
		qstat_format_time(tbuf, sizeof tbuf, jint(job, "begin_time", 0));
		kv(fp, "execution_time", "%s", tbuf);
	}
	print_waiting(fp, json_object_get(job, "waiting_for"));
	if ((mp = json_object_get(job, "mail_pending")) != NULL) {
		qstat_format_time(tbuf, sizeof tbuf, jint(mp, "next_try", 0));
		kv(fp, "mail", "%lld undelivered (%s), next try %s", (long long)jint(mp, "count", 0),
		    jstr(mp, "error") ? jstr(mp, "error") : "not tried yet", tbuf);
	}
	if (jint(job, "t_first", 0) > 0) {
		kv(fp, "job-array tasks", "%lld-%lld:%lld", (long long)jint(job, "t_first", 0),
		    (long long)jint(job, "t_last", 0), (long long)jint(job, "t_step", 1));
		if (jint(job, "tc", 0) > 0)
			kv(fp, "task_concurrency", "%lld", (long long)jint(job, "tc", 0));
		print_tasks(fp, json_object_get(job, "tasks"));
	} else if (is_active(job) || (finished && jint(job, "start_time", 0) > 0)) {
		format_cpu(cpu, sizeof cpu, jreal(job, "utime") + jreal(job, "stime"));
		format_mem(mem, sizeof mem, jint(job, "maxrss_kb", 0));
		fprintf(fp, "usage %4d:                 cpu=%s, mem=0.00000 GBs, io=0.00000, "
		    "vmem=N/A, maxvmem=%s\n", 1, cpu, mem);
	}
	if (finished) {
		int sig = (int)jint(job, "signal", 0);
		if (json_object_get(job, "exit_status"))
			kv(fp, "exit_status", "%lld", (long long)jint(job, "exit_status", 0));
		if (sig > 0) {
			char sb[32];
			kv(fp, "signal", "%s", signal_name(sig, sb, sizeof sb));
		}
	}
	if (reason && (jbool(job, "error", false) || (finished && strcmp(st, "done") != 0))) {
		char *r = text_oneline(reason);
		fprintf(fp, "%s %4d:          %s\n", "error reason", 1, r);
		free(r);
	}
	if ((s = jstr(job, "host")) != NULL && !finished && jint(job, "t_first", 0) == 0)
		qstat_print_hosts(fp, job, s);
	if ((s = jstr(job, "scheduling_info")) != NULL)
		kv(fp, "scheduling info", "%s", s);
}
