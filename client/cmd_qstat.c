/* cmd_qstat.c: qstat: the job table and its views (-f, -r, -ext, -pri, -g c), one job (-j), JSON or XML. */
#include "config.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "client/client.h"
#include "common/msg_req.h"

static int qstat_run(int argc, char **argv);

const struct cmd cmd_qstat = {
	"qstat",
	"qstat [-f] [-r] [-ext|-pri] [-q queue[,queue]...] [-u user[,user]...|'*'] [-s p|r|s|z|a|h...]\n"
	"      [-xml|--json]\n"
	"       qstat -g c [-xml]\n"
	"       qstat -j job[,job]... [-xml|--json]\n"
	"       qstat --cron [--json]\n",
	qstat_run,
};

/* What -s asked for, and what only the client can tell apart. */
#define WANT_P 0x1
#define WANT_R 0x2
#define WANT_Z 0x4
#define WANT_H 0x8
#define WANT_S 0x10

static int
parse_states(const char *s, unsigned *want)
{
	while (*s) {
		if (*s == 'h') {
			/* hu, ho, hs, hd, hj, ha, h: nowq has only user holds */
			*want |= WANT_H;
			s++;
			if (*s && strchr("uosdja", *s))
				s++;
			continue;
		}
		switch (*s) {
		case 'p': *want |= WANT_P; break;
		case 'r': *want |= WANT_R; break;
		case 's': *want |= WANT_S; break;
		case 'z': *want |= WANT_Z; break;
		case 'a': *want |= WANT_P | WANT_R; break;
		default: return -1;
		}
		s++;
	}
	return 0;
}

static bool
row_wanted(const struct msg_job_row *r, unsigned want)
{
	const char *st = r->state;
	if (!st)
		return false;
	if (strcmp(st, "pending") == 0)
		return (want & WANT_P) || ((want & WANT_H) && r->hold != 0);
	/* Suspended, by qmod (s) or its host's idle policy (T), is running
	 * to the master: the letters tell it apart. */
	if (strcmp(st, "running") == 0 || strcmp(st, "transferring") == 0)
		return (want & WANT_R) ||
		    ((want & WANT_S) && r->state_letters && strpbrk(r->state_letters, "sST"));
	return want & WANT_Z;
}

/* Running first, then pending by priority and age, then finished: the
 * order Grid Engine lists them in. */
static int
rank(const struct msg_job_row *r)
{
	if (r->state && (strcmp(r->state, "running") == 0 || strcmp(r->state, "transferring") == 0))
		return 0;
	if (r->state && strcmp(r->state, "pending") == 0)
		return 1;
	return 2;
}

