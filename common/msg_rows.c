/* msg_rows.c: the master's replies to the clients, their lists and the rows in them, each layout written once: its pack beside its unpack. */
#include "config.h"

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

void
job_brief_text_tasks(const struct job *j, const char *tasks, struct jtext *t)
{
	struct job_brief b;

	job_brief_of(j, &b);
	job_brief_row(&b, tasks, t);
}

/* A field after the first of a listing's row. */
static inline void
brief_int(struct jtext *t, int64_t v)
{
	jt_raw(t, ",", 1);
	jt_int(t, v);
}

static inline void
brief_str(struct jtext *t, const char *v)
{
	jt_raw(t, ",", 1);
	jt_str(t, v);
}

void
job_brief_row(const struct job_brief *b, const char *tasks, struct jtext *t)
{
	jt_raw(t, "[", 1);
	jt_int(t, b->id);
	brief_int(t, b->task);
	brief_str(t, b->name);
	brief_str(t, b->owner);
	brief_str(t, b->queue);
	brief_int(t, b->prio);
	brief_int(t, b->submit_time);
	brief_int(t, b->start_time);
	brief_str(t, job_state_name(b->state));
	brief_str(t, job_brief_letters(b));
	brief_int(t, b->hold);
	brief_str(t, b->host);
	brief_int(t, b->slots);
	brief_int(t, b->t_first);
	brief_int(t, b->t_last);
	brief_int(t, b->t_step);
	brief_str(t, tasks);
	jt_raw(t, "]", 1);
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

/* Rows msg_job_rows_decode read, until msg_job_rows_unpack lends them,
 * in a block kept from one listing to the next, and the frame their
 * texts point into, until the next listing. */
static __thread struct {
	bool                on;
	const json_t       *rep;      /* the reply the block's rows belong to */
	size_t              n;
	char               *frame;
	struct msg_job_row *block;    /* mem_big's */
	size_t              size;     /* its bytes */
	bool                lent;     /* unpacked, not given back yet */
} native;

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
	if (json_is_integer(rows)) {
		/* Read by msg_job_rows_decode: lent until msg_job_rows_free. */
		assert(native.rep == rep && native.n == (size_t)json_integer_value(rows));
		*n = native.n;
		native.rep = NULL;
		native.n = 0;
		native.lent = *n > 0;
		return *n ? native.block : NULL;
	}
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

/*
 * A brief listing read straight from the frame's text.  jansson makes a
 * value of every field of every row and frees them all again: nine tenths
 * of qstat's time for ten thousand jobs.  The rows, as job_brief_row
 * writes them, are read here into one block, their texts left where they
 * are in the frame (each closing quote made its end), and jansson reads
 * only the rest of the reply, in which "rows" becomes their count;
 * msg_job_rows_unpack then hands over the block.  Anything this reader
 * does not expect (an escaped character, a space, another reply) leaves
 * the frame to jansson whole, as it came.  Only a caller that asks for it
 * (msg_job_rows_native) gets replies read this way, and must unpack the
 * rows of one reply before the next is read.
 */
void
msg_job_rows_free(struct msg_job_row *rows)
{
	if (rows && rows == native.block)
		native.lent = false;
	else
		free(rows);
}

void
msg_job_rows_native(bool on)
{
	assert(!native.lent);
	native.on = on;
	proto_frame_buf_free(native.frame);
	native.frame = NULL;
	native.rep = NULL;
	native.n = 0;
	if (!on) {
		mem_big_free(native.block, native.size);
		native.block = NULL;
		native.size = 0;
	}
}

bool
msg_job_rows_native_on(void)
{
	return native.on;
}

/* Skips lit at *p; false when the text does not start with it. */
static inline bool
skip_lit(const char **p, const char *end, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(end - *p) < n || memcmp(*p, lit, n) != 0)
		return false;
	*p += n;
	return true;
}

/* Skips the one character c at *p. */
static inline bool
skip_char(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return false;
	(*p)++;
	return true;
}

