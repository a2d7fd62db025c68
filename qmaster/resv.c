/* resv.c: reservations of named host sets (GLUnix's reserve), their windows and jobs.
 *
 * Creation with owner and overlap checks, the timer that opens and closes
 * their windows, and what happens to jobs at each. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/msg.h"
#include "common/msg_req.h"
#include "common/msg_rows.h"
#include "qmaster/qmaster.h"
#include "spool/spool.h"

static TAILQ_HEAD(, resv) resvs = TAILQ_HEAD_INITIALIZER(resvs);

/* A start this far behind the master's clock is still "now" (the client's
 * "now" travels before it arrives). */
#define RESV_PAST_SLACK_MS 5000
#define RESV_MAX 10000

struct resv *
resv_find(const char *name)
{
	struct resv *r;
	TAILQ_FOREACH(r, &resvs, entry)
		if (strcmp(r->m.name, name) == 0)
			return r;
	return NULL;
}

static void
resv_free(struct resv *r)
{
	free(r->m.name);
	free(r->m.owner);
	strv_free(r->m.users);
	strv_free(r->hosts);
	free(r);
}

static int
load_one(void *arg, const struct resv_rec *rec)
{
	struct resv *r = xcalloc(1, sizeof *r);
	(void)arg;
	r->m.name = xstrdup(rec->name);
	r->m.owner = xstrdup(rec->owner);
	r->m.users = strv_dup(rec->users);
	r->m.start = rec->start;
	r->m.end = rec->end;
	r->m.active = rec->state == 1;
	r->uid = (uid_t)rec->uid;
	r->hosts = strv_dup(rec->hosts);
	r->flags = rec->flags;
	r->mail = rec->mail;
	r->created = rec->created;
	TAILQ_INSERT_TAIL(&resvs, r, entry);
	return 0;
}

static void resv_index(void);

/* State is in the database, so a restarted master continues the windows
 * where they are: its first tick opens or closes what fell due meanwhile. */
void
resv_init(void)
{
	if (store_resv_foreach(store, load_one, NULL) < 0)
		fatalx("cannot read the reservations");
	resv_index();
}

void
resv_free_all(void)
{
	struct resv *r;
	while ((r = TAILQ_FIRST(&resvs)) != NULL) {
		TAILQ_REMOVE(&resvs, r, entry);
		resv_free(r);
	}
	for (struct exechost *h = exechost_next(NULL); h; h = exechost_next(h)) {
		free(h->resv);
		h->resv = NULL;
		h->nresv = 0;
	}
}

/* Rebuilds each host's list of the reservations that hold it. */
static void
resv_index(void)
{
	struct exechost *h;
	struct resv *r;

	for (h = exechost_next(NULL); h; h = exechost_next(h)) {
		free(h->resv);
		h->resv = NULL;
		h->nresv = 0;
	}
	TAILQ_FOREACH(r, &resvs, entry)
		for (char **p = r->hosts; p && *p; p++)
			if ((h = exechost_find(*p)) != NULL) {
				h->resv = xrealloc(h->resv, ((size_t)h->nresv + 1) * sizeof *h->resv);
				h->resv[h->nresv++] = &r->m;
			}
}

const struct match_resv *
resv_active_on(const struct exechost *h)
{
	for (int i = 0; i < h->nresv; i++)
		if (h->resv[i]->active)
			return h->resv[i];
	return NULL;
}

/* The soonest reservation still to open on h: it keeps the host from jobs
 * that would run into it, so the status page says why such a host stays empty. */
const struct match_resv *
resv_next_on(const struct exechost *h)
{
	const struct match_resv *next = NULL;

	for (int i = 0; i < h->nresv; i++)
		if (!h->resv[i]->active && (!next || h->resv[i]->start < next->start))
			next = h->resv[i];
	return next;
}

static void
resv_store(const struct resv *r)
{
	struct resv_rec rec = { r->m.name, r->m.owner, r->uid, r->m.users, r->hosts, r->m.start,
	    r->m.end, r->flags, r->mail, r->m.active ? 1 : 0, r->created };
	qm_txn();
	if (store_resv_put(store, &rec) < 0)
		fatalx("cannot store reservation %s", r->m.name);
}

static char *
strv_join(char *const *v, const char *sep)
{
	char *s = xstrdup(""), *t;
	for (size_t i = 0; v && v[i]; i++) {
		t = xasprintf("%s%s%s", s, i ? sep : "", v[i]);
		free(s);
		s = t;
	}
	return s;
}

