/* msg_rows.c: the rows of the master's listing replies, each layout written once: its pack beside its unpack. */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg_rows.h"

/* --- STATUS: one job of a listing --- */

/* What a listing shows of a job (qstat without -j), written as text: a
 * row of values in the order of job_brief_columns, no keys and no tree to
 * build, so ten thousand jobs cost the master and the client little. */
const char *const job_brief_columns[] = {
	"id", "task", "name", "owner", "queue", "prio", "submit_time", "start_time",
	"state", "state_letters", "hold", "host", "slots", "t_first", "t_last", "t_step",
	"tasks", NULL,
};

void
job_brief_head(struct jtext *t)
{
	jt_lit(t, "\"columns\":[");
	for (size_t i = 0; job_brief_columns[i]; i++) {
		if (i)
			jt_lit(t, ",");
		jt_str(t, job_brief_columns[i]);
	}
	jt_lit(t, "],\"rows\":[");
}

void
job_brief_text(const struct job *j, struct jtext *t)
{
	job_brief_text_tasks(j, NULL, t);
}

/* A field after the first of a listing's row. */
static inline void
brief_int(struct jtext *t, int64_t v)
{
	jt_lit(t, ",");
	jt_int(t, v);
}

static inline void
brief_str(struct jtext *t, const char *v)
{
	jt_lit(t, ",");
	jt_str(t, v);
}

void
job_brief_text_tasks(const struct job *j, const char *tasks, struct jtext *t)
{
	jt_lit(t, "[");
	jt_int(t, j->id);
	brief_int(t, j->task);
	brief_str(t, j->name);
	brief_str(t, j->owner);
	brief_str(t, j->queue);
	brief_int(t, j->prio);
	brief_int(t, j->submit_time);
	brief_int(t, j->start_time);
	brief_str(t, job_state_name(j->state));
	brief_str(t, job_state_letters(j));
	brief_int(t, j->hold);
	brief_str(t, j->host);
	brief_int(t, j->slots);
	brief_int(t, j->t_first);
	brief_int(t, j->t_last);
	brief_int(t, j->t_step);
	brief_str(t, tasks);
	jt_lit(t, "]");
}

/* The row's fields by name, so a job object and a brief row fill a row
 * the same way, and a master with more columns than this client knows
 * still works. */
static const struct row_field {
	const char *name;
	size_t      off;
	bool        text;
} row_fields[] = {
#define RI(f)	{ #f, offsetof(struct msg_job_row, f), false }
#define RS(f)	{ #f, offsetof(struct msg_job_row, f), true }
	RI(id), RI(task), RI(prio), RI(submit_time), RI(start_time), RI(hold), RI(slots),
	RI(t_first), RI(t_last), RI(t_step), RS(name), RS(owner), RS(queue), RS(state),
	RS(state_letters), RS(host), RS(tasks),
#undef RI
#undef RS
};
#define NROW_FIELDS (sizeof row_fields / sizeof row_fields[0])

static void
row_set(struct msg_job_row *r, const struct row_field *f, const json_t *v)
{
	if (f->text)
		*(const char **)((char *)r + f->off) = json_is_string(v) ? json_string_value(v) : NULL;
	else
		*(int64_t *)((char *)r + f->off) = json_is_integer(v) ? json_integer_value(v) : 0;
}

static void
row_init(struct msg_job_row *r)
{
	memset(r, 0, sizeof *r);
	r->slots = 1;
}

void
msg_job_row_unpack(const json_t *job, struct msg_job_row *r)
{
	row_init(r);
	for (size_t i = 0; i < NROW_FIELDS; i++) {
		const json_t *v = json_object_get(job, row_fields[i].name);
		if (v)
			row_set(r, &row_fields[i], v);
	}
	r->obj = job;
}

struct msg_job_row *
msg_job_rows_unpack(const json_t *rep, size_t *n)
{
	const json_t *cols = json_object_get(rep, "columns"), *rows = json_object_get(rep, "rows");
	const struct row_field **map;
	struct msg_job_row *out;
	json_t *c, *row;
	size_t i, k, ncols;

	*n = 0;
	if (!json_is_array(cols) || !json_is_array(rows) || json_array_size(rows) == 0)
		return NULL;
	ncols = json_array_size(cols);
	map = xcalloc(ncols + 1, sizeof *map);
	json_array_foreach(cols, i, c)
		for (k = 0; k < NROW_FIELDS; k++)
			if (json_is_string(c) && strcmp(json_string_value(c), row_fields[k].name) == 0)
				map[i] = &row_fields[k];
	out = xcalloc(json_array_size(rows), sizeof *out);
	json_array_foreach(rows, i, row) {
		row_init(&out[*n]);
		if (!json_is_array(row))
			continue;
		for (k = 0; k < ncols && k < json_array_size(row); k++)
			if (map[k])
				row_set(&out[*n], map[k], json_array_get(row, k));
		(*n)++;
	}
	free(map);
	return out;
}

