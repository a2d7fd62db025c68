/* sched.c: matches runnable jobs to the execds holding a PULL open, and says why one waits.
 *
 * Order: queue priority, job priority, submission order; least loaded host
 * first.  It enforces the queues' limits. */
#include "config.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg.h"
#include "qmaster/qmaster.h"
#include "spool/spool.h"

/* Set when a job may have become runnable or a host started pulling; the
 * scheduler runs once per loop turn, from the commit step, not per event. */
static bool want;

/* A pass reads at most this many runnable jobs: a window of the best ones,
 * widened only while hosts stay unserved, so a pass costs what it serves
 * and not what is queued. */
#define SCHED_WINDOW_MAX 4096

void
sched_kick(void)
{
	want = true;
	qm_wake();
}

bool
sched_wanted(void)
{
	return want && pullq_any();
}

/* Jobs running now, per queue and per queue and owner, for the limits; and
 * per host (in struct exechost) for exclusive requests. */
struct usage_user {
	int   q;
	char *owner;
	int   n;
};
struct usage {
	int               *qrun;
	struct usage_user *u;
	size_t             nu, cap;
};

/* Hosts' job counts are of the last usage walk only: a host the walk did
 * not count (another generation) runs nothing, and no walk over every
 * host resets them. */
static unsigned usage_gen;

static void
host_count(struct exechost *h, bool exclusive)
{
	if (h->sched_gen != usage_gen) {
		h->sched_gen = usage_gen;
		h->sched_njobs = 0;
		h->sched_excl = false;
	}
	h->sched_njobs++;
	if (exclusive)
		h->sched_excl = true;
}

static int
queue_index(const char *name)
{
	const struct qm_queue *q = name ? conf_queue(conf, name) : NULL;
	return q ? (int)(q - conf->queues) : -1;
}

static struct usage_user *
usage_user(struct usage *us, int q, const char *owner, bool add)
{
	for (size_t i = 0; i < us->nu; i++)
		if (us->u[i].q == q && strcmp(us->u[i].owner, owner) == 0)
			return &us->u[i];
	if (!add)
		return NULL;
	if (us->nu == us->cap) {
		us->cap = us->cap ? us->cap * 2 : 16;
		us->u = xrealloc(us->u, us->cap * sizeof *us->u);
	}
	us->u[us->nu] = (struct usage_user){ q, xstrdup(owner), 0 };
	return &us->u[us->nu++];
}

static void
usage_count(struct usage *us, const struct job *j, struct exechost *h)
{
	int q = queue_index(j->queue);

	if (q >= 0) {
		us->qrun[q]++;
		if (j->owner)
			usage_user(us, q, j->owner, true)->n++;
	}
	if (h)
		host_count(h, j->req.exclusive);
}

static void usage_parallel(struct usage *us, const struct job *j);

static int
usage_one(void *arg, struct job *j)
{
	if (JOB_PARALLEL(j)) {
		usage_parallel(arg, j);
		return 0;
	}
	usage_count(arg, j, j->host ? exechost_find(j->host) : NULL);
	return 0;
}

/* A parallel job counts once for its queue, on each of its hosts, and
 * its slots for its PE's limit. */
static void
usage_parallel(struct usage *us, const struct job *j)
{
	const struct qm_pe *pe = j->pe ? conf_pe(conf, j->pe) : NULL;
	char **hosts = pe_host_list(j);
	struct exechost *h;

	usage_count(us, j, NULL);
	for (char **p = hosts; p && *p; p++)
		if ((h = exechost_find(*p)) != NULL)
			host_count(h, j->req.exclusive);
	strv_free(hosts);
	if (pe)
		((struct qm_pe *)pe)->sched_used += j->slots;
}

static void
usage_load(struct usage *us)
{
	struct store_job_filter f = { .states = 1u << JS_DISPATCHED | 1u << JS_RUNNING,
		.usage = true };

	memset(us, 0, sizeof *us);
	us->qrun = xcalloc((size_t)conf->nqueues + 1, sizeof *us->qrun);
	for (int i = 0; i < conf->npes; i++)
		conf->pes[i].sched_used = 0;
	if (++usage_gen == 0)
		usage_gen = 1;
	if (store_jobs_foreach(store, &f, usage_one, us) < 0 ||
	    array_tasks_active(NULL, usage_one, us) < 0)
		fatalx("cannot read running jobs");
}

static void
usage_free(struct usage *us)
{
	for (size_t i = 0; i < us->nu; i++)
		free(us->u[i].owner);
	free(us->u);
	free(us->qrun);
}

