/* cache.c: the exec host's cache of staged inputs, SPOOL/stage/SHA256, trimmed to execd.ini's stage_cache_max, least recently used first.
 *
 * A file's modification time is its last use: the shepherd touches it when
 * a job finds it there (execd/stage.c), and a fetch ends with it new.  A
 * file any attempt this host holds names (dispatched, fetching, running or
 * ended but not yet acknowledged) stays, whatever the cap.  The shepherds
 * hold STAGE_CACHE_LOCK shared from their first fetch to their last copy
 * into the working directory; the trim takes it exclusive without waiting,
 * so it never removes a file between a shepherd's finding it and its copy,
 * and never blocks execd's loop: while a shepherd fetches, the trim waits
 * for the next scan or the next job's end. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "execd/execd.h"

struct cache_entry {
	char    name[SHA256_HEX + 6];   /* SHA256, or SHA256.part (a fetch left) */
	int64_t size;
	struct timespec used;   /* to the nanosecond: files used within one second keep their order */
};

static int
cache_entry_cmp(const void *a, const void *b)
{
	const struct cache_entry *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	if (x->used.tv_nsec != y->used.tv_nsec)
		return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The cache's files and partial files, into *out (to free); their count,
 * their bytes in *total, or -1. */
static int
cache_list(DIR *d, struct cache_entry **out, int64_t *total)
{
	struct cache_entry *e = NULL;
	struct dirent *de;
	struct stat st;
	size_t n = 0, cap = 0, len;

	*total = 0;
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < SHA256_HEX || len >= sizeof e->name)
			continue;
		if (!(len == SHA256_HEX || strcmp(de->d_name + SHA256_HEX, ".part") == 0))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (n == cap)
			e = xrealloc(e, (cap = cap ? cap * 2 : 64) * sizeof *e);
		memcpy(e[n].name, de->d_name, len + 1);
		e[n].size = st.st_size;
		e[n].used = st.st_mtim;
		*total += st.st_size;
		n++;
	}
	*out = e;
	return (int)n;
}

/* Over stage_cache_max: the least recently used files no attempt here
 * needs go (a file's lock with it: nobody holds one while we hold the
 * cache's lock) until the cache is within it. */
void
cache_trim(void)
{
	char *dir, *lock;
	struct cache_entry *e = NULL;
	int64_t total, cap = conf->stage_cache_max;
	json_t *need;
	int n, lfd, removed = 0;
	DIR *d;

	if (cap <= 0)
		return;
	dir = execd_path("stage");
	if (!(d = opendir(dir))) {
		free(dir);
		return;
	}
	n = cache_list(d, &e, &total);
	if (total <= cap) {
		closedir(d);
		free(e);
		free(dir);
		return;
	}
	lock = execd_path("%s", STAGE_CACHE_LOCK);
	lfd = open(lock, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB) < 0) {
		if (lfd < 0 || errno != EWOULDBLOCK)
			log_warn("cannot lock %s to trim the staging cache", lock);
		goto out;
	}
	/* Under the lock, what is there now. */
	free(e);
	rewinddir(d);
	n = cache_list(d, &e, &total);
	need = json_object();
	active_stage_needs(need);
	qsort(e, (size_t)n, sizeof *e, cache_entry_cmp);
	for (int i = 0; i < n && total > cap; i++) {
		char sha[SHA256_HEX + 1], lockname[SHA256_HEX + 6];

		memcpy(sha, e[i].name, SHA256_HEX);
		sha[SHA256_HEX] = '\0';
		if (json_object_get(need, sha))
			continue;
		if (unlinkat(dirfd(d), e[i].name, 0) < 0) {
			log_warn("cannot remove %s/%s from the staging cache", dir, e[i].name);
			continue;
		}
		snprintf(lockname, sizeof lockname, "%s.lock", sha);
		unlinkat(dirfd(d), lockname, 0);
		total -= e[i].size;
		removed++;
		log_info("staging cache: removed %s (%lld bytes, last used %lld s ago)", e[i].name,
		    (long long)e[i].size, (long long)(time(NULL) - e[i].used.tv_sec));
	}
	json_decref(need);
	if (total > cap)
		log_warnx("staging cache: %lld bytes, over stage_cache_max (%lld) with the files "
		    "this host's jobs need", (long long)total, (long long)cap);
	else if (removed)
		log_info("staging cache: %lld bytes after removing %d files (stage_cache_max %lld)",
		    (long long)total, removed, (long long)cap);
out:
	if (lfd >= 0)
		close(lfd);
	closedir(d);
	free(e);
	free(lock);
	free(dir);
}
