/* stage.c: the shepherd's file staging: inputs fetched into the host's cache, a fresh working directory, outputs sent back.
 *
 * The cache, SPOOL/stage/SHA256, is root's and private: tasks of an array
 * on one host take one copy from the master (a lock per file makes the
 * others wait for the first), and each job gets its own copy in its working
 * directory.  Every fetch from the master is one line of SPOOL/stage/fetched.log.
 * Outputs are opened one path component at a time with O_NOFOLLOW, from
 * the working directory down: a symbolic link, a file of someone else or
 * one with other hard links is refused, so a job cannot make the shepherd
 * (root) read what its owner may not. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/msg.h"
#include "execd/execd.h"

/* An input at least this large fetched into the cache is copied into the
 * job's directory as it comes (stage_tail_run), which looks for new
 * bytes this often when it has caught up. */
#define STAGE_TAIL_MIN     (16 * 1024 * 1024)
#define STAGE_TAIL_POLL_MS 5

static pid_t stage_tail_start(int from, int to, int *ctl);
static bool stage_tail_end(pid_t child, int ctl, int64_t size);

/* SPOOL/stage/SHA256 holds the file, fetched now if it is not there yet;
 * on failure *host_fault says whose it is (stage_in_run).  A large file
 * fetched now is also copied into to, the job's file, as it comes
 * (stage_tail_start): *copied says whether that copy is whole. */