/* NULL when the queue's running limits let j start, else why not. */
static const char *
usage_blocks(const struct usage *us, const struct qm_queue *q, const struct job *j, char *buf, size_t n)
{
	int qi = (int)(q - conf->queues);
	struct usage_user *uu;

	if (q->max_running && us->qrun[qi] >= q->max_running) {
		snprintf(buf, n, "queue %s is full (max_running %d)", q->name, q->max_running);
		return buf;
	}
	if (j->pe) {
		const struct qm_pe *pe = conf_pe(conf, j->pe);
		if (pe && pe->slots && pe->sched_used + j->slots > pe->slots) {
			snprintf(buf, n, "parallel environment %s has %d of its %d slots in use",
			    pe->name, pe->sched_used, pe->slots);
			return buf;
		}
	}
	if (q->max_running_per_user && j->owner &&
	    (uu = usage_user((struct usage *)us, qi, j->owner, false)) != NULL &&
	    uu->n >= q->max_running_per_user) {
		snprintf(buf, n, "user limit max_running_per_user %d reached in queue %s",
		    q->max_running_per_user, q->name);
		return buf;
	}
	return NULL;
}

static void
host_view(const struct exechost *h, struct match_host *m)
{
	bool counted = h->sched_gen == usage_gen;

	*m = (struct match_host){ .name = h->name, .attrs = &h->attrs, .slots = h->slots,
	    .free = h->pulling ? h->pull_free : 0, .uid = h->uid, .disabled = h->disabled,
	    .qdisabled = h->qdisabled,
	    .lost = h->lost || !h->conn,
	    .has_jobs = (counted && h->sched_njobs > 0) || (h->pulling && h->pull_free < h->slots),
	    .has_exclusive = counted && h->sched_excl, .users = h->users, .resv = h->resv, .nresv = h->nresv,
	    .now = now_ms(), .names = hostlist_name_now, .names_arg = (void *)h };
}

/* One runnable job of the pass's window. */
struct cand {
	struct job            *j;
	const struct qm_queue *q;
	struct nodeset        *hosts;   /* its hosts=, parsed */
	struct nodeset        *soft_hosts; /* its -soft hostname=, parsed; NULL: none or bad */
	bool                   done;    /* dispatched, or unusable this pass */
	struct array_sched    *arr;     /* an array's tasks, once looked at */
};

struct window {
	struct cand *c;
	int          n, cap;  /* cap: the most it reads */
	int          size;    /* of c: grown as jobs come, since a window of
	                       * 4,096 allocated whole for the few jobs of a
	                       * pass cost more than the pass */
};

/* The store lends each job for the callback only; the window keeps it by
 * taking the members over and leaving an empty shell to be freed. */
static int
window_take(void *arg, struct job *j)
{
	struct window *w = arg;
	struct cand *c;
	char err[128];

	if (w->n == w->cap)
		return 1;
	if (w->n == w->size) {
		w->size = w->size ? 2 * w->size : 16;
		w->c = xrealloc(w->c, (size_t)w->size * sizeof *w->c);
	}
	c = &w->c[w->n++];
	memset(c, 0, sizeof *c);
	c->j = xmalloc(sizeof *c->j);
	*c->j = *j;
	memset(j, 0, sizeof *j);
	c->q = c->j->queue ? conf_queue(conf, c->j->queue) : NULL;
	c->hosts = c->j->req.hosts ? nodeset_parse(c->j->req.hosts, err, sizeof err) : NULL;
	/* A preference that does not parse is met nowhere, and keeps no job. */
	c->soft_hosts = c->j->soft.hosts ? nodeset_parse(c->j->soft.hosts, err, sizeof err) : NULL;
	/* A queue dropped by a reload, or an expression that no longer parses:
	 * the job waits, and qstat -j says why. */
	c->done = !c->q || (c->j->req.hosts && !c->hosts);
	return 0;
}

static int
cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	return match_job_cmp(x->j, x->q ? x->q->priority : 0, y->j, y->q ? y->q->priority : 0);
}

static void
window_free(struct window *w)
{
	for (int i = 0; i < w->n; i++) {
		array_sched_close(w->c[i].arr);
		job_free(w->c[i].j);
		nodeset_free(w->c[i].hosts);
		nodeset_free(w->c[i].soft_hosts);
	}
	free(w->c);
}

/* A pulling host a pass has taken off pullq's heap (h->sched_sv). */
struct served {
	struct exechost *h;
	json_t          *jobs;    /* what it is sent, once it is sent something */
	int              resv;    /* held for the parallel job at this window index, or -1 */
};

static void
sched_dispatch(struct served *s, struct job *j, struct usage *us)
{
	qm_txn();
	j->attempt++;
	j->state = JS_DISPATCHED;
	free(j->host);
	j->host = xstrdup(s->h->name);
	j->start_time = 0;
	j->pid = 0;
	if (store_job_run(store, j) < 0)
		fatalx("cannot store the dispatch of job %lld", (long long)j->id);
	http_observe_dispatch(j);
	if (!s->jobs)
		s->jobs = json_array();
	json_array_append_new(s->jobs, job_to_json(j));
	s->h->pull_free -= j->slots > 0 ? j->slots : 1;
	usage_count(us, j, s->h);
}

