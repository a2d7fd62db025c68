/* cmd_qacct.c: qacct: the accounting of finished jobs, in Grid Engine's layouts or as JSON.
 *
 * Per attempt (-j), per owner (-o) or in total. */
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
	"qacct [-j [job_id|job_name]] [-o [owner]] [-P [project]] [-A [account]] [-d days] [--json]\n",
	qacct_run,
};

/* Grid Engine options nowq does not offer (yet). */
static const char *qacct_unsupported[] = {
	"-ar", "-b", "-D", "-e", "-f", "-g", "-h", "-l", "-pe", "-q", "-slots", "-t",
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

static const char *
str_or(const json_t *o, const char *k, const char *dflt)
{
	const char *s = jstr(o, k);
	return s && *s ? s : dflt;
}

static double
jnum(const json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : 0.0;
}

/* One attempt, in qacct -j's block: a key in 13 columns, then the value.
 * nowq omits what it does not measure (account, mem, io, iow, maxvmem);
 * qacct(1) says so. */
static void
print_row(const json_t *r)
{
	const json_t *ru = json_object_get(r, "rusage"), *hosts = json_object_get(r, "hosts");
	char t[64], buf[1024], gid[24];
	size_t i, used = 0;
	json_t *h;
	int64_t failed = jint(r, "failed", 0);
	const char *reason = jstr(r, "reason");

	buf[0] = '\0';
	json_array_foreach(hosts, i, h)
		if (json_is_string(h) && used < sizeof buf)
			used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", i ? " " : "",
			    json_string_value(h));
	snprintf(gid, sizeof gid, "%lld", (long long)jint(r, "gid", 0));
	printf("==============================================================\n");
	printf("%-13.12s%-20s\n", "qname", str_or(r, "queue", "UNKNOWN"));
	printf("%-13.12s%-20s\n", "hostname", *buf ? buf : "UNKNOWN");
	printf("%-13.12s%-20s\n", "group", str_or(r, "group", gid));
	printf("%-13.12s%-20s\n", "owner", str_or(r, "owner", "UNKNOWN"));
	printf("%-13.12s%-20s\n", "project", str_or(r, "project", "NONE"));
	printf("%-13.12s%-20s\n", "department", "defaultdepartment");
	printf("%-13.12s%-20s\n", "jobname", str_or(r, "name", "UNKNOWN"));
	printf("%-13.12s%-20lld\n", "jobnumber", (long long)jint(r, "id", 0));
	if (jint(r, "task", 0))
		printf("%-13.12s%-20lld\n", "taskid", (long long)jint(r, "task", 0));
	else
		printf("%-13.12s%s\n", "taskid", "undefined");
	printf("%-13.12s%-20s\n", "account", str_or(r, "account", "sge"));
	printf("%-13.12s%-20lld\n", "priority", (long long)jint(r, "prio", 0));
	acct_time(t, sizeof t, jint(r, "submit_time", 0));
	printf("%-13.12s%-20s\n", "qsub_time", t);
	acct_time(t, sizeof t, jint(r, "start_time", 0));
	printf("%-13.12s%-20s\n", "start_time", t);
	acct_time(t, sizeof t, jint(r, "end_time", 0));
	printf("%-13.12s%-20s\n", "end_time", t);
	printf("%-13.12s%-20s\n", "granted_pe", str_or(r, "pe", "NONE"));
	printf("%-13.12s%-20lld\n", "slots", (long long)jint(r, "slots", 1));
	/* Grid Engine's code and words, then nowq's own reason. */
	if (failed && reason)
		printf("%-13.12s%-3lld : %s (%s)\n", "failed", (long long)failed, failed_text(failed), reason);
	else
		printf("%-13.12s%-3lld %s %s\n", "failed", (long long)failed, failed ? ":" : "",
		    failed_text(failed));
	if (json_object_get(r, "exit_status"))
		printf("%-13.12s%-20lld\n", "exit_status", (long long)jint(r, "exit_status", 0));
	else
		printf("%-13.12s%s\n", "exit_status", "undefined");   /* it never ran */
	printf("%-13.12s%-13.0f\n", "ru_wallclock", jnum(r, "ru_wallclock"));
	printf("%-13.12s%-13.3f\n", "ru_utime", jnum(ru, "ru_utime"));
	printf("%-13.12s%-13.3f\n", "ru_stime", jnum(ru, "ru_stime"));
	for (int k = 0; k < RUSAGE_NINT; k++)
		printf("%-13.12s%-20lld\n", rusage_int_names[k], (long long)jint(ru, rusage_int_names[k], 0));
	printf("%-13.12s%-13.3f\n", "cpu", jnum(ru, "ru_utime") + jnum(ru, "ru_stime"));
	printf("%-13.12s%s\n", "arid", "undefined");
}

/* The summary table: Grid Engine's first four columns (MEMORY, IO and IOW
 * are not measured), after an OWNER column with -o. */