static int
row_cmp(const void *a, const void *b)
{
	const struct msg_job_row *x = a, *y = b;
	int rx = rank(x), ry = rank(y);

	if (rx != ry)
		return rx - ry;
	if (rx == 1 && x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->task < y->task ? -1 : x->task > y->task;
}

/* Keeps the wanted rows, in Grid Engine's order; returns how many. */
static size_t
sort_filter(struct msg_job_row *rows, size_t n, unsigned want)
{
	size_t k = 0, i;

	for (i = 0; i < n; i++)
		if (row_wanted(&rows[i], want))
			rows[k++] = rows[i];
	/* The master's order is usually the one wanted already. */
	for (i = 1; i < k && row_cmp(&rows[i - 1], &rows[i]) <= 0; i++)
		;
	if (i < k)
		qsort(rows, k, sizeof *rows, row_cmp);
	return k;
}

/* qstat --cron: the entries, their schedule, next run and latest job. */
static int
show_cron(bool as_json)
{
	json_t *rep = client_request_ok(msg_cron_pack(&(struct msg_cron){ .action = "list" }), "");
	struct msg_cron_reply cr;
	json_t *entries, *e;
	size_t i;

	if (!rep)
		return 1;
	msg_cron_reply_unpack(rep, &cr);
	entries = cr.entries;
	if (as_json)
		client_print_json("cron", entries);
	else if (json_array_size(entries) > 0) {
		printf("%-8s %-12s %-10s %-20s %-19s %-9s %s\n", "cron-ID", "user", "name", "schedule",
		    "next run", "last job", "state");
		for (i = 0; i < 97; i++)
			putchar('-');
		putchar('\n');
		json_array_foreach(entries, i, e) {
			struct msg_cron_row r;
			char id[32], next[32], last[32];

			msg_cron_row_unpack(e, &r);
			snprintf(id, sizeof id, "c%lld", (long long)r.id);
			if (r.hold)
				snprintf(next, sizeof next, "%-19s", "(held)");
			else
				qstat_format_time(next, sizeof next, r.next_run);
			if (r.last_job)
				snprintf(last, sizeof last, "%lld", (long long)r.last_job);
			else
				snprintf(last, sizeof last, "-");
			printf("%-8s %-12.12s %-10.10s %-20.20s %s %-9s %s\n", id, r.owner ? r.owner : "",
			    r.name ? r.name : "", r.schedule ? r.schedule : "", next, last,
			    r.last_state ? r.last_state : "-");
		}
	}
	json_decref(rep);
	return 0;
}

/* Grid Engine's words when none of the jobs asked for exists, on stderr,
 * naming every job as it was given. */
static void
say_not_exist(char **lists, int nlists)
{
	fflush(stdout);
	fprintf(stderr, "Following jobs do not exist: \n");
	for (int i = 0; i < nlists; i++) {
		char *copy = xstrdup(lists[i]), *save = NULL;
		bool first = i == 0;
		for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
			fprintf(stderr, "%s%s", first ? "" : ", ", w);
			first = false;
		}
		free(copy);
	}
	fputc('\n', stderr);
}

/* qstat -j: one STATUS per job, since only a single-job reply carries the
 * job's environment.  As Grid Engine's, it knows only jobs that have not
 * ended (qacct -j has the others), and fails only when it finds none;
 * --json, nowq's own, keeps ended jobs until finished_jobs_keep. */
static int
show_jobs(char **lists, int nlists, bool as_json, bool as_xml)
{
	json_t *missing = json_array(), *ids, *all = json_array(), *v;
	size_t i;
	int rc = 0;

	ids = client_resolve_jobs(lists, nlists, as_json ? "prz" : "pr", missing);
	json_array_foreach(ids, i, v) {
		json_t *rep = client_request(msg_status_pack_one(json_integer_value(v)));
		json_t *job = msg_status_reply_one(rep);

		if (!client_reply_ok(rep))
			client_die("%s", client_reply_message(rep));
		if (job && (as_json || !qstat_job_ended(job)))
			json_array_append(all, job);
		json_decref(rep);
	}
	if (as_xml) {
		/* Grid Engine's -xml names the jobs asked for in the document
		 * when it knows none of them, and exits 0. */
		json_t *asked = json_array();
		char **words = NULL;

		for (int k = 0; k < nlists; k++)
			client_add_words(&words, lists[k]);
		for (char **w = words; w && *w; w++)
			json_array_append_new(asked, json_string(*w));
		qstat_xml_jobs(stdout, all, asked);
		strv_free(words);
		json_decref(asked);
	} else if (as_json)
		client_print_json("jobs", all);
	else
		json_array_foreach(all, i, v)
			qstat_print_job(stdout, v);
	if (json_array_size(all) == 0 && !as_xml) {
		say_not_exist(lists, nlists);
		rc = 1;
	}
	json_decref(ids);
	json_decref(all);
	json_decref(missing);
	return rc;
}

/* The brief listing a page at a time: a reply holds at most one frame
 * (16 MiB), which a quarter of a million jobs outgrow.  The rows borrow
 * their texts from the pages, which the caller frees after them; NULL
 * pages when the master refused. */
#define QSTAT_PAGE 20000
#define QSTAT_JSON_PAGE 1000