/* Can host m run a part of j (one slot of it, or at once with now)? */
static bool
part_fits(struct job *j, const struct cand *c, const struct match_host *m, bool now)
{
	int slots = j->slots;
	const char *key = NULL;
	enum match_why w;

	j->slots = 1;
	w = match_host(j, c ? c->hosts : NULL, c ? c->q : NULL, m, now, &key);
	j->slots = slots;
	return w == MW_OK;
}

/* Could the hosts connected now ever hold j at once (their whole slots)? */
static bool
parallel_feasible(struct cand *c)
{
	struct exechost *h;
	int n = 0, i = 0, *tot, *out;
	bool ok;

	for (h = exechost_next(NULL); h; h = exechost_next(h))
		n++;
	tot = xcalloc((size_t)n + 1, sizeof *tot);
	out = xcalloc((size_t)n + 1, sizeof *out);
	for (h = exechost_next(NULL); h; h = exechost_next(h), i++) {
		struct match_host m;
		host_view(h, &m);
		tot[i] = h->conn && !h->lost && !h->disabled && part_fits(c->j, c, &m, false) ? h->slots : 0;
	}
	ok = pe_alloc(pe_job_rule(c->j), PE_JOB_MIN(c->j), tot, n, out) > 0;
	free(tot);
	free(out);
	return ok;
}

static void
sched_dispatch_parts(struct served **sv, int nsv, const int *out, struct job *j, struct usage *us)
{
	char **names = xcalloc((size_t)nsv + 1, sizeof *names), *list = NULL, *t;
	int *slots = xcalloc((size_t)nsv + 1, sizeof *slots), np = 0, i;
	json_t *ph = json_array();

	for (i = 0; i < nsv; i++) {
		if (!out[i])
			continue;
		names[np] = sv[i]->h->name;
		slots[np++] = out[i];
		t = list;
		list = t ? xasprintf("%s %s", t, sv[i]->h->name) : xstrdup(sv[i]->h->name);
		free(t);
		msg_pe_host_add(ph, &(struct msg_pe_host){ sv[i]->h->name, out[i] });
	}
	qm_txn();
	j->attempt++;
	j->state = JS_DISPATCHED;
	free(j->host);
	j->host = list;
	j->start_time = 0;
	j->pid = 0;
	if (store_job_update(store, j) < 0)
		fatalx("cannot store the dispatch of job %lld", (long long)j->id);
	http_observe_dispatch(j);
	pe_parts_store(j, names, slots, np);
	np = 0;
	for (i = 0; i < nsv; i++) {
		json_t *o;
		if (!out[i])
			continue;
		o = msg_dispatch_part_pack(j, &(struct msg_dispatch_part){ np++, ph, 0 });
		if (!sv[i]->jobs)
			sv[i]->jobs = json_array();
		json_array_append_new(sv[i]->jobs, o);
		sv[i]->h->pull_free -= out[i];
	}
	usage_parallel(us, j);
	log_info("parallel job %lld dispatched to %s", (long long)j->id, j->host);
	json_decref(ph);
	free(names);
	free(slots);
}

/*
 * Parallel jobs, in dispatch order, before the serial pass: one starts when
 * the pulling hosts can hold all its slots at once under its PE's rule.
 * The first one that cannot start yet, but that the connected hosts could
 * hold, reserves the pulling hosts that could run its parts: they keep
 * their PULL open and take only jobs ahead of it in the order, until
 * enough hosts pull at once.  A job the cluster cannot hold reserves
 * nothing, and hosts it cannot use serve serial jobs meanwhile.
 */
static void
sched_parallel(struct served **sv, int nsv, struct cand *cands, int ncand, struct usage *us)
{
	int *free_ = xcalloc((size_t)nsv + 1, sizeof *free_), *out = xcalloc((size_t)nsv + 1, sizeof *out);
	bool reserved = false;
	char why[160];
	int granted;

	for (int k = 0; k < ncand; k++) {
		struct cand *c = &cands[k];
		struct match_host m;

		if (c->done || !JOB_PARALLEL(c->j))
			continue;
		c->done = true;
		if (usage_blocks(us, c->q, c->j, why, sizeof why))
			continue;
		for (int i = 0; i < nsv; i++) {
			host_view(sv[i]->h, &m);
			free_[i] = sv[i]->resv < 0 && part_fits(c->j, c, &m, true) ? sv[i]->h->pull_free : 0;
		}
		if ((granted = pe_grant(pe_job_rule(c->j), PE_JOB_MIN(c->j), c->j->slots, free_, nsv, out)) > 0) {
			/* Of a range, as many as start now: NSLOTS says how many. */
			c->j->slots = granted;
			sched_dispatch_parts(sv, nsv, out, c->j, us);
			continue;
		}
		if (reserved || !parallel_feasible(c))
			continue;
		reserved = true;
		for (int i = 0; i < nsv; i++)
			if (free_[i] > 0)
				sv[i]->resv = k;
	}
	free(free_);
	free(out);
}

