/* conf.c: reads qmaster.conf with libconfuse and checks every value before the master uses it. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <confuse.h>

#include "qmaster/qmaster.h"

static const char *conf_file;

/* libconfuse reports parse errors through this; one line naming file and line. */
static void
conf_error(cfg_t *cfg, const char *fmt, va_list ap)
{
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	if (cfg && cfg->line)
		fprintf(stderr, "qmaster: %s:%d: %s\n", conf_file, cfg->line, msg);
	else
		fprintf(stderr, "qmaster: %s: %s\n", conf_file, msg);
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

struct qm_conf *
conf_load(const char *path)
{
	static cfg_opt_t queue_opts[] = {
		CFG_INT("priority", 0, CFGF_NONE),
		CFG_STR("hosts", "@all", CFGF_NONE),
		CFG_END()
	};
	cfg_opt_t opts[] = {
		CFG_STR("spool_dir", "/var/spool/nowq/qmaster", CFGF_NONE),
		CFG_STR("listen", "0.0.0.0:7444", CFGF_NONE),
		CFG_STR("unix_socket", "/run/nowq/qmaster.sock", CFGF_NONE),
		CFG_STR("auth", "munge", CFGF_NONE),
		CFG_STR_LIST("managers", "{root}", CFGF_NONE),
		CFG_STR("log_level", "info", CFGF_NONE),
		CFG_STR("log_file", "", CFGF_NONE),
		CFG_STR("pid_file", "", CFGF_NONE),
		CFG_INT("finished_jobs_keep", 3600, CFGF_NONE),
		CFG_INT("host_timeout", 30, CFGF_NONE),
		CFG_BOOL("show_all_jobs", cfg_true, CFGF_NONE),
		CFG_INT("max_frame", PROTO_MAX_FRAME, CFGF_NONE),
		CFG_SEC("queue", queue_opts, CFGF_MULTI | CFGF_TITLE | CFGF_NO_TITLE_DUPES),
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
	cfg_set_validate_func(cfg, "max_frame", conf_validate_positive);
	switch (cfg_parse(cfg, path)) {
	case CFG_SUCCESS:
		break;
	case CFG_FILE_ERROR:
		fprintf(stderr, "qmaster: %s: cannot read the configuration file\n", path);
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
			fprintf(stderr, "qmaster: %s: listen \"%s\" is not HOST:PORT\n", path, s);
			goto bad;
		}
	}
	s = cfg_getstr(cfg, "unix_socket");
	if (s && *s) {
		if (strlen(s) >= 108) {
			fprintf(stderr, "qmaster: %s: unix_socket path is longer than 107 bytes\n", path);
			goto bad;
		}
		c->unix_socket = xstrdup(s);
	}
	if (!c->listen && !c->unix_socket) {
		fprintf(stderr, "qmaster: %s: neither listen nor unix_socket is set\n", path);
		goto bad;
	}
	c->auth = xstrdup(cfg_getstr(cfg, "auth"));
	if (strcmp(c->auth, "munge") == 0) {
		/* Munge authentication is the next issue's work; refuse rather than pretend. */
		fprintf(stderr, "qmaster: %s: auth \"munge\" is not supported by this build yet; "
		    "use auth = \"none\" with a loopback listen address\n", path);
		goto bad;
	}
	if (strcmp(c->auth, "none") == 0 && c->listen && !is_loopback(c->listen_host)) {
		fprintf(stderr, "qmaster: %s: auth = \"none\" is allowed only with a loopback "
		    "listen address, not %s\n", path, c->listen);
		goto bad;
	}
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
		fprintf(stderr, "qmaster: %s: finished_jobs_keep must not be negative\n", path);
		goto bad;
	}
	c->finished_keep_ms = (int64_t)cfg_getint(cfg, "finished_jobs_keep") * 1000;
	if (cfg_getint(cfg, "host_timeout") < 1 || cfg_getint(cfg, "host_timeout") > 86400) {
		fprintf(stderr, "qmaster: %s: host_timeout must be 1 to 86400 seconds\n", path);
		goto bad;
	}
	c->host_timeout_ms = (int64_t)cfg_getint(cfg, "host_timeout") * 1000;
	c->show_all_jobs = cfg_getbool(cfg, "show_all_jobs");
	c->max_frame = (size_t)cfg_getint(cfg, "max_frame");
	n = cfg_size(cfg, "queue");
	if (n == 0) {
		fprintf(stderr, "qmaster: %s: no queue is defined (define at least queue \"all.q\")\n", path);
		goto bad;
	}
	c->queues = xcalloc(n, sizeof *c->queues);
	for (unsigned i = 0; i < n; i++) {
		cfg_t *q = cfg_getnsec(cfg, "queue", i);
		const char *name = cfg_title(q);
		if (!name || !*name || strpbrk(name, " \t@/,")) {
			fprintf(stderr, "qmaster: %s: queue name \"%s\" is empty or holds one of \" @/,\"\n",
			    path, name ? name : "");
			goto bad;
		}
		c->queues[i].name = xstrdup(name);
		c->queues[i].priority = (int)cfg_getint(q, "priority");
		c->queues[i].hosts = xstrdup(cfg_getstr(q, "hosts"));
		if (strcmp(c->queues[i].hosts, "@all") != 0) {
			fprintf(stderr, "qmaster: %s: queue %s: hosts \"%s\": only \"@all\" is supported "
			    "until node-set expressions land\n", path, name, c->queues[i].hosts);
			c->nqueues = (int)i + 1;
			goto bad;
		}
		c->nqueues = (int)i + 1;
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
	free(c->unix_socket);
	free(c->auth);
	strv_free(c->managers);
	free(c->log_file);
	free(c->pid_file);
	for (int i = 0; i < c->nqueues; i++) {
		free(c->queues[i].name);
		free(c->queues[i].hosts);
	}
	free(c->queues);
	free(c);
}

const struct qm_queue *
conf_queue(const struct qm_conf *c, const char *name)
{
	for (int i = 0; i < c->nqueues; i++)
		if (strcmp(c->queues[i].name, name) == 0)
			return &c->queues[i];
	return NULL;
}