struct msg_job_row *
msg_job_objects_unpack(const json_t *rep, size_t *n)
{
	const json_t *jobs = json_object_get(rep, "jobs"), *j;
	struct msg_job_row *rows;
	size_t i;

	*n = json_array_size(jobs);
	rows = xcalloc(*n + 1, sizeof *rows);
	json_array_foreach(jobs, i, j)
		msg_job_row_unpack(j, &rows[i]);
	return rows;
}

/* --- STATUS: the cursor of the next page --- */

void
msg_status_next_add(json_t *rep, const struct msg_status_next *m)
{
	if (!m->has)
		return;
	json_object_set_new(rep, "next", json_integer(m->id));
	if (m->has_prio)
		json_object_set_new(rep, "next_prio", json_integer(m->prio));
}

void
msg_status_next_text(struct jtext *t, const struct msg_status_next *m)
{
	if (!m->has)
		return;
	jt_lit(t, ",\"next\":");
	jt_int(t, m->id);
	if (m->has_prio) {
		jt_lit(t, ",\"next_prio\":");
		jt_int(t, m->prio);
	}
}

void
msg_status_next_unpack(const json_t *rep, struct msg_status_next *m)
{
	const json_t *next = json_object_get(rep, "next"), *prio = json_object_get(rep, "next_prio");

	memset(m, 0, sizeof *m);
	m->has = json_is_integer(next);
	m->id = m->has ? json_integer_value(next) : 0;
	m->has_prio = json_is_integer(prio);
	m->prio = m->has_prio ? json_integer_value(prio) : 0;
}

/* --- HOSTS: one exec host --- */

json_t *
msg_host_resv_pack(const struct msg_host_resv *r, bool with_start)
{
	if (with_start)
		return json_pack("{s:s, s:s, s:I, s:I}", "name", r->name, "owner", r->owner,
		    "start", (json_int_t)r->start, "end", (json_int_t)r->end);
	return json_pack("{s:s, s:s, s:I}", "name", r->name, "owner", r->owner, "end", (json_int_t)r->end);
}

void
msg_host_resv_unpack(const json_t *o, struct msg_host_resv *r)
{
	memset(r, 0, sizeof *r);
	if (!json_is_object(o))
		return;
	r->has = true;
	r->name = jstr(o, "name");
	r->owner = jstr(o, "owner");
	r->start = jint(o, "start", 0);
	r->end = jint(o, "end", 0);
}

void
msg_host_queue_add(json_t *list, const struct msg_host_queue *q)
{
	json_array_append_new(list, json_pack("{s:s, s:b, s:I}", "name", q->name, "disabled", q->disabled,
	    "used", (json_int_t)q->used));
}

void
msg_host_queue_unpack(const json_t *o, struct msg_host_queue *q)
{
	q->name = jstr(o, "name");
	q->disabled = jbool(o, "disabled", false);
	q->used = jint(o, "used", 0);
}

json_t *
msg_host_row_pack(const struct msg_host_row *m)
{
	json_t *o = json_pack("{s:s, s:i, s:i, s:[f,f,f], s:s, s:b, s:b, s:b, s:I, s:o}",
	    "name", m->name, "slots", (int)m->slots, "used", (int)m->used,
	    "load", m->load[0], m->load[1], m->load[2],
	    "state", m->state, "connected", m->connected, "disabled", m->disabled, "lost", m->lost,
	    "last_seen", (json_int_t)m->last_seen, "attrs", host_attrs_to_json(&m->attrs));

	if (m->busy_reason)
		json_object_set_new(o, "busy_reason", json_string(m->busy_reason));
	if (m->vmem_limit)
		json_object_set_new(o, "vmem_limit", json_string(m->vmem_limit));
	if (m->reserved.has)
		json_object_set_new(o, "reserved", msg_host_resv_pack(&m->reserved, false));
	else if (m->reserved_next.has)
		json_object_set_new(o, "reserved_next", msg_host_resv_pack(&m->reserved_next, true));
	json_object_set_new(o, "queues", m->queues ? m->queues : json_array());
	if (m->jobs)
		json_object_set_new(o, "jobs", m->jobs);
	return o;
}

