/* qsub_opts.c: qsub's options, from the command line and "#$" lines, and the job they describe. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/common.h"
#include "common/msg_req.h"
#include "client/client.h"

enum qo_id {
	QO_N, QO_Q, QO_O, QO_E, QO_J, QO_CWD, QO_WD, QO_VV, QO_V, QO_H, QO_P,
	QO_TERSE, QO_SYNC, QO_S, QO_B, QO_C, QO_HELP, QO_L, QO_R, QO_PE, QO_NSLOTS,
	QO_T, QO_TC, QO_W, QO_HOLD_JID, QO_HOLD_JID_AD, QO_DEPEND, QO_A, QO_CRON, QO_MAIL, QO_MAIL_TO, QO_AR,
	QO_NOTIFY, QO_NOW, QO_PTY, QO_PREFIX, QO_NOSHELL,
	QO_HARD, QO_SOFT, QO_PROJECT, QO_ACCOUNT, QO_RESERVE, QO_BINDING, QO_SHELL,
	QO_AC, QO_DC, QO_SC, QO_JS, QO_STAGE_IN, QO_STAGE_OUT, QO_I,
};

/* Grid Engine's spelling of each option; arg says whether it takes one. */
static const struct qo_opt {
	const char *name;
	enum qo_id  id;
	bool        arg;
} qo_opts[] = {
	{ "-N", QO_N, true },       { "-q", QO_Q, true },     { "-o", QO_O, true },
	{ "-e", QO_E, true },       { "-i", QO_I, true },       { "-j", QO_J, true },     { "-cwd", QO_CWD, false },
	{ "-wd", QO_WD, true },     { "-V", QO_VV, false },   { "-v", QO_V, true },
	{ "-h", QO_H, false },      { "-p", QO_P, true },     { "-terse", QO_TERSE, false },
	{ "-sync", QO_SYNC, true }, { "-S", QO_S, true },     { "-b", QO_B, true },
	{ "-C", QO_C, true },       { "-help", QO_HELP, false },
	{ "--help", QO_HELP, false }, { "-l", QO_L, true },    { "-r", QO_R, true },
	{ "-pe", QO_PE, true },     { "-n", QO_NSLOTS, true }, { "-t", QO_T, true },
	{ "-tc", QO_TC, true },     { "-w", QO_W, true },     { "-hold_jid", QO_HOLD_JID, true },
	{ "-hold_jid_ad", QO_HOLD_JID_AD, true },
	{ "-W", QO_DEPEND, true },  { "-a", QO_A, true },     { "--cron", QO_CRON, true },
	{ "-m", QO_MAIL, true },    { "-M", QO_MAIL_TO, true },   { "-ar", QO_AR, true },
	{ "-notify", QO_NOTIFY, false },
	{ "-hard", QO_HARD, false }, { "-soft", QO_SOFT, false }, { "-P", QO_PROJECT, true },
	{ "-A", QO_ACCOUNT, true }, { "-R", QO_RESERVE, true },   { "-binding", QO_BINDING, true },
	{ "-shell", QO_SHELL, true }, { "-ac", QO_AC, true },     { "-dc", QO_DC, true },
	{ "-sc", QO_SC, true },     { "-js", QO_JS, true },
	{ "--stage-in", QO_STAGE_IN, true }, { "--stage-out", QO_STAGE_OUT, true },
	/* qrsh's own (o->qrsh): */
	{ "-now", QO_NOW, true },   { "-pty", QO_PTY, true },  { "-prefix", QO_PREFIX, false },
	{ "-noshell", QO_NOSHELL, false },
};

static int
qo_fail(struct qsub_opts *o, const char *fmt, ...) NOWQ_ATTR_PRINTF(2, 3);

static int
qo_fail(struct qsub_opts *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o->err, sizeof o->err, fmt, ap);
	va_end(ap);
	return -1;
}

void
qsub_opts_init(struct qsub_opts *o)
{
	memset(o, 0, sizeof *o);
	o->join = o->hold = o->sync = o->binary = o->rerun = o->now = o->pty = QO_UNSET;
	o->shell_yn = o->reserve = QO_UNSET;
}

void
qsub_opts_free(struct qsub_opts *o)
{
	free(o->name);
	free(o->queue);
	free(o->out_path);
	free(o->err_path);
	free(o->in_path);
	free(o->wd);
	strv_free(o->vars);
	free(o->shell);
	free(o->prefix);
	req_clear(&o->req);
	free(o->pe);
	strv_free(o->deps);
	free(o->cron);
	free(o->mail_to);
	strv_free(o->operands);
	req_clear(&o->soft);
	free(o->project);
	free(o->account);
	strv_free(o->context);
	free(o->binding);
	strv_free(o->stage_in);
	strv_free(o->stage_out);
	qsub_opts_init(o);
}

static void
set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v);
}

