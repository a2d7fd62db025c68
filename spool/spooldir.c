/* spooldir.c: durable files in spool directories: atomic replacement, directory sync, creation and removal of trees. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "spool/spool.h"

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

int
spool_write_file(const char *path, const void *data, size_t n, int mode, bool durable)
{
	char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
	char *dir = NULL;
	const char *p = data;
	int fd, e;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
	if (fd < 0)
		goto fail;
	/* The umask must not weaken or widen what the caller asked for. */
	if (fchmod(fd, (mode_t)(mode & 07777)) < 0)
		goto fail_fd;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			goto fail_fd;
		}
		p += w;
		n -= (size_t)w;
	}
	if (durable && fsync(fd) < 0)
		goto fail_fd;
	if (close(fd) < 0) {
		fd = -1;
		goto fail_unlink;
	}
	fd = -1;
	if (rename(tmp, path) < 0)
		goto fail_unlink;
	dir = spool_dirname(path);
	if (durable && spool_fsync_dir(dir) < 0)
		goto fail;
	free(dir);
	free(tmp);
	return 0;

fail_fd:
	e = errno;
	close(fd);
	errno = e;
fail_unlink:
	e = errno;
	unlink(tmp);
	errno = e;
fail:
	e = errno;
	free(dir);
	free(tmp);
	errno = e;
	return -1;
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
