/* msg_req.c: the client requests and their replies, each layout written once: its pack beside its unpack. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "common/msg_req.h"

/* A frame of type t with nothing else yet. */
static json_t *
msg_new(enum msg_type t)
{
	json_t *o = json_object();
	json_object_set_new(o, "type", json_string(msg_type_name(t)));
	return o;
}

/* Sets key to a string when s is not NULL. */
static void
set_str(json_t *o, const char *key, const char *s)
{
	if (s)
		json_object_set_new(o, key, json_string(s));
}

/* Sets key to an integer when it is not 0 (0 is "absent"). */
static void
set_nonzero(json_t *o, const char *key, int64_t v)
{
	if (v)
		json_object_set_new(o, key, json_integer(v));
}

/* Sets key to a borrowed list when there is one. */
static void
set_list(json_t *o, const char *key, json_t *a)
{
	if (a)
		json_object_set(o, key, a);
}

/* A list of positive ids (jobs, cron entries): NULL when absent; *bad when
 * it is not a list of at most max, or an element is not a positive integer. */
static json_t *
ids_get(const json_t *o, const char *key, size_t max, bool *bad_list, bool *bad_id)
{
	json_t *a = json_object_get(o, key), *v;
	size_t i;

	if (!a)
		return NULL;
	if (!json_is_array(a) || json_array_size(a) > max) {
		*bad_list = true;
		return NULL;
	}
	json_array_foreach(a, i, v)
		if (!json_is_integer(v) || json_integer_value(v) <= 0) {
			*bad_id = true;
			return NULL;
		}
	return a;
}

/* The ids and users of STATUS and of the job operations, with their refusals. */
static int
jobs_users_get(const json_t *o, json_t **jobs, json_t **users, const char **why)
{
	bool bad_list = false, bad_id = false;
	json_t *a = json_object_get(o, "users"), *v;
	size_t i;

	*jobs = ids_get(o, "jobs", 100000, &bad_list, &bad_id);
	*users = NULL;
	if (a) {
		if (!json_is_array(a) || json_array_size(a) > 10000) {
			*why = "users must be a list of user names";
			return -1;
		}
		json_array_foreach(a, i, v)
			if (!json_is_string(v)) {
				*why = "users must be a list of user names";
				return -1;
			}
		*users = a;
	}
	if (bad_list || bad_id) {
		*why = bad_list ? "jobs must be a list of job ids" : "a job id must be a positive integer";
		return -1;
	}
	return 0;
}

/* --- results: the per-job (or per-target) answers of the changes --- */

void
msg_result_add(json_t *results, const struct msg_result *r)
{
	json_t *o = json_object();

	if (r->target)
		json_object_set_new(o, "target", proto_text(r->target));
	else
		json_object_set_new(o, "id", json_integer(r->id));
	json_object_set_new(o, "ok", json_boolean(r->ok));
	json_object_set_new(o, "message", proto_text(r->message));
	json_array_append_new(results, o);
}

void
msg_result_unpack(const json_t *o, struct msg_result *r)
{
	r->id = jint(o, "id", 0);
	r->target = jstr(o, "target");
	r->ok = jbool(o, "ok", false);
	r->message = jstr(o, "message");
}

/* --- DELETE, HOLD, RELEASE, SUSPEND, UNSUSPEND, CLEAR --- */

json_t *
msg_jobsel_pack(const struct msg_jobsel *m)
{
	json_t *o = msg_new(m->type);

	set_list(o, "jobs", m->jobs);
	set_list(o, "users", m->users);
	set_list(o, "tasks", m->tasks);
	return o;
}

json_t *
msg_jobsel_pack_one(enum msg_type t, int64_t id)
{
	json_t *o = msg_new(t);
	json_object_set_new(o, "jobs", json_pack("[I]", (json_int_t)id));
	return o;
}

int
msg_jobsel_unpack(const json_t *o, struct msg_jobsel *m, const char **why)
{
	m->type = msg_type_of(o);
	m->tasks = json_object_get(o, "tasks");
	if (m->tasks && (!json_is_object(m->tasks) || m->type == MSG_CLEAR)) {
		*why = "tasks must be an object of task ranges, and CLEAR takes none";
		return -1;
	}
	if (jobs_users_get(o, &m->jobs, &m->users, why) < 0)
		return -1;
	if (!m->jobs && !m->users) {
		*why = "no job ids or users given";
		return -1;
	}
	return 0;
}

/* --- SUBMIT --- */

