/* http.c: the master's read-only status page, JSON API and Prometheus metrics.
 *
 * The JSON API is under /api/v1/, the metrics under /metrics, served by
 * libevent's evhttp on http_listen. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "common/msg_rows.h"
#include "qmaster/qmaster.h"
#include "spool/spool.h"

/* The API's version: a client reads "schema" and knows the fields
 * (doc/json.md).  Additions keep it; changes of meaning raise it. */
#define HTTP_SCHEMA     1
#define HTTP_PAGE_MAX   1000
#define HTTP_PAGE_DEF   100

static struct evhttp *http;
static int64_t started_ms;

/* ---- histograms for /metrics ---- */

/* Upper bounds in seconds, as Prometheus' "le" labels. */
static const double bounds[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
	2.5, 5, 10, 30, 60 };
#define NBOUNDS (sizeof bounds / sizeof bounds[0])

struct histogram {
	const char *name, *help;
	uint64_t    le[NBOUNDS];   /* cumulative at print time, per bucket here */
	uint64_t    count;
	double      sum;
};

static struct histogram h_dispatch = { "nowq_submit_to_dispatch_seconds",
	"Time from a job's submission to its dispatch to an execd.", { 0 }, 0, 0 };
static struct histogram h_commit = { "nowq_commit_seconds",
	"Time the group commit of one loop turn took (fsync included).", { 0 }, 0, 0 };
static uint64_t commits;

static void
observe(struct histogram *h, double seconds)
{
	size_t i;

	for (i = 0; i < NBOUNDS && seconds > bounds[i]; i++)
		;
	if (i < NBOUNDS)
		h->le[i]++;
	h->count++;
	h->sum += seconds;
}

void
http_observe_dispatch(const struct job *j)
{
	if (j->submit_time > 0)
		observe(&h_dispatch, (double)(now_ms() - j->submit_time) / 1000.0);
}

void
http_observe_commit(int64_t usec)
{
	commits++;
	observe(&h_commit, (double)usec / 1e6);
}

static void
print_histogram(struct evbuffer *b, const struct histogram *h)
{
	uint64_t cum = 0;

	evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s histogram\n", h->name, h->help, h->name);
	for (size_t i = 0; i < NBOUNDS; i++) {
		cum += h->le[i];
		evbuffer_add_printf(b, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", h->name, bounds[i], cum);
	}
	evbuffer_add_printf(b, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n%s_sum %.6f\n%s_count %" PRIu64 "\n",
	    h->name, h->count, h->name, h->sum, h->name, h->count);
}

/* ---- replies ---- */

static void
reply_text(struct evhttp_request *req, int code, const char *reason, const char *type,
    const char *body, size_t len)
{
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);
	struct evbuffer *b = evbuffer_new();

	evhttp_add_header(out, "Content-Type", type);
	evhttp_add_header(out, "Cache-Control", "no-store");
	evhttp_add_header(out, "X-Content-Type-Options", "nosniff");
	/* Only our own script and style; the data is put into the page as
	 * text (textContent), never as markup. */
	evhttp_add_header(out, "Content-Security-Policy",
	    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
	    "img-src 'self'; frame-ancestors 'none'");
	evbuffer_add(b, body, len);
	evhttp_send_reply(req, code, reason, b);
	evbuffer_free(b);
}

static void
reply_json(struct evhttp_request *req, json_t *o)
{
	char *text;

	json_object_set_new(o, "schema", json_integer(HTTP_SCHEMA));
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!text) {
		reply_text(req, 500, "Internal Server Error", "text/plain; charset=utf-8",
		    "cannot encode the reply\n", 24);
		return;
	}
	reply_text(req, 200, "OK", "application/json", text, strlen(text));
	free(text);
}

static void
reply_error(struct evhttp_request *req, int code, const char *reason, const char *what)
{
	json_t *o = json_pack("{s:s}", "error", what);
	char *text = json_dumps(o, JSON_COMPACT);

	json_decref(o);
	reply_text(req, code, reason, "application/json", text, strlen(text));
	free(text);
}

/* ---- the data ---- */

static const struct {
	const char *name;
	unsigned    states;
} job_groups[] = {
	{ "pending",  1u << JS_PENDING },
	{ "running",  1u << JS_DISPATCHED | 1u << JS_RUNNING },
	{ "finished", 1u << JS_DONE | 1u << JS_FAILED | 1u << JS_DELETED },
};

/* Jobs by state, one query for all (the page polls it); zeros when the
 * database cannot answer, which the master has logged. */
