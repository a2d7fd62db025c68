/* users.c: the master's cache of user and group entries, for the loop and the query thread alike. */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "qmaster/qmaster.h"

/* Owner details come from the master's own user database, never from the
 * client; cached because NSS lookups can be slow (a directory server) and
 * the same few users submit and poll again and again.
 *
 * Each thread has its own cache (thread-local): user_lookup hands out a
 * pointer into it that the caller reads after the call, which a lock held
 * only inside the call could not protect, and the loop must never wait on
 * the query thread.  Two threads cost at most one extra lookup per user
 * per USER_CACHE_MS.  The lookups themselves are the reentrant forms. */
#define USERS_SLOTS 64

static _Thread_local struct user_cache ucache[USERS_SLOTS];

static _Thread_local struct {
	gid_t    gid;
	char    *name;
	int64_t  fetched;
} gcache[USERS_SLOTS];

/* Room for getpwuid_r and getgrgid_r, grown while they say ERANGE. */
static char *
users_buf(char *buf, size_t *n)
{
	*n = buf ? *n * 2 : 4096;
	return xrealloc(buf, *n);
}

const struct user_cache *
user_lookup(uid_t uid)
{
	struct user_cache *u = &ucache[uid % USERS_SLOTS];
	struct passwd pw, *res = NULL;
	char *buf = NULL;
	size_t len = 0;
	int n = 64, rc;

	if (u->name && u->uid == uid && now_ms() - u->fetched < USER_CACHE_MS)
		return u;
	do
		buf = users_buf(buf, &len);
	while ((rc = getpwuid_r(uid, &pw, buf, len, &res)) == ERANGE && len < (1 << 20));
	if (rc != 0 || !res) {
		free(buf);
		return NULL;
	}
	free(u->name);
	free(u->home);
	free(u->groups);
	u->uid = uid;
	u->name = xstrdup(pw.pw_name);
	u->home = xstrdup(pw.pw_dir);
	u->gid = pw.pw_gid;
	u->groups = xcalloc((size_t)n, sizeof *u->groups);
	if (getgrouplist(pw.pw_name, pw.pw_gid, u->groups, &n) < 0) {
		u->groups = xrealloc(u->groups, (size_t)n * sizeof *u->groups);
		getgrouplist(pw.pw_name, pw.pw_gid, u->groups, &n);
	}
	u->ngroups = n;
	u->fetched = now_ms();
	free(buf);
	return u;
}

char *
user_name(uid_t uid, gid_t *gid)
{
	const struct user_cache *u = user_lookup(uid);

	if (*gid == (gid_t)-1)
		*gid = u ? u->gid : (gid_t)uid;
	return u ? xstrdup(u->name) : xasprintf("%u", (unsigned)uid);
}

const char *
group_lookup(gid_t gid)
{
	struct group gr, *res = NULL;
	unsigned k = gid % USERS_SLOTS;
	char *buf = NULL;
	size_t len = 0;
	int rc;

	if (gcache[k].name && gcache[k].gid == gid && now_ms() - gcache[k].fetched < USER_CACHE_MS)
		return gcache[k].name;
	do
		buf = users_buf(buf, &len);
	while ((rc = getgrgid_r(gid, &gr, buf, len, &res)) == ERANGE && len < (1 << 20));
	if (rc != 0 || !res) {
		free(buf);
		return NULL;
	}
	free(gcache[k].name);
	gcache[k].gid = gid;
	gcache[k].name = xstrdup(gr.gr_name);
	gcache[k].fetched = now_ms();
	free(buf);
	return gcache[k].name;
}

void
users_forget(void)
{
	for (size_t i = 0; i < USERS_SLOTS; i++) {
		free(ucache[i].name);
		free(ucache[i].home);
		free(ucache[i].groups);
		free(gcache[i].name);
	}
	memset(ucache, 0, sizeof ucache);
	memset(gcache, 0, sizeof gcache);
}
