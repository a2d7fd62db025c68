/* qstat_xml.c: qstat's and qhost's -xml documents in Grid Engine's elements, from the plain views' rows. */
#include "config.h"

#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/common.h"
#include "client/client.h"

/* Tools locate the documents by these names; Grid Engine writes them so. */
#define QSTAT_XSD "http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/qstat/qstat.xsd"
#define DJOB_XSD \
	"http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/qstat/detailed_job_info.xsd"
#define QHOST_XSD "http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/qhost/qhost.xsd"

/* What needs escaping, and the control characters XML 1.0 cannot hold
 * (all but tab); the runs between them are copied whole. */
static const char xml_special[] = "&<>\"'\x01\x02\x03\x04\x05\x06\x07\x08\x0a\x0b\x0c\x0d\x0e\x0f"
    "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f";

/* strcspn builds its table on every call: this one is built once. */
static size_t
xml_run(const char *s)
{
	static bool special[256], made;
	const unsigned char *p = (const unsigned char *)s;

	if (!made) {
		for (const char *c = xml_special; *c; c++)
			special[(unsigned char)*c] = true;
		special[0] = made = true;
	}
	while (!special[*p])
		p++;
	return (size_t)(p - (const unsigned char *)s);
}

void
xml_text(FILE *fp, const char *s)
{
	while (s && *s) {
		size_t run = xml_run(s);

		fwrite_unlocked(s, 1, run, fp);
		s += run;
		switch (*s) {
		case '\0': return;
		case '&': fputs_unlocked("&amp;", fp); break;
		case '<': fputs_unlocked("&lt;", fp); break;
		case '>': fputs_unlocked("&gt;", fp); break;
		case '"': fputs_unlocked("&quot;", fp); break;
		case '\'': fputs_unlocked("&apos;", fp); break;
		default: putc_unlocked('?', fp);
		}
		s++;
	}
}

static void
indent(FILE *fp, int depth)
{
	static const char spaces[] = "                                ";

	fwrite_unlocked(spaces, 1, depth < (int)sizeof spaces - 1 ? (size_t)depth : sizeof spaces - 1, fp);
}

void
xml_elem(FILE *fp, int depth, const char *name, const char *value)
{
	indent(fp, depth);
	putc_unlocked('<', fp);
	fputs_unlocked(name, fp);
	putc_unlocked('>', fp);
	xml_text(fp, value);
	fputs_unlocked("</", fp);
	fputs_unlocked(name, fp);
	fputs_unlocked(">\n", fp);
}

/* <name>N</name>: the listings' numbers, without printf. */
static void
xml_elem_int(FILE *fp, int depth, const char *name, long long v)
{
	char buf[INT_TEXT_LEN + 1], *p = int_text(buf, v);

	buf[INT_TEXT_LEN] = '\0';
	xml_elem(fp, depth, name, p);
}

void
xml_elemf(FILE *fp, int depth, const char *name, const char *fmt, ...)
{
	char buf[256], *big = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof buf) {
		va_start(ap, fmt);
		if (vasprintf(&big, fmt, ap) < 0)
			fatalx("out of memory");
		va_end(ap);
	}
	xml_elem(fp, depth, name, big ? big : buf);
	free(big);
}

static void
open_tag(FILE *fp, int depth, const char *name)
{
	indent(fp, depth);
	putc_unlocked('<', fp);
	fputs_unlocked(name, fp);
	fputs_unlocked(">\n", fp);
}

static void
close_tag(FILE *fp, int depth, const char *name)
{
	indent(fp, depth);
	fputs_unlocked("</", fp);
	fputs_unlocked(name, fp);
	fputs_unlocked(">\n", fp);
}

