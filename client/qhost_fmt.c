/* qhost_fmt.c: qhost's output in Grid Engine's layout, as pure functions over the HOSTS reply's rows. */
#include "config.h"

#include <stdio.h>
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
print_attrs(FILE *fp, const struct msg_host_row *h, char *const *only)
{
	const struct host_attrs *a = &h->attrs;
	char buf[32];

	if (h->has_load && wanted("load_avg", only) && h->connected && !h->lost)
		fprintf(fp, "    hl:load_avg=%.2f\n", h->load[0]);
	if (a->arch && wanted("arch", only))
		fprintf(fp, "    hf:arch=%s\n", a->arch);
	if (a->mem > 0 && wanted("mem_total", only)) {
		qhost_format_mem(buf, sizeof buf, a->mem);
		fprintf(fp, "    hf:mem_total=%s\n", buf);
	}
	if (wanted("rating", only))
		fprintf(fp, "    hf:rating=%g\n", a->rating);
	for (char **k = a->keys; k && *k; k++)
		if (wanted(*k, only))
			fprintf(fp, "    hf:%s=TRUE\n", *k);
	for (char **m = a->mounts; m && *m; m++)
		if (wanted("mounts", only))
			fprintf(fp, "    hf:mount=%s\n", *m);
}

static void
print_jobs(FILE *fp, const struct msg_host_row *h)
{
	const json_t *j;
	char when[32];
	size_t i;

	if (json_array_size(h->jobs) == 0)
		return;
	fputs(qhost_job_header, fp);
	fputs("   ", fp);
	for (size_t k = 3; k + 1 < sizeof qhost_job_header - 1; k++)
		fputc('-', fp);
	fputc('\n', fp);
	json_array_foreach(h->jobs, i, j) {
		struct msg_job_row r;

		msg_job_row_unpack(j, &r);
		qstat_format_time(when, sizeof when, r.start_time ? r.start_time : r.submit_time);
		fprintf(fp, "   %7lld %7.5f %-10.10s %-12.12s %-5.5s %s %-10.10s %-6s\n",
		    (long long)r.id, ((double)r.prio + 1024.0) / 2048.0, r.name ? r.name : "",
		    r.owner ? r.owner : "", r.state_letters ? r.state_letters : "r", when,
		    r.queue ? r.queue : "", "MASTER");
	}
}

void
qhost_print(FILE *fp, const json_t *hosts, const struct qhost_view *v)
{
	size_t n;
	struct msg_host_row *rows = msg_host_rows_unpack(hosts, &n);

	fputs(qhost_header, fp);
	for (size_t k = 0; k + 1 < sizeof qhost_header - 1; k++)
		fputc('-', fp);
	fputc('\n', fp);
	for (size_t i = 0; i < n; i++) {
		const struct msg_host_row *h = &rows[i];
		const char *name = h->name ? h->name : "", *state = h->state;
		bool known = h->connected && !h->lost;
		char lb[16] = "-", mb[16];

		if (v && !wanted(name, v->hosts))
			continue;
		if (known && h->has_load)
			snprintf(lb, sizeof lb, "%.2f", h->load[0]);
		qhost_format_mem(mb, sizeof mb, h->attrs.mem);
		fprintf(fp, "%-23.23s %-12.12s %5lld %5lld %5s %7s %s", name,
		    h->attrs.arch ? h->attrs.arch : "-", (long long)h->slots,
		    (long long)h->used, lb, mb, state ? state : (known ? "idle" : "unknown"));
		if (state && strcmp(state, "busy") == 0 && h->busy_reason)
			fprintf(fp, " (%s)", h->busy_reason);
		if (state && strcmp(state, "reserved") == 0 && h->reserved.has) {
			char until[32];
			qstat_format_time(until, sizeof until, h->reserved.end);
			fprintf(fp, " (%s by %s until %s)", h->reserved.name ? h->reserved.name : "?",
			    h->reserved.owner ? h->reserved.owner : "?", until);
		}
		fputc('\n', fp);
		if (v && v->attrs)
			print_attrs(fp, h, v->attr_names);
		if (v && v->jobs)
			print_jobs(fp, h);
	}
	msg_host_rows_free(rows, n);
}