/* An array's pending tasks, in task order, while the host has room, still
 * matches (an exclusive task takes the whole host) and the queue's limits
 * and -tc allow. */
static void
sched_tasks(struct served *s, struct cand *c, struct usage *us)
{
	struct match_host m;
	const char *key;
	struct job *t;
	char why[160];

	if (!c->arr)
		c->arr = array_sched_open(c->j);
	while (s->h->pull_free > 0 && !usage_blocks(us, c->q, c->j, why, sizeof why)) {
		host_view(s->h, &m);
		key = NULL;
		if (match_host(c->j, c->hosts, c->q, &m, true, &key) != MW_OK ||
		    (t = array_sched_next(c->arr)) == NULL)
			break;
		sched_dispatch(s, t, us);
		job_free(t);
	}
	c->done = array_sched_done(c->arr) || usage_blocks(us, c->q, c->j, why, sizeof why);
}

/*
 * The pulling hosts from the least loaded, taken off pullq's heap as the
 * pass needs them: a pass that has one job for ten thousand idle hosts
 * takes the best few, and puts back those it did not serve.  The heap
 * gives them in exactly the order a sort would (ties go by the PULL's
 * arrival).  A host keeps its record (h->sched_sv) for the whole pass,
 * across the windows; pass.rec lists them.
 */
struct host_order {
	struct served **out;     /* taken, in order */
	int             nout, cap;
	int             n;       /* hosts in the order */
};

static struct {
	struct served **rec;
	int             n, cap;
} pass;

static void
order_init(struct host_order *o)
{
	*o = (struct host_order){ NULL, 0, 0, pullq_count() };
	for (int i = 0; i < pass.n; i++)
		pass.rec[i]->resv = -1;
}

/* The i-th host in order (i < n), taking hosts off the heap as needed. */
static struct served *
order_at(struct host_order *o, int i)
{
	assert(i < o->n);
	while (o->nout <= i) {
		struct exechost *h = pullq_take();
		assert(h);
		if (!h->sched_sv) {
			h->sched_sv = xcalloc(1, sizeof *h->sched_sv);
			*h->sched_sv = (struct served){ h, NULL, -1 };
			if (pass.n == pass.cap) {
				pass.cap = pass.cap ? pass.cap * 2 : 64;
				pass.rec = xrealloc(pass.rec, (size_t)pass.cap * sizeof *pass.rec);
			}
			pass.rec[pass.n++] = h->sched_sv;
		}
		if (o->nout == o->cap) {
			o->cap = o->cap ? o->cap * 2 : 64;
			o->out = xrealloc(o->out, (size_t)o->cap * sizeof *o->out);
		}
		o->out[o->nout++] = h->sched_sv;
	}
	return o->out[i];
}

/* The hosts taken go back on the heap (still pulling, maybe with fewer
 * free slots), so the next window sees the same order. */
static void
order_free(struct host_order *o)
{
	for (int i = 0; i < o->nout; i++)
		pullq_sync(o->out[i]->h);
	free(o->out);
}

/* The end of a pass: each host given jobs gets them in one DISPATCH, its
 * PULL answered; the others keep their PULL open. */
static void
pass_send(void)
{
	for (int i = 0; i < pass.n; i++) {
		struct served *s = pass.rec[i];
		struct exechost *h = s->h;

		h->sched_sv = NULL;
		if (s->jobs && json_array_size(s->jobs) > 0) {
			pullq_cancel(h);
			net_send(h->conn, msg_dispatch_pack(&(struct msg_dispatch){ h->pull_seq, s->jobs }));
		}
		json_decref(s->jobs);
		free(s);
	}
	pass.n = 0;
}

/* Whether a host after position i in the order (free, not held for a
 * parallel job, able to run c now) meets more of c's -soft requests than s,
 * whose view is m: then c is left for that host's turn. */
static bool
soft_better_later(const struct cand *c, const struct match_host *m, struct host_order *ho, int i)
{
	int mine = match_soft_score(c->j, c->soft_hosts, m);
	int slots = c->j->slots > 0 ? c->j->slots : 1;

	for (int r = i + 1; r < ho->n; r++) {
		struct served *t = order_at(ho, r);
		struct match_host tm;
		const char *key = NULL;

		if (t->h->pull_free < slots || t->resv >= 0)
			continue;
		host_view(t->h, &tm);
		if (match_host(c->j, c->hosts, c->q, &tm, true, &key) == MW_OK &&
		    match_soft_score(c->j, c->soft_hosts, &tm) > mine)
			return true;
	}
	return false;
}

static bool
soft_left(const struct window *w)
{
	for (int k = 0; k < w->n; k++)
		if (!w->c[k].done && !req_empty(&w->c[k].j->soft))
			return true;
	return false;
}

