/* qhost_fmt.c: qhost's output in Grid Engine's layout, as pure functions over JSON.
 *
 * Hosts, -q queue instances, -F attributes and -j jobs, from the master's JSON. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "client/client.h"

/* Grid Engine's qhost shows NCPU NSOC NCOR NTHR and MEMUSE SWAPTO SWAPUS,
 * which nowq does not measure; it shows what it knows instead: the slots
 * and how many are used, and what the execd reports about the owner. */
static const char qhost_header[] =
    "HOSTNAME                ARCH         NSLOT NUSED  LOAD  MEMTOT STATE\n";

static const char qhost_job_header[] =
    "   job-ID  prior   name       user         state submit/start at     queue      master ja-task-ID\n";

void
qhost_format_mem(char *buf, size_t n, int64_t bytes)
{
	static const char units[] = "KMGTP";
	double v = (double)bytes;
	int u = -1;

	if (bytes <= 0) {
		snprintf(buf, n, "-");
		return;
	}
	while (v >= 1024.0 && u < 4) {
		v /= 1024.0;
		u++;
	}
	if (u < 0)
		snprintf(buf, n, "%lld", (long long)bytes);
	else
		snprintf(buf, n, "%.1f%c", v, units[u]);
}

static bool
wanted(const char *name, char *const *only)
{
	if (!only || !*only)
		return true;
	for (; *only; only++)
		if (strcmp(*only, name) == 0)
			return true;
	return false;
}

static void
print_attrs(FILE *fp, const json_t *h, char *const *only)
{
	const json_t *a = json_object_get(h, "attrs"), *l = json_object_get(h, "load"), *v;
	char buf[32];
	size_t i;

	if (json_is_array(l) && wanted("load_avg", only) && jbool(h, "connected", false) &&
	    !jbool(h, "lost", false))
		fprintf(fp, "    hl:load_avg=%.2f\n", json_number_value(json_array_get(l, 0)));
	if (jstr(a, "arch") && wanted("arch", only))
		fprintf(fp, "    hf:arch=%s\n", jstr(a, "arch"));
	if (jint(a, "mem", 0) > 0 && wanted("mem_total", only)) {
		qhost_format_mem(buf, sizeof buf, jint(a, "mem", 0));
		fprintf(fp, "    hf:mem_total=%s\n", buf);
	}
	if (json_is_number(json_object_get(a, "rating")) && wanted("rating", only))
		fprintf(fp, "    hf:rating=%g\n", json_number_value(json_object_get(a, "rating")));
	json_array_foreach(json_object_get(a, "keys"), i, v)
		if (json_is_string(v) && wanted(json_string_value(v), only))
			fprintf(fp, "    hf:%s=TRUE\n", json_string_value(v));
	json_array_foreach(json_object_get(a, "mounts"), i, v)
		if (json_is_string(v) && wanted("mounts", only))
			fprintf(fp, "    hf:mount=%s\n", json_string_value(v));
}

static void
print_jobs(FILE *fp, const json_t *h)
{
	const json_t *jobs = json_object_get(h, "jobs"), *j;
	char when[32];
	size_t i;

	if (json_array_size(jobs) == 0)
		return;
	fputs(qhost_job_header, fp);
	fputs("   ", fp);
	for (size_t k = 3; k + 1 < sizeof qhost_job_header - 1; k++)
		fputc('-', fp);
	fputc('\n', fp);
	json_array_foreach(jobs, i, j) {
		int64_t start = jint(j, "start_time", 0);
		qstat_format_time(when, sizeof when, start ? start : jint(j, "submit_time", 0));
		fprintf(fp, "   %7lld %7.5f %-10.10s %-12.12s %-5.5s %s %-10.10s %-6s\n",
		    (long long)jint(j, "id", 0), ((double)jint(j, "prio", 0) + 1024.0) / 2048.0,
		    jstr(j, "name") ? jstr(j, "name") : "", jstr(j, "owner") ? jstr(j, "owner") : "",
		    jstr(j, "state_letters") ? jstr(j, "state_letters") : "r", when,
		    jstr(j, "queue") ? jstr(j, "queue") : "", "MASTER");
	}
}

/* -q: the host's queue instances, "resv/used/tot." and their states. */
static void
print_queues(FILE *fp, const json_t *h)
{
	size_t n;
	struct qstat_qinst *qi = qstat_host_qinsts(h, &n);

	for (size_t i = 0; i < n; i++) {
		char counts[64];

		snprintf(counts, sizeof counts, "%lld/%lld/%lld", (long long)qi[i].resv, (long long)qi[i].used,
		    (long long)qi[i].tot);
		fprintf(fp, "   %-20.20s %-5s %-14s%s\n", qi[i].queue, "BP", counts, qi[i].states);
	}
	free(qi);
}

void
qhost_print(FILE *fp, const json_t *hosts, const struct qhost_view *v)
{
	const json_t *h;
	size_t i;

	fputs(qhost_header, fp);
	for (size_t k = 0; k + 1 < sizeof qhost_header - 1; k++)
		fputc('-', fp);
	fputc('\n', fp);
	json_array_foreach(hosts, i, h) {
		const char *name = jstr(h, "name") ? jstr(h, "name") : "", *state = jstr(h, "state");
		const json_t *attrs = json_object_get(h, "attrs"), *load = json_object_get(h, "load");
		bool known = jbool(h, "connected", false) && !jbool(h, "lost", false);
		char lb[16] = "-", mb[16];

		if (v && !wanted(name, v->hosts))
			continue;
		if (known && json_is_array(load) && json_is_number(json_array_get(load, 0)))
			snprintf(lb, sizeof lb, "%.2f", json_number_value(json_array_get(load, 0)));
		qhost_format_mem(mb, sizeof mb, jint(attrs, "mem", 0));
		fprintf(fp, "%-23.23s %-12.12s %5lld %5lld %5s %7s %s", name,
		    jstr(attrs, "arch") ? jstr(attrs, "arch") : "-", (long long)jint(h, "slots", 0),
		    (long long)jint(h, "used", 0), lb, mb, state ? state : (known ? "idle" : "unknown"));
		if (state && strcmp(state, "busy") == 0 && jstr(h, "busy_reason"))
			fprintf(fp, " (%s)", jstr(h, "busy_reason"));
		if (state && strcmp(state, "reserved") == 0 && json_is_object(json_object_get(h, "reserved"))) {
			const json_t *r = json_object_get(h, "reserved");
			char until[32];
			qstat_format_time(until, sizeof until, jint(r, "end", 0));
			fprintf(fp, " (%s by %s until %s)", jstr(r, "name") ? jstr(r, "name") : "?",
			    jstr(r, "owner") ? jstr(r, "owner") : "?", until);
		}
		fputc('\n', fp);
		if (v && v->queues)
			print_queues(fp, h);
		if (v && v->attrs)
			print_attrs(fp, h, v->attr_names);
		if (v && v->jobs)
			print_jobs(fp, h);
	}
}