static void
print_summary(const json_t *rows, bool by_owner)
{
	char title[128];
	size_t i, w = strlen("OWNER") + 1;
	int dashes;
	json_t *r;

	if (by_owner)
		json_array_foreach(rows, i, r)
			if (jstr(r, "owner") && strlen(jstr(r, "owner")) + 1 > w)
				w = strlen(jstr(r, "owner")) + 1;
	if (!by_owner)
		printf("Total System Usage\n");
	dashes = snprintf(title, sizeof title, "%13.13s %13.13s %13.13s %13.13s",
	    "WALLCLOCK", "UTIME", "STIME", "CPU");
	if (by_owner) {
		printf("%-*s", (int)w, "OWNER");
		dashes += (int)w;
	}
	printf("%s\n", title);
	for (int k = 0; k < dashes; k++)
		putchar('=');
	putchar('\n');
	json_array_foreach(rows, i, r) {
		if (by_owner)
			printf("%-*s", (int)w, str_or(r, "owner", ""));
		printf("%13.0f %13.3f %13.3f %13.3f\n", jnum(r, "ru_wallclock"), jnum(r, "ru_utime"),
		    jnum(r, "ru_stime"), jnum(r, "ru_utime") + jnum(r, "ru_stime"));
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

static int
qacct_run(int argc, char **argv)
{
	bool as_json = false, jobs = false, owners = false;
	const char *job = NULL, *owner = NULL;
	int64_t days = 0, id = 0;
	json_t *rep, *all, *page, *next;
	struct msg_acct m = { 0 };
	size_t i, found = 0;

	for (int k = 1; k < argc; k++) {
		const char *a = argv[k];

		if (strcmp(a, "-help") == 0 || strcmp(a, "--help") == 0) {
			client_usage(&cmd_qacct, stdout);
			return 0;
		} else if (strcmp(a, "--json") == 0 || strcmp(a, "-json") == 0)
			as_json = true;
		else if (strcmp(a, "-j") == 0) {
			jobs = true;
			job = optional_value(argc, argv, &k);
		} else if (strcmp(a, "-o") == 0) {
			owners = true;
			owner = optional_value(argc, argv, &k);
		} else if (strcmp(a, "-P") == 0 || strcmp(a, "-A") == 0) {
			/* Only those of one project or account; without a
			 * name, any (Grid Engine's table per project is not
			 * offered). */
			*(a[1] == 'P' ? &m.project : &m.account) = optional_value(argc, argv, &k);
		} else if (strcmp(a, "-d") == 0) {
			char *end;
			if (k + 1 >= argc) {
				client_errx("option \"-d\" needs a number of days");
				client_usage(&cmd_qacct, stderr);
				return 1;
			}
			errno = 0;
			days = strtoll(argv[++k], &end, 10);
			if (errno || *end || end == argv[k] || days <= 0 || days > 100000) {
				client_errx("invalid number of days \"%s\" for -d", argv[k]);
				return 1;
			}
		} else {
			for (size_t u = 0; u < sizeof qacct_unsupported / sizeof *qacct_unsupported; u++)
				if (strcmp(a, qacct_unsupported[u]) == 0) {
					client_errx(CLIENT_UNSUPPORTED, a);
					return 1;
				}
			client_errx(CLIENT_UNSUPPORTED, a);
			client_usage(&cmd_qacct, stderr);
			return 1;
		}
	}

	m.owner = owner;
	if (days)
		m.since = now_ms() - days * 86400000LL;
	if (!jobs) {
		m.summary = owners ? "owner" : "total";
		if ((rep = client_request_ok(msg_acct_pack(&m), "")) == NULL)
			return 1;
		if (as_json)
			client_print_json("summary", json_object_get(rep, "summary"));
		else
			print_summary(json_object_get(rep, "summary"), owners);
		json_decref(rep);
		return 0;
	}
	if (job && client_parse_id(job, &id))
		m.id = id;
	else if (job)
		m.name = job;
	/* A page at a time, so no history is too long for one frame. */
	all = json_array();
	for (;;) {
		if ((rep = client_request_ok(msg_acct_pack(&m), "")) == NULL) {
			json_decref(all);
			return 1;
		}
		page = json_object_get(rep, "rows");
		json_array_foreach(page, i, next) {
			found++;
			if (as_json)
				json_array_append(all, next);
			else
				print_row(next);
		}
		if (!msg_acct_next(rep, &m) || json_array_size(page) == 0) {
			json_decref(rep);
			break;
		}
		json_decref(rep);
	}
	if (as_json)
		client_print_json("rows", all);
	json_decref(all);
	/* Nothing found for a job that was asked for: Grid Engine's error. */
	if (job && found == 0) {
		fflush(stdout);
		if (id)
			client_errx("job id %lld not found", (long long)id);
		else
			client_errx("job name %s not found", job);
		return 1;
	}
	return 0;
}
