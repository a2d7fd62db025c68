/* jobop.c: the job operations qdel, qhold, qrls and qmod share: naming jobs and sending the request. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "common/msg.h"
#include "client/client.h"
#include "common/msg_req.h"

bool
client_parse_id(const char *s, int64_t *id)
{
	char *end;
	long long v;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v <= 0)
		return false;
	*id = v;
	return true;
}

void
client_add_users(json_t *users, const char *list)
{
	const char *p = list;
	while (*p) {
		size_t n = strcspn(p, ",");
		if (n > 0) {
			char *u = strndup(p, n);
			if (!u)
				fatalx("out of memory");
			json_array_append_new(users, json_string(u));
			free(u);
		}
		p += n;
		if (*p == ',')
			p++;
	}
}

/* A job named both by id and by name is listed once.  Only then: ids
 * repeated as ids go to the master as given, as Grid Engine sends them. */
static json_t *
unique_ids(json_t *ids)
{
	json_t *out = json_array(), *v, *w;
	size_t i, k;

	json_array_foreach(ids, i, v) {
		bool seen = false;
		json_array_foreach(out, k, w)
			if (json_integer_value(w) == json_integer_value(v)) {
				seen = true;
				break;
			}
		if (!seen)
			json_array_append(out, v);
	}
	json_decref(ids);
	return out;
}

/* Job names need the job list; ids alone never cost a request. */
json_t *
client_resolve_jobs(char **args, int nargs, const char *states, json_t *missing)
{
	json_t *ids = json_array(), *all = NULL, *star = json_pack("[s]", "*");
	struct msg_job_row *rows = NULL;
	size_t k, nrows = 0;

	for (int i = 0; i < nargs; i++) {
		const char *p = args[i];
		while (*p) {
			size_t n = strcspn(p, ",");
			char *word = strndup(p, n);
			int64_t id;
			bool found = false;

			if (!word)
				fatalx("out of memory");
			p += n;
			if (*p == ',')
				p++;
			if (!*word) {
				free(word);
				continue;
			}
			if (client_parse_id(word, &id)) {
				json_array_append_new(ids, json_integer(id));
				free(word);
				continue;
			}
			if (!all) {
				all = client_request(msg_status_pack(&(struct msg_status){
				    .users = star, .states = states }));
				if (!client_reply_ok(all))
					client_die("%s", client_reply_message(all));
				rows = msg_job_objects_unpack(all, &nrows);
			}
			for (k = 0; k < nrows; k++)
				if (rows[k].name && strcmp(rows[k].name, word) == 0) {
					json_array_append_new(ids, json_integer(rows[k].id));
					found = true;
				}
			if (!found)
				json_array_append_new(missing, json_string(word));
			free(word);
		}
	}
	json_decref(star);
	if (all) {
		free(rows);
		json_decref(all);
		ids = unique_ids(ids);
	}
	return ids;
}

/* Cron entries are named cN; they go to the master in a CRON request of
 * their own.  Returns what is left of the list (allocated), or NULL. */
static char *
take_cron_ids(const char *arg, json_t *crons)
{
	char *copy = xstrdup(arg), *tok, *save = NULL, *rest = xcalloc(1, strlen(arg) + 1);

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (tok[0] == 'c' && tok[1] && strspn(tok + 1, "0123456789") == strlen(tok + 1) &&
		    strlen(tok) < 19) {
			json_array_append_new(crons, json_integer(strtoll(tok + 1, NULL, 10)));
			continue;
		}
		if (*rest)
			strcat(rest, ",");
		strcat(rest, tok);
	}
	free(copy);
	if (!*rest) {
		free(rest);
		return NULL;
	}
	return rest;
}

static int
cron_op(const char *type, json_t *crons, bool force)
{
	const char *action = strcmp(type, "DELETE") == 0 ? "delete" :
	    strcmp(type, "HOLD") == 0 ? "hold" : "release";
	json_t *rep;
	int rc;

	rep = client_request_ok(msg_cron_pack(&(struct msg_cron){ .action = action, .ids = crons,
	    .force = force }), "");
	if (!rep)
		return 1;
	rc = client_print_results(rep);
	json_decref(rep);
	return rc;
}

