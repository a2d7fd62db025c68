/* array.c: array jobs (qsub -t, -tc): their tasks' dispatch and ends, and their listing.
 *
 * Tasks dispatch in order; the parent ends once all its tasks ended; qdel
 * takes tasks; the listing shows pending ranges and task rows. */
#include "config.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg.h"
#include "common/msg_req.h"
#include "common/msg_rows.h"
#include "qmaster/qmaster.h"
#include "spool/spool.h"

static struct task_range
array_range(const struct job *j)
{
	return (struct task_range){ j->t_first, j->t_last, j->t_step };
}

/* The task ids from `from` on that left the pending state; never NULL. */
static int *
array_taken(struct store *st, const struct job *j, int from, size_t *n)
{
	int *ids = store_task_ids(st, j->id, from, n);
	if (!ids)
		fatalx("cannot read the tasks of job %lld", (long long)j->id);
	return ids;
}

/* The part of the range no pending task precedes: from the cursor on, so
 * reading the rows costs those after it, not every task that ran. */
static struct task_range
array_rest(struct store *st, const struct job *j)
{
	struct task_range r = array_range(j);
	int64_t cur = store_array_next(st, j->id);

	if (cur < 0)
		fatalx("cannot read the cursor of job %lld", (long long)j->id);
	if (cur > r.first) {
		int64_t k = (cur - r.first + r.step - 1) / r.step;
		int64_t f = r.first + k * r.step;
		if (f > r.last) {
			/* Nothing left: an empty range. */
			r.first = r.last + 1;
			return r;
		}
		r.first = (int)f;
	}
	return r;
}

/* A scheduler pass's view of one array: which tasks it took, where it is,
 * how many run against -tc. */
struct array_sched {
	struct job *j;        /* the parent, the window's */
	int        *taken;
	size_t      ntaken;
	int         next;     /* the next pending task, 0: none */
	int         cand;     /* the next one that may start, 0: none */
	int64_t     active;   /* dispatched or running now */
	struct deps_gates *gates;   /* -hold_jid_ad, NULL: none */
};

/* Tasks one pass looks at past a gated one: the arrays they wait for end
 * their tasks in about the same order, so the ready ones are near the
 * front, and a pass stays cheap behind a long-running gate. */
#define ARRAY_GATE_SCAN 256

/* The first task from t on (in task order, pending) that its gates let
 * start; 0 when none in reach. */
static int
array_ready_from(const struct array_sched *a, int t)
{
	struct task_range r = array_range(a->j);

	if (!a->gates)
		return t;
	for (int k = 0; t && k < ARRAY_GATE_SCAN; k++) {
		int v = deps_task_ready(a->gates, t);
		if (v > 0)
			return t;
		if (v < 0)
			return 0;
		t = task_next(&r, a->taken, a->ntaken, t);
	}
	return 0;
}

/* A task started out of order joins the taken ones, which stay sorted. */
static void
array_take(struct array_sched *a, int t)
{
	size_t i = a->ntaken;

	a->taken = xrealloc(a->taken, (a->ntaken + 1) * sizeof *a->taken);
	while (i > 0 && a->taken[i - 1] > t) {
		a->taken[i] = a->taken[i - 1];
		i--;
	}
	a->taken[i] = t;
	a->ntaken++;
}

struct array_sched *
array_sched_open(struct job *j)
{
	struct array_sched *a = xcalloc(1, sizeof *a);
	struct store_task_counts c;
	struct task_range r = array_rest(store, j);

	a->j = j;
	a->taken = array_taken(store, j, r.first, &a->ntaken);
	a->next = r.first <= r.last ? task_next(&r, a->taken, a->ntaken, 0) : 0;
	if (store_task_counts(store, j->id, &c) < 0)
		fatalx("cannot count the tasks of job %lld", (long long)j->id);
	a->active = c.active;
	a->gates = deps_gates_open(j);
	a->cand = array_ready_from(a, a->next);
	return a;
}

void
array_sched_close(struct array_sched *a)
{
	if (!a)
		return;
	deps_gates_close(a->gates);
	free(a->taken);
	free(a);
}

bool
array_sched_done(const struct array_sched *a)
{
	return a->cand == 0 || (a->j->tc > 0 && a->active >= a->j->tc);
}

/* All tasks have left the pending state: the parent leaves the runnable
 * jobs and shows as running until its last task ends. */
