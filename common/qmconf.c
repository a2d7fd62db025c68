/* qmconf.c: reads qmaster.conf with libconfuse, checking every setting against one table. */
#include "config.h"

#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <confuse.h>
#include <grp.h>
#include <pwd.h>

#include "common/common.h"

/* How a setting is stored in its structure. */
enum qk_type {
	QK_STR,    /* char * */
	QK_OPT,    /* char *, NULL when empty; an empty value is not checked */
	QK_LIST,   /* char **, NULL-terminated; check applies to each item */
	QK_BOOL,   /* bool */
	QK_INT,    /* int, lo to hi */
	QK_MS,     /* int64_t milliseconds, written as seconds from lo to hi */
	QK_SIZE,   /* size_t, lo to hi */
	QK_ENUM,   /* int: what check returns for the word */
	QK_TIME,   /* int64_t seconds ([[HH:]MM:]SS); empty: 0 */
	QK_BYTES,  /* int64_t bytes (4G); empty: 0 */
};

/* One setting: its key, type, default, bounds and field; check refuses a
 * word with -1 (for QK_ENUM it gives the value), and what names what the
 * word should be, for the message. */
struct qk {
	const char  *key;
	enum qk_type type;
	const char  *def;     /* default of the string types */
	long         num;     /* default of the numeric types and QK_BOOL */
	long         lo, hi;  /* bounds of the numeric types; hi LONG_MAX: none */
	size_t       off;
	int        (*check)(const char *);
	const char  *what;
	const char  *unit;    /* after the bounds: " seconds" */
};

static int
check_hostport(const char *v)
{
	char *host;
	int port;
	if (parse_hostport(v, &host, &port) < 0)
		return -1;
	free(host);
	return 0;
}

static int
check_auth(const char *v)
{
	return strcmp(v, "none") == 0 || strcmp(v, "munge") == 0 ? 0 : -1;
}

static int
check_absolute(const char *v)
{
	return v[0] == '/' ? 0 : -1;
}

static int
check_sun_path(const char *v)
{
	return strlen(v) < 108 ? 0 : -1;
}

static int
check_user(const char *v)
{
	return getpwnam(v) ? 0 : -1;
}

static int
check_mail(const char *v)
{
	return mail_valid_address(v) ? 0 : -1;
}

static int
check_query_thread(const char *v)
{
	return strcmp(v, "idle") == 0 ? QUERY_THREAD_IDLE : strcmp(v, "normal") == 0 ?
	    QUERY_THREAD_NORMAL : strcmp(v, "off") == 0 ? QUERY_THREAD_OFF : -1;
}

static int
check_time(const char *v)
{
	int64_t t;
	return parse_duration(v, &t);
}

static int
check_size(const char *v)
{
	int64_t t;
	return parse_size(v, &t);
}

#define QM(f) offsetof(struct qm_conf, f)
#define QQ(f) offsetof(struct qm_queue, f)