int
client_print_results(const json_t *rep)
{
	struct msg_results rs;
	json_t *r;
	size_t i;
	int rc = 0;

	msg_results_unpack(rep, &rs);
	json_array_foreach(rs.results, i, r) {
		struct msg_result res;
		msg_result_unpack(r, &res);
		if (res.message)
			printf("%s\n", res.message);
		if (!res.ok)
			rc = 1;
	}
	return rc;
}

/* Ids per request of qdel, qhold or qrls: small enough that a terminal
 * sees progress, large enough that the round trips do not matter. */
#define JOB_OP_BATCH 500

/* Sends the change of sel, in batches of ids when it names many, printing
 * each result's message; on a terminal, a progress line counts the jobs
 * done.  1 if any failed or the master refused, else 0. */
static int
job_op_send(const struct msg_jobsel *sel)
{
	size_t n = json_array_size(sel->jobs), done = 0, i;
	const char *verb = sel->type == MSG_DELETE ? "deleting" : sel->type == MSG_HOLD ? "holding" :
	    "releasing";
	int rc = 0;

	do {
		struct msg_jobsel part = *sel;
		json_t *rep;
		if (n > JOB_OP_BATCH) {
			part.jobs = json_array();
			for (i = done; i < n && i < done + JOB_OP_BATCH; i++)
				json_array_append(part.jobs, json_array_get(sel->jobs, i));
			client_progress("%s jobs: %zu of %zu", verb, done, n);
		}
		done += n > JOB_OP_BATCH ? json_array_size(part.jobs) : n;
		rep = client_request_ok(msg_jobsel_pack(&part), "");
		if (n > JOB_OP_BATCH)
			json_decref(part.jobs);
		client_progress_clear();
		if (!rep) {
			rc = 1;
			break;
		}
		rc |= client_print_results(rep);
		json_decref(rep);
	} while (done < n);
	return rc;
}

/* qhold and qrls -h with operator or system holds: Grid Engine's letters
 * through ALTER, which knows them (qalter -h); upper case for qrls. */
static int
job_op_holds(const struct msg_jobsel *sel, const char *letters)
{
	struct msg_alter m = { .jobs = sel->jobs, .verify = true, .reserve = -1, .js = -1 };
	char *h = xstrdup(letters);
	json_t *rep;
	int rc;

	if (!sel->jobs || sel->users || sel->tasks) {
		client_errx("-h o and -h s take job ids, not -u or tasks");
		free(h);
		return 1;
	}
	for (char *p = h; sel->type == MSG_RELEASE && *p; p++)
		*p = (char)(*p - 'a' + 'A');
	m.hold = h;
	rep = client_request_ok(msg_alter_pack(&m), "");
	rc = rep ? client_print_results(rep) : 1;
	json_decref(rep);
	free(h);
	return rc;
}