static int64_t
page_size(void)
{
	const char *env = getenv("NOWQ_QSTAT_PAGE");
	int64_t page;
	char *end;

	if (!env || !*env)
		return QSTAT_PAGE;
	if ((page = strtoll(env, &end, 10)) < 1 || page > 100000 || *end) {
		client_warnx("NOWQ_QSTAT_PAGE=%s is not a number from 1 to 100000; using %d", env, QSTAT_PAGE);
		return QSTAT_PAGE;
	}
	return page;
}

/* Where a listing's rows go, a page at a time in Grid Engine's order: the
 * table, or qstat -f's queue instances and pending jobs.  The rows borrow
 * their texts from rep; a sink that keeps rows after the call keeps rep. */
struct sink {
	void  (*page)(struct sink *, json_t *rep, const struct msg_job_row *rows, size_t n);
	/* A listing of one page, when it goes elsewhere than page (NULL: page). */
	void  (*whole)(struct sink *, json_t *rep, const struct msg_job_row *rows, size_t n);
	bool    objects;           /* whole job objects (--json), not brief rows */
	size_t  items;             /* --json: the jobs printed */
	bool    closed;            /* --json: the whole document is out */
	bool    header;            /* the table's header is out */
	json_t *hosts;             /* -f: the HOSTS reply's hosts */
	json_t *held;              /* -f: the replies the running rows borrow from */
	struct msg_job_row *running; /* -f: the running rows, waiting for their queues */
	size_t  nrunning;
	bool    queues, banner;    /* -f: printed */
	enum qstat_view view;      /* the table's columns */
	bool    req;               /* -r: each job's requests below it */
	char  **qlist;             /* -q: the running rows of these queues only */
	struct qstat_xml *xml;     /* -xml: the document being written */
	json_t *objs;              /* -r: each job's object by its id */
	json_t *collect;           /* -r's first pass: where the objects go */
};

/* -r shows what each job asked for, which only its object holds, while
 * an array's running tasks come only as brief rows: the objects are
 * gathered first and each brief row points to its job's. */
static void
objs_page(struct sink *sk, json_t *rep, const struct msg_job_row *rows, size_t n)
{
	char id[32];

	(void)rep;
	for (size_t i = 0; i < n; i++) {
		snprintf(id, sizeof id, "%lld", (long long)rows[i].id);
		if (rows[i].hold & HOLD_DEP && !json_object_get(sk->collect, id)) {
			/* The jobs it waits for (-r's predecessor lines) come
			 * with one job's STATUS only: ask for those few. */
			json_t *one = client_request(msg_status_pack_one(rows[i].id));
			json_t *job = msg_status_reply_one(one);

			if (client_reply_ok(one) && job) {
				json_object_set(sk->collect, id, job);
				json_decref(one);
				continue;
			}
			json_decref(one);
		}
		json_object_set(sk->collect, id, (json_t *)rows[i].obj);
	}
}

static void
attach_objs(struct sink *sk, struct msg_job_row *rows, size_t n)
{
	char id[32];

	for (size_t i = 0; sk->objs && i < n; i++) {
		snprintf(id, sizeof id, "%lld", (long long)rows[i].id);
		rows[i].obj = json_object_get(sk->objs, id);
	}
}

/* -q: a running row shows when its queue or QUEUE@HOST matches a
 * pattern; pending rows always show, as in Grid Engine. */
static bool
queue_matches(char **qlist, const struct msg_job_row *r)
{
	char qi[256];

	if (!qlist || !r->state || (strcmp(r->state, "running") != 0 && strcmp(r->state, "transferring") != 0))
		return true;
	qstat_row_queue(r, qi, sizeof qi);
	for (char **p = qlist; *p; p++)
		if (fnmatch(*p, r->queue ? r->queue : "", 0) == 0 || fnmatch(*p, qi, 0) == 0)
			return true;
	return false;
}

static size_t
queue_filter(struct sink *sk, struct msg_job_row *rows, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (queue_matches(sk->qlist, &rows[i]))
			rows[k++] = rows[i];
	return k;
}