json_t *
msg_submit_pack(const struct msg_submit *m)
{
	json_t *o = msg_new(MSG_SUBMIT);

	set_list(o, "job", m->job);
	if (!m->verify)
		json_object_set_new(o, "verify", json_false());
	set_list(o, "deps", m->deps);
	set_str(o, "cron", m->cron);
	set_str(o, "key", m->key);
	return o;
}

bool
msg_req_keyed(const json_t *o)
{
	return o && json_object_get(o, "key");
}

void
msg_dep_add(json_t *list, const struct msg_dep *m)
{
	json_t *kind = json_string(m->kind), *job = m->job ? json_string(m->job) : json_null(), *o;

	if (!kind || !job) {
		json_decref(kind);
		json_decref(job);
		return;
	}
	o = json_object();
	json_object_set_new(o, "kind", kind);
	json_object_set_new(o, "job", job);
	json_array_append_new(list, o);
}

void
msg_dep_unpack(const json_t *o, struct msg_dep *m)
{
	m->kind = jstr(o, "kind");
	m->job = jstr(o, "job");
}

int
msg_submit_unpack(const json_t *o, struct msg_submit *m, const char **why)
{
	m->key = jstr(o, "key");
	if (m->key && (strlen(m->key) < 16 || strlen(m->key) > 64)) {
		*why = "a submission key must have 16 to 64 characters";
		return -1;
	}
	m->job = json_object_get(o, "job");
	m->verify = jbool(o, "verify", true);
	m->deps = json_object_get(o, "deps");
	m->cron = jstr(o, "cron");
	return 0;
}

void
msg_submitted_add(json_t *rep, const struct msg_submitted *m)
{
	if (m->cron)
		json_object_set_new(rep, "cron", json_integer(m->cron));
	else
		json_object_set_new(rep, "id", json_integer(m->id));
	json_object_set_new(rep, "name", json_string(m->name));
	if (m->cron)
		json_object_set_new(rep, "next_run", json_integer(m->next_run));
	if (m->repeated)
		json_object_set_new(rep, "repeated", json_true());
	if (m->qrsh_cred)
		json_object_set_new(rep, "qrsh_cred", json_true());
}

void
msg_submitted_unpack(const json_t *o, struct msg_submitted *m)
{
	m->id = jint(o, "id", 0);
	m->name = jstr(o, "name");
	m->repeated = jbool(o, "repeated", false);
	m->qrsh_cred = jbool(o, "qrsh_cred", false);
	m->cron = jint(o, "cron", 0);
	m->next_run = jint(o, "next_run", 0);
}

/* --- STATUS --- */

/* The states a letter string selects, 0 when a letter is not one. */
static unsigned
states_mask(const char *s)
{
	unsigned m = 0;
	for (; *s; s++) {
		switch (*s) {
		case 'p': m |= 1u << JS_PENDING; break;
		case 'r': m |= 1u << JS_DISPATCHED | 1u << JS_RUNNING; break;
		case 'z': m |= 1u << JS_DONE | 1u << JS_FAILED | 1u << JS_DELETED; break;
		case 'a': m |= 0x3fu; break;
		default: return 0;
		}
	}
	return m;
}

json_t *
msg_status_pack(const struct msg_status *m)
{
	json_t *o = msg_new(MSG_STATUS);

	set_list(o, "jobs", m->jobs);
	set_list(o, "users", m->users);
	set_str(o, "states", m->states);
	if (m->brief)
		json_object_set_new(o, "brief", json_true());
	if (m->by_prio)
		json_object_set_new(o, "order", json_string("prio"));
	if (m->limit)
		json_object_set_new(o, "limit", json_integer(m->limit));
	if (m->after)
		json_object_set_new(o, "after", json_integer(m->after));
	if (m->has_after_prio)
		json_object_set_new(o, "after_prio", json_integer(m->after_prio));
	return o;
}

json_t *
msg_status_pack_one(int64_t id)
{
	json_t *o = msg_new(MSG_STATUS);
	json_object_set_new(o, "jobs", json_pack("[I]", (json_int_t)id));
	return o;
}

int
msg_status_unpack(const json_t *o, struct msg_status *m, const char **why)
{
	const char *order = jstr(o, "order");

	if (jobs_users_get(o, &m->jobs, &m->users, why) < 0)
		return -1;
	m->states = jstr(o, "states");
	m->brief = jbool(o, "brief", false);
	m->limit = jint(o, "limit", 0);
	m->after = jint(o, "after", 0);
	m->has_after_prio = json_object_get(o, "after_prio") != NULL;
	m->after_prio = jint(o, "after_prio", INT64_MAX);
	m->by_prio = order && strcmp(order, "prio") == 0;
	m->state_mask = states_mask(m->states ? m->states : "pr");
	if (m->limit < 0 || m->limit > 100000 || m->after < 0 || ((m->limit || m->after) && m->jobs)) {
		*why = "after and limit (1..100000) go with a listing, not jobs";
		return -1;
	}
	if (!m->state_mask) {
		*why = "states must be letters from p, r, z, a";
		return -1;
	}
	if ((order && !m->by_prio) || (m->has_after_prio && !m->by_prio) ||
	    (m->by_prio && (m->state_mask != 1u << JS_PENDING || m->jobs))) {
		*why = "order \"prio\" (with after_prio) lists pending jobs: states \"p\", no jobs";
		return -1;
	}
	return 0;
}

