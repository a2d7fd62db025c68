/* pe.c: parallel jobs (qsub -pe NAME N, -n N): their slots over hosts, their parts' lives.
 *
 * A job lives until its last part and task have ended. */
#include "config.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg.h"
#include "qmaster/qmaster.h"
#include "spool/spool.h"

/*
 * A parallel job runs as one part per host it was given: part 0 on the
 * master host, then the others in the order of PE_HOSTFILE.  A part holds
 * all the job's slots on its host, so the execd's key ID.TASK.ATTEMPT stays
 * unique per host and its spool keeps its shape; the part is the position
 * of the host in the job's host field (a blank-separated list).  With -n
 * every part runs the script (GLUnix's glurun); with -pe only part 0 does,
 * as in Grid Engine, and the others hold their hosts' slots for the tasks
 * qrsh -inherit starts (petask.c) until part 0 ends, which ends the job.
 *
 * What each part did is kept in the meta table under "pe.ID" (a JSON
 * object: attempt, killing, why, parts [{host, slots, state, exit_status,
 * signal, failed, limit, reaped, rusage}], tasks [{host, state, ...}, the
 * same fields]) until the last part and task have ended, so a restarted
 * master still knows what it waits for.
 */

int
pe_job_rule(const struct job *j)
{
	const struct qm_pe *pe = j->pe ? conf_pe(conf, j->pe) : NULL;
	/* Without a PE, -l slots=N packs the slots on one host, -n puts one on
	 * each of N distinct hosts. */
	if (pe)
		return pe->rule;
	return j->req.slots ? PE_PE_SLOTS : 1;
}

char *
pe_conf_text(const struct qm_pe *pe)
{
	char rule[32], slots[32];

	pe_rule_name(rule, sizeof rule, pe->rule);
	if (pe->slots)
		snprintf(slots, sizeof slots, "%d", pe->slots);
	else
		snprintf(slots, sizeof slots, "UNLIMITED");
	return xasprintf("%-18s %s\n%-18s %s\n%-18s %s\n%-18s %s\n%-18s %s\n",
	    "pe_name", pe->name, "slots", slots, "allocation_rule", rule,
	    "control_slaves", pe->control_slaves ? "TRUE" : "FALSE",
	    "job_is_first_task", pe->job_is_first_task ? "TRUE" : "FALSE");
}

int
pe_admit(const struct job *j, char *err, size_t n)
{
	const struct qm_pe *pe = NULL;

	if (j->pe && (pe = conf_pe(conf, j->pe)) == NULL) {
		snprintf(err, n, "job rejected: the requested parallel environment \"%s\" does not exist", j->pe);
		return -1;
	}
	if (pe && pe->slots && PE_JOB_MIN(j) > pe->slots) {
		snprintf(err, n, "job rejected: parallel environment \"%s\" offers only %d slots, not %d",
		    pe->name, pe->slots, PE_JOB_MIN(j));
		return -1;
	}
	/* A range needs one multiple of the rule within it. */
	if (pe && pe->rule > 0 && (j->slots / pe->rule) * pe->rule < PE_JOB_MIN(j)) {
		snprintf(err, n, "job rejected: parallel environment \"%s\" places %d slots per host; "
		    "%d is not a multiple of it", pe->name, pe->rule, j->slots);
		return -1;
	}
	return 0;
}

/* The parts' record. */

static char *
pe_key(int64_t id)
{
	return xasprintf("pe.%lld", (long long)id);
}