static void
table_page(struct sink *sk, json_t *rep, const struct msg_job_row *rows, size_t n)
{
	(void)rep;
	qstat_view_rows(stdout, rows, n, sk->view, sk->req, !sk->header);
	sk->header |= n > 0;
}

static void
xml_page(struct sink *sk, json_t *rep, const struct msg_job_row *rows, size_t n)
{
	(void)rep;
	qstat_xml_rows(sk->xml, rows, n);
}

/* --json: a listing of one page is one document; a longer one is printed
 * a job at a time in the same text, so it is never held whole. */
static void
json_whole(struct sink *sk, json_t *rep, const struct msg_job_row *rows, size_t n)
{
	json_t *shown = json_array();

	(void)rep;
	for (size_t i = 0; i < n; i++)
		json_array_append(shown, (json_t *)rows[i].obj);
	client_print_json("jobs", shown);
	json_decref(shown);
	sk->closed = true;
}

static void
json_page(struct sink *sk, json_t *rep, const struct msg_job_row *rows, size_t n)
{
	(void)rep;
	for (size_t i = 0; i < n; i++)
		client_print_json_item("jobs", rows[i].obj, &sk->items);
}

/* The rows of a page: brief ones, or made from whole job objects. */
static struct msg_job_row *
page_rows(const json_t *rep, bool objects, size_t *n)
{
	return objects ? msg_job_objects_unpack(rep, n) : msg_job_rows_unpack(rep, n);
}

/* qstat -f prints the queue instances, each with its running jobs, before
 * the first pending job: the running rows are kept until then (they are at
 * most the cluster's slots), the pending ones printed as they come. */
static void
full_queues(struct sink *sk)
{
	if (sk->queues)
		return;
	if (sk->xml)
		qstat_xml_queues(sk->xml, sk->hosts, sk->running, sk->nrunning);
	else
		qstat_print_queues(stdout, sk->hosts, sk->running, sk->nrunning);
	sk->queues = true;
	free(sk->running);
	sk->running = NULL;
	sk->nrunning = 0;
	json_array_clear(sk->held);
}

static void
full_page(struct sink *sk, json_t *rep, const struct msg_job_row *rows, size_t n)
{
	size_t i = 0;

	/* The rows come running first, so these are a page's first ones. */
	for (; i < n && rank(&rows[i]) == 0; i++) {
		sk->running = xrealloc(sk->running, (sk->nrunning + 1) * sizeof *sk->running);
		sk->running[sk->nrunning++] = rows[i];
	}
	if (i > 0)
		json_array_append(sk->held, rep);
	if (i < n) {
		full_queues(sk);
		if (sk->xml)
			qstat_xml_rows(sk->xml, rows + i, n - i);
		else
			sk->banner |= qstat_print_pending(stdout, rows + i, n - i, !sk->banner);
	}
}

/* Sends one STATUS without waiting for its reply. */
static int
send_status(const struct msg_status *m, const char **why)
{
	json_t *req = msg_status_pack(m);
	int rc = client_send(req, why);

	json_decref(req);
	return rc;
}

/*
 * A listing, handed to sk a page at a time as the pages come, so a listing
 * of a million jobs is never held whole.  Grid Engine's order is running, then
 * pending by priority and age, then finished; each section is asked on its
 * own in that order (the pending one with order "prio", which the master
 * walks by its jobs_pending index).  A section keeps only its own rows: an
 * array's running tasks also come with its pending line, and belong to the
 * first section.  A listing that fits in one page is the one request it
 * always was, sorted here.  Returns 0, or 1 when the master refused.
 */
