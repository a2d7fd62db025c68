/* exechost.c: exec hosts as the master sees them, and the messages their execds send. */
#include "config.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg.h"
#include "common/msg_rows.h"
#include "qmaster/qmaster.h"
#include "spool/spool.h"

static struct exechost_list hosts = TAILQ_HEAD_INITIALIZER(hosts);

/* Hosts by name: every event, usage walk and admission check looks hosts
 * up by name, which a list makes O(hosts) each (a power-of-two table,
 * doubled at a load of one). */
static struct {
	struct exechost **b;
	size_t            cap, n;
} htab;

static size_t
host_bucket(const char *name, size_t cap)
{
	return (size_t)hash_fnv1a64(name, strlen(name)) & (cap - 1);
}

static void
htab_add(struct exechost *h)
{
	if (htab.n + 1 > htab.cap) {
		size_t cap = htab.cap ? htab.cap * 2 : 256;
		struct exechost **b = xcalloc(cap, sizeof *b);
		for (size_t i = 0; i < htab.cap; i++)
			for (struct exechost *x = htab.b[i], *next; x; x = next) {
				next = x->hnext;
				x->hnext = b[host_bucket(x->name, cap)];
				b[host_bucket(x->name, cap)] = x;
			}
		free(htab.b);
		htab.b = b;
		htab.cap = cap;
	}
	h->hnext = htab.b[host_bucket(h->name, htab.cap)];
	htab.b[host_bucket(h->name, htab.cap)] = h;
	htab.n++;
}

/* When this master started: a host it has not heard from since is given
 * host_timeout from then, not from its last contact with a master that is gone. */
static int64_t started_ms;

/* The one place that decides whether a job may run again after its host
 * is lost or its owner came back: -r, else its queue's rerun default. */
bool
job_rerunnable(const struct job *j)
{
	/* A qrsh job's client waits for this one run: there is no other. */
	if (j->qrsh)
		return false;
	return j->rerun == 1 || (j->rerun < 0 && j->queue && queue_rerun_default(j->queue));
}

struct exechost *
exechost_find(const char *name)
{
	struct exechost *h;

	if (!htab.cap)
		return NULL;
	for (h = htab.b[host_bucket(name, htab.cap)]; h; h = h->hnext)
		if (strcmp(h->name, name) == 0)
			return h;
	return NULL;
}

size_t
exechost_count(void)
{
	return htab.n;
}

struct exechost *
exechost_next(struct exechost *h)
{
	return h ? TAILQ_NEXT(h, entry) : TAILQ_FIRST(&hosts);
}

/* Kept by name, as the database lists them: a host that registers while
 * the master runs takes the place it will have after a restart. */
static struct exechost *
host_new(const char *name)
{
	struct exechost *h = xcalloc(1, sizeof *h), *x;
	h->name = xstrdup(name);
	h->disabled = qmod_host_disabled(name);
	h->qdisabled = qmod_instances_disabled(name);
	TAILQ_FOREACH_REVERSE(x, &hosts, exechost_list, entry)
		if (strcmp(x->name, name) < 0)
			break;
	if (x)
		TAILQ_INSERT_AFTER(&hosts, x, h, entry);
	else
		TAILQ_INSERT_HEAD(&hosts, h, entry);
	htab_add(h);
	return h;
}

static int
init_one(void *arg, const struct host_rec *r)
{
	struct exechost *h = host_new(r->name);
	json_t *o = r->attrs ? json_loads(r->attrs, 0, NULL) : NULL;
	const char *why;

	h->slots = r->slots;
	h->last_seen = r->last_seen;
	h->users = strv_dup(r->users);
	h->owners = strv_dup(r->owners);
	if (o && host_attrs_from_json(&h->attrs, o, &why) < 0)
		host_attrs_clear(&h->attrs);
	json_decref(o);
	return 0;
}

void
exechost_init(void)
{
	started_ms = now_ms();
	/* Hosts of the database are known before they call: qhost lists them
	 * (as unknown), qmod may disable them, and their jobs time out. */
	if (store_hosts_foreach(store, init_one, NULL) < 0)
		fatalx("cannot read the hosts table");
}

static void
host_free(struct exechost *h)
{
	pullq_cancel(h);
	host_attrs_clear(&h->attrs);
	free(h->busy_reason);
	free(h->vmem_limit);
	json_decref(h->stopped);
	strv_free(h->aliases);
	strv_free(h->users);
	strv_free(h->owners);
	strv_free(h->qdisabled);
	free(h->resv);
	free(h->name);
	free(h);
}

void
exechost_free_all(void)
{
	struct exechost *h;
	free(htab.b);
	memset(&htab, 0, sizeof htab);
	while ((h = TAILQ_FIRST(&hosts)) != NULL) {
		TAILQ_REMOVE(&hosts, h, entry);
		host_free(h);
	}
}

static int
reload_one(void *arg, const struct host_rec *r)
{
	struct exechost *h = exechost_find(r->name);

	(void)arg;
	if (!h) {
		init_one(NULL, r);
		h = exechost_find(r->name);
	} else {
		strv_free(h->users);
		strv_free(h->owners);
		h->users = strv_dup(r->users);
		h->owners = strv_dup(r->owners);
	}
	h->stored = true;
	return 0;
}

