/* cmd_qacct.c: qacct: the accounting of finished jobs, in Grid Engine's layouts or as JSON.
 *
 * Per attempt (-j), grouped (-h, -q, -g, -o, -D, -pe, -slots) or in total. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/common.h"
#include "client/client.h"
#include "common/msg_req.h"

static int qacct_run(int argc, char **argv);

const struct cmd cmd_qacct = {
	"qacct",
	"qacct [-j [job_id|job_name] [-t task_id_range]] [-o|-u [owner]] [-h [host]]\n"
	"      [-q [queue[@host]]] [-g [group]] [-D [department]] [-pe [pe_name]]\n"
	"      [-slots [slots]] [-P [project]] [-A [account]] [-l attr=val,...]\n"
	"      [-b begin_time] [-e end_time] [-d days] [-E] [--json]\n"
	"  begin_time, end_time: [[CC]YY]MMDDhhmm[.SS]\n",
	qacct_run,
};

/* What the command line asks. */
struct qacct_opts {
	bool        as_json, jobs, owners, hosts, queues, groups, depts, pes, slots;
	const char *dept;           /* -D's name: NULL: any */
	const char *job;
	bool        has_tasks;
	struct task_range tasks;
	int64_t     begin, end, days;
	struct msg_acct m;          /* the filters as the request carries them */
	char       *bufs[3];        /* -q QUEUE@HOST cut in two, -l's host and queue */
};

/* Grid Engine's words for its failed codes, for the ones nowq uses. */
static const char *
failed_text(int64_t code)
{
	switch (code) {
	case 0: return "";
	case 1: return "assumedly before job";
	case 37: return "qmaster enforced h_rt, h_cpu, or h_vmem limit";
	case 100: return "assumedly after job";
	default: return "";
	}
}

/* Grid Engine prints times as ctime(3) does, in local time; "-/-" for none. */
static void
acct_time(char *buf, size_t n, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (ms <= 0 || !localtime_r(&t, &tm) || strftime(buf, n, "%a %b %e %H:%M:%S %Y", &tm) == 0)
		snprintf(buf, n, "-/-");
}

/* s, or dflt when it is absent or empty. */
static const char *
str_or(const char *s, const char *dflt)
{
	return s && *s ? s : dflt;
}

/* Grid Engine 8.1.9's sizes: the value over 1024 until it is below, with
 * three decimals and its unit ("4.387KB", "0.000B"). */
static void
acct_size(char *buf, size_t n, double v)
{
	static const char *const units[] = { "B", "KB", "MB", "GB", "TB", "PB" };
	int k = 0;

	while (v >= 1024 && k < 5) {
		v /= 1024;
		k++;
	}
	snprintf(buf, n, "%.3f%s", v, units[k]);
}

/* The memory fields of wait4's usage (printed as sizes), after ru_maxrss. */
static bool
acct_is_size(int k)
{
	return k >= 1 && k <= 4;   /* ru_ixrss, ru_ismrss, ru_idrss, ru_isrss */
}

/* One attempt, in Grid Engine 8.1.9's qacct -j block: a key in 13 columns,
 * then the value, times and sizes with their units.  nowq leaves out what
 * it does not measure or keep (mem, io, iow, category); qacct(1) says so. */