static const struct qk main_keys[] = {
	{ "spool_dir", QK_STR, "/var/spool/nowq/qmaster", 0, 0, 0, QM(spool_dir), NULL, NULL, NULL },
	{ "listen", QK_OPT, "0.0.0.0:7444", 0, 0, 0, QM(listen), check_hostport, "HOST:PORT", NULL },
	{ "unix_socket", QK_OPT, "/run/nowq/qmaster.sock", 0, 0, 0, QM(unix_socket), check_sun_path,
	  "a path shorter than 108 bytes", NULL },
	{ "http_listen", QK_OPT, "", 0, 0, 0, QM(http_listen), check_hostport, "HOST:PORT", NULL },
	{ "auth", QK_STR, "munge", 0, 0, 0, QM(auth), check_auth, "\"munge\" or \"none\"", NULL },
	{ "munge_socket", QK_OPT, "", 0, 0, 0, QM(munge_socket), check_absolute, "an absolute path", NULL },
	{ "managers", QK_LIST, "{root}", 0, 0, 0, QM(managers), NULL, NULL, NULL },
	{ "operators", QK_LIST, "{}", 0, 0, 0, QM(operators), NULL, NULL, NULL },
	{ "admin_user", QK_OPT, "", 0, 0, 0, QM(admin_user), check_user, "a user of this host", NULL },
	{ "allow_root_jobs", QK_BOOL, NULL, 0, 0, 0, QM(allow_root_jobs), NULL, NULL, NULL },
	{ "log_level", QK_ENUM, "info", 0, 0, 0, QM(log_level), log_level_parse,
	  "one of error, warning, info, debug", NULL },
	{ "log_file", QK_OPT, "", 0, 0, 0, QM(log_file), NULL, NULL, NULL },
	{ "pid_file", QK_OPT, "", 0, 0, 0, QM(pid_file), NULL, NULL, NULL },
	{ "finished_jobs_keep", QK_MS, NULL, 3600, 0, LONG_MAX / 1000, QM(finished_keep_ms), NULL, NULL,
	  " seconds" },
	{ "host_timeout", QK_MS, NULL, 30, 1, 86400, QM(host_timeout_ms), NULL, NULL, " seconds" },
	{ "client_timeout", QK_INT, NULL, 10, 1, 3600, QM(client_timeout), NULL, NULL, " seconds" },
	{ "show_all_jobs", QK_BOOL, NULL, 1, 0, 0, QM(show_all_jobs), NULL, NULL, NULL },
	{ "query_thread", QK_ENUM, "idle", 0, 0, 0, QM(query_thread), check_query_thread,
	  "\"idle\", \"normal\" or \"off\"", NULL },
	{ "query_listen", QK_BOOL, NULL, 1, 0, 0, QM(query_listen), NULL, NULL, NULL },
	{ "max_frame", QK_SIZE, NULL, PROTO_MAX_FRAME, 1, LONG_MAX, QM(max_frame), NULL, NULL, "" },
	{ "mailer", QK_STR, "/usr/sbin/sendmail -t -oi", 0, 0, 0, QM(mailer), check_absolute,
	  "an absolute path to a program and its options", NULL },
	{ "mail_max_running", QK_INT, NULL, 4, 1, 64, QM(mail_max_running), NULL, NULL, "" },
	{ "mail_timeout", QK_INT, NULL, 60, 1, 3600, QM(mail_timeout), NULL, NULL, " seconds" },
	{ "mail_retry", QK_INT, NULL, 30, 1, 3600, QM(mail_retry), NULL, NULL, " seconds" },
	{ "admin_mail", QK_LIST, "{}", 0, 0, 0, QM(admin_mail), check_mail, "a mail address", NULL },
	{ "masters", QK_LIST, "{}", 0, 0, 0, QM(masters), check_hostport, "HOST:PORT", NULL },
	{ "failover_timeout", QK_MS, NULL, 2, 1, 3600, QM(failover_timeout_ms), NULL, NULL, " seconds" },
	{ "stage_max_file", QK_BYTES, "4G", 0, 0, 0, QM(stage_max_file), check_size, "a size (e.g. 4G)", NULL },
	{ "stage_max_job", QK_BYTES, "16G", 0, 0, 0, QM(stage_max_job), check_size, "a size (e.g. 16G)", NULL },
	{ "stage_max_user", QK_BYTES, "64G", 0, 0, 0, QM(stage_max_user), check_size, "a size (e.g. 64G)", NULL },
	{ NULL, QK_STR, NULL, 0, 0, 0, 0, NULL, NULL, NULL }
};

/* A queue: queue "NAME" { ... }. */
static const struct qk queue_keys[] = {
	{ "priority", QK_INT, NULL, 0, INT_MIN, INT_MAX, QQ(priority), NULL, NULL, "" },
	{ "hosts", QK_STR, "@all", 0, 0, 0, QQ(hosts), NULL, NULL, NULL },
	{ "max_queued", QK_INT, NULL, 0, 0, 100000000, QQ(max_queued), NULL, NULL, " (0: no limit)" },
	{ "max_running", QK_INT, NULL, 0, 0, 100000000, QQ(max_running), NULL, NULL, " (0: no limit)" },
	{ "max_running_per_user", QK_INT, NULL, 0, 0, 100000000, QQ(max_running_per_user), NULL, NULL,
	  " (0: no limit)" },
	{ "default_h_rt", QK_TIME, "", 0, 0, 0, QQ(default_h_rt), check_time, "a time ([[HH:]MM:]SS)", NULL },
	{ "max_h_rt", QK_TIME, "", 0, 0, 0, QQ(max_h_rt), check_time, "a time ([[HH:]MM:]SS)", NULL },
	{ "default_h_vmem", QK_BYTES, "", 0, 0, 0, QQ(default_h_vmem), check_size, "a size (e.g. 4G)", NULL },
	{ "max_h_vmem", QK_BYTES, "", 0, 0, 0, QQ(max_h_vmem), check_size, "a size (e.g. 4G)", NULL },
	{ "users", QK_LIST, "{}", 0, 0, 0, QQ(users), NULL, NULL, NULL },
	{ "groups", QK_LIST, "{}", 0, 0, 0, QQ(groups), NULL, NULL, NULL },
	{ "rerun", QK_BOOL, NULL, 0, 0, 0, QQ(rerun), NULL, NULL, NULL },
	{ NULL, QK_STR, NULL, 0, 0, 0, 0, NULL, NULL, NULL }
};

