/* msg.c: pack and unpack of the connection, execd and replication messages, and the table of them (msg_defs). */
#include "config.h"

#include <assert.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg.h"

/* A new message of type t; seq only for the types that carry one. */
static json_t *
msg_new(const char *type)
{
	json_t *o = json_object();

	json_object_set_new(o, "type", json_string(type));
	return o;
}

static void
set_int(json_t *o, const char *key, int64_t v)
{
	json_object_set_new(o, key, json_integer(v));
}

/* A text of ours: copied, never NULL (a NULL sets nothing). */
static void
set_str(json_t *o, const char *key, const char *s)
{
	if (s)
		json_object_set_new(o, key, json_string(s));
}

static double
jnum(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A load array [1, 5, 15]: NAN where an entry is missing or no number. */
static void
load_unpack(const json_t *o, double load[3])
{
	const json_t *a = json_object_get(o, "load");

	for (size_t i = 0; i < 3; i++) {
		const json_t *v = json_is_array(a) ? json_array_get(a, i) : NULL;
		load[i] = json_is_number(v) ? json_number_value(v) : NAN;
	}
}

/* NULL (no load field) unless all three are known. */
static json_t *
load_pack(const double load[3])
{
	if (isnan(load[0]) || isnan(load[1]) || isnan(load[2]))
		return NULL;
	return json_pack("[f, f, f]", load[0], load[1], load[2]);
}

/* --- HELLO and the REPLY envelope --- */

json_t *
msg_hello_pack(const struct msg_hello *m)
{
	json_t *o = msg_new("HELLO"), *auth = json_object();

	set_int(o, "seq", m->seq);
	set_int(o, "version", PROTO_VERSION);
	set_str(o, "role", m->role);
	set_str(auth, "method", m->auth_method ? m->auth_method : "none");
	set_str(auth, "cred", m->auth_cred);
	json_object_set_new(o, "auth", auth);
	set_int(o, "uid", m->uid);
	set_str(o, "user", m->user);
	set_str(o, "nonce", m->nonce);
	if (m->any)
		json_object_set_new(o, "any", json_true());
	return o;
}

int
msg_hello_unpack(const json_t *o, struct msg_hello *m, char *err, size_t n)
{
	const json_t *auth = json_object_get(o, "auth");
	int64_t version = jint(o, "version", -1);

	memset(m, 0, sizeof *m);
	m->seq = jint(o, "seq", 0);
	m->role = jstr(o, "role");
	if (version != PROTO_VERSION) {
		snprintf(err, n, "protocol version %lld is not %d", (long long)version, PROTO_VERSION);
		return -1;
	}
	if (!m->role || (strcmp(m->role, "client") != 0 && strcmp(m->role, "execd") != 0 &&
	    strcmp(m->role, "peer") != 0 && strcmp(m->role, "witness") != 0)) {
		snprintf(err, n, "HELLO needs role \"client\", \"execd\", \"peer\" or \"witness\"");
		return -1;
	}
	m->auth_method = jstr(auth, "method");
	m->auth_cred = jstr(auth, "cred");
	m->uid = jint(o, "uid", -1);
	m->user = jstr(o, "user");
	m->nonce = jstr(o, "nonce");
	m->any = jbool(o, "any", false);
	return 0;
}

json_t *
msg_reply_pack(const struct msg_reply *m)
{
	json_t *o = msg_new("REPLY");

	set_int(o, "seq", m->seq);
	json_object_set_new(o, "ok", json_boolean(m->ok));
	set_str(o, "error", m->error);
	if (m->message)
		json_object_set_new(o, "message", proto_text(m->message));
	set_str(o, "master", m->master);
	return o;
}

int
msg_reply_unpack(const json_t *o, struct msg_reply *m, char *err, size_t n)
{
	(void)err, (void)n;
	m->seq = jint(o, "seq", 0);
	m->ok = jbool(o, "ok", false);
	m->error = jstr(o, "error");
	m->message = jstr(o, "message");
	m->master = jstr(o, "master");
	return 0;
}

json_t *
msg_hello_reply_pack(const struct msg_hello_reply *m)
{
	json_t *o = msg_reply_pack(&(struct msg_reply){ .seq = m->seq, .ok = true });

	set_str(o, "master", m->master);
	set_int(o, "epoch", m->epoch);
	set_int(o, "failover_timeout", m->failover_timeout);
	set_int(o, "uid", m->uid);
	set_str(o, "user", m->user);
	json_object_set_new(o, "manager", json_boolean(m->manager));
	json_object_set_new(o, "operator", json_boolean(m->operator));
	/* The client asked at port + 1: this tells it a master's query
	 * endpoint answered, not something else listening there. */
	if (m->query)
		json_object_set_new(o, "endpoint", json_string("query"));
	if (m->auth_cred)
		json_object_set_new(o, "auth", json_pack("{s:s, s:s}", "method", "munge", "cred", m->auth_cred));
	return o;
}

int
msg_hello_reply_unpack(const json_t *o, struct msg_hello_reply *m, char *err, size_t n)
{
	const char *endpoint = jstr(o, "endpoint");

	memset(m, 0, sizeof *m);
	m->seq = jint(o, "seq", 0);
	if (!jbool(o, "ok", false)) {
		snprintf(err, n, "%s", jstr(o, "message") ? jstr(o, "message") : "?");
		return -1;
	}
	m->master = jstr(o, "master");
	m->epoch = jint(o, "epoch", 0);
	m->failover_timeout = jint(o, "failover_timeout", 0);
	m->uid = jint(o, "uid", -1);
	m->user = jstr(o, "user");
	m->manager = jbool(o, "manager", false);
	m->operator = jbool(o, "operator", false);
	m->query = endpoint && strcmp(endpoint, "query") == 0;
	m->auth_cred = jstr(json_object_get(o, "auth"), "cred");
	return 0;
}

/* --- execd to master --- */

json_t *
msg_attempt_pack(const struct msg_attempt *a)
{
	return json_pack("{s:I, s:I, s:I}", "id", (json_int_t)a->id, "task", (json_int_t)a->task,
	    "attempt", (json_int_t)a->attempt);
}

void
msg_attempt_unpack(const json_t *o, struct msg_attempt *a)
{
	a->id = jint(o, "id", -1);
	a->task = jint(o, "task", 0);
	a->attempt = jint(o, "attempt", -1);
}

bool
msg_attempts_has(const struct msg_attempts *l, const struct job *j)
{
	for (size_t i = 0; l && i < l->n; i++)
		if (l->a[i].id == j->id && l->a[i].task == j->task && l->a[i].attempt == j->attempt)
			return true;
	return false;
}

/* The attempts of a list; what is not an object names none. */
static void
attempts_unpack(const json_t *list, struct msg_attempts *l)
{
	const json_t *v;
	size_t i;

	l->n = 0;
	l->a = xcalloc(json_array_size(list) + 1, sizeof *l->a);
	json_array_foreach(list, i, v)
		if (json_is_object(v))
			msg_attempt_unpack(v, &l->a[l->n++]);
}

json_t *
msg_register_pack(const struct msg_register *m)
{
	json_t *o = msg_new("REGISTER"), *v;

	set_int(o, "seq", m->seq);
	set_str(o, "host", m->host);
	set_int(o, "slots", m->slots);
	set_int(o, "uid", m->uid);
	if ((v = load_pack(m->load)) != NULL)
		json_object_set_new(o, "load", v);
	json_object_set_new(o, "idle", json_boolean(m->idle));
	json_object_set_new(o, "jobs", m->jobs ? json_incref(m->jobs) : json_array());
	json_object_set_new(o, "attrs", host_attrs_to_json(&m->attrs));
	set_str(o, "vmem_limit", m->vmem_limit);
	return o;
}

int
msg_register_unpack(const json_t *o, struct msg_register *m, char *err, size_t n)
{
	const char *why = NULL;

	memset(m, 0, sizeof *m);
	m->seq = jint(o, "seq", 0);
	m->host = jstr(o, "host");
	m->slots = jint(o, "slots", -1);
	m->uid = jint(o, "uid", -1);
	if (!name_chars_ok(m->host, 255) || m->slots < 0 || m->slots > 100000 || m->uid < 0 ||
	    m->uid > UINT32_MAX) {
		snprintf(err, n, "REGISTER needs host, slots and uid");
		return -1;
	}
	if (host_attrs_from_json(&m->attrs, json_object_get(o, "attrs"), &why) < 0) {
		host_attrs_clear(&m->attrs);
		snprintf(err, n, "REGISTER: %s", why);
		return -1;
	}
	load_unpack(o, m->load);
	m->idle = jbool(o, "idle", true);
	m->jobs = json_object_get(o, "jobs");
	attempts_unpack(m->jobs, &m->attempts);
	m->vmem_limit = jstr(o, "vmem_limit");
	/* Only the words an execd sends; an older execd sends none. */
	if (m->vmem_limit && strcmp(m->vmem_limit, "cgroup") != 0 && strcmp(m->vmem_limit, "rlimit") != 0)
		m->vmem_limit = NULL;
	return 0;
}

void
msg_register_clear(struct msg_register *m)
{
	host_attrs_clear(&m->attrs);
	free(m->attempts.a);
	m->attempts.a = NULL;
	m->attempts.n = 0;
}

json_t *
msg_load_pack(const struct msg_load *m)
{
	json_t *o = msg_new("LOAD"), *v;

	set_int(o, "seq", m->seq);
	if ((v = load_pack(m->load)) != NULL)
		json_object_set_new(o, "load", v);
	json_object_set_new(o, "idle", json_boolean(m->idle));
	set_str(o, "reason", m->reason);
	if (m->stopped)
		json_object_set(o, "stopped", m->stopped);
	return o;
}

int
msg_load_unpack(const json_t *o, struct msg_load *m, char *err, size_t n)
{
	(void)err, (void)n;
	m->seq = jint(o, "seq", 0);
	load_unpack(o, m->load);
	m->idle = jbool(o, "idle", true);
	m->reason = jstr(o, "reason");
	m->stopped = json_object_get(o, "stopped");
	return 0;
}

json_t *
msg_pull_pack(const struct msg_pull *m)
{
	json_t *o = msg_new("PULL");

	set_int(o, "seq", m->seq);
	set_int(o, "free", m->free);
	return o;
}

int
msg_pull_unpack(const json_t *o, struct msg_pull *m, char *err, size_t n)
{
	(void)err, (void)n;
	m->seq = jint(o, "seq", 0);
	m->free = jint(o, "free", -1);
	return 0;
}

/* The attempt a CHILD_ event speaks of. */
static void
event_pack(json_t *o, int64_t seq, int64_t id, int64_t task, int64_t attempt, int64_t petask,
    const char *host)
{
	set_int(o, "seq", seq);
	set_int(o, "id", id);
	set_int(o, "task", task);
	set_int(o, "attempt", attempt);
	if (petask > 0)
		set_int(o, "petask", petask);
	set_str(o, "host", host);
}

/* A task number out of range reads as 0: the event is the part's, which
 * the master checks as any other. */
static int64_t
event_petask(const json_t *o)
{
	int64_t n = jint(o, "petask", 0);
	return n > 0 && n <= INT32_MAX ? n : 0;
}

json_t *
msg_child_register_pack(const struct msg_child_register *m)
{
	json_t *o = msg_new("CHILD_REGISTER");

	event_pack(o, m->seq, m->id, m->task, m->attempt, m->petask, m->host);
	set_int(o, "pid", m->pid);
	if (m->start_time != MSG_ABSENT)
		set_int(o, "start_time", m->start_time);
	return o;
}

int
msg_child_register_unpack(const json_t *o, struct msg_child_register *m, char *err, size_t n)
{
	(void)err, (void)n;
	m->seq = jint(o, "seq", 0);
	m->id = jint(o, "id", 0);
	m->task = jint(o, "task", 0);
	m->attempt = jint(o, "attempt", -1);
	m->petask = event_petask(o);
	m->host = jstr(o, "host");
	m->pid = jint(o, "pid", 0);
	m->start_time = jint(o, "start_time", MSG_ABSENT);
	return 0;
}

json_t *
msg_child_term_pack(const struct msg_child_term *m)
{
	json_t *o = msg_new("CHILD_TERM");

	event_pack(o, m->seq, m->id, m->task, m->attempt, m->petask, m->host);
	set_int(o, "exit_status", m->exit_status);
	set_int(o, "signal", m->signal);
	if (!isnan(m->utime))
		json_object_set_new(o, "utime", json_real(m->utime));
	if (!isnan(m->stime))
		json_object_set_new(o, "stime", json_real(m->stime));
	set_int(o, "maxrss_kb", m->maxrss_kb);
	if (m->end_time != MSG_ABSENT)
		set_int(o, "end_time", m->end_time);
	set_str(o, "failed", m->failed);
	if (m->rusage)
		json_object_set(o, "rusage", (json_t *)m->rusage);
	set_str(o, "vacated", m->vacated);
	set_str(o, "limit", m->limit);
	set_str(o, "lost", m->lost);
	set_str(o, "requeue", m->requeue);
	if (m->staged_out)
		json_object_set(o, "staged_out", (json_t *)m->staged_out);
	return o;
}

int
msg_child_term_unpack(const json_t *o, struct msg_child_term *m, char *err, size_t n)
{
	(void)err, (void)n;
	m->seq = jint(o, "seq", 0);
	m->id = jint(o, "id", 0);
	m->task = jint(o, "task", 0);
	m->attempt = jint(o, "attempt", -1);
	m->petask = event_petask(o);
	m->host = jstr(o, "host");
	m->exit_status = jint(o, "exit_status", -1);
	m->signal = jint(o, "signal", 0);
	m->utime = jnum(o, "utime");
	m->stime = jnum(o, "stime");
	m->maxrss_kb = jint(o, "maxrss_kb", 0);
	m->end_time = jint(o, "end_time", MSG_ABSENT);
	m->failed = jstr(o, "failed");
	m->vacated = jstr(o, "vacated");
	m->limit = jstr(o, "limit");
	m->lost = jstr(o, "lost");
	m->requeue = jstr(o, "requeue");
	m->rusage = json_object_get(o, "rusage");
	/* A list the master cannot take is dropped, the end still recorded. */
	m->staged_out = json_object_get(o, "staged_out");
	if (m->staged_out && !stage_files_ok(m->staged_out, STAGE_MAX_FILES, &(const char *){ NULL }))
		m->staged_out = NULL;
	m->rusage_why = NULL;
	memset(&m->ru, 0, sizeof m->ru);
	if (m->rusage && rusage_from_json(&m->ru, m->rusage, &m->rusage_why) < 0)
		memset(&m->ru, 0, sizeof m->ru);
	return 0;
}

/* --- master to execd --- */

json_t *
msg_dispatch_pack(const struct msg_dispatch *m)
{
	json_t *o = msg_new("DISPATCH");

	set_int(o, "seq", m->seq);
	json_object_set(o, "jobs", m->jobs);
	return o;
}

int
msg_dispatch_unpack(const json_t *o, struct msg_dispatch *m, char *err, size_t n)
{
	m->seq = jint(o, "seq", 0);
	m->jobs = json_object_get(o, "jobs");
	if (!json_is_array(m->jobs)) {
		snprintf(err, n, "DISPATCH without jobs");
		return -1;
	}
	return 0;
}

void
msg_pe_host_add(json_t *list, const struct msg_pe_host *h)
{
	json_array_append_new(list, json_pack("{s:s?, s:I}", "host", h->host, "slots", (json_int_t)h->slots));
}

void
msg_pe_host_unpack(const json_t *o, struct msg_pe_host *h)
{
	h->host = jstr(o, "host");
	h->slots = jint(o, "slots", 1);
}

json_t *
msg_dispatch_part_pack(const struct job *j, const struct msg_dispatch_part *m)
{
	json_t *o = job_to_json(j);

	json_object_set_new(o, "part", json_integer(m->part));
	json_object_set(o, "pe_hosts", (json_t *)m->pe_hosts);
	if (m->petask > 0)
		json_object_set_new(o, "petask", json_integer(m->petask));
	return o;
}

const char *
msg_dispatch_part_unpack(const json_t *o, struct msg_dispatch_part *m)
{
	const json_t *h;
	size_t i;

	m->part = jint(o, "part", -1);
	m->pe_hosts = json_object_get(o, "pe_hosts");
	m->petask = event_petask(o);
	if (!json_is_array(m->pe_hosts) || json_array_size(m->pe_hosts) == 0 ||
	    json_array_size(m->pe_hosts) > JOB_MAX_SLOTS || m->part < 0 ||
	    m->part >= (int64_t)json_array_size(m->pe_hosts))
		return "the parallel job's part has no valid part and pe_hosts";
	json_array_foreach(m->pe_hosts, i, h) {
		struct msg_pe_host ph;
		msg_pe_host_unpack(h, &ph);
		if (!ph.host || !*ph.host || strpbrk(ph.host, " \n") || ph.slots < 1 || ph.slots > JOB_MAX_SLOTS)
			return "the parallel job's pe_hosts holds a bad host";
	}
	return NULL;
}

int
msg_dispatch_job_unpack(const json_t *o, struct msg_dispatch_job *m, const char **why)
{
	m->a.id = jint(o, "id", -1);
	m->a.task = jint(o, "task", -1);
	m->a.attempt = jint(o, "attempt", -1);
	(void)msg_dispatch_part_unpack(o, &m->pe);
	m->job = job_from_json(o, why);
	if (m->job && !m->job->script == !m->job->argv)
		*why = m->job->script ? "the job has both a script and a command" :
		    "the job has neither a script nor a command";
	else if (m->job && (!json_is_integer(json_object_get(o, "uid")) ||
	    !json_is_integer(json_object_get(o, "gid"))))
		/* Absent would mean 0: never run a job as root by omission. */
		*why = "the job has no uid or gid";
	else
		return m->job ? 0 : -1;
	job_free(m->job);
	m->job = NULL;
	return -1;
}

json_t *
msg_signal_pack(const struct msg_signal *m)
{
	return json_pack("{s:s, s:I, s:I, s:I, s:I}", "type", "SIGNAL", "id", (json_int_t)m->a.id,
	    "task", (json_int_t)m->a.task, "attempt", (json_int_t)m->a.attempt, "signal", (json_int_t)m->signal);
}

int
msg_signal_unpack(const json_t *o, struct msg_signal *m, char *err, size_t n)
{
	m->a.id = jint(o, "id", -1);
	m->a.task = jint(o, "task", -1);
	m->a.attempt = jint(o, "attempt", -1);
	m->signal = jint(o, "signal", -1);
	if (m->a.id < 0 || m->a.task < 0 || m->a.task > INT32_MAX || m->a.attempt < 0 ||
	    m->a.attempt > INT32_MAX || m->signal <= 0 || m->signal >= NSIG) {
		snprintf(err, n, "SIGNAL with bad fields");
		return -1;
	}
	return 0;
}

json_t *
msg_ack_pack(const struct msg_ack *m)
{
	json_t *o = msg_new("ACK");

	set_int(o, "seq", m->seq);
	return o;
}

int
msg_ack_unpack(const json_t *o, struct msg_ack *m, char *err, size_t n)
{
	(void)err, (void)n;
	m->seq = jint(o, "seq", -1);
	return 0;
}

/* --- masters: replication and failover --- */

json_t *
msg_probe_pack(const struct msg_probe *m)
{
	json_t *o = msg_new("PROBE");

	set_int(o, "seq", m->seq);
	set_int(o, "epoch", m->epoch);
	set_int(o, "last", m->last);
	return o;
}

int
msg_probe_unpack(const json_t *o, struct msg_probe *m, char *err, size_t n)
{
	(void)err, (void)n;
	m->seq = jint(o, "seq", 0);
	m->epoch = jint(o, "epoch", 0);
	m->last = jint(o, "last", -1);
	m->schema = jint(o, "schema", -1);
	m->role = jstr(o, "role");
	return 0;
}

json_t *
msg_sync_pack(const struct msg_probe *m)
{
	json_t *o = msg_probe_pack(m);

	json_object_set_new(o, "type", json_string("SYNC"));
	set_int(o, "schema", m->schema);
	return o;
}

int
msg_sync_unpack(const json_t *o, struct msg_probe *m, char *err, size_t n)
{
	return msg_probe_unpack(o, m, err, n);
}

json_t *
msg_probe_reply_pack(const struct msg_probe *m)
{
	json_t *o = msg_reply_pack(&(struct msg_reply){ .seq = m->seq, .ok = true });

	set_str(o, "role", m->role);
	set_int(o, "epoch", m->epoch);
	set_int(o, "last", m->last);
	return o;
}

int
msg_probe_reply_unpack(const json_t *o, struct msg_probe *m, char *err, size_t n)
{
	struct msg_reply r;

	msg_reply_unpack(o, &r, err, n);
	m->seq = r.seq;
	m->epoch = jint(o, "epoch", 0);
	m->last = jint(o, "last", 0);
	m->schema = -1;
	m->role = jstr(o, "role");
	if (!r.ok) {
		snprintf(err, n, "%s", r.message ? r.message : "refused");
		return -1;
	}
	return 0;
}

json_t *
msg_snapshot_pack(const struct msg_snapshot *m)
{
	json_t *o = msg_new("SNAPSHOT");

	set_int(o, "seq", m->seq);
	set_int(o, "epoch", m->epoch);
	set_int(o, "offset", m->offset);
	set_str(o, "data", m->data);
	json_object_set_new(o, "last", json_boolean(m->last));
	return o;
}

int
msg_snapshot_unpack(const json_t *o, struct msg_snapshot *m, char *err, size_t n)
{
	(void)err, (void)n;
	m->seq = jint(o, "seq", 0);
	m->epoch = jint(o, "epoch", 1);
	m->offset = jint(o, "offset", -1);
	m->data = jstr(o, "data");
	m->last = jbool(o, "last", false);
	return 0;
}

json_t *
msg_changeset_pack(const struct msg_changeset *m)
{
	json_t *o = msg_new("CHANGESET");

	set_int(o, "seq", m->seq);
	set_int(o, "epoch", m->epoch);
	set_str(o, "cs", m->cs);
	return o;
}

int
msg_changeset_unpack(const json_t *o, struct msg_changeset *m, char *err, size_t n)
{
	(void)err, (void)n;
	m->seq = jint(o, "seq", -1);
	m->epoch = jint(o, "epoch", 0);
	m->cs = jstr(o, "cs");
	return 0;
}

json_t *
msg_applied_pack(const struct msg_applied *m)
{
	json_t *o = msg_new("APPLIED");

	set_int(o, "seq", 0);
	set_int(o, "applied", m->applied);
	return o;
}

int
msg_applied_unpack(const json_t *o, struct msg_applied *m, char *err, size_t n)
{
	(void)err, (void)n;
	m->applied = jint(o, "applied", -1);
	return 0;
}

json_t *
msg_stage_blob_pack(const struct msg_stage_blob *m)
{
	json_t *o = msg_new("STAGE_BLOB");

	set_str(o, "sha256", m->sha256);
	set_int(o, "size", m->size);
	set_int(o, "offset", m->offset);
	if (m->bytes)
		set_int(o, "bytes", m->bytes);
	if (m->uid >= 0)
		set_int(o, "uid", m->uid);
	if (m->last)
		json_object_set_new(o, "last", json_true());
	return o;
}

int
msg_stage_blob_unpack(const json_t *o, struct msg_stage_blob *m, char *err, size_t n)
{
	m->sha256 = jstr(o, "sha256");
	m->size = jint(o, "size", -1);
	m->offset = jint(o, "offset", -1);
	m->bytes = jint(o, "bytes", 0);
	m->uid = jint(o, "uid", -1);
	m->last = jbool(o, "last", false);
	if (!sha256_hex_ok(m->sha256) || m->size < 0 || m->offset < 0 || m->bytes < 0 ||
	    m->bytes > STAGE_CHUNK || m->offset + m->bytes > m->size || m->uid < -1 ||
	    m->uid > UINT32_MAX) {
		snprintf(err, n, "STAGE_BLOB needs sha256, size, offset and bytes (at most 1 MiB) "
		    "with offset + bytes <= size, and a uid if any");
		return -1;
	}
	return 0;
}

json_t *
msg_stage_stored_pack(const struct msg_stage_blob *m)
{
	json_t *o = msg_new("STAGE_STORED");

	set_int(o, "seq", 0);
	set_str(o, "sha256", m->sha256);
	set_int(o, "size", m->size);
	return o;
}

int
msg_stage_stored_unpack(const json_t *o, struct msg_stage_blob *m, char *err, size_t n)
{
	*m = (struct msg_stage_blob){ .sha256 = jstr(o, "sha256"), .size = jint(o, "size", -1),
	    .offset = -1, .uid = -1 };
	if (!sha256_hex_ok(m->sha256) || m->size < 0) {
		snprintf(err, n, "STAGE_STORED needs sha256 and size");
		return -1;
	}
	return 0;
}

static json_t *
msg_stage_files_pack(const char *type, const struct msg_stage_files *m)
{
	json_t *o = msg_new(type);

	set_int(o, "seq", 0);
	json_object_set_new(o, "files", m->files ? json_deep_copy(m->files) : json_array());
	if (m->last)
		json_object_set_new(o, "last", json_true());
	return o;
}

json_t *
msg_stage_offer_pack(const struct msg_stage_files *m)
{
	return msg_stage_files_pack("STAGE_OFFER", m);
}

json_t *
msg_stage_want_pack(const struct msg_stage_files *m)
{
	return msg_stage_files_pack("STAGE_WANT", m);
}

/* Each file {sha256, size}: a list a peer sent is checked before use. */
int
msg_stage_files_unpack(const json_t *o, struct msg_stage_files *m, char *err, size_t n)
{
	const json_t *files = json_object_get(o, "files"), *v;
	size_t i;

	m->files = NULL;
	if (!json_is_array(files)) {
		snprintf(err, n, "%s needs files: [{sha256, size}]", msg_type_name(msg_type_of(o)));
		return -1;
	}
	json_array_foreach(files, i, v)
		if (!sha256_hex_ok(jstr(v, "sha256")) || jint(v, "size", -1) < 0) {
			snprintf(err, n, "%s: file %zu lacks sha256 or size", msg_type_name(msg_type_of(o)), i);
			return -1;
		}
	m->files = files;
	m->last = jbool(o, "last", false);
	return 0;
}

json_t *
msg_heartbeat_pack(const struct msg_heartbeat *m)
{
	json_t *o = msg_new("HEARTBEAT");

	if (m->epoch != MSG_ABSENT)
		set_int(o, "epoch", m->epoch);
	if (m->last != MSG_ABSENT)
		set_int(o, "last", m->last);
	set_int(o, "t", m->t);
	return o;
}

int
msg_heartbeat_unpack(const json_t *o, struct msg_heartbeat *m, char *err, size_t n)
{
	(void)err, (void)n;
	m->epoch = jint(o, "epoch", MSG_ABSENT);
	m->last = jint(o, "last", MSG_ABSENT);
	m->t = jint(o, "t", 0);
	return 0;
}

json_t *
msg_vote_request_pack(const struct msg_vote_request *m)
{
	json_t *o = msg_new("VOTE_REQUEST");

	set_int(o, "epoch", m->epoch);
	set_int(o, "timeout", m->timeout);
	set_str(o, "candidate", m->candidate);
	set_int(o, "last", m->last);
	set_int(o, "t", m->t);
	return o;
}

int
msg_vote_request_unpack(const json_t *o, struct msg_vote_request *m, char *err, size_t n)
{
	(void)err, (void)n;
	m->epoch = jint(o, "epoch", 0);
	m->timeout = jint(o, "timeout", 0);
	m->t = jint(o, "t", 0);
	m->last = jint(o, "last", -1);
	m->candidate = jstr(o, "candidate");
	return 0;
}

json_t *
msg_vote_pack(const struct msg_vote *m)
{
	json_t *o = msg_new("VOTE");

	set_int(o, "seq", 0);
	set_int(o, "epoch", m->epoch);
	json_object_set_new(o, "granted", json_boolean(m->granted));
	set_str(o, "host", m->host);
	set_str(o, "why", m->why);
	if (m->granted)
		set_int(o, "t", m->t);
	return o;
}

int
msg_vote_unpack(const json_t *o, struct msg_vote *m, char *err, size_t n)
{
	m->epoch = jint(o, "epoch", 0);
	m->t = jint(o, "t", 0);
	m->granted = jbool(o, "granted", false);
	m->host = jstr(o, "host");
	m->why = jstr(o, "why");
	if (!m->host || !*m->host || strlen(m->host) > 255) {
		snprintf(err, n, "VOTE without a host");
		return -1;
	}
	return 0;
}

static json_t *
bare_pack(const char *type, const struct msg_bare *m)
{
	json_t *o = msg_new(type);

	set_int(o, "seq", m->seq);
	return o;
}

json_t *
msg_masters_pack(const struct msg_bare *m)
{
	return bare_pack("MASTERS", m);
}

json_t *
msg_takeover_pack(const struct msg_bare *m)
{
	return bare_pack("TAKEOVER", m);
}

int
msg_bare_unpack(const json_t *o, struct msg_bare *m, char *err, size_t n)
{
	(void)err, (void)n;
	m->seq = jint(o, "seq", 0);
	return 0;
}

void
msg_takeover_reply_add(json_t *rep, const struct msg_takeover_reply *m)
{
	json_object_set_new(rep, "epoch", json_integer(m->epoch));
}

void
msg_takeover_reply_unpack(const json_t *rep, struct msg_takeover_reply *m)
{
	m->epoch = jint(rep, "epoch", 0);
}

/* --- the table --- */

/* The table's entries call the typed functions through these. */
#define MSG_ANY(fn)                                                         \
	static json_t *fn##_pack_any(const void *m) { return fn##_pack(m); }    \
	static int fn##_unpack_any(const json_t *o, void *m, char *e, size_t n)  \
	{ return fn##_unpack(o, m, e, n); }
MSG_ANY(msg_hello)
MSG_ANY(msg_reply)
MSG_ANY(msg_register)
MSG_ANY(msg_load)
MSG_ANY(msg_pull)
MSG_ANY(msg_child_register)
MSG_ANY(msg_child_term)
MSG_ANY(msg_dispatch)
MSG_ANY(msg_signal)
MSG_ANY(msg_ack)
MSG_ANY(msg_probe)
MSG_ANY(msg_sync)
MSG_ANY(msg_snapshot)
MSG_ANY(msg_changeset)
MSG_ANY(msg_applied)
MSG_ANY(msg_heartbeat)
MSG_ANY(msg_stage_blob)
MSG_ANY(msg_stage_stored)
MSG_ANY(msg_vote_request)
MSG_ANY(msg_vote)

static json_t *msg_masters_pack_any(const void *m) { return msg_masters_pack(m); }
static json_t *msg_takeover_pack_any(const void *m) { return msg_takeover_pack(m); }
static int msg_bare_unpack_any(const json_t *o, void *m, char *e, size_t n) { return msg_bare_unpack(o, m, e, n); }
static json_t *msg_stage_offer_pack_any(const void *m) { return msg_stage_offer_pack(m); }
static json_t *msg_stage_want_pack_any(const void *m) { return msg_stage_want_pack(m); }
static int msg_stage_files_unpack_any(const json_t *o, void *m, char *e, size_t n) { return msg_stage_files_unpack(o, m, e, n); }
static void msg_register_clear_any(void *m) { msg_register_clear(m); }

/* Every message type of this file: doc/protocol.md's tables of the
 * connection, execd and replication messages follow it (t/unit/test_msg
 * checks that they name the same types). */
const struct msg_def msg_defs[] = {
/* The name is the enum's without "MSG_" (test_msg checks it against msg_type_name). */
#define DEF(t, from, st, fn) { t, &(#t)[4], from, sizeof(st), fn##_pack_any, fn##_unpack_any, NULL }
	DEF(MSG_HELLO, "any", struct msg_hello, msg_hello),
	DEF(MSG_REPLY, "any", struct msg_reply, msg_reply),
	{ MSG_REGISTER, "REGISTER", "execd", sizeof(struct msg_register), msg_register_pack_any,
	  msg_register_unpack_any, msg_register_clear_any },
	DEF(MSG_LOAD, "execd", struct msg_load, msg_load),
	DEF(MSG_PULL, "execd", struct msg_pull, msg_pull),
	DEF(MSG_CHILD_REGISTER, "execd", struct msg_child_register, msg_child_register),
	DEF(MSG_CHILD_TERM, "execd", struct msg_child_term, msg_child_term),
	DEF(MSG_DISPATCH, "master", struct msg_dispatch, msg_dispatch),
	DEF(MSG_SIGNAL, "master", struct msg_signal, msg_signal),
	DEF(MSG_ACK, "master", struct msg_ack, msg_ack),
	DEF(MSG_PROBE, "peer", struct msg_probe, msg_probe),
	DEF(MSG_SYNC, "standby", struct msg_probe, msg_sync),
	DEF(MSG_SNAPSHOT, "primary", struct msg_snapshot, msg_snapshot),
	DEF(MSG_CHANGESET, "primary", struct msg_changeset, msg_changeset),
	DEF(MSG_APPLIED, "standby", struct msg_applied, msg_applied),
	DEF(MSG_HEARTBEAT, "primary", struct msg_heartbeat, msg_heartbeat),
	DEF(MSG_STAGE_BLOB, "primary", struct msg_stage_blob, msg_stage_blob),
	DEF(MSG_STAGE_STORED, "standby", struct msg_stage_blob, msg_stage_stored),
	{ MSG_STAGE_OFFER, "STAGE_OFFER", "primary", sizeof(struct msg_stage_files), msg_stage_offer_pack_any,
	  msg_stage_files_unpack_any, NULL },
	{ MSG_STAGE_WANT, "STAGE_WANT", "standby", sizeof(struct msg_stage_files), msg_stage_want_pack_any,
	  msg_stage_files_unpack_any, NULL },
	DEF(MSG_VOTE_REQUEST, "candidate", struct msg_vote_request, msg_vote_request),
	DEF(MSG_VOTE, "witness", struct msg_vote, msg_vote),
	{ MSG_MASTERS, "MASTERS", "client", sizeof(struct msg_bare), msg_masters_pack_any,
	  msg_bare_unpack_any, NULL },
	{ MSG_TAKEOVER, "TAKEOVER", "manager", sizeof(struct msg_bare), msg_takeover_pack_any,
	  msg_bare_unpack_any, NULL },
#undef DEF
};
const size_t msg_ndefs = sizeof msg_defs / sizeof msg_defs[0];

const struct msg_def *
msg_def_of(enum msg_type t)
{
	for (size_t i = 0; i < msg_ndefs; i++)
		if (msg_defs[i].type == t)
			return &msg_defs[i];
	return NULL;
}