static void
print_row(const struct msg_acct_row *rp)
{
	const struct msg_acct_row r = *rp;
	char t[64], buf[1024], gid[24];
	size_t i, used = 0;
	json_t *h;

	buf[0] = '\0';
	json_array_foreach(r.hosts, i, h)
		if (json_is_string(h) && used < sizeof buf)
			used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", i ? " " : "",
			    json_string_value(h));
	snprintf(gid, sizeof gid, "%lld", (long long)r.gid);
	printf("==============================================================\n");
	printf("%-13.12s%-20s\n", "qname", str_or(r.queue, "UNKNOWN"));
	printf("%-13.12s%-20s\n", "hostname", *buf ? buf : "UNKNOWN");
	printf("%-13.12s%-20s\n", "group", str_or(r.group, gid));
	printf("%-13.12s%-20s\n", "owner", str_or(r.owner, "UNKNOWN"));
	printf("%-13.12s%-20s\n", "project", str_or(r.project, "NONE"));
	printf("%-13.12s%-20s\n", "department", "defaultdepartment");
	printf("%-13.12s%-20s\n", "jobname", str_or(r.name, "UNKNOWN"));
	printf("%-13.12s%-20lld\n", "jobnumber", (long long)r.id);
	if (r.task)
		printf("%-13.12s%-20lld\n", "taskid", (long long)r.task);
	else
		printf("%-13.12s%s\n", "taskid", "undefined");
	printf("%-13.12s%-20s\n", "account", str_or(r.account, "sge"));
	printf("%-13.12s%-20lld\n", "priority", (long long)r.prio);
	acct_time(t, sizeof t, r.submit_time);
	printf("%-13.12s%-20s\n", "qsub_time", t);
	acct_time(t, sizeof t, r.start_time);
	printf("%-13.12s%-20s\n", "start_time", t);
	acct_time(t, sizeof t, r.end_time);
	printf("%-13.12s%-20s\n", "end_time", t);
	printf("%-13.12s%-20s\n", "granted_pe", str_or(r.pe, "NONE"));
	printf("%-13.12s%-20lld\n", "slots", (long long)r.slots);
	/* Grid Engine's code and words, then nowq's own reason. */
	if (r.failed && r.reason)
		printf("%-13.12s%-3lld : %s (%s)\n", "failed", (long long)r.failed, failed_text(r.failed),
		    r.reason);
	else
		printf("%-13.12s%-3lld %s %s\n", "failed", (long long)r.failed, r.failed ? ":" : "",
		    failed_text(r.failed));
	if (r.has_exit_status)
		printf("%-13.12s%-20lld\n", "exit_status", (long long)r.exit_status);
	else
		printf("%-13.12s%s\n", "exit_status", "undefined");   /* it never ran */
	printf("%-13.12s%.0fs\n", "ru_wallclock", r.ru_wallclock);
	printf("%-13.12s%.3fs\n", "ru_utime", r.ru.utime);
	printf("%-13.12s%.3fs\n", "ru_stime", r.ru.stime);
	for (int k = 0; k < RUSAGE_NINT; k++) {
		int64_t v = rusage_int(&r.ru, k);
		/* Grid Engine prints ru_maxrss, which it keeps in KiB, as a
		 * size in bytes: "309.031KB" for 309 MiB.  So does nowq. */
		if (k == 0 || acct_is_size(k)) {
			acct_size(t, sizeof t, (double)v);
			printf("%-13.12s%s\n", rusage_int_names[k], t);
		} else
			printf("%-13.12s%-20lld\n", rusage_int_names[k], (long long)v);
	}
	printf("%-13.12s%.3fs\n", "cpu", r.ru.utime + r.ru.stime);
	acct_size(t, sizeof t, (double)r.ru.maxvmem);
	printf("%-13.12s%s\n", "maxvmem", t);
	printf("%-13.12s%s\n", "arid", "undefined");
	printf("%-13.12s%s\n", "ar_sub_time", "undefined");
}

/* Grid Engine's grouping columns, in its order. */
enum { QC_HOST, QC_QUEUE, QC_GROUP, QC_OWNER, QC_DEPT, QC_PE, QC_SLOTS, QC_N };

/* A sum's value in column k (the slots right-aligned in 5, as Grid Engine
 * prints them); NULL: not grouped by it.  nowq has one department. */
static const char *
acct_sum_key(const struct msg_acct_sum *m, int k, char *buf, size_t n)
{
	switch (k) {
	case QC_HOST: return m->host;
	case QC_QUEUE: return m->queue;
	case QC_GROUP: return m->group;
	case QC_OWNER: return m->owner;
	case QC_DEPT: return "defaultdepartment";
	case QC_PE: return m->pe;
	default:
		if (!m->has_slots)
			return NULL;
		snprintf(buf, n, "%5lld", (long long)m->slots);
		return buf;
	}
}