/* --- ALTER --- */

json_t *
msg_alter_pack(const struct msg_alter *m)
{
	json_t *o = msg_new(MSG_ALTER);

	set_list(o, "jobs", m->jobs);
	if (m->has_prio)
		json_object_set_new(o, "prio", json_integer(m->prio));
	set_str(o, "hold", m->hold);
	set_str(o, "name", m->name);
	set_str(o, "queue", m->queue);
	set_list(o, "req", m->req);
	if (!m->verify)
		json_object_set_new(o, "verify", json_false());
	set_list(o, "soft", m->soft);
	set_str(o, "project", m->project);
	set_str(o, "account", m->account);
	set_list(o, "context", m->context);
	if (m->reserve >= 0)
		json_object_set_new(o, "reserve", json_boolean(m->reserve));
	if (m->js >= 0)
		json_object_set_new(o, "js", json_integer(m->js));
	set_str(o, "in", m->in);
	return o;
}

/* ALTER's -ac/-dc/-sc: at most JOB_MAX_CONTEXT texts, each a letter a, d or
 * s and its list; the lists themselves are checked per job. */
static int
alter_context_unpack(const json_t *o, struct msg_alter *m, const char **why)
{
	json_t *v;
	size_t i;

	m->context = json_object_get(o, "context");
	if (!m->context)
		return 0;
	if (!json_is_array(m->context) || json_array_size(m->context) > JOB_MAX_CONTEXT) {
		*why = "context must be a list of changes";
		return -1;
	}
	json_array_foreach(m->context, i, v) {
		const char *s = json_string_value(v);
		if (!s || !s[0] || !strchr("ads", s[0]) || json_string_length(v) > JOB_MAX_STRING) {
			*why = "a context change is not -ac, -dc or -sc with its list";
			return -1;
		}
	}
	return 0;
}

int
msg_alter_unpack(const json_t *o, struct msg_alter *m, const char **why)
{
	const json_t *prio = json_object_get(o, "prio");
	bool bad_list = false, bad_id = false;

	m->jobs = ids_get(o, "jobs", 100000, &bad_list, &bad_id);
	if (bad_list || bad_id || !m->jobs || json_array_size(m->jobs) == 0) {
		*why = bad_list ? "jobs must be a list of job ids" : bad_id ? "a job id must be a positive integer" :
		    "no job ids given";
		return -1;
	}
	m->has_prio = prio != NULL;
	m->prio_ok = json_is_integer(prio) && json_integer_value(prio) >= -1023 &&
	    json_integer_value(prio) <= 1024;
	m->prio = m->prio_ok ? (int)json_integer_value(prio) : 0;
	m->hold = jstr(o, "hold");
	m->name = jstr(o, "name");
	m->queue = jstr(o, "queue");
	m->req = json_object_get(o, "req");
	m->verify = jbool(o, "verify", true);
	m->soft = json_object_get(o, "soft");
	m->project = jstr(o, "project");
	m->account = jstr(o, "account");
	if ((m->project && (!*m->project || strlen(m->project) > JOB_MAX_NAME)) ||
	    (m->account && (!*m->account || strlen(m->account) > JOB_MAX_NAME))) {
		*why = "a project or account name must have 1 to 200 bytes";
		return -1;
	}
	m->reserve = json_is_boolean(json_object_get(o, "reserve")) ?
	    json_is_true(json_object_get(o, "reserve")) : -1;
	m->js = (int)jint(o, "js", -1);
	if (json_object_get(o, "js") && (m->js < 0 || jint(o, "js", -1) > INT32_MAX)) {
		*why = "the job share (-js) must be 0 or more";
		return -1;
	}
	m->in = jstr(o, "in");
	if (m->in && (!*m->in || strlen(m->in) > JOB_MAX_STRING)) {
		*why = "-i needs a path of at most 4096 bytes";
		return -1;
	}
	return alter_context_unpack(o, m, why);
}

/* --- WAIT, HOSTS --- */