static int
stream_pages(struct msg_status *base, unsigned want, struct sink *sk)
{
	static const struct { unsigned want; const char *states; int rank; } sect[] = {
		{ WANT_R | WANT_S, "r", 0 }, { WANT_P | WANT_H, "p", 1 }, { WANT_Z, "z", 2 },
	};
	int64_t page = page_size();
	struct msg_status_next next;
	json_t *rep;
	const char *why = NULL;

	/* A job object is some twenty times a brief row: fewer per frame. */
	if (sk->objects && page > QSTAT_JSON_PAGE)
		page = QSTAT_JSON_PAGE;
	base->brief = !sk->objects;
	base->limit = page;
	if ((rep = client_request_ok(msg_status_pack(base), "")) == NULL)
		return 1;
	msg_status_next_unpack(rep, &next);
	if (!next.has) {
		size_t n;
		struct msg_job_row *rows = page_rows(rep, sk->objects, &n);

		n = queue_filter(sk, rows, sort_filter(rows, n, want));
		attach_objs(sk, rows, n);
		(sk->whole ? sk->whole : sk->page)(sk, rep, rows, n);
		msg_job_rows_free(rows);
		json_decref(rep);
		return 0;
	}
	json_decref(rep);
	for (size_t s = 0; s < sizeof sect / sizeof sect[0]; s++) {
		int64_t after = 0, after_prio = 0;
		bool first = true;

		struct msg_status req = *base;

		if (!(want & sect[s].want))
			continue;
		req.states = sect[s].states;
		req.by_prio = sect[s].rank == 1;
		/* The next page is asked for before this one is printed, so
		 * the master builds it while the client prints. */
		if (send_status(&req, &why) < 0)
			goto fail;
		for (;;) {
			struct msg_job_row *rows;
			size_t n, k = 0;
			bool more;

			if ((rep = client_recv(-1, &why)) == NULL)
				goto fail;
			if (!client_reply_ok(rep)) {
				client_errx("%s", client_reply_message(rep));
				json_decref(rep);
				return 1;
			}
			/* Each cursor must come after the last one, or the
			 * walk could go round for ever. */
			msg_status_next_unpack(rep, &next);
			more = next.has && (sect[s].rank == 1 ? first || next.prio < after_prio ||
			    (next.prio == after_prio && next.id > after) : next.id > after);
			if (more) {
				first = false;
				after = next.id;
				after_prio = next.prio;
				req.after = after;
				req.has_after_prio = req.by_prio;
				req.after_prio = after_prio;
				if (send_status(&req, &why) < 0) {
					json_decref(rep);
					goto fail;
				}
			}
			rows = page_rows(rep, sk->objects, &n);
			for (size_t i = 0; i < n; i++)
				if (rank(&rows[i]) == sect[s].rank)
					rows[k++] = rows[i];
			/* The master sends the section in its order; a sort of
			 * the page only settles an array's tasks among themselves. */
			k = queue_filter(sk, rows, sort_filter(rows, k, want));
			attach_objs(sk, rows, k);
			sk->page(sk, rep, rows, k);
			msg_job_rows_free(rows);
			json_decref(rep);
			if (!more)
				break;
		}
	}
	return 0;
fail:
	client_errx("%s", why ? why : "no reply from the master");
	return 1;
}

/* Brief rows are read from the frame's text (msg_job_rows_decode), not
 * by jansson, except for -f, which keeps running rows past their page. */
static int
stream_table(struct msg_status *base, unsigned want, struct sink *sk)
{
	int rc;

	msg_job_rows_native(!sk->objects && !sk->held);
	rc = stream_pages(base, want, sk);
	msg_job_rows_native(false);
	return rc;
}

/* qstat -f: the hosts and their queues from HOSTS, then the jobs as the
 * listing's rows, so -u, -s and who sees whose jobs are the table's.
 * Finished jobs have no place in it and are not asked for. */
static int
show_full(struct msg_status *req, unsigned want, struct sink *sk)
{
	json_t *rep = client_request_ok(msg_hosts_pack(&(struct msg_hosts){ 0 }), "");
	struct msg_hosts_reply hr;
	int rc;

	if (!rep)
		return 1;
	msg_hosts_reply_unpack(rep, &hr);
	sk->page = full_page;
	sk->hosts = hr.hosts;
	sk->held = json_array();
	if ((rc = stream_table(req, want & ~WANT_Z, sk)) == 0)
		full_queues(sk);
	free(sk->running);
	json_decref(sk->held);
	json_decref(rep);
	return rc;
}