/* Gives host s (at position i of ho) the window's jobs from first on that
 * it can run, in order; prefer: leave a job with -soft requests to a later
 * host that meets more of them. */
static void
sched_serve(struct served *s, struct window *w, int first, struct usage *us, struct host_order *ho,
    bool prefer)
{
	int i = 0;
	char why[160];

	while (prefer && i < ho->nout && ho->out[i] != s)
		i++;
	for (int k = first; k < w->n && s->h->pull_free > 0; k++) {
		struct cand *c = &w->c[k];
		struct match_host m;
		const char *key = NULL;

		if (c->done)
			continue;
		if (s->resv >= 0 && k > s->resv)
			break;
		if (usage_blocks(us, c->q, c->j, why, sizeof why)) {
			/* The same for every host: skip it for the pass. */
			c->done = true;
			continue;
		}
		host_view(s->h, &m);
		if (match_host(c->j, c->hosts, c->q, &m, true, &key) != MW_OK)
			continue;
		if (prefer && !req_empty(&c->j->soft) && soft_better_later(c, &m, ho, i))
			continue;
		if (c->j->t_first) {
			sched_tasks(s, c, us);
			continue;
		}
		sched_dispatch(s, c->j, us);
		c->done = true;
	}
}

/* Hosts leave the pulling list once served, and come back at its tail with
 * their next PULL: a round robin among equally loaded idle hosts. */
void
sched_run(void)
{
	struct host_order ho;
	struct usage us;
	struct window w = { NULL, 0, 0, 0 };
	int nsv, limit;
	bool have_usage = false;

	want = false;
	if ((nsv = pullq_count()) == 0)
		return;
	limit = pullq_free() * 4 + 16;
	for (;;) {
		bool unserved = false, parallel = false;
		int first = 0;

		w = (struct window){ NULL, 0, limit < SCHED_WINDOW_MAX ? limit : SCHED_WINDOW_MAX, 0 };
		if (store_jobs_runnable(store, -1, w.cap, window_take, &w) < 0)
			fatalx("cannot read runnable jobs");
		/* Nothing to run: the hosts keep their PULLs, and nothing else
		 * of the pass would have changed anything. */
		if (w.n == 0)
			break;
		if (!have_usage) {
			usage_load(&us);
			have_usage = true;
		}
		qsort(w.c, (size_t)w.n, sizeof *w.c, cand_cmp);
		order_init(&ho);
		for (int k = 0; k < w.n && !parallel; k++)
			parallel = JOB_PARALLEL(w.c[k].j) && !w.c[k].done;
		if (parallel) {
			/* sched_parallel hands out parts in host order: all of it. */
			order_at(&ho, nsv - 1);
			sched_parallel(ho.out, nsv, w.c, w.n, &us);
		}
		for (int i = 0; i < nsv; i++) {
			struct served *s;

			/* Every job of the window is placed or blocked: the
			 * hosts left are unserved, as their own turns would find. */
			while (first < w.n && w.c[first].done)
				first++;
			if (first == w.n) {
				for (int r = i; r < nsv && !unserved; r++) {
					s = order_at(&ho, r);
					unserved = s->h->pull_free > 0 && s->resv < 0;
				}
				break;
			}
			s = order_at(&ho, i);
			sched_serve(s, &w, first, &us, &ho, true);
			if (s->h->pull_free > 0 && s->resv < 0)
				unserved = true;
		}
		/* A job that waited for a host meeting more of its -soft
		 * requests, which then filled up, takes any host left. */
		for (int i = 0; i < nsv && soft_left(&w); i++)
			if (order_at(&ho, i)->h->pull_free > 0)
				sched_serve(order_at(&ho, i), &w, 0, &us, &ho, false);
		order_free(&ho);
		window_free(&w);
		w.c = NULL;
		if (!unserved || w.n < w.cap || w.cap >= SCHED_WINDOW_MAX)
			break;
		limit = w.cap * 4;
	}
	if (w.c)
		window_free(&w);
	if (have_usage)
		usage_free(&us);
	pass_send();
}

struct queued_ctx {
	const char *queue;
	int64_t     self;
	int         n;
};

static int
queued_one(void *arg, struct job *j)
{
	struct queued_ctx *qc = arg;
	if (j->id != qc->self && j->queue && strcmp(j->queue, qc->queue) == 0)
		qc->n++;
	return 0;
}

static bool
queue_allows(const struct qm_queue *q, const struct job *j, const struct user_cache *u)
{
	if (!q->users[0] && !q->ngids)
		return true;
	for (char **p = q->users; *p; p++)
		if (strcmp(*p, j->owner) == 0)
			return true;
	for (int i = 0; i < q->ngids; i++) {
		if (u && u->gid == q->gids[i])
			return true;
		for (int g = 0; u && g < u->ngroups; g++)
			if (u->groups[g] == q->gids[i])
				return true;
	}
	return false;
}