void
msg_host_row_unpack(const json_t *o, struct msg_host_row *m)
{
	const json_t *load = json_object_get(o, "load");
	const char *why;

	memset(m, 0, sizeof *m);
	m->name = jstr(o, "name");
	m->slots = jint(o, "slots", 0);
	m->used = jint(o, "used", 0);
	m->has_load = json_is_array(load) && json_is_number(json_array_get(load, 0));
	for (size_t i = 0; i < 3; i++)
		m->load[i] = json_is_number(json_array_get(load, i)) ? json_number_value(json_array_get(load, i)) : 0;
	m->state = jstr(o, "state");
	m->connected = jbool(o, "connected", false);
	m->disabled = jbool(o, "disabled", false);
	m->lost = jbool(o, "lost", false);
	m->last_seen = jint(o, "last_seen", 0);
	m->busy_reason = jstr(o, "busy_reason");
	m->vmem_limit = jstr(o, "vmem_limit");
	if (host_attrs_from_json(&m->attrs, json_object_get(o, "attrs"), &why) < 0) {
		host_attrs_clear(&m->attrs);
		m->attrs.rating = 1.0;
	}
	msg_host_resv_unpack(json_object_get(o, "reserved"), &m->reserved);
	msg_host_resv_unpack(json_object_get(o, "reserved_next"), &m->reserved_next);
	m->queues = json_is_array(json_object_get(o, "queues")) ? json_object_get(o, "queues") : NULL;
	m->jobs = json_is_array(json_object_get(o, "jobs")) ? json_object_get(o, "jobs") : NULL;
}

void
msg_host_row_clear(struct msg_host_row *m)
{
	host_attrs_clear(&m->attrs);
}

struct msg_host_row *
msg_host_rows_unpack(const json_t *hosts, size_t *n)
{
	const json_t *h;
	struct msg_host_row *rows;
	size_t i;

	*n = json_array_size(hosts);
	rows = xcalloc(*n + 1, sizeof *rows);
	json_array_foreach(hosts, i, h)
		msg_host_row_unpack(h, &rows[i]);
	return rows;
}

void
msg_host_rows_free(struct msg_host_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		msg_host_row_clear(&rows[i]);
	free(rows);
}

/* --- CRON list --- */

json_t *
msg_cron_row_pack(const struct msg_cron_row *m)
{
	return json_pack("{s:I, s:s, s:s, s:s?, s:I, s:I, s:s?, s:b, s:s?}", "id", (json_int_t)m->id,
	    "owner", m->owner, "schedule", m->schedule, "name", m->name, "next_run", (json_int_t)m->next_run,
	    "last_job", (json_int_t)m->last_job, "last_state", m->last_state, "hold", m->hold,
	    "queue", m->queue);
}

void
msg_cron_row_unpack(const json_t *o, struct msg_cron_row *m)
{
	m->id = jint(o, "id", 0);
	m->owner = jstr(o, "owner");
	m->schedule = jstr(o, "schedule");
	m->name = jstr(o, "name");
	m->next_run = jint(o, "next_run", 0);
	m->last_job = jint(o, "last_job", 0);
	m->last_state = jstr(o, "last_state");
	m->hold = jbool(o, "hold", false);
	m->queue = jstr(o, "queue");
}

/* --- RESERVE --- */

json_t *
msg_resv_row_pack(const struct msg_resv_row *m)
{
	return json_pack("{s:s, s:s, s:o, s:o, s:I, s:I, s:s, s:b, s:b, s:s}", "name", m->name,
	    "owner", m->owner, "users", m->users, "hosts", m->hosts,
	    "start", (json_int_t)m->start, "end", (json_int_t)m->end, "state", m->state,
	    "exclusive", m->exclusive, "overrun", m->overrun, "mail", m->mail);
}

/* A list of the reply's, or NULL. */
static json_t *
list_get(const json_t *o, const char *key)
{
	json_t *a = json_object_get(o, key);
	return json_is_array(a) ? a : NULL;
}

void
msg_resv_row_unpack(const json_t *o, struct msg_resv_row *m)
{
	m->name = jstr(o, "name");
	m->owner = jstr(o, "owner");
	m->users = list_get(o, "users");
	m->hosts = list_get(o, "hosts");
	m->start = jint(o, "start", 0);
	m->end = jint(o, "end", 0);
	m->state = jstr(o, "state");
	m->exclusive = jbool(o, "exclusive", false);
	m->overrun = jbool(o, "overrun", false);
	m->mail = jstr(o, "mail");
}

/* --- ALIAS --- */

json_t *
msg_alias_row_pack(const struct msg_alias_row *m)
{
	return json_pack("{s:s, s:O}", "name", m->name, "hosts", m->hosts);
}

void
msg_alias_row_unpack(const json_t *o, struct msg_alias_row *m)
{
	m->name = jstr(o, "name");
	m->hosts = list_get(o, "hosts");
}

json_t *
msg_host_lists_pack(const struct msg_host_lists *m)
{
	json_t *o = json_pack("{s:s, s:o, s:o, s:o}", "name", m->name, "aliases", m->aliases,
	    "users", m->users, "owners", m->owners);

	if (m->reserved.has)
		json_object_set_new(o, "reserved", msg_host_resv_pack(&m->reserved, false));
	return o;
}

void
msg_host_lists_unpack(const json_t *o, struct msg_host_lists *m)
{
	m->name = jstr(o, "name");
	m->aliases = list_get(o, "aliases");
	m->users = list_get(o, "users");
	m->owners = list_get(o, "owners");
	msg_host_resv_unpack(json_object_get(o, "reserved"), &m->reserved);
}
