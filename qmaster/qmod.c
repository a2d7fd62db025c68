/* qmod.c: qmod's, qhold's and qrls's requests: queues and hosts disabled and enabled, jobs suspended, resumed, held and released.
 *
 * Also a job's error state cleared. */
#include "config.h"

#include <assert.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg_req.h"
#include "common/msg_rows.h"
#include "qmaster/qmaster.h"
#include "spool/spool.h"

/*
 * A disabled queue or host is a row of the meta table named
 * "disabled.queue.NAME" or "disabled.host.NAME": queues come from
 * qmaster.conf, which a reload replaces, and a host may be disabled while no
 * execd of that name is connected, so the flag lives beside them rather than
 * in them, and survives restarts and reloads alike.
 */
static bool
flag_get(const char *kind, const char *name)
{
	char *key = xasprintf("disabled.%s.%s", kind, name), *val = NULL;
	int rc = store_meta_get(store, key, &val);

	if (rc < 0)
		fatalx("cannot read %s", key);
	free(key);
	free(val);
	return rc == 0;
}

static void
flag_set(const char *kind, const char *name, bool on)
{
	char *key = xasprintf("disabled.%s.%s", kind, name);

	qm_txn();
	if (store_meta_set(store, key, on ? "1" : NULL) < 0)
		fatalx("cannot store %s", key);
	free(key);
}

bool
qmod_host_disabled(const char *name)
{
	return flag_get("host", name);
}

/* Queue instances: a row "disabled.qi.QUEUE@HOST" each. */
char **
qmod_instances_disabled(const char *host)
{
	char **v = xcalloc((size_t)conf->nqueues + 1, sizeof *v);
	int n = 0;

	for (int i = 0; i < conf->nqueues; i++) {
		char *qi = xasprintf("%s@%s", conf->queues[i].name, host);
		if (flag_get("qi", qi))
			v[n++] = xstrdup(conf->queues[i].name);
		free(qi);
	}
	return v;
}

void
qmod_apply_queues(void)
{
	for (int i = 0; i < conf->nqueues; i++)
		conf->queues[i].disabled = flag_get("queue", conf->queues[i].name);
}

static void result(json_t *, const char *, bool, const char *, ...) NOWQ_ATTR_PRINTF(4, 5);

static void
result(json_t *results, const char *target, bool ok, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	msg_result_add(results, &(struct msg_result){ .target = target, .ok = ok, .message = buf });
}

/* QUEUE@HOST, as qstat -f names a queue instance: only that queue's jobs
 * stop going to that host. */
static void
dispatch_instance(struct conn *c, json_t *results, const char *target, bool disable)
{
	const char *at = strchr(target, '@'), *word = disable ? "disabled" : "enabled";
	char *qname = xstrndup(target, (size_t)(at - target));
	const struct qm_queue *q = conf_queue(conf, qname);
	struct exechost *h = exechost_find(at + 1);
	size_t n;

	free(qname);
	if (!q || !h) {
		result(results, target, false, "invalid queue or host \"%s\"", target);
		return;
	}
	if (q->hosts_ns && !nodeset_contains(q->hosts_ns, h->name, hostlist_name_now, h)) {
		result(results, target, false, "queue %s has no instance on host %s (its hosts: %s)",
		    q->name, h->name, q->hosts);
		return;
	}
	if (strv_has(h->qdisabled, q->name) == disable) {
		result(results, target, true, "Queue instance \"%s\" is already in the specified state: %s",
		    target, word);
		return;
	}
	n = strv_len(h->qdisabled);
	if (disable) {
		h->qdisabled = xrealloc(h->qdisabled, (n + 2) * sizeof *h->qdisabled);
		h->qdisabled[n] = xstrdup(q->name);
		h->qdisabled[n + 1] = NULL;
	} else {
		for (size_t i = 0; i < n; i++)
			if (strcmp(h->qdisabled[i], q->name) == 0) {
				free(h->qdisabled[i]);
				memmove(h->qdisabled + i, h->qdisabled + i + 1, (n - i) * sizeof *h->qdisabled);
				break;
			}
		sched_kick();
	}
	flag_set("qi", target, disable);
	log_info("queue instance %s %s by %s", target, word, c->user);
	result(results, target, true, "%s@%s changed state of \"%s\" (%s)", c->user, my_hostname(), target, word);
}