int
client_job_op(const struct cmd *c, const char *type, int argc, char **argv)
{
	json_t *crons = json_array();
	char **kept = xcalloc((size_t)argc + 1, sizeof *kept);
	bool force = false;
	json_t *users = json_array(), *missing = json_array(), *ids, *r;
	struct msg_jobsel sel = { .type = msg_type_lookup(type) };
	json_t *tasks = json_object(), *task_ids = json_array();
	char **jobargs = xcalloc((size_t)argc + 1, sizeof *jobargs);
	const char *trange = NULL, *holds = NULL;
	int njob = 0, rc = 0;
	bool is_delete = strcmp(type, "DELETE") == 0;
	size_t i;

	for (int k = 1; k < argc; k++) {
		const char *a = argv[k];
		if (strcmp(a, "-help") == 0 || strcmp(a, "--help") == 0) {
			client_usage(c, stdout);
			goto out;
		} else if (strcmp(a, "-u") == 0) {
			if (++k >= argc) {
				client_errx("option \"-u\" needs a list of users");
				goto usage;
			}
			client_add_users(users, argv[k]);
		} else if (is_delete && strcmp(a, "-t") == 0) {
			struct task_range tr;
			if (++k >= argc || task_range_parse(argv[k], &tr) < 0) {
				client_errx("-t wants FIRST[-LAST[:STEP]] with 1 <= FIRST <= LAST <= %d",
				    JOB_MAX_TASKS);
				goto usage;
			}
			trange = argv[k];
		} else if (strchr(a, '.') && isdigit((unsigned char)a[0])) {
			/* ID.TASK[-LAST[:STEP]][,...]: only those tasks. */
			char *copy = xstrdup(a), *save = NULL;
			for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
				char *dot = strchr(w, '.'), key[32];
				struct task_range tr;
				int64_t id;
				if (dot)
					*dot = '\0';
				if (!client_parse_id(w, &id) || (dot && task_range_parse(dot + 1, &tr) < 0)) {
					client_errx("\"%s\" is not a job id or ID.TASK", a);
					free(copy);
					goto usage;
				}
				json_array_append_new(task_ids, json_integer(id));
				if (dot) {
					snprintf(key, sizeof key, "%lld", (long long)id);
					json_object_set_new(tasks, key, json_string(dot + 1));
				}
			}
			free(copy);
		} else if (is_delete && (strcmp(a, "-f") == 0 || strcmp(a, "--force") == 0)) {
			/* Deletion already kills what runs; for a cron entry it
			 * also deletes the job of its latest tick. */
			force = true;
		} else if (!is_delete && strcmp(a, "-h") == 0) {
			if (++k >= argc) {
				client_errx("option \"-h\" needs a hold type");
				goto usage;
			}
			if (strspn(argv[k], "uos") != strlen(argv[k]) || !*argv[k]) {
				client_errx("-h wants letters of u, o, s, not \"%s\"", argv[k]);
				goto usage;
			}
			if (strspn(argv[k], "u") != strlen(argv[k]))
				holds = argv[k];
		} else if (a[0] == '-' && a[1]) {
			client_errx(CLIENT_UNSUPPORTED, a);
			goto usage;
		} else if ((kept[njob] = take_cron_ids(a, crons)) != NULL)
			jobargs[njob] = kept[njob], njob++;
	}
	if (json_array_size(crons) > 0) {
		rc = cron_op(type, crons, force);
		if (njob == 0 && json_array_size(users) == 0)
			goto out;
	}
	if (njob == 0 && json_array_size(users) == 0 && json_array_size(task_ids) == 0) {
		client_errx("no job ids or users given");
		goto usage;
	}
	if (njob > 0 || json_array_size(task_ids) > 0) {
		ids = njob > 0 ? client_resolve_jobs(jobargs, njob, "pr", missing) : json_array();
		json_array_extend(ids, task_ids);
		/* qdel -t: those tasks of every job named without its own. */
		json_array_foreach(ids, i, r) {
			char key[32];
			snprintf(key, sizeof key, "%lld", (long long)json_integer_value(r));
			if (trange && !json_object_get(tasks, key))
				json_object_set_new(tasks, key, json_string(trange));
		}
		if (json_object_size(tasks) > 0)
			sel.tasks = tasks;
		/* GE's sentence for a job that is not there, as the master says it. */
		json_array_foreach(missing, i, r)
			printf("denied: job \"%s\" does not exist\n", json_string_value(r));
		if (json_array_size(ids) == 0) {
			json_decref(ids);
			rc = 1;
			goto out;
		}
		sel.jobs = ids;
	}
	if (json_array_size(users) > 0)
		sel.users = users;
	if (holds)
		rc |= job_op_holds(&sel, holds);
	else if (job_op_send(&sel) != 0)
		rc = 1;
	json_decref(sel.jobs);
	if (json_array_size(missing))
		rc = 1;
out:
	json_decref(users);
	json_decref(missing);
	json_decref(crons);
	strv_free(kept);
	json_decref(tasks);
	json_decref(task_ids);
	free(jobargs);
	return rc;
usage:
	client_usage(c, stderr);
	json_decref(users);
	json_decref(missing);
	json_decref(crons);
	strv_free(kept);
	json_decref(tasks);
	json_decref(task_ids);
	free(jobargs);
	return 1;
}