/* y[es] / n[o], as Grid Engine's boolean option arguments. */
static int
parse_yn(const char *s)
{
	if (strcasecmp(s, "y") == 0 || strcasecmp(s, "yes") == 0)
		return 1;
	if (strcasecmp(s, "n") == 0 || strcasecmp(s, "no") == 0)
		return 0;
	return -1;
}

/* -v NAME[=VALUE],...: each entry kept as given; a bare NAME takes its value
 * from the environment when the job is built. */
static int
parse_vars(struct qsub_opts *o, const char *list)
{
	const char *p = list;
	int added = 0;

	while (*p) {
		size_t n = strcspn(p, ",");
		if (n > 0) {
			char *e = strndup(p, n);
			if (!e)
				fatalx("out of memory");
			if (e[0] == '=') {
				free(e);
				return qo_fail(o, "-v: \"%.*s\" has no variable name", (int)n, p);
			}
			strv_push(&o->vars, e);
			added++;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	if (!added)
		return qo_fail(o, "-v needs a list of VARIABLE[=VALUE]");
	return 0;
}

/* A whole decimal number from lo to hi; -1 otherwise. */
static long
parse_count(const char *s, long lo, long hi)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	return v;
}

/* -t N or N-M[:S], as Grid Engine: task ids from 1, a step of 1 by default. */
static int
parse_tasks(struct qsub_opts *o, const char *v)
{
	struct task_range r;

	if (task_range_parse(v, &r) < 0)
		return qo_fail(o, "-t wants FIRST[-LAST[:STEP]] with 1 <= FIRST <= LAST <= %d, not \"%s\"",
		    JOB_MAX_TASKS, v);
	o->t_first = r.first;
	o->t_last = r.last;
	o->t_step = r.step;
	return 0;
}

/* -hold_jid ID|NAME|PATTERN[,...]: Grid Engine's, which waits for the
 * jobs' end whatever their exit status (afterany).  -hold_jid_ad: each
 * task waits for the same task of those arrays (kind "array"). */
static int
parse_hold_jid(struct qsub_opts *o, const char *opt, const char *kind, const char *list)
{
	char *copy = xstrdup(list), *tok, *save = NULL;
	int n = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		json_t *utf8 = json_string(tok);

		json_decref(utf8);
		if (strlen(tok) > 255 || !utf8) {
			/* tok points into copy: say it before freeing. */
			qo_fail(o, "%s: \"%.40s\" is not a job id or name", opt, tok);
			free(copy);
			return -1;
		}
		strv_push(&o->deps, xasprintf("%s:%s", kind, tok));
		n++;
	}
	free(copy);
	if (!n)
		return qo_fail(o, "%s needs a list of job ids or names", opt);
	return 0;
}

/* --stage-in and --stage-out: PATH[,PATH...] (doc/staging.md), each a
 * path that stays inside the submit or working directory; PBS's -W
 * stagein= and stageout= entries NAME@HOST:PATH mean the same when HOST
 * is this host and PATH is NAME. */
static int
parse_stage(struct qsub_opts *o, const char *opt, const char *list, bool out, bool pbs)
{
	char *copy = xstrdup(list), *tok, *save = NULL;
	const char *why = NULL;
	int n = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++) {
		char *at = pbs ? strchr(tok, '@') : NULL;
		if (at) {
			char *colon = strchr(at, ':');
			bool here;
			*at = '\0';
			if (colon)
				*colon = '\0';
			here = colon && (strcmp(at + 1, my_hostname()) == 0 ||
			    strcmp(at + 1, "localhost") == 0);
			if (colon)
				*colon = ':';
			if (!here || strcmp(colon + 1, tok) != 0) {
				qo_fail(o, "%s: nowq stages a file of the submit directory under its own "
				    "name: write NAME or NAME@%s:NAME, not \"%s@%s\"", opt, my_hostname(),
				    tok, at + 1);
				free(copy);
				return -1;
			}
		}
		if (out ? !stage_pattern_ok(tok, &why) : !stage_path_ok(tok, &why)) {
			qo_fail(o, "%s: \"%s\": %s", opt, tok, why);
			free(copy);
			return -1;
		}
		strv_push(out ? &o->stage_out : &o->stage_in, xstrdup(tok));
	}
	free(copy);
	if (!n)
		return qo_fail(o, "%s needs a list of paths", opt);
	return 0;
}

/* -W depend=KIND:ID[:ID...][,KIND:ID...], as PBS and Slurm write it; PBS's
 * -W stagein=LIST and stageout=LIST too. */
