/* deps.c: job dependencies (-hold_jid, -W depend) and start times (qsub -a).
 *
 * Which jobs wait, and releasing or failing them when what they wait for
 * happens; -hold_jid_ad too. */
#include "config.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg_req.h"
#include "common/msg_rows.h"
#include "qmaster/qmaster.h"
#include "spool/spool.h"

/* Kinds as stored in the deps table; never renumber.  DEP_ARRAY
 * (-hold_jid_ad) ties each task to the same task of another array: it does
 * not hold the job, it gates its tasks (array.c asks deps_task_ready). */
enum dep_kind { DEP_AFTER = 1, DEP_AFTEROK = 2, DEP_AFTERNOTOK = 3, DEP_AFTERANY = 4,
	DEP_ARRAY = STORE_DEP_ARRAY };
static const char *const kind_names[] = {
	[DEP_AFTER] = "after", [DEP_AFTEROK] = "afterok",
	[DEP_AFTERNOTOK] = "afternotok", [DEP_AFTERANY] = "afterany", [DEP_ARRAY] = "array",
};
#define DEP_KIND_MAX DEP_ARRAY

static int
kind_parse(const char *s)
{
	for (int k = 1; k <= DEP_KIND_MAX; k++)
		if (strcmp(s, kind_names[k]) == 0)
			return k;
	return 0;
}

/*
 * What a dependency of this kind makes of a job in state st: 1 met, 0 not
 * yet, -1 never.  "after" means started, as in Slurm; a job that ended
 * without starting (deleted while pending) will not start any more, so
 * that counts as met too, as Slurm counts a cancelled job.
 */
static int
verdict(enum job_state st, int kind)
{
	switch (st) {
	case JS_PENDING:
	case JS_DISPATCHED:
		return 0;
	case JS_RUNNING:
		return kind == DEP_AFTER ? 1 : 0;
	case JS_DONE:
		return kind == DEP_AFTERNOTOK ? -1 : 1;
	case JS_FAILED:
	case JS_DELETED:
		/* An array's tasks ended, whatever each one's status (as
		 * -hold_jid waits for any end). */
		return kind == DEP_AFTEROK ? -1 : 1;
	}
	return 0;
}

struct dep_ref {
	int64_t        id;
	int            kind;
	enum job_state state;    /* the job's state now */
};

struct deps {
	struct dep_ref *v;
	size_t          n;
};

static void
refs_add(struct deps *d, int64_t id, int kind, enum job_state st)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].id == id && d->v[i].kind == kind)
			return;
	d->v = xrealloc(d->v, (d->n + 1) * sizeof *d->v);
	d->v[d->n++] = (struct dep_ref){ id, kind, st };
}

struct name_ctx {
	const char  *pattern;
	struct deps *d;
	int          kind;
	int64_t      self;
	int          found;
};

static int
name_match(void *arg, const struct job_brief *j)
{
	struct name_ctx *nc = arg;

	if (j->name && fnmatch(nc->pattern, j->name, 0) == 0) {
		refs_add(nc->d, j->id, nc->kind, j->state);
		nc->found++;
	}
	return 0;
}

static bool
all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* One id, name or pattern; -1 with err when it names nothing. */
static int
resolve_one(struct deps *d, const char *what, int kind, const char *owner, char *err, size_t errlen)
{
	if (all_digits(what)) {
		int64_t id = strtoll(what, NULL, 10);
		struct job *j = id > 0 ? store_job_get(store, id, false) : NULL;
		enum job_state st;

		if (j) {
			refs_add(d, id, kind, j->state);
			job_free(j);
			return 0;
		}
		/* Purged, but its end is on record. */
		if (id > 0 && store_acct_last_state(store, id, &st) == 0) {
			refs_add(d, id, kind, st);
			return 0;
		}
		snprintf(err, errlen, "job %s does not exist, so nothing can depend on it", what);
		return -1;
	}
	/* Names and patterns match the owner's own jobs, as in Grid Engine. */
	struct store_job_filter f = { .owner = owner };
	struct name_ctx nc = { what, d, kind, 0, 0 };
	if (store_briefs_foreach(store, &f, name_match, &nc) < 0)
		fatalx("cannot read the job list");
	if (nc.found == 0) {
		snprintf(err, errlen, "no job of %s is named \"%s\", so nothing can depend on it", owner, what);
		return -1;
	}
	return 0;
}

