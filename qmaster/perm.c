/* perm.c: who may do what: send a request, touch a job or entry, see everyone's jobs, change host lists and reservations, start a task in a job. */
#include "config.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "qmaster/qmaster.h"

static const char *const perm_names[] = {
	[PERM_USER] = "user", [PERM_OWNER_OPERATOR] = "owner|operator",
	[PERM_OWNER_MANAGER] = "owner|manager", [PERM_OPERATOR] = "operator",
	[PERM_MANAGER] = "manager", [PERM_DAEMON] = "daemon",
};

const char *
perm_name(enum perm p)
{
	assert((size_t)p < sizeof perm_names / sizeof perm_names[0]);
	return perm_names[p];
}

/* The request table's check, before the handler runs: the owner forms let
 * everyone in, and the handler asks perm_may_touch per job or entry. */
bool
perm_allows(const struct conn *c, enum perm p)
{
	switch (p) {
	case PERM_USER:
	case PERM_OWNER_OPERATOR:
	case PERM_OWNER_MANAGER:
		return true;
	case PERM_OPERATOR:
		return c->operator;
	case PERM_MANAGER:
		return c->manager;
	case PERM_DAEMON:
		return c->daemon;
	}
	return false;
}

/* Its owner and managers may change a job or cron entry; operators too
 * where the row of the request being handled says owner|operator. */
bool
perm_may_touch(const struct conn *c, const char *owner)
{
	if (c->manager || (owner && strcmp(owner, c->user) == 0))
		return true;
	return request_current_perm() == PERM_OWNER_OPERATOR && c->operator;
}

/* Sites differ on privacy: show_all_jobs shows everyone every job (as Grid
 * Engine does), else each user sees only their own; operators and
 * managers, who may act on any job, see every one.  This decides listings,
 * qstat -j, qwait, qhost -j, qacct, cron entries and the status page,
 * whose anonymous reader is no operator.  The query thread calls it inside
 * conf_read_begin. */
bool
perm_sees_all(bool operator)
{
	return conf->show_all_jobs || operator;
}

/* The roles of an identity, the loop's and the query thread's alike: a
 * manager is an operator too. */
void
perm_roles(const char *user, uid_t uid, bool *manager, bool *operator)
{
	*manager = qm_is_manager(user, uid);
	*operator = *manager || qm_is_operator(user);
}

/* Aliases and host lists shape where everyone's jobs go: managers only. */
bool
perm_manager(const struct conn *c)
{
	return c->manager;
}

/* Grid Engine's hold letters (qalter -h): anyone who may change the job sets
 * or clears its user hold (u, U); operator holds (o, O) are operators' and
 * managers', system holds (s, S) managers' alone.  n clears what c may. */
unsigned
perm_hold_bits(const struct conn *c)
{
	return HOLD_USER | (c->operator || c->manager ? HOLD_OPERATOR : 0) |
	    (c->manager ? HOLD_SYSTEM : 0);
}

/* GLUnix's rule: a host's owners may reserve it, and managers always may. */
bool
perm_reserve_host(const struct conn *c, const struct exechost *h)
{
	return c->manager || (c->user && strv_has(h->owners, c->user));
}

/* A reservation is ended early by whoever made it, or a manager. */
bool
perm_resv(const struct conn *c, const struct resv *r)
{
	return c->manager || (c->user && strcmp(c->user, r->m.owner) == 0);
}

/* A job's environment, script and qrsh address may hold secrets (a token
 * passed with -v, a password in the script): its owner sees them, and so
 * do operators and managers, who may act on any job.  show_all_jobs shows
 * everyone the rest of a job, as Grid Engine does. */
bool
perm_job_private(const struct conn *c, const char *owner)
{
	return c->operator || (c->user && owner && strcmp(c->user, owner) == 0);
}

/*
 * qrsh -inherit: a task is started only for the job's own user (its
 * uid, as HELLO proved it), only into a job that runs now in a parallel
 * environment with control_slaves, and only on a host the job was given
 * (Grid Engine's execd accepts no other).  NULL when allowed, else why,
 * in words written into buf.
 */
const char *
perm_inherit(const struct conn *c, int64_t id, const struct job *j, const char *host, char *buf,
    size_t n)
{
	const struct qm_pe *pe = j && j->pe ? conf_pe(conf, j->pe) : NULL;
	char **hosts;
	bool granted;

	if (!j || JS_FINISHED(j->state) || j->uid != c->uid)
		snprintf(buf, n, "no job %lld of user %s runs", (long long)id, c->user ? c->user : "?");
	else if (j->state != JS_RUNNING)
		snprintf(buf, n, "job %lld is not running yet", (long long)j->id);
	else if (!pe || !pe->control_slaves)
		snprintf(buf, n, "job %lld is not in a parallel environment with control_slaves TRUE",
		    (long long)j->id);
	else {
		hosts = pe_host_list(j);
		granted = hosts && strv_has(hosts, host);
		strv_free(hosts);
		if (granted)
			return NULL;
		snprintf(buf, n, "host %s was not granted to job %lld", host, (long long)j->id);
	}
	return buf;
}

/* A job's staged files (inputs and outputs) are its owner's alone: the
 * owner reads them (nowq fetch), and the daemon identity, whose shepherds
 * carry them to and from the exec hosts.  Not operators or managers: a
 * file is data, not a job to act on. */
bool
perm_stage_read(const struct conn *c, const struct job *j)
{
	return c->daemon || c->uid == j->uid;
}