static int
parse_depend(struct qsub_opts *o, const char *v)
{
	static const char *const kinds[] = { "after", "afterok", "afternotok", "afterany", NULL };
	char *copy, *group, *gsave = NULL;
	int n = 0;

	if (strncmp(v, "stagein=", 8) == 0)
		return parse_stage(o, "-W stagein", v + 8, false, true);
	if (strncmp(v, "stageout=", 9) == 0)
		return parse_stage(o, "-W stageout", v + 9, true, true);
	if (strncmp(v, "depend=", 7) != 0)
		return qo_fail(o, "-W: only depend=, stagein= and stageout= are supported, not \"%s\"", v);
	copy = xstrdup(v + 7);
	for (group = strtok_r(copy, ",", &gsave); group; group = strtok_r(NULL, ",", &gsave)) {
		char *colon = strchr(group, ':'), *id, *isave = NULL;
		int k;

		if (colon)
			*colon = '\0';
		for (k = 0; kinds[k] && strcmp(kinds[k], group) != 0; k++)
			;
		if (!kinds[k] || !colon || !colon[1]) {
			qo_fail(o, "-W depend: \"%s\" is not KIND:ID with KIND after, afterok, "
			    "afternotok or afterany", group);
			free(copy);
			return -1;
		}
		for (id = strtok_r(colon + 1, ":", &isave); id; id = strtok_r(NULL, ":", &isave)) {
			if (strspn(id, "0123456789") != strlen(id) || strlen(id) > 18) {
				qo_fail(o, "-W depend: \"%s\" is not a job id", id);
				free(copy);
				return -1;
			}
			strv_push(&o->deps, xasprintf("%s:%s", kinds[k], id));
			n++;
		}
	}
	free(copy);
	if (!n)
		return qo_fail(o, "-W depend needs KIND:ID");
	return 0;
}

static int
two_digits(const char *s)
{
	return (s[0] - '0') * 10 + (s[1] - '0');
}

int
qsub_parse_date(const char *s, time_t now, int64_t *ms)
{
	struct tm tm, want;
	size_t n = strcspn(s, ".");
	const char *p = s;
	time_t t;

	if (strspn(s, "0123456789") != n || (n != 8 && n != 10 && n != 12))
		return -1;
	if (s[n] == '.' && (strlen(s + n + 1) != 2 || strspn(s + n + 1, "0123456789") != 2))
		return -1;
	if (!localtime_r(&now, &tm))
		return -1;
	memset(&want, 0, sizeof want);
	want.tm_year = tm.tm_year;
	if (n == 12) {
		want.tm_year = two_digits(p) * 100 + two_digits(p + 2) - 1900;
		p += 4;
	} else if (n == 10) {
		/* As touch(1): 69-99 are 19YY, 00-68 are 20YY. */
		int yy = two_digits(p);
		want.tm_year = (yy >= 69 ? 1900 + yy : 2000 + yy) - 1900;
		p += 2;
	}
	want.tm_mon = two_digits(p) - 1;
	want.tm_mday = two_digits(p + 2);
	want.tm_hour = two_digits(p + 4);
	want.tm_min = two_digits(p + 6);
	want.tm_sec = s[n] == '.' ? two_digits(s + n + 1) : 0;
	want.tm_isdst = -1;
	tm = want;
	if ((t = mktime(&tm)) == (time_t)-1)
		return -1;
	/* mktime moves impossible dates along (February 30th becomes March
	 * 2nd); those are refused.  An hour skipped by daylight saving moves
	 * forward and is kept, as cron does. */
	if (tm.tm_year != want.tm_year || tm.tm_mon != want.tm_mon || tm.tm_mday != want.tm_mday ||
	    want.tm_sec > 59 || want.tm_min > 59 || want.tm_hour > 23)
		return -1;
	*ms = (int64_t)t * 1000;
	return 0;
}

json_t *
qsub_deps_json(const struct qsub_opts *o)
{
	json_t *a;

	if (!o->deps)
		return NULL;
	a = json_array();
	for (size_t i = 0; o->deps[i]; i++) {
		const char *colon = strchr(o->deps[i], ':');
		char *kind;

		assert(colon);
		kind = strndup(o->deps[i], (size_t)(colon - o->deps[i]));
		if (!kind)
			fatalx("out of memory");
		/* A name that is not UTF-8 cannot travel; the master would not
		 * find it anyway. */
		msg_dep_add(a, &(struct msg_dep){ kind, colon + 1 });
		free(kind);
	}
	return a;
}

/* -q QUEUE@EXPR (or *@EXPR, @EXPR): the queue, and hosts= narrowed to the
 * node-set expression, as Grid Engine's queue@host. */
static int
opt_queue(struct qsub_opts *o, const char *v)
{
	const char *at = strchr(v, '@');

	if (!*v)
		return qo_fail(o, "-q needs a queue name");
	if (at && !at[1])
		return qo_fail(o, "-q QUEUE@HOSTS needs a node-set expression after the @");
	set_str(&o->req.hard_queue, v);
	if (at) {
		char *h = o->req.hosts ? xasprintf("(%s) & (%s)", o->req.hosts, at + 1) :
		    xstrdup(at + 1);
		free(o->req.hosts);
		o->req.hosts = h;
		if (at == v || (at == v + 1 && *v == '*')) {
			free(o->queue);
			o->queue = NULL;
		} else {
			free(o->queue);
			o->queue = xasprintf("%.*s", (int)(at - v), v);
		}
	} else
		set_str(&o->queue, v);
	return 0;
}