static void
resv_mail(const struct resv *r, const char *what)
{
	char a[40], b[40], *hosts = strv_join(r->hosts, " "), *subject, *body;

	fmt_when(a, sizeof a, r->m.start);
	fmt_when(b, sizeof b, r->m.end);
	subject = xasprintf("Reservation %s %s", r->m.name, what);
	body = xasprintf("Reservation %s of %s %s.\nHosts: %s\nWindow: %s to %s\n", r->m.name,
	    r->m.owner, what, hosts, a, b);
	mail_user(r->m.owner, subject, body);
	free(hosts);
	free(subject);
	free(body);
}

/* Is j tied to reservation name: -ar NAME, or hosts= naming it? */
static bool
job_tied(const struct job *j, const char *name)
{
	char err[160];
	struct nodeset *ns;
	bool tied;

	if (j->req.ar && strcmp(j->req.ar, name) == 0)
		return true;
	if (!j->req.hosts || (ns = nodeset_parse(j->req.hosts, err, sizeof err)) == NULL)
		return false;
	tied = nodeset_names(ns, name);
	nodeset_free(ns);
	return tied;
}

static char *
kill_key(const struct job *j)
{
	return xasprintf("resv.kill.%lld.%d", (long long)j->id, j->task);
}

/* Kills an attempt for a reservation; its CHILD_TERM then ends it with
 * why (requeued when it may run again and requeue is asked). */
static void
resv_kill(const struct job *j, bool requeue, const char *why)
{
	char *key = kill_key(j), *val = xasprintf("%c%s", requeue && job_rerunnable(j) ? 'r' : 'f', why);
	qm_txn();
	if (store_meta_set(store, key, val) < 0)
		fatalx("cannot store the kill of job %lld", (long long)j->id);
	if (!exechost_signal_job(j, 9))
		log_info("job %lld: its host is away; it ends when the host returns", (long long)j->id);
	free(key);
	free(val);
}

char *
resv_job_killed(const struct job *j, bool *requeue)
{
	char *key = kill_key(j), *val = NULL, *why = NULL;

	if (store_meta_get(store, key, &val) == 0 && val && *val) {
		*requeue = val[0] == 'r';
		why = xstrdup(val + 1);
		qm_txn();
		if (store_meta_set(store, key, NULL) < 0)
			fatalx("cannot store the end of a kill");
	}
	free(val);
	free(key);
	return why;
}

struct running_ctx {
	struct resv *r;
	bool         start;      /* vacating others at the start, else ending its own */
	json_t      *seen;       /* "ID.TASK" done, so a task is not killed twice */
};

static bool
on_resv_host(const struct resv *r, const struct job *j)
{
	char **hosts = JOB_PARALLEL(j) ? pe_host_list(j) : NULL;
	bool on = false;

	if (!JOB_PARALLEL(j))
		return j->host && strv_has(r->hosts, j->host);
	for (char **p = hosts; p && *p && !on; p++)
		on = strv_has(r->hosts, *p);
	strv_free(hosts);
	return on;
}

static int
running_one(void *arg, struct job *j)
{
	struct running_ctx *rc = arg;
	char why[200];

	if (j->t_first && !j->task)
		return 0;       /* an array's parent: its tasks come one by one */
	if (!on_resv_host(rc->r, j))
		return 0;
	if (rc->start && !match_resv_admits(&rc->r->m, j)) {
		snprintf(why, sizeof why, "vacated for reservation %s", rc->r->m.name);
		resv_kill(j, true, why);
		log_info("job %lld vacated for reservation %s", (long long)j->id, rc->r->m.name);
	} else if (!rc->start && job_tied(j, rc->r->m.name)) {
		snprintf(why, sizeof why, "reservation %s ended", rc->r->m.name);
		resv_kill(j, false, why);
		log_info("job %lld killed: reservation %s ended", (long long)j->id, rc->r->m.name);
	}
	return 0;
}

static void
walk_running(struct resv *r, bool start)
{
	struct store_job_filter f = { .states = 1u << JS_DISPATCHED | 1u << JS_RUNNING };
	struct running_ctx rc = { r, start, NULL };

	if (store_jobs_foreach(store, &f, running_one, &rc) < 0 ||
	    array_tasks_active(NULL, running_one, &rc) < 0)
		fatalx("cannot read the running jobs");
}

static int
collect_pending(void *arg, struct job *j)
{
	json_t *a = ((json_t **)arg)[0];
	const char *name = json_string_value(((json_t **)arg)[1]);
	if (job_tied(j, name))
		json_array_append_new(a, json_integer(j->id));
	return 0;
}