/* qstat -g c: the cluster queues' sums. */
static int
show_cqueues(bool as_xml)
{
	json_t *rep = client_request_ok(msg_hosts_pack(&(struct msg_hosts){ 0 }), "");
	struct msg_hosts_reply hr;

	if (!rep)
		return 1;
	msg_hosts_reply_unpack(rep, &hr);
	if (as_xml)
		qstat_xml_cqueues(stdout, hr.hosts);
	else
		qstat_print_cqueues(stdout, hr.hosts);
	json_decref(rep);
	return 0;
}

/* -q: whether any configured queue matches each pattern; Grid Engine
 * prints nothing and exits 1 for a queue it does not know. */
static bool
queues_exist(char **qlist)
{
	json_t *rep = client_request_ok(msg_conf_pack(&(struct msg_conf){ .op = "list" }), "");
	json_t *v;
	struct msg_conf_reply cr = { 0 };
	size_t i;
	bool all = rep != NULL;

	if (rep)
		msg_conf_reply_unpack(rep, &cr);
	for (char **p = qlist; rep && *p; p++) {
		bool found = false;
		char q[256];

		/* QUEUE@HOST names its queue before the @. */
		snprintf(q, sizeof q, "%.*s", (int)strcspn(*p, "@"), *p);
		json_array_foreach(cr.queues, i, v)
			found |= json_is_string(v) && fnmatch(q, json_string_value(v), 0) == 0;
		all &= found;
	}
	json_decref(rep);
	return all;
}

/* What the command line asked for. */
struct qstat_args {
	json_t  *users;
	char   **jlists, **qlist;
	int      njlists;
	bool     as_json, as_xml, job_mode, cron_mode, full, req, cqueues;
	enum qstat_view view;
	unsigned want;
};

/* An option taking a word; NULL (said) when it is missing. */
static const char *
opt_arg(int argc, char **argv, int *k, const char *what)
{
	if (++*k >= argc) {
		client_errx("option \"%s\" needs %s", argv[*k - 1], what);
		return NULL;
	}
	return argv[*k];
}

/* 0, 1 for a usage error, 2 for -help. */
static int
parse_args(int argc, char **argv, struct qstat_args *o)
{
	const char *w;

	for (int k = 1; k < argc; k++) {
		const char *a = argv[k];
		if (strcmp(a, "-help") == 0 || strcmp(a, "--help") == 0)
			return 2;
		else if (strcmp(a, "--json") == 0 || strcmp(a, "-json") == 0)
			o->as_json = true;
		else if (strcmp(a, "-xml") == 0)
			o->as_xml = true;
		else if (strcmp(a, "--cron") == 0)
			o->cron_mode = true;
		else if (strcmp(a, "-f") == 0)
			o->full = true;
		else if (strcmp(a, "-r") == 0)
			o->req = true;
		else if (strcmp(a, "-ext") == 0)
			o->view = QV_EXT;
		else if (strcmp(a, "-pri") == 0)
			o->view = QV_PRI;
		else if (strcmp(a, "-u") == 0) {
			if (!(w = opt_arg(argc, argv, &k, "a list of users")))
				return 1;
			client_add_users(o->users, w);
		} else if (strcmp(a, "-q") == 0) {
			if (!(w = opt_arg(argc, argv, &k, "a list of queues")))
				return 1;
			client_add_words(&o->qlist, w);
		} else if (strcmp(a, "-g") == 0) {
			if (!(w = opt_arg(argc, argv, &k, "c")))
				return 1;
			if (strcmp(w, "c") != 0) {
				client_errx("option \"-g %s\" is not supported by nowq (only -g c is)", w);
				return 1;
			}
			o->cqueues = true;
		} else if (strcmp(a, "-s") == 0) {
			if (!(w = opt_arg(argc, argv, &k, "job states")))
				return 1;
			if (parse_states(w, &o->want) < 0) {
				client_errx("-s wants states from p, r, s, z, a, h, not \"%s\"", w);
				return 1;
			}
		} else if (strcmp(a, "-j") == 0) {
			/* The job list is optional, as in Grid Engine. */
			o->job_mode = true;
			if (k + 1 < argc && argv[k + 1][0] != '-')
				o->jlists[o->njlists++] = argv[++k];
		} else {
			client_errx(CLIENT_UNSUPPORTED, a);
			return 1;
		}
	}
	if ((o->full || o->view != QV_PLAIN || o->req || o->cqueues) && o->as_json) {
		client_errx("--json gives whole jobs; -f, -r, -ext, -pri and -g c are views of the table "
		    "(qhost --json gives the hosts)");
		return 1;
	}
	if (o->as_json && o->as_xml) {
		client_errx("-xml and --json do not go together");
		return 1;
	}
	return 0;
}