/* -j, -sync, -b, -now and -pty: y or n. */
static int
opt_yes_no(struct qsub_opts *o, const struct qo_opt *d, const char *v)
{
	int yn = parse_yn(v);

	if (yn < 0)
		return qo_fail(o, "%s wants y or n, not \"%s\"", d->name, v);
	if (d->id == QO_NOW)
		o->now = yn;
	else if (d->id == QO_PTY)
		o->pty = yn;
	else if (d->id == QO_J)
		o->join = yn;
	else if (d->id == QO_SYNC)
		o->sync = yn;
	else
		o->binary = yn;
	return 0;
}

/* -M: a comma-separated list of mail addresses. */
static int
opt_mail_to(struct qsub_opts *o, const char *v)
{
	char *copy = xstrdup(v), *tok, *save = NULL;
	int n = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++)
		if (!mail_valid_address(tok)) {
			qo_fail(o, "-M: \"%s\" is not a mail address", tok);
			free(copy);
			return -1;
		}
	free(copy);
	if (!n || strstr(v, ",,") || v[strlen(v) - 1] == ',')
		return qo_fail(o, "-M needs a list of mail addresses");
	set_str(&o->mail_to, v);
	return 0;
}

/* --cron: a schedule cron_parse takes. */
static int
opt_cron(struct qsub_opts *o, const char *v)
{
	struct cron_sched cs;
	char err[256];

	if (cron_parse(v, &cs, err, sizeof err) < 0)
		return qo_fail(o, "--cron: %s", err);
	set_str(&o->cron, v);
	return 0;
}