/* -hold_jid_ad pairs tasks by position: both jobs are arrays with as many
 * tasks.  A job already purged ended long ago and gates nothing. */
static int
check_array(const struct job *j, const struct dep_ref *r, char *err, size_t errlen)
{
	struct task_range mine = { j->t_first, j->t_last, j->t_step };
	struct job *p;
	int rc = 0;

	if (!j->t_first) {
		snprintf(err, errlen, "-hold_jid_ad needs an array job (-t)");
		return -1;
	}
	if ((p = store_job_get(store, r->id, false)) == NULL)
		return 0;
	if (!p->t_first) {
		snprintf(err, errlen, "-hold_jid_ad: job %lld is not an array job", (long long)r->id);
		rc = -1;
	} else {
		struct task_range theirs = { p->t_first, p->t_last, p->t_step };
		if (task_range_count(&theirs) != task_range_count(&mine)) {
			snprintf(err, errlen, "-hold_jid_ad: job %lld has %lld tasks and this job %lld; "
			    "task i waits for task i, so they must have as many", (long long)r->id,
			    (long long)task_range_count(&theirs), (long long)task_range_count(&mine));
			rc = -1;
		}
	}
	job_free(p);
	return rc;
}

struct deps *
deps_resolve(const json_t *list, const struct job *j, char *err, size_t errlen)
{
	struct deps *d = xcalloc(1, sizeof *d);
	const char *owner = j->owner;
	json_t *e;
	size_t i;

	if (!list || json_is_null(list))
		return d;
	if (!json_is_array(list)) {
		snprintf(err, errlen, "deps must be a list of {kind, job}");
		goto bad;
	}
	if (job_deps_problem(json_array_size(list))) {
		snprintf(err, errlen, "%s", job_deps_problem(json_array_size(list)));
		goto bad;
	}
	json_array_foreach(list, i, e) {
		struct msg_dep dep;
		const char *what;
		int kind;

		msg_dep_unpack(e, &dep);
		what = dep.job;
		kind = dep.kind ? kind_parse(dep.kind) : 0;
		if (!kind || !what || !*what || strlen(what) > 255) {
			snprintf(err, errlen, "a dependency needs a kind (after, afterok, afternotok, "
			    "afterany, array) and a job id or name");
			goto bad;
		}
		if (resolve_one(d, what, kind, owner, err, errlen) < 0)
			goto bad;
		/* A pattern may name many jobs. */
		if (job_deps_problem(d->n)) {
			snprintf(err, errlen, "%s", job_deps_problem(d->n));
			goto bad;
		}
	}
	for (i = 0; i < d->n; i++)
		if (d->v[i].kind == DEP_ARRAY && check_array(j, &d->v[i], err, errlen) < 0)
			goto bad;
	return d;
bad:
	deps_free(d);
	return NULL;
}

void
deps_free(struct deps *d)
{
	if (!d)
		return;
	free(d->v);
	free(d);
}

static void
fail_never(struct job *j, int64_t dep, enum job_state st)
{
	free(j->reason);
	j->reason = xasprintf("dependency never satisfied: %lld %s", (long long)dep,
	    st == JS_DONE ? "succeeded" : job_state_name(st));
	j->state = JS_FAILED;
	j->hold &= ~(HOLD_DEP | HOLD_TIME);
	j->end_time = now_ms();
}

int
deps_submit(struct job *j, const struct deps *d)
{
	int waits = 0;

	if (j->begin_time > now_ms())
		j->hold |= HOLD_TIME;
	for (size_t i = 0; i < d->n; i++) {
		int v = verdict(d->v[i].state, d->v[i].kind);
		if (d->v[i].kind == DEP_ARRAY)
			continue;   /* gates tasks, not the job */
		if (v < 0) {
			fail_never(j, d->v[i].id, d->v[i].state);
			return 0;
		}
		waits += v == 0;
	}
	if (waits)
		j->hold |= HOLD_DEP;
	return waits;
}

