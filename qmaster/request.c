/* request.c: the one table of request handlers (who may send what), and the client requests. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg.h"
#include "common/msg_req.h"
#include "common/msg_rows.h"
#include "qmaster/qmaster.h"
#include "spool/spool.h"

typedef void (*handler_fn)(struct conn *c, int64_t seq, json_t *msg);

static void req_submit(struct conn *, int64_t, json_t *);
static void req_status(struct conn *, int64_t, json_t *);
static void req_delete(struct conn *, int64_t, json_t *);
static void req_wait(struct conn *, int64_t, json_t *);
static void req_hosts(struct conn *, int64_t, json_t *);
static void req_acct(struct conn *, int64_t, json_t *);
static void req_alter(struct conn *, int64_t, json_t *);
static void req_conf(struct conn *, int64_t, json_t *);

/* Every request type, the connection role and the identity that may send
 * it, and whether it changes state (a mutating handler calls qm_txn before
 * its first change).  Anything not in this table is refused.  CONF is a
 * user's request, but its "reload" is a manager's (checked in req_conf). */
static const struct handler {
	enum msg_type type;
	handler_fn    fn;
	unsigned      roles;     /* ROLE_* bits allowed to call it */
	enum perm     perm;
	bool          mutates;
} handlers[] = {
	{ MSG_SUBMIT,         req_submit,              ROLE_CLIENT, PERM_USER,           true },
	{ MSG_STATUS,         req_status,              ROLE_CLIENT, PERM_USER,           false },
	{ MSG_DELETE,         req_delete,              ROLE_CLIENT, PERM_OWNER_OPERATOR, true },
	{ MSG_HOLD,           qmod_job,                ROLE_CLIENT, PERM_OWNER_OPERATOR, true },
	{ MSG_RELEASE,        qmod_job,                ROLE_CLIENT, PERM_OWNER_OPERATOR, true },
	{ MSG_WAIT,           req_wait,                ROLE_CLIENT, PERM_USER,           false },
	{ MSG_HOSTS,          req_hosts,               ROLE_CLIENT, PERM_USER,           false },
	{ MSG_ACCT,           req_acct,                ROLE_CLIENT, PERM_USER,           false },
	{ MSG_ALTER,          req_alter,               ROLE_CLIENT, PERM_OWNER_MANAGER,  true },
	{ MSG_CONF,           req_conf,                ROLE_CLIENT, PERM_USER,           false },
	{ MSG_CRON,           cron_request,            ROLE_CLIENT, PERM_OWNER_MANAGER,  true },
	{ MSG_REGISTER,       exechost_register,       ROLE_EXECD,  PERM_DAEMON,         true },
	{ MSG_LOAD,           exechost_load,           ROLE_EXECD,  PERM_DAEMON,         false },
	{ MSG_PULL,           exechost_pull,           ROLE_EXECD,  PERM_DAEMON,         false },
	{ MSG_CHILD_REGISTER, exechost_child_register, ROLE_EXECD,  PERM_DAEMON,         true },
	{ MSG_CHILD_TERM,     exechost_child_term,     ROLE_EXECD,  PERM_DAEMON,         true },
	{ MSG_DISABLE,        qmod_disable,            ROLE_CLIENT, PERM_OPERATOR,       true },
	{ MSG_ENABLE,         qmod_enable,             ROLE_CLIENT, PERM_OPERATOR,       true },
	{ MSG_SUSPEND,        qmod_job,                ROLE_CLIENT, PERM_OWNER_OPERATOR, true },
	{ MSG_UNSUSPEND,      qmod_job,                ROLE_CLIENT, PERM_OWNER_OPERATOR, true },
	{ MSG_CLEAR,          qmod_job,                ROLE_CLIENT, PERM_OWNER_OPERATOR, true },
	{ MSG_RESERVE,        resv_request,            ROLE_CLIENT, PERM_USER,           true },
	{ MSG_UNRESERVE,      unresv_request,          ROLE_CLIENT, PERM_OWNER_MANAGER,  true },
	{ MSG_ALIAS,          hostlist_request,        ROLE_CLIENT, PERM_USER,           true },
	{ MSG_INHERIT,        petask_request,          ROLE_CLIENT, PERM_USER,           true },
	{ MSG_STAGE_PUT,      stage_put,               ROLE_CLIENT, PERM_USER,           false },
	{ MSG_STAGE_GET,      stage_get,               ROLE_CLIENT, PERM_USER,           false },
	{ MSG_MASTERS,        repl_masters,            ROLE_CLIENT, PERM_USER,           false },
	{ MSG_TAKEOVER,       failover_takeover,       ROLE_CLIENT, PERM_MANAGER,        false },
	{ MSG_PROBE,          repl_probe,              ROLE_PEER,   PERM_DAEMON,         false },
	{ MSG_SYNC,           repl_sync,               ROLE_PEER,   PERM_DAEMON,         false },
	{ MSG_APPLIED,        repl_applied,            ROLE_PEER,   PERM_DAEMON,         false },
	{ MSG_HEARTBEAT,      repl_heartbeat,          ROLE_PEER | ROLE_EXECD, PERM_DAEMON, false },
	{ MSG_STAGE_STORED,   stage_repl_stored,       ROLE_PEER,   PERM_DAEMON,         false },
	{ MSG_STAGE_WANT,     stage_repl_want,         ROLE_PEER,   PERM_DAEMON,         false },
	{ MSG_VOTE,           failover_vote,           ROLE_WITNESS, PERM_DAEMON,        false },
};

/* The row being handled: handlers run to completion, one at a time. */
static const struct handler *current;

enum perm
request_current_perm(void)
{
	assert(current);
	return current->perm;
}

