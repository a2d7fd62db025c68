/* petask.c: qrsh -inherit: the tasks a running parallel job starts on the hosts it was given.
 *
 * perm.c decides who may; the host's execd runs each task under its own shepherd. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg.h"
#include "common/msg_req.h"
#include "qmaster/qmaster.h"
#include "spool/spool.h"

/*
 * A task is a job object like its job's (owner, groups, queue, limits,
 * environment) with the command, environment, directory and qrsh address
 * the client sent, plus its part's "part" and "pe_hosts" and its number,
 * "petask" (1, 2, ... within the attempt).  It goes to the host's execd as
 * a DISPATCH nobody pulled, since it runs in slots the job holds there; the
 * execd keys it ID.TASK.ATTEMPT.PETASK, and a SIGNAL to the part reaches
 * it.  Its events find their row in the tasks list of the job's record
 * (pe.c), where its usage waits to be added to the job's at the end.
 */

/* So many tasks of one attempt at most, over its whole life. */
#define PETASK_MAX 100000

/* The task's job object, or NULL with why. */
static json_t *
petask_job(const struct job *j, const struct msg_inherit *task, int part, int64_t n, const char **why)
{
	json_t *hosts = pe_hosts_json(j);
	json_t *o = msg_dispatch_part_pack(j, &(struct msg_dispatch_part){ part, hosts, n });
	struct job *t;

	json_decref(hosts);

	json_object_del(o, "script");
	json_object_del(o, "args");
	json_object_del(o, "argv");
	if (!json_is_array(task->argv) || !task->qrsh) {
		*why = "the task needs a command and a qrsh address";
		json_decref(o);
		return NULL;
	}
	msg_inherit_task_set(o, task);
	/* What the job decoder refuses of a submission, it refuses here. */
	if ((t = job_from_json(o, why)) == NULL) {
		json_decref(o);
		return NULL;
	}
	job_free(t);
	return o;
}

/* The host's place in the job's host list, or -1. */
static int
petask_part(const struct job *j, const char *host)
{
	char **hosts = pe_host_list(j);
	int part = -1;

	for (int i = 0; hosts && hosts[i]; i++)
		if (strcmp(hosts[i], host) == 0) {
			part = i;
			break;
		}
	strv_free(hosts);
	return part;
}

/*
 * Grid Engine's execd takes as many tasks at once on a host as the job has
 * slots there, less the one the script is on the master host when
 * job_is_first_task.  NULL, or why not in buf.
 */
static const char *
petask_room(const struct job *j, const json_t *o, const char *host, char *buf, size_t n)
{
	const struct qm_pe *pe = conf_pe(conf, j->pe);
	json_t *p;
	size_t i;
	int64_t slots = 0, busy = 0;

	json_array_foreach(json_object_get(o, "parts"), i, p)
		if (jstr(p, "host") && strcmp(jstr(p, "host"), host) == 0)
			slots = jint(p, "slots", 1) - (i == 0 && pe && pe->job_is_first_task);
	json_array_foreach(json_object_get(o, "tasks"), i, p)
		if (jstr(p, "host") && strcmp(jstr(p, "host"), host) == 0 &&
		    jint(p, "state", 0) != PART_ENDED)
			busy++;
	if (busy < slots)
		return NULL;
	if (slots <= 0)
		snprintf(buf, n, "job %lld's slot on host %s is its script's (job_is_first_task)",
		    (long long)j->id, host);
	else
		snprintf(buf, n, "the %lld task slot%s of job %lld on host %s %s in use", (long long)slots,
	    slots == 1 ? "" : "s", (long long)j->id, host, slots == 1 ? "is" : "are all");
	return buf;
}