void
deps_store(const struct job *j, const struct deps *d)
{
	if (JS_FINISHED(j->state))
		return;
	for (size_t i = 0; i < d->n; i++)
		if ((j->hold & HOLD_DEP || d->v[i].kind == DEP_ARRAY) &&
		    verdict(d->v[i].state, d->v[i].kind) == 0 &&
		    store_dep_add(store, j->id, d->v[i].id, d->v[i].kind) < 0)
			fatalx("cannot store a dependency of job %lld", (long long)j->id);
}

/*
 * Ends ripple down chains (a failed job fails its afterok dependents, whose
 * dependents fail in turn): a work list, not recursion, so a chain of ten
 * thousand jobs costs no stack.
 */
struct ended {
	int64_t        id;
	enum job_state state;
	bool           started;   /* only "after" is met */
};
static struct ended *worklist;
static size_t        nwork, capwork;
static bool          working;

static void
work_push(int64_t id, enum job_state st, bool started)
{
	if (nwork == capwork) {
		capwork = capwork ? capwork * 2 : 64;
		worklist = xrealloc(worklist, capwork * sizeof *worklist);
	}
	worklist[nwork++] = (struct ended){ id, st, started };
}

static int
forget_dep(void *arg, int64_t dep, int kind)
{
	int64_t *job = arg;
	if (store_dep_remove(store, *job, dep, kind) < 0)
		fatalx("cannot remove a dependency");
	return 0;
}

static int
dependent_cb(void *arg, int64_t id, int kind)
{
	const struct ended *e = arg;
	struct job *j;
	int v = e->started ? (kind == DEP_AFTER) : verdict(e->state, kind);

	if (v == 0)
		return 0;
	if (store_dep_remove(store, id, e->id, kind) < 0)
		fatalx("cannot remove a dependency");
	if (kind == DEP_ARRAY) {
		/* Every task it gated may start now. */
		sched_kick();
		return 0;
	}
	if ((j = store_job_get(store, id, false)) == NULL)
		return 0;
	if (j->state != JS_PENDING) {
		job_free(j);
		return 0;
	}
	if (v < 0) {
		fail_never(j, e->id, e->state);
		store_deps_of(store, id, forget_dep, &id);
		log_info("job %lld failed: %s", (long long)id, j->reason);
		/* It never ran, but it did not end by anybody's hand: qacct
		 * shows why, as "assumedly before job". */
		acct_record(j, ACCT_FAILED_BEFORE, NULL);
	} else if (store_deps_count(store, id) == 0) {
		j->hold &= ~HOLD_DEP;
		if (!j->hold)
			sched_kick();
	}
	if (store_job_update(store, j) < 0)
		fatalx("cannot store job %lld", (long long)id);
	if (JS_FINISHED(j->state))
		request_job_finished(j);   /* pushes it onto the work list */
	job_free(j);
	return 0;
}

static void
work_run(void)
{
	if (working)
		return;
	working = true;
	qm_txn();
	while (nwork > 0) {
		struct ended e = worklist[--nwork];
		if (store_dependents(store, e.id, dependent_cb, &e) < 0)
			fatalx("cannot read dependencies");
	}
	working = false;
}

void
deps_job_started(const struct job *j)
{
	work_push(j->id, j->state, true);
	work_run();
}

void
deps_job_ended(const struct job *j)
{
	int64_t id = j->id;

	qm_txn();
	/* What the job itself still waited for no longer matters. */
	if ((j->hold & HOLD_DEP || j->t_first) && store_deps_of(store, id, forget_dep, &id) < 0)
		fatalx("cannot read dependencies");
	work_push(j->id, j->state, false);
	work_run();
}

static int
begin_due(void *arg, int64_t id, int kind)
{
	struct job *j = store_job_get(store, id, false);

	(void)arg;
	(void)kind;
	if (!j)
		return 0;
	j->hold &= ~HOLD_TIME;
	if (store_job_update(store, j) < 0)
		fatalx("cannot store job %lld", (long long)id);
	if (!j->hold)
		sched_kick();
	job_free(j);
	return 0;
}

