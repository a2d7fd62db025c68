/* spooldir.c: durable files in spool directories: atomic replacement, directory sync, creation, privacy and removal of trees. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"

/* The directory holding path ("." for a bare name), freshly allocated. */
static char *
spool_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	char *d = xstrdup(path);
	d[slash - path] = '\0';
	return d;
}

int
spool_fsync_dir(const char *dir)
{
	int fd, rc, e;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	rc = fsync(fd);
	e = errno;
	close(fd);
	/* Some file systems cannot sync a directory and say EINVAL: nothing
	 * more can be done there, and the rename itself still happened. */
	if (rc < 0 && e == EINVAL)
		rc = 0;
	errno = e;
	return rc;
}

/*
 * A reader sees the old content or the new one, never a mix, and once this
 * returns 0 the new content survives a power cut: the data is synced before
 * the rename makes it visible, and the directory after, so the rename is on
 * disk too.  The temporary name carries the pid so two processes writing the
 * same file never share a temporary.
 */
int
spool_write_atomic(const char *path, const void *data, size_t n, int mode)
{
	return spool_write_file(path, data, n, mode, true);
}

/* The umask must not weaken or widen what the caller asked for. */
static int
spool_fill(int fd, const void *data, size_t n, int mode, bool durable)
{
	const char *p = data;

	if (fchmod(fd, (mode_t)(mode & 07777)) < 0)
		return -1;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return durable ? fsync(fd) : 0;
}

/* Gives the unnamed file fd the name path; EEXIST if path exists. */
static int
spool_link_fd(int fd, const char *path)
{
	char proc[64];

	if (linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno == EEXIST)
		return -1;
	/* Without CAP_DAC_READ_SEARCH, the same through /proc. */
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
}

/* The classic way: write NAME.tmp.PID, then rename it over path. */
static int
spool_write_renamed(const char *path, const void *data, size_t n, int mode, bool durable)
{
	char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
	int fd, e;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
	if (fd < 0)
		goto fail;
	if (spool_fill(fd, data, n, mode, durable) < 0) {
		e = errno;
		close(fd);
		errno = e;
		goto fail_unlink;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0)
		goto fail_unlink;
	free(tmp);
	return 0;

fail_unlink:
	e = errno;
	unlink(tmp);
	errno = e;
fail:
	e = errno;
	free(tmp);
	errno = e;
	return -1;
}

/*
 * A new file is written unnamed (O_TMPFILE) and linked in whole: no
 * temporary name to create and rename away, which on ext4 is a directory
 * entry and, when durable, two more writes of the directory.  Replacing an
 * existing file, or a file system without O_TMPFILE, takes the classic way.
 */
int
spool_write_file(const char *path, const void *data, size_t n, int mode, bool durable)
{
	char *dir = spool_dirname(path), *tmp;
	int fd, e, rc = -1;

	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode & 07777);
	if (fd < 0) {
		if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
			goto out;
		rc = spool_write_renamed(path, data, n, mode, durable);
	} else if (spool_fill(fd, data, n, mode, durable) == 0) {
		if ((rc = spool_link_fd(fd, path)) < 0 && errno == EEXIST) {
			/* Replace it: a temporary name is needed after all. */
			tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
			if ((rc = spool_link_fd(fd, tmp)) == 0 && (rc = rename(tmp, path)) < 0) {
				e = errno;
				unlink(tmp);
				errno = e;
			}
			free(tmp);
		}
	}
	if (fd >= 0) {
		e = errno;
		close(fd);
		errno = e;
	}
	if (rc == 0 && durable)
		rc = spool_fsync_dir(dir);
out:
	e = errno;
	free(dir);
	errno = e;
	return rc;
}

int
spool_mkdir_p(const char *path, int mode)
{
	char *buf, *p;
	struct stat sb;
	int e;

	if (!path || !*path) {
		errno = ENOENT;
		return -1;
	}
	buf = xstrdup(path);
	/* Create each ancestor in turn; one that exists already is fine as
	 * long as it is a directory (or a link to one). */
	for (p = buf; *p == '/'; p++)
		;
	while (*p) {
		char *q = p, c;
		while (*q && *q != '/')
			q++;
		c = *q;
		*q = '\0';
		if (mkdir(buf, (mode_t)mode) < 0) {
			e = errno;
			if (e != EEXIST || stat(buf, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
				free(buf);
				errno = e == EEXIST ? ENOTDIR : e;
				return -1;
			}
		}
		*q = c;
		for (p = q; *p == '/'; p++)
			;
	}
	free(buf);
	return 0;
}

static int
spool_rmtree_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	int rc;

	/* FTW_PHYS reports a symbolic link as FTW_SL and never enters it, so
	 * unlinking removes the link, not what it points to. */
	if (type == FTW_DP || type == FTW_DNR)
		rc = rmdir(path);
	else
		rc = unlink(path);
	if (rc < 0 && errno == ENOENT)
		rc = 0;
	return rc < 0 ? -1 : 0;
}

int
spool_rmtree(const char *path)
{
	struct stat sb;

	if (lstat(path, &sb) < 0)
		return errno == ENOENT ? 0 : -1;
	return nftw(path, spool_rmtree_one, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

/* nftw passes no argument through to its callback. */
static struct {
	int     dirmode;
	int     count;
	char   *why;
	size_t  whylen;
} priv;

/* Only ever takes bits away: a folder a job owner must traverse keeps its
 * x for others (dirmode 0711), a script its owner's x. */
static int
spool_private_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	mode_t keep, now = sb->st_mode & 07777;

	if (type == FTW_D)
		keep = now & (mode_t)priv.dirmode;
	else if (type == FTW_F)
		keep = now & 0700;
	else if (type == FTW_DNR || type == FTW_NS) {
		snprintf(priv.why, priv.whylen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	} else
		return 0;   /* a symbolic link or a socket: nothing to read through it */
	if (keep == now)
		return 0;
	if (chmod(path, keep) < 0) {
		snprintf(priv.why, priv.whylen, "cannot make %s (owner uid %u, mode %04o) private to "
		    "uid %u: %s", path, (unsigned)sb->st_uid, (unsigned)now, (unsigned)geteuid(),
		    strerror(errno));
		return -1;
	}
	priv.count++;
	return 0;
}

int
spool_make_private(const char *dir, int dirmode, char *why, size_t whylen)
{
	char *real;
	int rc;

	if (spool_mkdir_p(dir, 0755) < 0) {
		snprintf(why, whylen, "cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	/* A spool may be a link to a folder elsewhere: walk the folder. */
	if ((real = realpath(dir, NULL)) == NULL) {
		snprintf(why, whylen, "cannot resolve %s: %s", dir, strerror(errno));
		return -1;
	}
	priv.dirmode = dirmode;
	priv.count = 0;
	priv.why = why;
	priv.whylen = whylen;
	why[0] = '\0';
	/* A folder is tightened before nftw opens it to read what it holds. */
	rc = nftw(real, spool_private_one, 16, FTW_PHYS);
	if (rc != 0 && !why[0])
		snprintf(why, whylen, "cannot walk %s: %s", real, strerror(errno));
	free(real);
	return rc != 0 ? -1 : priv.count;
}