/* A host as SUBMIT judges it, connected or not: could it ever run the job
 * (its lists, and reservations whether open yet or not).  The master holds
 * every host of the database in memory (loaded at start, added at
 * REGISTER), with the attributes and slots the database has, so SUBMIT
 * reads no table and parses no JSON per host. */
static void
admit_view(struct match_host *m, struct exechost *h)
{
	*m = (struct match_host){ .name = h->name, .attrs = &h->attrs, .slots = h->slots, .uid = h->uid,
	    .users = h->users, .resv = h->resv, .nresv = h->nresv,
	    .now = now_ms(), .names = hostlist_name_ever, .names_arg = h };
}

/* Every known host's key list (the array only), *n of them. */
static char ***
hosts_keys(size_t *n)
{
	char ***v = xcalloc(exechost_count() + 1, sizeof *v);

	*n = 0;
	for (struct exechost *h = exechost_next(NULL); h; h = exechost_next(h))
		v[(*n)++] = h->attrs.keys;
	return v;
}

/* MW_KEY from every host names the first key the last one lacked: ask
 * whether each key is somewhere and only their combination is missing. */
static enum match_why
keys_why(const struct job *j, const char **key)
{
	size_t n;
	char ***v = hosts_keys(&n);
	enum match_why w = match_keys_apart(j, (char **const *)v, n, key);

	free(v);
	return w;
}

/* Grid Engine refuses a -l name outside its complex list ("unknown
 * resource"), -w n or not.  nowq's names beyond that list are keys its
 * exec hosts declare, so a key that no host the master knows (up or down)
 * declares is refused the same way: a typo must not leave a job waiting
 * for ever. */
static const char *
key_unknown(const struct job *j)
{
	size_t n;
	char ***v;
	const char *k;

	/* Most jobs ask for no key: no walk over every host per submission
	 * (with 10,000 hosts the walk cost more than the rest of SUBMIT). */
	if (!(j->req.keys && *j->req.keys) && !(j->soft.keys && *j->soft.keys))
		return NULL;
	v = hosts_keys(&n);
	k = match_key_nowhere(j->req.keys, (char **const *)v, n);

	if (!k)
		k = match_key_nowhere(j->soft.keys, (char **const *)v, n);
	free(v);
	return k;
}

/* -ar NAME: the reservation exists and the job's owner is one of its users. */
static int
ar_admit(const struct job *j, char *err, size_t n)
{
	struct resv *r = resv_find(j->req.ar);

	if (!r) {
		snprintf(err, n, "job rejected: no reservation \"%s\"", j->req.ar);
		return -1;
	}
	if (!match_resv_admits(&r->m, j)) {
		snprintf(err, n, "job rejected: user %s is not a user of reservation %s", j->owner, j->req.ar);
		return -1;
	}
	return 0;
}