/* The listing, streamed into the table, the XML document or JSON. */
static int
show_listing(struct qstat_args *o)
{
	struct msg_status req = { 0 };
	struct qstat_xml xml = { stdout, 0, 0 };
	struct sink sk = { .page = table_page, .view = o->view, .req = o->req, .qlist = o->qlist };
	unsigned want = o->want ? o->want : WANT_P | WANT_R;
	char states[4];
	size_t n = 0;
	int rc;

	if (want & (WANT_P | WANT_H))
		states[n++] = 'p';
	if (want & (WANT_R | WANT_S))
		states[n++] = 'r';
	if (want & WANT_Z)
		states[n++] = 'z';
	states[n] = '\0';
	req.states = states;
	req.users = json_array_size(o->users) > 0 ? o->users : NULL;
	if (o->qlist && !queues_exist(o->qlist))
		return 1;
	if (o->as_json) {
		sk = (struct sink){ .page = json_page, .whole = json_whole, .objects = true };
		if ((rc = stream_table(&req, want, &sk)) == 0 && !sk.closed)
			client_print_json_end("jobs", sk.items);
		return rc;
	}
	if (o->req) {
		struct sink objs = { .page = objs_page, .objects = true, .collect = json_object() };

		if (stream_table(&req, want, &objs) != 0) {
			json_decref(objs.collect);
			return 1;
		}
		sk.objs = objs.collect;
	}
	if (o->as_xml) {
		/* A document the size of the listing: one big buffer, one pass. */
		static char buf[1 << 16];
		setvbuf(stdout, buf, _IOFBF, sizeof buf);
		xml.flags = (o->view == QV_EXT ? QX_EXT : 0) | (o->req ? QX_REQ : 0) | (o->full ? QX_FULL : 0);
		sk.xml = &xml;
		sk.page = xml_page;
		qstat_xml_begin(&xml);
	}
	rc = o->full ? show_full(&req, want, &sk) : stream_table(&req, want, &sk);
	if (o->as_xml) {
		if (rc == 0)
			qstat_xml_end(&xml);
		fflush(stdout);
	}
	json_decref(sk.objs);
	return rc;
}

static int
qstat_run(int argc, char **argv)
{
	struct qstat_args o = { .users = json_array(), .view = QV_PLAIN };
	int rc;

	o.jlists = xcalloc((size_t)argc + 1, sizeof *o.jlists);
	if ((rc = parse_args(argc, argv, &o)) != 0) {
		client_usage(&cmd_qstat, rc == 2 ? stdout : stderr);
		rc = rc == 2 ? 0 : 1;
	} else if (o.job_mode)
		rc = o.njlists ? show_jobs(o.jlists, o.njlists, o.as_json, o.as_xml) : 0;
	else if (o.cron_mode)
		rc = show_cron(o.as_json);
	else if (o.cqueues)
		rc = show_cqueues(o.as_xml);
	else
		rc = show_listing(&o);
	json_decref(o.users);
	free(o.jlists);
	strv_free(o.qlist);
	return rc;
}