json_t *
pe_load(const struct job *j)
{
	char *key = pe_key(j->id), *text = NULL;
	json_t *o = NULL;

	if (store_meta_get(store, key, &text) == 0 && text)
		o = json_loads(text, 0, NULL);
	free(key);
	free(text);
	if (o && (jint(o, "attempt", -1) != j->attempt || !json_is_array(json_object_get(o, "parts")))) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

void
pe_save(const struct job *j, json_t *o)
{
	char *key = pe_key(j->id), *text = o ? json_dumps(o, JSON_COMPACT) : NULL;

	qm_txn();
	if (store_meta_set(store, key, text) < 0)
		fatalx("cannot store the parts of job %lld", (long long)j->id);
	free(key);
	free(text);
}

void
pe_parts_store(const struct job *j, char *const *hosts, const int *slots, int nparts)
{
	json_t *parts = json_array(), *o;

	for (int i = 0; i < nparts; i++)
		json_array_append_new(parts, json_pack("{s:s, s:i, s:i}", "host", hosts[i],
		    "slots", slots[i], "state", PART_DISPATCHED));
	o = json_pack("{s:i, s:b, s:o}", "attempt", j->attempt, "killing", 0, "parts", parts);
	pe_save(j, o);
	json_decref(o);
}

json_t *
pe_hosts_json(const struct job *j)
{
	json_t *o = pe_load(j), *list, *p;
	size_t i;

	if (!o)
		return NULL;
	list = json_array();
	json_array_foreach(json_object_get(o, "parts"), i, p)
		msg_pe_host_add(list, &(struct msg_pe_host){ jstr(p, "host"), jint(p, "slots", 1) });
	json_decref(o);
	return list;
}

char **
pe_host_list(const struct job *j)
{
	char **v = NULL, *s, *save = NULL, *w;
	size_t n = 0;

	if (!j->host)
		return NULL;
	s = xstrdup(j->host);
	for (w = strtok_r(s, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		v = xrealloc(v, (n + 2) * sizeof *v);
		v[n++] = xstrdup(w);
		v[n] = NULL;
	}
	free(s);
	return v;
}

bool
pe_signal_host(const struct job *j, const char *host, int sig)
{
	struct exechost *h = exechost_find(host);
	if (!h || !h->conn)
		return false;
	net_send(h->conn, msg_signal_pack(&(struct msg_signal){ { j->id, j->task, j->attempt }, sig }));
	return true;
}

bool
pe_signal(const struct job *j, int sig)
{
	char **hosts = pe_host_list(j);
	bool any = false;

	for (char **h = hosts; h && *h; h++)
		any |= pe_signal_host(j, *h, sig);
	strv_free(hosts);
	return any;
}

/* The part an event speaks of: the one on the sender's host. */
static json_t *
pe_part(json_t *o, const struct conn *c, int *index)
{
	json_t *p;
	size_t i;

	if (!c->host)
		return NULL;
	json_array_foreach(json_object_get(o, "parts"), i, p)
		if (jstr(p, "host") && strcmp(jstr(p, "host"), c->host->name) == 0) {
			*index = (int)i;
			return p;
		}
	return NULL;
}

void
pe_child_register(struct conn *c, struct job *j, const struct msg_child_register *m)
{
	json_t *o = pe_load(j), *p;
	int part = -1;

	if (!o || !(p = pe_part(o, c, &part)) || jint(p, "state", 0) != PART_DISPATCHED) {
		json_decref(o);
		return;
	}
	json_object_set_new(p, "state", json_integer(PART_RUNNING));
	pe_save(j, o);
	if (j->state == JS_DISPATCHED) {
		j->state = JS_RUNNING;
		j->start_time = m->start_time;
		if (part == 0)
			j->pid = (int)m->pid;
		if (store_job_update(store, j) < 0)
			fatalx("cannot store job %lld", (long long)j->id);
		deps_job_started(j);
	} else if (part == 0 && j->state == JS_RUNNING) {
		j->pid = (int)m->pid;
		if (store_job_update(store, j) < 0)
			fatalx("cannot store job %lld", (long long)j->id);
	}
	/* A qdel, or another part's failure, may have crossed the DISPATCH. */
	if (j->delete_req || jbool(o, "killing", false))
		pe_signal_host(j, c->host->name, 9);
	json_decref(o);
}

/* Adds what a part or task used to sum (maxrss: the largest), and moves
 * *end to its end. */
static void
pe_usage_add(struct job_rusage *sum, const json_t *p, int64_t *end)
{
	struct job_rusage ru;
	const char *w;
	json_t *v;

	if (jint(p, "end_time", now_ms()) > *end)
		*end = jint(p, "end_time", now_ms());
	memset(&ru, 0, sizeof ru);
	if (!(v = json_object_get(p, "rusage")) || rusage_from_json(&ru, v, &w) < 0)
		return;
	sum->utime += ru.utime;
	sum->stime += ru.stime;
	for (int k = 0; k < RUSAGE_NINT; k++) {
		int64_t a = rusage_int(sum, k), b = rusage_int(&ru, k);
		rusage_set_int(sum, k, strcmp(rusage_int_names[k], "ru_maxrss") == 0 ?
		    (a > b ? a : b) : a + b);
	}
	if (ru.maxvmem > sum->maxvmem)
		sum->maxvmem = ru.maxvmem;
}

/* The whole job's end, once its last part has ended: failed when any part
 * failed (the first failure is the reason), one accounting row with every
 * host and the parts' usage summed (maxrss and maxvmem: the largest). */
static void
pe_job_end(struct job *j, json_t *o)
{
	struct job_rusage sum;
	const char *why = jstr(o, "why");
	json_t *p;
	size_t i;
	int failed_code = 0;
	bool could_not_start = false;

	memset(&sum, 0, sizeof sum);
	j->end_time = 0;
	/* The tasks qrsh -inherit started are accounted to the job. */
	json_array_foreach(json_object_get(o, "tasks"), i, p)
		pe_usage_add(&sum, p, &j->end_time);
	json_array_foreach(json_object_get(o, "parts"), i, p) {
		pe_usage_add(&sum, p, &j->end_time);
		if (jbool(p, "reaped", false))
			continue;
		if (jstr(p, "failed"))
			could_not_start = true;
		else if (jstr(p, "limit") && !failed_code)
			failed_code = ACCT_FAILED_LIMIT;
		else if ((jint(p, "signal", 0) || jbool(p, "lost", false)) && !failed_code)
			failed_code = ACCT_FAILED_AFTER;
		if (i == 0) {
			j->exit_status = (int)jint(p, "exit_status", -1);
			j->signal = (int)jint(p, "signal", 0);
		}
	}
	if (could_not_start)
		failed_code = ACCT_FAILED_BEFORE;
	if (!j->start_time)
		j->start_time = j->end_time;
	j->utime = sum.utime;
	j->stime = sum.stime;
	j->maxrss_kb = sum.maxrss;
	free(j->reason);
	j->reason = NULL;
	if (j->delete_req) {
		j->state = JS_DELETED;
		j->reason = xstrdup("deleted (qdel): every part killed");
	} else if (why) {
		j->state = JS_FAILED;
		j->reason = xstrdup(why);
	} else
		j->state = JS_DONE;
	if (store_job_update(store, j) < 0)
		fatalx("cannot store the end of job %lld", (long long)j->id);
	acct_record(j, failed_code, &sum);
	pe_save(j, NULL);
	request_job_finished(j);
	log_debug("parallel job %lld ended: %s", (long long)j->id, job_state_name(j->state));
}

/* Whether a host has a part or task of the job still alive. */
static bool
pe_host_alive(const json_t *o, const char *host)
{
	static const char *const lists[] = { "parts", "tasks" };
	json_t *q;
	size_t i;

	for (int l = 0; l < 2; l++)
		json_array_foreach(json_object_get(o, lists[l]), i, q)
			if (jint(q, "state", 0) != PART_ENDED && jstr(q, "host") &&
			    strcmp(jstr(q, "host"), host) == 0)
				return true;
	return false;
}

/* The first failure is the job's reason (why; NULL when a -pe job's script
 * has ended and the rest simply goes); every part and task still alive is
 * killed: a SIGNAL to a host reaches the part's tasks there too. */
static void
pe_kill_others(const struct job *j, json_t *o, const char *why)
{
	json_t *q;
	size_t i;

	if (jbool(o, "killing", false))
		return;
	json_object_set_new(o, "killing", json_true());
	if (why) {
		json_object_set_new(o, "why", json_string(why));
		log_info("job %lld: %s; killing the other parts", (long long)j->id, why);
	} else
		log_info("job %lld: its script ended; ending its other parts and tasks", (long long)j->id);
	json_array_foreach(json_object_get(o, "parts"), i, q)
		if (jstr(q, "host") && pe_host_alive(o, jstr(q, "host")))
			pe_signal_host(j, jstr(q, "host"), 9);
}

/* Ends the job when its last part and task have ended, else keeps the
 * record. */
void
pe_settle(struct job *j, json_t *o)
{
	static const char *const lists[] = { "parts", "tasks" };
	json_t *q;
	size_t i;

	for (int l = 0; l < 2; l++)
		json_array_foreach(json_object_get(o, lists[l]), i, q)
			if (jint(q, "state", 0) != PART_ENDED) {
				pe_save(j, o);
				return;
			}
	pe_job_end(j, o);
}

struct lost_ctx {
	const char   *host;
	const struct msg_attempts *listed;   /* the attempts the execd still has, or NULL */
	const char   *why;
	json_t       *changed;  /* [{id, o}] */
};

void
pe_child_term(struct conn *c, struct job *j, const struct msg_child_term *m)
{
	json_t *o = pe_load(j), *p;
	/* A part whose host could not take the staged inputs did not start:
	 * the host goes out of use as for a serial job, and the job fails
	 * with the reason (its other parts hold hosts of their own). */
	const char *failed = m->failed ? m->failed : m->requeue, *limit = m->limit, *lost = m->lost;
	int part = -1, exit_status, sig;

	if (!o || JS_FINISHED(j->state) || !(p = pe_part(o, c, &part)) ||
	    jint(p, "state", 0) == PART_ENDED) {
		json_decref(o);
		return;
	}
	if (m->requeue && !m->failed)
		qmod_host_fault(c->host, m->requeue);
	exit_status = (int)m->exit_status;
	sig = (int)m->signal;
	json_object_set_new(p, "state", json_integer(PART_ENDED));
	json_object_set_new(p, "exit_status", json_integer(exit_status));
	json_object_set_new(p, "signal", json_integer(sig));
	json_object_set_new(p, "end_time", json_integer(m->end_time));
	if (failed)
		json_object_set_new(p, "failed", json_string(failed));
	if (limit)
		json_object_set_new(p, "limit", json_string(limit));
	if (m->rusage_why)
		log_warnx("%s: job %lld: %s; its usage is accounted as zero", c->host->name,
		    (long long)j->id, m->rusage_why);
	json_object_set_new(p, "rusage", rusage_to_json(&m->ru));

	if (j->pe && part > 0 && jbool(o, "killing", false) && !failed && !limit) {
		/* A part holding slots, ended by the job's end: no failure. */
		json_object_set_new(p, "reaped", json_true());
	} else if (failed || limit || exit_status != 0 || sig != 0) {
		char *r = failed ? xasprintf("part %d on %.200s could not start: %.600s", part, c->host->name, failed) :
		    limit ? xasprintf("part %d on %.200s: %.600s", part, c->host->name, limit) :
		    lost ? xasprintf("part %d on %.200s: %.600s", part, c->host->name, lost) :
		    sig ? xasprintf("part %d on %.200s killed by signal %d", part, c->host->name, sig) :
		    xasprintf("part %d on %.200s exited with status %d", part, c->host->name, exit_status);
		pe_kill_others(j, o, r);
		free(r);
	} else if (j->pe && part == 0)
		pe_kill_others(j, o, NULL);
	pe_settle(j, o);
	json_decref(o);
}

/* A part of a job on host that its execd no longer has, or on a host
 * declared lost: it ended, failed, and takes the others down.  The tasks
 * there went with it. */
static int
pe_lost_one(void *arg, struct job *j)
{
	struct lost_ctx *lc = arg;
	json_t *o, *p;
	size_t i;
	bool changed = false;

	if (!JOB_PARALLEL(j) || !(o = pe_load(j)))
		return 0;
	if (lc->listed && msg_attempts_has(lc->listed, j)) {
		/* Still there: a kill asked while its host was away goes now. */
		if ((j->delete_req || jbool(o, "killing", false)) && pe_host_alive(o, lc->host))
			pe_signal_host(j, lc->host, 9);
		json_decref(o);
		return 0;
	}
	json_array_foreach(json_object_get(o, "tasks"), i, p)
		if (jstr(p, "host") && strcmp(jstr(p, "host"), lc->host) == 0 &&
		    jint(p, "state", 0) != PART_ENDED) {
			json_object_set_new(p, "state", json_integer(PART_ENDED));
			json_object_set_new(p, "lost", json_true());
			changed = true;
		}
	json_array_foreach(json_object_get(o, "parts"), i, p) {
		char *r;
		if (!jstr(p, "host") || strcmp(jstr(p, "host"), lc->host) != 0 ||
		    jint(p, "state", 0) == PART_ENDED)
			continue;
		json_object_set_new(p, "state", json_integer(PART_ENDED));
		json_object_set_new(p, "exit_status", json_integer(-1));
		json_object_set_new(p, "signal", json_integer(0));
		json_object_set_new(p, "lost", json_true());
		r = xasprintf("lost: part %zu on %s: %s", i, lc->host, lc->why);
		pe_kill_others(j, o, r);
		free(r);
		changed = true;
	}
	if (changed)
		json_array_append_new(lc->changed, json_pack("{s:I, s:O}", "id", (json_int_t)j->id, "o", o));
	json_decref(o);
	return 0;
}

void
pe_host_lost(const char *host, const struct msg_attempts *listed, const char *why)
{
	struct store_job_filter f = { .states = 1u << JS_DISPATCHED | 1u << JS_RUNNING };
	struct lost_ctx lc = { host, listed, why, json_array() };
	json_t *v;
	size_t i;

	if (store_jobs_foreach(store, &f, pe_lost_one, &lc) < 0)
		fatalx("cannot read the parallel jobs of host %s", host);
	/* Changed outside the walk: ending a job writes to the jobs table. */
	json_array_foreach(lc.changed, i, v) {
		struct job *j = store_job_get(store, jint(v, "id", 0), false);
		if (j && !JS_FINISHED(j->state))
			pe_settle(j, json_object_get(v, "o"));
		job_free(j);
	}
	json_decref(lc.changed);
}