/* One queue or host: a queue's name first, then a host's; "*@HOST" names
 * a host only, as Grid Engine's every-queue-on-HOST does. */
static void
dispatch_flag(struct conn *c, json_t *results, const char *target, bool disable)
{
	const char *word = disable ? "disabled" : "enabled", *name = target;
	struct qm_queue *q = NULL;
	struct exechost *h = NULL;
	bool *flag;

	if (strncmp(target, "*@", 2) == 0)
		name = target + 2;
	else if (strchr(target, '@')) {
		dispatch_instance(c, results, target, disable);
		return;
	} else
		for (int i = 0; i < conf->nqueues; i++)
			if (strcmp(conf->queues[i].name, target) == 0)
				q = &conf->queues[i];
	if (!q && (h = exechost_find(name)) == NULL) {
		result(results, target, false, "invalid queue or host \"%s\"", target);
		return;
	}
	flag = q ? &q->disabled : &h->disabled;
	if (*flag == disable) {
		result(results, target, true, "%s \"%s\" is already in the specified state: %s",
		    q ? "Queue" : "Host", target, word);
		return;
	}
	*flag = disable;
	if (h)
		pullq_sync(h);
	flag_set(q ? "queue" : "host", q ? q->name : h->name, disable);
	if (!disable)
		sched_kick();
	log_info("%s %s %s by %s", q ? "queue" : "host", q ? q->name : h->name, word, c->user);
	result(results, target, true, "%s@%s changed state of \"%s\" (%s)", c->user, my_hostname(), target, word);
}

void
qmod_host_fault(struct exechost *h, const char *why)
{
	char *body;

	if (h->disabled)
		return;
	h->disabled = true;
	flag_set("host", h->name, true);
	log_warnx("host %s disabled: %s; qmod -e %s once it is mended", h->name, why, h->name);
	body = xasprintf("The exec host %s could not take a job's staged inputs:\n%s\n\nIt is "
	    "disabled, so no job goes there; the job is queued again for another host.\n"
	    "Once the host is mended: qmod -e %s\n", h->name, why, h->name);
	mail_admin("nowq: exec host disabled", body);
	free(body);
}

static void
flags_request(struct conn *c, int64_t seq, json_t *msg, bool disable)
{
	struct msg_flags m;
	const char *why = NULL;
	json_t *results, *v, *rep;
	size_t i;

	if (msg_flags_unpack(msg, &m, &why) < 0) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", why));
		return;
	}
	results = json_array();
	json_array_foreach(m.targets, i, v)
		dispatch_flag(c, results, json_string_value(v), disable);
	rep = proto_reply_ok(seq);
	msg_results_add(rep, &(struct msg_results){ results });
	net_send(c, rep);
}

void
qmod_disable(struct conn *c, int64_t seq, json_t *msg)
{
	flags_request(c, seq, msg, true);
}

void
qmod_enable(struct conn *c, int64_t seq, json_t *msg)
{
	flags_request(c, seq, msg, false);
}

const char *
request_job_label(const struct job *j, char *buf, size_t n)
{
	if (j->task > 0)
		snprintf(buf, n, "job-array task %lld.%d", (long long)j->id, j->task);
	else
		snprintf(buf, n, "job %lld", (long long)j->id);
	return buf;
}

/* A task's hold is its own (a row of its own, which the scheduler passes
 * by), or its array's while it never had one. */
static const char *
op_hold(struct conn *c, struct job *j, char *buf, size_t n, bool *ok)
{
	char what[64];

	request_job_label(j, what, sizeof what);
	*ok = true;
	if (j->state != JS_PENDING) {
		*ok = false;
		snprintf(buf, n, "%s is already running and cannot be held", what);
		return buf;
	}
	if (!(j->hold & HOLD_USER)) {
		/* Its array's other holds (a start time, dependencies) stay
		 * the array's: the row holds only the user's. */
		j->hold = j->task > 0 ? HOLD_USER : j->hold | HOLD_USER;
		if (store_job_update(store, j) < 0)
			fatalx("cannot store a hold");
	}
	snprintf(buf, n, "modified hold of %s", what);
	return buf;
}

