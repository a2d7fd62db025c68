/* qstat_fmt.c: qstat's output in Grid Engine's layout, as pure functions over the master's JSON. */
#include "config.h"

#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
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

/* The listing's fields by name, so a job object and a brief row fill a
 * row the same way, and a master with more columns than this client knows
 * still works. */
static const struct row_field {
	const char *name;
	size_t      off;
	bool        text;
} row_fields[] = {
#define RI(f)	{ #f, offsetof(struct qstat_row, f), false }
#define RS(f)	{ #f, offsetof(struct qstat_row, f), true }
	RI(id), RI(task), RI(prio), RI(submit_time), RI(start_time), RI(hold), RI(slots),
	RI(t_first), RI(t_last), RI(t_step), RS(name), RS(owner), RS(queue), RS(state),
	RS(state_letters), RS(host), RS(tasks),
#undef RI
#undef RS
};
#define NROW_FIELDS (sizeof row_fields / sizeof row_fields[0])

static void
row_set(struct qstat_row *r, const struct row_field *f, const json_t *v)
{
	if (f->text)
		*(const char **)((char *)r + f->off) = json_is_string(v) ? json_string_value(v) : NULL;
	else
		*(int64_t *)((char *)r + f->off) = json_is_integer(v) ? json_integer_value(v) : 0;
}

static void
row_init(struct qstat_row *r)
{
	memset(r, 0, sizeof *r);
	r->slots = 1;
}

void
qstat_row_from_object(const json_t *job, struct qstat_row *r)
{
	row_init(r);
	for (size_t i = 0; i < NROW_FIELDS; i++) {
		const json_t *v = json_object_get(job, row_fields[i].name);
		if (v)
			row_set(r, &row_fields[i], v);
	}
	r->obj = job;
}

struct qstat_row *
qstat_rows_from_reply(const json_t *rep, size_t *n)
{
	const json_t *cols = json_object_get(rep, "columns"), *rows = json_object_get(rep, "rows");
	const struct row_field **map;
	struct qstat_row *out;
	json_t *c, *row;
	size_t i, k, ncols;

	*n = 0;
	if (!json_is_array(cols) || !json_is_array(rows) || json_array_size(rows) == 0)
		return NULL;
	ncols = json_array_size(cols);
	map = xcalloc(ncols + 1, sizeof *map);
	json_array_foreach(cols, i, c)
		for (k = 0; k < NROW_FIELDS; k++)
			if (json_is_string(c) && strcmp(json_string_value(c), row_fields[k].name) == 0)
				map[i] = &row_fields[k];
	out = xcalloc(json_array_size(rows), sizeof *out);
	json_array_foreach(rows, i, row) {
		row_init(&out[*n]);
		if (!json_is_array(row))
			continue;
		for (k = 0; k < ncols && k < json_array_size(row); k++)
			if (map[k])
				row_set(&out[*n], map[k], json_array_get(row, k));
		(*n)++;
	}
	free(map);
	return out;
}

/* Grid Engine's "prior" is the scheduler's normalized priority, 0 to 1;
 * with only -p to go on that is -p mapped onto the same range. */
double
qstat_row_prior(const struct qstat_row *r)
{
	return ((double)r->prio + 1024.0) / 2048.0;
}

static void kv(FILE *fp, const char *key, const char *fmt, ...) NOWQ_ATTR_PRINTF(3, 4);

void
qstat_req_each(const json_t *req, void (*fn)(void *arg, const char *name, const char *value), void *arg)
{
	const char *k;
	json_t *v, *w;
	char num[32];
	size_t i;

	if (!json_is_object(req))
		return;
	json_object_foreach((json_t *)req, k, v) {
		if (json_is_array(v)) {
			json_array_foreach(v, i, w)
				if (json_is_string(w))
					fn(arg, json_string_value(w), "TRUE");
		} else if (json_is_string(v))
			fn(arg, k, json_string_value(v));
		else if (json_is_integer(v)) {
			snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
			fn(arg, k, num);
		} else if (json_is_true(v))
			fn(arg, k, "TRUE");
	}
}

