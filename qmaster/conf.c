/* conf.c: reads qmaster.conf with libconfuse and checks every value before the master uses it. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <confuse.h>
#include <pthread.h>
#include <grp.h>
#include <pwd.h>

#include "qmaster/qmaster.h"

/* Held for writing by the loop while it swaps conf, for reading by the
 * query thread while it reads conf; the loop itself reads without it. */
static pthread_rwlock_t conf_lock = PTHREAD_RWLOCK_INITIALIZER;

void
conf_read_begin(void)
{
	pthread_rwlock_rdlock(&conf_lock);
}

void
conf_read_end(void)
{
	pthread_rwlock_unlock(&conf_lock);
}

static const char *conf_file;
/* While qconf -reload reads the file, the first problem goes to its reply
 * instead of standard error. */
static char  *conf_errbuf;
static size_t conf_errlen;

static void conf_say(const char *fmt, ...) NOWQ_ATTR_PRINTF(1, 2);

static void
conf_say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (conf_errbuf) {
		if (!*conf_errbuf)
			vsnprintf(conf_errbuf, conf_errlen, fmt, ap);
	} else {
		fputs("qmaster: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

/* libconfuse reports parse errors through this; one line naming file and line. */
static void conf_error(cfg_t *, const char *, va_list) NOWQ_ATTR_PRINTF(2, 0);

static void
conf_error(cfg_t *cfg, const char *fmt, va_list ap)
{
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	if (cfg && cfg->line)
		conf_say("%s:%d: %s", conf_file, cfg->line, msg);
	else
		conf_say("%s: %s", conf_file, msg);
}

static int
conf_bad(cfg_t *cfg, const char *fmt, ...) NOWQ_ATTR_PRINTF(2, 3);

static int
conf_bad(cfg_t *cfg, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	conf_error(cfg, fmt, ap);
	va_end(ap);
	return -1;
}

static int
conf_validate_level(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, 0);
	if (log_level_parse(v) < 0)
		return conf_bad(cfg, "log_level \"%s\" is not one of error, warning, info, debug", v);
	return 0;
}

static int
conf_validate_auth(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, 0);
	if (strcmp(v, "none") != 0 && strcmp(v, "munge") != 0)
		return conf_bad(cfg, "auth \"%s\" is not \"munge\" or \"none\"", v);
	return 0;
}

static int
conf_validate_query_thread(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, 0);
	if (strcmp(v, "idle") != 0 && strcmp(v, "normal") != 0 && strcmp(v, "off") != 0)
		return conf_bad(cfg, "query_thread \"%s\" is not \"idle\", \"normal\" or \"off\"", v);
	return 0;
}

static int
conf_validate_positive(cfg_t *cfg, cfg_opt_t *opt)
{
	long v = cfg_opt_getnint(opt, 0);
	if (v <= 0)
		return conf_bad(cfg, "%s must be positive, not %ld", opt->name, v);
	return 0;
}

static bool
is_loopback(const char *host)
{
	return strcmp(host, "127.0.0.1") == 0 || strcmp(host, "localhost") == 0 ||
	    strcmp(host, "::1") == 0 || strncmp(host, "127.", 4) == 0;
}