void
exechost_reload(void)
{
	struct exechost *h, *next, **pp;

	if (store_hosts_foreach(store, reload_one, NULL) < 0)
		fatalx("cannot read the hosts table");
	TAILQ_FOREACH_SAFE(h, &hosts, entry, next) {
		strv_free(h->aliases);
		h->aliases = NULL;
		h->disabled = qmod_host_disabled(h->name);
		pullq_sync(h);
		strv_free(h->qdisabled);
		h->qdisabled = qmod_instances_disabled(h->name);
		if (h->stored || h->conn) {
			h->stored = false;
			continue;
		}
		for (pp = &htab.b[host_bucket(h->name, htab.cap)]; *pp != h; pp = &(*pp)->hnext)
			;
		*pp = h->hnext;
		htab.n--;
		TAILQ_REMOVE(&hosts, h, entry);
		host_free(h);
	}
	hostlist_init();
}

/* A REGISTER's or LOAD's load: an entry the execd left out keeps its value. */
static void
read_load(struct exechost *h, const double load[3])
{
	for (size_t i = 0; i < 3; i++)
		if (!isnan(load[i]))
			h->load[i] = load[i];
	h->last_seen = now_ms();
	pullq_sync(h);   /* its place among the pulling hosts */
}

/* The accounting row of an attempt that ended (ru NULL: it used nothing we
 * know of).  Jobs deleted before they ran get none, as in Grid Engine. */
void
acct_record(const struct job *j, int failed, const struct job_rusage *ru)
{
	struct acct_info a;

	memset(&a, 0, sizeof a);
	a.group = group_lookup(j->gid);
	a.failed = failed;
	if (ru)
		a.ru = *ru;
	if (store_acct_insert(store, j, &a) < 0)
		fatalx("cannot store the accounting of job %lld", (long long)j->id);
}

/*
 * The end of an attempt the master decides without (or beyond) the exit
 * status: j's state, reason and times are set by the caller.  Its accounting
 * row is written with the host it ran on; a job queued again then forgets
 * that host (attempt + 1 at its next dispatch, RESTARTED=1 in its
 * environment).  Everything is stored in the loop turn's transaction, so the
 * decision is on disk before any reply or SIGNAL that follows from it.
 */
static void
attempt_close(struct job *j, int failed, const struct job_rusage *ru)
{
	acct_record(j, failed, ru);
	if (j->state == JS_PENDING) {
		free(j->host);
		j->host = NULL;
		j->pid = 0;
		j->suspended = 0;
	}
	if (store_job_update(store, j) < 0)
		fatalx("cannot store job %lld", (long long)j->id);
	if (JS_FINISHED(j->state))
		request_job_finished(j);
	else
		sched_kick();
}

/* Queued again if it may run twice, else failed; a qdel already asked wins. */
static void
attempt_lost(struct job *j, char *reason)
{
	j->end_time = now_ms();
	if (!j->start_time)
		j->start_time = j->end_time;
	j->exit_status = -1;
	free(j->reason);
	j->reason = reason;
	if (j->delete_req)
		j->state = JS_DELETED;
	else if (job_rerunnable(j))
		j->state = JS_PENDING;
	else
		j->state = JS_FAILED;
	attempt_close(j, ACCT_FAILED_AFTER, NULL);
}

/* Jobs the master believes are on this host but the execd no longer has. */
struct reconcile_ctx {
	const struct msg_attempts *listed;
	json_t *gone;
};

static int
reconcile_collect(void *arg, struct job *j)
{
	struct reconcile_ctx *rc = arg;
	if (JOB_PARALLEL(j))
		return 0;  /* pe_host_lost's, below */
	if (!msg_attempts_has(rc->listed, j))
		json_array_append_new(rc->gone, json_integer(j->id));
	else if (j->delete_req)
		/* A qdel made while the host was away: deliver it now. */
		exechost_signal_job(j, 9);
	return 0;
}

/* Whether name is one of a blank-separated list of hosts (a parallel job's). */
static bool
host_in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p; p += strcspn(p, " "), p += *p == ' ') {
		if (strncmp(p, name, n) == 0 && (p[n] == ' ' || p[n] == '\0'))
			return true;
	}
	return false;
}

/* Whether the attempt an execd lists is the one the master has running
 * there (an array task's own row; one of a parallel job's hosts). */
static bool
attempt_current(const struct exechost *h, const struct msg_attempt *a)
{
	struct job *j = a->id <= 0 || a->task < 0 || a->task > JOB_MAX_TASKS ? NULL : a->task > 0 ?
	    store_task_get(store, a->id, (int)a->task, false) : store_job_get(store, a->id, false);
	bool cur = j && (j->state == JS_DISPATCHED || j->state == JS_RUNNING) && j->host &&
	    (JOB_PARALLEL(j) ? host_in_list(j->host, h->name) : strcmp(j->host, h->name) == 0) &&
	    j->task == a->task && j->attempt == a->attempt;
	job_free(j);
	return cur;
}

/*
 * At REGISTER: the execd's list of attempts against the master's.  Jobs the
 * master has there but the execd lacks end (or go back to the queue when they
 * never started); attempts the execd has but the master no longer counts as
 * running there (failed or requeued while the host was lost, deleted, purged)
 * are returned in kill, to be killed once the decision is committed: a job
 * that is not rerunnable never runs twice, and a requeued one may already
 * run elsewhere.
 */