static int
stage_cache_get(const struct job *j, const struct stage_file *f, int to, bool *copied,
    char *why, size_t n, bool *host_fault)
{
	char *path = execd_path("stage/%s", f->sha256), *lock = xasprintf("%s.lock", path);
	char *tmp = NULL, *logp, err[400];
	struct stat st;
	int lfd = -1, fd = -1, rc = -1, ctl = -1;
	pid_t tail = -1;
	FILE *log;

	*copied = false;

	if ((lfd = open(lock, O_CREAT | O_RDWR | O_CLOEXEC, 0600)) < 0 || flock(lfd, LOCK_EX) < 0) {
		snprintf(why, n, "stage-in: cannot lock %s: %s", lock, strerror(errno));
		goto out;
	}
	if (stat(path, &st) == 0 && st.st_size == f->size) {
		utimensat(AT_FDCWD, path, NULL, 0);
		rc = 0;
		goto out;
	}
	/* One name per file, kept when a fetch fails: the next try (this
	 * shepherd's after a master restart, or another job's after this
	 * one died) goes on from the bytes it holds (stage_get_fd). */
	tmp = xasprintf("%s.part", path);
	if ((fd = open(tmp, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0) {
		snprintf(why, n, "stage-in: cannot write the cache %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (f->size >= STAGE_TAIL_MIN)
		tail = stage_tail_start(fd, to, &ctl);
	err[0] = '\0';
	if (stage_get_fd(j->id, f->sha256, f->size, fd, err, sizeof err) < 0) {
		*host_fault = stage_get_host_fault();
		snprintf(why, n, "stage-in: %.60s: %.400s", f->name, err);
		goto out;
	}
	if (fsync(fd) < 0 || rename(tmp, path) < 0) {
		snprintf(why, n, "stage-in: %.60s: cannot store it in the cache: %.300s", f->name,
		    strerror(errno));
		goto out;
	}
	logp = execd_path("stage/fetched.log");
	if ((log = fopen(logp, "ae")) != NULL) {
		fprintf(log, "%s %lld %lld.%d", f->sha256, (long long)f->size, (long long)j->id, j->task);
		if (stage_get_resumed())
			fprintf(log, " resumed %lld", (long long)stage_get_resumed());
		fputc('\n', log);
		fclose(log);
	}
	free(logp);
	rc = 0;
out:
	/* The copy made as the bytes came is the file's only if they were
	 * never cut short to start again (stage_get_restarted). */
	if (tail > 0)
		*copied = stage_tail_end(tail, ctl, rc == 0 && !stage_get_restarted() ? f->size : -1);
	if (fd >= 0)
		close(fd);
	if (lfd >= 0)
		close(lfd);
	free(tmp);
	free(lock);
	free(path);
	return rc;
}

/* [off, end) of from copied to the same place in to by copy_file_range,
 * a slice at a time; with drop, the cache's pages are let go behind it
 * (stage_drop_behind), so the copy's new pages are mostly the ones just
 * freed.  1: the kernel cannot here (a cache and a TMPDIR on different
 * file systems); -1 and errno. */
static int
stage_copy_range(int from, int to, int64_t off, int64_t end, bool drop)
{
	int64_t start = off;

	while (off < end) {
		loff_t in = off, out = off;
		ssize_t r = copy_file_range(from, &in, to, &out,
		    (size_t)(end - off < STAGE_WRITEBACK ? end - off : STAGE_WRITEBACK), 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return off == start && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
			    errno == EOPNOTSUPP) ? 1 : -1;
		if (r == 0) {
			errno = EIO;   /* shorter than it was */
			return -1;
		}
		off += r;
		if (drop)
			stage_drop_behind(from, off);
	}
	return 0;
}

/* from, the cache's file, copied into to, the job's, which stays cached
 * as the job is about to read it: by copy_file_range where the kernel
 * can, else by read and write. */
static int
stage_copy(int from, int to)
{
	static char buf[1 << 16];
	struct stat st;
	ssize_t r;
	int rc;

	if (fstat(from, &st) < 0 || (rc = stage_copy_range(from, to, 0, st.st_size, true)) < 0)
		return -1;
	if (rc == 0)
		return 0;
	while ((r = read(from, buf, sizeof buf)) != 0) {
		char *p = buf;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		while (r > 0) {
			ssize_t w = write(to, p, (size_t)r);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -1;
			p += w;
			r -= w;
		}
	}
	return 0;
}

/*
 * The job's copy made while the file comes.  Filling the copy's new
 * page-cache pages is most of a large input's cost on this kind of
 * virtual machine (BENCHMARKS.md, "File staging"), and the fetch keeps
 * one CPU busy: so a child copies the bytes from the cache's .part file
 * into the job's file as they land, on the other CPU, and the job's copy
 * is done about when the fetch is.  The child follows the file's size
 * until the shepherd sends it the end on ctl (a socket: no SIGPIPE);
 * without it (a failed or restarted fetch) it stops, and the copy is
 * made again afterwards from the cache as for a file found there.
 */
static int
stage_tail_run(int from, int to, int ctl)
{
	int64_t pos = 0, end = -1;

	for (;;) {
		struct pollfd pfd = { .fd = ctl, .events = POLLIN };
		struct stat st;
		int64_t upto;

		if (fstat(from, &st) < 0 || st.st_size < pos)
			return 1;
		upto = end >= 0 && end < st.st_size ? end : st.st_size;
		if (upto > pos) {
			if (stage_copy_range(from, to, pos, upto, false) != 0)
				return 1;
			pos = upto;
			continue;
		}
		if (end >= 0)
			return pos == end ? 0 : 1;
		if (poll(&pfd, 1, STAGE_TAIL_POLL_MS) > 0 &&
		    (read(ctl, &end, sizeof end) != sizeof end || end < 0))
			return 1;
	}
}

/* The child copying from into to as it grows; -1 (and the copy left to
 * stage_copy) when there is none. */
static pid_t
stage_tail_start(int from, int to, int *ctl)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	if ((pid = fork()) == 0) {
		close(sv[0]);
		/* A shepherd killed meanwhile (qdel) takes its copy along. */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(stage_tail_run(from, to, sv[1]));
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -1;
	}
	*ctl = sv[0];
	return pid;
}

/* The child told the file's size (-1: the copy is not wanted), waited for;
 * whether its copy is whole. */
static bool
stage_tail_end(pid_t child, int ctl, int64_t size)
{
	bool told = size >= 0 && send(ctl, &size, sizeof size, MSG_NOSIGNAL) == sizeof size;
	int status;

	close(ctl);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return told && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* DIR/NAME's folders made below dfd (which we made and own), each the job
 * owner's; the folder's descriptor, or -1. */
static int
stage_parent(const struct job *j, bool root, int dfd, char *name, char **last)
{
	int cur = dup(dfd);
	char *s, *p = name;

	while (cur >= 0 && (s = strchr(p, '/')) != NULL) {
		int next;
		*s = '\0';
		if (mkdirat(cur, p, 0700) == 0 && root)
			fchownat(cur, p, j->uid, j->gid, AT_SYMLINK_NOFOLLOW);
		next = openat(cur, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		*s = '/';
		close(cur);
		cur = next;
		p = s + 1;
	}
	*last = p;
	return cur;
}

/* The job's file for input f, made empty below dfd; -1 and why. */
static int
stage_place_open(const struct job *j, bool root, int dfd, const struct stage_file *f, char *why,
    size_t n)
{
	char *name = xstrdup(f->name), *last;
	int dir, to = -1;

	if ((dir = stage_parent(j, root, dfd, name, &last)) >= 0)
		to = openat(dir, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (to < 0)
		snprintf(why, n, "stage-in: cannot place %s in the working directory: %s", f->name,
		    strerror(errno));
	if (dir >= 0)
		close(dir);
	free(name);
	return to;
}

/* to, the job's file, filled from the cache unless copied already, then
 * the owner's. */
static int
stage_place(const struct job *j, bool root, int to, bool copied, const struct stage_file *f,
    char *why, size_t n)
{
	char *cache = execd_path("stage/%s", f->sha256);
	int from = -1, rc = -1;

	/* The submitter's mode bits (an executable stays one); the folder,
	 * 0700, keeps the file the owner's alone whatever they say. */
	if ((!copied && ((from = open(cache, O_RDONLY | O_CLOEXEC)) < 0 || ftruncate(to, 0) < 0 ||
	    stage_copy(from, to) < 0)) || (root && fchown(to, j->uid, j->gid) < 0) ||
	    (f->mode && fchmod(to, (mode_t)f->mode) < 0))
		snprintf(why, n, "stage-in: cannot place %s in the working directory: %s", f->name,
		    strerror(errno));
	else
		rc = 0;
	if (from >= 0)
		close(from);
	free(cache);
	return rc;
}

/* The job's fresh working directory (in *wd), its inputs in it, the
 * owner's once complete; NULL, or why. */
static const char *
stage_in_place(const struct job *j, const char *key, bool root, char **wd, bool *host_fault)
{
	static char why[512];
	char *path;
	struct stage_file f;
	size_t i;
	json_t *v;
	int dfd;

	path = xasprintf("%s/nowq.%s.wd.XXXXXX", conf->tmpdir, key);
	if (!mkdtemp(path) || (dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		snprintf(why, sizeof why, "stage-in: cannot create a working directory in %s: %s",
		    conf->tmpdir, strerror(errno));
		free(path);
		return why;
	}
	/* Each file's place made first, so that a file fetched now is copied
	 * there as it comes (stage_cache_get). */
	json_array_foreach(j->stage_in, i, v) {
		int to;
		bool copied;
		stage_file_unpack(v, &f);
		if ((to = stage_place_open(j, root, dfd, &f, why, sizeof why)) < 0 ||
		    stage_cache_get(j, &f, to, &copied, why, sizeof why, host_fault) < 0 ||
		    stage_place(j, root, to, copied, &f, why, sizeof why) < 0) {
			if (to >= 0)
				close(to);
			close(dfd);
			execd_tmpdir_remove(path, j);
			free(path);
			return why;
		}
		close(to);
	}
	if (root && fchown(dfd, j->uid, j->gid) < 0) {
		snprintf(why, sizeof why, "stage-in: cannot give the working directory to uid %u: %s",
		    (unsigned)j->uid, strerror(errno));
		close(dfd);
		execd_tmpdir_remove(path, j);
		free(path);
		return why;
	}
	close(dfd);
	*wd = path;
	return NULL;
}

/* stage_in_place with the cache's lock held shared, so that execd's trim
 * (execd/cache.c) removes nothing between a fetch and its copy. */
const char *
stage_in_run(const struct job *j, const char *key, bool root, char **wd, bool *host_fault)
{
	static char why[512];
	char *cache = execd_path("stage"), *lock = execd_path("%s", STAGE_CACHE_LOCK);
	const char *rc = why;
	int lfd = -1;

	/* Anything but the master's refusal or its corrupt file is the host's. */
	*host_fault = true;
	if (mkdir(cache, 0700) < 0 && errno != EEXIST)
		snprintf(why, sizeof why, "stage-in: cannot create %s: %s", cache, strerror(errno));
	else if ((lfd = open(lock, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0 ||
	    flock(lfd, LOCK_SH) < 0)
		snprintf(why, sizeof why, "stage-in: cannot lock %s: %s", lock, strerror(errno));
	else
		rc = stage_in_place(j, key, root, wd, host_fault);
	if (lfd >= 0)
		close(lfd);
	free(lock);
	free(cache);
	return rc;
}

/* ---- stage-out ---- */

struct stage_out {
	const struct job *j;
	bool    root;
	json_t *files;       /* [{name, size, sha256}] sent */
	char   *why;         /* the first refusal, or "" */
	size_t  n;
};

static void stage_out_fd(struct stage_out *so, int fd, const char *rel, const char *as);

static void
stage_refuse(struct stage_out *so, const char *rel, const char *what)
{
	log_warnx("job %lld: stage-out refused %s: %s", (long long)so->j->id, rel, what);
	if (!so->why[0])
		snprintf(so->why, so->n, "stage-out refused %s: %s", rel, what);
}

static void
stage_out_dir(struct stage_out *so, int fd, const char *rel, const char *as)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;

	if (!d) {
		close(fd);
		stage_refuse(so, rel, strerror(errno));
		return;
	}
	while ((e = readdir(d)) != NULL) {
		char *r, *a;
		int sub;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		r = xasprintf("%s/%s", rel, e->d_name);
		a = xasprintf("%s/%s", as, e->d_name);
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (sub < 0)
			stage_refuse(so, r, errno == ELOOP ? "a symbolic link" : strerror(errno));
		else
			stage_out_fd(so, sub, r, a);
		free(r);
		free(a);
	}
	closedir(d);
}

static void
stage_out_send(struct stage_out *so, int fd, const char *rel, const char *as, mode_t mode)
{
	char sha[SHA256_HEX + 1], err[400];
	int64_t size;

	if (sha256_fd(fd, sha, &size) < 0) {
		stage_refuse(so, rel, strerror(errno));
		return;
	}
	if (stage_put_fd(fd, sha, size, size, err, sizeof err) < 0) {
		stage_refuse(so, rel, err);
		return;
	}
	json_array_append_new(so->files, stage_file_pack(&(struct stage_file){ .name = as,
	    .size = size, .sha256 = sha, .mode = mode & 0777 }));
}

/* fd: rel opened without following a link; sent as as. */
static void
stage_out_fd(struct stage_out *so, int fd, const char *rel, const char *as)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		stage_refuse(so, rel, strerror(errno));
		close(fd);
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		stage_out_dir(so, fd, rel, as);
		return;
	}
	if (!S_ISREG(st.st_mode))
		stage_refuse(so, rel, "neither a file nor a folder");
	else if (so->root && st.st_uid != so->j->uid)
		stage_refuse(so, rel, "not the job owner's file");
	else if (st.st_nlink != 1)
		stage_refuse(so, rel, "a file with other hard links");
	else if (json_array_size(so->files) >= STAGE_MAX_FILES)
		stage_refuse(so, rel, "more than 10000 files");
	else
		stage_out_send(so, fd, rel, as, st.st_mode);
	close(fd);
}

/* rel below the working directory wfd, each component opened without
 * following a link. */
static void
stage_out_path(struct stage_out *so, int wfd, const char *rel, const char *as)
{
	char *copy = xstrdup(rel), *p = copy, *s;
	int cur = dup(wfd), next;

	while (cur >= 0 && (s = strchr(p, '/')) != NULL) {
		*s = '\0';
		next = openat(cur, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(cur);
		cur = next;
		p = s + 1;
	}
	bool last = cur >= 0;

	if (last) {
		next = openat(cur, p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		close(cur);
		cur = next;
	}
	if (cur < 0 && (errno == ELOOP || errno == ENOTDIR))
		stage_refuse(so, rel, last ? "a symbolic link" : "a symbolic link on its path");
	else if (cur < 0)
		stage_refuse(so, rel, strerror(errno));
	else
		stage_out_fd(so, cur, rel, as);
	free(copy);
}

static void
stage_out_pattern(struct stage_out *so, int wfd, const char *wd, const char *pat)
{
	char *full;
	glob_t g;

	if (!strpbrk(pat, "*?[")) {
		char *as = stage_task_name(pat, so->j->task);
		stage_out_path(so, wfd, pat, as);
		free(as);
		return;
	}
	full = xasprintf("%s/%s", wd, pat);
	if (glob(full, GLOB_NOSORT, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			const char *rel = g.gl_pathv[i] + strlen(wd) + 1;
			char *as = stage_task_name(rel, so->j->task);
			stage_out_path(so, wfd, rel, as);
			free(as);
		}
		globfree(&g);
	}
	free(full);
}

/* Grid Engine's default output files, which land in the working directory
 * when -o and -e say nothing: they come back too, under their own names. */
static void
stage_out_defaults(struct stage_out *so, int wfd)
{
	const struct job *j = so->j;
	char task[16] = "";

	if (j->task > 0)
		snprintf(task, sizeof task, ".%d", j->task);
	for (int k = 0; k < 2; k++) {
		char *name;
		if ((k == 0 && j->out_path) || (k == 1 && (j->err_path || j->join)))
			continue;
		name = xasprintf("%s.%c%lld%s", jobenv_name(j), k == 0 ? 'o' : 'e', (long long)j->id, task);
		if (faccessat(wfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			stage_out_path(so, wfd, name, name);
		free(name);
	}
}

/* After the job: its outputs sent to the master, into end's staged_out
 * (a new list, the caller's); a refusal ends the job failed with the
 * reason (end's limit, a copy the caller owns, unless it had one). */
void
stage_out_run(const struct job *j, const char *wd, bool root, struct msg_child_term *end)
{
	char why[512] = "";
	struct stage_out so = { .j = j, .root = root, .files = json_array(), .why = why,
	    .n = sizeof why };
	int wfd = open(wd, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (wfd < 0)
		stage_refuse(&so, wd, strerror(errno));
	else {
		for (char **p = j->stage_out; p && *p; p++)
			stage_out_pattern(&so, wfd, wd, *p);
		stage_out_defaults(&so, wfd);
		close(wfd);
	}
	end->staged_out = so.files;
	if (why[0] && !end->limit)
		end->limit = xstrdup(why);
}