static const char *
op_release(struct conn *c, struct job *j, char *buf, size_t n, bool *ok)
{
	char what[64];

	request_job_label(j, what, sizeof what);
	*ok = true;
	if (j->task > 0) {
		/* Grid Engine says nothing of a task that was not held. */
		if (!(j->hold & HOLD_USER))
			return NULL;
		if (!array_task_unhold(j)) {
			*ok = false;
			snprintf(buf, n, "%s is held with its whole array: qrls %lld releases it", what,
			    (long long)j->id);
			return buf;
		}
		snprintf(buf, n, "modified hold of %s", what);
		return buf;
	}
	if (j->hold & HOLD_USER) {
		j->hold &= ~HOLD_USER;
		if (store_job_update(store, j) < 0)
			fatalx("cannot store a release");
		sched_kick();
	}
	/* After the array's own row is stored: each release reads it again. */
	if (j->t_first)
		array_unhold_all(j);
	snprintf(buf, n, "modified hold of %s", what);
	return buf;
}

/* Suspension is a SIGSTOP of the job's session (or one task's) by its
 * execd; the flag is stored first, so the state survives a master restart. */
static const char *
op_suspend(struct conn *c, struct job *j, char *buf, size_t n, bool *ok, bool stop)
{
	char what[64];

	request_job_label(j, what, sizeof what);
	*ok = false;
	if (j->state != JS_RUNNING) {
		snprintf(buf, n, "%s is not running", what);
		return buf;
	}
	if (((j->suspended & SUSP_USER) != 0) == stop) {
		*ok = true;
		if (j->task > 0)
			snprintf(buf, n, "%s - %s is already %s", c->user, what, stop ? "suspended" : "unsuspended");
		else
			snprintf(buf, n, "%s is already %s", what, stop ? "suspended" : "running");
		return buf;
	}
	/* One stopped by its host's idle policy stays stopped until the host
	 * is idle again: the execd continues it then. */
	if (!(j->suspended & SUSP_HOST) && !exechost_signal_job(j, stop ? SIGSTOP : SIGCONT)) {
		snprintf(buf, n, "%s: its host %s is not connected", what, j->host ? j->host : "?");
		return buf;
	}
	j->suspended = stop ? j->suspended | SUSP_USER : j->suspended & ~(unsigned)SUSP_USER;
	if (store_job_update(store, j) < 0)
		fatalx("cannot store job %lld", (long long)j->id);
	if (stop)
		mail_job_suspended(j);
	*ok = true;
	snprintf(buf, n, "%s - %s %s", c->user, stop ? "suspended" : "unsuspended", what);
	return buf;
}

static const char *
op_stop(struct conn *c, struct job *j, char *buf, size_t n, bool *ok)
{
	return op_suspend(c, j, buf, n, ok, true);
}

static const char *
op_cont(struct conn *c, struct job *j, char *buf, size_t n, bool *ok)
{
	return op_suspend(c, j, buf, n, ok, false);
}

bool
qmod_op_per_task(job_op op)
{
	return op == op_stop || op == op_cont;
}

static const char *
op_clear(struct conn *c, struct job *j, char *buf, size_t n, bool *ok)
{
	*ok = true;
	if (!j->error) {
		snprintf(buf, n, "job %lld is not in error state", (long long)j->id);
		return buf;
	}
	j->error = false;
	free(j->reason);
	j->reason = NULL;
	if (store_job_update(store, j) < 0)
		fatalx("cannot store job %lld", (long long)j->id);
	sched_kick();
	snprintf(buf, n, "%s - cleared error state of job %lld", c->user, (long long)j->id);
	return buf;
}

/* HOLD, RELEASE, SUSPEND, UNSUSPEND and CLEAR: the shared job walk with
 * the type's op. */
void
qmod_job(struct conn *c, int64_t seq, json_t *msg)
{
	static const struct {
		enum msg_type type;
		job_op        op;
		const char   *verb;
	} ops[] = {
		{ MSG_HOLD, op_hold, "hold" }, { MSG_RELEASE, op_release, "release" },
		{ MSG_SUSPEND, op_stop, "suspend" }, { MSG_UNSUSPEND, op_cont, "unsuspend" },
		{ MSG_CLEAR, op_clear, "clear the error state of" },
	};
	enum msg_type t = msg_type_of(msg);
	size_t i;

	for (i = 0; ops[i].type != t; i++)
		assert(i + 1 < sizeof ops / sizeof ops[0]);
	request_job_op(c, seq, msg, ops[i].op, ops[i].verb);
}