/* The summary table as Grid Engine prints it: a column for each grouping
 * asked (HOST, CLUSTER QUEUE, GROUP, OWNER, DEPARTMENT, PE: each as wide
 * as its longest value, the one asked for included, and one blank; SLOTS
 * 6 wide, 5 when a number was asked), then the sums; "Total System Usage"
 * above when there is none.
 * MEMORY, IO and IOW are not measured by nowq: 0 (qacct(1)). */
static void
print_summary(const json_t *rows, const struct qacct_opts *o)
{
	static const char *const heads[] = { "HOST", "CLUSTER QUEUE", "GROUP", "OWNER", "DEPARTMENT",
		"PE", "SLOTS" };
	bool shown[] = { o->hosts || (o->queues && o->m.queue), o->queues, o->groups, o->owners,
		o->depts, o->pes, o->slots };
	const char *asked[] = { o->m.host, o->m.queue, o->m.group, o->m.owner, o->dept, o->m.pe, NULL };
	struct msg_acct_sum m;
	int w[QC_N] = { 0 }, total = 0;
	char buf[32];
	const char *v;
	size_t i;
	json_t *r;

	for (int k = 0; k < QC_N; k++) {
		if (!shown[k])
			continue;
		w[k] = (int)strlen(heads[k]) + 1;
		if (asked[k] && (int)strlen(asked[k]) + 1 > w[k])
			w[k] = (int)strlen(asked[k]) + 1;
		json_array_foreach(rows, i, r) {
			msg_acct_sum_unpack(r, &m);
			if ((v = acct_sum_key(&m, k, buf, sizeof buf)) != NULL && (int)strlen(v) + 1 > w[k])
				w[k] = (int)strlen(v) + 1;
		}
		if (k == QC_SLOTS && o->m.slots)
			w[k] = 5;
		total += w[k];
	}
	if (!total)
		printf("Total System Usage\n");
	for (int k = 0; k < QC_N; k++)
		if (shown[k])
			printf("%-*s", w[k], heads[k]);
	total += printf("%13s %13s %13s %13s %18s %18s %18s\n", "WALLCLOCK", "UTIME", "STIME", "CPU",
	    "MEMORY", "IO", "IOW") - 1;
	for (int k = 0; k < total; k++)
		putchar('=');
	putchar('\n');
	json_array_foreach(rows, i, r) {
		msg_acct_sum_unpack(r, &m);
		/* -D another department: nowq's records are all in Grid Engine's default one. */
		if (o->dept && strcmp(o->dept, "defaultdepartment") != 0)
			break;
		for (int k = 0; k < QC_N; k++)
			if (shown[k])
				printf("%-*s", w[k], str_or(acct_sum_key(&m, k, buf, sizeof buf), ""));
		printf("%13.0f %13.3f %13.3f %13.3f %18.3f %18.3f %18.3f\n", m.ru_wallclock,
		    m.ru_utime, m.ru_stime, m.ru_utime + m.ru_stime, 0.0, 0.0, 0.0);
	}
}

/* A value for an option whose value is optional: the next word unless it is an option. */
static const char *
optional_value(int argc, char **argv, int *k)
{
	if (*k + 1 < argc && argv[*k + 1][0] != '-')
		return argv[++*k];
	return NULL;
}

/* -l attr=val,...: hostname (h) and qname (q) select as -h and -q do; any
 * other attribute selects every record, since no nowq queue offers less of
 * a resource than a job asks (limits are the jobs' own). */