json_t *
msg_wait_pack(const struct msg_wait *m)
{
	json_t *o = msg_new(MSG_WAIT);
	json_object_set_new(o, "id", json_integer(m->id));
	if (m->task > 0)
		json_object_set_new(o, "task", json_integer(m->task));
	return o;
}

int
msg_wait_unpack(const json_t *o, struct msg_wait *m, const char **why)
{
	/* Not a positive integer: a job that does not exist (noent). */
	m->id = jint(o, "id", 0);
	m->task = jint(o, "task", 0);
	if (m->task < 0 || m->task > INT32_MAX) {
		*why = "task must be a positive task id";
		return -1;
	}
	return 0;
}

void
msg_waited_add(json_t *rep, json_t *job)
{
	json_object_set_new(rep, "job", job);
}

void
msg_waited_unpack(const json_t *o, struct msg_waited *m)
{
	m->job = json_object_get(o, "job");
	if (!json_is_object(m->job))
		m->job = NULL;
}

json_t *
msg_hosts_pack(const struct msg_hosts *m)
{
	json_t *o = msg_new(MSG_HOSTS);
	json_object_set_new(o, "jobs", json_boolean(m->jobs));
	return o;
}

int
msg_hosts_unpack(const json_t *o, struct msg_hosts *m, const char **why)
{
	(void)why;
	m->jobs = jbool(o, "jobs", false);
	return 0;
}

/* --- ACCT --- */

json_t *
msg_acct_pack(const struct msg_acct *m)
{
	json_t *o = msg_new(MSG_ACCT);

	set_nonzero(o, "id", m->id);
	set_str(o, "name", m->name);
	set_str(o, "owner", m->owner);
	set_str(o, "project", m->project);
	set_str(o, "account", m->account);
	set_nonzero(o, "since", m->since);
	set_str(o, "queue", m->queue);
	set_str(o, "host", m->host);
	set_str(o, "group", m->group);
	set_str(o, "pe", m->pe);
	set_nonzero(o, "slots", m->slots);
	set_nonzero(o, "from", m->from);
	set_nonzero(o, "to", m->to);
	if (m->by_end)
		json_object_set_new(o, "by_end", json_true());
	set_str(o, "summary", m->summary);
	if (m->has_after)
		json_object_set_new(o, "after", json_pack("[I, I]", (json_int_t)m->after_end,
		    (json_int_t)m->after_row));
	if (m->limit)
		json_object_set_new(o, "limit", json_integer(m->limit));
	return o;
}

/* "total", or group names joined by commas, each once: their bits; -1 if not. */
static int
msg_acct_groups(const char *summary)
{
	static const char *const names[] = { "host", "queue", "owner", "group", "pe", "slots" };
	const size_t nnames = sizeof names / sizeof names[0];
	unsigned groups = 0;
	const char *p = summary;

	if (strcmp(summary, "total") == 0)
		return 0;
	for (;;) {
		size_t n = strcspn(p, ","), k;
		for (k = 0; k < nnames; k++)
			if (n == strlen(names[k]) && strncmp(p, names[k], n) == 0)
				break;
		if (k == nnames || (groups & (1u << k)))
			return -1;
		groups |= 1u << k;
		if (!p[n])
			return (int)groups;
		p += n + 1;
	}
}

static bool
msg_acct_str_ok(const json_t *o, const char *key, const char *v)
{
	return json_object_get(o, key) ? v && strlen(v) <= JOB_MAX_STRING : true;
}