/* -P and -A: a name of 1 to JOB_MAX_NAME printable bytes. */
static int
opt_label(struct qsub_opts *o, const struct qo_opt *d, char **dst, const char *v)
{
	if (!*v || strlen(v) > JOB_MAX_NAME)
		return qo_fail(o, "%s needs a name of 1 to %d bytes", d->name, JOB_MAX_NAME);
	for (const char *c = v; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return qo_fail(o, "%s: \"%.40s\" holds a control character", d->name, v);
	set_str(dst, v);
	return 0;
}

/* Grid Engine's options that are kept and shown but change nothing in how
 * nowq runs the job: -P, -A, -R, -shell, -js, -ac, -dc, -sc. */
static int
opt_recorded(struct qsub_opts *o, const struct qo_opt *d, const char *v)
{
	const char *why;
	long n;
	int yn;

	switch (d->id) {
	case QO_PROJECT:
		return opt_label(o, d, &o->project, v);
	case QO_ACCOUNT:
		return opt_label(o, d, &o->account, v);
	case QO_RESERVE:
	case QO_SHELL:
		if ((yn = parse_yn(v)) < 0)
			return qo_fail(o, "%s wants y or n, not \"%s\"", d->name, v);
		*(d->id == QO_RESERVE ? &o->reserve : &o->shell_yn) = yn;
		return 0;
	case QO_JS:
		if ((n = parse_count(v, 0, INT32_MAX)) < 0)
			return qo_fail(o, "-js wants a job share of 0 or more, not \"%s\"", v);
		o->js = (int)n;
		return 0;
	default:
		if (job_context_apply(&o->context, d->name[1], v, &why) < 0)
			return qo_fail(o, "%s", why);
		return 0;
	}
}

/* -binding [env|pe|set] STRATEGY: kept as "TYPE STRATEGY" (set when no type
 * is given), as qstat -j shows it; nowq binds no job to cores.  Returns the
 * number of words used, -1 on error. */
static int
opt_binding(struct qsub_opts *o, int argc, char *const *argv, int i)
{
	const char *type = "set", *strategy;
	int used = 1;

	if (i + 1 >= argc)
		return qo_fail(o, "-binding needs a strategy such as linear:1");
	strategy = argv[i + 1];
	if (strcmp(strategy, "env") == 0 || strcmp(strategy, "pe") == 0 || strcmp(strategy, "set") == 0) {
		if (i + 2 >= argc)
			return qo_fail(o, "-binding %s needs a strategy such as linear:1", strategy);
		type = strategy;
		strategy = argv[i + 2];
		used = 2;
	}
	if (strncmp(strategy, "linear:", 7) && strncmp(strategy, "striding:", 9) &&
	    strncmp(strategy, "explicit:", 9))
		return qo_fail(o, "-binding wants linear:N, striding:N:STEP or explicit:S,C..., not \"%s\"",
		    strategy);
	if (strlen(strategy) > JOB_MAX_NAME - 4)
		return qo_fail(o, "-binding: \"%.40s...\" is too long", strategy);
	free(o->binding);
	o->binding = xasprintf("%s %s", type, strategy);
	return used;
}

/* One option with its argument (NULL for flags) applied to o. */
static int
apply_opt(struct qsub_opts *o, const struct qo_opt *d, const char *v)
{
	char *end;
	long p;
	int yn;

	switch (d->id) {
	case QO_N:
		if (!job_valid_name(v))
			return qo_fail(o, "-N: the job name \"%.60s\" cannot be used: %s", v, job_name_problem(v));
		set_str(&o->name, v);
		break;
	case QO_Q:
		return opt_queue(o, v);
	case QO_AR:
		if (!*v || strlen(v) > 255)
			return qo_fail(o, "-ar needs a reservation name");
		free(o->req.ar);
		o->req.ar = xstrdup(v);
		break;
	case QO_O:
	case QO_E:
	case QO_I:
		if (!*v)
			return qo_fail(o, "%s needs a path", d->name);
		set_str(d->id == QO_O ? &o->out_path : d->id == QO_E ? &o->err_path : &o->in_path, v);
		break;
	case QO_WD:
		if (!*v)
			return qo_fail(o, "-wd needs a directory");
		set_str(&o->wd, v);
		o->use_cwd = false;
		break;
	case QO_CWD:
		free(o->wd);
		o->wd = NULL;
		o->use_cwd = true;
		break;
	case QO_VV:
		o->export_all = true;
		break;
	case QO_V:
		return parse_vars(o, v);
	case QO_H:
		o->hold = 1;
		break;
	case QO_P:
		errno = 0;
		p = strtol(v, &end, 10);
		if (errno || end == v || *end || p < -1023 || p > 1024)
			return qo_fail(o, "-p wants an integer from -1023 to 1024, not \"%s\"", v);
		o->prio = (int)p;
		o->prio_set = true;
		break;
	case QO_TERSE:
		o->terse = true;
		break;
	case QO_NOTIFY:
		/* Nextflow puts -notify in every job it submits; refusing it
		 * would refuse Nextflow.  The job just gets no warning signal
		 * before it is stopped or killed, as qsub(1) says. */
		break;
	case QO_PREFIX:
		o->prefix_rank = true;
		break;
	case QO_NOSHELL:
		/* qrsh's: the command is executed itself, not by a shell. */
		o->shell_yn = 0;
		break;
	case QO_J:
	case QO_SYNC:
	case QO_B:
	case QO_NOW:
	case QO_PTY:
		return opt_yes_no(o, d, v);
	case QO_S:
		if (!*v)
			return qo_fail(o, "-S needs a shell");
		set_str(&o->shell, v);
		break;
	case QO_C:
		set_str(&o->prefix, v);
		break;
	case QO_HELP:
		o->help = true;
		break;
	case QO_L:
		return req_parse(o->soft_mode ? &o->soft : &o->req, v, o->err, sizeof o->err);
	case QO_HARD:
	case QO_SOFT:
		o->soft_mode = d->id == QO_SOFT;
		break;
	case QO_PROJECT:
	case QO_ACCOUNT:
	case QO_RESERVE:
	case QO_SHELL:
	case QO_JS:
	case QO_AC:
	case QO_DC:
	case QO_SC:
		return opt_recorded(o, d, v);
	case QO_R:
		if ((yn = parse_yn(v)) < 0)
			return qo_fail(o, "-r wants y or n, not \"%s\"", v);
		o->rerun = yn;
		break;
	case QO_NSLOTS:
		if ((p = parse_count(v, 1, JOB_MAX_SLOTS)) < 0)
			return qo_fail(o, "-n wants a number of slots from 1 to %d, not \"%s\"",
			    JOB_MAX_SLOTS, v);
		o->slots = (int)p;
		break;
	case QO_T:
		return parse_tasks(o, v);
	case QO_TC:
		if ((p = parse_count(v, 1, JOB_MAX_TASKS)) < 0)
			return qo_fail(o, "-tc wants a number of tasks from 1, not \"%s\"", v);
		o->tc = (int)p;
		break;
	case QO_W:
		if (strlen(v) != 1 || !strchr("ewnvp", v[0]))
			return qo_fail(o, "-w wants e, w, n, v or p, not \"%s\"", v);
		o->verify = v[0];
		break;
	case QO_HOLD_JID:
		return parse_hold_jid(o, "-hold_jid", "afterany", v);
	case QO_HOLD_JID_AD:
		return parse_hold_jid(o, "-hold_jid_ad", "array", v);
	case QO_DEPEND:
		return parse_depend(o, v);
	case QO_MAIL:
		if (mail_flags_parse(v, &o->mail) < 0)
			return qo_fail(o, "-m wants letters from b, e, a, s, or n alone, not \"%s\"", v);
		break;
	case QO_MAIL_TO:
		return opt_mail_to(o, v);
	case QO_CRON:
		return opt_cron(o, v);
	case QO_STAGE_IN:
		return parse_stage(o, "--stage-in", v, false, false);
	case QO_STAGE_OUT:
		return parse_stage(o, "--stage-out", v, true, false);
	case QO_A:
		if (qsub_parse_date(v, time(NULL), &o->begin_time) < 0)
			return qo_fail(o, "-a wants a date as [[CC]YY]MMDDhhmm[.SS], not \"%s\"", v);
		break;
	case QO_PE:
	case QO_BINDING:
		/* Handled in parse_words: they take two arguments. */
		assert(0);
	}
	return 0;
}

/* -pe NAME N, or NAME MIN-MAX: the job gets as many slots of the range as
 * can start at once, as in Grid Engine, which also takes a range written
 * backwards (4-2) the right way round. */
static int
apply_pe(struct qsub_opts *o, const char *name, const char *n)
{
	const char *dash = strchr(n, '-');
	long a, b;

	if (!*name || strlen(name) > 64 || !req_valid_key(name))
		return qo_fail(o, "-pe: \"%s\" is not a parallel environment name", name);
	if (dash) {
		char *first = strndup(n, (size_t)(dash - n));
		if (!first)
			fatalx("out of memory");
		a = parse_count(first, 1, JOB_MAX_SLOTS);
		free(first);
		b = parse_count(dash + 1, 1, JOB_MAX_SLOTS);
		if (b < 0)
			a = -1;
	} else
		a = b = parse_count(n, 1, JOB_MAX_SLOTS);
	if (a < 0)
		return qo_fail(o, "-pe %s wants a number of slots from 1 to %d, or a range MIN-MAX of them, "
		    "not \"%s\"", name, JOB_MAX_SLOTS, n);
	set_str(&o->pe, name);
	o->slots = (int)(a > b ? a : b);
	o->slots_min = a == b ? 0 : (int)(a < b ? a : b);
	return 0;
}

static const struct qo_opt *
find_opt(const char *a)
{
	for (size_t i = 0; i < sizeof qo_opts / sizeof qo_opts[0]; i++)
		if (strcmp(qo_opts[i].name, a) == 0)
			return &qo_opts[i];
	return NULL;
}

/* in_script: directives may not carry operands; -b and -C there are ignored
 * (Grid Engine decides both before it reads the script). */
static int
parse_words(struct qsub_opts *o, int argc, char *const *argv, bool in_script)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const struct qo_opt *d;
		const char *v = NULL;

		if (a[0] != '-' || a[1] == '\0') {
			if (in_script)
				return qo_fail(o, "unexpected argument \"%s\" in a directive", a);
			strv_free(o->operands);
			o->operands = strv_dup((char **)(argv + i));
			return 0;
		}
		if ((d = find_opt(a)) != NULL && !o->qrsh &&
		    (d->id == QO_NOW || d->id == QO_PTY || d->id == QO_PREFIX || d->id == QO_NOSHELL))
			d = NULL;   /* qrsh's options: qsub has no session to give them meaning */
		if (d == NULL)
			return qo_fail(o, CLIENT_UNSUPPORTED, a);
		if (d->id == QO_BINDING) {
			int used = opt_binding(o, argc, argv, i);
			if (used < 0)
				return -1;
			i += used;
			continue;
		}
		if (d->id == QO_PE) {
			if (i + 2 >= argc)
				return qo_fail(o, "-pe needs a name and a number of slots");
			if (apply_pe(o, argv[i + 1], argv[i + 2]) < 0)
				return -1;
			i += 2;
			continue;
		}
		if (d->arg) {
			if (i + 1 >= argc)
				return qo_fail(o, "option \"%s\" needs an argument", a);
			v = argv[++i];
		}
		if (in_script && (d->id == QO_B || d->id == QO_C))
			continue;
		if (apply_opt(o, d, v) < 0)
			return -1;
	}
	return 0;
}