/* A string with no escape: its offset in the text and its end. */
static inline bool
scan_str(const char **p, const char *end, const char **s, const char **e)
{
	const char *q = *p + 1;

	if (**p != '"')
		return false;
	while (q < end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20)
		q++;
	if (q >= end || *q != '"')
		return false;
	*s = *p + 1;
	*e = q;
	*p = q + 1;
	return true;
}

static inline bool
scan_int(const char **p, const char *end, int64_t *v)
{
	const char *q = *p;
	bool neg = q < end && *q == '-';
	uint64_t u = 0;
	int digits = 0;

	q += neg;
	while (q < end && *q >= '0' && *q <= '9' && digits < 18) {
		u = u * 10 + (uint64_t)(*q++ - '0');
		digits++;
	}
	if (digits == 0 || (q < end && *q >= '0' && *q <= '9'))
		return false;
	*v = neg ? -(int64_t)u : (int64_t)u;
	*p = q;
	return true;
}

/* The header job_brief_head writes, after the reply's type, seq and ok:
 * the columns, mapped to the row's fields. */
static bool
scan_columns(const char **p, const char *end, const struct row_field **map, size_t max, size_t *ncols)
{
	const char *s, *e;

	*ncols = 0;
	if (!skip_lit(p, end, "\"columns\":["))
		return false;
	while (*p < end && **p != ']') {
		if (*ncols == max || (*ncols && !skip_lit(p, end, ",")) || !scan_str(p, end, &s, &e))
			return false;
		map[*ncols] = NULL;
		for (size_t k = 0; k < NROW_FIELDS; k++)
			if (strlen(row_fields[k].name) == (size_t)(e - s) &&
			    memcmp(row_fields[k].name, s, (size_t)(e - s)) == 0)
				map[*ncols] = &row_fields[k];
		/* A field is set by its first column only, so each text a
		 * row keeps is one rows_unend finds. */
		for (size_t i = 0; i < *ncols && map[*ncols]; i++)
			if (map[i] == map[*ncols])
				map[*ncols] = NULL;
		(*ncols)++;
	}
	return skip_lit(p, end, "],\"rows\":[");
}

/* One row's values; a text the row keeps ends where its closing quote
 * was (rows_unend puts the quotes back).  The frame ends with a NUL,
 * which stops every scan below: no bound to test at each character. */
static inline bool
scan_row(const char **pp, const struct row_field **map, size_t ncols, struct msg_job_row *r)
{
	const char *p = *pp, *s;

	row_init(r);
	if (*p++ != '[')
		return false;
	for (size_t k = 0; *p != ']'; k++) {
		const struct row_field *f = k < ncols ? map[k] : NULL;
		char *field = f ? (char *)r + f->off : NULL;

		if (k && *p++ != ',')
			return false;
		if (*p == '"') {
			for (s = ++p; (unsigned char)*p >= 0x20 && *p != '"' && *p != '\\'; p++)
				;
			if (*p != '"')
				return false;
			if (f && f->text) {
				*(const char **)field = s;
				*(char *)p = '\0';
			} else if (f)
				*(int64_t *)field = 0;   /* another type reads as 0, as in row_set */
			p++;
		} else if (*p == 'n') {
			if (p[1] != 'u' || p[2] != 'l' || p[3] != 'l')
				return false;
			p += 4;
			if (f && !f->text)
				*(int64_t *)field = 0;
		} else {
			bool neg = *p == '-';
			uint64_t u = 0;
			int digits = 0;

			for (p += neg; (unsigned)(*p - '0') < 10 && digits < 19; p++, digits++)
				u = u * 10 + (uint64_t)(*p - '0');
			if (digits == 0 || digits > 18)
				return false;
			if (f && !f->text)
				*(int64_t *)field = neg ? -(int64_t)u : (int64_t)u;
		}
	}
	*pp = p + 1;
	return true;
}

/* The frame as it came, for jansson: the closing quotes of the texts of
 * rows[0..n] back. */
static void
rows_unend(struct msg_job_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < NROW_FIELDS; k++) {
			char **v = (char **)((char *)&rows[i] + row_fields[k].off);

			if (row_fields[k].text && *v)
				(*v)[strlen(*v)] = '"';
		}
}

