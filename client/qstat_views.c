/* qstat_views.c: qstat -ext, -pri, -r and -g c in Grid Engine's plain layout, from qstat_fmt.c's rows. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "client/client.h"

/* Tools cut these by column, so every width is Grid Engine's.  nowq has
 * no tickets, shares, projects, departments or urgency: those columns
 * show Grid Engine's values for a cluster without them. */
static const char ext_header[] =
    "job-ID  prior   ntckts  name       user         project          department state cpu        "
    "mem     io      tckts ovrts otckt ftckt stckt share queue                          slots ja-task-ID \n";
static const char pri_header[] =
    "job-ID  prior   nurg    npprior ntckts   ppri name       user         state submit/start at     "
    "queue                          slots ja-task-ID \n";
/* Grid Engine's rules are not its headers' lengths. */
#define EXT_RULE_LEN 192
#define PRI_RULE_LEN 148
#define CQ_RULE_LEN 80
static const char cq_header[] =
    "CLUSTER QUEUE                   CQLOAD   USED    RES  AVAIL  TOTAL aoACDS  cdsuE  \n";

static void
rule(FILE *fp, size_t n)
{
	for (size_t i = 0; i < n; i++)
		putc_unlocked('-', fp);
	putc_unlocked('\n', fp);
}

static bool
running(const struct msg_job_row *r)
{
	return r->state && (strcmp(r->state, "running") == 0 || strcmp(r->state, "transferring") == 0);
}

static void
ext_row(FILE *fp, const struct msg_job_row *r)
{
	char queue[160], ja[32], cpu[32] = "", mem[16] = "", io[16] = "";

	qstat_row_queue(r, queue, sizeof queue);
	qstat_row_tasks(r, ja, sizeof ja);
	/* Usage as Grid Engine shows it for what runs: nowq's listing rows
	 * carry none, so a running job shows none used yet. */
	if (running(r)) {
		snprintf(cpu, sizeof cpu, "0:00:00:00");
		snprintf(mem, sizeof mem, "0.00000");
		snprintf(io, sizeof io, "0.00000");
	}
	fprintf(fp, "%7lld %7.5f %7.5f %-10.10s %-12.12s %-16.16s %-10.10s %-5.5s %-10.10s %-7.7s %-7.7s "
	    "%5d %5d %5d %5d %5d %-5.2f %-30.30s %5lld %-7s\n", (long long)r->id, qstat_row_prior(r), 0.0,
	    r->name ? r->name : "", r->owner ? r->owner : "", "NA", "defaultdepartment", qstat_row_state(r),
	    cpu, mem, io, 0, 0, 0, 0, 0, 0.0, queue, (long long)r->slots, ja);
}

static void
pri_row(FILE *fp, const struct msg_job_row *r)
{
	char queue[160], ja[32], when[32];

	qstat_row_queue(r, queue, sizeof queue);
	qstat_row_tasks(r, ja, sizeof ja);
	qstat_format_time(when, sizeof when, running(r) && r->start_time ? r->start_time : r->submit_time);
	/* npprior is -p on Grid Engine's 0 to 1 scale, which here is prior. */
	fprintf(fp, "%7lld %7.5f %7.5f %7.5f %7.5f %5lld %-10.10s %-12.12s %-5.5s %s %-30.30s %5lld %-7s\n",
	    (long long)r->id, qstat_row_prior(r), 0.0, qstat_row_prior(r), 0.0, (long long)r->prio,
	    r->name ? r->name : "", r->owner ? r->owner : "", qstat_row_state(r), when, queue,
	    (long long)r->slots, ja);
}

struct req_lines {
	FILE *fp;
	bool  first;
};

static void
req_line(void *arg, const char *name, const char *value)
{
	struct req_lines *rl = arg;

	fprintf(rl->fp, "%s%s=%s (0.000000)\n", rl->first ? "" : "                         ", name, value);
	rl->first = false;
}

/* The ids of the jobs a job waits for, comma-separated, then a newline. */
static void
wait_ids(FILE *fp, const json_t *waiting_for)
{
	struct msg_job_wait w;
	const json_t *e;
	size_t i;

	json_array_foreach(waiting_for, i, e) {
		msg_job_wait_unpack(e, &w);
		fprintf(fp, "%s%lld", i ? ", " : "", (long long)w.id);
	}
	fputc('\n', fp);
}