void
request_dispatch(struct conn *c, json_t *msg)
{
	enum msg_type t = msg_type_of(msg);
	int64_t seq = msg_seq_of(msg, 0);

	for (size_t i = 0; i < sizeof handlers / sizeof handlers[0]; i++) {
		const struct handler *h = &handlers[i];
		if (h->type != t)
			continue;
		if (!(h->roles & c->role)) {
			net_send(c, proto_reply_err(seq, ERR_PERM, "%s is not allowed on a %s connection",
			    msg_type_name(t), c->role == ROLE_EXECD ? "execd" : c->role == ROLE_PEER ? "peer" :
			    c->role == ROLE_WITNESS ? "witness" : "client"));
			return;
		}
		/* A standby, or a primary that lost both its standby and a
		 * majority of the execds, takes no client writes.  Execds may
		 * still report what happened (the scheduler does not run). */
		if (h->mutates && c->role == ROLE_CLIENT && !repl_writable()) {
			net_send_unheld(c, proto_reply_redirect(seq, repl_primary_addr(), "this master (%s) does "
			    "not accept changes now; ask another", repl_role_name()));
			return;
		}
		if (!perm_allows(c, h->perm)) {
			log_info("%s: %s refused: %s (uid %u) is not %s", c->peer, msg_type_name(t), c->user,
			    (unsigned)c->uid, h->perm == PERM_DAEMON ? "the daemon identity" : perm_name(h->perm));
			if (h->perm == PERM_DAEMON)
				net_send(c, proto_reply_err(seq, ERR_PERM, "%s needs the daemon identity (root, the "
				    "master's own user or admin_user); %s is not", msg_type_name(t), c->user));
			else
				net_send(c, proto_reply_err(seq, ERR_PERM, "%s must be %s for %s", c->user,
				    h->perm == PERM_OPERATOR ? "operator or manager" : "manager", msg_type_name(t)));
			return;
		}
		if (h->mutates && space_refuses(c, t)) {
			net_send(c, proto_reply_err(seq, ERR_NOSPACE, ERR_NOSPACE_MSG));
			return;
		}
		current = h;
		h->fn(c, seq, msg);
		current = NULL;
		return;
	}
	net_send(c, proto_reply_err(seq, ERR_PROTO, "unknown request type \"%s\"", msg_type_text(msg)));
}

void
request_table_print(FILE *fp)
{
	static const struct { unsigned bit; const char *name; } roles[] = {
		{ ROLE_CLIENT, "client" }, { ROLE_EXECD, "execd" }, { ROLE_PEER, "peer" },
		{ ROLE_WITNESS, "witness" },
	};

	for (size_t i = 0; i < sizeof handlers / sizeof handlers[0]; i++) {
		const char *sep = "";
		fprintf(fp, "%s ", msg_type_name(handlers[i].type));
		for (size_t k = 0; k < sizeof roles / sizeof roles[0]; k++)
			if (handlers[i].roles & roles[k].bit) {
				fprintf(fp, "%s%s", sep, roles[k].name);
				sep = "|";
			}
		fprintf(fp, " %s %s\n", perm_name(handlers[i].perm), handlers[i].mutates ? "mutates" : "reads");
	}
}

