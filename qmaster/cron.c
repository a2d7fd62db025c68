/* cron.c: cron entries (qsub --cron): one ordinary job per tick, without overlap.
 *
 * Storing them, and listing, pausing and removing them (the CRON request). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg_req.h"
#include "common/msg_rows.h"
#include "qmaster/qmaster.h"
#include "spool/spool.h"

static int64_t
next_ms(const char *spec, int64_t after_ms)
{
	struct cron_sched c;
	char err[256];
	time_t t;

	if (cron_parse(spec, &c, err, sizeof err) < 0)
		return -1;
	/* A tick is a whole minute: the next one after this minute. */
	t = cron_next(&c, (time_t)(after_ms / 1000));
	return t == (time_t)-1 ? -1 : (int64_t)t * 1000;
}

void
cron_submit(struct conn *c, int64_t seq, const char *spec, struct job *j)
{
	struct cron_rec r = { 0 };
	struct cron_sched cs;
	char err[256], when[32];
	json_t *o, *rep;

	if (cron_parse(spec, &cs, err, sizeof err) < 0) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "--cron: %s", err));
		return;
	}
	if ((r.next_run = next_ms(spec, now_ms())) < 0) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "--cron: \"%s\" never fires", spec));
		return;
	}
	o = job_to_json(j);
	r.job = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!r.job)
		fatalx("out of memory");
	r.owner = j->owner;
	r.uid = j->uid;
	r.spec = (char *)spec;
	r.created = now_ms();
	qm_txn();
	if (store_cron_insert(store, &r) < 0)
		fatalx("cannot store a cron entry");
	fmt_when(when, sizeof when, r.next_run);
	log_info("cron entry c%lld (%s) of %s: next run at %s", (long long)r.id, spec, j->owner, when);
	rep = proto_reply_ok(seq);
	msg_submitted_add(rep, &(struct msg_submitted){ .cron = r.id, .name = j->name, .next_run = r.next_run });
	net_send(c, rep);
	free(r.job);
}

/* A fresh job from the entry's template: its own id, submitted now. */
static struct job *
cron_make_job(struct cron_rec *r)
{
	json_t *o = json_loads(r->job, 0, NULL);
	const char *why = NULL;
	struct job *j;

	if (!o || (j = job_from_json(o, &why)) == NULL) {
		log_warnx("cron entry c%lld: its job cannot be read (%s); entry paused",
		    (long long)r->id, why ? why : "not JSON");
		json_decref(o);
		return NULL;
	}
	json_decref(o);
	job_fresh(j, now_ms());
	j->id = 0;
	return j;
}

/*
 * One job per tick; none while the previous one still runs (the tick is
 * skipped and logged); after downtime the entry is simply due, so one missed
 * tick runs at once, and the next is counted from now.
 */
static int
cron_fire(void *arg, struct cron_rec *r)
{
	int64_t now = *(int64_t *)arg;
	struct job *prev, *j;

	if (r->last_job && (prev = store_job_get(store, r->last_job, false)) != NULL) {
		bool busy = !JS_FINISHED(prev->state);
		job_free(prev);
		if (busy) {
			log_info("cron entry c%lld: job %lld of the previous tick still runs; tick skipped",
			    (long long)r->id, (long long)r->last_job);
			goto next;
		}
	}
	if ((j = cron_make_job(r)) == NULL) {
		r->hold = true;
		goto store;
	}
	if (store_job_insert(store, j) < 0)
		fatalx("cannot store a job of cron entry c%lld", (long long)r->id);
	log_info("cron entry c%lld: job %lld submitted", (long long)r->id, (long long)j->id);
	r->last_job = j->id;
	sched_kick();
	job_free(j);
next:
	r->next_run = next_ms(r->spec, now);
	if (r->next_run < 0) {
		log_warnx("cron entry c%lld: \"%s\" fires no more; entry paused", (long long)r->id, r->spec);
		r->hold = true;
		r->next_run = 0;
	}
store:
	if (store_cron_update(store, r) < 0)
		fatalx("cannot store cron entry c%lld", (long long)r->id);
	return 0;
}

void
cron_tick(int64_t now)
{
	if (store_cron_due(store, now, cron_fire, &now) < 0)
		fatalx("cannot read the cron entries");
}

/* The state of an entry's latest job: from the jobs, or once purged from
 * the accounting. */