static void
fail_pending(struct resv *r, const char *how)
{
	struct store_job_filter f = { .states = 1u << JS_PENDING };
	json_t *arg[2] = { json_array(), json_string(r->m.name) }, *v;
	size_t i;

	if (store_jobs_foreach(store, &f, collect_pending, arg) < 0)
		fatalx("cannot read the pending jobs");
	json_array_foreach(arg[0], i, v) {
		struct job *j = store_job_get(store, json_integer_value(v), false);
		if (!j)
			continue;
		char *why = r->m.active ? xasprintf("reservation ended: %s", r->m.name) :
		    xasprintf("reservation %s %s", r->m.name, how);
		if (j->t_first && array_started(j)) {
			/* Its tasks that ran keep their own ends. */
			array_fail_pending(j, why);
			free(why);
			job_free(j);
			continue;
		}
		qm_txn();
		j->state = JS_FAILED;
		j->end_time = now_ms();
		free(j->reason);
		j->reason = why;
		if (store_job_update(store, j) < 0)
			fatalx("cannot store job %lld", (long long)j->id);
		acct_record(j, ACCT_FAILED_BEFORE, NULL);
		request_job_finished(j);
		job_free(j);
	}
	json_decref(arg[0]);
	json_decref(arg[1]);
}

static void
resv_open(struct resv *r)
{
	r->m.active = true;
	resv_store(r);
	log_info("reservation %s of %s starts", r->m.name, r->m.owner);
	if (r->flags & RESV_EXCLUSIVE)
		walk_running(r, true);
	if (r->mail & MAIL_BEGIN)
		resv_mail(r, "started");
	sched_kick();
}

static void
resv_close(struct resv *r, const char *how)
{
	log_info("reservation %s of %s %s", r->m.name, r->m.owner, how);
	qm_txn();
	if (!(r->flags & RESV_OVERRUN))
		walk_running(r, false);
	fail_pending(r, how);
	if (r->mail & MAIL_END)
		resv_mail(r, how);
	if (store_resv_delete(store, r->m.name) < 0)
		fatalx("cannot delete reservation %s", r->m.name);
	TAILQ_REMOVE(&resvs, r, entry);
	resv_free(r);
	resv_index();
	sched_kick();
}

void
resv_tick(int64_t now)
{
	struct resv *r, *t;

	TAILQ_FOREACH_SAFE(r, &resvs, entry, t) {
		if (r->m.end <= now)
			resv_close(r, "ended");
		else if (!r->m.active && r->m.start <= now)
			resv_open(r);
	}
}

/* Creating one. */

static bool
overlaps(const struct match_resv *r, int64_t start, int64_t end)
{
	return r->start < end && start < r->end;
}

/* The first reservation on h that overlaps the window, or NULL. */
static const struct match_resv *
overlap_on(const struct exechost *h, int64_t start, int64_t end)
{
	for (int i = 0; i < h->nresv; i++)
		if (overlaps(h->resv[i], start, end))
			return h->resv[i];
	return NULL;
}

static void
say_overlap(char *buf, size_t n, const char *lead, const struct match_resv *o)
{
	char a[40], b[40];
	fmt_when(a, sizeof a, o->start);
	fmt_when(b, sizeof b, o->end);
	snprintf(buf, n, "%soverlap with %s from %s to %s", lead, o->name, a, b);
}

static int
host_name_cmp(const void *a, const void *b)
{
	return strcmp((*(struct exechost *const *)a)->name, (*(struct exechost *const *)b)->name);
}

/* -n COUNT [-l ATTRS]: the first COUNT hosts by name that the requester may
 * reserve, that have the attributes and are free in the window. */