/* One load: the file's name and where its first problem goes. */
struct qm_load {
	const char *path;
	char       *err;
	size_t      errlen;
};

/* libconfuse's context has no user pointer; loads run one at a time (the
 * loop's reload, the start, the client), so the current one is here. */
static struct qm_load *cur;

static void conf_error(cfg_t *, const char *, va_list) NOWQ_ATTR_PRINTF(2, 0);

/* Keeps the first problem, naming file and, when known, line. */
static void
conf_error(cfg_t *cfg, const char *fmt, va_list ap)
{
	char msg[512];

	if (!cur || cur->err[0])
		return;
	vsnprintf(msg, sizeof msg, fmt, ap);
	if (cfg && cfg->line)
		snprintf(cur->err, cur->errlen, "%s:%d: %s", cur->path, cfg->line, msg);
	else
		snprintf(cur->err, cur->errlen, "%s: %s", cur->path, msg);
}

static int conf_bad(cfg_t *cfg, const char *fmt, ...) NOWQ_ATTR_PRINTF(2, 3);

static int
conf_bad(cfg_t *cfg, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	conf_error(cfg, fmt, ap);
	va_end(ap);
	return -1;
}

static const struct qk *
qk_find(const struct qk *t, const char *key)
{
	for (; t->key; t++)
		if (strcmp(t->key, key) == 0)
			return t;
	return NULL;
}

/* One value of k as written, against its bounds or its check. */
static int
qk_check(cfg_t *cfg, const char *where, const struct qk *k, cfg_opt_t *opt)
{
	long v;

	switch (k->type) {
	case QK_BOOL:
		return 0;
	case QK_INT:
	case QK_MS:
	case QK_SIZE:
		v = cfg_opt_getnint(opt, 0);
		if (v >= k->lo && v <= k->hi)
			return 0;
		if (k->hi >= LONG_MAX / 1000)
			return conf_bad(cfg, "%s%s must be %s%s, not %ld", where, k->key,
			    k->lo > 0 ? "positive" : "0 or more", k->unit, v);
		return conf_bad(cfg, "%s%s must be %ld to %ld%s, not %ld", where, k->key, k->lo, k->hi,
		    k->unit, v);
	default:
		break;
	}
	if (!k->check)
		return 0;
	for (unsigned i = 0; i < cfg_opt_size(opt); i++) {
		const char *s = cfg_opt_getnstr(opt, i);
		if (k->type != QK_STR && k->type != QK_ENUM && k->type != QK_LIST && !*s)
			continue;
		if (k->check(s) < 0)
			return conf_bad(cfg, "%s%s \"%s\" is not %s", where, k->key, s, k->what);
	}
	return 0;
}

static int
validate_main(cfg_t *cfg, cfg_opt_t *opt)
{
	const struct qk *k = qk_find(main_keys, opt->name);
	return k ? qk_check(cfg, "", k, opt) : 0;
}

static int
validate_queue(cfg_t *cfg, cfg_opt_t *opt)
{
	const struct qk *k = qk_find(queue_keys, opt->name);
	char where[300];

	snprintf(where, sizeof where, "queue %s: ", cfg_title(cfg) ? cfg_title(cfg) : "");
	return k ? qk_check(cfg, where, k, opt) : 0;
}