/* Room for row n in the block, sized from the frame (a row is some 85
 * bytes of text) and grown when a frame holds smaller ones: in huge pages
 * (mem_big), as a listing's rows are written at once. */
static struct msg_job_row *
rows_room(size_t n, size_t len)
{
	size_t need = (n + 1) * sizeof *native.block, got;
	struct msg_job_row *b;

	if (need <= native.size)
		return native.block;
	need = need * 2 > (len / 64 + 16) * sizeof *b ? need * 2 : (len / 64 + 16) * sizeof *b;
	b = mem_big(need, &got);
	if (n)
		memcpy(b, native.block, n * sizeof *b);
	mem_big_free(native.block, native.size);
	native.block = b;
	native.size = got;
	return b;
}

json_t *
msg_job_rows_decode(char *data, size_t len, const char **why)
{
	const char *p = data, *end = data + len, *tail;
	const struct row_field *map[64];
	struct msg_job_row *rows = NULL;
	size_t ncols, n = 0, head;
	int64_t seq;
	char *rest;
	json_t *rep;

	assert(data[len] == '\0' && !native.lent);
	if (!native.on || !skip_lit(&p, end, "{\"type\":\"REPLY\",\"seq\":") || !scan_int(&p, end, &seq) ||
	    !skip_lit(&p, end, ",\"ok\":true,") || !scan_columns(&p, end, map, 64, &ncols))
		return NULL;
	head = (size_t)(p - data) - 1;   /* up to "rows": */
	while (p < end && *p != ']') {
		bool ok;

		rows = rows_room(n, len);
		if (n && !skip_char(&p, end, ','))
			ok = false;
		else
			ok = scan_row(&p, map, ncols, &rows[n++]);
		if (!ok) {
			rows_unend(rows, n);
			return NULL;
		}
	}
	if (p >= end) {
		rows_unend(rows, n);
		return NULL;
	}
	tail = p + 1;
	/* The rest of the reply, "rows" being the count. */
	rest = xmalloc(head + 24 + (size_t)(end - tail));
	memcpy(rest, data, head);
	head += (size_t)snprintf(rest + head, 24, "%zu", n);
	memcpy(rest + head, tail, (size_t)(end - tail));
	rep = json_loadb(rest, head + (size_t)(end - tail), JSON_REJECT_DUPLICATES, NULL);
	free(rest);
	if (!rep) {
		rows_unend(rows, n);
		*why = "malformed JSON in frame";
		return NULL;
	}
	msg_job_rows_native(true);
	native.rep = rep;
	native.n = n;
	native.frame = data;
	return rep;
}

struct msg_job_row *
msg_job_objects_unpack(const json_t *rep, size_t *n)
{
	struct msg_status_reply st;
	const json_t *jobs, *j;
	struct msg_job_row *rows;
	size_t i;

	msg_status_reply_unpack(rep, &st);
	jobs = st.jobs;
	*n = json_array_size(jobs);
	rows = xcalloc(*n + 1, sizeof *rows);
	json_array_foreach(jobs, i, j)
		msg_job_row_unpack(j, &rows[i]);
	return rows;
}

void
msg_job_end_unpack(const json_t *job, struct msg_job_end *m)
{
	m->state = jstr(job, "state");
	m->name = jstr(job, "name");
	m->start_time = jint(job, "start_time", 0);
	m->exit_status = jint(job, "exit_status", 0);
	m->signal = jint(job, "signal", 0);
	m->t_first = jint(job, "t_first", 0);
	m->reason = jstr(job, "reason");
}

/* A number of the reply's, 0 when it has none. */
static double
num_get(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : 0.0;
}

/* A list of the reply's, or NULL. */
static json_t *
list_get(const json_t *o, const char *key)
{
	json_t *a = json_object_get(o, key);
	return json_is_array(a) ? a : NULL;
}

/* An object of the reply's, or NULL. */
static const json_t *
obj_get(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_object(v) ? v : NULL;
}