static int
qacct_resources(struct qacct_opts *o, const char *list)
{
	char *dup = xstrdup(list), *save, *tok;
	int rc = 0;

	for (tok = strtok_r(dup, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		bool host = strncmp(tok, "hostname=", 9) == 0 || strncmp(tok, "h=", 2) == 0;
		bool queue = strncmp(tok, "qname=", 6) == 0 || strncmp(tok, "q=", 2) == 0;

		if (!eq || eq == tok || !eq[1]) {
			client_errx("-l wants attr=value[,attr=value...], not \"%s\"", list);
			rc = -1;
		} else if (host || queue) {
			free(o->bufs[host ? 1 : 2]);
			o->bufs[host ? 1 : 2] = xstrdup(eq + 1);
			*(host ? &o->m.host : &o->m.queue) = o->bufs[host ? 1 : 2];
			*(host ? &o->hosts : &o->queues) = true;
		}
	}
	free(dup);
	return rc;
}

/* -b, -e and -d as Grid Engine reads them: start times (end times with
 * -E) from -b, before -e, and -d days from -b, back from -e, or back from
 * now. */
static void
qacct_times(struct qacct_opts *o)
{
	int64_t day = 86400000LL;

	o->m.from = o->begin;
	o->m.to = o->end;
	if (o->days && o->begin)
		o->m.to = o->begin + o->days * day;
	else if (o->days && o->end)
		o->m.from = o->end - o->days * day;
	else if (o->days)
		o->m.from = now_ms() - o->days * day;
	if (o->m.from < 0)
		o->m.from = 0;   /* before 1970: open */
}

/* One option with its value; -1 after an error message, 1 for -help. */
static int
qacct_option(struct qacct_opts *o, int argc, char **argv, int *k)
{
	const char *a = argv[*k], *v;
	char *end;

	/* The options whose name or number may follow: what each turns on. */
	const struct { const char *opt; bool *on; const char **val; } named[] = {
		{ "-j", &o->jobs, &o->job }, { "-o", &o->owners, &o->m.owner },
		{ "-u", &o->owners, &o->m.owner }, { "-h", &o->hosts, &o->m.host },
		{ "-g", &o->groups, &o->m.group }, { "-pe", &o->pes, &o->m.pe },
		{ "-D", &o->depts, &o->dept },
	};

	if (strcmp(a, "-help") == 0 || strcmp(a, "--help") == 0)
		return 1;
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
		if (strcmp(a, named[i].opt) == 0) {
			*named[i].on = true;
			*named[i].val = optional_value(argc, argv, k);
			return 0;
		}
	if (strcmp(a, "--json") == 0 || strcmp(a, "-json") == 0)
		o->as_json = true;
	else if (strcmp(a, "-q") == 0) {
		o->queues = true;
		if ((v = optional_value(argc, argv, k)) != NULL) {
			/* QUEUE@HOST: one queue instance. */
			free(o->bufs[0]);
			o->bufs[0] = xstrdup(v);
			o->m.queue = o->bufs[0];
			if ((end = strchr(o->bufs[0], '@')) != NULL) {
				*end = '\0';
				o->m.host = end + 1;
			}
		}
	} else if (strcmp(a, "-slots") == 0) {
		o->slots = true;
		if ((v = optional_value(argc, argv, k)) != NULL) {
			errno = 0;
			o->m.slots = strtoll(v, &end, 10);
			if (errno || *end || end == v || o->m.slots <= 0 || o->m.slots > JOB_MAX_SLOTS) {
				client_errx("invalid number of slots \"%s\" for -slots", v);
				return -1;
			}
		}
	} else if (strcmp(a, "-P") == 0 || strcmp(a, "-A") == 0) {
		/* Only those of one project or account; without a name, any
		 * (Grid Engine's table per project is not offered). */
		*(a[1] == 'P' ? &o->m.project : &o->m.account) = optional_value(argc, argv, k);
	} else if (strcmp(a, "-E") == 0)
		o->m.by_end = true;
	else if (strcmp(a, "-d") == 0 || strcmp(a, "-b") == 0 || strcmp(a, "-e") == 0 ||
	    strcmp(a, "-t") == 0 || strcmp(a, "-l") == 0) {
		if (*k + 1 >= argc) {
			client_errx("option \"%s\" needs a value", a);
			return -1;
		}
		v = argv[++*k];
		if (a[1] == 'd') {
			errno = 0;
			o->days = strtoll(v, &end, 10);
			if (errno || *end || end == v || o->days <= 0 || o->days > 100000) {
				client_errx("invalid number of days \"%s\" for -d", v);
				return -1;
			}
		} else if (a[1] == 'b' || a[1] == 'e') {
			if (qsub_parse_date(v, time(NULL), a[1] == 'b' ? &o->begin : &o->end) < 0) {
				client_errx("%s wants a time as [[CC]YY]MMDDhhmm[.SS], not \"%s\"", a, v);
				return -1;
			}
		} else if (a[1] == 't') {
			if (task_range_parse(v, &o->tasks) < 0) {
				client_errx("invalid task range \"%s\" for -t", v);
				return -1;
			}
			o->has_tasks = true;
		} else if (qacct_resources(o, v) < 0)
			return -1;
	} else {
		/* Grid Engine's options and unknown ones alike: the option's
		 * name, never "unknown option". */
		client_errx(CLIENT_UNSUPPORTED, a);
		return -1;
	}
	return 0;
}

/* The sums, grouped as the options ask. */
static int
qacct_summary(struct qacct_opts *o)
{
	char groups[64] = "";
	struct msg_acct_reply ar;
	json_t *rep;

	if (o->hosts || (o->queues && o->m.queue))
		strcat(groups, "host,");
	if (o->queues)
		strcat(groups, "queue,");
	if (o->groups)
		strcat(groups, "group,");
	if (o->owners)
		strcat(groups, "owner,");
	if (o->pes)
		strcat(groups, "pe,");
	if (o->slots)
		strcat(groups, "slots,");
	if (groups[0])
		groups[strlen(groups) - 1] = '\0';
	o->m.summary = groups[0] ? groups : "total";
	if ((rep = client_request_ok(msg_acct_pack(&o->m), "")) == NULL)
		return 1;
	msg_acct_reply_unpack(rep, &ar);
	if (o->as_json)
		client_print_json("summary", ar.summary);
	else
		print_summary(ar.summary, o);
	json_decref(rep);
	return 0;
}

/* The records, a page at a time, so no history is too long for one frame. */
static int
qacct_records(struct qacct_opts *o)
{
	struct msg_acct_reply ar;
	json_t *rep, *all = json_array(), *page, *next;
	size_t i, found = 0;
	int64_t id = 0;

	if (o->job && client_parse_id(o->job, &id))
		o->m.id = id;
	else if (o->job)
		o->m.name = o->job;
	for (;;) {
		if ((rep = client_request_ok(msg_acct_pack(&o->m), "")) == NULL) {
			json_decref(all);
			return 1;
		}
		msg_acct_reply_unpack(rep, &ar);
		page = ar.rows;
		json_array_foreach(page, i, next) {
			struct msg_acct_row r;

			msg_acct_row_unpack(next, &r);
			if (o->has_tasks && !task_in_range(&o->tasks, (int)r.task))
				continue;
			found++;
			if (o->as_json)
				json_array_append(all, next);
			else
				print_row(&r);
		}
		if (!msg_acct_next(rep, &o->m) || json_array_size(page) == 0) {
			json_decref(rep);
			break;
		}
		json_decref(rep);
	}
	if (o->as_json)
		client_print_json("rows", all);
	json_decref(all);
	/* Nothing found for a job that was asked for: Grid Engine's error. */
	if (o->job && found == 0) {
		fflush(stdout);
		if (id)
			client_errx("job id %lld not found", (long long)id);
		else
			client_errx("job name %s not found", o->job);
		return 1;
	}
	return 0;
}

static int
qacct_run(int argc, char **argv)
{
	struct qacct_opts o;
	int rc = 0;

	memset(&o, 0, sizeof o);
	for (int k = 1; k < argc && rc == 0; k++)
		rc = qacct_option(&o, argc, argv, &k);
	if (rc == 0 && o.has_tasks && !o.job) {
		client_errx("-t option requires -j option with an argument");
		rc = -1;
	}
	if (rc) {
		for (int b = 0; b < 3; b++)
			free(o.bufs[b]);
		client_usage(&cmd_qacct, rc > 0 ? stdout : stderr);
		return rc > 0 ? 0 : 1;
	}
	qacct_times(&o);
	rc = o.jobs ? qacct_records(&o) : qacct_summary(&o);
	for (int b = 0; b < 3; b++)
		free(o.bufs[b]);
	return rc;
}