static char **
pick_hosts(struct conn *c, int count, const struct job *want, int64_t start, int64_t end,
    char *err, size_t n)
{
	struct exechost *h, **v;
	const struct match_resv *first = NULL;
	size_t nh = 0, k = 0;
	int mine = 0, got = 0;
	char **out = xcalloc((size_t)count + 1, sizeof *out);

	for (h = exechost_next(NULL); h; h = exechost_next(h))
		nh++;
	v = xcalloc(nh + 1, sizeof *v);
	for (h = exechost_next(NULL); h; h = exechost_next(h))
		v[k++] = h;
	qsort(v, nh, sizeof *v, host_name_cmp);
	for (k = 0; k < nh && got < count; k++) {
		struct match_host m = { .name = v[k]->name, .attrs = &v[k]->attrs, .slots = v[k]->slots,
		    .uid = v[k]->uid };
		const struct match_resv *o;
		const char *key = NULL;
		if (!perm_reserve_host(c, v[k]) || match_host(want, NULL, NULL, &m, false, &key) != MW_OK)
			continue;
		mine++;
		if ((o = overlap_on(v[k], start, end)) != NULL) {
			if (!first)
				first = o;
			continue;
		}
		out[got++] = xstrdup(v[k]->name);
	}
	free(v);
	if (got == count)
		return out;
	strv_free(out);
	if (mine < count)
		snprintf(err, n, "not enough hosts you own%s: %d of %d", req_empty(&want->req) ? "" :
		    " with those attributes", mine, count);
	else {
		char lead[80];
		snprintf(lead, sizeof lead, "only %d of %d hosts you own are free then: ", got, count);
		say_overlap(err, n, lead, first);
	}
	return NULL;
}

/* -H EXPR: every host it denotes, each one the requester's and free. */
static char **
expr_hosts(struct conn *c, const char *expr, int64_t start, int64_t end, char *err, size_t n)
{
	char **hosts = hostlist_eval(expr, err, n);

	if (!hosts)
		return NULL;
	if (!hosts[0])
		snprintf(err, n, "%s denotes no host", expr);
	for (char **p = hosts; *p; p++) {
		struct exechost *h = exechost_find(*p);
		const struct match_resv *o;
		if (!perm_reserve_host(c, h)) {
			snprintf(err, n, "you may not reserve host %s (you are not one of its owners)", *p);
			break;
		}
		if ((o = overlap_on(h, start, end)) != NULL) {
			char lead[300];
			snprintf(lead, sizeof lead, "host %s: ", *p);
			say_overlap(err, n, lead, o);
			break;
		}
	}
	if (!hosts[0] || *err) {
		strv_free(hosts);
		return NULL;
	}
	return hosts;
}

static json_t *
resv_json(const struct resv *r)
{
	return msg_resv_row_pack(&(struct msg_resv_row){ .name = r->m.name, .owner = r->m.owner,
	    .users = strv_json(r->m.users, true, NULL), .hosts = strv_json(r->hosts, true, NULL),
	    .start = r->m.start, .end = r->m.end, .state = r->m.active ? "active" : "waiting",
	    .exclusive = (r->flags & RESV_EXCLUSIVE) != 0, .overrun = (r->flags & RESV_OVERRUN) != 0,
	    .mail = (r->mail & (MAIL_BEGIN | MAIL_END)) == (MAIL_BEGIN | MAIL_END) ? "be" :
	    r->mail & MAIL_BEGIN ? "b" : r->mail & MAIL_END ? "e" : "" });
}

json_t *
resv_list_json(void)
{
	json_t *a = json_array();
	struct resv *r;
	TAILQ_FOREACH(r, &resvs, entry)
		json_array_append_new(a, resv_json(r));
	return a;
}

static void
resv_list(struct conn *c, int64_t seq)
{
	json_t *rep = proto_reply_ok(seq);
	msg_reserve_reply_add(rep, &(struct msg_reserve_reply){ .reservations = resv_list_json() });
	net_send(c, rep);
}