static char **
strv_of(cfg_t *cfg, const char *key)
{
	unsigned n = cfg_size(cfg, key);
	char **v = xcalloc(n + 1, sizeof *v);
	for (unsigned i = 0; i < n; i++)
		v[i] = xstrdup(cfg_getnstr(cfg, key, i));
	return v;
}

/* Every setting of t from sec into base; each was checked as it was read. */
static void
qk_store(const struct qk *t, cfg_t *sec, void *base)
{
	for (; t->key; t++) {
		char *f = (char *)base + t->off;
		const char *s = t->type == QK_STR || t->type == QK_OPT || t->type == QK_ENUM ||
		    t->type == QK_TIME || t->type == QK_BYTES ? cfg_getstr(sec, t->key) : NULL;
		int64_t ms = (int64_t)cfg_getint(sec, t->key) * 1000;

		switch (t->type) {
		case QK_STR:
			*(char **)f = xstrdup(s ? s : "");
			break;
		case QK_OPT:
			*(char **)f = s && *s ? xstrdup(s) : NULL;
			break;
		case QK_LIST:
			*(char ***)f = strv_of(sec, t->key);
			break;
		case QK_BOOL:
			*(bool *)f = cfg_getbool(sec, t->key);
			break;
		case QK_INT:
			*(int *)f = (int)cfg_getint(sec, t->key);
			break;
		case QK_MS:
			memcpy(f, &ms, sizeof ms);
			break;
		case QK_SIZE:
			*(size_t *)f = (size_t)cfg_getint(sec, t->key);
			break;
		case QK_ENUM:
			*(int *)f = t->check(s);
			break;
		case QK_TIME:
			*(int64_t *)f = 0;
			if (s && *s)
				parse_duration(s, (int64_t *)f);
			break;
		case QK_BYTES:
			*(int64_t *)f = 0;
			if (s && *s)
				parse_size(s, (int64_t *)f);
			break;
		}
	}
}

/* The strings and lists of t in base. */
static void
qk_free(const struct qk *t, void *base)
{
	for (; t->key; t++) {
		char *f = (char *)base + t->off;
		if (t->type == QK_STR || t->type == QK_OPT)
			free(*(char **)f);
		else if (t->type == QK_LIST)
			strv_free(*(char ***)f);
	}
}

/* libconfuse's options of t, ending with sections (NULL: none) and CFG_END. */
static cfg_opt_t *
qk_opts(const struct qk *t, const cfg_opt_t *sections, size_t nsections)
{
	size_t n = 0;
	cfg_opt_t *o;

	while (t[n].key)
		n++;
	o = xcalloc(n + nsections + 1, sizeof *o);
	for (size_t i = 0; i < n; i++) {
		const struct qk *k = &t[i];
		switch (k->type) {
		case QK_LIST:
			o[i] = (cfg_opt_t)CFG_STR_LIST(k->key, (char *)k->def, CFGF_NONE);
			break;
		case QK_BOOL:
			o[i] = (cfg_opt_t)CFG_BOOL(k->key, k->num ? cfg_true : cfg_false, CFGF_NONE);
			break;
		case QK_INT:
		case QK_MS:
		case QK_SIZE:
			o[i] = (cfg_opt_t)CFG_INT(k->key, k->num, CFGF_NONE);
			break;
		default:
			o[i] = (cfg_opt_t)CFG_STR(k->key, k->def, CFGF_NONE);
			break;
		}
	}
	for (size_t i = 0; i < nsections; i++)
		o[n + i] = sections[i];
	o[n + nsections] = (cfg_opt_t)CFG_END();
	return o;
}

/* What the table cannot say of a queue: its name, hosts, groups, and
 * defaults at most their maxima. */
static int
conf_queue_read(cfg_t *q, struct qm_queue *qq)
{
	const char *name = cfg_title(q);
	char err[256];

	if (!name || !*name || strpbrk(name, " \t@/,"))
		return conf_bad(NULL, "queue name \"%s\" is empty or holds one of \" @/,\"", name ? name : "");
	qq->name = xstrdup(name);
	qk_store(queue_keys, q, qq);
	if ((qq->hosts_ns = nodeset_parse(qq->hosts, err, sizeof err)) == NULL)
		return conf_bad(NULL, "queue %s: hosts \"%s\": %s", name, qq->hosts, err);
	if ((qq->max_h_rt && qq->default_h_rt > qq->max_h_rt) ||
	    (qq->max_h_vmem && qq->default_h_vmem > qq->max_h_vmem))
		return conf_bad(NULL, "queue %s: a default is above its maximum", name);
	qq->gids = xcalloc(strv_len(qq->groups) + 1, sizeof *qq->gids);
	for (char **g = qq->groups; *g; g++) {
		struct group *gr = getgrnam(*g);
		if (!gr)
			return conf_bad(NULL, "queue %s: unknown group \"%s\"", name, *g);
		qq->gids[qq->ngids++] = gr->gr_gid;
	}
	return 0;
}