void
petask_request(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_inherit m;
	const char *why = NULL;
	char buf[512];
	struct job *j = NULL;
	struct exechost *h;
	json_t *o = NULL, *tasks, *jo, *rep;
	int64_t n;

	if (msg_inherit_unpack(msg, &m, &why) < 0) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", why));
		return;
	}
	j = m.id > 0 ? store_job_get(store, m.id, false) : NULL;
	if ((why = perm_inherit(c, m.id, j, m.host, buf, sizeof buf)) != NULL) {
		net_send(c, proto_reply_err(seq, j ? ERR_PERM : ERR_NOENT, "%s", why));
		goto out;
	}
	h = exechost_find(m.host);
	if (!h || !h->conn || h->lost) {
		net_send(c, proto_reply_err(seq, ERR_NOENT, "the execd of host %s is not connected", m.host));
		goto out;
	}
	if ((o = pe_load(j)) == NULL) {
		net_send(c, proto_reply_err(seq, ERR_NOENT, "job %lld has no parts running", (long long)j->id));
		goto out;
	}
	if (jbool(o, "killing", false)) {
		net_send(c, proto_reply_err(seq, ERR_PERM, "job %lld is ending", (long long)j->id));
		goto out;
	}
	if ((why = petask_room(j, o, m.host, buf, sizeof buf)) != NULL) {
		net_send(c, proto_reply_err(seq, ERR_LIMIT, "%s", why));
		goto out;
	}
	if ((tasks = json_object_get(o, "tasks")) == NULL) {
		tasks = json_array();
		json_object_set_new(o, "tasks", tasks);
	}
	n = (int64_t)json_array_size(tasks) + 1;
	if (n > PETASK_MAX) {
		net_send(c, proto_reply_err(seq, ERR_LIMIT, "job %lld has started %d tasks, the most it may",
		    (long long)j->id, PETASK_MAX));
		goto out;
	}
	if ((jo = petask_job(j, &m, petask_part(j, m.host), n, &why)) == NULL) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", why));
		goto out;
	}
	json_array_append_new(tasks, json_pack("{s:s, s:i}", "host", m.host, "state", PART_DISPATCHED));
	qm_txn();
	pe_save(j, o);
	net_send(h->conn, msg_dispatch_pack(&(struct msg_dispatch){ 0, json_pack("[o]", jo) }));
	log_info("job %lld: task %lld sent to %s", (long long)j->id, (long long)n, m.host);
	rep = proto_reply_ok(seq);
	msg_inherited_add(rep, &(struct msg_inherited){ n, strcmp(conf->auth, "munge") == 0 });
	net_send(c, rep);
out:
	json_decref(o);
	job_free(j);
}

/* The task an event speaks of: its number, from the sender's host. */
static json_t *
petask_find(json_t *o, const struct conn *c, int64_t petask)
{
	json_t *p = json_array_get(json_object_get(o, "tasks"), (size_t)(petask - 1));

	if (!p || !c->host || !jstr(p, "host") || strcmp(jstr(p, "host"), c->host->name) != 0)
		return NULL;
	return p;
}

void
petask_register(struct conn *c, struct job *j, const struct msg_child_register *m)
{
	json_t *o = pe_load(j), *p;

	if (!o || !(p = petask_find(o, c, m->petask)) || jint(p, "state", 0) != PART_DISPATCHED) {
		json_decref(o);
		return;
	}
	json_object_set_new(p, "state", json_integer(PART_RUNNING));
	pe_save(j, o);
	/* The job's end may have crossed the DISPATCH. */
	if (j->delete_req || jbool(o, "killing", false))
		pe_signal_host(j, c->host->name, 9);
	json_decref(o);
}

void
petask_term(struct conn *c, struct job *j, const struct msg_child_term *m)
{
	json_t *o = pe_load(j), *p;

	if (!o || JS_FINISHED(j->state) || !(p = petask_find(o, c, m->petask)) ||
	    jint(p, "state", 0) == PART_ENDED) {
		json_decref(o);
		return;
	}
	json_object_set_new(p, "state", json_integer(PART_ENDED));
	json_object_set_new(p, "exit_status", json_integer(m->exit_status));
	json_object_set_new(p, "signal", json_integer(m->signal));
	json_object_set_new(p, "end_time", json_integer(m->end_time));
	json_object_set_new(p, "rusage", rusage_to_json(&m->ru));
	if (m->failed)
		log_info("job %lld: task %lld on %s could not start: %s", (long long)j->id,
		    (long long)m->petask, c->host->name, m->failed);
	/* A task's end is its qrsh's to tell; the job goes on. */
	pe_settle(j, o);
	json_decref(o);
}