static void
resv_create(struct conn *c, int64_t seq, const struct msg_reserve *m)
{
	const char *name = m->name, *expr = m->hosts, *attrs = m->attrs, *mail = m->mail, *why = NULL;
	int64_t now = now_ms(), start = m->start, end = m->end, dur = m->duration, count = m->count;
	json_t *users = m->users, *v, *rep;
	struct job want = { .owner = c->user, .uid = c->uid, .slots = 1 };
	char err[600] = "", **hosts = NULL;
	unsigned mflags = 0;
	struct resv *r;
	size_t i;

	if (!name || !hostlist_valid_name(name))
		why = "a reservation needs a name (-N): a letter, then letters, digits, - . _; at most 64";
	else if (resv_find(name))
		snprintf(err, sizeof err, "reservation %s already exists", name);
	else if (exechost_find(name) || hostlist_is_alias(name))
		snprintf(err, sizeof err, "%s is already the name of a %s", name,
		    exechost_find(name) ? "host" : "alias");
	else if (!expr == !count)
		why = "give either a number of hosts (-n) or a node-set expression (-H)";
	else if (count < 0 || count > 100000)
		why = "-n wants a number of hosts from 1 to 100000";
	else if (!end == !dur || end < 0 || dur < 0)
		why = "give either a duration (-d) or an end (-e)";
	else if (mail && mail_flags_parse(mail, &mflags) < 0)
		why = "-m wants b, e or both";
	else if (users && (!json_is_array(users) || json_array_size(users) > 1000))
		why = "users must be a list of user names";
	else if (expr && attrs)
		why = "-l goes with -n, not with -H";
	if (why || *err) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", why ? why : err));
		return;
	}
	if (!start)
		start = now;
	if (start < now - RESV_PAST_SLACK_MS) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "the start is in the past"));
		return;
	}
	if (start < now)
		start = now;
	if (dur)
		end = start + dur * 1000;
	if (end <= start) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "the reservation ends before it starts"));
		return;
	}
	json_array_foreach(users, i, v)
		if (!json_is_string(v) || !json_string_length(v) ||
		    strpbrk(json_string_value(v), " ,\t\"") || json_string_length(v) > 64) {
			net_send(c, proto_reply_err(seq, ERR_INVAL, "a user name is empty, too long, or holds "
			    "a blank, comma or quote"));
			return;
		}
	if (attrs && req_parse(&want.req, attrs, err, sizeof err) < 0) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "-l %s: %s", attrs, err));
		return;
	}
	{
		int nr = 0;
		TAILQ_FOREACH(r, &resvs, entry)
			nr++;
		if (nr >= RESV_MAX) {
			req_clear(&want.req);
			net_send(c, proto_reply_err(seq, ERR_LIMIT, "there are already %d reservations", nr));
			return;
		}
	}
	hosts = expr ? expr_hosts(c, expr, start, end, err, sizeof err) :
	    pick_hosts(c, (int)count, &want, start, end, err, sizeof err);
	req_clear(&want.req);
	if (!hosts) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "reservation refused: %s", err));
		return;
	}
	r = xcalloc(1, sizeof *r);
	r->m.name = xstrdup(name);
	r->m.owner = xstrdup(c->user);
	r->m.users = xcalloc((users ? json_array_size(users) : 0) + 1, sizeof *r->m.users);
	json_array_foreach(users, i, v)
		r->m.users[i] = xstrdup(json_string_value(v));
	r->m.start = start;
	r->m.end = end;
	r->uid = c->uid;
	r->hosts = hosts;
	r->flags = (m->exclusive ? RESV_EXCLUSIVE : 0) | (m->overrun ? RESV_OVERRUN : 0);
	r->mail = mflags & (MAIL_BEGIN | MAIL_END);
	r->created = now;
	TAILQ_INSERT_TAIL(&resvs, r, entry);
	resv_index();
	resv_store(r);
	log_info("%s reserved %s", c->user, name);
	rep = proto_reply_ok(seq);
	msg_reserve_reply_add(rep, &(struct msg_reserve_reply){ .reservation = resv_json(r) });
	net_send(c, rep);
	/* Its start may be now; the h_rt guard changes either way. */
	if (start <= now)
		resv_open(r);
	sched_kick();
}

/* RESERVE: op "list", or a new reservation. */
void
resv_request(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_reserve m;
	const char *why = NULL;

	if (msg_reserve_unpack(msg, &m, &why) < 0)
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", why));
	else if (m.op && strcmp(m.op, "list") == 0)
		resv_list(c, seq);
	else
		resv_create(c, seq, &m);
}

/* UNRESERVE: ends one now, as its end would (owner or manager). */
void
unresv_request(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_unreserve m;
	const char *why = NULL, *name;
	struct resv *r;
	char say[300];
	json_t *rep;

	(void)msg_unreserve_unpack(msg, &m, &why);
	name = m.name;
	r = name ? resv_find(name) : NULL;
	if (!r) {
		net_send(c, proto_reply_err(seq, ERR_NOENT, "no reservation \"%s\"", name ? name : ""));
		return;
	}
	if (!perm_resv(c, r)) {
		net_send(c, proto_reply_err(seq, ERR_PERM, "only %s or a manager may end reservation %s",
		    r->m.owner, r->m.name));
		return;
	}
	/* One that never started is cancelled, not ended: say which. */
	snprintf(say, sizeof say, "reservation %s %s", r->m.name,
	    r->m.active ? "ended early" : "cancelled: it had not started");
	resv_close(r, r->m.active ? "was ended early" : "was cancelled before it started");
	rep = msg_reply_pack(&(struct msg_reply){ .seq = seq, .ok = true, .message = say });
	net_send(c, rep);
}