static int
conf_pe_read(cfg_t *p, struct qm_pe *pe)
{
	const char *name = cfg_title(p), *rule = cfg_getstr(p, "allocation_rule");
	long slots = cfg_getint(p, "slots");

	if (!name || !*name || strpbrk(name, " \t@/,"))
		return conf_bad(NULL, "pe name \"%s\" is empty or holds one of \" @/,\"", name ? name : "");
	pe->name = xstrdup(name);
	if (slots < 0 || slots > JOB_MAX_SLOTS)
		return conf_bad(NULL, "pe %s: slots must be 0 (no limit) to %d, not %ld", name, JOB_MAX_SLOTS,
		    slots);
	pe->slots = (int)slots;
	pe->control_slaves = cfg_getbool(p, "control_slaves");
	pe->job_is_first_task = cfg_getbool(p, "job_is_first_task");
	if ((pe->rule = pe_rule_parse(rule)) == 0)
		return conf_bad(NULL, "pe %s: allocation_rule \"%s\" is not $round_robin, $fill_up, $pe_slots "
		    "or a number of slots per host", name, rule ? rule : "");
	return 0;
}

/* masters = {"a:7444", "b:7444"}: this master is the entry that is its
 * listen address; the others are its peers. */
static int
conf_masters(struct qm_conf *c)
{
	c->nmasters = (int)strv_len(c->masters);
	c->self = -1;
	if (c->nmasters == 0) {
		strv_free(c->masters);
		c->masters = NULL;
		return 0;
	}
	if (c->nmasters > QM_MAX_MASTERS)
		return conf_bad(NULL, "masters lists %d masters; at most %d are supported", c->nmasters,
		    QM_MAX_MASTERS);
	for (int i = 0; i < c->nmasters; i++)
		if (c->listen && strcmp(c->masters[i], c->listen) == 0)
			c->self = i;
	if (c->self < 0)
		return conf_bad(NULL, "listen \"%s\" is not one of masters; each master must be listed "
		    "exactly as it listens", c->listen ? c->listen : "");
	return 0;
}

/* What one setting alone cannot say: the listeners together, and what a
 * setting's value names. */
static int
conf_settings(struct qm_conf *c)
{
	if (c->listen)
		parse_hostport(c->listen, &c->listen_host, &c->listen_port);
	if (c->http_listen)
		parse_hostport(c->http_listen, &c->http_host, &c->http_port);
	if (!c->listen && !c->unix_socket)
		return conf_bad(NULL, "neither listen nor unix_socket is set");
	/* The unix socket is local by nature; only TCP needs munge. */
	if (strcmp(c->auth, "none") == 0 && c->listen && !host_is_loopback(c->listen_host))
		return conf_bad(NULL, "auth = \"none\" is allowed only when every listener is on loopback, "
		    "not with listen = %s; use auth = \"munge\"", c->listen);
	if (c->admin_user) {
		struct passwd *pw = getpwnam(c->admin_user);
		if (!pw)
			return conf_bad(NULL, "admin_user \"%s\" is not a user of this host", c->admin_user);
		c->admin_uid = pw->pw_uid;
	}
	if (!c->pid_file)
		c->pid_file = xasprintf("%s/qmaster.pid", c->spool_dir);
	return conf_masters(c);
}