static void
reconcile(struct exechost *h, const struct msg_attempts *listed, json_t *kill)
{
	struct store_job_filter f = { .states = 1u << JS_DISPATCHED | 1u << JS_RUNNING, .host = h->name };
	struct reconcile_ctx rc = { listed, json_array() };
	json_t *v;
	size_t i;

	for (i = 0; i < listed->n; i++)
		if (listed->a[i].id > 0 && !attempt_current(h, &listed->a[i]))
			json_array_append_new(kill, msg_attempt_pack(&listed->a[i]));
	if (store_jobs_foreach(store, &f, reconcile_collect, &rc) < 0)
		fatalx("cannot read the jobs of host %s", h->name);
	json_array_foreach(rc.gone, i, v) {
		struct job *j = store_job_get(store, json_integer_value(v), false);
		if (!j)
			continue;
		if (j->state == JS_DISPATCHED) {
			/* The execd writes its spool before starting anything, so a
			 * job it does not list never started: safe to queue again. */
			log_info("job %lld never reached %s; queued again", (long long)j->id, h->name);
			j->state = JS_PENDING;
			free(j->host);
			j->host = NULL;
			if (j->delete_req) {
				j->state = JS_DELETED;
				j->end_time = now_ms();
			}
			if (store_job_update(store, j) < 0)
				fatalx("cannot store job %lld", (long long)j->id);
			if (JS_FINISHED(j->state))
				request_job_finished(j);   /* it never ran: no accounting */
			else
				sched_kick();
		} else {
			log_warnx("job %lld was running on %s, which no longer has it", (long long)j->id, h->name);
			j->end_time = now_ms();
			j->exit_status = -1;
			j->state = j->delete_req ? JS_DELETED : JS_FAILED;
			free(j->reason);
			j->reason = xasprintf("lost: execd on %s no longer knows the job", h->name);
			attempt_close(j, ACCT_FAILED_AFTER, NULL);
		}
		job_free(j);
	}
	array_reconcile(h->name, listed);
	json_decref(rc.gone);
	/* Parallel jobs' host is a list the filter above does not match. */
	pe_host_lost(h->name, listed, "execd no longer knows it");
}

static int
collect_job_ids(void *arg, struct job *j)
{
	json_array_append_new(arg, json_integer(j->id));
	return 0;
}

/* The jobs a lost host held, noted before they end, for the admin mail. */
struct lost_job {
	int64_t id;
	int     task;
	char   *name, *owner;
};
struct lost_note {
	const char      *host;
	struct lost_job *jobs;
	size_t           n, cap;
};

static int
lost_note_one(void *arg, struct job *j)
{
	struct lost_note *ln = arg;

	if (!j->host || !host_in_list(j->host, ln->host))
		return 0;
	if (ln->n == ln->cap) {
		ln->cap = ln->cap ? 2 * ln->cap : 16;
		ln->jobs = xrealloc(ln->jobs, ln->cap * sizeof *ln->jobs);
	}
	ln->jobs[ln->n++] = (struct lost_job){ j->id, j->task, xstrdup(j->name ? j->name : ""),
	    xstrdup(j->owner ? j->owner : "?") };
	return 0;
}

static void
lost_note_clear(struct lost_note *ln)
{
	for (size_t i = 0; i < ln->n; i++) {
		free(ln->jobs[i].name);
		free(ln->jobs[i].owner);
	}
	free(ln->jobs);
}

/* What became of a job the lost host held, read back after the fact. */
static const char *
lost_outcome(const struct lost_job *l)
{
	struct job *j = l->task > 0 ? store_task_get(store, l->id, l->task, false) :
	    store_job_get(store, l->id, false);
	const char *what = !j ? "purged" : j->state == JS_PENDING ? "requeued (rerunnable: it runs again)" :
	    j->state == JS_FAILED ? "failed (not rerunnable)" : j->state == JS_DELETED ? "deleted (qdel)" :
	    JS_FINISHED(j->state) ? "finished" : "failing (its parts elsewhere are killed)";

	job_free(j);
	return what;
}

#define LOST_MAIL_JOBS 200   /* lines in the mail; qstat and qacct have the rest */

/* The admin mail of a lost host: which, when last heard from, and each
 * job it held with what became of it. */
static void
lost_mail(const struct exechost *h, int64_t seen, const struct lost_note *ln)
{
	char *body = NULL, when[32];
	size_t len = 0;
	FILE *fp = open_memstream(&body, &len);

	if (!fp)
		fatal("open_memstream");
	fmt_when(when, sizeof when, seen);
	if (h->last_seen > 0 && h->last_seen >= seen)
		fprintf(fp, "Exec host %s stopped answering: last heard from at %s", h->name, when);
	else
		fprintf(fp, "Exec host %s stopped answering: not heard from since this master started at %s",
		    h->name, when);
	fprintf(fp, ", %lld s ago (host_timeout %lld s).\n", (long long)((now_ms() - seen) / 1000),
	    (long long)(conf->host_timeout_ms / 1000));
	if (ln->n == 0)
		fprintf(fp, "It ran no jobs.\n");
	else
		fprintf(fp, "It held %zu job%s:\n", ln->n, ln->n == 1 ? "" : "s");
	for (size_t i = 0; i < ln->n; i++) {
		const struct lost_job *l = &ln->jobs[i];

		if (i == LOST_MAIL_JOBS) {
			fprintf(fp, "  ... and %zu more (qstat -s z, qacct)\n", ln->n - i);
			break;
		}
		if (l->task > 0)
			fprintf(fp, "  job %lld.%d (%s, user %s): %s\n", (long long)l->id, l->task,
			    l->name, l->owner, lost_outcome(l));
		else
			fprintf(fp, "  job %lld (%s, user %s): %s\n", (long long)l->id,
			    l->name, l->owner, lost_outcome(l));
	}
	fclose(fp);
	mail_admin("nowq: host lost", body);
	free(body);
}