/* -r: what the job asked for, below its line. */
static void
req_rows(FILE *fp, const struct msg_job_row *r)
{
	struct msg_job_detail d;
	struct req_lines rl = { fp, true };
	char queue[160], *q;

	msg_job_detail_unpack(r->obj, &d);
	fprintf(fp, "       Full jobname:     %s\n", r->name ? r->name : "");
	if (running(r)) {
		qstat_row_queue(r, queue, sizeof queue);
		fprintf(fp, "       Master Queue:     %s\n", queue);
	}
	if (d.pe)
		fprintf(fp, "       Requested PE:     %s %lld\n", d.pe, (long long)r->slots);
	if (d.pe && running(r))
		fprintf(fp, "       Granted PE:       %s %lld\n", d.pe, (long long)r->slots);
	fputs("       Hard Resources:   ", fp);
	qstat_req_each(d.req, req_line, &rl);
	if (rl.first)
		fputc('\n', fp);
	fputs("       Soft Resources:   \n", fp);
	if ((q = qstat_req_hard_queue(d.req)) != NULL)
		fprintf(fp, "       Hard requested queues: %s\n", q);
	free(q);
	if (json_array_size(d.waiting_for) > 0) {
		fputs("       Predecessor Jobs (request): ", fp);
		wait_ids(fp, d.waiting_for);
		fputs("       Predecessor Jobs: ", fp);
		wait_ids(fp, d.waiting_for);
	}
	fputs("       Binding:          NONE\n", fp);
}

void
qstat_view_rows(FILE *fp, const struct msg_job_row *rows, size_t n, enum qstat_view v, bool req, bool header)
{
	if (n == 0)
		return;
	if (header) {
		if (v != QV_PLAIN) {
			fputs(v == QV_EXT ? ext_header : pri_header, fp);
			rule(fp, v == QV_EXT ? EXT_RULE_LEN : PRI_RULE_LEN);
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (v == QV_EXT)
			ext_row(fp, &rows[i]);
		else if (v == QV_PRI)
			pri_row(fp, &rows[i]);
		else if (header && i == 0)
			qstat_print_table(fp, rows, 1);
		else
			qstat_print_row(fp, &rows[i]);
		if (req)
			req_rows(fp, &rows[i]);
	}
}

/* Slots of instances in an alarm (a) or disabled, unknown (d, u) state
 * count as Grid Engine's aoACDS and cdsuE columns, and are not available. */
struct qstat_cqueue *
qstat_cqueues(const json_t *hosts, size_t *n)
{
	struct qstat_qinsts all;
	struct qstat_qinst *qi;
	size_t nqi, i;
	struct qstat_cqueue *cq = NULL, *c = NULL;
	int loads = 0;

	qstat_qinsts_load(&all, hosts);
	qi = all.qi;
	nqi = all.n;
	*n = 0;
	for (i = 0; i < nqi; i++) {
		bool off = strpbrk(qi[i].states, "du") != NULL, alarm = strchr(qi[i].states, 'a') != NULL;

		/* Instances come by queue, so a queue's are together. */
		if (!c || strcmp(c->name, qi[i].queue) != 0) {
			if (c && loads)
				c->load /= loads;
			cq = xrealloc(cq, (*n + 1) * sizeof *cq);
			c = &cq[(*n)++];
			*c = (struct qstat_cqueue){ .name = qi[i].queue };
			loads = 0;
		}
		c->used += qi[i].used;
		c->resv += qi[i].resv;
		c->total += qi[i].tot;
		if (off)
			c->disabled += qi[i].tot;
		else if (alarm)
			c->alarm += qi[i].tot;
		else if (qi[i].tot - qi[i].used - qi[i].resv > 0)
			c->avail += qi[i].tot - qi[i].used - qi[i].resv;
		if (qi[i].has_load) {
			c->load += qi[i].load;
			c->has_load = true;
			loads++;
		}
	}
	if (c && loads)
		c->load /= loads;
	/* The names point into the host rows, which go: keep copies. */
	for (i = 0; i < *n; i++)
		cq[i].name = xstrdup(cq[i].name);
	qstat_qinsts_free(&all);
	return cq;
}

void
qstat_cqueues_free(struct qstat_cqueue *cq, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)cq[i].name);
	free(cq);
}

void
qstat_print_cqueues(FILE *fp, const json_t *hosts)
{
	size_t n;
	struct qstat_cqueue *cq = qstat_cqueues(hosts, &n);

	fputs(cq_header, fp);
	rule(fp, CQ_RULE_LEN);
	for (size_t i = 0; i < n; i++) {
		if (cq[i].has_load)
			fprintf(fp, "%-30.30s %7.2f ", cq[i].name, cq[i].load);
		else
			fprintf(fp, "%-30.30s %7s ", cq[i].name, "-NA-");
		fprintf(fp, "%6lld %6lld %6lld %6lld %6lld %6lld \n", (long long)cq[i].used, (long long)cq[i].resv,
		    (long long)cq[i].avail, (long long)cq[i].total, (long long)cq[i].alarm,
		    (long long)cq[i].disabled);
	}
	qstat_cqueues_free(cq, n);
}