static int
conf_limit(const char *path, const char *qname, cfg_t *q, const char *key, int *out)
{
	long v = cfg_getint(q, key);
	if (v < 0 || v > 100000000) {
		conf_say("%s: queue %s: %s must be 0 (no limit) or positive, not %ld", path, qname, key, v);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int
conf_amount(const char *path, const char *qname, cfg_t *q, const char *key, bool time, int64_t *out)
{
	const char *v = cfg_getstr(q, key);
	*out = 0;
	if (!v || !*v)
		return 0;
	if ((time ? parse_duration(v, out) : parse_size(v, out)) < 0) {
		conf_say("%s: queue %s: %s \"%s\" is not a %s", path, qname, key, v,
		    time ? "time ([[HH:]MM:]SS)" : "size (e.g. 4G)");
		return -1;
	}
	return 0;
}

/* Everything of one queue but its name, checked. */
static int
conf_queue_read(const char *path, cfg_t *q, struct qm_queue *qq)
{
	char err[256];
	unsigned n;

	qq->priority = (int)cfg_getint(q, "priority");
	if ((qq->hosts_ns = nodeset_parse(qq->hosts, err, sizeof err)) == NULL) {
		conf_say("%s: queue %s: hosts \"%s\": %s", path, qq->name, qq->hosts, err);
		return -1;
	}
	if (conf_limit(path, qq->name, q, "max_queued", &qq->max_queued) < 0 ||
	    conf_limit(path, qq->name, q, "max_running", &qq->max_running) < 0 ||
	    conf_limit(path, qq->name, q, "max_running_per_user", &qq->max_running_per_user) < 0 ||
	    conf_amount(path, qq->name, q, "default_h_rt", true, &qq->default_h_rt) < 0 ||
	    conf_amount(path, qq->name, q, "max_h_rt", true, &qq->max_h_rt) < 0 ||
	    conf_amount(path, qq->name, q, "default_h_vmem", false, &qq->default_h_vmem) < 0 ||
	    conf_amount(path, qq->name, q, "max_h_vmem", false, &qq->max_h_vmem) < 0)
		return -1;
	if ((qq->max_h_rt && qq->default_h_rt > qq->max_h_rt) ||
	    (qq->max_h_vmem && qq->default_h_vmem > qq->max_h_vmem)) {
		conf_say("%s: queue %s: a default is above its maximum", path, qq->name);
		return -1;
	}
	n = cfg_size(q, "users");
	qq->users = xcalloc(n + 1, sizeof *qq->users);
	for (unsigned i = 0; i < n; i++)
		qq->users[i] = xstrdup(cfg_getnstr(q, "users", i));
	n = cfg_size(q, "groups");
	qq->groups = xcalloc(n + 1, sizeof *qq->groups);
	qq->gids = xcalloc(n + 1, sizeof *qq->gids);
	for (unsigned i = 0; i < n; i++) {
		const char *g = cfg_getnstr(q, "groups", i);
		struct group *gr = getgrnam(g);
		qq->groups[i] = xstrdup(g);
		if (!gr) {
			conf_say("%s: queue %s: unknown group \"%s\"", path, qq->name, g);
			return -1;
		}
		qq->gids[qq->ngids++] = gr->gr_gid;
	}
	qq->rerun = cfg_getbool(q, "rerun");
	return 0;
}

/* masters = {"a:7444", "b:7444"}: this master is the entry that is its
 * listen address; the others are its peers. */
static int
conf_masters(const char *path, cfg_t *cfg, struct qm_conf *c)
{
	unsigned n = cfg_size(cfg, "masters");
	long t = cfg_getint(cfg, "failover_timeout");

	if (t < 1 || t > 3600) {
		conf_say("%s: failover_timeout must be 1 to 3600 seconds, not %ld", path, t);
		return -1;
	}
	c->failover_timeout_ms = (int64_t)t * 1000;
	c->self = -1;
	if (n == 0)
		return 0;
	if (n > QM_MAX_MASTERS) {
		conf_say("%s: masters lists %u masters; at most %d are supported", path, n, QM_MAX_MASTERS);
		return -1;
	}
	c->masters = xcalloc(n + 1, sizeof *c->masters);
	for (unsigned i = 0; i < n; i++) {
		const char *m = cfg_getnstr(cfg, "masters", i);
		char *host;
		int port;
		if (parse_hostport(m, &host, &port) < 0) {
			conf_say("%s: masters: \"%s\" is not HOST:PORT", path, m);
			return -1;
		}
		free(host);
		c->masters[i] = xstrdup(m);
		c->nmasters = (int)i + 1;
		if (c->listen && strcmp(m, c->listen) == 0)
			c->self = (int)i;
	}
	if (c->self < 0) {
		conf_say("%s: listen \"%s\" is not one of masters; each master must be listed "
		    "exactly as it listens", path, c->listen ? c->listen : "");
		return -1;
	}
	return 0;
}

struct qm_conf *
conf_load(const char *path)
{
	static cfg_opt_t queue_opts[] = {
		CFG_INT("priority", 0, CFGF_NONE),
		CFG_STR("hosts", "@all", CFGF_NONE),
		CFG_INT("max_queued", 0, CFGF_NONE),
		CFG_INT("max_running", 0, CFGF_NONE),
		CFG_INT("max_running_per_user", 0, CFGF_NONE),
		CFG_STR("default_h_rt", "", CFGF_NONE),
		CFG_STR("max_h_rt", "", CFGF_NONE),
		CFG_STR("default_h_vmem", "", CFGF_NONE),
		CFG_STR("max_h_vmem", "", CFGF_NONE),
		CFG_STR_LIST("users", "{}", CFGF_NONE),
		CFG_STR_LIST("groups", "{}", CFGF_NONE),
		CFG_BOOL("rerun", cfg_false, CFGF_NONE),
		CFG_END()
	};
	static cfg_opt_t pe_opts[] = {
		CFG_INT("slots", 0, CFGF_NONE),
		CFG_STR("allocation_rule", "$round_robin", CFGF_NONE),
		CFG_END()
	};
	cfg_opt_t opts[] = {
		CFG_STR("spool_dir", "/var/spool/nowq/qmaster", CFGF_NONE),
		CFG_STR("listen", "0.0.0.0:7444", CFGF_NONE),
		CFG_STR("unix_socket", "/run/nowq/qmaster.sock", CFGF_NONE),
		CFG_STR("http_listen", "", CFGF_NONE),
		CFG_STR("auth", "munge", CFGF_NONE),
		CFG_STR("munge_socket", "", CFGF_NONE),
		CFG_STR_LIST("managers", "{root}", CFGF_NONE),
		CFG_STR_LIST("operators", "{}", CFGF_NONE),
		CFG_STR("admin_user", "", CFGF_NONE),
		CFG_BOOL("allow_root_jobs", cfg_false, CFGF_NONE),
		CFG_STR("log_level", "info", CFGF_NONE),
		CFG_STR("log_file", "", CFGF_NONE),
		CFG_STR("pid_file", "", CFGF_NONE),
		CFG_INT("finished_jobs_keep", 3600, CFGF_NONE),
		CFG_INT("host_timeout", 30, CFGF_NONE),
		CFG_INT("client_timeout", 10, CFGF_NONE),
		CFG_BOOL("show_all_jobs", cfg_true, CFGF_NONE),
		CFG_STR("query_thread", "idle", CFGF_NONE),
		CFG_BOOL("query_listen", cfg_true, CFGF_NONE),
		CFG_INT("max_frame", PROTO_MAX_FRAME, CFGF_NONE),
		CFG_STR("mailer", "/usr/sbin/sendmail -t -oi", CFGF_NONE),
		CFG_INT("mail_max_running", 4, CFGF_NONE),
		CFG_INT("mail_timeout", 60, CFGF_NONE),
		CFG_INT("mail_retry", 30, CFGF_NONE),
		CFG_STR_LIST("admin_mail", "{}", CFGF_NONE),
		CFG_STR_LIST("masters", "{}", CFGF_NONE),
		CFG_INT("failover_timeout", 2, CFGF_NONE),
		CFG_SEC("queue", queue_opts, CFGF_MULTI | CFGF_TITLE | CFGF_NO_TITLE_DUPES),
		CFG_SEC("pe", pe_opts, CFGF_MULTI | CFGF_TITLE | CFGF_NO_TITLE_DUPES),
		CFG_END()
	};
	struct qm_conf *c;
	cfg_t *cfg;
	unsigned n;
	const char *s;

	conf_file = path;
	cfg = cfg_init(opts, CFGF_NONE);
	cfg_set_error_function(cfg, conf_error);
	cfg_set_validate_func(cfg, "log_level", conf_validate_level);
	cfg_set_validate_func(cfg, "auth", conf_validate_auth);
	cfg_set_validate_func(cfg, "query_thread", conf_validate_query_thread);
	cfg_set_validate_func(cfg, "max_frame", conf_validate_positive);
	switch (cfg_parse(cfg, path)) {
	case CFG_SUCCESS:
		break;
	case CFG_FILE_ERROR:
		conf_say("%s: cannot read the configuration file", path);
		cfg_free(cfg);
		return NULL;
	default:
		cfg_free(cfg);
		return NULL;
	}

	c = xcalloc(1, sizeof *c);
	c->path = xstrdup(path);
	c->spool_dir = xstrdup(cfg_getstr(cfg, "spool_dir"));
	s = cfg_getstr(cfg, "listen");
	if (s && *s) {
		c->listen = xstrdup(s);
		if (parse_hostport(s, &c->listen_host, &c->listen_port) < 0) {
			conf_say("%s: listen \"%s\" is not HOST:PORT", path, s);
			goto bad;
		}
	}
	s = cfg_getstr(cfg, "http_listen");
	if (s && *s) {
		c->http_listen = xstrdup(s);
		if (parse_hostport(s, &c->http_host, &c->http_port) < 0) {
			conf_say("%s: http_listen \"%s\" is not HOST:PORT", path, s);
			goto bad;
		}
	}
	s = cfg_getstr(cfg, "unix_socket");
	if (s && *s) {
		if (strlen(s) >= 108) {
			conf_say("%s: unix_socket path is longer than 107 bytes", path);
			goto bad;
		}
		c->unix_socket = xstrdup(s);
	}
	if (!c->listen && !c->unix_socket) {
		conf_say("%s: neither listen nor unix_socket is set", path);
		goto bad;
	}
	c->auth = xstrdup(cfg_getstr(cfg, "auth"));
	/* The unix socket is local by nature; only TCP needs munge. */
	if (strcmp(c->auth, "none") == 0 && c->listen && !is_loopback(c->listen_host)) {
		conf_say("%s: auth = \"none\" is allowed only when every listener is on loopback, "
		    "not with listen = %s; use auth = \"munge\"", path, c->listen);
		goto bad;
	}
	s = cfg_getstr(cfg, "munge_socket");
	c->munge_socket = s && *s ? xstrdup(s) : NULL;
	if (c->munge_socket && c->munge_socket[0] != '/') {
		conf_say("%s: munge_socket must be an absolute path", path);
		goto bad;
	}
	s = cfg_getstr(cfg, "admin_user");
	if (s && *s) {
		struct passwd *pw = getpwnam(s);
		if (!pw) {
			conf_say("%s: admin_user \"%s\" is not a user of this host", path, s);
			goto bad;
		}
		c->admin_user = xstrdup(s);
		c->admin_uid = pw->pw_uid;
	}
	c->allow_root_jobs = cfg_getbool(cfg, "allow_root_jobs");
	n = cfg_size(cfg, "operators");
	c->operators = xcalloc(n + 1, sizeof *c->operators);
	for (unsigned i = 0; i < n; i++)
		c->operators[i] = xstrdup(cfg_getnstr(cfg, "operators", i));
	n = cfg_size(cfg, "managers");
	c->managers = xcalloc(n + 1, sizeof *c->managers);
	for (unsigned i = 0; i < n; i++)
		c->managers[i] = xstrdup(cfg_getnstr(cfg, "managers", i));
	c->log_level = log_level_parse(cfg_getstr(cfg, "log_level"));
	s = cfg_getstr(cfg, "log_file");
	c->log_file = s && *s ? xstrdup(s) : NULL;
	s = cfg_getstr(cfg, "pid_file");
	c->pid_file = s && *s ? xstrdup(s) : xasprintf("%s/qmaster.pid", c->spool_dir);
	if (cfg_getint(cfg, "finished_jobs_keep") < 0) {
		conf_say("%s: finished_jobs_keep must not be negative", path);
		goto bad;
	}
	c->finished_keep_ms = (int64_t)cfg_getint(cfg, "finished_jobs_keep") * 1000;
	if (cfg_getint(cfg, "host_timeout") < 1 || cfg_getint(cfg, "host_timeout") > 86400) {
		fprintf(stderr, "qmaster: %s: host_timeout must be 1 to 86400 seconds\n", path);
		goto bad;
	}
	c->host_timeout_ms = (int64_t)cfg_getint(cfg, "host_timeout") * 1000;
	if (cfg_getint(cfg, "client_timeout") < 1 || cfg_getint(cfg, "client_timeout") > 3600) {
		conf_say("%s: client_timeout must be 1 to 3600 seconds", path);
		goto bad;
	}
	c->client_timeout = (int)cfg_getint(cfg, "client_timeout");
	c->show_all_jobs = cfg_getbool(cfg, "show_all_jobs");
	{
		const char *q = cfg_getstr(cfg, "query_thread");
		c->query_thread = strcmp(q, "off") == 0 ? QUERY_THREAD_OFF :
		    strcmp(q, "normal") == 0 ? QUERY_THREAD_NORMAL : QUERY_THREAD_IDLE;
	}
	c->query_listen = cfg_getbool(cfg, "query_listen");
	c->max_frame = (size_t)cfg_getint(cfg, "max_frame");
	s = cfg_getstr(cfg, "mailer");
	if (!s || s[0] != '/') {
		conf_say("%s: mailer must be an absolute path to a program and its options", path);
		goto bad;
	}
	c->mailer = xstrdup(s);
	if (cfg_getint(cfg, "mail_max_running") < 1 || cfg_getint(cfg, "mail_max_running") > 64 ||
	    cfg_getint(cfg, "mail_timeout") < 1 || cfg_getint(cfg, "mail_timeout") > 3600 ||
	    cfg_getint(cfg, "mail_retry") < 1 || cfg_getint(cfg, "mail_retry") > 3600) {
		conf_say("%s: mail_max_running must be 1 to 64, mail_timeout and mail_retry 1 to 3600 seconds",
		    path);
		goto bad;
	}
	c->mail_retry = (int)cfg_getint(cfg, "mail_retry");
	c->mail_max_running = (int)cfg_getint(cfg, "mail_max_running");
	c->mail_timeout = (int)cfg_getint(cfg, "mail_timeout");
	n = cfg_size(cfg, "admin_mail");
	c->admin_mail = xcalloc(n + 1, sizeof *c->admin_mail);
	for (unsigned i = 0; i < n; i++) {
		if (!mail_valid_address(cfg_getnstr(cfg, "admin_mail", i))) {
			conf_say("%s: admin_mail: \"%s\" is not a mail address", path,
			    cfg_getnstr(cfg, "admin_mail", i));
			goto bad;
		}
		c->admin_mail[i] = xstrdup(cfg_getnstr(cfg, "admin_mail", i));
	}
	if (conf_masters(path, cfg, c) < 0)
		goto bad;
	n = cfg_size(cfg, "queue");
	if (n == 0) {
		conf_say("%s: no queue is defined (define at least queue \"all.q\")", path);
		goto bad;
	}
	c->queues = xcalloc(n, sizeof *c->queues);
	for (unsigned i = 0; i < n; i++) {
		cfg_t *q = cfg_getnsec(cfg, "queue", i);
		const char *name = cfg_title(q);
		if (!name || !*name || strpbrk(name, " \t@/,")) {
			conf_say("%s: queue name \"%s\" is empty or holds one of \" @/,\"",
			    path, name ? name : "");
			goto bad;
		}
		c->queues[i].name = xstrdup(name);
		c->queues[i].priority = (int)cfg_getint(q, "priority");
		c->queues[i].hosts = xstrdup(cfg_getstr(q, "hosts"));
		c->nqueues = (int)i + 1;
		if (conf_queue_read(path, q, &c->queues[i]) < 0)
			goto bad;
		c->nqueues = (int)i + 1;
	}
	n = cfg_size(cfg, "pe");
	c->pes = xcalloc(n + 1, sizeof *c->pes);
	for (unsigned i = 0; i < n; i++) {
		cfg_t *p = cfg_getnsec(cfg, "pe", i);
		const char *name = cfg_title(p), *rule = cfg_getstr(p, "allocation_rule");
		long slots = cfg_getint(p, "slots");
		if (!name || !*name || strpbrk(name, " \t@/,")) {
			conf_say("%s: pe name \"%s\" is empty or holds one of \" @/,\"", path, name ? name : "");
			goto bad;
		}
		c->pes[i].name = xstrdup(name);
		c->npes = (int)i + 1;
		if (slots < 0 || slots > JOB_MAX_SLOTS) {
			conf_say("%s: pe %s: slots must be 0 (no limit) to %d, not %ld", path, name, JOB_MAX_SLOTS, slots);
			goto bad;
		}
		c->pes[i].slots = (int)slots;
		if ((c->pes[i].rule = pe_rule_parse(rule)) == 0) {
			conf_say("%s: pe %s: allocation_rule \"%s\" is not $round_robin, $fill_up, $pe_slots "
			    "or a number of slots per host", path, name, rule ? rule : "");
			goto bad;
		}
	}
	cfg_free(cfg);
	return c;
bad:
	cfg_free(cfg);
	conf_free(c);
	return NULL;
}

void
conf_free(struct qm_conf *c)
{
	if (!c)
		return;
	free(c->path);
	free(c->spool_dir);
	free(c->listen);
	free(c->listen_host);
	free(c->http_listen);
	free(c->http_host);
	free(c->unix_socket);
	free(c->auth);
	free(c->munge_socket);
	strv_free(c->managers);
	strv_free(c->operators);
	free(c->admin_user);
	free(c->log_file);
	free(c->pid_file);
	free(c->mailer);
	strv_free(c->admin_mail);
	strv_free(c->masters);
	for (int i = 0; i < c->nqueues; i++) {
		free(c->queues[i].name);
		free(c->queues[i].hosts);
		nodeset_free(c->queues[i].hosts_ns);
		strv_free(c->queues[i].users);
		strv_free(c->queues[i].groups);
		free(c->queues[i].gids);
	}
	free(c->queues);
	for (int i = 0; i < c->npes; i++)
		free(c->pes[i].name);
	free(c->pes);
	free(c);
}

const struct qm_pe *
conf_pe(const struct qm_conf *c, const char *name)
{
	for (int i = 0; i < c->npes; i++)
		if (strcmp(c->pes[i].name, name) == 0)
			return &c->pes[i];
	return NULL;
}

const struct qm_queue *
conf_queue(const struct qm_conf *c, const char *name)
{
	for (int i = 0; i < c->nqueues; i++)
		if (strcmp(c->queues[i].name, name) == 0)
			return &c->queues[i];
	return NULL;
}

bool
queue_rerun_default(const char *queue)
{
	const struct qm_queue *q = queue ? conf_queue(conf, queue) : NULL;
	return q && q->rerun;
}

int
conf_reload(char *err, size_t errlen)
{
	struct qm_conf *nc;

	*err = '\0';
	conf_errbuf = err;
	conf_errlen = errlen;
	nc = conf_load(conf->path);
	conf_errbuf = NULL;
	if (!nc) {
		if (!*err)
			snprintf(err, errlen, "%s has errors", conf->path);
		log_warnx("keeping the old configuration: %s", err);
		return -1;
	}
	/* Listeners and the spool stay as they were started. */
	free(nc->spool_dir);
	nc->spool_dir = xstrdup(conf->spool_dir);
	/* So does the authentication of those listeners. */
	free(nc->auth);
	nc->auth = xstrdup(conf->auth);
	/* And the query thread and its endpoint, started with them. */
	nc->query_thread = conf->query_thread;
	nc->query_listen = conf->query_listen;
	/* qmod -d outlives a reload: the flag is state, not configuration. */
	for (int i = 0; i < nc->nqueues; i++) {
		const struct qm_queue *old = conf_queue(conf, nc->queues[i].name);
		if (old)
			nc->queues[i].disabled = old->disabled;
	}
	/* The query thread reads conf too (conf_read_begin). */
	pthread_rwlock_wrlock(&conf_lock);
	conf_free(conf);
	conf = nc;
	pthread_rwlock_unlock(&conf_lock);
	log_init("qmaster", conf->log_level, conf->log_file);
	log_info("configuration re-read");
	sched_kick();
	return 0;
}

static void
conf_words(char **buf, const char *key, char *const *v)
{
	char *s = *buf;
	*buf = xasprintf("%s%-20s ", s, key);
	free(s);
	if (!v || !*v) {
		s = *buf;
		*buf = xasprintf("%sNONE\n", s);
		free(s);
		return;
	}
	for (size_t i = 0; v[i]; i++) {
		s = *buf;
		*buf = xasprintf("%s%s%s", s, i ? "," : "", v[i]);
		free(s);
	}
	s = *buf;
	*buf = xasprintf("%s\n", s);
	free(s);
}

char *
conf_queue_text(const struct qm_queue *q)
{
	char drt[32] = "INFINITY", mrt[32] = "INFINITY", dvm[32] = "INFINITY", mvm[32] = "INFINITY";
	char *s, *t;

	if (q->default_h_rt)
		match_fmt_time(drt, sizeof drt, q->default_h_rt);
	if (q->max_h_rt)
		match_fmt_time(mrt, sizeof mrt, q->max_h_rt);
	if (q->default_h_vmem)
		match_fmt_size(dvm, sizeof dvm, q->default_h_vmem);
	if (q->max_h_vmem)
		match_fmt_size(mvm, sizeof mvm, q->max_h_vmem);
	s = xasprintf("%-20s %s\n%-20s %d\n%-20s %s\n%-20s %d\n%-20s %d\n%-20s %d\n"
	    "%-20s %s\n%-20s %s\n%-20s %s\n%-20s %s\n%-20s %s\n%-20s %s\n",
	    "qname", q->name, "priority", q->priority, "hostlist", q->hosts,
	    "max_queued", q->max_queued, "max_running", q->max_running,
	    "max_running_per_user", q->max_running_per_user,
	    "default_h_rt", drt, "h_rt", mrt, "default_h_vmem", dvm, "h_vmem", mvm,
	    "rerun", q->rerun ? "TRUE" : "FALSE", "state", q->disabled ? "d" : "NONE");
	conf_words(&s, "user_lists", q->users);
	conf_words(&s, "group_lists", q->groups);
	t = s;
	return t;
}