static void
array_all_dispatched(struct job *j)
{
	if (j->state != JS_PENDING)
		return;
	qm_txn();
	j->state = JS_RUNNING;
	if (store_job_update(store, j) < 0)
		fatalx("cannot store job %lld", (long long)j->id);
}

/* A fresh task of the parent, as the job record DISPATCH carries. */
static struct job *
array_task_new(const struct job *p, int task)
{
	json_t *o = job_to_json(p);
	const char *why = NULL;
	struct job *t = job_from_json(o, &why);

	json_decref(o);
	if (!t)
		fatalx("job %lld does not survive its own JSON: %s", (long long)p->id, why ? why : "?");
	t->task = task;
	/* Past any attempt of a task queued again (array_task_requeue). */
	t->attempt = p->attempt;
	t->state = JS_PENDING;
	t->error = t->delete_req = false;
	t->suspended = 0;
	free(t->host);
	t->host = NULL;
	free(t->reason);
	t->reason = NULL;
	t->start_time = t->end_time = 0;
	t->pid = t->exit_status = t->signal = 0;
	t->utime = t->stime = 0;
	t->maxrss_kb = 0;
	return t;
}

struct job *
array_sched_next(struct array_sched *a)
{
	struct task_range r = array_range(a->j);
	struct job *t;

	if (array_sched_done(a))
		return NULL;
	t = array_task_new(a->j, a->cand);
	qm_txn();
	if (a->cand == a->next) {
		/* The cursor: every task before it has left the pending state. */
		if (store_array_set_next(store, a->j->id, a->next + 1) < 0)
			fatalx("cannot store the cursor of job %lld", (long long)a->j->id);
		a->next = task_next(&r, a->taken, a->ntaken, a->next);
	} else
		array_take(a, a->cand);
	a->active++;
	if (a->next == 0)
		array_all_dispatched(a->j);
	a->cand = a->next ? array_ready_from(a, task_next(&r, a->taken, a->ntaken, t->task)) : 0;
	return t;
}

/* Ends the parent once no task is pending or unfinished: done only if
 * every task succeeded.  recount: pending tasks may have been deleted, so
 * count them instead of trusting the parent's state. */
static void
array_check_end(struct job *p, bool recount)
{
	struct store_task_counts c;
	struct task_range r = array_range(p);

	if (JS_FINISHED(p->state))
		return;
	if (!p->delete_req) {
		if (recount) {
			struct task_range rest = array_rest(store, p);
			size_t n;
			int *ids = array_taken(store, p, rest.first, &n);
			int64_t pending = task_pending_count(&rest, ids, n);
			free(ids);
			if (pending > 0)
				return;
		} else if (p->state == JS_PENDING)
			return;
	}
	if (store_task_counts(store, p->id, &c) < 0)
		fatalx("cannot count the tasks of job %lld", (long long)p->id);
	qm_txn();
	if (c.unfinished > 0) {
		array_all_dispatched(p);
		return;
	}
	p->end_time = now_ms();
	free(p->reason);
	p->reason = NULL;
	if (p->delete_req) {
		p->state = JS_DELETED;
		p->reason = xstrdup("deleted (qdel)");
	} else if (c.failed || c.deleted) {
		p->state = JS_FAILED;
		p->reason = xasprintf("%lld of %lld tasks failed, %lld were deleted", (long long)c.failed,
		    (long long)task_range_count(&r), (long long)c.deleted);
	} else
		p->state = JS_DONE;
	if (store_job_update(store, p) < 0)
		fatalx("cannot store the end of job %lld", (long long)p->id);
	log_debug("array job %lld ended: %s", (long long)p->id, job_state_name(p->state));
	request_job_finished(p);
}

struct job *
array_task_view(const struct job *p, int task)
{
	struct task_range r = array_range(p);
	struct job *t;

	if (p->t_first == 0 || !task_in_range(&r, task))
		return NULL;
	if ((t = store_task_get(store, p->id, task, false)))
		return t;
	t = array_task_new(p, task);
	/* A task that never left the pending state ends with its array. */
	if (JS_FINISHED(p->state)) {
		t->state = JS_DELETED;
		t->end_time = p->end_time;
	}
	return t;
}

void
array_task_ended(const struct job *t)
{
	struct job *p = store_job_get(store, t->id, false);

	assert(t->task > 0);
	if (!p)
		return;
	array_check_end(p, false);
	job_free(p);
}