int
msg_acct_unpack(const json_t *o, struct msg_acct *m, const char **why)
{
	const json_t *after = json_object_get(o, "after");
	int groups = 0;

	m->id = jint(o, "id", 0);
	m->name = jstr(o, "name");
	m->owner = jstr(o, "owner");
	m->project = jstr(o, "project");
	m->account = jstr(o, "account");
	if ((json_object_get(o, "project") && (!m->project || strlen(m->project) > JOB_MAX_NAME)) ||
	    (json_object_get(o, "account") && (!m->account || strlen(m->account) > JOB_MAX_NAME))) {
		*why = "ACCT's project and account are names of at most 200 bytes";
		return -1;
	}
	m->since = jint(o, "since", 0);
	m->queue = jstr(o, "queue");
	m->host = jstr(o, "host");
	m->group = jstr(o, "group");
	m->pe = jstr(o, "pe");
	m->slots = jint(o, "slots", 0);
	m->from = jint(o, "from", 0);
	m->to = jint(o, "to", 0);
	m->by_end = jbool(o, "by_end", false);
	m->summary = jstr(o, "summary");
	m->limit = jint(o, "limit", MSG_ACCT_PAGE_MAX);
	if (m->summary)
		groups = msg_acct_groups(m->summary);
	m->groups = groups < 0 ? 0 : (unsigned)groups;
	if (m->id < 0 || m->since < 0 || m->from < 0 || m->to < 0 || m->limit <= 0 ||
	    m->limit > MSG_ACCT_PAGE_MAX ||
	    (json_object_get(o, "id") && !json_is_integer(json_object_get(o, "id"))) ||
	    !msg_acct_str_ok(o, "name", m->name) || !msg_acct_str_ok(o, "owner", m->owner) ||
	    !msg_acct_str_ok(o, "queue", m->queue) || !msg_acct_str_ok(o, "host", m->host) ||
	    !msg_acct_str_ok(o, "group", m->group) || !msg_acct_str_ok(o, "pe", m->pe) ||
	    m->slots < 0 || groups < 0) {
		*why = "ACCT takes id, name, owner, since, queue, host, group, pe, slots, from, to, by_end, "
		    "summary (total, or host, queue, owner, group, pe and slots joined by commas), after "
		    "and limit (1..1000)";
		return -1;
	}
	m->has_after = after != NULL;
	m->after_end = m->after_row = -1;
	if (after) {
		if (!json_is_array(after) || json_array_size(after) != 2 ||
		    !json_is_integer(json_array_get(after, 0)) || !json_is_integer(json_array_get(after, 1))) {
			*why = "ACCT after must be [end_time, row]";
			return -1;
		}
		m->after_end = json_integer_value(json_array_get(after, 0));
		m->after_row = json_integer_value(json_array_get(after, 1));
	}
	return 0;
}

void
msg_acct_next_add(json_t *rep, int64_t end_time, int64_t row)
{
	json_object_set_new(rep, "next", json_pack("[I, I]", (json_int_t)end_time, (json_int_t)row));
}

bool
msg_acct_next(const json_t *rep, struct msg_acct *m)
{
	const json_t *next = json_object_get(rep, "next");

	if (!json_is_array(next) || json_array_size(next) != 2 || !json_is_integer(json_array_get(next, 0)) ||
	    !json_is_integer(json_array_get(next, 1)))
		return false;
	m->has_after = true;
	m->after_end = json_integer_value(json_array_get(next, 0));
	m->after_row = json_integer_value(json_array_get(next, 1));
	return true;
}

/* --- CONF --- */

json_t *
msg_conf_pack(const struct msg_conf *m)
{
	json_t *o = msg_new(MSG_CONF);

	set_str(o, "op", m->op);
	set_str(o, "queue", m->queue);
	set_str(o, "pe", m->pe);
	return o;
}

int
msg_conf_unpack(const json_t *o, struct msg_conf *m, const char **why)
{
	m->op = jstr(o, "op");
	m->queue = jstr(o, "queue");
	m->pe = jstr(o, "pe");
	if (!m->op || (strcmp(m->op, "list") != 0 && strcmp(m->op, "show") != 0 &&
	    strcmp(m->op, "reload") != 0 && strcmp(m->op, "global") != 0)) {
		*why = "CONF op must be list, show, global or reload";
		return -1;
	}
	return 0;
}

/* --- CRON --- */

json_t *
msg_cron_pack(const struct msg_cron *m)
{
	json_t *o = msg_new(MSG_CRON);

	set_str(o, "action", m->action);
	set_list(o, "ids", m->ids);
	if (m->force)
		json_object_set_new(o, "force", json_true());
	return o;
}

int
msg_cron_unpack(const json_t *o, struct msg_cron *m, const char **why)
{
	bool bad_list = false, bad_id = false;

	m->action = jstr(o, "action");
	m->force = jbool(o, "force", false);
	m->ids = NULL;
	if (m->action && strcmp(m->action, "list") == 0)
		return 0;
	if (!m->action || (strcmp(m->action, "delete") != 0 && strcmp(m->action, "hold") != 0 &&
	    strcmp(m->action, "release") != 0)) {
		*why = "CRON action must be list, delete, hold or release";
		return -1;
	}
	m->ids = ids_get(o, "ids", 10000, &bad_list, &bad_id);
	if (!bad_id && (!m->ids || json_array_size(m->ids) == 0)) {
		*why = m->action[0] == 'd' ? "CRON delete needs ids: a list of entry numbers" :
		    m->action[0] == 'h' ? "CRON hold needs ids: a list of entry numbers" :
		    "CRON release needs ids: a list of entry numbers";
		return -1;
	}
	if (bad_id) {
		*why = "a cron entry id is a positive integer";
		return -1;
	}
	return 0;
}