void
deps_tick(int64_t now)
{
	if (store_jobs_begin_due(store, now, begin_due, NULL) < 0)
		fatalx("cannot read jobs waiting for their start time");
}

static int
waiting_cb(void *arg, int64_t dep, int kind)
{
	msg_job_wait_add(arg, &(struct msg_job_wait){ dep,
	    kind >= 1 && kind <= DEP_KIND_MAX ? kind_names[kind] : "?" });
	return 0;
}

json_t *
deps_waiting_json(int64_t id)
{
	json_t *a = json_array();
	if (store_deps_of(store, id, waiting_cb, a) < 0)
		fatalx("cannot read dependencies");
	return a;
}

json_t *
deps_successors_json(int64_t id)
{
	json_t *a = json_array();
	if (store_dependents(store, id, waiting_cb, a) < 0)
		fatalx("cannot read dependencies");
	return a;
}

/* -hold_jid_ad: the arrays a job's tasks wait for, task by task. */
struct array_gate {
	int64_t           id;
	struct task_range range;
	int64_t           cursor;    /* its tasks from here on have not started */
};

struct deps_gates {
	struct task_range mine;
	struct array_gate *v;
	size_t            n;
};

static int
gate_add(void *arg, int64_t dep, int kind)
{
	struct deps_gates *g = arg;
	struct job *p;

	if (kind != DEP_ARRAY || (p = store_job_get(store, dep, false)) == NULL)
		return 0;
	if (!JS_FINISHED(p->state)) {
		int64_t cur = store_array_next(store, p->id);
		if (cur < 0)
			fatalx("cannot read the cursor of job %lld", (long long)p->id);
		g->v = xrealloc(g->v, (g->n + 1) * sizeof *g->v);
		g->v[g->n++] = (struct array_gate){ p->id, { p->t_first, p->t_last, p->t_step }, cur };
	}
	job_free(p);
	return 0;
}

struct deps_gates *
deps_gates_open(const struct job *j)
{
	struct deps_gates *g;

	if (!j->t_first)
		return NULL;
	g = xcalloc(1, sizeof *g);
	g->mine = (struct task_range){ j->t_first, j->t_last, j->t_step };
	if (store_deps_of(store, j->id, gate_add, g) < 0)
		fatalx("cannot read dependencies");
	if (g->n == 0) {
		deps_gates_close(g);
		return NULL;
	}
	return g;
}

void
deps_gates_close(struct deps_gates *g)
{
	if (!g)
		return;
	free(g->v);
	free(g);
}

/* The first array whose task at task's position has not ended (that task
 * in *theirs, and *unstarted if the array has not started it yet); 0 when
 * every one has. */
static int64_t
gate_open(const struct deps_gates *g, int task, int *theirs, bool *unstarted)
{
	int64_t pos = ((int64_t)task - g->mine.first) / g->mine.step;

	for (size_t i = 0; i < g->n; i++) {
		const struct array_gate *a = &g->v[i];
		int64_t t = a->range.first + pos * a->range.step;
		struct job *row = t < a->cursor ? store_task_get(store, a->id, (int)t, false) : NULL;
		bool ended = row && JS_FINISHED(row->state);

		job_free(row);
		if (!ended) {
			*theirs = (int)t;
			*unstarted = t >= a->cursor;
			return a->id;
		}
	}
	return 0;
}

/* 1: the task may start; 0: not yet; -1: not yet, and no later task can
 * be ready either (an array it waits for has not started the task at this
 * position, and arrays start their tasks in order). */
int
deps_task_ready(const struct deps_gates *g, int task)
{
	bool unstarted = false;
	int theirs;

	if (gate_open(g, task, &theirs, &unstarted) == 0)
		return 1;
	return unstarted ? -1 : 0;
}

int64_t
deps_task_gate(const struct deps_gates *g, int task, int *their_task)
{
	bool unstarted;

	return gate_open(g, task, their_task, &unstarted);
}