static void
req_submit(struct conn *c, int64_t seq, json_t *msg)
{
	const char *why = NULL;
	struct msg_submit m;
	struct deps *d;
	char err[512];
	struct job *j;
	const struct user_cache *u;
	json_t *rep;
	char keybuf[96];

	if (msg_submit_unpack(msg, &m, &why) < 0) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", why));
		return;
	}
	/* A retried submission (the client lost the reply in a failover)
	 * gets the job its first try made, keyed by the client's key and
	 * the caller, so one user's key cannot reveal another's job. */
	if (m.key) {
		struct job *old;
		int64_t id;
		snprintf(keybuf, sizeof keybuf, "%u:%s", (unsigned)c->uid, m.key);
		if ((id = store_key_job(store, keybuf)) > 0 && (old = store_job_get(store, id, false)) != NULL) {
			rep = proto_reply_ok(seq);
			msg_submitted_add(rep, &(struct msg_submitted){ .id = old->id, .name = old->name,
			    .repeated = true });
			net_send(c, rep);
			job_free(old);
			return;
		}
	}
	j = job_from_json(m.job, &why);
	if (!j) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", why ? why : "SUBMIT without a job"));
		return;
	}
	if (!j->script == !j->argv) {
		why = "a job needs either a script or a command (-b y)";
		goto bad;
	}
	if ((why = job_name_problem(j->name)) != NULL)
		goto bad;
	if (!j->queue)
		j->queue = xstrdup(conf->queues[0].name);
	if (!conf_queue(conf, j->queue)) {
		rep = proto_reply_err(seq, ERR_INVAL, "Job was rejected because job requests unknown queue \"%s\".", j->queue);
		job_free(j);
		net_send(c, rep);
		return;
	}
	if (j->prio > 0 && !c->manager) {
		why = "only managers may give a job a positive priority (-p)";
		goto bad;
	}
	if (j->t_first && JOB_PARALLEL(j)) {
		why = "an array job (-t) cannot also be a parallel job (-pe, -n) in this release";
		goto bad;
	}
	if (JOB_PARALLEL(j) && pe_admit(j, err, sizeof err) < 0) {
		why = err;
		goto bad;
	}
	if ((u = user_lookup(c->uid)) == NULL) {
		rep = proto_reply_err(seq, ERR_AUTH, "unknown user id %u on the master", (unsigned)c->uid);
		job_free(j);
		net_send(c, rep);
		return;
	}
	if (c->uid == 0 && !conf->allow_root_jobs) {
		why = "jobs of root are not allowed here (allow_root_jobs in qmaster.conf)";
		goto bad;
	}
	/* What the master knows best overrides whatever the client sent: the
	 * uid and gid of the connection (SO_PEERCRED or the munge credential),
	 * the name, home and supplementary groups of the master's user
	 * database, resolved once here so exec hosts never look them up. */
	free(j->owner);
	j->owner = xstrdup(u->name);
	j->uid = c->uid;
	j->gid = c->gid;
	free(j->groups);
	j->groups = xcalloc((size_t)u->ngroups + 1, sizeof *j->groups);
	memcpy(j->groups, u->groups, (size_t)u->ngroups * sizeof *j->groups);
	j->ngroups = u->ngroups;
	free(j->home);
	j->home = xstrdup(u->home);
	j->id = 0;
	json_decref(j->staged_out);
	j->staged_out = NULL;
	if (sched_admit(j, u, m.verify, err, sizeof err) < 0 ||
	    stage_admit(j, c->uid, err, sizeof err) < 0) {
		why = err;
		goto bad;
	}
	job_fresh(j, now_ms());
	if (m.cron) {
		/* Each tick's job stands alone: it waits for nothing and
		 * starts at its tick. */
		if (m.deps || j->begin_time) {
			why = "--cron cannot be combined with -hold_jid, -W depend or -a";
			goto bad;
		}
		cron_submit(c, seq, m.cron, j);
		job_free(j);
		return;
	}
	if ((d = deps_resolve(m.deps, j, err, sizeof err)) == NULL) {
		why = err;
		goto bad;
	}

	qm_txn();
	deps_submit(j, d);
	if (store_job_insert(store, j) < 0)
		fatalx("cannot store a submitted job");
	deps_store(j, d);
	deps_free(d);
	if (m.key && store_key_put(store, keybuf, j->id, now_ms()) < 0)
		fatalx("cannot store a submission key");
	log_debug("job %lld submitted by %s", (long long)j->id, j->owner);
	rep = proto_reply_ok(seq);
	/* Every execd of a munge master has munge, so the job's shepherd
	 * will prove itself with a credential: qrsh then wants one, and a
	 * secret learnt on the wire is not enough to pose as the job. */
	msg_submitted_add(rep, &(struct msg_submitted){ .id = j->id, .name = j->name,
	    .qrsh_cred = j->qrsh && strcmp(conf->auth, "munge") == 0 });
	net_send(c, rep);
	if (JS_FINISHED(j->state)) {
		/* A dependency that can never be met: on record for qacct. */
		acct_record(j, ACCT_FAILED_BEFORE, NULL);
		request_job_finished(j);
	} else if (!j->hold)
		sched_kick();
	job_free(j);
	return;
bad:
	job_free(j);
	net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", why));
}

struct status_ctx {
	struct store *st;    /* what it reads: the master's, or the reader thread's */
	json_t     *jobs;
	json_t     *users;   /* NULL: everyone */
	bool        full;
	const struct conn *c;   /* full: who asks, for perm_job_private */
	bool        brief;   /* only what a listing shows, as text: */
	struct jtext text;
	int64_t     n;
	int64_t     limit;        /* brief: jobs per page (0: all) */
	int64_t     njobs, last;  /* brief: jobs listed, and the last one's id */
	int64_t     last_prio;    /* and its priority (the cursor of order "prio") */
};

static bool
user_in(json_t *users, const char *name)
{
	size_t i;
	json_t *v;
	if (!users)
		return true;
	json_array_foreach(users, i, v)
		if (json_is_string(v) && (strcmp(json_string_value(v), "*") == 0 ||
		    strcmp(json_string_value(v), name) == 0))
			return true;
	return false;
}

/* Whether a job of owner's is the next of the page: 0 yes, 1 the page is
 * full, -1 not one of the users asked for. */
static int
status_take(struct status_ctx *sc, int64_t id, const char *owner, int prio)
{
	if (!user_in(sc->users, owner))
		return -1;
	/* A page ends after whole jobs (an array's rows stay together). */
	if (sc->limit && sc->njobs == sc->limit)
		return 1;
	sc->njobs++;
	sc->last = id;
	sc->last_prio = prio;
	return 0;
}

/* A listing's row, written from the store's brief row. */
static int
status_brief(void *arg, const struct job_brief *b)
{
	struct status_ctx *sc = arg;
	int take = status_take(sc, b->id, b->owner, b->prio);

	if (take)
		return take > 0;
	if (b->t_first) {
		array_brief(sc->st, b, &sc->text, &sc->n);
		return 0;
	}
	if (sc->n++)
		jt_raw(&sc->text, ",", 1);
	job_brief_row(b, NULL, &sc->text);
	return 0;
}

static int
status_one(void *arg, struct job *j)
{
	struct status_ctx *sc = arg;
	int take = status_take(sc, j->id, j->owner, j->prio);
	json_t *o;

	if (take)
		return take > 0;
	o = job_to_json(j);
	job_json_public(o);
	if (j->t_first)
		array_status_json(sc->st, j, o, sc->full);
	if (!sc->full) {
		json_object_del(o, "script");
		json_object_del(o, "env");
	} else if (!perm_job_private(sc->c, j->owner))
		job_json_private_drop(o);
	json_array_append_new(sc->jobs, o);
	return 0;
}

/* A STATUS request's terms, checked: NULL, or the refusal. */
struct status_req {
	struct store_job_filter f;
	struct msg_status m;
};

