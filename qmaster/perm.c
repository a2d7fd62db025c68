/* perm.c: who may change host lists and reservations, and see a job's private details.
 *
 * The one place these decisions are made, so a table of roles can replace
 * them. */
#include "config.h"

#include <string.h>

#include "qmaster/qmaster.h"

/* Aliases and host lists shape where everyone's jobs go: managers only. */
bool
perm_manager(const struct conn *c)
{
	return c->manager;
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