/* Unfinished task views, read before any is changed. */
struct task_list {
	struct job **v;
	size_t       n, cap;
};

static int
task_list_add(void *arg, struct job *j)
{
	struct task_list *l = arg;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->v = xrealloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n++] = j;
	return 0;
}

/* The walk frees what it lends: keep a copy. */
static int
task_list_keep(void *arg, struct job *j)
{
	struct job *k = job_new();
	*k = *j;
	memset(j, 0, sizeof *j);
	return task_list_add(arg, k);
}

static void
task_list_free(struct task_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		job_free(l->v[i]);
	free(l->v);
}

#define TASKS_UNFINISHED (1u << JS_PENDING | 1u << JS_DISPATCHED | 1u << JS_RUNNING)

/* One task's deletion: 1 deleted at once, 2 to be killed, 0 already ended. */
static int
array_task_delete(struct conn *c, struct job *t)
{
	if (JS_FINISHED(t->state))
		return 0;
	if (t->state == JS_PENDING) {
		/* Waiting in error: it never ran. */
		t->state = JS_DELETED;
		t->end_time = now_ms();
		free(t->reason);
		t->reason = xasprintf("deleted by %s", c->user);
		if (store_job_update(store, t) < 0)
			fatalx("cannot store a deletion");
		return 1;
	}
	if (!t->delete_req) {
		t->delete_req = true;
		if (store_job_update(store, t) < 0)
			fatalx("cannot store a deletion request");
	}
	exechost_signal_job(t, 9);
	return 2;
}

const char *
array_delete(struct conn *c, struct job *j, const struct task_range *only, char *buf, size_t n, bool *ok)
{
	struct task_list l = { 0 };
	int64_t deleted = 0, killed = 0;
	char what[64];

	*ok = true;
	qm_txn();
	/* A range covering every task is the whole array: no row per task. */
	if (only && only->first <= j->t_first && only->last >= j->t_last &&
	    (only->step == 1 || (only->step == j->t_step && only->first == j->t_first)))
		only = NULL;
	if (!only) {
		if (store_tasks_foreach(store, j->id, TASKS_UNFINISHED, task_list_keep, &l) < 0)
			fatalx("cannot read the tasks of job %lld", (long long)j->id);
		for (size_t i = 0; i < l.n; i++)
			killed += array_task_delete(c, l.v[i]) == 2;
		/* Its pending tasks go with the parent's delete_req. */
		j->delete_req = true;
		if (j->state == JS_PENDING)
			j->state = JS_RUNNING;
		if (store_job_update(store, j) < 0)
			fatalx("cannot store a deletion");
		task_list_free(&l);
		array_check_end(j, false);
		if (killed)
			snprintf(buf, n, "%s has registered the job %lld for deletion", c->user, (long long)j->id);
		else
			snprintf(buf, n, "%s has deleted job %lld", c->user, (long long)j->id);
		return buf;
	}
	{
		struct task_range r = array_range(j);
		size_t ntaken;
		int *taken = array_taken(store, j, only->first, &ntaken);
		size_t k = 0;

		for (int64_t t = only->first; t <= only->last; t += only->step) {
			struct job *v;
			if (!task_in_range(&r, (int)t))
				continue;
			while (k < ntaken && taken[k] < t)
				k++;
			if (k < ntaken && taken[k] == t) {
				if ((v = store_task_get(store, j->id, (int)t, false)) == NULL)
					continue;
				switch (array_task_delete(c, v)) {
				case 1: deleted++; break;
				case 2: killed++; break;
				}
				job_free(v);
				continue;
			}
			/* Pending: its row says it is gone. */
			struct job d = { .id = j->id, .task = (int)t, .state = JS_DELETED,
				.end_time = now_ms(), .reason = (char *)"deleted (qdel -t)" };
			if (store_task_put(store, &d) < 0)
				fatalx("cannot store a deletion");
			deleted++;
		}
		free(taken);
	}
	if (only->first == only->last)
		snprintf(what, sizeof what, "%lld.%d", (long long)j->id, only->first);
	else
		snprintf(what, sizeof what, "%lld.%d-%d:%d", (long long)j->id, only->first, only->last,
		    only->step);
	if (!deleted && !killed) {
		*ok = false;
		snprintf(buf, n, "denied: job-array task \"%s\" does not exist", what);
		return buf;
	}
	array_check_end(j, true);
	if (killed && !deleted)
		snprintf(buf, n, "%s has registered the job-array task%s %s for deletion", c->user,
		    killed > 1 ? "s" : "", what);
	else
		snprintf(buf, n, "%s has deleted job-array task%s %s", c->user,
		    deleted + killed > 1 ? "s" : "", what);
	return buf;
}