static void
job_state_counts(int64_t n[JS_DELETED + 1])
{
	if (store_jobs_count_by_state(store, n) < 0)
		memset(n, 0, (JS_DELETED + 1) * sizeof n[0]);
}

static json_t *
job_counts(void)
{
	json_t *o = json_object();
	int64_t n[JS_DELETED + 1];

	job_state_counts(n);
	for (int s = JS_PENDING; s <= JS_DELETED; s++)
		json_object_set_new(o, job_state_name((enum job_state)s), json_integer(n[s]));
	return o;
}

/* The masters as qconf -smasters shows them, with this one's address and pid. */
static json_t *
masters_json(void)
{
	json_t *list = repl_masters_json(), *m;
	size_t i;

	json_array_foreach(list, i, m) {
		struct msg_master_row r;

		msg_master_row_unpack(m, &r);
		if (!r.self) {
			json_object_set_new(m, "address", r.name ? json_string(r.name) : json_null());
			continue;
		}
		json_object_set_new(m, "address", conf->nmasters ? json_string(conf->masters[conf->self]) :
		    conf->listen ? json_string(conf->listen) : json_null());
		json_object_set_new(m, "pid", json_integer(getpid()));
	}
	return list;
}

static json_t *
queues_json(void)
{
	json_t *a = json_array();

	for (int i = 0; i < conf->nqueues; i++) {
		const struct qm_queue *q = &conf->queues[i];
		json_array_append_new(a, json_pack("{s:s, s:i, s:s, s:i, s:i, s:b}", "name", q->name,
		    "priority", q->priority, "hosts", q->hosts ? q->hosts : "@all",
		    "max_running", q->max_running, "max_running_per_user", q->max_running_per_user,
		    "disabled", q->disabled));
	}
	return a;
}

static void
api_summary(struct evhttp_request *req)
{
	json_t *hosts = exechost_list_json(false, NULL), *by = json_object();
	size_t i, n;
	struct msg_host_row *rows = msg_host_rows_unpack(hosts, &n);

	for (i = 0; i < n; i++)
		if (rows[i].state)
			json_object_set_new(by, rows[i].state, json_integer(jint(by, rows[i].state, 0) + 1));
	msg_host_rows_free(rows, n);
	reply_json(req, json_pack("{s:s, s:I, s:o, s:{s:i, s:o}, s:o, s:b}", "version", PACKAGE_VERSION,
	    "now", (json_int_t)now_ms(), "jobs", job_counts(), "hosts", "total", (int)json_array_size(hosts),
	    "by_state", by, "masters", masters_json(), "show_all_jobs", conf->show_all_jobs));
	json_decref(hosts);
}

struct page_ctx {
	struct jtext t;
	int64_t      rows;     /* rows written (an array may write several) */
	int          jobs, limit;
	int64_t      last_id;
};

static int
page_one(void *arg, const struct job_brief *j)
{
	struct page_ctx *pc = arg;

	if (pc->jobs == pc->limit)
		return 1;
	if (j->t_first)
		array_brief(store, j, &pc->t, &pc->rows);
	else {
		if (pc->rows++)
			jt_lit(&pc->t, ",");
		job_brief_row(j, NULL, &pc->t);
	}
	pc->jobs++;
	pc->last_id = j->id;
	return 0;
}

/* One job, as qstat -j shows it (the status page's detail view): the job
 * object without its script and environment, and why it waits. */
static void
api_job(struct evhttp_request *req, struct evkeyvalq *q)
{
	const char *id = evhttp_find_header(q, "id");
	char *end, why[512];
	long long n = id ? strtoll(id, &end, 10) : -1;
	struct job *j;
	json_t *o;

	if (!perm_sees_all(false)) {
		reply_error(req, 403, "Forbidden", "this site shows jobs only to their owners "
		    "(show_all_jobs = false); use qstat -j");
		return;
	}
	if (!id || !*id || *end || n <= 0) {
		reply_error(req, 400, "Bad Request", "id must be a job id");
		return;
	}
	if ((j = store_job_get(store, n, false)) == NULL) {
		reply_error(req, 404, "Not Found", "no such job");
		return;
	}
	o = job_to_json(j);
	job_json_public(o);
	json_object_del(o, "script");
	json_object_del(o, "env");
	sched_why(j, why, sizeof why);
	msg_job_more_add(o, &(struct msg_job_more){ .scheduling_info = *why ? why : NULL });
	job_free(j);
	reply_json(req, json_pack("{s:o}", "job", o));
}