void
msg_job_detail_unpack(const json_t *job, struct msg_job_detail *m)
{
	struct msg_job_more more;
	const json_t *mp;

	msg_job_more_unpack(job, &more);
	mp = more.mail_pending;
	msg_job_row_unpack(job, &m->row);
	m->uid = jint(job, "uid", 0);
	m->gid = jint(job, "gid", 0);
	m->begin_time = jint(job, "begin_time", 0);
	m->tc = jint(job, "tc", 0);
	m->signal = jint(job, "signal", 0);
	m->maxrss_kb = jint(job, "maxrss_kb", 0);
	m->t_step = jint(job, "t_step", 1);
	m->has_exit_status = json_object_get(job, "exit_status") != NULL;
	m->exit_status = jint(job, "exit_status", 0);
	m->join = jbool(job, "join", false);
	m->error = jbool(job, "error", false);
	m->utime = num_get(job, "utime");
	m->stime = num_get(job, "stime");
	m->cwd = jstr(job, "cwd");
	m->out = jstr(job, "out");
	m->err = jstr(job, "err");
	m->in = jstr(job, "in");
	m->shell = jstr(job, "shell");
	m->reason = jstr(job, "reason");
	m->scheduling_info = more.scheduling_info;
	m->account = jstr(job, "account");
	m->project = jstr(job, "project");
	m->binding = jstr(job, "binding");
	m->mail_to = jstr(job, "mail_to");
	m->pe = jstr(job, "pe");
	m->reserve = jbool(job, "reserve", false);
	m->rerun = jbool(job, "rerun", false);
	m->mail = jint(job, "mail", 0);
	m->js = jint(job, "js", 0);
	m->context = list_get(job, "context");
	m->stage_in = list_get(job, "stage_in");
	m->stage_out = list_get(job, "stage_out");
	m->staged_out = more.staged_out;
	m->env = list_get(job, "env");
	m->argv = list_get(job, "argv");
	m->args = list_get(job, "args");
	m->req = obj_get(job, "req");
	m->soft = obj_get(job, "soft");
	m->waiting_for = more.waiting_for;
	m->successors = more.successors;
	m->tasks = more.tasks;
	m->pe_hosts = more.pe_hosts;
	m->has_mail = mp != NULL;
	m->mail_count = jint(mp, "count", 0);
	m->mail_next_try = jint(mp, "next_try", 0);
	m->mail_error = jstr(mp, "error");
}

void
msg_job_wait_add(json_t *list, const struct msg_job_wait *m)
{
	json_array_append_new(list, json_pack("{s:I, s:s}", "id", (json_int_t)m->id, "kind", m->kind));
}

void
msg_job_wait_unpack(const json_t *o, struct msg_job_wait *m)
{
	m->id = jint(o, "id", 0);
	m->kind = jstr(o, "kind");
}

json_t *
msg_job_mail_pack(int64_t count, const char *error, int64_t next_try)
{
	return json_pack("{s:i, s:s?, s:I}", "count", (int)count, "error", error, "next_try", (json_int_t)next_try);
}

/* Sets a list or object the master made on a reply or a job object,
 * taking it over; NULL: none. */
static void
reply_set(json_t *rep, const char *key, json_t *v)
{
	if (v)
		json_object_set_new(rep, key, v);
}

void
msg_job_more_add(json_t *job, const struct msg_job_more *m)
{
	reply_set(job, "scheduling_info", m->scheduling_info ? json_string(m->scheduling_info) : NULL);
	reply_set(job, "waiting_for", m->waiting_for);
	reply_set(job, "successors", m->successors);
	reply_set(job, "mail_pending", m->mail_pending);
	reply_set(job, "staged_out", m->staged_out);
	reply_set(job, "pe_hosts", m->pe_hosts);
	reply_set(job, "tasks_pending", m->tasks_pending ? json_string(m->tasks_pending) : NULL);
	reply_set(job, "tasks", m->tasks);
}

void
msg_job_more_unpack(const json_t *job, struct msg_job_more *m)
{
	m->scheduling_info = jstr(job, "scheduling_info");
	m->waiting_for = list_get(job, "waiting_for");
	m->successors = list_get(job, "successors");
	m->mail_pending = (json_t *)obj_get(job, "mail_pending");
	m->staged_out = list_get(job, "staged_out");
	m->pe_hosts = list_get(job, "pe_hosts");
	m->tasks_pending = jstr(job, "tasks_pending");
	m->tasks = list_get(job, "tasks");
}