/* No message for host_timeout: the host's state is unknown.  Its jobs cannot
 * be vouched for, so each attempt there ends: requeued when rerunnable, else
 * failed; the connection, if any, is dropped so that the execd, if it comes
 * back, must REGISTER and be reconciled. */
static void
host_lose(struct exechost *h)
{
	struct store_job_filter f = { .states = 1u << JS_DISPATCHED | 1u << JS_RUNNING, .host = h->name };
	struct store_job_filter all = { .states = f.states };
	struct lost_note ln = { .host = h->name };
	json_t *ids = json_array(), *v;
	int64_t seen = h->last_seen > started_ms ? h->last_seen : started_ms;
	size_t i;

	log_warnx("execd %s: no message for %lld s: host lost", h->name,
	    (long long)(conf->host_timeout_ms / 1000));
	h->lost = true;
	pullq_cancel(h);
	if (h->conn)
		net_close(h->conn, "host lost");
	qm_txn();
	/* Parallel jobs name the host in a list, array tasks in their rows. */
	if (store_jobs_foreach(store, &all, lost_note_one, &ln) < 0 ||
	    array_tasks_active(h->name, lost_note_one, &ln) < 0)
		log_warnx("cannot list the jobs of host %s for the mail", h->name);
	if (store_jobs_foreach(store, &f, collect_job_ids, ids) < 0)
		fatalx("cannot read the jobs of host %s", h->name);
	json_array_foreach(ids, i, v) {
		struct job *j = store_job_get(store, json_integer_value(v), false);
		if (!j)
			continue;
		log_info("job %lld: host %s lost; %s", (long long)j->id, h->name,
		    job_rerunnable(j) ? "queued again" : "failed");
		attempt_lost(j, xasprintf("host lost: %.200s", h->name));
		job_free(j);
	}
	/* Parallel jobs with a part there, and array tasks there. */
	pe_host_lost(h->name, NULL, "host lost");
	array_reconcile(h->name, NULL);
	if (conf->admin_mail && conf->admin_mail[0])
		lost_mail(h, seen, &ln);
	lost_note_clear(&ln);
	json_decref(ids);
}

void
exechost_check_lost(void)
{
	struct exechost *h;
	int64_t now = now_ms();

	TAILQ_FOREACH(h, &hosts, entry) {
		int64_t seen = h->last_seen > started_ms ? h->last_seen : started_ms;
		if (!h->lost && now - seen > conf->host_timeout_ms)
			host_lose(h);
	}
}

void
exechost_register(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_register m;
	struct exechost *h;
	struct host_rec rec;
	json_t *ja, *kill, *v;
	char *attrs_text, err[512];
	size_t i;

	if (msg_register_unpack(msg, &m, err, sizeof err) < 0) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", err));
		return;
	}
	/* A personal execd runs only its own user's jobs; only root may
	 * register an execd that runs everyone's. */
	if (m.uid != (int64_t)c->uid && c->uid != 0) {
		net_send(c, proto_reply_err(seq, ERR_PERM, "an execd running as uid %u cannot claim uid %lld",
		    (unsigned)c->uid, (long long)m.uid));
		msg_register_clear(&m);
		return;
	}
	if (c->host) {
		net_send(c, proto_reply_err(seq, ERR_PROTO, "this connection already registered %s", c->host->name));
		msg_register_clear(&m);
		return;
	}
	if (!m.attrs.rating)
		m.attrs.rating = 1.0;
	h = exechost_find(m.host);
	if (!h)
		h = host_new(m.host);
	if (h->conn && h->conn != c)
		net_close(h->conn, "replaced by a newer registration of the same host");
	h->conn = c;
	c->host = h;
	h->slots = (int)m.slots;
	h->uid = (uid_t)m.uid;
	host_attrs_clear(&h->attrs);
	h->attrs = m.attrs;
	memset(&m.attrs, 0, sizeof m.attrs);
	free(h->vmem_limit);
	h->vmem_limit = m.vmem_limit ? xstrdup(m.vmem_limit) : NULL;
	h->idle = true;
	/* Its first LOAD says afresh which jobs its policy holds stopped. */
	json_decref(h->stopped);
	h->stopped = NULL;
	if (h->lost)
		log_info("execd %s is back", h->name);
	h->lost = false;
	free(h->busy_reason);
	h->busy_reason = NULL;
	read_load(h, m.load);
	qm_txn();
	kill = json_array();
	reconcile(h, &m.attempts, kill);
	msg_register_clear(&m);
	/* Kept in the database so a job can be checked against the hosts the
	 * cluster has, connected or not. */
	ja = host_attrs_to_json(&h->attrs);
	attrs_text = json_dumps(ja, JSON_COMPACT);
	json_decref(ja);
	rec = (struct host_rec){ .name = h->name, .slots = h->slots,
	    .load = { h->load[0], h->load[1], h->load[2] }, .last_seen = h->last_seen, .attrs = attrs_text };
	if (store_host_upsert(store, &rec) < 0)
		fatalx("cannot store host %s", h->name);
	free(attrs_text);
	log_info("execd %s registered from %s: %d slots", h->name, c->peer, h->slots);
	net_send(c, proto_reply_ok(seq));
	/* After the reply, so the execd is registered when they arrive; like
	 * every message of this turn, only once the transaction is committed. */
	json_array_foreach(kill, i, v) {
		struct msg_signal s = { .signal = 9 };
		msg_attempt_unpack(v, &s.a);
		log_warnx("execd %s still runs job %lld attempt %lld, which is over for the master: killing it",
		    h->name, (long long)s.a.id, (long long)s.a.attempt);
		net_send(c, msg_signal_pack(&s));
	}
	json_decref(kill);
}