/* --- DISABLE, ENABLE --- */

json_t *
msg_flags_pack(const struct msg_flags *m)
{
	json_t *o = msg_new(m->type);
	set_list(o, "targets", m->targets);
	return o;
}

int
msg_flags_unpack(const json_t *o, struct msg_flags *m, const char **why)
{
	json_t *a = json_object_get(o, "targets"), *v;
	size_t i;

	m->type = msg_type_of(o);
	m->targets = NULL;
	if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > 10000) {
		*why = "targets must be a list of queue or host names";
		return -1;
	}
	json_array_foreach(a, i, v)
		if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > 255) {
			*why = "targets must be a list of queue or host names";
			return -1;
		}
	m->targets = a;
	return 0;
}

/* --- RESERVE, ALIAS --- */

json_t *
msg_reserve_pack(const struct msg_reserve *m)
{
	json_t *o = msg_new(MSG_RESERVE);

	set_str(o, "op", m->op);
	set_str(o, "name", m->name);
	set_nonzero(o, "count", m->count);
	set_str(o, "hosts", m->hosts);
	set_str(o, "attrs", m->attrs);
	set_nonzero(o, "start", m->start);
	set_nonzero(o, "end", m->end);
	set_nonzero(o, "duration", m->duration);
	set_list(o, "users", m->users);
	set_str(o, "mail", m->mail);
	if (m->exclusive)
		json_object_set_new(o, "exclusive", json_true());
	if (m->overrun)
		json_object_set_new(o, "overrun", json_true());
	return o;
}

int
msg_reserve_unpack(const json_t *o, struct msg_reserve *m, const char **why)
{
	m->op = jstr(o, "op");
	if (m->op && strcmp(m->op, "list") != 0 && strcmp(m->op, "create") != 0) {
		*why = "RESERVE op must be list or create";
		return -1;
	}
	m->name = jstr(o, "name");
	m->count = jint(o, "count", 0);
	m->hosts = jstr(o, "hosts");
	m->attrs = jstr(o, "attrs");
	m->start = jint(o, "start", 0);
	m->end = jint(o, "end", 0);
	m->duration = jint(o, "duration", 0);
	m->users = json_object_get(o, "users");
	m->mail = jstr(o, "mail");
	m->exclusive = jbool(o, "exclusive", false);
	m->overrun = jbool(o, "overrun", false);
	return 0;
}

json_t *
msg_alias_pack(const struct msg_alias *m)
{
	json_t *o = msg_new(MSG_ALIAS);

	set_str(o, "op", m->op);
	set_str(o, "name", m->name);
	set_str(o, "expr", m->expr);
	set_str(o, "host", m->host);
	set_list(o, "users", m->users);
	set_list(o, "owners", m->owners);
	return o;
}

int
msg_alias_unpack(const json_t *o, struct msg_alias *m, const char **why)
{
	static const char *const ops[] = { "add", "delete", "show", "expr", "mhost", "shost" };
	size_t i;

	m->op = jstr(o, "op");
	for (i = 0; m->op && i < sizeof ops / sizeof ops[0]; i++)
		if (strcmp(m->op, ops[i]) == 0)
			break;
	if (!m->op || i == sizeof ops / sizeof ops[0]) {
		*why = "ALIAS op must be add, delete, show, expr, mhost or shost";
		return -1;
	}
	m->name = jstr(o, "name");
	m->expr = jstr(o, "expr");
	m->host = jstr(o, "host");
	m->users = json_object_get(o, "users");
	m->owners = json_object_get(o, "owners");
	return 0;
}

/* --- UNRESERVE --- */

json_t *
msg_unreserve_pack(const struct msg_unreserve *m)
{
	json_t *o = msg_new(MSG_UNRESERVE);
	set_str(o, "name", m->name);
	return o;
}

int
msg_unreserve_unpack(const json_t *o, struct msg_unreserve *m, const char **why)
{
	(void)why;
	/* Absent or not a string: no such reservation (noent). */
	m->name = jstr(o, "name");
	return 0;
}

/* --- INHERIT --- */

/* On a job object, or INHERIT's task. */
void
msg_inherit_task_set(json_t *o, const struct msg_inherit *m)
{
	if (m->argv)
		json_object_set(o, "argv", (json_t *)m->argv);
	if (m->env)
		json_object_set(o, "env", (json_t *)m->env);
	if (m->cwd)
		json_object_set_new(o, "cwd", json_string(m->cwd));
	if (m->qrsh)
		json_object_set_new(o, "qrsh", json_string(m->qrsh));
}

