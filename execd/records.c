/* records.c: what execd and its shepherd both write in the spool and do to a job's leftovers.
 *
 * Paths in the spool, whole files, the outbox's event files, the wake-up
 * datagram; the leftovers are a job's processes and its TMPDIR. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/msg.h"
#include "execd/execd.h"

/* Set by execd from execd.ini, and by the shepherd from its arguments. */
struct execd_conf *conf;
char  *execd_log_path;
int    execd_log_level = LOG_LVL_INFO;

char *
execd_path(const char *fmt, ...)
{
	char *rel, *p;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&rel, fmt, ap) < 0)
		fatalx("out of memory");
	va_end(ap);
	p = xasprintf("%s/%s", conf->spool_dir, rel);
	free(rel);
	return p;
}

int
execd_write_file(const char *path, const char *text, int mode, bool durable)
{
	size_t n = strlen(text);
	ssize_t w;
	int fd, e;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode & 07777)) < 0)
		return -1;
	/* The umask must not weaken or widen what the caller asked for. */
	errno = EIO;    /* for a short write */
	if (fchmod(fd, (mode_t)(mode & 07777)) < 0 || (w = write(fd, text, n)) < 0 ||
	    (size_t)w != n || (durable && fsync(fd) < 0)) {
		e = errno;
		close(fd);
		unlink(path);
		errno = e;
		return -1;
	}
	return close(fd);
}

void
active_key(char *buf, size_t len, int64_t id, int task, int attempt, int petask)
{
	if (petask > 0)
		snprintf(buf, len, "%" PRId64 ".%d.%d.%d", id, task, attempt, petask);
	else
		snprintf(buf, len, "%" PRId64 ".%d.%d", id, task, attempt);
}

/* Only the canonical spelling counts, so a key names one folder.  A
 * qrsh -inherit task of a parallel job's attempt has a fourth number. */
bool
active_key_parse(const char *s, struct akey *k)
{
	long long a;
	int b, c, d = 0, n = 0;
	char again[ATTEMPT_KEY_MAX];

	if (strlen(s) >= ATTEMPT_KEY_MAX || s[0] == '-' ||
	    sscanf(s, "%lld.%d.%d%n", &a, &b, &c, &n) != 3 || a < 0 || b < 0 || c < 0)
		return false;
	if (s[n] == '.' && (sscanf(s + n, ".%d%n", &d, &n) != 1 || d <= 0))
		return false;
	active_key(again, sizeof again, a, b, c, d);
	if (strcmp(again, s) != 0)
		return false;
	k->id = a;
	k->task = b;
	k->attempt = c;
	k->petask = d;
	return true;
}

static char *
outbox_file(const char *key, const char *kind)
{
	return execd_path("outbox/%s.%s.json", key, kind);
}

int
outbox_write(const char *key, const char *kind, const json_t *msg, bool durable)
{
	char *path = outbox_file(key, kind);
	char *s = json_dumps(msg, JSON_COMPACT);
	int rc, e;

	if (!s)
		fatalx("cannot encode an outbox event");

	rc = spool_write_file(path, s, strlen(s), 0600, durable);
	e = errno;
	if (rc < 0)
		log_warn("cannot write %s", path);
	free(s);
	free(path);
	errno = e;   /* the shepherd waits out ENOSPC */
	return rc;
}

int
outbox_sync(const char *key, const char *kind)
{
	char *path = outbox_file(key, kind), *dir = execd_path("outbox");
	int fd, rc = 0, e = 0;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		/* ENOENT: ACKed and removed, the master holds it. */
		if (errno != ENOENT) {
			rc = -1;
			e = errno;
		}
	} else {
		if (fsync(fd) < 0 || spool_fsync_dir(dir) < 0) {
			rc = -1;
			e = errno;
		}
		close(fd);
	}
	free(path);
	free(dir);
	errno = e;
	return rc;
}

int
outbox_link_reg(const char *key)
{
	char *from = execd_path("active/%s/job.pid", key);
	char *to = execd_path("outbox/%s.%s", key, OUTBOX_REG);
	int rc = link(from, to);

	free(from);
	free(to);
	return rc;
}

json_t *
outbox_reg_msg(const char *key, const char *text)
{
	struct akey k;
	long pid;
	unsigned long long proc_start;
	long long start_ms;

	if (!active_key_parse(key, &k) ||
	    sscanf(text, "%ld %llu %lld", &pid, &proc_start, &start_ms) != 3 || pid <= 1 ||
	    start_ms < 0)
		return NULL;
	return msg_child_register_pack(&(struct msg_child_register){ .id = k.id, .task = k.task,
	    .attempt = k.attempt, .petask = k.petask, .host = conf->name, .pid = pid,
	    .start_time = start_ms });
}

bool
outbox_has(const char *key, const char *kind)
{
	char *path = outbox_file(key, kind);
	bool has = access(path, F_OK) == 0;
	free(path);
	return has;
}

json_t *
outbox_term_msg(const char *key, const struct msg_child_term *end)
{
	struct msg_child_term m = *end;
	struct akey k;

	if (!active_key_parse(key, &k))
		fatalx("no attempt's key: %s", key);
	m.id = k.id;
	m.task = k.task;
	m.attempt = k.attempt;
	m.petask = k.petask;
	m.host = conf->name;
	return msg_child_term_pack(&m);
}