static struct job *event_job(struct conn *c, const struct msg_attempt *a);

/* Whether attempt e is one of list's (LOAD's stopped). */
static bool
attempt_listed(const json_t *list, const json_t *e)
{
	struct msg_attempt a, b;
	size_t i;
	json_t *v;

	msg_attempt_unpack(e, &a);
	json_array_foreach(list, i, v) {
		msg_attempt_unpack(v, &b);
		if (b.id == a.id && b.task == a.task && b.attempt == a.attempt)
			return true;
	}
	return false;
}

static int
host_stopped_one(void *arg, struct job *j)
{
	if (j->suspended & SUSP_HOST)
		json_array_append_new(arg, msg_attempt_pack(&(struct msg_attempt){ j->id, j->task, j->attempt }));
	return 0;
}

static void
host_stopped_set(struct conn *c, json_t *e, bool on)
{
	struct msg_attempt a;
	struct job *j;

	msg_attempt_unpack(e, &a);
	j = json_is_object(e) ? event_job(c, &a) : NULL;

	if (!j)
		return;
	if (j->state == JS_RUNNING && !JOB_PARALLEL(j) && ((j->suspended & SUSP_HOST) != 0) != on) {
		qm_txn();
		j->suspended ^= SUSP_HOST;
		if (store_job_update(store, j) < 0)
			fatalx("cannot store job %lld", (long long)j->id);
		log_info("job %lld.%d %s by the idle policy of %s", (long long)j->id, j->task,
		    on ? "stopped" : "continued", c->host->name);
		/* The execd continues every job it stopped, but not one a user
		 * stopped too: that one stays s. */
		if (!on && (j->suspended & SUSP_USER))
			exechost_signal_job(j, SIGSTOP);
	}
	job_free(j);
}

/*
 * Every LOAD names the jobs the host's idle policy holds stopped
 * (owner_returns = suspend); they are shown T, as Grid Engine shows a
 * threshold suspension, and stored so every listing sees it.  The set
 * rarely changes, so the jobs are read only when it does.
 */
static void
host_stopped_update(struct conn *c, json_t *list)
{
	struct exechost *h = c->host;
	struct store_job_filter f = { .states = 1u << JS_RUNNING, .host = h->name };
	json_t *was, *e;
	size_t i;

	if (!json_is_array(list) || json_array_size(list) > (size_t)h->slots)
		list = NULL;
	if (h->stopped && (list ? json_equal(h->stopped, list) : json_array_size(h->stopped) == 0))
		return;
	was = json_array();
	if (store_jobs_foreach(store, &f, host_stopped_one, was) < 0 ||
	    array_tasks_active(h->name, host_stopped_one, was) < 0)
		log_warnx("cannot read the jobs of host %s", h->name);
	json_array_foreach(was, i, e)
		if (!list || !attempt_listed(list, e))
			host_stopped_set(c, e, false);
	if (list)
		json_array_foreach(list, i, e)
			if (!attempt_listed(was, e))
				host_stopped_set(c, e, true);
	json_decref(was);
	json_decref(h->stopped);
	h->stopped = list ? json_deep_copy(list) : json_array();
}

void
exechost_load(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_load m;

	if (!c->host)
		return;
	msg_load_unpack(msg, &m, NULL, 0);
	read_load(c->host, m.load);
	c->host->idle = m.idle;
	free(c->host->busy_reason);
	c->host->busy_reason = NULL;
	/* Shown by qhost; bounded, since it comes from the network. */
	if (!c->host->idle && m.reason && *m.reason)
		c->host->busy_reason = xasprintf("%.200s", m.reason);
	if (!c->host->idle)
		pullq_cancel(c->host);
	host_stopped_update(c, m.stopped);
}

void
exechost_pull(struct conn *c, int64_t seq, json_t *msg)
{
	struct exechost *h = c->host;
	struct msg_pull m;
	int64_t free_slots;

	msg_pull_unpack(msg, &m, NULL, 0);
	free_slots = m.free;

	if (!h) {
		net_send(c, proto_reply_err(seq, ERR_PROTO, "PULL before REGISTER"));
		return;
	}
	if (free_slots < 0 || free_slots > h->slots) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "PULL free must be 0..%d", h->slots));
		return;
	}
	/* A newer PULL replaces the open one. */
	pullq_cancel(h);
	h->last_seen = now_ms();
	if (free_slots == 0)
		return;
	pullq_add(h, seq, (int)free_slots);
	sched_kick();
}