int
qsub_opts_parse_argv(struct qsub_opts *o, int argc, char *const *argv)
{
	return parse_words(o, argc, argv, false);
}

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

char **
qsub_split_words(const char *s)
{
	char **v = xcalloc(1, sizeof *v);
	char *w = xmalloc(strlen(s) + 1);

	for (;;) {
		size_t n = 0;
		bool comment = false;

		while (is_blank(*s))
			s++;
		if (!*s || *s == '#')
			break;
		while (*s && !is_blank(*s)) {
			if (*s == '"' || *s == '\'') {
				char q = *s++;
				while (*s && *s != q)
					w[n++] = *s++;
				if (*s)
					s++;
			} else if (*s == '#') {
				comment = true;
				break;
			} else
				w[n++] = *s++;
		}
		w[n] = '\0';
		strv_push(&v, xstrdup(w));
		if (comment)
			break;
	}
	free(w);
	return v;
}

int
qsub_opts_parse_script(struct qsub_opts *o, const char *script, const char *prefix)
{
	size_t plen = prefix ? strlen(prefix) : 0;
	const char *line = script;
	int lineno = 0;

	/* An empty prefix (-C "") turns directives off. */
	if (plen == 0)
		return 0;
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		lineno++;
		if (len >= plen && strncmp(line, prefix, plen) == 0) {
			char *text = strndup(line + plen, len - plen);
			char **words;
			int rc;

			if (!text)
				fatalx("out of memory");
			words = qsub_split_words(text);
			free(text);
			rc = parse_words(o, (int)strv_len(words), words, true);
			strv_free(words);
			if (rc < 0) {
				char why[sizeof o->err];
				memcpy(why, o->err, sizeof why);
				return qo_fail(o, "script line %d: %s", lineno, why);
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return 0;
}

static const char *
env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

/* Adds or replaces NAME=VALUE; the entry is taken over. */
static void
env_put(char ***v, char *entry)
{
	size_t n = strcspn(entry, "=");
	for (char **p = *v; p && *p; p++)
		if (strncmp(*p, entry, n) == 0 && (*p)[n] == '=') {
			free(*p);
			*p = entry;
			return;
		}
	strv_push(v, entry);
}

static void
env_put_from(char ***v, const char *name, const char *value)
{
	if (value)
		env_put(v, xasprintf("%s=%s", name, value));
}

/* The environment a job gets: -V's whole environment, then -v, then SGE_O_*;
 * a later entry replaces an earlier one of the same name.  NULL-terminated. */
static char **
qsub_job_env(const struct qsub_opts *o, const struct qsub_env *e)
{
	char **v = xcalloc(1, sizeof *v);

	if (o->export_all)
		for (char *const *p = e->envp; p && *p; p++)
			if ((*p)[0] != '=' && strchr(*p, '='))
				env_put(&v, xstrdup(*p));
	for (char **p = o->vars; p && *p; p++) {
		if (strchr(*p, '='))
			env_put(&v, xstrdup(*p));
		else {
			const char *val = env_get(e->envp, *p);
			env_put(&v, xasprintf("%s=%s", *p, val ? val : ""));
		}
	}
	/* Grid Engine's record of where the job came from, always sent. */
	env_put_from(&v, "SGE_O_HOME", env_get(e->envp, "HOME"));
	env_put_from(&v, "SGE_O_LOGNAME", e->user);
	env_put_from(&v, "SGE_O_PATH", env_get(e->envp, "PATH"));
	env_put_from(&v, "SGE_O_SHELL", env_get(e->envp, "SHELL"));
	env_put_from(&v, "SGE_O_MAIL", env_get(e->envp, "MAIL"));
	env_put_from(&v, "SGE_O_TZ", env_get(e->envp, "TZ"));
	env_put_from(&v, "SGE_O_HOST", e->host);
	env_put_from(&v, "SGE_O_WORKDIR", e->cwd);
	return v;
}

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

char *
qsub_default_name(const struct qsub_opts *o)
{
	const char *first = o->operands ? o->operands[0] : NULL;
	char *name, *word;

	if (!first || (o->binary != 1 && strcmp(first, "-") == 0))
		return xstrdup("STDIN");
	/* qrsh's command is a shell's line, named as Grid Engine names it:
	 * after its first word.  A file may be called anything; its job gets
	 * a name that passes job_valid_name: what a name may not hold
	 * becomes "_", and a long one is cut. */
	word = xstrndup(first, o->qrsh ? strcspn(first, " \t\n") : strlen(first));
	name = xstrdup(base_name(word));
	free(word);
	if (strlen(name) > JOB_MAX_NAME)
		name[JOB_MAX_NAME] = '\0';
	for (char *c = name; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f || strchr("/:@\\*?", *c))
			*c = '_';
	return name;
}

/* json_string refuses text that is not UTF-8, which the wire cannot carry. */
static int
add_str(json_t *o, const char *key, const char *v)
{
	json_t *s;
	if (!v)
		return 0;
	if ((s = json_string(v)) == NULL)
		return -1;
	json_object_set_new(o, key, s);
	return 0;
}

/* -soft -l, -P, -A, -ac..., -R, -js, -binding, -shell n into the job. */
static int
qsub_recorded_json(const struct qsub_opts *o, json_t *job)
{
	const char *bad;
	json_t *a;

	if (!req_empty(&o->soft))
		json_object_set_new(job, "soft", req_to_json(&o->soft));
	if (add_str(job, "project", o->project) < 0 || add_str(job, "account", o->account) < 0 ||
	    add_str(job, "binding", o->binding) < 0)
		return -1;
	if (o->context) {
		if ((a = strv_json(o->context, false, &bad)) == NULL)
			return -1;
		json_object_set_new(job, "context", a);
	}
	if (o->reserve == 1)
		json_object_set_new(job, "reserve", json_true());
	if (o->js)
		json_object_set_new(job, "js", json_integer(o->js));
	if (o->shell_yn == 0)
		json_object_set_new(job, "noshell", json_true());
	if (o->stage_out) {
		if ((a = strv_json(o->stage_out, false, &bad)) == NULL)
			return -1;
		json_object_set_new(job, "stage_out", a);
	}
	return 0;
}

json_t *
qsub_job_json(const struct qsub_opts *o, const char *script, const struct qsub_env *e,
    char *err, size_t errlen)
{
	json_t *job = json_object(), *a;
	char *name = o->name ? xstrdup(o->name) : qsub_default_name(o);
	char *cwd = NULL, **env = NULL;
	const char *bad = NULL;
	int slots = o->slots;

	/* -l slots=N is the job's slot count, on one host; -pe and -n say
	 * how many slots and where in their own way. */
	if (o->req.slots) {
		if (o->pe || (o->slots && o->slots != o->req.slots)) {
			snprintf(err, errlen, "-l slots=%d asks for %d slots on one host; give it or %s, not both",
			    o->req.slots, o->req.slots, o->pe ? "-pe" : "-n");
			goto fail;
		}
		slots = o->req.slots;
	}
	if (o->binary == 1) {
		if (!o->operands || !o->operands[0]) {
			snprintf(err, errlen, "-b y needs a command");
			goto fail;
		}
		if ((a = strv_json(o->operands, false, &bad)) == NULL) {
			snprintf(err, errlen, "the command argument \"%s\" is not UTF-8 text", bad);
			goto fail;
		}
		json_object_set_new(job, "argv", a);
	} else {
		if (!script) {
			snprintf(err, errlen, "no script to submit");
			goto fail;
		}
		if (add_str(job, "script", script) < 0) {
			snprintf(err, errlen, "the script is not UTF-8 text");
			goto fail;
		}
		if (o->operands && o->operands[0] && o->operands[1]) {
			if ((a = strv_json(o->operands + 1, false, &bad)) == NULL) {
				snprintf(err, errlen, "the script argument \"%s\" is not UTF-8 text", bad);
				goto fail;
			}
			json_object_set_new(job, "args", a);
		}
	}
	if (o->use_cwd)
		cwd = xstrdup(e->cwd);
	else if (o->wd)
		cwd = o->wd[0] == '/' ? xstrdup(o->wd) : xasprintf("%s/%s", e->cwd, o->wd);
	if (add_str(job, "name", name) < 0 ||
	    add_str(job, "queue", o->queue ? o->queue : o->req.qname) < 0 ||
	    add_str(job, "out", o->out_path) < 0 || add_str(job, "err", o->err_path) < 0 ||
	    add_str(job, "in", o->in_path) < 0 ||
	    add_str(job, "shell", o->shell) < 0 || add_str(job, "cwd", cwd) < 0 ||
	    add_str(job, "submit_host", e->host) < 0) {
		snprintf(err, errlen, "an option's argument is not UTF-8 text");
		goto fail;
	}
	if (o->join == 1)
		json_object_set_new(job, "join", json_true());
	if (o->prio_set)
		json_object_set_new(job, "prio", json_integer(o->prio));
	if (o->hold == 1)
		json_object_set_new(job, "hold", json_integer(HOLD_USER));
	if (!req_empty(&o->req))
		json_object_set_new(job, "req", req_to_json(&o->req));
	if (qsub_recorded_json(o, job) < 0) {
		snprintf(err, errlen, "an option's argument is not UTF-8 text");
		goto fail;
	}
	if (o->begin_time)
		json_object_set_new(job, "begin_time", json_integer(o->begin_time));
	if (o->mail)
		json_object_set_new(job, "mail", json_integer(o->mail));
	if (o->mail_to)
		json_object_set_new(job, "mail_to", json_string(o->mail_to));
	if (o->rerun != QO_UNSET)
		json_object_set_new(job, "rerun", json_integer(o->rerun));
	if (o->pe && add_str(job, "pe", o->pe) < 0) {
		snprintf(err, errlen, "the parallel environment name is not UTF-8 text");
		goto fail;
	}
	if (slots)
		json_object_set_new(job, "slots", json_integer(slots));
	if (o->slots_min)
		json_object_set_new(job, "slots_min", json_integer(o->slots_min));
	if (o->t_first) {
		json_object_set_new(job, "t_first", json_integer(o->t_first));
		json_object_set_new(job, "t_last", json_integer(o->t_last));
		json_object_set_new(job, "t_step", json_integer(o->t_step));
	}
	if (o->tc) {
		if (!o->t_first) {
			snprintf(err, errlen, "-tc applies only to an array job (-t)");
			goto fail;
		}
		json_object_set_new(job, "tc", json_integer(o->tc));
	}
	env = qsub_job_env(o, e);
	/* -V may sweep up a variable that is not UTF-8; it cannot travel, so it
	 * stays behind rather than failing the whole submission. */
	json_object_set_new(job, "env", strv_json(env, true, &bad));
	/* The master's own checks, here, so a job over a limit is refused
	 * with the same sentence before anything is sent. */
	{
		const char *why = NULL;
		struct job *j = job_from_json(job, &why);
		if (!j) {
			snprintf(err, errlen, "%s", why);
			goto fail;
		}
		job_free(j);
	}
	if (job_deps_problem(strv_len(o->deps))) {
		snprintf(err, errlen, "%s", job_deps_problem(strv_len(o->deps)));
		goto fail;
	}
	strv_free(env);
	free(cwd);
	free(name);
	return job;
fail:
	strv_free(env);
	free(cwd);
	free(name);
	json_decref(job);
	return NULL;
}