static json_t *
status_parse(int64_t seq, json_t *msg, struct status_req *q)
{
	const char *why = NULL;

	memset(q, 0, sizeof *q);
	if (msg_status_unpack(msg, &q->m, &why) < 0)
		return proto_reply_err(seq, ERR_INVAL, "%s", why);
	q->f.states = q->m.state_mask;
	/* An array with pending tasks is a pending row whose tasks may run:
	 * read it for those, and leave its pending line to the client's filter. */
	if ((q->f.states & (1u << JS_RUNNING)) && !(q->f.states & (1u << JS_PENDING))) {
		q->f.states |= 1u << JS_PENDING;
		q->f.pending_arrays_only = true;
	}
	/* The other way round, a running array with a task still pending
	 * (held on its own, or in error) has that task's pending line (hqw,
	 * Eqw): read it for that line. */
	if ((q->f.states & (1u << JS_PENDING)) && !(q->f.states & (1u << JS_RUNNING))) {
		q->f.states |= 1u << JS_DISPATCHED | 1u << JS_RUNNING;
		q->f.running_pending_tasks_only = true;
	}
	/* A listing a page at a time: jobs after the id "after", at most
	 * "limit" of them; the reply says where to go on.  order "prio" lists
	 * the pending section in its own order (priority down, then id) from
	 * the cursor (after_prio, after), so a client prints each page as it
	 * comes. */
	q->f.after_id = q->m.after;
	return NULL;
}

json_t *
status_listing(struct store *st, int64_t seq, json_t *msg, const char *user, bool all,
    char **text, size_t *len)
{
	struct status_req q;
	struct status_ctx sc = { 0 };
	struct msg_status_next next;
	json_t *rep, *own = NULL;

	*text = NULL;
	if ((rep = status_parse(seq, msg, &q)) != NULL)
		return rep;
	assert(proto_is_listing(msg) && !q.m.jobs);
	sc.st = st;
	sc.brief = q.m.brief;
	sc.limit = q.m.limit;
	/* all: perm_sees_all decided it. */
	sc.users = all ? q.m.users : (own = json_pack("[s]", user));
	if (sc.brief) {
		jt_lit(&sc.text, "{\"type\":\"REPLY\",\"seq\":");
		jt_int(&sc.text, seq);
		jt_lit(&sc.text, ",\"ok\":true,");
		job_brief_head(&sc.text);
	} else
		sc.jobs = json_array();
	if ((q.m.by_prio ? store_pending_by_prio(st, q.m.after_prio, q.f.after_id,
	    sc.brief ? NULL : status_one, sc.brief ? status_brief : NULL, &sc) :
	    sc.brief ? store_briefs_foreach(st, &q.f, status_brief, &sc) :
	    store_jobs_foreach(st, &q.f, status_one, &sc)) < 0) {
		json_decref(sc.jobs);
		json_decref(own);
		free(jt_steal(&sc.text, NULL));
		return proto_reply_err(seq, ERR_INTERNAL, "cannot read the job list");
	}
	json_decref(own);
	next = (struct msg_status_next){ .has = sc.limit && sc.njobs == sc.limit, .id = sc.last,
	    .has_prio = q.m.by_prio, .prio = sc.last_prio };
	if (sc.brief) {
		jt_lit(&sc.text, "]");
		msg_status_next_text(&sc.text, &next);
		jt_lit(&sc.text, "}");
		*text = jt_steal(&sc.text, len);
		return NULL;
	}
	rep = proto_reply_ok(seq);
	msg_status_reply_add(rep, &(struct msg_status_reply){ .jobs = sc.jobs });
	msg_status_next_add(rep, &next);
	return rep;
}

/* STATUS of named jobs (qstat -j): their rows, and for one job what only
 * the master's own state tells (why it waits, mail not yet sent). */
static json_t *
status_jobs(struct conn *c, int64_t seq, const struct status_req *q)
{
	bool full = json_array_size(q->m.jobs) == 1;
	bool own = !perm_sees_all(c->operator);
	json_t *jobs = json_array(), *v, *rep;
	size_t i;

	json_array_foreach(q->m.jobs, i, v) {
		struct job *j = store_job_get(store, json_integer_value(v), full);
		if (j && (!own || strcmp(j->owner, c->user) == 0)) {
			status_one(&(struct status_ctx){ .st = store, .jobs = jobs, .full = full, .c = c }, j);
			/* Computed when asked, not kept per pass: qstat -j is rare. */
			if (full) {
				struct msg_job_more more = { 0 };
				char info[512];

				sched_why(j, info, sizeof info);
				more.scheduling_info = *info ? info : NULL;
				if (j->hold & HOLD_DEP || (j->t_first && !JS_FINISHED(j->state)))
					more.waiting_for = deps_waiting_json(j->id);
				if (!JS_FINISHED(j->state))
					more.successors = deps_successors_json(j->id);
				more.mail_pending = mail_pending_json(j->id);
				if (j->stage_out)
					more.staged_out = store_stage_out_of(store, j->id);
				if (JOB_PARALLEL(j) && !JS_FINISHED(j->state) && j->state != JS_PENDING)
					more.pe_hosts = pe_hosts_json(j);
				msg_job_more_add(json_array_get(jobs, json_array_size(jobs) - 1), &more);
			}
		}
		job_free(j);
	}
	rep = proto_reply_ok(seq);
	msg_status_reply_add(rep, &(struct msg_status_reply){ .jobs = jobs });
	return rep;
}

static void
req_status(struct conn *c, int64_t seq, json_t *msg)
{
	struct status_req q;
	json_t *rep;
	char *text;
	size_t len;

	if (proto_is_listing(msg)) {
		if ((rep = status_listing(store, seq, msg, c->user, perm_sees_all(c->operator),
		    &text, &len)) == NULL) {
			net_send_text(c, seq, text, len);
			return;
		}
	} else if ((rep = status_parse(seq, msg, &q)) == NULL)
		rep = status_jobs(c, seq, &q);
	net_send(c, rep);
}