static void
send_ack(struct conn *c, int64_t seq)
{
	net_send(c, msg_ack_pack(&(struct msg_ack){ seq }));
}

/* The job an event speaks of, when the event is about its current attempt. */
static struct job *
event_job(struct conn *c, const struct msg_attempt *a)
{
	int64_t id = a->id, attempt = a->attempt, task = a->task;
	struct job *j;

	/* Any message tells the host is alive, not only LOAD. */
	if (c->host)
		c->host->last_seen = now_ms();
	/* An array task's events update its task row (array.c). */
	j = id <= 0 || task < 0 || task > JOB_MAX_TASKS ? NULL : task > 0 ?
	    store_task_get(store, id, (int)task, false) : store_job_get(store, id, false);
	if (!j)
		return NULL;
	/* A parallel job's host is a list: pe.c finds the sender's part. */
	if (JOB_PARALLEL(j) && j->attempt == attempt && j->task == task)
		return j;
	if (j->attempt != attempt || j->task != task ||
	    !j->host || !c->host || strcmp(j->host, c->host->name) != 0) {
		log_info("%s: ignoring a stale event for job %lld attempt %lld", c->host ? c->host->name : c->peer,
		    (long long)id, (long long)attempt);
		job_free(j);
		return NULL;
	}
	return j;
}

void
exechost_child_register(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_child_register m;
	struct job *j;

	msg_child_register_unpack(msg, &m, NULL, 0);
	j = event_job(c, &(struct msg_attempt){ m.id, m.task, m.attempt });
	if (m.start_time == MSG_ABSENT)
		m.start_time = now_ms();
	qm_txn();
	if (j && m.petask) {
		/* A qrsh -inherit task's, which only a parallel job has. */
		if (JOB_PARALLEL(j))
			petask_register(c, j, &m);
	} else if (j && JOB_PARALLEL(j))
		pe_child_register(c, j, &m);
	else if (j && j->state == JS_DISPATCHED) {
		j->state = JS_RUNNING;
		j->pid = (int)m.pid;
		j->start_time = m.start_time;
		if (store_job_run(store, j) < 0)
			fatalx("cannot store job %lld", (long long)j->id);
		deps_job_started(j);
		mail_job_started(j);
		/* A qdel may have crossed the DISPATCH on the wire. */
		if (j->delete_req)
			exechost_signal_job(j, 9);
	}
	job_free(j);
	send_ack(c, seq);
}

/* Grid Engine's exit codes with a meaning to the system, not the user. */
#define EXIT_RERUN 99    /* run the job again */
#define EXIT_ERROR 100   /* leave it in error (Eqw) until qmod -cj */

/* What the job's shepherd sent back before its end (doc/staging.md). */
static void
exechost_staged_out(const struct job *j, const json_t *files)
{
	size_t i;
	json_t *v;

	json_array_foreach(files, i, v) {
		struct stage_file f;

		stage_file_unpack(v, &f);
		if (store_stage_out_add(store, j->id, j->task, f.name, f.size, f.sha256, f.mode) < 0)
			fatalx("cannot record a staged output");
	}
}