int
sched_admit(struct job *j, const struct user_cache *u, bool verify, char *err, size_t n)
{
	const struct qm_queue *q = conf_queue(conf, j->queue);
	struct nodeset *ns = NULL;
	struct exechost *h;
	size_t nk = exechost_count(), i;
	char a[32], b[32], perr[128];
	const char *badkey;
	int rc = -1;
	bool check;

	assert(q);
	if ((badkey = key_unknown(j)) != NULL) {
		snprintf(err, n, "unknown resource \"%s\"", badkey);
		return -1;
	}
	/* -l slots=N is the job's own slot count (qsub sends both); qalter
	 * cannot change a job's slots. */
	if (j->req.slots && (j->pe || j->req.slots != j->slots)) {
		snprintf(err, n, "job rejected: -l slots=%d does not match the job's %d slots%s",
		    j->req.slots, j->slots, j->pe ? " of its parallel environment" : "");
		return -1;
	}
	if (!queue_allows(q, j, u)) {
		snprintf(err, n, "job rejected: user %s may not submit jobs to queue %s", j->owner, q->name);
		return -1;
	}
	/* Decided before the defaults fill the request in: a job that asks for
	 * nothing fits every host of an "@all" queue. */
	check = verify && (!req_empty(&j->req) || !nodeset_is_all(q->hosts_ns) || JOB_PARALLEL(j));
	if (!j->req.h_rt)
		j->req.h_rt = q->default_h_rt;
	if (!j->req.h_vmem)
		j->req.h_vmem = q->default_h_vmem;
	if (q->max_h_rt && j->req.h_rt > q->max_h_rt) {
		match_fmt_time(a, sizeof a, j->req.h_rt);
		match_fmt_time(b, sizeof b, q->max_h_rt);
		snprintf(err, n, "job rejected: h_rt %s is above the maximum %s of queue %s", a, b, q->name);
		return -1;
	}
	if (q->max_h_vmem && j->req.h_vmem > q->max_h_vmem) {
		match_fmt_size(a, sizeof a, j->req.h_vmem);
		match_fmt_size(b, sizeof b, q->max_h_vmem);
		snprintf(err, n, "job rejected: h_vmem %s is above the maximum %s of queue %s", a, b, q->name);
		return -1;
	}
	if (q->max_queued) {
		struct store_job_filter f = { .states = 1u << JS_PENDING };
		struct queued_ctx qc = { q->name, j->id, 0 };
		if (store_jobs_foreach(store, &f, queued_one, &qc) < 0)
			fatalx("cannot count queued jobs");
		if (qc.n >= q->max_queued) {
			snprintf(err, n, "job rejected: queue %s already holds %d pending jobs (max_queued %d)",
			    q->name, qc.n, q->max_queued);
			return -1;
		}
	}
	if (j->req.ar && ar_admit(j, err, n) < 0)
		return -1;
	if (!j->req.hosts && !check)
		return 0;

	if (j->req.hosts) {
		const char *unk;
		if ((ns = nodeset_parse(j->req.hosts, perr, sizeof perr)) == NULL) {
			snprintf(err, n, "hosts=%s: %s", j->req.hosts, perr);
			goto out;
		}
		if ((unk = nodeset_unknown(ns, hostlist_known, NULL)) != NULL) {
			snprintf(err, n, "hosts=%s: unknown host \"%s\"", j->req.hosts, unk);
			goto out;
		}
	}
	/* No host has registered yet: nothing to judge the job against. */
	if (check && nk > 0 && JOB_PARALLEL(j)) {
		/* A part needs one slot of a host; the rule decides how many. */
		int *tot = xcalloc(nk + 1, sizeof *tot), *out = xcalloc(nk + 1, sizeof *out), nh = 0;
		char rule[32];
		for (h = exechost_next(NULL), i = 0; h; h = exechost_next(h), i++) {
			struct match_host m;
			admit_view(&m, h);
			if (part_fits(j, NULL, &m, false) && (!ns || nodeset_contains(ns, h->name,
			    hostlist_name_ever, h))) {
				tot[i] = h->slots;
				nh++;
			}
		}
		if (pe_alloc(pe_job_rule(j), PE_JOB_MIN(j), tot, (int)nk, out) == 0) {
			pe_rule_name(rule, sizeof rule, pe_job_rule(j));
			snprintf(err, n, "error: no suitable queues. Reason: cannot run in PE \"%s\" because "
			    "%d host%s can run a part of it and it needs %d slots (allocation_rule %s)",
			    j->pe ? j->pe : j->req.slots ? "-l slots" : "-n", nh, nh == 1 ? "" : "s", PE_JOB_MIN(j),
			    rule);
			free(tot);
			free(out);
			goto out;
		}
		free(tot);
		free(out);
	} else if (check && nk > 0) {
		enum match_why best = MW_OK;
		const char *bkey = NULL;
		bool fits = false;
		for (h = exechost_next(NULL); h && !fits; h = exechost_next(h)) {
			struct match_host m;
			const char *key = NULL;
			enum match_why w;
			admit_view(&m, h);
			w = match_host(j, ns, q, &m, false, &key);
			if (w == MW_OK)
				fits = true;
			else if (w >= best) {
				best = w;
				bkey = key;
			}
		}
		if (!fits) {
			char r[200];
			if (best == MW_KEY)
				best = keys_why(j, &bkey);
			/* bkey points into j, which outlives this. */
			match_reason(r, sizeof r, best, j, q, bkey, "host");
			snprintf(err, n, "error: no suitable queues. Reason: %s", r);
			goto out;
		}
	}
	rc = 0;
out:
	nodeset_free(ns);
	return rc;
}

/* How many hosts could take a part of j now and ever, for qstat -j. */
static void
parallel_why(const struct job *j, const struct qm_queue *q, struct nodeset *ns, char *buf, size_t n)
{
	struct cand c = { (struct job *)j, q, ns, NULL, false, NULL };
	struct exechost *h;
	int nh = 0, now = 0, ever = 0, fnow = 0, i = 0, *fr, *tot, *out;
	char rule[32];

	for (h = exechost_next(NULL); h; h = exechost_next(h))
		nh++;
	fr = xcalloc((size_t)nh + 1, sizeof *fr);
	tot = xcalloc((size_t)nh + 1, sizeof *tot);
	out = xcalloc((size_t)nh + 1, sizeof *out);
	for (h = exechost_next(NULL); h; h = exechost_next(h), i++) {
		struct match_host m;
		host_view(h, &m);
		if (h->conn && !h->lost && !h->disabled && part_fits(c.j, &c, &m, false)) {
			tot[i] = h->slots;
			ever++;
		}
		if (part_fits(c.j, &c, &m, true)) {
			fr[i] = m.free;
			now++;
			fnow += m.free;
		}
	}
	pe_rule_name(rule, sizeof rule, pe_job_rule(j));
	if (pe_alloc(pe_job_rule(j), PE_JOB_MIN(j), tot, nh, out) == 0)
		snprintf(buf, n, "cannot run in PE \"%s\": it needs %d slots (allocation_rule %s) and only "
		    "%d connected host%s can run a part of it", j->pe ? j->pe : j->req.slots ? "-l slots" : "-n", PE_JOB_MIN(j), rule,
		    ever, ever == 1 ? "" : "s");
	else if (pe_alloc(pe_job_rule(j), PE_JOB_MIN(j), fr, nh, out) == 0)
		snprintf(buf, n, "parallel job waits for %d slots at once (allocation_rule %s): %d idle "
		    "host%s with %d free slot%s now; idle hosts are held for it", PE_JOB_MIN(j), rule, now,
		    now == 1 ? "" : "s", fnow, fnow == 1 ? "" : "s");
	else
		snprintf(buf, n, "enough idle hosts fit: the job starts at their next pull");
	free(fr);
	free(tot);
	free(out);
}