/* One page of a state's jobs, by id: ?state=pending|running|finished,
 * ?after=ID (the last id of the previous page), ?limit=N. */
static void
api_jobs(struct evhttp_request *req, struct evkeyvalq *q)
{
	const char *state = evhttp_find_header(q, "state"), *after = evhttp_find_header(q, "after"),
	    *limit = evhttp_find_header(q, "limit");
	struct store_job_filter f = { 0 };
	struct page_ctx pc = { .limit = HTTP_PAGE_DEF };
	char *end, *text;
	size_t len;
	int64_t total;

	if (!perm_sees_all(false)) {
		reply_error(req, 403, "Forbidden", "this site shows jobs only to their owners "
		    "(show_all_jobs = false); use qstat");
		return;
	}
	for (size_t i = 0; i < sizeof job_groups / sizeof job_groups[0]; i++)
		if (state && strcmp(state, job_groups[i].name) == 0)
			f.states = job_groups[i].states;
	if (!f.states) {
		reply_error(req, 400, "Bad Request", "state must be pending, running or finished");
		return;
	}
	if (after && ((f.after_id = strtoll(after, &end, 10)) < 0 || *end || !*after)) {
		reply_error(req, 400, "Bad Request", "after must be a job id");
		return;
	}
	if (limit && ((pc.limit = (int)strtol(limit, &end, 10)) < 1 || pc.limit > HTTP_PAGE_MAX ||
	    *end || !*limit)) {
		reply_error(req, 400, "Bad Request", "limit must be 1 to 1000");
		return;
	}
	f.page = pc.limit;
	total = store_jobs_count(store, f.states);
	jt_lit(&pc.t, "{\"schema\":");
	jt_int(&pc.t, HTTP_SCHEMA);
	jt_lit(&pc.t, ",\"state\":");
	jt_str(&pc.t, state);
	jt_lit(&pc.t, ",\"total\":");
	jt_int(&pc.t, total < 0 ? 0 : total);
	jt_lit(&pc.t, ",");
	job_brief_head(&pc.t);
	if (store_briefs_foreach(store, &f, page_one, &pc) < 0) {
		free(jt_steal(&pc.t, NULL));
		reply_error(req, 500, "Internal Server Error", "cannot read the job list");
		return;
	}
	jt_lit(&pc.t, "],\"next_after\":");
	/* A full page may have more after it; a short one is the last. */
	if (pc.jobs == pc.limit)
		jt_int(&pc.t, pc.last_id);
	else
		jt_lit(&pc.t, "null");
	jt_lit(&pc.t, "}");
	text = jt_steal(&pc.t, &len);
	reply_text(req, 200, "OK", "application/json", text, len);
	free(text);
}

static void
api_cron(struct evhttp_request *req)
{
	json_t *entries;

	if (!perm_sees_all(false)) {
		reply_error(req, 403, "Forbidden", "this site shows cron entries only to their owners "
		    "(show_all_jobs = false); use qstat --cron");
		return;
	}
	if ((entries = cron_list_json(NULL)) == NULL) {
		reply_error(req, 500, "Internal Server Error", "cannot read the cron entries");
		return;
	}
	reply_json(req, json_pack("{s:o}", "entries", entries));
}