json_t *
msg_inherit_pack(const struct msg_inherit *m)
{
	json_t *o = msg_new(MSG_INHERIT), *task = json_object();

	json_object_set_new(o, "id", json_integer(m->id));
	json_object_set_new(o, "host", json_string(m->host));
	msg_inherit_task_set(task, m);
	json_object_set_new(o, "task", task);
	return o;
}

int
msg_inherit_unpack(const json_t *o, struct msg_inherit *m, const char **why)
{
	const json_t *task = json_object_get(o, "task");

	m->id = jint(o, "id", 0);
	m->host = jstr(o, "host");
	if (!m->host || !*m->host || strlen(m->host) > JOB_MAX_STRING) {
		*why = "INHERIT needs the name of a host";
		return -1;
	}
	if (!json_is_object(task)) {
		*why = "INHERIT needs the task as a job object";
		return -1;
	}
	m->argv = json_object_get(task, "argv");
	m->env = json_object_get(task, "env");
	m->cwd = jstr(task, "cwd");
	m->qrsh = jstr(task, "qrsh");
	if (json_object_get(task, "cwd") && !m->cwd) {
		*why = "the task's working directory is not a text";
		return -1;
	}
	return 0;
}

void
msg_inherited_add(json_t *rep, const struct msg_inherited *m)
{
	json_object_set_new(rep, "petask", json_integer(m->petask));
	if (m->qrsh_cred)
		json_object_set_new(rep, "qrsh_cred", json_true());
}

void
msg_inherited_unpack(const json_t *rep, struct msg_inherited *m)
{
	m->petask = jint(rep, "petask", 0);
	m->qrsh_cred = jbool(rep, "qrsh_cred", false);
}

/* --- STAGE_PUT, STAGE_GET --- */

int64_t
msg_raw_bytes(const json_t *msg)
{
	json_t *v = json_object_get(msg, "bytes");

	if (!v)
		return 0;
	return json_is_integer(v) ? json_integer_value(v) : -1;
}

json_t *
msg_stage_put_pack(const struct msg_stage_put *m)
{
	json_t *o = msg_new(MSG_STAGE_PUT);

	json_object_set_new(o, "sha256", json_string(m->sha256));
	json_object_set_new(o, "size", json_integer(m->size));
	json_object_set_new(o, "total", json_integer(m->total));
	json_object_set_new(o, "offset", json_integer(m->offset));
	if (m->bytes)
		json_object_set_new(o, "bytes", json_integer(m->bytes));
	if (m->last)
		json_object_set_new(o, "last", json_true());
	return o;
}

int
msg_stage_put_unpack(const json_t *o, struct msg_stage_put *m, const char **why)
{
	m->sha256 = jstr(o, "sha256");
	m->size = jint(o, "size", -1);
	m->total = jint(o, "total", -1);
	m->offset = jint(o, "offset", -1);
	m->bytes = jint(o, "bytes", 0);
	m->last = jbool(o, "last", false);
	if (!sha256_hex_ok(m->sha256)) {
		*why = "STAGE_PUT needs the file's SHA-256 as 64 lower-case hex digits";
		return -1;
	}
	if (m->size < 0 || m->total < m->size || m->offset < 0 || m->offset > m->size) {
		*why = "STAGE_PUT needs size, total and offset with 0 <= offset <= size <= total";
		return -1;
	}
	if (m->bytes < 0 || m->bytes > STAGE_CHUNK) {
		*why = "a STAGE_PUT chunk holds at most 1 MiB";
		return -1;
	}
	return 0;
}

void
msg_stage_putted_add(json_t *rep, const struct msg_stage_putted *m)
{
	json_object_set_new(rep, "have", json_boolean(m->have));
	json_object_set_new(rep, "offset", json_integer(m->offset));
}

void
msg_stage_putted_unpack(const json_t *rep, struct msg_stage_putted *m)
{
	m->have = jbool(rep, "have", false);
	m->offset = jint(rep, "offset", 0);
}

json_t *
msg_stage_get_pack(const struct msg_stage_get *m)
{
	json_t *o = msg_new(MSG_STAGE_GET);

	json_object_set_new(o, "sha256", json_string(m->sha256));
	json_object_set_new(o, "offset", json_integer(m->offset));
	json_object_set_new(o, "job", json_integer(m->job));
	return o;
}

int
msg_stage_get_unpack(const json_t *o, struct msg_stage_get *m, const char **why)
{
	m->sha256 = jstr(o, "sha256");
	m->offset = jint(o, "offset", -1);
	m->job = jint(o, "job", 0);
	if (!sha256_hex_ok(m->sha256)) {
		*why = "STAGE_GET needs the file's SHA-256 as 64 lower-case hex digits";
		return -1;
	}
	if (m->offset < 0 || m->job <= 0) {
		*why = "STAGE_GET needs an offset from 0 and the id of the job";
		return -1;
	}
	return 0;
}