static cfg_t *
conf_parse(const char *path)
{
	static const struct qk *const tables[] = { main_keys, queue_keys };
	static cfg_opt_t pe_opts[] = {
		CFG_INT("slots", 0, CFGF_NONE),
		CFG_STR("allocation_rule", "$round_robin", CFGF_NONE),
		CFG_BOOL("control_slaves", cfg_false, CFGF_NONE),
		CFG_BOOL("job_is_first_task", cfg_true, CFGF_NONE),
		CFG_END()
	};
	cfg_opt_t *qopts = qk_opts(queue_keys, NULL, 0);
	cfg_opt_t secs[] = {
		CFG_SEC("queue", qopts, CFGF_MULTI | CFGF_TITLE | CFGF_NO_TITLE_DUPES),
		CFG_SEC("pe", pe_opts, CFGF_MULTI | CFGF_TITLE | CFGF_NO_TITLE_DUPES),
	};
	cfg_opt_t *opts = qk_opts(main_keys, secs, 2);
	cfg_t *cfg = cfg_init(opts, CFGF_NONE);
	int r;

	/* cfg_init keeps copies of the options. */
	free(opts);
	free(qopts);
	cfg_set_error_function(cfg, conf_error);
	for (size_t t = 0; t < 2; t++)
		for (const struct qk *k = tables[t]; k->key; k++) {
			char name[64];
			snprintf(name, sizeof name, "%s%s", t ? "queue|" : "", k->key);
			cfg_set_validate_func(cfg, name, t ? validate_queue : validate_main);
		}
	if ((r = cfg_parse(cfg, path)) == CFG_SUCCESS)
		return cfg;
	if (r == CFG_FILE_ERROR)
		conf_bad(NULL, "cannot read the configuration file");
	cfg_free(cfg);
	return NULL;
}

struct qm_conf *
qmconf_load(const char *path, char *err, size_t errlen)
{
	struct qm_load load = { path, err, errlen };
	struct qm_conf *c = NULL;
	cfg_t *cfg;
	unsigned n;

	assert(!cur);
	*err = '\0';
	cur = &load;
	if ((cfg = conf_parse(path)) == NULL)
		goto out;
	c = xcalloc(1, sizeof *c);
	c->path = xstrdup(path);
	qk_store(main_keys, cfg, c);
	if (conf_settings(c) < 0)
		goto bad;
	if ((n = cfg_size(cfg, "queue")) == 0) {
		conf_bad(NULL, "no queue is defined (define at least queue \"all.q\")");
		goto bad;
	}
	c->queues = xcalloc(n, sizeof *c->queues);
	for (unsigned i = 0; i < n; i++) {
		c->nqueues = (int)i + 1;
		if (conf_queue_read(cfg_getnsec(cfg, "queue", i), &c->queues[i]) < 0)
			goto bad;
	}
	n = cfg_size(cfg, "pe");
	c->pes = xcalloc(n + 1, sizeof *c->pes);
	for (unsigned i = 0; i < n; i++) {
		c->npes = (int)i + 1;
		if (conf_pe_read(cfg_getnsec(cfg, "pe", i), &c->pes[i]) < 0)
			goto bad;
	}
	goto out;
bad:
	qmconf_free(c);
	c = NULL;
out:
	if (cfg)
		cfg_free(cfg);
	if (!c && !*err)
		snprintf(err, errlen, "%s has errors", path);
	cur = NULL;
	return c;
}

void
qmconf_free(struct qm_conf *c)
{
	if (!c)
		return;
	qk_free(main_keys, c);
	free(c->path);
	free(c->listen_host);
	free(c->http_host);
	for (int i = 0; i < c->nqueues; i++) {
		qk_free(queue_keys, &c->queues[i]);
		free(c->queues[i].name);
		nodeset_free(c->queues[i].hosts_ns);
		free(c->queues[i].gids);
	}
	free(c->queues);
	for (int i = 0; i < c->npes; i++)
		free(c->pes[i].name);
	free(c->pes);
	free(c);
}

int
pe_rule_parse(const char *s)
{
	char *end;
	long v;

	if (!s)
		return 0;
	if (*s == '$')
		s++;
	if (strcmp(s, "round_robin") == 0)
		return PE_ROUND_ROBIN;
	if (strcmp(s, "fill_up") == 0)
		return PE_FILL_UP;
	if (strcmp(s, "pe_slots") == 0 || strcmp(s, "pack") == 0)
		return PE_PE_SLOTS;
	v = strtol(s, &end, 10);
	if (end == s || *end || v < 1 || v > JOB_MAX_SLOTS)
		return 0;
	return (int)v;
}