static void
metrics(struct evhttp_request *req)
{
	struct evbuffer *b = evbuffer_new();
	json_t *hosts = exechost_list_json(false, NULL);
	static const char *const host_states[] = { "idle", "busy", "suspended", "disabled", "unknown" };
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);
	int64_t jobs[JS_DELETED + 1];
	size_t i, nrows;
	struct msg_host_row *rows = msg_host_rows_unpack(hosts, &nrows);

	evbuffer_add_printf(b, "# HELP nowq_jobs Jobs in the database by state.\n# TYPE nowq_jobs gauge\n");
	job_state_counts(jobs);
	for (int s = JS_PENDING; s <= JS_DELETED; s++)
		evbuffer_add_printf(b, "nowq_jobs{state=\"%s\"} %lld\n", job_state_name((enum job_state)s),
		    (long long)jobs[s]);
	evbuffer_add_printf(b, "# HELP nowq_hosts Execution hosts by state.\n# TYPE nowq_hosts gauge\n");
	for (size_t k = 0; k < sizeof host_states / sizeof host_states[0]; k++) {
		int n = 0;
		for (i = 0; i < nrows; i++)
			n += rows[i].state && strcmp(rows[i].state, host_states[k]) == 0;
		evbuffer_add_printf(b, "nowq_hosts{state=\"%s\"} %d\n", host_states[k], n);
	}
	msg_host_rows_free(rows, nrows);
	json_decref(hosts);
	print_histogram(b, &h_dispatch);
	print_histogram(b, &h_commit);
	evbuffer_add_printf(b, "# HELP nowq_commits_total Group commits since start.\n"
	    "# TYPE nowq_commits_total counter\nnowq_commits_total %" PRIu64 "\n", commits);
	evbuffer_add_printf(b, "# HELP nowq_replication_lag_transactions Transactions the standby "
	    "has not acknowledged (0 without a standby).\n# TYPE nowq_replication_lag_transactions gauge\n"
	    "nowq_replication_lag_transactions 0\n");
	evbuffer_add_printf(b, "# HELP nowq_start_time_seconds When this master started.\n"
	    "# TYPE nowq_start_time_seconds gauge\nnowq_start_time_seconds %.3f\n",
	    (double)started_ms / 1000.0);
	evhttp_add_header(out, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	evhttp_add_header(out, "Cache-Control", "no-store");
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

/* ---- the page ---- */

extern const char http_page_html[], http_page_js[], http_page_css[];

static void
route(struct evhttp_request *req, void *arg)
{
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL, *query = uri ? evhttp_uri_get_query(uri) : NULL;
	struct evkeyvalq q;

	(void)arg;
	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET &&
	    evhttp_request_get_command(req) != EVHTTP_REQ_HEAD) {
		reply_error(req, 405, "Method Not Allowed", "the status page is read-only: GET only");
		return;
	}
	if (!path) {
		reply_error(req, 400, "Bad Request", "no path");
		return;
	}
	TAILQ_INIT(&q);
	if (query && evhttp_parse_query_str(query, &q) < 0) {
		reply_error(req, 400, "Bad Request", "cannot parse the query string");
		return;
	}
	if (strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0)
		reply_text(req, 200, "OK", "text/html; charset=utf-8", http_page_html, strlen(http_page_html));
	else if (strcmp(path, "/app.js") == 0)
		reply_text(req, 200, "OK", "text/javascript; charset=utf-8", http_page_js, strlen(http_page_js));
	else if (strcmp(path, "/style.css") == 0)
		reply_text(req, 200, "OK", "text/css; charset=utf-8", http_page_css, strlen(http_page_css));
	else if (strcmp(path, "/api/v1/summary") == 0)
		api_summary(req);
	else if (strcmp(path, "/api/v1/hosts") == 0)
		reply_json(req, json_pack("{s:o}", "hosts", exechost_list_json(false, NULL)));
	else if (strcmp(path, "/api/v1/jobs") == 0)
		api_jobs(req, &q);
	else if (strcmp(path, "/api/v1/job") == 0)
		api_job(req, &q);
	else if (strcmp(path, "/api/v1/queues") == 0)
		reply_json(req, json_pack("{s:o}", "queues", queues_json()));
	else if (strcmp(path, "/api/v1/cron") == 0)
		api_cron(req);
	else if (strcmp(path, "/api/v1/reservations") == 0)
		reply_json(req, json_pack("{s:o}", "reservations", resv_list_json()));
	else if (strcmp(path, "/api/v1/masters") == 0)
		reply_json(req, json_pack("{s:o}", "masters", masters_json()));
	else if (strcmp(path, "/metrics") == 0)
		metrics(req);
	else
		reply_error(req, 404, "Not Found", "no such page");
	evhttp_clear_headers(&q);
}

int
http_start(void)
{
	started_ms = now_ms();
	if (!conf->http_listen)
		return 0;
	http = evhttp_new(base);
	if (!http)
		return -1;
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST |
	    EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE);
	/* Small requests only, and a silent client is dropped. */
	evhttp_set_max_headers_size(http, 8192);
	evhttp_set_max_body_size(http, 0);
	evhttp_set_timeout(http, 10);
	evhttp_set_gencb(http, route, NULL);
	if (!evhttp_bind_socket_with_handle(http, conf->http_host, (ev_uint16_t)conf->http_port)) {
		log_warn("cannot listen for HTTP on %s", conf->http_listen);
		evhttp_free(http);
		http = NULL;
		return -1;
	}
	log_info("status page on http://%s/", conf->http_listen);
	return 0;
}

void
http_stop(void)
{
	if (http)
		evhttp_free(http);
	http = NULL;
}
