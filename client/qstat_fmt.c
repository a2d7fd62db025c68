/* qstat_fmt.c: qstat's output in Grid Engine's layout, as pure functions over the master's JSON. */
#include "config.h"

#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
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
double
qstat_row_prior(const struct msg_job_row *r)
{
	return ((double)r->prio + 1024.0) / 2048.0;
}

static void kv(FILE *fp, const char *key, const char *fmt, ...) NOWQ_ATTR_PRINTF(3, 4);

/* The request as asked, in Grid Engine's full names: false when the job
 * has no "asked" list (one from before there was one). */
static bool
qstat_req_asked(const json_t *req, void (*fn)(void *arg, const char *name, const char *value), void *arg)
{
	struct job_req r = { 0 };
	const char *why;

	if (req_from_json(&r, req, &why) < 0 || !r.asked) {
		req_clear(&r);
		return false;
	}
	for (char **a = r.asked; *a; a++) {
		const char *eq = strchr(*a, '=');
		char *name = xstrndup(*a, (size_t)(eq - *a));

		fn(arg, name, eq + 1);
		free(name);
	}
	req_clear(&r);
	return true;
}

void
qstat_req_each(const json_t *req, void (*fn)(void *arg, const char *name, const char *value), void *arg)
{
	const char *k;
	json_t *v, *w;
	char num[32];
	size_t i;

	if (!json_is_object(req))
		return;
	if (qstat_req_asked(req, fn, arg))
		return;
	json_object_foreach((json_t *)req, k, v) {
		if (strcmp(k, "hard_queue") == 0)
			continue;
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
req_count_one(void *arg, const char *name, const char *value)
{
	(void)name;
	(void)value;
	++*(size_t *)arg;
}

size_t
qstat_req_count(const json_t *req)
{
	size_t n = 0;

	qstat_req_each(req, req_count_one, &n);
	return n;
}

char *
qstat_req_hard_queue(const json_t *req)
{
	struct job_req r = { 0 };
	const char *why;
	char *q = NULL;

	if (req && req_from_json(&r, req, &why) == 0 && r.hard_queue) {
		q = r.hard_queue;
		r.hard_queue = NULL;
	}
	req_clear(&r);
	return q;
}

static void
req_join(void *arg, const char *name, const char *value)
{
	char **line = arg, *t = *line;

	*line = xasprintf("%s%s%s=%s", t, *t ? "," : "", name, value);
	free(t);
}

const char *
qstat_row_state(const struct msg_job_row *r)
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

/* Done, failed or deleted: what Grid Engine no longer knows as a job. */
static bool
state_ended(const char *st)
{
	return st && strcmp(st, "pending") != 0 && !state_active(st);
}

bool
qstat_job_ended(const json_t *job)
{
	struct msg_job_row r;

	msg_job_row_unpack(job, &r);
	return state_ended(r.state);
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
qstat_row_queue(const struct msg_job_row *r, char *buf, size_t n)
{
	/* A parallel job's host is its hosts' list: the master host shows. */
	if (state_active(r->state) && r->host)
		snprintf(buf, n, "%s@%.*s", r->queue ? r->queue : "", (int)strcspn(r->host, " "), r->host);
	else if (n)
		buf[0] = '\0';
}

void
qstat_row_tasks(const struct msg_job_row *r, char *buf, size_t n)
{
	/* A task's id, or an array's pending tasks ("1-99:2"). */
	if (r->tasks && *r->tasks)
		snprintf(buf, n, "%s", r->tasks);
	else if (r->task > 0)
		snprintf(buf, n, "%lld", (long long)r->task);
	else if (n)
		buf[0] = '\0';
}

/* The line's pieces, written without printf: ten thousand lines of
 * printf with a float and a date were most of a long listing's time. */

/* v right-aligned in width columns (printf's "%*lld"). */
static char *
put_int(char *p, int64_t v, int width)
{
	char b[INT_TEXT_LEN], *q = int_text(b, v);
	int n = (int)(b + sizeof b - q);

	for (; n < width; width--)
		*p++ = ' ';
	memcpy(p, q, (size_t)n);
	return p + n;
}

/* s left-aligned in width columns, cut at most (printf's "%-W.Ms"). */
static char *
put_str(char *p, const char *s, int width, int most)
{
	int n = 0;

	for (; *s && n < most; n++)
		*p++ = *s++;
	for (; n < width; n++)
		*p++ = ' ';
	return p;
}

/* The dates of a listing repeat: one strftime per second shown. */
static const char *
row_time(int64_t ms)
{
	static __thread int64_t last_s = -1;
	static __thread char last[32];

	if (ms / 1000 != last_s || last_s < 0) {
		qstat_format_time(last, sizeof last, ms);
		last_s = ms / 1000;
	}
	return last;
}

const char *
qstat_row_prior_text(const struct msg_job_row *r)
{
	static __thread int64_t last_prio = INT64_MIN;
	static __thread char last[32];

	if (r->prio != last_prio) {
		snprintf(last, sizeof last, "%.5f", qstat_row_prior(r));
		last_prio = r->prio;
	}
	return last;
}

/* One job line; qstat -f's lines under a queue instance have no queue
 * column, since the block names it. */
static void
print_row(FILE *fp, const struct msg_job_row *r, bool with_queue)
{
	char line[512], queue[128], ja[32], col[160], *p = line;

	qstat_row_queue(r, queue, sizeof queue);
	qstat_row_tasks(r, ja, sizeof ja);
	p = put_int(p, r->id, 7);
	*p++ = ' ';
	p = put_str(p, qstat_row_prior_text(r), 7, 32);
	*p++ = ' ';
	p = put_str(p, qstat_col(col, sizeof col, r->name, 10), 0, (int)sizeof col);
	*p++ = ' ';
	p = put_str(p, qstat_col(col, sizeof col, r->owner, 12), 0, (int)sizeof col);
	*p++ = ' ';
	p = put_str(p, qstat_row_state(r), 5, 5);
	*p++ = ' ';
	p = put_str(p, row_time(state_active(r->state) && r->start_time ? r->start_time : r->submit_time),
	    0, 32);
	*p++ = ' ';
	if (with_queue) {
		p = put_str(p, qstat_col(col, sizeof col, queue, 30), 0, (int)sizeof col);
		*p++ = ' ';
	}
	p = put_int(p, r->slots, 5);
	*p++ = ' ';
	p = put_str(p, ja, 7, (int)sizeof ja);
	*p++ = '\n';
	fwrite_unlocked(line, 1, (size_t)(p - line), fp);
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
 * for a host that is not idle; and the counts of its slots. */
static void
qinst_fill(struct qstat_qinst *qi)
{
	const struct msg_host_row *h = qi->h;
	bool unknown = !h->connected || h->lost;
	int n = 0;

	qi->queue = qi->q.name;
	qi->host = h->name;
	qi->tot = h->slots;
	qi->used = qi->q.used;
	/* A reserved host's free slots are the reservation's. */
	if (h->reserved.has)
		qi->resv = h->slots - h->used > 0 ? h->slots - h->used : 0;
	qi->has_load = h->connected && h->has_load;
	qi->load = qi->has_load ? h->load[0] : 0.0;
	qi->arch = h->attrs.arch;
	if (unknown)
		qi->states[n++] = 'u';
	if (h->disabled || qi->q.disabled)
		qi->states[n++] = 'd';
	if (!unknown && h->state && strcmp(h->state, "busy") == 0)
		qi->states[n++] = 'a';
	qi->states[n] = '\0';
}

struct qstat_qinst *
qstat_host_qinsts(const struct msg_host_row *hosts, size_t nhosts, size_t *nqi)
{
	struct qstat_qinst *qi = NULL;
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
			qi[*nqi] = (struct qstat_qinst){ .h = &hosts[i], .q = mq };
			qinst_fill(&qi[(*nqi)++]);
		}
	}
	if (*nqi > 1)
		qsort(qi, *nqi, sizeof *qi, qinst_cmp);
	return qi;
}

void
qstat_qinsts_load(struct qstat_qinsts *all, const json_t *hosts)
{
	all->hosts = msg_host_rows_unpack(hosts, &all->nhosts);
	all->qi = qstat_host_qinsts(all->hosts, all->nhosts, &all->n);
}

void
qstat_qinsts_free(struct qstat_qinsts *all)
{
	free(all->qi);
	msg_host_rows_free(all->hosts, all->nhosts);
	memset(all, 0, sizeof *all);
}

bool
qstat_row_on(const struct msg_job_row *r, const struct qstat_qinst *qi)
{
	size_t n;

	if (!state_active(r->state) || !r->queue || !r->host || strcmp(r->queue, qi->queue) != 0)
		return false;
	n = strcspn(r->host, " ");
	return strlen(qi->host) == n && strncmp(r->host, qi->host, n) == 0;
}

void
qstat_print_queues(FILE *fp, const json_t *hosts, const struct msg_job_row *rows, size_t n)
{
	struct qstat_qinsts all;
	size_t i, k;

	qstat_qinsts_load(&all, hosts);
	if (all.n > 0)
		fputs(full_header, fp);
	for (i = 0; i < all.n; i++) {
		const struct qstat_qinst *qi = &all.qi[i];
		const struct msg_host_resv *r = &qi->h->reserved;
		char name[512], counts[64], load[16], until[32];

		snprintf(name, sizeof name, "%s@%s", qi->queue, qi->host);
		snprintf(counts, sizeof counts, "%lld/%lld/%lld", (long long)qi->resv, (long long)qi->used,
		    (long long)qi->tot);
		if (qi->has_load)
			snprintf(load, sizeof load, "%.2f", qi->load);
		else
			snprintf(load, sizeof load, "-NA-");
		rule(fp, '-', FULL_RULE_LEN);
		fprintf(fp, "%-30s %-5s %-14s %-8s %-13s %s", name, "BP", counts, load,
		    qi->arch ? qi->arch : "-NA-", qi->states);
		/* The open reservation that holds it, in words: reserved is a
		 * state of its own, never "unknown" or down. */
		if (r->has) {
			qstat_format_time(until, sizeof until, r->end);
			fprintf(fp, "%sreserved %s by %s until %s", qi->states[0] ? " " : "",
			    r->name ? r->name : "?", r->owner ? r->owner : "?", until);
		}
		fputc('\n', fp);
		for (k = 0; k < n; k++)
			if (qstat_row_on(&rows[k], qi))
				print_row(fp, &rows[k], false);
	}
	qstat_qinsts_free(&all);
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

/* A [[HOST]:]PATH,... list (qsub -i) as Grid Engine shows one: each entry
 * HOST:NONE:PATH, NONE for no host (the file host is always NONE). */
static void
print_host_paths(FILE *fp, const char *key, const char *list)
{
	char *out = xstrdup(""), *t;

	for (const char *p = list; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		size_t n = strcspn(p, ","), h;
		const char *colon = memchr(p, ':', n);
		bool hosted = colon && colon > p && memchr(p, '/', (size_t)(colon - p)) == NULL;

		h = hosted ? (size_t)(colon - p) : 0;
		t = xasprintf("%s%s%.*s:NONE:%.*s", out, *out ? "," : "", hosted ? (int)h : 4,
		    hosted ? p : "NONE", (int)(n - (colon && colon == p + h ? h + 1 : 0)),
		    colon && colon == p + h ? colon + 1 : p);
		free(out);
		out = t;
	}
	kv(fp, key, "%s", out);
	free(out);
}

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
qstat_print_hosts(FILE *fp, const struct msg_job_detail *d)
{
	const json_t *h;
	size_t i;

	if (json_array_size(d->pe_hosts) == 0) {
		kv(fp, "exec_host_list        1", "%s:%lld", d->row.host, (long long)d->row.slots);
		return;
	}
	fprintf(fp, "%-28s", "exec_host_list        1:");
	json_array_foreach(d->pe_hosts, i, h) {
		struct msg_pe_host p;
		msg_pe_host_unpack(h, &p);
		fprintf(fp, "%s%s:%lld", i ? ", " : "", p.host ? p.host : "?", (long long)p.slots);
	}
	fputc('\n', fp);
}

const char *
qstat_env_value(const json_t *env, const char *name)
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

void
qstat_mail_each(const struct msg_job_detail *d, void (*fn)(void *arg, const char *user, const char *host),
    void *arg)
{
	char *copy, *tok, *save = NULL;

	if (!d->mail_to) {
		fn(arg, d->row.owner ? d->row.owner : "", qstat_env_value(d->env, "SGE_O_HOST"));
		return;
	}
	copy = xstrdup(d->mail_to);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *at = strchr(tok, '@');
		if (at)
			*at++ = '\0';
		fn(arg, tok, at);
	}
	free(copy);
}

/* Grid Engine's mail_list line: USER@HOST,..., NONE for a missing host. */
static void
mail_join(void *arg, const char *user, const char *host)
{
	char **line = arg, *t = *line;

	*line = xasprintf("%s%s%s@%s", t, *t ? "," : "", user, host ? host : "NONE");
	free(t);
}

/* -m's letters in Grid Engine's order. */
static void
print_mail(FILE *fp, const struct msg_job_detail *d)
{
	char opts[8], *line = xstrdup("");
	size_t n = 0;

	if (d->mail & MAIL_ABORT)
		opts[n++] = 'a';
	if (d->mail & MAIL_BEGIN)
		opts[n++] = 'b';
	if (d->mail & MAIL_END)
		opts[n++] = 'e';
	if (d->mail & MAIL_SUSPEND)
		opts[n++] = 's';
	opts[n] = '\0';
	if (n)
		kv(fp, "mail_options", "%s", opts);
	qstat_mail_each(d, mail_join, &line);
	kv(fp, "mail_list", "%s", line);
	free(line);
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
	struct msg_job_wait e;
	char *ids, *why;
	json_t *o;

	if (n == 0)
		return;
	ids = xcalloc(n, 24);
	why = xcalloc(n, 40);
	json_array_foreach(w, i, o) {
		msg_job_wait_unpack(o, &e);
		off += (size_t)sprintf(ids + off, "%s%lld", i ? "," : "", (long long)e.id);
	}
	off = 0;
	json_array_foreach(w, i, o) {
		msg_job_wait_unpack(o, &e);
		off += (size_t)snprintf(why + off, n * 40 - off, "%s%lld (%.16s)", i ? ", " : "",
		    (long long)e.id, e.kind ? e.kind : "?");
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
		struct msg_task_row r;

		msg_task_row_unpack(t, &r);
		if (r.start_time <= 0)
			continue;
		format_cpu(cpu, sizeof cpu, r.utime + r.stime);
		format_mem(mem, sizeof mem, r.maxrss_kb);
		fprintf(fp, "usage %4lld:                 cpu=%s, mem=0.00000 GBs, io=0.00000, "
		    "vmem=N/A, maxvmem=%s\n", (long long)r.task, cpu, mem);
		if (r.host && r.state && state_active(r.state)) {
			snprintf(key, sizeof key, "exec_host_list %8lld", (long long)r.task);
			kv(fp, key, "%s:1", r.host);
		}
	}
}

/* "hard resource_list: h_vmem=4G,matlab=TRUE": the -l request as asked
 * (its "asked" list, Grid Engine's full names), or, for a job from before
 * there was one, as the request's fields say. */
static void
print_req(FILE *fp, const char *what, const json_t *req)
{
	char *line = xstrdup("");

	qstat_req_each(req, req_join, &line);
	if (*line)
		kv(fp, what, "%s", line);
	free(line);
}

/* File staging (nowq's own): a line per file sent, the patterns, and a
 * line per file that came back: name, size and SHA-256. */
static void
qstat_print_staged(FILE *fp, const struct msg_job_detail *d)
{
	struct stage_file f;
	size_t i;
	json_t *v;
	char *list;

	json_array_foreach(d->stage_in, i, v) {
		stage_file_unpack(v, &f);
		kv(fp, "stage_in", "%s %lld %s", f.name ? f.name : "", (long long)f.size,
		    f.sha256 ? f.sha256 : "");
	}
	if (d->stage_out && json_array_size(d->stage_out) > 0) {
		list = join_list(d->stage_out, 0, ",", NULL);
		kv(fp, "stage_out", "%s", list);
		free(list);
	}
	json_array_foreach(d->staged_out, i, v) {
		stage_file_unpack(v, &f);
		kv(fp, "staged_out", "%s %lld %s", f.name ? f.name : "", (long long)f.size,
		    f.sha256 ? f.sha256 : "");
	}
}

/* -P, -ac and -binding, where Grid Engine shows them: after the script. */
static void
print_recorded(FILE *fp, const struct msg_job_detail *d)
{
	if (d->project)
		kv(fp, "project", "%s", d->project);
	if (d->context && json_array_size(d->context) > 0) {
		char *list = join_list(d->context, 0, ",", NULL);
		kv(fp, "context", "%s", list);
		free(list);
	}
	if (d->binding)
		kv(fp, "binding", "%s", d->binding);
	qstat_print_staged(fp, d);
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
	struct msg_job_detail d;
	const json_t *env, *argv, *args;
	const char *st, *s, *reason;
	bool finished;
	time_t t;
	struct group *gr;
	char tbuf[64], cpu[32], mem[32];
	int64_t gid;
	char *list;

	msg_job_detail_unpack(job, &d);
	env = d.env;
	argv = d.argv;
	args = d.args;
	st = d.row.state;
	reason = d.reason;
	finished = state_ended(st);
	t = (time_t)(d.row.submit_time / 1000);
	gid = d.gid;

	fputs("==============================================================\n", fp);
	kv(fp, "job_number", "%lld", (long long)d.row.id);
	if (!ctime_r(&t, tbuf))
		snprintf(tbuf, sizeof tbuf, "\n");
	fprintf(fp, "%-28s%s", "submission_time:", tbuf);
	kv(fp, "owner", "%s", d.row.owner ? d.row.owner : "");
	kv(fp, "uid", "%lld", (long long)d.uid);
	gr = getgrgid((gid_t)gid);
	if (gr)
		kv(fp, "group", "%s", gr->gr_name);
	else
		kv(fp, "group", "%lld", (long long)gid);
	kv(fp, "gid", "%lld", (long long)gid);
	for (size_t i = 0; env && i < sizeof o_vars / sizeof o_vars[0]; i++)
		if ((s = qstat_env_value(env, o_vars[i].var)) != NULL)
			kv(fp, o_vars[i].key, "%s", s);
	kv(fp, "account", "%s", d.account ? d.account : "sge");
	if (d.reserve)
		kv(fp, "reserve", "y");
	if ((s = d.cwd) != NULL)
		kv(fp, "cwd", "%s", s);
	if ((s = d.err) != NULL)
		kv(fp, "stderr_path_list", "NONE:NONE:%s", s);
	if (d.join)
		kv(fp, "merge", "y");
	print_mail(fp, &d);
	kv(fp, "notify", "FALSE");
	kv(fp, "job_name", "%s", d.row.name ? d.row.name : "");
	if ((s = d.out) != NULL)
		kv(fp, "stdout_path_list", "NONE:NONE:%s", s);
	if ((s = d.in) != NULL)
		print_host_paths(fp, "stdin_path_list", s);
	if (d.row.prio != 0)
		kv(fp, "priority", "%lld", (long long)d.row.prio);
	kv(fp, "jobshare", "%lld", (long long)d.js);
	if ((s = d.row.queue) != NULL)
		kv(fp, "hard_queue_list", "%s", s);
	print_req(fp, "hard resource_list", d.req);
	print_req(fp, "soft resource_list", d.soft);
	if ((s = d.shell) != NULL)
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
	print_recorded(fp, &d);
	if (d.begin_time > 0) {
		qstat_format_time(tbuf, sizeof tbuf, d.begin_time);
		kv(fp, "execution_time", "%s", tbuf);
	}
	print_waiting(fp, d.waiting_for);
	if (d.has_mail) {
		qstat_format_time(tbuf, sizeof tbuf, d.mail_next_try);
		kv(fp, "mail", "%lld undelivered (%s), next try %s", (long long)d.mail_count,
		    d.mail_error ? d.mail_error : "not tried yet", tbuf);
	}
	if (d.row.t_first > 0) {
		kv(fp, "job-array tasks", "%lld-%lld:%lld", (long long)d.row.t_first,
		    (long long)d.row.t_last, (long long)d.t_step);
		if (d.tc > 0)
			kv(fp, "task_concurrency", "%lld", (long long)d.tc);
		print_tasks(fp, d.tasks);
	} else if (state_active(st) || (finished && d.row.start_time > 0)) {
		format_cpu(cpu, sizeof cpu, d.utime + d.stime);
		format_mem(mem, sizeof mem, d.maxrss_kb);
		fprintf(fp, "usage %4d:                 cpu=%s, mem=0.00000 GBs, io=0.00000, "
		    "vmem=N/A, maxvmem=%s\n", 1, cpu, mem);
	}
	if (finished) {
		int sig = (int)d.signal;
		if (d.has_exit_status)
			kv(fp, "exit_status", "%lld", (long long)d.exit_status);
		if (sig > 0) {
			char sb[32];
			kv(fp, "signal", "%s", signal_name(sig, sb, sizeof sb));
		}
	}
	if (reason && (d.error || (finished && strcmp(st, "done") != 0))) {
		char *r = text_oneline(reason);
		fprintf(fp, "%s %4d:          %s\n", "error reason", 1, r);
		free(r);
	}
	if (d.row.host && !finished && d.row.t_first == 0)
		qstat_print_hosts(fp, &d);
	if ((s = d.scheduling_info) != NULL)
		kv(fp, "scheduling info", "%s", s);
}