/* Whether any task of p left the pending state. */
bool
array_started(const struct job *p)
{
	size_t n;
	free(array_taken(store, p, p->t_first, &n));
	return n > 0;
}

/* Fails every task of p still pending with why (its reservation ended):
 * each gets a row, as qdel -t writes one, so the parent ends once the
 * tasks that run (left to the reservation's end) have ended too. */
void
array_fail_pending(struct job *p, const char *why)
{
	struct task_range r = array_rest(store, p);
	size_t ntaken, k = 0;
	int *taken = array_taken(store, p, r.first, &ntaken);
	int64_t at = now_ms();

	qm_txn();
	for (int64_t t = r.first; t <= r.last; t += r.step) {
		while (k < ntaken && taken[k] < t)
			k++;
		if (k < ntaken && taken[k] == t)
			continue;
		struct job d = { .id = p->id, .task = (int)t, .state = JS_FAILED, .end_time = at,
			.reason = (char *)why };
		if (store_task_put(store, &d) < 0)
			fatalx("cannot store the failure of task %lld.%lld", (long long)p->id, (long long)t);
	}
	free(taken);
	/* Tasks held on their own have rows, pending still: they fail too. */
	{
		struct task_list l = { 0 };
		if (store_tasks_foreach(store, p->id, 1u << JS_PENDING, task_list_keep, &l) < 0)
			fatalx("cannot read the tasks of job %lld", (long long)p->id);
		for (size_t i = 0; i < l.n; i++) {
			struct job d = { .id = p->id, .task = l.v[i]->task, .state = JS_FAILED,
				.end_time = at, .reason = (char *)why };
			if (store_task_put(store, &d) < 0)
				fatalx("cannot store the failure of task %lld.%d", (long long)p->id, d.task);
		}
		task_list_free(&l);
	}
	array_check_end(p, true);
}

/* The pending tasks as Grid Engine writes them; "" when none are left. */
static char *
array_pending_text(struct store *st, const struct job *j)
{
	struct task_range r;
	size_t n;
	int *ids;
	char *s;

	if (j->state != JS_PENDING || j->delete_req)
		return xstrdup("");
	r = array_rest(st, j);
	if (r.first > r.last)
		return xstrdup("");
	ids = array_taken(st, j, r.first, &n);
	s = task_pending_format(&r, ids, n);
	free(ids);
	return s;
}

struct brief_ctx {
	struct jtext *t;
	int64_t      *n;
	struct job   *held;   /* the first task held on its own, NULL: none */
	int          *hv;     /* the ids of those tasks, in order */
	size_t        nh;
};

static int
brief_task(void *arg, struct job *j)
{
	struct brief_ctx *b = arg;

	/* Tasks held on their own share one line, as Grid Engine's. */
	if (j->state == JS_PENDING) {
		b->hv = xrealloc(b->hv, (b->nh + 1) * sizeof *b->hv);
		b->hv[b->nh++] = j->task;
		if (!b->held) {
			b->held = job_new();
			*b->held = *j;
			memset(j, 0, sizeof *j);
		}
		return 0;
	}
	if ((*b->n)++)
		jt_lit(b->t, ",");
	job_brief_text(j, b->t);
	return 0;
}

void
array_brief(struct store *st, const struct job_brief *jb, struct jtext *t, int64_t *n)
{
	struct brief_ctx b = { t, n, NULL, NULL, 0 };
	/* The few arrays of a listing are read whole: their tasks need it. */
	struct job *j = store_job_get(st, jb->id, false);
	char *pending;

	if (!j) {
		log_warnx("cannot read array job %lld", (long long)jb->id);
		return;
	}
	pending = array_pending_text(st, j);

	/* One line for the pending tasks, one per task that left them. */
	if (*pending || JS_FINISHED(j->state)) {
		if ((*n)++)
			jt_lit(t, ",");
		job_brief_text_tasks(j, *pending ? pending : NULL, t);
	}
	free(pending);
	if (!JS_FINISHED(j->state) &&
	    store_tasks_foreach(st, j->id, TASKS_UNFINISHED, brief_task, &b) < 0)
		log_warnx("cannot list the tasks of job %lld", (long long)j->id);
	if (b.held) {
		struct task_range r = array_range(j);
		char *list = task_list_format(&r, b.hv, b.nh);
		if ((*n)++)
			jt_lit(t, ",");
		b.held->task = 0;
		job_brief_text_tasks(b.held, list, t);
		free(list);
		job_free(b.held);
	}
	free(b.hv);
	job_free(j);
}