/* The wake-up socket lives in the abstract namespace, named after the
 * spool, so a spool path of any length works and nothing is left behind. */
socklen_t
outbox_notify_addr(struct sockaddr_un *sun)
{
	int n;
	memset(sun, 0, sizeof *sun);
	sun->sun_family = AF_UNIX;
	n = snprintf(sun->sun_path + 1, sizeof sun->sun_path - 1, "nowq-execd-%016llx",
	    (unsigned long long)hash_fnv1a64(conf->spool_dir, strlen(conf->spool_dir)));
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* The shepherd's wake-up call.  Losing it costs only latency: the periodic
 * scan sends what the outbox holds anyway, and a stopped execd reads the
 * outbox when it starts again. */
void
outbox_notify(const char *key, const char *what)
{
	struct sockaddr_un sun;
	socklen_t len = outbox_notify_addr(&sun);
	char buf[ATTEMPT_KEY_MAX + 16];
	int fd, n;

	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) >= 0) {
		n = snprintf(buf, sizeof buf, "%s %s", key, what);
		(void)sendto(fd, buf, (size_t)n, MSG_DONTWAIT, (struct sockaddr *)&sun, len);
		close(fd);
	}
}

bool
shepherd_proc_start(pid_t pid, unsigned long long *start)
{
	char path[64], *s, *p;
	const char *why;
	int field;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((s = read_file(path, 4096, NULL, &why)) == NULL)
		return false;
	/* The command name may hold spaces and parentheses: skip past the
	 * last ')', then field 3 is the state and field 22 the start time. */
	if ((p = strrchr(s, ')')) == NULL || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X') {
		free(s);
		return false;
	}
	p += 2;
	for (field = 3; field < 22 && p; field++)
		if ((p = strchr(p, ' ')) != NULL)
			p++;
	if (!p) {
		free(s);
		return false;
	}
	*start = strtoull(p, NULL, 10);
	free(s);
	return true;
}

bool
job_pid_parse(const char *text, struct job_pid *jp)
{
	long pid;
	int shepherd = 0, off = 0;

	memset(jp, 0, sizeof *jp);
	if (sscanf(text, "%ld %llu %lld %d %n", &pid, &jp->start, &jp->start_ms, &shepherd,
	    &off) < 3 || pid <= 1)
		return false;
	jp->pid = (pid_t)pid;
	jp->shepherd = shepherd > 1 ? (pid_t)shepherd : 0;
	if (off > 0 && text[off] != '\0' && text[off] != '\n') {
		snprintf(jp->tmpdir, sizeof jp->tmpdir, "%s", text + off);
		jp->tmpdir[strcspn(jp->tmpdir, "\n")] = '\0';
	}
	return true;
}

int
proc_kill_where(bool (*match)(const struct proc_ids *p, void *arg), void *arg, int sig)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char path[64], buf[512], *s;
		struct proc_ids p;
		long ppid, pgrp, session;
		ssize_t len;
		int fd;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		p.pid = (pid_t)atol(e->d_name);
		snprintf(path, sizeof path, "/proc/%d/stat", (int)p.pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		len = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		/* "pid (comm) state ppid pgrp session ...": comm may hold anything. */
		if ((s = strrchr(buf, ')')) == NULL ||
		    sscanf(s + 1, " %*c %ld %ld %ld", &ppid, &pgrp, &session) != 3)
			continue;
		p.ppid = (pid_t)ppid;
		p.pgrp = (pid_t)pgrp;
		p.session = (pid_t)session;
		if (match(&p, arg) && kill(p.pid, sig) == 0)
			n++;
	}
	closedir(d);
	return n;
}

/*
 * Removes a job's TMPDIR as its owner, so a job's symlinks can never make
 * root delete anything; root only removes the then-empty folder itself.
 * Most jobs leave TMPDIR empty, and rmdir of an empty folder follows
 * nothing: only a non-empty one needs a child running as the owner, and
 * only when we are not the owner anyway.
 */
void
execd_tmpdir_remove(const char *path, const struct job *j)
{
	pid_t pid;
	int status;

	if (rmdir(path) == 0 || errno == ENOENT)
		return;
	if (geteuid() != 0 || j->uid == geteuid()) {
		if (spool_rmtree(path) < 0 && errno != ENOENT)
			log_warn("cannot remove %s", path);
		return;
	}
	if ((pid = fork()) < 0) {
		log_warn("cannot fork to remove %s", path);
		return;
	}
	if (pid == 0) {
		if (setgroups((size_t)j->ngroups, j->groups) == 0 &&
		    setresgid(j->gid, j->gid, j->gid) == 0 &&
		    setresuid(j->uid, j->uid, j->uid) == 0 && geteuid() == j->uid)
			_exit(spool_rmtree(path) < 0 && errno != ENOENT ? 1 : 0);
		_exit(2);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rmdir(path) < 0 && errno != ENOENT)
		log_warn("cannot remove %s", path);
}