static void
req_join(void *arg, const char *name, const char *value)
{
	char **line = arg, *t = *line;

	*line = xasprintf("%s%s%s=%s", t, *t ? "," : "", name, value);
	free(t);
}

/* "hard resource_list: mem=4G,matlab=TRUE": the -l request as qsub took it. */
static void
print_req(FILE *fp, const json_t *req)
{
	char *line = xstrdup("");

	qstat_req_each(req, req_join, &line);
	if (*line)
		kv(fp, "hard resource_list", "%s", line);
	free(line);
}

const char *
qstat_row_state(const struct qstat_row *r)
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

void
qstat_row_queue(const struct qstat_row *r, char *buf, size_t n)
{
	/* A parallel job's host is its hosts' list: the master host shows. */
	if (state_active(r->state) && r->host)
		snprintf(buf, n, "%s@%.*s", r->queue ? r->queue : "", (int)strcspn(r->host, " "), r->host);
	else if (n)
		buf[0] = '\0';
}

void
qstat_row_tasks(const struct qstat_row *r, char *buf, size_t n)
{
	/* A task's id, or an array's pending tasks ("1-99:2"). */
	if (r->tasks && *r->tasks)
		snprintf(buf, n, "%s", r->tasks);
	else if (r->task > 0)
		snprintf(buf, n, "%lld", (long long)r->task);
	else if (n)
		buf[0] = '\0';
}

/* The submit/start at column: the start of what runs, else the submission. */
static int64_t
row_time(const struct qstat_row *r)
{
	return state_active(r->state) && r->start_time ? r->start_time : r->submit_time;
}

/* One job line; qstat -f's lines under a queue instance have no queue
 * column, since the block names it. */
static void
print_row(FILE *fp, const struct qstat_row *r, bool with_queue)
{
	char when[32], queue[128], ja[32], name[64], owner[64], qcol[160];

	qstat_format_time(when, sizeof when, row_time(r));
	qstat_row_queue(r, queue, sizeof queue);
	qstat_row_tasks(r, ja, sizeof ja);
	fprintf(fp, "%7lld %7.5f %s %s %-5.5s %s ", (long long)r->id, qstat_row_prior(r),
	    qstat_col(name, sizeof name, r->name, 10), qstat_col(owner, sizeof owner, r->owner, 12),
	    qstat_row_state(r), when);
	if (with_queue)
		fprintf(fp, "%s ", qstat_col(qcol, sizeof qcol, queue, 30));
	fprintf(fp, "%5lld %-7s\n", (long long)r->slots, ja);
}

void
qstat_print_row(FILE *fp, const struct qstat_row *r)
{
	print_row(fp, r, true);
}

/* qstat -f. */

static const char full_header[] =
    "queuename                      qtype resv/used/tot. load_avg arch          states\n";
#define FULL_RULE_LEN 81
#define FULL_BANNER_LEN 76

