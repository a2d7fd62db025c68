/* space.c: the master on a full spool: the reserve, what is refused, and the recovery.
 *
 * The reserve lets deletions and the execds' reports commit once a commit
 * failed for want of space. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "qmaster/qmaster.h"

/* A commit that grows the WAL needs free blocks even to delete a job, so
 * the spool keeps this much allocated in SPOOL/nowq.reserve and gives it
 * up when it is full; it is taken again once the spool holds twice as
 * much, so giving it up and taking it back never alternate. */
#define SPACE_RESERVE (8 * 1024 * 1024)
/* What opening the database and writing the pid file need at start. */
#define SPACE_START_MIN (1024 * 1024)

static bool  full;       /* refusing what needs space (space_refuses) */
static bool  told;       /* what the admins were last told: full or not */
static char *reserve_path;

static int64_t
space_avail(void)
{
	struct statvfs sv;

	if (statvfs(conf->spool_dir, &sv) < 0)
		return -1;
	return (int64_t)sv.f_bavail * (int64_t)sv.f_frsize;
}

/* Allocates the reserve (nothing more when it is there already). */
static bool
reserve_take(void)
{
	int fd = open(reserve_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600), rc;

	if (fd < 0)
		return false;
	rc = posix_fallocate(fd, 0, SPACE_RESERVE);
	close(fd);
	if (rc != 0) {
		unlink(reserve_path);
		errno = rc;
		return false;
	}
	return true;
}

static void
reserve_give_up(void)
{
	if (unlink(reserve_path) < 0 && errno != ENOENT)
		log_warn("cannot remove %s", reserve_path);
}

/* Before the database is opened: a spool full already (the disk filled
 * while the master was down) gives up its reserve so the master can open
 * the database, start, and take deletions. */
void
space_init(void)
{
	free(reserve_path);
	reserve_path = xasprintf("%s/nowq.reserve", conf->spool_dir);
	if (!reserve_take()) {
		log_warn("no room for the reserve %s", reserve_path);
		full = true;
	} else if (space_avail() >= 0 && space_avail() < SPACE_START_MIN) {
		reserve_give_up();
		full = true;
	}
	if (full)
		log_warnx("the spool %s is full: refusing changes but deletions and the execds' "
		    "reports until it has room again", conf->spool_dir);
}

bool
space_full(void)
{
	return full;
}

bool
space_refuses(const struct conn *c, enum msg_type t)
{
	/* Deletions, and what execds report of jobs that run already, are
	 * what the reserve is for; new work waits for space. */
	return full && c->role == ROLE_CLIENT && t != MSG_DELETE;
}

void
space_commit_failed(void)
{
	log_warnx("cannot commit: no space left on the spool %s; the requests of that commit "
	    "are refused%s", conf->spool_dir, full ? "" : ", and changes but deletions and the "
	    "execds' reports until it has room again");
	if (full)
		return;
	full = true;
	reserve_give_up();
}

/* From the tick: takes the reserve back once the spool has room, and
 * tells the admins of each change.  Mail goes straight to the mailer:
 * the database's outbox needs the space that is missing. */
void
space_tick(void)
{
	int64_t avail;

	if (full && (avail = space_avail()) >= 2 * SPACE_RESERVE) {
		if (reserve_take()) {
			full = false;
			log_info("the spool %s has room again (%lld MiB free): taking every request",
			    conf->spool_dir, (long long)(avail >> 20));
			sched_kick();
		} else
			log_warn("cannot take the reserve %s back", reserve_path);
	}
	if (full == told)
		return;
	told = full;
	if (full)
		mail_admin_now("nowq: the master's spool is full",
		    "The queue master cannot write its database: no space left on its spool.\n"
		    "It refuses submissions and other changes with \"no space left on the master's\n"
		    "spool\", and still answers queries, deletions and its exec hosts.  Free space\n"
		    "on the spool; it takes every request again by itself once it has room.");
	else
		mail_admin_now("nowq: the master's spool has room again",
		    "The queue master's spool has room again; it takes every request.");
}