/* A free host that a reservation keeps from j is the reason worth
 * telling, even when other hosts are merely busy: say which, and until when. */
static void
resv_why(const struct job *j, const struct match_host *m, enum match_why w, const char *key,
    char *buf, size_t n)
{
	const struct match_resv *r = NULL;
	char from[32], until[32];

	for (int i = 0; i < m->nresv && !r; i++)
		if (strcmp(m->resv[i]->name, key) == 0)
			r = m->resv[i];
	assert(r);
	fmt_when(from, sizeof from, r->start);
	fmt_when(until, sizeof until, r->end);
	if (w == MW_RESERVED)
		snprintf(buf, n, "host %s is free but reserved for others until %s (reservation %s of %s)",
		    m->name, until, r->name, r->owner);
	else if (j->req.h_rt)
		snprintf(buf, n, "host %s is kept free for reservation %s of %s from %s until %s: the "
		    "job's wall-clock limit (h_rt %lld s) would run into it", m->name, r->name, r->owner,
		    from, until, (long long)j->req.h_rt);
	else
		snprintf(buf, n, "host %s is kept free for reservation %s of %s from %s until %s: the "
		    "job gives no wall-clock limit (h_rt), so it would run into it", m->name, r->name,
		    r->owner, from, until);
}

void
sched_why(const struct job *j, char *buf, size_t n)
{
	const struct qm_queue *q;
	struct nodeset *ns = NULL;
	struct exechost *h;
	struct usage us;
	enum match_why best = MW_OK;
	const char *bkey = NULL;
	char err[128], rwhy[400] = "";
	bool any = false, fits = false;

	*buf = '\0';
	if (j->state != JS_PENDING || j->error)
		return;
	if (j->hold) {
		snprintf(buf, n, "job is held (qrls releases it)");
		return;
	}
	if (!j->queue || (q = conf_queue(conf, j->queue)) == NULL) {
		snprintf(buf, n, "queue %s no longer exists (qalter -q moves the job)", j->queue ? j->queue : "?");
		return;
	}
	if (q->disabled) {
		snprintf(buf, n, "queue %s is disabled", q->name);
		return;
	}
	if (array_why(j, buf, n))
		return;
	if (j->req.hosts && (ns = nodeset_parse(j->req.hosts, err, sizeof err)) == NULL) {
		snprintf(buf, n, "hosts=%s: %s", j->req.hosts, err);
		return;
	}
	usage_load(&us);
	if (JOB_PARALLEL(j) && usage_blocks(&us, q, j, buf, n) == NULL)
		parallel_why(j, q, ns, buf, n);
	else if (usage_blocks(&us, q, j, buf, n) == NULL) {
		for (h = exechost_next(NULL); h && !fits; h = exechost_next(h)) {
			struct match_host m;
			const char *key = NULL;
			enum match_why w;
			host_view(h, &m);
			w = match_host(j, ns, q, &m, true, &key);
			any = true;
			if (w == MW_OK)
				fits = true;
			else if ((w == MW_RESV_SOON || w == MW_RESERVED) && !rwhy[0] &&
			    m.free >= (j->slots > 0 ? j->slots : 1))
				resv_why(j, &m, w, key, rwhy, sizeof rwhy);
			if (w != MW_OK && w >= best) {
				best = w;
				bkey = key;
			}
		}
		if (!any)
			snprintf(buf, n, "no exec host has registered");
		else if (fits)
			snprintf(buf, n, "an idle host fits: the job starts at its next pull");
		else if (rwhy[0])
			snprintf(buf, n, "%s", rwhy);
		else if (best == MW_KEY && keys_why(j, &bkey) == MW_KEYS_APART)
			match_reason(buf, n, MW_KEYS_APART, j, q, bkey, "idle host");
		else
			match_reason(buf, n, best, j, q, bkey, "idle host");
	}
	usage_free(&us);
	nodeset_free(ns);
}