static const char *
last_state(int64_t id)
{
	struct job *j;
	enum job_state st;
	const char *name;

	if (!id)
		return NULL;
	if ((j = store_job_get(store, id, false)) != NULL) {
		name = job_state_name(j->state);
		job_free(j);
		return name;
	}
	return store_acct_last_state(store, id, &st) == 0 ? job_state_name(st) : NULL;
}

struct list_ctx {
	const char *only;    /* one owner's, or NULL: everybody's */
	json_t     *out;
};

static int
list_one(void *arg, struct cron_rec *r)
{
	struct list_ctx *lc = arg;
	json_t *o = json_loads(r->job, 0, NULL);
	const char *st;

	if (lc->only && strcmp(r->owner, lc->only) != 0) {
		json_decref(o);
		return 0;
	}
	st = last_state(r->last_job);
	json_array_append_new(lc->out, msg_cron_row_pack(&(struct msg_cron_row){ .id = r->id,
	    .owner = r->owner, .schedule = r->spec, .name = jstr(o, "name"), .next_run = r->next_run,
	    .last_job = r->last_job, .last_state = st, .hold = r->hold, .queue = jstr(o, "queue") }));
	json_decref(o);
	return 0;
}

json_t *
cron_list_json(const char *only_owner)
{
	struct list_ctx lc = { only_owner, json_array() };

	if (store_cron_foreach(store, list_one, &lc) < 0) {
		json_decref(lc.out);
		return NULL;
	}
	return lc.out;
}

/* qdel / qhold / qrls of one entry, by its owner or a manager. */
static const char *
cron_op(struct conn *c, const char *action, int64_t id, bool force, char *buf, size_t n, bool *ok)
{
	struct cron_rec *r = store_cron_get(store, id);

	*ok = false;
	if (!r) {
		snprintf(buf, n, "denied: cron entry \"c%lld\" does not exist", (long long)id);
		return buf;
	}
	if (!perm_may_touch(c, r->owner)) {
		snprintf(buf, n, "%s - you do not have the necessary privileges to modify cron entry \"c%lld\"",
		    c->user, (long long)id);
		cron_rec_free(r);
		return buf;
	}
	qm_txn();
	if (strcmp(action, "delete") == 0) {
		if (store_cron_delete(store, id) < 0)
			fatalx("cannot delete cron entry c%lld", (long long)id);
		snprintf(buf, n, "%s has deleted cron entry c%lld", c->user, (long long)id);
		/* Its running job goes on unless asked (qdel -f). */
		if (force && r->last_job) {
			struct job *j = store_job_get(store, r->last_job, false);
			char jbuf[256];
			if (j && !JS_FINISHED(j->state)) {
				request_job_delete(c, j, jbuf, sizeof jbuf);
				snprintf(buf + strlen(buf), n - strlen(buf), "; %s", jbuf);
			}
			job_free(j);
		}
	} else {
		r->hold = strcmp(action, "hold") == 0;
		/* Resumed, it fires next at its next time from now, not at
		 * every tick it missed. */
		if (!r->hold && (r->next_run = next_ms(r->spec, now_ms())) < 0) {
			snprintf(buf, n, "cron entry c%lld never fires again", (long long)id);
			cron_rec_free(r);
			return buf;
		}
		if (store_cron_update(store, r) < 0)
			fatalx("cannot store cron entry c%lld", (long long)id);
		snprintf(buf, n, "modified hold of cron entry c%lld", (long long)id);
	}
	cron_rec_free(r);
	*ok = true;
	return buf;
}

void
cron_request(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_cron m;
	const char *why = NULL;
	json_t *v, *results, *rep;
	size_t i;

	if (msg_cron_unpack(msg, &m, &why) < 0) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", why));
		return;
	}
	if (strcmp(m.action, "list") == 0) {
		json_t *entries = cron_list_json(perm_sees_all(c->operator) ? NULL : c->user);
		if (!entries) {
			net_send(c, proto_reply_err(seq, ERR_INTERNAL, "cannot read the cron entries"));
			return;
		}
		rep = proto_reply_ok(seq);
		msg_cron_reply_add(rep, &(struct msg_cron_reply){ entries });
		net_send(c, rep);
		return;
	}
	results = json_array();
	json_array_foreach(m.ids, i, v) {
		char buf[512];
		bool ok;
		const char *text = cron_op(c, m.action, json_integer_value(v), m.force, buf, sizeof buf, &ok);
		msg_result_add(results, &(struct msg_result){ .id = json_integer_value(v), .ok = ok,
		    .message = text });
	}
	rep = proto_reply_ok(seq);
	msg_results_add(rep, &(struct msg_results){ results });
	net_send(c, rep);
}