/* Grid Engine's XML dates: local time, 2026-11-28T09:02:31. */
static void
xml_time(char *buf, size_t n, int64_t ms)
{
	/* A listing's dates repeat: one strftime per second shown. */
	static __thread int64_t last_s = -1;
	static __thread char last[32];
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (ms / 1000 != last_s || last_s < 0) {
		if (!localtime_r(&t, &tm) || strftime(last, sizeof last, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
			last[0] = '\0';
		last_s = ms / 1000;
	}
	snprintf(buf, n, "%s", last);
}

static bool
row_running(const struct msg_job_row *r)
{
	return r->state && (strcmp(r->state, "running") == 0 || strcmp(r->state, "transferring") == 0);
}

static bool
row_pending(const struct msg_job_row *r)
{
	return !r->state || strcmp(r->state, "pending") == 0;
}

/* -r's request lines, each <hard_request name="mem" ...>4G</hard_request>. */
static void
xml_req_one(void *arg, const char *name, const char *value)
{
	FILE *fp = arg;

	fputs("      <hard_request name=\"", fp);
	xml_text(fp, name);
	fputs("\" resource_contribution=\"0.000000\">", fp);
	xml_text(fp, value);
	fputs("</hard_request>\n", fp);
}

/* What -r adds to a job's element, in Grid Engine's order. */
static void
xml_row_req(FILE *fp, int d, const struct msg_job_row *r)
{
	struct msg_job_detail jd;
	struct msg_job_wait w;
	const json_t *e;
	char *q;
	size_t i;

	msg_job_detail_unpack(r->obj, &jd);
	xml_elem(fp, d, "full_job_name", r->name ? r->name : "");
	qstat_req_each(jd.req, xml_req_one, fp);
	if ((q = qstat_req_hard_queue(jd.req)) != NULL)
		xml_elem(fp, d, "hard_req_queue", q);
	free(q);
	json_array_foreach(jd.waiting_for, i, e) {
		msg_job_wait_unpack(e, &w);
		xml_elemf(fp, d, "predecessor_jobs_req", "%lld", (long long)w.id);
	}
	json_array_foreach(jd.waiting_for, i, e) {
		msg_job_wait_unpack(e, &w);
		xml_elemf(fp, d, "predecessor_jobs", "%lld", (long long)w.id);
	}
	xml_elem(fp, d, "binding", "NONE");
}

/* One <job_list>: the row's columns under Grid Engine's names.  -ext
 * shows tickets and shares where the plain one shows the time; nowq has
 * neither, so they are 0. */
static void
xml_row(FILE *fp, int depth, const struct msg_job_row *r, unsigned flags, bool with_queue)
{
	static const char *const tickets[] = { "tickets", "JB_override_tickets", "JB_jobshare", "otickets",
		"ftickets", "stickets" };
	bool ext = flags & QX_EXT, run = row_running(r);
	char buf[160];
	int d = depth + 2;

	indent(fp, depth);
	fputs_unlocked(run ? "<job_list state=\"running\">\n" : row_pending(r) ? "<job_list state=\"pending\">\n" :
	    "<job_list state=\"zombie\">\n", fp);
	xml_elem_int(fp, d, "JB_job_number", (long long)r->id);
	xml_elem(fp, d, "JAT_prio", qstat_row_prior_text(r));
	if (ext)
		xml_elem(fp, d, "JAT_ntix", "0.00000");
	xml_elem(fp, d, "JB_name", r->name ? r->name : "");
	xml_elem(fp, d, "JB_owner", r->owner ? r->owner : "");
	if (ext) {
		xml_elem(fp, d, "JB_project", "");
		xml_elem(fp, d, "JB_department", "defaultdepartment");
	}
	xml_elem(fp, d, "state", qstat_row_state(r));
	if (ext && run) {
		/* The listing carries no usage: none shows as used yet. */
		xml_elem(fp, d, "cpu_usage", "0.00000");
		xml_elem(fp, d, "mem_usage", "0.00000");
		xml_elem(fp, d, "io_usage", "0.00000");
	}
	if (ext) {
		for (size_t i = 0; i < sizeof tickets / sizeof tickets[0]; i++)
			xml_elem(fp, d, tickets[i], "0");
		xml_elem(fp, d, "JAT_share", "0.00000");
	} else if (run && r->start_time) {
		xml_time(buf, sizeof buf, r->start_time);
		xml_elem(fp, d, "JAT_start_time", buf);
	} else {
		xml_time(buf, sizeof buf, r->submit_time);
		xml_elem(fp, d, "JB_submission_time", buf);
	}
	if (with_queue) {
		qstat_row_queue(r, buf, sizeof buf);
		xml_elem(fp, d, "queue_name", buf);
	}
	xml_elem_int(fp, d, "slots", (long long)r->slots);
	qstat_row_tasks(r, buf, sizeof buf);
	if (*buf)
		xml_elem(fp, d, "tasks", buf);
	if (flags & QX_REQ)
		xml_row_req(fp, d, r);
	close_tag(fp, depth, "job_list");
}

void
qstat_xml_begin(struct qstat_xml *x)
{
	fputs("<?xml version='1.0'?>\n<job_info  xmlns:xsd=\"" QSTAT_XSD "\">\n", x->fp);
	x->section = 0;
}

/* Running rows go in <queue_info>, the others in <job_info>; both are
 * always there, as in Grid Engine. */
static void
xml_section(struct qstat_xml *x, int want)
{
	while (x->section < want) {
		if (x->section == 1)
			close_tag(x->fp, 2, "queue_info");
		x->section++;
		open_tag(x->fp, 2, x->section == 1 ? "queue_info" : "job_info");
	}
}

void
qstat_xml_rows(struct qstat_xml *x, const struct msg_job_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool run = row_running(&rows[i]);

		xml_section(x, run && !(x->flags & QX_FULL) ? 1 : 2);
		xml_row(x->fp, 4, &rows[i], x->flags, !(x->flags & QX_FULL));
	}
}

void
qstat_xml_queues(struct qstat_xml *x, const json_t *hosts, const struct msg_job_row *rows, size_t n)
{
	struct qstat_qinsts all;
	struct qstat_qinst *qi;
	size_t nqi, i, k;
	FILE *fp = x->fp;

	qstat_qinsts_load(&all, hosts);
	qi = all.qi;
	nqi = all.n;

	xml_section(x, 1);
	for (i = 0; i < nqi; i++) {
		open_tag(fp, 4, "Queue-List");
		indent(fp, 6);
		fputs("<name>", fp);
		xml_text(fp, qi[i].queue);
		fputc('@', fp);
		xml_text(fp, qi[i].host);
		fputs("</name>\n", fp);
		xml_elem(fp, 6, "qtype", "BP");
		xml_elemf(fp, 6, "slots_used", "%lld", (long long)qi[i].used);
		xml_elemf(fp, 6, "slots_resv", "%lld", (long long)qi[i].resv);
		xml_elemf(fp, 6, "slots_total", "%lld", (long long)qi[i].tot);
		if (qi[i].has_load)
			xml_elemf(fp, 6, "load_avg", "%.5f", qi[i].load);
		if (qi[i].arch)
			xml_elem(fp, 6, "arch", qi[i].arch);
		if (qi[i].states[0])
			xml_elem(fp, 6, "state", qi[i].states);
		for (k = 0; k < n; k++)
			if (qstat_row_on(&rows[k], &qi[i]))
				xml_row(fp, 6, &rows[k], x->flags, false);
		close_tag(fp, 4, "Queue-List");
	}
	qstat_qinsts_free(&all);
}

void
qstat_xml_end(struct qstat_xml *x)
{
	xml_section(x, 2);
	close_tag(x->fp, 2, "job_info");
	fputs("</job_info>\n", x->fp);
}

void
qstat_xml_cqueues(FILE *fp, const json_t *hosts)
{
	size_t n;
	struct qstat_cqueue *cq = qstat_cqueues(hosts, &n);

	fputs("<?xml version='1.0'?>\n<job_info  xmlns:xsd=\"" QSTAT_XSD "\">\n", fp);
	for (size_t i = 0; i < n; i++) {
		open_tag(fp, 2, "cluster_queue_summary");
		xml_elem(fp, 4, "name", cq[i].name);
		if (cq[i].has_load)
			xml_elemf(fp, 4, "load", "%.5f", cq[i].load);
		xml_elemf(fp, 4, "used", "%lld", (long long)cq[i].used);
		xml_elemf(fp, 4, "resv", "%lld", (long long)cq[i].resv);
		xml_elemf(fp, 4, "available", "%lld", (long long)cq[i].avail);
		xml_elemf(fp, 4, "total", "%lld", (long long)cq[i].total);
		xml_elemf(fp, 4, "temp_disabled", "%lld", (long long)cq[i].alarm);
		xml_elemf(fp, 4, "manual_intervention", "%lld", (long long)cq[i].disabled);
		close_tag(fp, 2, "cluster_queue_summary");
	}
	fputs("</job_info>\n", fp);
	qstat_cqueues_free(cq, n);
}

/* qstat -j -xml. */

/* A list of one path, as Grid Engine writes -o, -e and -S. */
static void
xml_path_list(FILE *fp, int d, const char *name, const char *path)
{
	if (!path)
		return;
	open_tag(fp, d, name);
	open_tag(fp, d + 2, "path_list");
	xml_elem(fp, d + 4, "PN_path", path);
	xml_elem(fp, d + 4, "PN_host", "");
	xml_elem(fp, d + 4, "PN_file_host", "");
	xml_elem(fp, d + 4, "PN_file_staging", "false");
	close_tag(fp, d + 2, "path_list");
	close_tag(fp, d, name);
}

static void
xml_ce_one(void *arg, const char *name, const char *value)
{
	FILE *fp = arg;

	open_tag(fp, 8, "qstat_l_requests");
	xml_elem(fp, 10, "CE_name", name);
	xml_elem(fp, 10, "CE_stringval", value);
	close_tag(fp, 8, "qstat_l_requests");
}

/* The job's variables; Grid Engine names its SGE_O_ ones __SGE_PREFIX__O_. */
static void
xml_env(FILE *fp, int d, const json_t *env)
{
	const json_t *e;
	size_t i;

	if (json_array_size(env) == 0)
		return;
	open_tag(fp, d, "JB_env_list");
	json_array_foreach(env, i, e) {
		const char *s = json_string_value(e), *eq;

		if (!s)
			continue;
		eq = strchr(s, '=');
		open_tag(fp, d + 2, "job_sublist");
		indent(fp, d + 4);
		fputs("<VA_variable>", fp);
		if (strncmp(s, "SGE_O_", 6) == 0) {
			fputs("__SGE_PREFIX__", fp);
			s += 4;
		}
		fwrite(s, 1, eq ? (size_t)(eq - s) : strlen(s), fp);
		fputs("</VA_variable>\n", fp);
		if (eq)
			xml_elem(fp, d + 4, "VA_value", eq + 1);
		close_tag(fp, d + 2, "job_sublist");
	}
	close_tag(fp, d, "JB_env_list");
}

static void
xml_strings(FILE *fp, int d, const char *name, const json_t *a, size_t first)
{
	const json_t *e;
	size_t i;

	if (json_array_size(a) <= first)
		return;
	open_tag(fp, d, name);
	json_array_foreach(a, i, e)
		if (i >= first && json_is_string(e)) {
			open_tag(fp, d + 2, "element");
			xml_elem(fp, d + 4, "ST_name", json_string_value(e));
			close_tag(fp, d + 2, "element");
		}
	close_tag(fp, d, name);
}

static void
xml_usage(FILE *fp, int d, const struct msg_task_row *t)
{
	static const char *const names[] = { "cpu", "mem", "io", "iow", "vmem", "maxvmem" };
	double v[6] = { 0 };

	v[0] = t->utime + t->stime;
	v[5] = (double)t->maxrss_kb * 1024.0;
	open_tag(fp, d, "JAT_scaled_usage_list");
	for (size_t i = 0; i < 6; i++) {
		open_tag(fp, d + 2, "scaled");
		xml_elem(fp, d + 4, "UA_name", names[i]);
		xml_elemf(fp, d + 4, "UA_value", "%.6f", v[i]);
		close_tag(fp, d + 2, "scaled");
	}
	close_tag(fp, d, "JAT_scaled_usage_list");
}

/* The tasks that run or ran: an array's from its "tasks", a single job's
 * from itself. */
static void
xml_ja_tasks(FILE *fp, int d, const struct msg_job_detail *job)
{
	const json_t *tasks = job->tasks;
	struct msg_task_row t;
	bool any = false;
	size_t i, n = tasks ? json_array_size(tasks) : 1;

	for (i = 0; i < n; i++) {
		if (tasks)
			msg_task_row_unpack(json_array_get(tasks, i), &t);
		else
			t = (struct msg_task_row){ .task = 1, .start_time = job->row.start_time,
			    .utime = job->utime, .stime = job->stime, .maxrss_kb = job->maxrss_kb };
		if (t.start_time <= 0)
			continue;
		if (!any)
			open_tag(fp, d, "JB_ja_tasks");
		any = true;
		open_tag(fp, d + 2, "ulong_sublist");
		xml_elem(fp, d + 4, "JAT_status", "128");
		xml_elemf(fp, d + 4, "JAT_task_number", "%lld", (long long)t.task);
		xml_usage(fp, d + 4, &t);
		xml_elemf(fp, d + 4, "JAT_start_time", "%lld", (long long)(t.start_time / 1000));
		close_tag(fp, d + 2, "ulong_sublist");
	}
	if (any)
		close_tag(fp, d, "JB_ja_tasks");
}

/* JB_mail_list: -M's addresses as <mail_list>, Grid Engine's default (the
 * owner at the submit host) as <element>, as Grid Engine names them. */
struct xml_mail {
	FILE       *fp;
	int         d;
	const char *tag;
};

static void
xml_mail_one(void *arg, const char *user, const char *host)
{
	struct xml_mail *m = arg;

	open_tag(m->fp, m->d, m->tag);
	xml_elem(m->fp, m->d + 2, "MR_user", user);
	xml_elem(m->fp, m->d + 2, "MR_host", host ? host : "");
	close_tag(m->fp, m->d, m->tag);
}

static void
xml_mail_list(FILE *fp, int d, const struct msg_job_detail *job)
{
	struct xml_mail m = { fp, d + 2, job->mail_to ? "mail_list" : "element" };

	open_tag(fp, d, "JB_mail_list");
	qstat_mail_each(job, xml_mail_one, &m);
	close_tag(fp, d, "JB_mail_list");
}

/* A list of jobs by number (JB_jid_predecessor_list, JB_jid_successor_list):
 * LIST holding an ITEM with the JRE_job_number of each, nothing when empty. */
static void
xml_job_numbers(FILE *fp, int d, const char *list, const char *item, const json_t *jobs)
{
	struct msg_job_wait w;
	const json_t *e;
	size_t i;

	if (json_array_size(jobs) == 0)
		return;
	open_tag(fp, d, list);
	json_array_foreach(jobs, i, e) {
		msg_job_wait_unpack(e, &w);
		open_tag(fp, d + 2, item);
		xml_elemf(fp, d + 4, "JRE_job_number", "%lld", (long long)w.id);
		close_tag(fp, d + 2, item);
	}
	close_tag(fp, d, list);
}

/* JB_jid_request_list: the -hold_jid jobs as asked (nowq keeps them
 * resolved to ids, so each is its id). */
static void
xml_jid_requests(FILE *fp, int d, const struct msg_job_detail *job)
{
	struct msg_job_wait w;
	const json_t *e;
	size_t i;

	if (json_array_size(job->waiting_for) == 0)
		return;
	open_tag(fp, d, "JB_jid_request_list");
	json_array_foreach(job->waiting_for, i, e) {
		msg_job_wait_unpack(e, &w);
		open_tag(fp, d + 2, "element");
		xml_elem(fp, d + 4, "JRE_job_number", "0");
		xml_elemf(fp, d + 4, "JRE_job_name", "%lld", (long long)w.id);
		close_tag(fp, d + 2, "element");
	}
	close_tag(fp, d, "JB_jid_request_list");
}

/* JB_binding: -binding [env|pe|set] linear:N[:S,C], striding:N:STEP[:S,C]
 * or explicit:..., as Grid Engine's BN_ fields (nowq binds nothing). */
static void
xml_binding(FILE *fp, int d, const struct msg_job_detail *job)
{
	const char *b = job->binding, *sp = b ? strchr(b, ' ') : NULL, *strat = sp ? sp + 1 : b;
	long long n = 0, step = 0, sock = 0, core = 0;
	const char *name = "no_job_binding";
	int type = 0;

	if (b) {
		type = strncmp(b, "pe ", 3) == 0 ? 1 : strncmp(b, "env ", 4) == 0 ? 2 : 3;
		if (strncmp(strat, "linear:", 7) == 0) {
			int k = sscanf(strat + 7, "%lld:%lld,%lld", &n, &sock, &core);
			name = k >= 3 ? "linear" : "linear_automatic";
		} else if (strncmp(strat, "striding:", 9) == 0) {
			int k = sscanf(strat + 9, "%lld:%lld:%lld,%lld", &n, &step, &sock, &core);
			name = k >= 4 ? "striding" : "striding_automatic";
		} else
			name = "explicit";
	}
	open_tag(fp, d, "JB_binding");
	open_tag(fp, d + 2, b ? "binding" : "element");
	xml_elem(fp, d + 4, "BN_strategy", name);
	xml_elemf(fp, d + 4, "BN_type", "%d", type);
	xml_elemf(fp, d + 4, "BN_parameter_n", "%lld", n);
	xml_elemf(fp, d + 4, "BN_parameter_socket_offset", "%lld", sock);
	xml_elemf(fp, d + 4, "BN_parameter_core_offset", "%lld", core);
	xml_elemf(fp, d + 4, "BN_parameter_striding_step_size", "%lld", step);
	if (!b || strcmp(name, "explicit") == 0)
		xml_elem(fp, d + 4, "BN_parameter_explicit", b ? strat : "no_explicit_binding");
	close_tag(fp, d + 2, b ? "binding" : "element");
	close_tag(fp, d, "JB_binding");
}

/* The fields Grid Engine prints that nowq keeps no value of, with its
 * value for a job that did not set them. */
static void
xml_job_defaults(FILE *fp, int d, const struct msg_job_detail *job)
{
	xml_elem(fp, d, "JB_deadline", "0");
	xml_elemf(fp, d, "JB_execution_time", "%lld", (long long)(job->begin_time / 1000));
	xml_elem(fp, d, "JB_checkpoint_attr", "0");
	xml_elem(fp, d, "JB_checkpoint_interval", "0");
	xml_elem(fp, d, "JB_reserve", "false");
	xml_elemf(fp, d, "JB_mail_options", "%lld", (long long)job->mail);
	xml_elemf(fp, d, "JB_priority", "%lld", (long long)(1024 + job->row.prio));
	xml_elemf(fp, d, "JB_restart", "%d", job->rerun ? 1 : 0);
	xml_elem(fp, d, "JB_verify", "0");
	xml_elem(fp, d, "JB_script_size", "0");
	/* Grid Engine 8.1.9 prints the request list a second time here. */
	xml_jid_requests(fp, d, job);
	xml_elem(fp, d, "JB_verify_suitable_queues", "0");
	xml_elem(fp, d, "JB_soft_wallclock_gmt", "0");
	xml_elem(fp, d, "JB_hard_wallclock_gmt", "0");
	xml_elem(fp, d, "JB_override_tickets", "0");
	xml_elem(fp, d, "JB_version", "0");
}

static void
xml_job(FILE *fp, const json_t *obj)
{
	struct msg_job_detail jd, *job = &jd;
	const json_t *env, *argv;
	int64_t gid, first;
	struct group *gr;
	const int d = 6;
	char *q;

	msg_job_detail_unpack(obj, &jd);
	env = jd.env;
	argv = jd.argv;
	gid = jd.gid;
	first = jd.row.t_first;
	gr = getgrgid((gid_t)gid);

	open_tag(fp, 4, "element");
	xml_elemf(fp, d, "JB_job_number", "%lld", (long long)job->row.id);
	xml_elem(fp, d, "JB_ar", "0");
	xml_elemf(fp, d, "JB_exec_file", "job_scripts/%lld", (long long)job->row.id);
	xml_elemf(fp, d, "JB_submission_time", "%lld", (long long)(job->row.submit_time / 1000));
	xml_elem(fp, d, "JB_owner", job->row.owner ? job->row.owner : "");
	xml_elemf(fp, d, "JB_uid", "%lld", (long long)job->uid);
	if (gr)
		xml_elem(fp, d, "JB_group", gr->gr_name);
	else
		xml_elemf(fp, d, "JB_group", "%lld", (long long)gid);
	xml_elemf(fp, d, "JB_gid", "%lld", (long long)gid);
	xml_elem(fp, d, "JB_account", job->account ? job->account : "sge");
	xml_elem(fp, d, "JB_merge_stderr", job->join ? "true" : "false");
	xml_mail_list(fp, d, job);
	if (job->project)
		xml_elem(fp, d, "JB_project", job->project);
	xml_elem(fp, d, "JB_notify", "false");
	xml_elem(fp, d, "JB_job_name", job->row.name ? job->row.name : "");
	xml_path_list(fp, d, "JB_stdout_path_list", job->out);
	xml_path_list(fp, d, "JB_stdin_path_list", job->in);
	xml_elem(fp, d, "JB_jobshare", "0");
	if (qstat_req_count(job->req) > 0) {
		open_tag(fp, d, "JB_hard_resource_list");
		qstat_req_each(job->req, xml_ce_one, fp);
		close_tag(fp, d, "JB_hard_resource_list");
	}
	if ((q = qstat_req_hard_queue(job->req)) != NULL) {
		open_tag(fp, d, "JB_hard_queue_list");
		open_tag(fp, d + 2, "destin_ident_list");
		xml_elem(fp, d + 4, "QR_name", q);
		free(q);
		close_tag(fp, d + 2, "destin_ident_list");
		close_tag(fp, d, "JB_hard_queue_list");
	}
	xml_path_list(fp, d, "JB_shell_list", job->shell);
	xml_env(fp, d, env);
	if (json_array_size(argv) > 0) {
		xml_strings(fp, d, "JB_job_args", argv, 1);
		xml_elem(fp, d, "JB_script_file", json_string_value(json_array_get(argv, 0)) ?
		    json_string_value(json_array_get(argv, 0)) : "");
	} else
		xml_strings(fp, d, "JB_job_args", job->args, 0);
	if (job->cwd)
		xml_elem(fp, d, "JB_cwd", job->cwd);
	xml_path_list(fp, d, "JB_stderr_path_list", job->err);
	xml_job_numbers(fp, d, "JB_jid_predecessor_list", "job_predecessors", jd.waiting_for);
	xml_jid_requests(fp, d, job);
	xml_job_numbers(fp, d, "JB_jid_successor_list", "ulong_sublist", jd.successors);
	xml_ja_tasks(fp, d, job);
	xml_job_defaults(fp, d, job);
	open_tag(fp, d, "JB_ja_structure");
	open_tag(fp, d + 2, "task_id_range");
	xml_elemf(fp, d + 4, "RN_min", "%lld", (long long)(first > 0 ? first : 1));
	xml_elemf(fp, d + 4, "RN_max", "%lld", (long long)(first > 0 ? job->row.t_last : 1));
	xml_elemf(fp, d + 4, "RN_step", "%lld", (long long)(first > 0 ? job->t_step : 1));
	close_tag(fp, d + 2, "task_id_range");
	close_tag(fp, d, "JB_ja_structure");
	/* Grid Engine's job type bits: 64 a script, 128 more an array. */
	xml_elem(fp, d, "JB_type", first > 0 ? "192" : "64");
	xml_binding(fp, d, job);
	xml_elemf(fp, d, "JB_ja_task_concurrency", "%lld", (long long)job->tc);
	xml_elem(fp, d, "JB_nurg", "0.000000");
	close_tag(fp, 4, "element");
}

void
qstat_xml_jobs(FILE *fp, const json_t *jobs, const json_t *missing)
{
	const json_t *v;
	size_t i;
	bool msgs = false;

	fputs("<?xml version='1.0'?>\n", fp);
	if (json_array_size(jobs) == 0) {
		/* Grid Engine names the unknown ones only when it knows none. */
		fputs("<unknown_jobs >\n", fp);
		json_array_foreach(missing, i, v)
			xml_elem(fp, 4, "ST_name", json_string_value(v) ? json_string_value(v) : "");
		fputs("</unknown_jobs>\n", fp);
		return;
	}
	fputs("<detailed_job_info  xmlns:xsd=\"" DJOB_XSD "\">\n", fp);
	open_tag(fp, 2, "djob_info");
	json_array_foreach(jobs, i, v)
		xml_job(fp, v);
	close_tag(fp, 2, "djob_info");
	/* The scheduler's word on why a job waits, as Grid Engine's messages. */
	open_tag(fp, 2, "messages");
	json_array_foreach(jobs, i, v) {
		struct msg_job_detail jd;

		msg_job_detail_unpack(v, &jd);
		if (jd.scheduling_info) {
			if (!msgs) {
				open_tag(fp, 4, "element");
				open_tag(fp, 6, "SME_global_message_list");
			}
			msgs = true;
			open_tag(fp, 8, "element");
			xml_elem(fp, 10, "MES_message_number", "0");
			xml_elemf(fp, 10, "MES_message", "job %lld: %s", (long long)jd.row.id,
			    jd.scheduling_info);
			close_tag(fp, 8, "element");
		}
	}
	if (msgs) {
		close_tag(fp, 6, "SME_global_message_list");
		close_tag(fp, 4, "element");
	}
	close_tag(fp, 2, "messages");
	fputs("</detailed_job_info>\n", fp);
}

/* qhost -xml. */

static void
hostvalue(FILE *fp, const char *name, const char *value)
{
	fprintf(fp, "   <hostvalue name='%s'>", name);
	xml_text(fp, value);
	fputs("</hostvalue>\n", fp);
}

/* Grid Engine's first host, "global", which holds cluster-wide values. */
static void
qhost_xml_global(FILE *fp)
{
	static const char *const names[] = { "arch_string", "num_proc", "m_socket", "m_core", "m_thread",
		"load_avg", "mem_total", "mem_used", "swap_total", "swap_used" };

	fputs(" <host name='global'>\n", fp);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		hostvalue(fp, names[i], "-");
	fputs(" </host>\n", fp);
}

static void
resourcevalue(FILE *fp, const char *name, const char *value, char *const *only)
{
	if (only && *only) {
		char *const *p = only;
		while (*p && strcmp(*p, name) != 0)
			p++;
		if (!*p)
			return;
	}
	fputs("   <resourcevalue name='", fp);
	xml_text(fp, name);
	fputs("' dominance='hl'>", fp);
	xml_text(fp, value);
	fputs("</resourcevalue>\n", fp);
}

static void
qhost_xml_attrs(FILE *fp, const struct msg_host_row *h, bool known, char *const *only)
{
	const struct host_attrs *a = &h->attrs;
	char buf[64];

	if (known && h->has_load) {
		snprintf(buf, sizeof buf, "%.6f", h->load[0]);
		resourcevalue(fp, "load_avg", buf, only);
	}
	if (a->arch)
		resourcevalue(fp, "arch", a->arch, only);
	snprintf(buf, sizeof buf, "%.6f", (double)h->slots);
	resourcevalue(fp, "num_proc", buf, only);
	if (a->mem > 0) {
		qhost_format_mem(buf, sizeof buf, a->mem);
		resourcevalue(fp, "mem_total", buf, only);
	}
	for (char **k = a->keys; k && *k; k++)
		resourcevalue(fp, *k, "TRUE", only);
}

static void
qhost_xml_queues(FILE *fp, const struct msg_host_row *h)
{
	size_t n;
	struct qstat_qinst *qi = qstat_host_qinsts(h, 1, &n);
	for (size_t i = 0; i < n; i++) {
		static const char *const names[] = { "qtype_string", "slots_used", "slots", "slots_resv",
			"state_string" };
		char vals[5][32];

		snprintf(vals[0], sizeof vals[0], "BP");
		snprintf(vals[1], sizeof vals[1], "%lld", (long long)qi[i].used);
		snprintf(vals[2], sizeof vals[2], "%lld", (long long)qi[i].tot);
		snprintf(vals[3], sizeof vals[3], "%lld", (long long)qi[i].resv);
		snprintf(vals[4], sizeof vals[4], "%s", qi[i].states);
		fputs(" <queue name='", fp);
		xml_text(fp, qi[i].queue);
		fputs("'>\n", fp);
		for (size_t k = 0; k < 5; k++) {
			fputs("   <queuevalue qname='", fp);
			xml_text(fp, qi[i].queue);
			fprintf(fp, "' name='%s'>", names[k]);
			xml_text(fp, vals[k]);
			fputs("</queuevalue>\n", fp);
		}
		fputs(" </queue>\n", fp);
	}
	free(qi);
}

static void
jobvalue(FILE *fp, long long id, const char *name, const char *value)
{
	fprintf(fp, "   <jobvalue jobid='%lld' name='%s'>", id, name);
	xml_text(fp, value);
	fputs("</jobvalue>\n", fp);
}

static void
qhost_xml_jobs(FILE *fp, const struct msg_host_row *h)
{
	const json_t *j;
	size_t i;

	json_array_foreach(h->jobs, i, j) {
		struct msg_job_row r;
		char buf[160];
		long long id;

		msg_job_row_unpack(j, &r);
		id = (long long)r.id;
		fprintf(fp, " <job name='%lld'>\n", id);
		snprintf(buf, sizeof buf, "'%.6f'", qstat_row_prior(&r));
		jobvalue(fp, id, "priority", buf);
		qstat_row_queue(&r, buf, sizeof buf);
		jobvalue(fp, id, "qinstance_name", buf);
		jobvalue(fp, id, "job_name", r.name ? r.name : "");
		jobvalue(fp, id, "job_owner", r.owner ? r.owner : "");
		jobvalue(fp, id, "job_state", qstat_row_state(&r));
		snprintf(buf, sizeof buf, "%lld", (long long)(r.start_time / 1000));
		jobvalue(fp, id, "start_time", buf);
		qstat_row_queue(&r, buf, sizeof buf);
		jobvalue(fp, id, "queue_name", buf);
		jobvalue(fp, id, "pe_master", "MASTER");
		if (r.task > 0) {
			snprintf(buf, sizeof buf, "%lld", (long long)r.task);
			jobvalue(fp, id, "taskid", buf);
		}
		fputs(" </job>\n", fp);
	}
}

void
qhost_xml(FILE *fp, const json_t *hosts, const struct qhost_view *v)
{
	size_t n;
	struct msg_host_row *rows = msg_host_rows_unpack(hosts, &n);

	fputs("<?xml version='1.0'?>\n<qhost xmlns:xsd=\"" QHOST_XSD "\">\n", fp);
	qhost_xml_global(fp);
	for (size_t i = 0; i < n; i++) {
		const struct msg_host_row *h = &rows[i];
		const char *name = h->name ? h->name : "";
		bool known = h->connected && !h->lost;
		char buf[64];

		if (v && v->hosts) {
			char *const *p = v->hosts;
			while (*p && strcmp(*p, name) != 0)
				p++;
			if (!*p)
				continue;
		}
		fputs(" <host name='", fp);
		xml_text(fp, name);
		fputs("'>\n", fp);
		hostvalue(fp, "arch_string", h->attrs.arch ? h->attrs.arch : "-");
		snprintf(buf, sizeof buf, "%lld", (long long)h->slots);
		hostvalue(fp, "num_proc", buf);
		hostvalue(fp, "m_socket", "-");
		hostvalue(fp, "m_core", "-");
		hostvalue(fp, "m_thread", "-");
		if (known && h->has_load)
			snprintf(buf, sizeof buf, "%.2f", h->load[0]);
		else
			snprintf(buf, sizeof buf, "-");
		hostvalue(fp, "load_avg", buf);
		qhost_format_mem(buf, sizeof buf, h->attrs.mem);
		hostvalue(fp, "mem_total", buf);
		hostvalue(fp, "mem_used", "-");
		hostvalue(fp, "swap_total", "-");
		hostvalue(fp, "swap_used", "-");
		if (v && v->attrs)
			qhost_xml_attrs(fp, h, known, v->attr_names);
		if (v && v->queues)
			qhost_xml_queues(fp, h);
		if (v && v->jobs)
			qhost_xml_jobs(fp, h);
		fputs(" </host>\n", fp);
	}
	fputs("</qhost>\n", fp);
	msg_host_rows_free(rows, n);
}