void
msg_stage_got_add(json_t *rep, const struct msg_stage_got *m)
{
	json_object_set_new(rep, "bytes", json_integer(m->bytes));
	json_object_set_new(rep, "size", json_integer(m->size));
	json_object_set_new(rep, "eof", json_boolean(m->eof));
}

int
msg_stage_got_unpack(const json_t *rep, struct msg_stage_got *m, const char **why)
{
	m->bytes = jint(rep, "bytes", -1);
	m->size = jint(rep, "size", -1);
	m->eof = jbool(rep, "eof", false);
	if (m->bytes < 0 || m->bytes > STAGE_CHUNK || m->size < 0) {
		*why = "the master's STAGE_GET reply lacks bytes (at most 1 MiB) or size";
		return -1;
	}
	return 0;
}

/* --- the table --- */

/* The table's rows take the structures untyped; each pair's glue is here. */
#define MSG_REQ_GLUE(fn, st)                                                   \
	static json_t *fn##_pack_any(const void *m) { return msg_##fn##_pack(m); }    \
	static int fn##_unpack_any(const json_t *o, void *m, const char **why)       \
	{ return msg_##fn##_unpack(o, m, why); }

MSG_REQ_GLUE(submit, struct msg_submit)
MSG_REQ_GLUE(jobsel, struct msg_jobsel)
MSG_REQ_GLUE(status, struct msg_status)
MSG_REQ_GLUE(alter, struct msg_alter)
MSG_REQ_GLUE(wait, struct msg_wait)
MSG_REQ_GLUE(hosts, struct msg_hosts)
MSG_REQ_GLUE(acct, struct msg_acct)
MSG_REQ_GLUE(conf, struct msg_conf)
MSG_REQ_GLUE(cron, struct msg_cron)
MSG_REQ_GLUE(flags, struct msg_flags)
MSG_REQ_GLUE(reserve, struct msg_reserve)
MSG_REQ_GLUE(unreserve, struct msg_unreserve)
MSG_REQ_GLUE(alias, struct msg_alias)
MSG_REQ_GLUE(inherit, struct msg_inherit)
MSG_REQ_GLUE(stage_put, struct msg_stage_put)
MSG_REQ_GLUE(stage_get, struct msg_stage_get)

#define ROW(t, fn, st) { t, sizeof(st), fn##_pack_any, fn##_unpack_any }

const struct msg_req_type msg_req_types[] = {
	ROW(MSG_SUBMIT, submit, struct msg_submit),
	ROW(MSG_STATUS, status, struct msg_status),
	ROW(MSG_DELETE, jobsel, struct msg_jobsel),
	ROW(MSG_HOLD, jobsel, struct msg_jobsel),
	ROW(MSG_RELEASE, jobsel, struct msg_jobsel),
	ROW(MSG_WAIT, wait, struct msg_wait),
	ROW(MSG_HOSTS, hosts, struct msg_hosts),
	ROW(MSG_ACCT, acct, struct msg_acct),
	ROW(MSG_ALTER, alter, struct msg_alter),
	ROW(MSG_CONF, conf, struct msg_conf),
	ROW(MSG_CRON, cron, struct msg_cron),
	ROW(MSG_DISABLE, flags, struct msg_flags),
	ROW(MSG_ENABLE, flags, struct msg_flags),
	ROW(MSG_SUSPEND, jobsel, struct msg_jobsel),
	ROW(MSG_UNSUSPEND, jobsel, struct msg_jobsel),
	ROW(MSG_CLEAR, jobsel, struct msg_jobsel),
	ROW(MSG_RESERVE, reserve, struct msg_reserve),
	ROW(MSG_UNRESERVE, unreserve, struct msg_unreserve),
	ROW(MSG_ALIAS, alias, struct msg_alias),
	ROW(MSG_INHERIT, inherit, struct msg_inherit),
	ROW(MSG_STAGE_PUT, stage_put, struct msg_stage_put),
	ROW(MSG_STAGE_GET, stage_get, struct msg_stage_get),
};
const size_t msg_req_ntypes = sizeof msg_req_types / sizeof msg_req_types[0];

const struct msg_req_type *
msg_req_type_of(enum msg_type t)
{
	for (size_t i = 0; i < msg_req_ntypes; i++)
		if (msg_req_types[i].type == t)
			return &msg_req_types[i];
	return NULL;
}