static int
qinst_cmp(const void *a, const void *b)
{
	const struct qstat_qinst *x = a, *y = b;
	int c = strcmp(x->queue, y->queue);
	return c ? c : strcmp(x->host, y->host);
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
 * for a host that is not idle. */
static void
qinst_fill(struct qstat_qinst *qi)
{
	const json_t *h = qi->h, *la = json_object_get(h, "load"), *attrs = json_object_get(h, "attrs");
	const char *st = jstr(h, "state");
	bool unknown = !jbool(h, "connected", false) || jbool(h, "lost", false);
	int n = 0;

	qi->tot = jint(h, "slots", 0);
	qi->used = jint(qi->q, "used", 0);
	/* A reserved host's free slots are the reservation's. */
	if (json_is_object(json_object_get(h, "reserved")))
		qi->resv = qi->tot - jint(h, "used", 0) > 0 ? qi->tot - jint(h, "used", 0) : 0;
	qi->has_load = jbool(h, "connected", false) && json_is_number(json_array_get(la, 0));
	qi->load = qi->has_load ? json_number_value(json_array_get(la, 0)) : 0.0;
	qi->arch = jstr(attrs, "arch");
	if (unknown)
		qi->states[n++] = 'u';
	if (jbool(h, "disabled", false) || jbool(qi->q, "disabled", false))
		qi->states[n++] = 'd';
	if (!unknown && st && strcmp(st, "busy") == 0)
		qi->states[n++] = 'a';
	qi->states[n] = '\0';
}

struct qstat_qinst *
qstat_qinsts(const json_t *hosts, size_t *n)
{
	struct qstat_qinst *qi = NULL;
	const json_t *h, *q, *a;
	size_t i, k;

	*n = 0;
	json_array_foreach(hosts, i, h) {
		if (!jstr(h, "name") || !json_is_array(a = json_object_get(h, "queues")))
			continue;
		json_array_foreach(a, k, q) {
			if (!jstr(q, "name"))
				continue;
			qi = xrealloc(qi, (*n + 1) * sizeof *qi);
			qi[*n] = (struct qstat_qinst){ .queue = jstr(q, "name"), .host = jstr(h, "name"), .h = h, .q = q };
			qinst_fill(&qi[(*n)++]);
		}
	}
	if (*n > 1)
		qsort(qi, *n, sizeof *qi, qinst_cmp);
	return qi;
}

struct qstat_qinst *
qstat_host_qinsts(const json_t *host, size_t *n)
{
	json_t *one = json_array();
	struct qstat_qinst *qi;

	json_array_append(one, (json_t *)host);
	qi = qstat_qinsts(one, n);
	json_decref(one);
	return qi;
}

bool
qstat_row_on(const struct qstat_row *r, const struct qstat_qinst *qi)
{
	size_t n;

	if (!state_active(r->state) || !r->queue || !r->host || strcmp(r->queue, qi->queue) != 0)
		return false;
	n = strcspn(r->host, " ");
	return strlen(qi->host) == n && strncmp(r->host, qi->host, n) == 0;
}

void
qstat_print_queues(FILE *fp, const json_t *hosts, const struct qstat_row *rows, size_t n)
{
	size_t nqi, i, k;
	struct qstat_qinst *qi = qstat_qinsts(hosts, &nqi);

	if (nqi > 0)
		fputs(full_header, fp);
	for (i = 0; i < nqi; i++) {
		const json_t *r = json_object_get(qi[i].h, "reserved");
		char name[512], counts[64], load[16], until[32];

		snprintf(name, sizeof name, "%s@%s", qi[i].queue, qi[i].host);
		snprintf(counts, sizeof counts, "%lld/%lld/%lld", (long long)qi[i].resv, (long long)qi[i].used,
		    (long long)qi[i].tot);
		if (qi[i].has_load)
			snprintf(load, sizeof load, "%.2f", qi[i].load);
		else
			snprintf(load, sizeof load, "-NA-");
		rule(fp, '-', FULL_RULE_LEN);
		fprintf(fp, "%-30s %-5s %-14s %-8s %-13s %s", name, "BP", counts, load,
		    qi[i].arch ? qi[i].arch : "-NA-", qi[i].states);
		/* The open reservation that holds it, in words: reserved is a
		 * state of its own, never "unknown" or down. */
		if (json_is_object(r)) {
			qstat_format_time(until, sizeof until, jint(r, "end", 0));
			fprintf(fp, "%sreserved %s by %s until %s", qi[i].states[0] ? " " : "",
			    jstr(r, "name") ? jstr(r, "name") : "?", jstr(r, "owner") ? jstr(r, "owner") : "?", until);
		}
		fputc('\n', fp);
		for (k = 0; k < n; k++)
			if (qstat_row_on(&rows[k], &qi[i]))
				print_row(fp, &rows[k], false);
	}
	free(qi);
}

bool
qstat_print_pending(FILE *fp, const struct qstat_row *rows, size_t n, bool banner)
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
qstat_print_table(FILE *fp, const struct qstat_row *rows, size_t n)
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
	json_array_foreach(ph, i, h)
		fprintf(fp, "%s%s:%lld", i ? ", " : "", jstr(h, "host") ? jstr(h, "host") : "?",
		    (long long)jint(h, "slots", 1));
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
	print_req(fp, json_object_get(job, "req"));
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