void
exechost_child_term(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_child_term m;
	struct job *j;
	const char *failed, *vacated, *limit, *lost, *host_fault;
	char *rwhy;
	bool requeue = false;
	struct job_rusage ru;

	msg_child_term_unpack(msg, &m, NULL, 0);
	j = event_job(c, &(struct msg_attempt){ m.id, m.task, m.attempt });
	failed = m.failed, vacated = m.vacated, limit = m.limit, lost = m.lost, host_fault = m.requeue;
	if (m.end_time == MSG_ABSENT)
		m.end_time = now_ms();
	ru = m.ru;
	qm_txn();
	/* A parallel job's come from its part 0 (the shepherd's choice). */
	if (j && m.staged_out && !m.petask && !JS_FINISHED(j->state))
		exechost_staged_out(j, m.staged_out);
	/* A finished job's late or repeated CHILD_TERM, or one for an attempt
	 * the master has already ended (host lost), is acknowledged only. */
	if (j && m.petask) {
		if (JOB_PARALLEL(j))
			petask_term(c, j, &m);
	} else if (j && JOB_PARALLEL(j))
		pe_child_term(c, j, &m);
	else if (j && !JS_FINISHED(j->state) && !(j->state == JS_PENDING)) {
		j->end_time = m.end_time;
		if (!j->start_time)
			j->start_time = j->end_time;
		j->exit_status = (int)m.exit_status;
		j->signal = (int)m.signal;
		if (!isnan(m.utime))
			j->utime = m.utime;
		if (!isnan(m.stime))
			j->stime = m.stime;
		j->maxrss_kb = m.maxrss_kb;
		/* The job's end is recorded even when its usage is garbage: the
		 * exit status matters more than the page faults. */
		if (m.rusage_why)
			log_warnx("%s: job %lld: %s; its usage is accounted as zero", c->host->name,
			    (long long)j->id, m.rusage_why);
		else if (!m.rusage) {
			ru.utime = j->utime;
			ru.stime = j->stime;
			ru.maxrss = j->maxrss_kb;
		}
		free(j->reason);
		j->reason = NULL;
		if ((rwhy = resv_job_killed(j, &requeue)) != NULL) {
			/* Vacated for a reservation, or killed at its end. */
			j->state = requeue ? JS_PENDING : JS_FAILED;
			j->reason = rwhy;
		} else if (j->delete_req) {
			j->state = JS_DELETED;
			j->reason = j->signal ? xasprintf("deleted (qdel): killed by signal %d", j->signal) :
			    xstrdup("deleted (qdel)");
		} else if (failed) {
			/* Grid Engine's Eqw: the job could not start here (a
			 * missing directory, an unwritable output file); it waits
			 * in error until deleted, with the reason shown.  Not a
			 * qrsh job: its client waits to hear why, now. */
			j->state = j->qrsh ? JS_FAILED : JS_PENDING;
			j->error = !j->qrsh;
			j->reason = xasprintf("%.200s: %.800s", c->host->name, failed);
		} else if (host_fault) {
			/* Its staged inputs could not be delivered for a fault
			 * of this host: it never started.  The host goes out of
			 * use (Grid Engine's queue in error, Slurm's drained
			 * node) and the job runs elsewhere, a few times at most. */
			qmod_host_fault(c->host, host_fault);
			j->state = j->attempt < STAGE_HOST_TRIES ? JS_PENDING : JS_FAILED;
			j->reason = xasprintf("%.200s: %.800s; %s", c->host->name, host_fault,
			    j->state == JS_PENDING ? "host disabled, job queued again" :
			    "no more tries on other hosts");
		} else if (limit) {
			/* The job ran and its host ended it for a limit of its
			 * own -l (h_rt, s_rt, h_cpu, h_vmem): failed, whatever its
			 * exit status, and the limit is the reason. */
			j->state = JS_FAILED;
			j->reason = xasprintf("%.800s", limit);
		} else if (lost) {
			/* The job ran but its execd lost it (its shepherd died)
			 * and killed what was left: like a lost host's, it runs
			 * again only when it may. */
			j->state = job_rerunnable(j) ? JS_PENDING : JS_FAILED;
			j->reason = xasprintf("%.200s: %.800s", c->host->name, lost);
		} else if (vacated) {
			/* The host's owner came back and the execd's policy
			 * vacated the job: like a lost host, it runs again only
			 * when it may. */
			j->state = job_rerunnable(j) ? JS_PENDING : JS_FAILED;
			j->reason = xasprintf("vacated from %.200s: %.800s", c->host->name, vacated);
		} else if (j->exit_status == EXIT_RERUN && j->signal == 0 && !j->qrsh) {
			j->state = JS_PENDING;
			j->reason = xasprintf("exit code %d on %.200s: queued again", EXIT_RERUN, c->host->name);
		} else if (j->exit_status == EXIT_ERROR && j->signal == 0 && !j->qrsh) {
			j->state = JS_PENDING;
			j->error = true;
			j->reason = xasprintf("exit code %d on %.200s: in error until qmod -cj", EXIT_ERROR,
			    c->host->name);
		} else if (j->exit_status == 0 && j->signal == 0)
			j->state = JS_DONE;
		else {
			j->state = JS_FAILED;
			if (j->signal)
				j->reason = xasprintf("killed by signal %d", j->signal);
		}
		log_debug("job %lld ended on %s: %s, exit %d", (long long)j->id, c->host->name,
		    job_state_name(j->state), j->exit_status);
		attempt_close(j, failed || host_fault ? ACCT_FAILED_BEFORE : limit ? ACCT_FAILED_LIMIT :
		    j->signal || lost ? ACCT_FAILED_AFTER : 0, &ru);
	}
	job_free(j);
	send_ack(c, seq);
}

void
exechost_conn_gone(struct conn *c)
{
	struct exechost *h = c->host;
	if (!h)
		return;
	pullq_cancel(h);
	h->conn = NULL;
	c->host = NULL;
	log_info("execd %s disconnected", h->name);
}

bool
exechost_signal_job(const struct job *j, int sig)
{
	struct exechost *h;

	if (JOB_PARALLEL(j))
		return pe_signal(j, sig);
	h = j->host ? exechost_find(j->host) : NULL;
	if (!h || !h->conn)
		return false;
	net_send(h->conn, msg_signal_pack(&(struct msg_signal){ { j->id, j->task, j->attempt }, sig }));
	return true;
}

struct host_jobs_ctx {
	int          used;
	json_t      *qused;    /* queue name: slots used by its jobs here */
	bool         suspended;
	json_t      *jobs;     /* NULL: not wanted */
	const char  *only;     /* NULL: everyone's, else this owner's */
};

/* A job's slots on the host (a parallel job's share there). */
static void
host_jobs_add(struct host_jobs_ctx *hc, struct job *j, int slots)
{
	json_t *o;

	hc->used += slots;
	if (j->queue)
		json_object_set_new(hc->qused, j->queue, json_integer(jint(hc->qused, j->queue, 0) + slots));
	if (j->suspended)
		hc->suspended = true;
	if (!hc->jobs || (hc->only && strcmp(hc->only, j->owner) != 0))
		return;
	o = job_to_json(j);
	job_json_public(o);
	json_object_del(o, "script");
	json_object_del(o, "env");
	json_array_append_new(hc->jobs, o);
}

