/* spawn.c: execd's side of starting a job's shepherd: through the starter, else as a program of its own.
 *
 * The starter (starter.c) is started once and found again by a restarted
 * execd through SPOOL/starter.sock; each job costs it one fork.  Should it
 * not answer, execd starts a new one and sends the order again; should
 * that fail too (a spool path too long for a socket's name, no processes
 * left), the shepherd is started the old way, vfork and exec of
 * nowq-shepherd, which costs one process start more but starts the job. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "execd/execd.h"

extern char **environ;

/* The shepherd program, found once at start-up. */
static char *shepherd_path;
/* The connection to the starter, and the starter's pid while it is our
 * child (0 when an earlier execd started it). */
static int   starter_conn = -1;
static pid_t starter_pid;

int
spawn_find(void)
{
	char *self, *cand[2];
	int k = 0;

	/* Beside execd first: the build tree, and an installation moved
	 * whole; then where make install put it. */
	if ((self = exe_dir()) != NULL) {
		cand[k++] = xasprintf("%s/%s", self, SHEPHERD_PROGRAM);
		free(self);
	}
	cand[k++] = xasprintf("%s/%s", SBINDIR, SHEPHERD_PROGRAM);
	for (int i = 0; i < k; i++)
		if (!shepherd_path && access(cand[i], X_OK) == 0)
			shepherd_path = cand[i];
		else
			free(cand[i]);
	if (shepherd_path)
		return 0;
	fprintf(stderr, "execd: cannot find the program %s beside execd or in %s\n",
	    SHEPHERD_PROGRAM, SBINDIR);
	return -1;
}

/*
 * Starts nowq-shepherd with argv, handing it keepfd, with vfork and exec:
 * execd's page tables are never copied, and no page of execd's is faulted
 * in by a child.  Not posix_spawn: glibc's resets every signal's
 * disposition in the child, some 130 system calls, where blocking every
 * signal across vfork and exec does the same work (exec resets caught
 * ones; the program sets its own mask).
 */
static pid_t
spawn_program(char **argv, int keepfd)
{
	volatile int child_errno = 0;
	sigset_t all, old;
	int status;
	pid_t pid;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = vfork();
	if (pid == 0) {
		/* Only system calls until exec: the child runs on our memory.
		 * keepfd loses close-on-exec in the child's descriptor table
		 * only (vfork shares memory, not descriptors); the program
		 * sets it again for its own children. */
		if (fcntl(keepfd, F_SETFD, 0) == 0)
			execve(shepherd_path, argv, environ);
		child_errno = errno;
		_exit(127);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid > 0 && child_errno) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		errno = child_errno;
		pid = -1;
	}
	return pid;
}

/* execd.ini's masters, comma-separated, made once: where a job's staged
 * files come from and go (execd/stage.c). */
static char *
spawn_masters_arg(void)
{
	static char *arg;

	if (!arg) {
		arg = xstrdup("");
		for (char **m = conf->masters; m && *m; m++) {
			char *t = xasprintf("%s%s%s", arg, *arg ? "," : "", *m);
			free(arg);
			arg = t;
		}
	}
	return arg;
}

/* A shepherd's arguments: what it needs of execd.ini, and the attempt's
 * key last; lockarg, when set, goes in as -L (a shepherd execd starts). */
static int
spawn_args(char **argv, int max, const char *key, const char *lockarg, char bufs[2][16])
{
	int n = 0;

	snprintf(bufs[0], 16, "%d", conf->kill_grace);
	snprintf(bufs[1], 16, "%d", execd_log_level);
	argv[n++] = (char *)SHEPHERD_PROGRAM;
	argv[n++] = (char *)"-s"; argv[n++] = conf->spool_dir;
	argv[n++] = (char *)"-n"; argv[n++] = conf->name;
	argv[n++] = (char *)"-t"; argv[n++] = conf->tmpdir;
	argv[n++] = (char *)"-k"; argv[n++] = bufs[0];
	argv[n++] = (char *)"-v"; argv[n++] = bufs[1];
	if (lockarg) {
		argv[n++] = (char *)"-L";
		argv[n++] = (char *)lockarg;
	}
	/* A qrsh job's shepherd proves itself to qrsh as execd does to the master. */
	argv[n++] = (char *)"-a"; argv[n++] = conf->auth;
	if (conf->munge_socket) {
		argv[n++] = (char *)"-m";
		argv[n++] = conf->munge_socket;
	}
	if (limits_cgroup_parent) {
		argv[n++] = (char *)"-c";
		argv[n++] = limits_cgroup_parent;
	}
	if (execd_log_path) {
		argv[n++] = (char *)"-l";
		argv[n++] = execd_log_path;
	}
	argv[n++] = (char *)"-M";
	argv[n++] = spawn_masters_arg();
	argv[n++] = (char *)"--";
	argv[n++] = (char *)key;
	argv[n] = NULL;
	assert(n < max);
	return n;
}

static socklen_t
spawn_starter_addr(struct sockaddr_un *sun)
{
	char *path = execd_path(STARTER_SOCKET);
	size_t len = strlen(path);

	memset(sun, 0, sizeof *sun);
	sun->sun_family = AF_UNIX;
	if (len >= sizeof sun->sun_path) {
		free(path);
		return 0;
	}
	memcpy(sun->sun_path, path, len);
	free(path);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
}

static int
spawn_connect(const struct sockaddr_un *sun, socklen_t len)
{
	/* A starter answers at once: one that does not within 10 s is stuck
	 * and is given up for a new one. */
	struct timeval tv = { 10, 0 };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)sun, len) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Binds the socket and starts a starter on it; the connection is made
 * before it runs (the backlog holds it). */
