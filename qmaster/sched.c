/* sched.c: matches runnable jobs to the execds holding a PULL open, best job first. */
#include "config.h"

#include <stdlib.h>

#include "qmaster/qmaster.h"
#include "spool/spool.h"

/* Set when a job may have become runnable or a host started pulling; the
 * scheduler runs once per loop turn, from the commit step, not per event. */
static bool want;

void
sched_kick(void)
{
	want = true;
	qm_wake();
}

bool
sched_wanted(void)
{
	return want && !TAILQ_EMPTY(&pulling_hosts);
}

struct pick_ctx {
	struct exechost *h;
	json_t          *jobs;
};

static int
sched_pick(void *arg, struct job *j)
{
	struct pick_ctx *pc = arg;

	if (qmod_queue_disabled(j->queue))
		return 0;
	qm_txn();
	j->attempt++;
	j->state = JS_DISPATCHED;
	free(j->host);
	j->host = xstrdup(pc->h->name);
	j->start_time = 0;
	j->pid = 0;
	if (store_job_update(store, j) < 0)
		fatalx("cannot store the dispatch of job %lld", (long long)j->id);
	json_array_append_new(pc->jobs, job_to_json(j));
	return 0;
}

/* Hosts leave the pulling list once served, and come back at its tail with
 * their next PULL: a round robin among idle hosts without extra state. */
void
sched_run(void)
{
	struct exechost *h, *tmp;

	want = false;
	TAILQ_FOREACH_SAFE(h, &pulling_hosts, pull_entry, tmp) {
		struct pick_ctx pc = { h, json_array() };
		int64_t uid = h->uid == 0 ? -1 : (int64_t)h->uid;

		if (h->disabled || h->lost) {
			json_decref(pc.jobs);
			continue;
		}
		if (store_jobs_runnable(store, uid, h->pull_free, sched_pick, &pc) < 0)
			fatalx("cannot read runnable jobs");
		if (json_array_size(pc.jobs) == 0) {
			json_decref(pc.jobs);
			continue;
		}
		TAILQ_REMOVE(&pulling_hosts, h, pull_entry);
		h->pulling = false;
		net_send(h->conn, json_pack("{s:s, s:I, s:o}", "type", "DISPATCH",
		    "seq", (json_int_t)h->pull_seq, "jobs", pc.jobs));
	}
}