/* DELETE, HOLD, RELEASE and qmod's job requests share the walk over ids
 * or users and the permission check; each has its own effect on one job
 * (HOLD's and RELEASE's are in qmod.c). */

static const char *
op_delete(struct conn *c, struct job *j, char *buf, size_t n, bool *ok)
{
	*ok = true;
	if (j->state == JS_PENDING) {
		j->state = JS_DELETED;
		j->end_time = now_ms();
		free(j->reason);
		j->reason = xasprintf("deleted by %s", c->user);
		/* Never ran: Grid Engine writes no accounting, neither do we. */
		if (store_job_update(store, j) < 0)
			fatalx("cannot store a deletion");
		request_job_finished(j);
		snprintf(buf, n, "%s has deleted job %lld", c->user, (long long)j->id);
		return buf;
	}
	/* Running or on its way: the execd kills it, CHILD_TERM ends it. */
	if (!j->delete_req) {
		j->delete_req = true;
		if (store_job_update(store, j) < 0)
			fatalx("cannot store a deletion request");
	}
	exechost_signal_job(j, 9);
	snprintf(buf, n, "%s has registered the job %lld for deletion", c->user, (long long)j->id);
	return buf;
}

const char *
request_job_delete(struct conn *c, struct job *j, char *buf, size_t n)
{
	bool ok;
	return op_delete(c, j, buf, n, &ok);
}

struct op_ctx {
	struct conn *c;
	job_op       op;
	const char  *verb;
	json_t      *results;
	json_t      *users;
	json_t      *tasks;   /* DELETE: {"ID": "FIRST-LAST:STEP"}, only those tasks */
};

static void
op_result(struct op_ctx *oc, int64_t id, bool ok, const char *message)
{
	msg_result_add(oc->results, &(struct msg_result){ .id = id, .ok = ok, .message = message });
}

static int
op_apply(void *arg, struct job *j)
{
	struct op_ctx *oc = arg;
	char buf[256];
	const char *m;
	bool ok;

	if (!perm_may_touch(oc->c, j->owner)) {
		snprintf(buf, sizeof buf, "%s - you do not have the necessary privileges to %s the job \"%lld\"",
		    oc->c->user, oc->verb, (long long)j->id);
		op_result(oc, j->id, false, buf);
		return 0;
	}
	if (j->t_first || oc->tasks) {
		char key[24];
		const char *spec;
		struct task_range r;

		snprintf(key, sizeof key, "%lld", (long long)j->id);
		spec = jstr(oc->tasks, key);
		if (spec && !j->t_first) {
			ok = false;
			snprintf(buf, sizeof buf, "job %lld is not an array job", (long long)j->id);
			m = buf;
		} else if (spec && task_range_parse(spec, &r) < 0) {
			ok = false;
			snprintf(buf, sizeof buf, "invalid task range \"%.64s\"", spec);
			m = buf;
		} else if (j->t_first && oc->op == op_delete)
			m = array_delete(oc->c, j, spec ? &r : NULL, buf, sizeof buf, &ok);
		else if (j->t_first && (spec || qmod_op_per_task(oc->op))) {
			/* Those tasks, or a whole array's running ones. */
			array_task_op(oc->c, j, spec ? &r : NULL, oc->op, oc->results);
			return 0;
		} else
			m = oc->op(oc->c, j, buf, sizeof buf, &ok);
		op_result(oc, j->id, ok, m);
		return 0;
	}
	m = oc->op(oc->c, j, buf, sizeof buf, &ok);
	op_result(oc, j->id, ok, m);
	return 0;
}

struct collect_ctx {
	json_t *users;
	json_t *ids;
};

static int
collect_ids(void *arg, struct job *j)
{
	struct collect_ctx *cc = arg;
	if (user_in(cc->users, j->owner))
		json_array_append_new(cc->ids, json_integer(j->id));
	return 0;
}

void
request_job_op(struct conn *c, int64_t seq, json_t *msg, job_op op, const char *verb)
{
	struct op_ctx oc = { c, op, verb, NULL, NULL, NULL };
	struct msg_jobsel m;
	const char *why = NULL;
	json_t *ids, *rep, *v, *owned = NULL;
	size_t i;

	if (msg_jobsel_unpack(msg, &m, &why) < 0) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", why));
		return;
	}
	ids = m.jobs;
	oc.users = m.users;
	oc.tasks = m.tasks;
	oc.results = json_array();
	qm_txn();
	if (!ids) {
		/* Collect first: the operations update rows the walk would read. */
		struct store_job_filter f = { .states = 1u << JS_PENDING | 1u << JS_DISPATCHED | 1u << JS_RUNNING };
		struct collect_ctx cc = { oc.users, json_array() };
		if (store_jobs_foreach(store, &f, collect_ids, &cc) < 0)
			fatalx("cannot read jobs");
		if (json_array_size(cc.ids) == 0)
			json_array_foreach(oc.users, i, v) {
				char buf[160];
				snprintf(buf, sizeof buf, "denied: user \"%s\" has no jobs", json_string_value(v));
				op_result(&oc, 0, false, buf);
			}
		ids = owned = cc.ids;
	}
	json_array_foreach(ids, i, v) {
		int64_t id = json_integer_value(v);
		struct job *j = store_job_get(store, id, false);
		if (!j || JS_FINISHED(j->state)) {
			char buf[128];
			snprintf(buf, sizeof buf, "denied: job \"%lld\" does not exist", (long long)id);
			op_result(&oc, id, false, buf);
		} else
			op_apply(&oc, j);
		job_free(j);
	}
	json_decref(owned);
	rep = proto_reply_ok(seq);
	msg_results_add(rep, &(struct msg_results){ .results = oc.results });
	net_send(c, rep);
}