static int
host_jobs_one(void *arg, struct job *j)
{
	host_jobs_add(arg, j, j->slots > 0 ? j->slots : 1);
	return 0;
}

/* The parallel jobs on several hosts, whose host field is their list:
 * {host: [{id, slots}]} from each job's record, read once per listing. */
static int
host_parallel_one(void *arg, struct job *j)
{
	json_t *per = arg, *parts, *h, *l;
	struct msg_pe_host ph;
	size_t i;

	if (!JOB_PARALLEL(j) || !j->host || !strchr(j->host, ' ') || !(parts = pe_hosts_json(j)))
		return 0;
	json_array_foreach(parts, i, h) {
		msg_pe_host_unpack(h, &ph);
		if (!ph.host)
			continue;
		if (!(l = json_object_get(per, ph.host)))
			json_object_set_new(per, ph.host, l = json_array());
		json_array_append_new(l, json_pack("{s:I, s:I}", "id", (json_int_t)j->id,
		    "slots", (json_int_t)ph.slots));
	}
	json_decref(parts);
	return 0;
}

static void
host_parallel_add(struct host_jobs_ctx *hc, const json_t *list)
{
	json_t *v;
	size_t i;

	json_array_foreach(list, i, v) {
		struct job *j = store_job_get(store, jint(v, "id", 0), false);
		if (j)
			host_jobs_add(hc, j, (int)jint(v, "slots", 1));
		job_free(j);
	}
}

/* One word for qhost's STATE column, the most telling first. */
static const char *
exechost_state(const struct exechost *h, bool suspended)
{
	if (h->lost || !h->conn)
		return "unknown";
	if (h->disabled)
		return "disabled";
	/* Reserved, never "down": people must not take it for a failure. */
	if (resv_active_on(h))
		return "reserved";
	if (suspended)
		return "suspended";
	return h->idle ? "idle" : "busy";
}

/* The queues whose host set holds h now (qstat -f's queue instances), with
 * the slots their jobs use there. */
static json_t *
host_queues_json(struct exechost *h, const json_t *qused)
{
	json_t *a = json_array();

	for (int i = 0; i < conf->nqueues; i++) {
		const struct qm_queue *q = &conf->queues[i];
		if (q->hosts_ns && !nodeset_contains(q->hosts_ns, h->name, hostlist_name_now, h))
			continue;
		bool off = q->disabled;
		for (char **d = h->qdisabled; d && *d && !off; d++)
			off = strcmp(*d, q->name) == 0;
		msg_host_queue_add(a, &(struct msg_host_queue){ q->name, off, jint(qused, q->name, 0) });
	}
	return a;
}

static int
host_cmp(const void *a, const void *b)
{
	return strcmp((*(struct exechost *const *)a)->name, (*(struct exechost *const *)b)->name);
}

json_t *
exechost_list_json(bool with_jobs, const char *only_owner)
{
	json_t *list = json_array(), *per = json_object();
	struct exechost *h, **v;
	size_t n = 0, k = 0;

	TAILQ_FOREACH(h, &hosts, entry)
		n++;
	v = xcalloc(n + 1, sizeof *v);
	TAILQ_FOREACH(h, &hosts, entry)
		v[k++] = h;
	qsort(v, n, sizeof *v, host_cmp);
	{
		struct store_job_filter f = { .states = 1u << JS_DISPATCHED | 1u << JS_RUNNING };
		if (store_jobs_foreach(store, &f, host_parallel_one, per) < 0)
			log_warnx("cannot read the parallel jobs");
	}
	for (k = 0; k < n; k++) {
		struct store_job_filter f = { .states = 1u << JS_DISPATCHED | 1u << JS_RUNNING };
		struct host_jobs_ctx hc = { 0, json_object(), false, with_jobs ? json_array() : NULL, only_owner };
		const struct match_resv *r;
		struct msg_host_row row;
		json_t *o;

		h = v[k];
		f.host = h->name;
		if (store_jobs_foreach(store, &f, host_jobs_one, &hc) < 0 ||
		    array_tasks_active(h->name, host_jobs_one, &hc) < 0)
			log_warnx("cannot read the jobs of host %s", h->name);
		host_parallel_add(&hc, json_object_get(per, h->name));
		row = (struct msg_host_row){ .name = h->name, .slots = h->slots, .used = hc.used,
		    .load = { h->load[0], h->load[1], h->load[2] },
		    .state = exechost_state(h, hc.suspended), .connected = h->conn != NULL,
		    .disabled = h->disabled, .lost = h->lost, .last_seen = h->last_seen, .attrs = h->attrs,
		    .queues = host_queues_json(h, hc.qused), .jobs = hc.jobs };
		if (h->busy_reason && h->conn && !h->lost)
			row.busy_reason = h->busy_reason;
		/* How the host enforces h_vmem, as its execd said at REGISTER. */
		row.vmem_limit = h->vmem_limit;
		if ((r = resv_active_on(h)) != NULL)
			row.reserved = (struct msg_host_resv){ true, r->name, r->owner, r->start, r->end };
		else if ((r = resv_next_on(h)) != NULL)
			row.reserved_next = (struct msg_host_resv){ true, r->name, r->owner, r->start, r->end };
		json_decref(hc.qused);
		o = msg_host_row_pack(&row);
		json_array_append_new(list, o);
	}
	free(v);
	json_decref(per);
	return list;
}
