/* conf.c: the master's running configuration: loading, reloading and showing its queues. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

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

/* Start-up reads: a bad file is said on standard error. */
struct qm_conf *
conf_load(const char *path)
{
	char err[1024];
	struct qm_conf *c = qmconf_load(path, err, sizeof err);

	if (!c)
		fprintf(stderr, "qmaster: %s\n", err);
	return c;
}

void
conf_free(struct qm_conf *c)
{
	qmconf_free(c);
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

	if ((nc = qmconf_load(conf->path, err, errlen)) == NULL) {
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
conf_global_text(const struct qm_conf *c)
{
	static const char *const levels[] = { "log_err", "log_warning", "log_info", "log_info" };
	char unheard[32], *admin = NULL, *s;

	snprintf(unheard, sizeof unheard, "%02lld:%02lld:%02lld", (long long)(c->host_timeout_ms / 3600000),
	    (long long)(c->host_timeout_ms / 60000 % 60), (long long)(c->host_timeout_ms / 1000 % 60));
	for (size_t i = 0; c->admin_mail && c->admin_mail[i]; i++) {
		s = admin;
		admin = xasprintf("%s%s%s", s ? s : "", s ? "," : "", c->admin_mail[i]);
		free(s);
	}
	/* Grid Engine's keys for what nowq has a counterpart of: a script's
	 * #! line is honoured (unix_behavior), root may run jobs only when
	 * allow_root_jobs is set (min_uid), a host is lost after host_timeout. */
	s = xasprintf("#global:\n%-28s %s\n%-28s %s\n%-28s %s\n%-28s %d\n%-28s %s\n%-28s %s\n",
	    "mailer", c->mailer ? c->mailer : "none", "administrator_mail", admin ? admin : "none",
	    "shell_start_mode", "unix_behavior", "min_uid", c->allow_root_jobs ? 0 : 1,
	    "max_unheard", unheard, "loglevel", levels[c->log_level & 3]);
	free(admin);
	return s;
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