/* --- STATUS of an array job: one task --- */

json_t *
msg_task_row_pack(const struct msg_task_row *m)
{
	return json_pack("{s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:I, s:s?, s:s?}",
	    "task", (json_int_t)m->task, "state", m->state, "state_letters", m->state_letters,
	    "start_time", (json_int_t)m->start_time, "end_time", (json_int_t)m->end_time,
	    "exit_status", (json_int_t)m->exit_status, "signal", (json_int_t)m->signal,
	    "attempt", (json_int_t)m->attempt, "utime", m->utime, "stime", m->stime,
	    "maxrss_kb", (json_int_t)m->maxrss_kb, "host", m->host, "reason", m->reason);
}

void
msg_task_row_unpack(const json_t *o, struct msg_task_row *m)
{
	m->task = jint(o, "task", 0);
	m->state = jstr(o, "state");
	m->state_letters = jstr(o, "state_letters");
	m->start_time = jint(o, "start_time", 0);
	m->end_time = jint(o, "end_time", 0);
	m->exit_status = jint(o, "exit_status", 0);
	m->signal = jint(o, "signal", 0);
	m->attempt = jint(o, "attempt", 0);
	m->utime = num_get(o, "utime");
	m->stime = num_get(o, "stime");
	m->maxrss_kb = jint(o, "maxrss_kb", 0);
	m->host = jstr(o, "host");
	m->reason = jstr(o, "reason");
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

/* --- ACCT --- */

/* A text or null, as a record's absent texts are sent. */
static json_t *
text_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *
msg_acct_row_pack(const struct msg_acct_row *m)
{
	json_t *o = json_object();

	json_object_set_new(o, "row", json_integer(m->row));
	json_object_set_new(o, "id", json_integer(m->id));
	json_object_set_new(o, "task", json_integer(m->task));
	json_object_set_new(o, "attempt", json_integer(m->attempt));
	json_object_set_new(o, "name", text_or_null(m->name));
	json_object_set_new(o, "owner", text_or_null(m->owner));
	json_object_set_new(o, "uid", json_integer(m->uid));
	json_object_set_new(o, "gid", json_integer(m->gid));
	json_object_set_new(o, "group", text_or_null(m->group));
	json_object_set_new(o, "queue", text_or_null(m->queue));
	json_object_set_new(o, "hosts", m->hosts ? m->hosts : json_array());
	json_object_set_new(o, "submit_time", json_integer(m->submit_time));
	json_object_set_new(o, "start_time", json_integer(m->start_time));
	json_object_set_new(o, "end_time", json_integer(m->end_time));
	json_object_set_new(o, "state", json_string(m->state));
	/* An attempt that could not start has no exit status (json.md: a key
	 * that does not apply is left out). */
	if (m->has_exit_status)
		json_object_set_new(o, "exit_status", json_integer(m->exit_status));
	json_object_set_new(o, "signal", json_integer(m->signal));
	json_object_set_new(o, "failed", json_integer(m->failed));
	json_object_set_new(o, "reason", text_or_null(m->reason));
	json_object_set_new(o, "prio", json_integer(m->prio));
	json_object_set_new(o, "pe", text_or_null(m->pe));
	json_object_set_new(o, "slots", json_integer(m->slots));
	if (m->project)
		json_object_set_new(o, "project", json_string(m->project));
	if (m->account)
		json_object_set_new(o, "account", json_string(m->account));
	json_object_set_new(o, "ru_wallclock", json_real(m->ru_wallclock));
	json_object_set_new(o, "rusage", rusage_to_json(&m->ru));
	return o;
}

void
msg_acct_row_unpack(const json_t *o, struct msg_acct_row *m)
{
	const char *why;

	m->row = jint(o, "row", 0);
	m->id = jint(o, "id", 0);
	m->task = jint(o, "task", 0);
	m->attempt = jint(o, "attempt", 0);
	m->name = jstr(o, "name");
	m->owner = jstr(o, "owner");
	m->uid = jint(o, "uid", 0);
	m->gid = jint(o, "gid", 0);
	m->group = jstr(o, "group");
	m->queue = jstr(o, "queue");
	m->hosts = list_get(o, "hosts");
	m->submit_time = jint(o, "submit_time", 0);
	m->start_time = jint(o, "start_time", 0);
	m->end_time = jint(o, "end_time", 0);
	m->state = jstr(o, "state");
	m->has_exit_status = json_object_get(o, "exit_status") != NULL;
	m->exit_status = jint(o, "exit_status", 0);
	m->signal = jint(o, "signal", 0);
	m->failed = jint(o, "failed", 0);
	m->reason = jstr(o, "reason");
	m->pe = jstr(o, "pe");
	m->project = jstr(o, "project");
	m->account = jstr(o, "account");
	m->prio = jint(o, "prio", 0);
	m->slots = jint(o, "slots", 1);
	m->ru_wallclock = num_get(o, "ru_wallclock");
	if (rusage_from_json(&m->ru, json_object_get(o, "rusage"), &why) < 0)
		memset(&m->ru, 0, sizeof m->ru);
}

json_t *
msg_acct_sum_pack(const struct msg_acct_sum *m)
{
	json_t *o = json_object();

	if (m->host)
		json_object_set_new(o, "host", json_string(m->host));
	if (m->queue)
		json_object_set_new(o, "queue", json_string(m->queue));
	if (m->owner)
		json_object_set_new(o, "owner", json_string(m->owner));
	if (m->group)
		json_object_set_new(o, "group", json_string(m->group));
	if (m->pe)
		json_object_set_new(o, "pe", json_string(m->pe));
	if (m->has_slots)
		json_object_set_new(o, "slots", json_integer(m->slots));
	json_object_set_new(o, "jobs", json_integer(m->jobs));
	json_object_set_new(o, "ru_wallclock", json_real(m->ru_wallclock));
	json_object_set_new(o, "ru_utime", json_real(m->ru_utime));
	json_object_set_new(o, "ru_stime", json_real(m->ru_stime));
	json_object_set_new(o, "maxvmem", json_integer(m->maxvmem));
	return o;
}

void
msg_acct_sum_unpack(const json_t *o, struct msg_acct_sum *m)
{
	m->host = jstr(o, "host");
	m->queue = jstr(o, "queue");
	m->owner = jstr(o, "owner");
	m->group = jstr(o, "group");
	m->pe = jstr(o, "pe");
	m->has_slots = json_object_get(o, "slots") != NULL;
	m->slots = jint(o, "slots", 0);
	m->jobs = jint(o, "jobs", 0);
	m->ru_wallclock = num_get(o, "ru_wallclock");
	m->ru_utime = num_get(o, "ru_utime");
	m->ru_stime = num_get(o, "ru_stime");
	m->maxvmem = jint(o, "maxvmem", 0);
}

/* --- MASTERS --- */

/* The keys a master's row has, always in this order. */
json_t *
msg_master_row_pack(const struct msg_master_row *m)
{
	json_t *o = json_object();

	json_object_set_new(o, "name", json_string(m->name));
	json_object_set_new(o, "role", json_string(m->role));
	if (m->has_epoch)
		json_object_set_new(o, "epoch", json_integer(m->epoch));
	if (m->has_seq)
		json_object_set_new(o, "seq", json_integer(m->seq));
	if (m->has_lag)
		json_object_set_new(o, "lag", json_integer(m->lag));
	if (m->has_in_sync)
		json_object_set_new(o, "in_sync", json_boolean(m->in_sync));
	if (m->has_since)
		json_object_set_new(o, "since", json_integer(m->since));
	if (m->has_writable)
		json_object_set_new(o, "writable", json_boolean(m->writable));
	if (m->self)
		json_object_set_new(o, "self", json_true());
	if (m->state)
		json_object_set_new(o, "state", json_string(m->state));
	if (m->has_quiet)
		json_object_set_new(o, "quiet_ms", json_integer(m->quiet_ms));
	return o;
}

void
msg_master_row_unpack(const json_t *o, struct msg_master_row *m)
{
	memset(m, 0, sizeof *m);
	m->name = jstr(o, "name");
	m->role = jstr(o, "role");
	m->has_epoch = json_object_get(o, "epoch") != NULL;
	m->epoch = jint(o, "epoch", 0);
	m->has_seq = json_object_get(o, "seq") != NULL;
	m->seq = jint(o, "seq", 0);
	m->has_lag = json_object_get(o, "lag") != NULL;
	m->lag = jint(o, "lag", 0);
	m->has_in_sync = json_object_get(o, "in_sync") != NULL;
	m->in_sync = json_is_true(json_object_get(o, "in_sync"));
	m->has_since = json_object_get(o, "since") != NULL;
	m->since = jint(o, "since", 0);
	m->has_writable = json_object_get(o, "writable") != NULL;
	m->writable = json_is_true(json_object_get(o, "writable"));
	m->self = json_is_true(json_object_get(o, "self"));
	m->state = jstr(o, "state");
	m->has_quiet = json_object_get(o, "quiet_ms") != NULL;
	m->quiet_ms = jint(o, "quiet_ms", 0);
}

/* --- The replies: their lists --- */

/* An object of the reply's, or NULL. */
static json_t *
reply_obj(const json_t *rep, const char *key)
{
	json_t *v = json_object_get(rep, key);
	return json_is_object(v) ? v : NULL;
}

/* The add and unpack of a reply whose one list is key. */
#define REPLY_LIST(type, key)						\
void									\
msg_##type##_add(json_t *rep, const struct msg_##type *m)		\
{									\
	reply_set(rep, #key, m->key);					\
}									\
void									\
msg_##type##_unpack(const json_t *rep, struct msg_##type *m)		\
{									\
	m->key = list_get(rep, #key);					\
}

REPLY_LIST(status_reply, jobs)
REPLY_LIST(hosts_reply, hosts)
REPLY_LIST(cron_reply, entries)
REPLY_LIST(masters_reply, masters)
REPLY_LIST(results, results)

json_t *
msg_status_reply_one(const json_t *rep)
{
	struct msg_status_reply m;
	json_t *job;

	msg_status_reply_unpack(rep, &m);
	job = json_array_get(m.jobs, 0);
	return json_is_object(job) ? job : NULL;
}

void
msg_reserve_reply_add(json_t *rep, const struct msg_reserve_reply *m)
{
	reply_set(rep, "reservations", m->reservations);
	reply_set(rep, "reservation", m->reservation);
}

void
msg_reserve_reply_unpack(const json_t *rep, struct msg_reserve_reply *m)
{
	m->reservations = list_get(rep, "reservations");
	m->reservation = reply_obj(rep, "reservation");
}

void
msg_alias_reply_add(json_t *rep, const struct msg_alias_reply *m)
{
	reply_set(rep, "hosts", m->hosts);
	reply_set(rep, "aliases", m->aliases);
	reply_set(rep, "host", m->host);
}

void
msg_alias_reply_unpack(const json_t *rep, struct msg_alias_reply *m)
{
	m->hosts = list_get(rep, "hosts");
	m->aliases = list_get(rep, "aliases");
	m->host = reply_obj(rep, "host");
}

void
msg_acct_reply_add(json_t *rep, const struct msg_acct_reply *m)
{
	reply_set(rep, "rows", m->rows);
	reply_set(rep, "summary", m->summary);
}

void
msg_acct_reply_unpack(const json_t *rep, struct msg_acct_reply *m)
{
	m->rows = list_get(rep, "rows");
	m->summary = list_get(rep, "summary");
}

void
msg_conf_reply_add(json_t *rep, const struct msg_conf_reply *m)
{
	reply_set(rep, "queues", m->queues);
	reply_set(rep, "pes", m->pes);
	reply_set(rep, "managers", m->managers);
	reply_set(rep, "operators", m->operators);
	if (m->text)
		json_object_set_new(rep, "text", json_string(m->text));
}

void
msg_conf_reply_unpack(const json_t *rep, struct msg_conf_reply *m)
{
	m->queues = list_get(rep, "queues");
	m->pes = list_get(rep, "pes");
	m->managers = list_get(rep, "managers");
	m->operators = list_get(rep, "operators");
	m->text = jstr(rep, "text");
}