static void
req_delete(struct conn *c, int64_t seq, json_t *msg)
{
	request_job_op(c, seq, msg, op_delete, "delete");
}

/* WAIT (qsub -sync y, qwait, drmaa_wait): answered when the job, or one
 * task of an array (task > 0), reaches a final state. */
struct waiter {
	TAILQ_ENTRY(waiter) entry;
	struct conn *c;
	int64_t      seq;
	int64_t      id;
	int          task;
};
static TAILQ_HEAD(, waiter) waiters = TAILQ_HEAD_INITIALIZER(waiters);

static void
wait_answer(struct conn *c, int64_t seq, const struct job *j)
{
	json_t *rep = proto_reply_ok(seq);
	json_t *o = job_to_json(j);
	job_json_public(o);
	json_object_del(o, "script");
	json_object_del(o, "env");
	msg_waited_add(rep, o);
	net_send(c, rep);
}

static void
req_wait(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_wait m = { 0 };
	const char *why = NULL;
	int64_t id = msg_wait_unpack(msg, &m, &why) == 0 ? m.id : 0;
	struct job *j = id > 0 ? store_job_get(store, id, false) : NULL;
	struct waiter *w;

	if (j && !perm_sees_all(c->operator) && strcmp(j->owner, c->user) != 0) {
		/* Not even whether it exists, as qstat would show. */
		job_free(j);
		j = NULL;
	}
	if (j && m.task > 0) {
		struct job *t = array_task_view(j, (int)m.task);
		job_free(j);
		j = t;
	}
	if (!j) {
		if (m.task > 0)
			net_send(c, proto_reply_err(seq, ERR_NOENT, "task %lld.%lld does not exist",
			    (long long)id, (long long)m.task));
		else
			net_send(c, proto_reply_err(seq, ERR_NOENT, "job \"%lld\" does not exist",
			    (long long)id));
		return;
	}
	if (JS_FINISHED(j->state)) {
		wait_answer(c, seq, j);
		job_free(j);
		return;
	}
	job_free(j);
	w = xcalloc(1, sizeof *w);
	w->c = c;
	w->seq = seq;
	w->id = id;
	w->task = (int)m.task;
	TAILQ_INSERT_TAIL(&waiters, w, entry);
}

/* Answers the waiters of j (a job, or a task view); when j is an array's
 * parent, those of its tasks too: a task that never ran ends with it. */
static void
wait_job_ended(const struct job *j)
{
	struct waiter *w, *tmp;

	TAILQ_FOREACH_SAFE(w, &waiters, entry, tmp) {
		struct job *t = NULL;
		if (w->id != j->id || (j->task > 0 && w->task != j->task))
			continue;
		if (j->task == 0 && w->task > 0) {
			if ((t = array_task_view(j, w->task)) == NULL)
				continue;
			wait_answer(w->c, w->seq, t);
			job_free(t);
		} else
			wait_answer(w->c, w->seq, j);
		TAILQ_REMOVE(&waiters, w, entry);
		free(w);
	}
}

void
request_job_finished(const struct job *j)
{
	/* A task's end matters to its parent only, which ends after the last. */
	if (j->task > 0) {
		wait_job_ended(j);
		array_task_ended(j);
		return;
	}
	mail_job_ended(j);
	deps_job_ended(j);
	wait_job_ended(j);
}

void
request_conn_gone(struct conn *c)
{
	struct waiter *w, *tmp;
	TAILQ_FOREACH_SAFE(w, &waiters, entry, tmp) {
		if (w->c != c)
			continue;
		TAILQ_REMOVE(&waiters, w, entry);
		free(w);
	}
}

static void
req_hosts(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_hosts m;
	const char *why = NULL;
	json_t *rep = proto_reply_ok(seq);
	/* The jobs shown follow qstat's privacy rule. */
	const char *only = perm_sees_all(c->operator) ? NULL : c->user;
	(void)msg_hosts_unpack(msg, &m, &why);
	msg_hosts_reply_add(rep, &(struct msg_hosts_reply){ .hosts = exechost_list_json(m.jobs, only) });
	net_send(c, rep);
}

/* ACCT (qacct): accounting rows a page at a time, or their sums. */
static int
acct_collect(void *arg, json_t *row)
{
	json_array_append(arg, row);
	return 0;
}