/* qstat -j lists every unfinished task but only the first of the finished
 * ones, so a million-task array still fits in a reply. */
#define ARRAY_FINISHED_SHOWN 1000

struct task_json_ctx {
	json_t *list;
	int     finished;
};

static int
task_json(void *arg, struct job *j)
{
	struct task_json_ctx *tc = arg;

	if (JS_FINISHED(j->state) && tc->finished++ >= ARRAY_FINISHED_SHOWN)
		return 0;
	json_array_append_new(tc->list, msg_task_row_pack(&(struct msg_task_row){
	    .task = j->task, .state = job_state_name(j->state), .state_letters = job_state_letters(j),
	    .start_time = j->start_time, .end_time = j->end_time, .exit_status = j->exit_status,
	    .signal = j->signal, .attempt = j->attempt, .utime = j->utime, .stime = j->stime,
	    .maxrss_kb = j->maxrss_kb, .host = j->host, .reason = j->reason }));
	return 0;
}

void
array_status_json(struct store *st, const struct job *j, json_t *o, bool with_tasks)
{
	char *pending = array_pending_text(st, j);
	struct msg_job_more m = { .tasks_pending = pending };

	if (with_tasks) {
		m.tasks = json_array();
		if (store_tasks_foreach(st, j->id, 0, task_json, &(struct task_json_ctx){ m.tasks, 0 }) < 0)
			log_warnx("cannot list the tasks of job %lld", (long long)j->id);
	}
	msg_job_more_add(o, &m);
	free(pending);
}

int
array_tasks_active(const char *host, store_job_cb cb, void *arg)
{
	return store_tasks_active(store, host, cb, arg);
}

/* The task is pending again, and so is its parent.  Its row goes, so
 * that the scheduler sees it among the pending; the parent keeps the
 * highest attempt any of its tasks had, from which the task's next attempt
 * is counted, so that no (job, task, attempt) names two runs. */
static void
array_task_requeue(const struct job *t)
{
	struct job *p;

	if (store_task_delete(store, t->id, t->task) < 0)
		fatalx("cannot requeue task %lld.%d", (long long)t->id, t->task);
	if (store_array_next(store, t->id) > t->task &&
	    store_array_set_next(store, t->id, t->task) < 0)
		fatalx("cannot store the cursor of job %lld", (long long)t->id);
	if ((p = store_job_get(store, t->id, false)) != NULL) {
		if (p->state == JS_RUNNING && !p->delete_req)
			p->state = JS_PENDING;
		if (p->attempt < t->attempt)
			p->attempt = t->attempt;
		if (store_job_update(store, p) < 0)
			fatalx("cannot store job %lld", (long long)p->id);
		job_free(p);
	}
	sched_kick();
}

bool
array_task_unhold(struct job *t)
{
	struct job *row = store_task_get(store, t->id, t->task, false);
	bool own = row && row->state == JS_PENDING;

	job_free(row);
	if (!own)
		return false;
	/* Its row goes: pending among the others again, with the attempt
	 * its array gives it when it starts. */
	qm_txn();
	t->attempt = 0;
	array_task_requeue(t);
	t->hold &= ~(unsigned)HOLD_USER;
	return true;
}

void
array_unhold_all(struct job *p)
{
	struct task_list l = { 0 };

	if (store_tasks_foreach(store, p->id, 1u << JS_PENDING, task_list_keep, &l) < 0)
		fatalx("cannot read the tasks of job %lld", (long long)p->id);
	for (size_t i = 0; i < l.n; i++)
		array_task_unhold(l.v[i]);
	task_list_free(&l);
}

/* Running tasks, read before any is changed: a whole array's suspension. */
#define TASKS_RUNNING (1u << JS_RUNNING)