static int
spawn_starter_start(const struct sockaddr_un *sun, socklen_t len)
{
	char fdbuf[16], levelbuf[16];
	char *argv[12];
	int n = 0, lfd, fd;
	pid_t pid;

	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	unlink(sun->sun_path);
	if (lfd < 0 || bind(lfd, (const struct sockaddr *)sun, len) < 0 ||
	    chmod(sun->sun_path, 0600) < 0 || listen(lfd, 16) < 0) {
		log_warn("cannot make the starter's socket %s", sun->sun_path);
		if (lfd >= 0)
			close(lfd);
		return -1;
	}
	snprintf(fdbuf, sizeof fdbuf, "%d", lfd);
	snprintf(levelbuf, sizeof levelbuf, "%d", execd_log_level);
	argv[n++] = (char *)SHEPHERD_PROGRAM;
	argv[n++] = (char *)STARTER_OPTION;
	argv[n++] = (char *)"-s"; argv[n++] = conf->spool_dir;
	argv[n++] = (char *)"-S"; argv[n++] = fdbuf;
	argv[n++] = (char *)"-v"; argv[n++] = levelbuf;
	if (execd_log_path) {
		argv[n++] = (char *)"-l";
		argv[n++] = execd_log_path;
	}
	argv[n] = NULL;
	pid = spawn_program(argv, lfd);
	fd = pid > 0 ? spawn_connect(sun, len) : -1;
	close(lfd);
	if (pid < 0)
		log_warn("cannot start the starter %s", shepherd_path);
	else
		log_info("started the starter (pid %d)", (int)pid);
	if (pid > 0)
		starter_pid = pid;
	return fd;
}

/* The starter's connection: the one we have, the running starter's (an
 * earlier execd's), or a new starter's. */
static int
spawn_starter(bool fresh)
{
	struct sockaddr_un sun;
	socklen_t len;

	if (starter_conn >= 0 && !fresh)
		return starter_conn;
	if (starter_conn >= 0)
		close(starter_conn);
	starter_conn = -1;
	if ((len = spawn_starter_addr(&sun)) == 0)
		return -1;
	if (!fresh && (starter_conn = spawn_connect(&sun, len)) >= 0) {
		log_info("found the starter again on %s", sun.sun_path);
		return starter_conn;
	}
	return starter_conn = spawn_starter_start(&sun, len);
}

void
spawn_init(void)
{
	spawn_starter(false);
}

void
spawn_stop(void)
{
	if (starter_conn >= 0)
		close(starter_conn);
	starter_conn = -1;
}

/* One order to the starter: the shepherd's pid; 0 when the starter went
 * away before answering (whether the shepherd runs, its lock on the
 * folder tells); -1 (errno) when it could not fork; -2 when the order
 * could not be sent (no starter there any more). */
static pid_t
spawn_order(int fd, char *const *argv, int dirfd)
{
	char buf[STARTER_MSG_MAX];
	union {
		struct cmsghdr hdr;
		char           space[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { buf, 0 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
	    .msg_control = cm.space, .msg_controllen = sizeof cm.space };
	struct cmsghdr *c;
	int reply;
	ssize_t n;

	for (int i = 0; argv[i]; i++) {
		size_t l = strlen(argv[i]) + 1;
		if (iov.iov_len + l > sizeof buf) {
			errno = E2BIG;
			return -1;
		}
		memcpy(buf + iov.iov_len, argv[i], l);
		iov.iov_len += l;
	}
	memset(&cm, 0, sizeof cm);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &dirfd, sizeof dirfd);
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0)
		return -2;
	while ((n = recv(fd, &reply, sizeof reply, 0)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof reply)
		return 0;
	if (reply < 0) {
		errno = -reply;
		return -1;
	}
	return (pid_t)reply;
}

pid_t
spawn_shepherd(const char *key, int dirfd)
{
	char bufs[2][16], lockbuf[16];
	char *argv[32];
	pid_t pid = -1;
	int fd;

	spawn_args(argv, 32, key, NULL, bufs);
	/* A starter that is gone (the order cannot be sent) is replaced once. */
	for (int tries = 0; tries < 2 && (pid == -1 || pid == -2); tries++) {
		if ((fd = spawn_starter(tries > 0)) < 0)
			break;
		if ((pid = spawn_order(fd, argv, dirfd)) == 0) {
			log_warnx("the starter did not answer for job %s; the next job starts a new one", key);
			spawn_stop();
			return 0;
		}
		if (pid == -1) {
			log_warn("the starter could not start the shepherd of job %s", key);
			break;
		}
	}
	if (pid > 0)
		return pid;
	snprintf(lockbuf, sizeof lockbuf, "%d", dirfd);
	spawn_args(argv, 32, key, lockbuf, bufs);
	if ((pid = spawn_program(argv, dirfd)) < 0)
		log_warn("cannot start the shepherd %s for job %s", shepherd_path, key);
	return pid;
}

bool
spawn_is_starter(pid_t pid)
{
	return starter_pid > 0 && pid == starter_pid;
}

bool
spawn_reaped(pid_t pid, int status)
{
	if (!spawn_is_starter(pid))
		return false;
	starter_pid = 0;
	/* Its shepherds became our children (we are a subreaper), and the
	 * next job starts a new starter: not at once, which a starter that
	 * cannot run would turn into a loop. */
	log_warnx("the starter (pid %d) ended (%s %d); its shepherds are ours now",
	    (int)pid, WIFSIGNALED(status) ? "signal" : "exit status",
	    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	spawn_stop();
	return true;
}