static void
req_acct(struct conn *c, int64_t seq, json_t *msg)
{
	struct store_acct_filter f = { 0 };
	struct msg_acct m;
	const char *summary, *why = NULL;
	json_t *rows, *rep;
	int64_t limit;
	int rc;

	if (msg_acct_unpack(msg, &m, &why) < 0) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", why));
		return;
	}
	summary = m.summary;
	limit = m.limit;
	f.job_id = m.id;
	f.name = m.name;
	f.owner = m.owner;
	f.project = m.project;
	f.account = m.account;
	f.since = m.since;
	f.queue = m.queue;
	f.host = m.host;
	f.group = m.group;
	f.pe = m.pe;
	f.slots = m.slots;
	f.from = m.from;
	f.to = m.to;
	f.by_end = m.by_end;
	f.after_end = m.after_end;
	f.after_row = m.after_row;
	f.limit = (int)limit;
	/* Like STATUS: without perm_sees_all a user sees only their own. */
	if (!perm_sees_all(c->operator)) {
		if (f.owner && strcmp(f.owner, c->user) != 0) {
			net_send(c, proto_reply_err(seq, ERR_PERM, "%s may see only their own accounting",
			    c->user));
			return;
		}
		f.owner = c->user;
	}
	rows = json_array();
	if (summary)
		rc = store_acct_summary(store, &f, (m.groups & MSG_ACCT_BY_HOST ? ACCT_BY_HOST : 0) |
		    (m.groups & MSG_ACCT_BY_QUEUE ? ACCT_BY_QUEUE : 0) |
		    (m.groups & MSG_ACCT_BY_OWNER ? ACCT_BY_OWNER : 0) |
		    (m.groups & MSG_ACCT_BY_GROUP ? ACCT_BY_GROUP : 0) |
		    (m.groups & MSG_ACCT_BY_PE ? ACCT_BY_PE : 0) |
		    (m.groups & MSG_ACCT_BY_SLOTS ? ACCT_BY_SLOTS : 0), acct_collect, rows);
	else
		rc = store_acct_foreach(store, &f, acct_collect, rows);
	if (rc < 0) {
		json_decref(rows);
		net_send(c, proto_reply_err(seq, ERR_INTERNAL, "cannot read the accounting"));
		return;
	}
	rep = proto_reply_ok(seq);
	/* A full page may have a next one: its cursor is the last row's. */
	if (!summary && json_array_size(rows) == (size_t)limit) {
		struct msg_acct_row last;
		msg_acct_row_unpack(json_array_get(rows, json_array_size(rows) - 1), &last);
		msg_acct_next_add(rep, last.end_time, last.row);
	}
	msg_acct_reply_add(rep, &(struct msg_acct_reply){ .rows = summary ? NULL : rows,
	    .summary = summary ? rows : NULL });
	net_send(c, rep);
}

/* qalter -h LETTERS, as Grid Engine's: u, o, s set the user, operator or
 * system hold, U, O, S clear it, n clears every hold c may clear. */
static const char *
alter_hold(struct conn *c, struct job *j, const char *letters)
{
	static const char set[] = "uos", clr[] = "UOS";
	static const unsigned bits[] = { HOLD_USER, HOLD_OPERATOR, HOLD_SYSTEM };
	unsigned may = perm_hold_bits(c), hold = j->hold;

	if (!*letters)
		return "qalter -h wants letters of u, o, s, n, U, O, S";
	for (const char *p = letters; *p; p++) {
		const char *at;
		unsigned b;

		if (*p == 'n') {
			hold &= ~(may & (HOLD_USER | HOLD_OPERATOR | HOLD_SYSTEM));
			continue;
		}
		if ((at = strchr(set, *p)) == NULL && (at = strchr(clr, *p)) == NULL)
			return "qalter -h wants letters of u, o, s, n, U, O, S";
		b = bits[at - (strchr(set, *p) ? set : clr)];
		if (!(may & b))
			return b == HOLD_SYSTEM ? "only managers may set or clear a system hold (-h s, S)" :
			    "only operators and managers may set or clear an operator hold (-h o, O)";
		if (strchr(set, *p))
			hold |= b;
		else
			hold &= ~b;
	}
	j->hold = hold;
	return NULL;
}

/* The changes of what is kept and shown: -soft -l, -P, -A, -ac/-dc/-sc, -R,
 * -js.  NULL, or why the change is refused. */
static const char *
alter_recorded(const struct msg_alter *m, struct job *j)
{
	const char *why = NULL;
	json_t *v;
	size_t i;

	if (m->soft) {
		struct job_req soft = { 0 };
		if (req_from_json(&soft, m->soft, &why) < 0) {
			req_clear(&soft);
			return why;
		}
		req_clear(&j->soft);
		j->soft = soft;
	}
	if (m->project) {
		free(j->project);
		j->project = xstrdup(m->project);
	}
	if (m->account) {
		free(j->account);
		j->account = xstrdup(m->account);
	}
	/* Each "aNAME=V,...", "dNAME,..." or "sNAME=V,...", in the order given. */
	json_array_foreach(m->context, i, v)
		if (job_context_apply(&j->context, json_string_value(v)[0], json_string_value(v) + 1,
		    &why) < 0)
			return why;
	if (m->reserve >= 0)
		j->reserve = m->reserve;
	if (m->js >= 0)
		j->js = m->js;
	return NULL;
}