void
array_task_op(struct conn *c, struct job *p, const struct task_range *only, job_op op,
    json_t *results)
{
	struct task_range r = array_range(p);
	struct task_list l = { 0 };
	char buf[256], what[64];
	bool ok, any = false;

	qm_txn();
	if (!only) {
		if (store_tasks_foreach(store, p->id, TASKS_RUNNING, task_list_keep, &l) < 0)
			fatalx("cannot read the tasks of job %lld", (long long)p->id);
	} else
		for (int64_t t = only->first; t <= only->last; t += only->step) {
			struct job *v = task_in_range(&r, (int)t) ? array_task_view(p, (int)t) : NULL;
			if (v)
				task_list_add(&l, v);
		}
	for (size_t i = 0; i < l.n; i++) {
		const char *m = op(c, l.v[i], buf, sizeof buf, &ok);
		any = true;
		if (m || !ok)
			msg_result_add(results, &(struct msg_result){ .id = p->id, .ok = ok, .message = m });
	}
	task_list_free(&l);
	if (any)
		return;
	if (!only) {
		snprintf(buf, sizeof buf, "job %lld is not running", (long long)p->id);
		msg_result_add(results, &(struct msg_result){ .id = p->id, .ok = false, .message = buf });
		return;
	}
	if (only->first == only->last)
		snprintf(what, sizeof what, "%lld.%d", (long long)p->id, only->first);
	else
		snprintf(what, sizeof what, "%lld.%d-%d:%d", (long long)p->id, only->first, only->last,
		    only->step);
	snprintf(buf, sizeof buf, "denied: job-array task \"%s\" does not exist", what);
	msg_result_add(results, &(struct msg_result){ .id = p->id, .ok = false, .message = buf });
}

/* A task that ran on a host that is lost (listed NULL) or whose execd no
 * longer has it: as a single job, queued again when it is rerunnable and
 * its host is lost, else failed; either way its attempt is accounted. */
static void
array_task_lost(struct job *t, const char *host, bool host_lost)
{
	bool again = host_lost && !t->delete_req && job_rerunnable(t);

	log_warnx("task %lld.%d was on %s, which %s", (long long)t->id, t->task, host,
	    host_lost ? (again ? "is lost; queued again" : "is lost") : "no longer has it");
	t->state = t->delete_req ? JS_DELETED : again ? JS_PENDING : JS_FAILED;
	t->end_time = now_ms();
	t->exit_status = -1;
	free(t->reason);
	t->reason = host_lost ? xasprintf("host lost: %.200s", host) :
	    xasprintf("lost: execd on %s no longer knows the job", host);
	if (t->start_time > 0)
		acct_record(t, ACCT_FAILED_AFTER, NULL);
	if (again) {
		array_task_requeue(t);
		return;
	}
	if (store_job_update(store, t) < 0)
		fatalx("cannot store task %lld.%d", (long long)t->id, t->task);
	array_task_ended(t);
}

void
array_reconcile(const char *host, const struct msg_attempts *listed)
{
	struct task_list l = { 0 };

	if (store_tasks_active(store, host, task_list_keep, &l) < 0)
		fatalx("cannot read the tasks of host %s", host);
	for (size_t i = 0; i < l.n; i++) {
		struct job *t = l.v[i];

		if (msg_attempts_has(listed, t)) {
			/* A qdel made while the host was away: deliver it now. */
			if (t->delete_req)
				exechost_signal_job(t, 9);
			continue;
		}
		qm_txn();
		if (t->state == JS_DISPATCHED && !t->delete_req) {
			/* Never started (the execd writes its spool first). */
			log_info("task %lld.%d never reached %s; queued again", (long long)t->id, t->task, host);
			array_task_requeue(t);
			continue;
		}
		array_task_lost(t, host, listed == NULL);
	}
	task_list_free(&l);
}

bool
array_why(const struct job *j, char *buf, size_t n)
{
	struct store_task_counts c;
	struct array_sched *a;
	int64_t gate = 0;
	int theirs = 0;

	if (!j->t_first || j->state != JS_PENDING)
		return false;
	if (j->tc > 0 && store_task_counts(store, j->id, &c) == 0 && c.active >= j->tc) {
		snprintf(buf, n, "%lld of its tasks run, as many as -tc %d allows", (long long)c.active, j->tc);
		return true;
	}
	a = array_sched_open((struct job *)j);   /* only read: nothing is dispatched */
	if (a->gates && a->next && a->cand == 0)
		gate = deps_task_gate(a->gates, a->next, &theirs);
	if (gate)
		snprintf(buf, n, "task %d waits for task %d of job %lld (-hold_jid_ad)", a->next, theirs,
		    (long long)gate);
	array_sched_close(a);
	return gate != 0;
}