/* ALTER (qalter): changes of a pending job, checked as a submission is. */
static const char *
alter_one(struct conn *c, const struct msg_alter *m, struct job *j, char *buf, size_t n, bool *ok)
{
	const char *why = NULL, *s;
	struct job_req req = { 0 };
	const struct user_cache *u;
	char err[400];

	*ok = false;
	if (!perm_may_touch(c, j->owner)) {
		snprintf(buf, n, "%s - you do not have the necessary privileges to modify the job \"%lld\"",
		    c->user, (long long)j->id);
		return buf;
	}
	if (j->state != JS_PENDING) {
		snprintf(buf, n, "denied: job \"%lld\" is already running and cannot be changed",
		    (long long)j->id);
		return buf;
	}
	if (m->has_prio) {
		if (!m->prio_ok) {
			snprintf(buf, n, "the priority must be an integer from -1023 to 1024");
			return buf;
		}
		if (m->prio > 0 && !c->manager) {
			snprintf(buf, n, "only managers may give a job a positive priority (-p)");
			return buf;
		}
		j->prio = m->prio;
	}
	if ((s = m->name)) {
		if (job_name_problem(s)) {
			snprintf(buf, n, "%s", job_name_problem(s));
			return buf;
		}
		free(j->name);
		j->name = xstrdup(s);
	}
	if ((s = m->in)) {
		free(j->in_path);
		j->in_path = xstrdup(s);
	}
	if ((s = m->queue)) {
		if (!conf_queue(conf, s)) {
			snprintf(buf, n, "Job was rejected because job requests unknown queue \"%s\".", s);
			return buf;
		}
		free(j->queue);
		j->queue = xstrdup(s);
	}
	if (m->req) {
		if (req_from_json(&req, m->req, &why) < 0) {
			req_clear(&req);
			snprintf(buf, n, "%s", why);
			return buf;
		}
		/* qalter -l replaces the request, but not where the job's slots
		 * go: those of -l slots=N stay on one host. */
		if (!req.slots)
			req.slots = j->req.slots;
		if (!req.hard_queue) {
			req.hard_queue = j->req.hard_queue;
			j->req.hard_queue = NULL;
		}
		req_clear(&j->req);
		j->req = req;
	}
	if ((s = m->queue)) {
		free(j->req.hard_queue);
		j->req.hard_queue = xstrdup(s);
	}
	if ((s = m->hold) && (why = alter_hold(c, j, s)) != NULL) {
		snprintf(buf, n, "%s", why);
		return buf;
	}
	if ((why = alter_recorded(m, j)) != NULL) {
		snprintf(buf, n, "%s", why);
		return buf;
	}
	u = user_lookup(j->uid);
	/* Whether some host could ever run it is asked again only when where
	 * it may run changed, as Grid Engine's qalter does. */
	if (sched_admit(j, u, m->verify && (m->req || m->queue), err, sizeof err) < 0) {
		snprintf(buf, n, "%s", err);
		return buf;
	}
	if (store_job_update(store, j) < 0)
		fatalx("cannot store a change of job %lld", (long long)j->id);
	sched_kick();
	*ok = true;
	snprintf(buf, n, "modified job %lld", (long long)j->id);
	return buf;
}

static void
req_alter(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_alter m;
	const char *why = NULL;
	json_t *results, *v, *rep;
	size_t i;

	if (msg_alter_unpack(msg, &m, &why) < 0) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", why));
		return;
	}
	qm_txn();
	results = json_array();
	json_array_foreach(m.jobs, i, v) {
		int64_t id = json_integer_value(v);
		struct job *j = store_job_get(store, id, false);
		char buf[512];
		const char *text;
		bool ok = false;

		if (!j || JS_FINISHED(j->state)) {
			snprintf(buf, sizeof buf, "denied: job \"%lld\" does not exist", (long long)id);
			text = buf;
		} else
			text = alter_one(c, &m, j, buf, sizeof buf, &ok);
		msg_result_add(results, &(struct msg_result){ .id = id, .ok = ok, .message = text });
		job_free(j);
	}
	rep = proto_reply_ok(seq);
	msg_results_add(rep, &(struct msg_results){ .results = results });
	net_send(c, rep);
}

/* CONF (qconf): the queues as configured, and re-reading qmaster.conf. */
static void
req_conf(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_conf m;
	const char *why = NULL, *op, *name, *pename;
	const struct qm_queue *q;
	const struct qm_pe *pe;
	json_t *rep;
	char err[512];

	if (msg_conf_unpack(msg, &m, &why) < 0) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", why));
		return;
	}
	op = m.op;
	name = m.queue;
	pename = m.pe;
	if (strcmp(op, "list") == 0) {
		struct msg_conf_reply l = { .queues = json_array(), .pes = json_array(),
		    .managers = json_array(), .operators = json_array() };
		for (int i = 0; i < conf->nqueues; i++)
			json_array_append_new(l.queues, json_string(conf->queues[i].name));
		for (int i = 0; i < conf->npes; i++)
			json_array_append_new(l.pes, json_string(conf->pes[i].name));
		/* root is always a manager, as in Grid Engine. */
		json_array_append_new(l.managers, json_string("root"));
		for (char **u = conf->managers; u && *u; u++)
			if (strcmp(*u, "root") != 0)
				json_array_append_new(l.managers, json_string(*u));
		for (char **u = conf->operators; u && *u; u++)
			json_array_append_new(l.operators, json_string(*u));
		rep = proto_reply_ok(seq);
		msg_conf_reply_add(rep, &l);
	} else if (strcmp(op, "global") == 0) {
		char *text = conf_global_text(conf);
		rep = proto_reply_ok(seq);
		msg_conf_reply_add(rep, &(struct msg_conf_reply){ .text = text });
		free(text);
	} else if (strcmp(op, "show") == 0 && pename) {
		char *text;
		if ((pe = conf_pe(conf, pename)) == NULL) {
			net_send(c, proto_reply_err(seq, ERR_NOENT, "%s is not a parallel environment", pename));
			return;
		}
		text = pe_conf_text(pe);
		rep = proto_reply_ok(seq);
		msg_conf_reply_add(rep, &(struct msg_conf_reply){ .text = text });
		free(text);
	} else if (strcmp(op, "show") == 0) {
		char *text;
		if (!name || (q = conf_queue(conf, name)) == NULL) {
			net_send(c, proto_reply_err(seq, ERR_NOENT, "%s is not a queue name", name ? name : "(none)"));
			return;
		}
		text = conf_queue_text(q);
		rep = proto_reply_ok(seq);
		msg_conf_reply_add(rep, &(struct msg_conf_reply){ .text = text });
		free(text);
	} else {
		if (!c->manager) {
			net_send(c, proto_reply_err(seq, ERR_PERM, "%s must be manager for this operation", c->user));
			return;
		}
		if (conf_reload(err, sizeof err) < 0) {
			net_send(c, proto_reply_err(seq, ERR_INVAL, "%s; the running configuration is kept", err));
			return;
		}
		rep = msg_reply_pack(&(struct msg_reply){ .seq = seq, .ok = true,
		    .message = "configuration re-read" });
	}
	net_send(c, rep);
}
