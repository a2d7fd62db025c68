/* starter.c: the starter, one long-lived process per exec host that forks each job's shepherd for execd.
 *
 * A shepherd started as a program of its own costs a process start per job
 * on top of the job's: exec maps a new image and faults in every page it
 * runs.  The starter is that program started once (nowq-shepherd
 * --starter): per job it forks, and the child, which shares the starter's
 * page tables and warm image, is the job's shepherd (shepherd_run).  It runs
 * in a session of its own, so it outlives execd like the shepherds do;
 * execd finds it again through SPOOL/starter.sock.
 *
 * execd's order is one SOCK_SEQPACKET message: the shepherd's arguments, each
 * ending in a NUL, and the attempt's flocked folder as SCM_RIGHTS; the answer
 * is the shepherd's pid (an int, negative errno when the fork failed).  The
 * socket is execd's user's alone (the spool is 0711, the socket 0600) and
 * the peer's uid is checked as well.  The starter reaps its shepherds and
 * tells execd of one that ended abnormally (a "gone" note), so a shepherd
 * killed before recording its job's end is reported at once rather than by
 * the 10 s scan.  With no execd connected and no shepherd left it exits: a
 * stopped cluster leaves nothing behind. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "execd/execd.h"

struct starter_child {
	pid_t pid;
	char  key[ATTEMPT_KEY_MAX];
};

static struct starter_child *children;
static size_t nchildren, children_cap;
static char *pid_path, *sock_path;
static struct stat sock_st;    /* our socket's file, which execd bound */

/*
 * fork copies the page tables only of mappings that hold anonymous pages:
 * our code, mapped from the file and never written, would be faulted in
 * again by every shepherd, a page (or a fault-around block) at a time.  So
 * each page of it is made a private copy once (written with its own
 * value, the mapping writable for that moment only): every shepherd then
 * starts with our code mapped and faults only on what it writes.
 */
static int
starter_warm_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);

	(void)size;
	(void)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo, hi;
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		lo = (info->dlpi_addr + ph->p_vaddr) & ~(pg - 1);
		hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + pg - 1) & ~(pg - 1);
		if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC) < 0) {
			log_warn("cannot make the starter's code private; shepherds fault it in");
			continue;
		}
		for (uintptr_t p = lo; p < hi; p += pg) {
			volatile char *c = (volatile char *)p;
			*c = *c;
		}
		if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_EXEC) < 0)
			fatal("mprotect");
	}
	return 0;
}

static void
starter_child_add(pid_t pid, const char *key)
{
	if (nchildren == children_cap) {
		children_cap = children_cap ? 2 * children_cap : 16;
		children = xrealloc(children, children_cap * sizeof *children);
	}
	children[nchildren].pid = pid;
	snprintf(children[nchildren].key, sizeof children[nchildren].key, "%s", key);
	nchildren++;
}

/* Reaps every shepherd that ended; one that did not end well may have left
 * its job's end unrecorded, which execd checks at once when told. */
static void
starter_reap(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (size_t i = 0; i < nchildren; i++) {
			if (children[i].pid != pid)
				continue;
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				outbox_notify(children[i].key, STARTER_NOTE_GONE);
			children[i] = children[--nchildren];
			break;
		}
	}
}

/* One order: the arguments in buf (n bytes), the folder's lock in lockfd.
 * Returns the shepherd's pid, or -errno. */
static int
starter_fork(char *buf, size_t n, int lockfd, int sigfd, int conn, int listenfd)
{
	char *argv[STARTER_ARGS_MAX + 1];
	int argc = 0;
	pid_t pid;

	for (size_t off = 0; off < n && argc < STARTER_ARGS_MAX; argc++) {
		argv[argc] = buf + off;
		off += strnlen(buf + off, n - off) + 1;
	}
	argv[argc] = NULL;
	if (argc < 2 || buf[n - 1] != '\0' || lockfd < 0)
		return -EINVAL;
	if ((pid = fork()) < 0)
		return -errno;
	if (pid == 0) {
		/* Ours, not the job's: the shepherd closes every other
		 * descriptor anyway, these first so nothing can reach them. */
		close(sigfd);
		close(conn);
		close(listenfd);
		shepherd_run(argc, argv, lockfd);
	}
	starter_child_add(pid, argv[argc - 1]);
	return pid;
}

/* Reads one order from conn and answers it; false when execd has gone. */
static bool
starter_order(int conn, int sigfd, int listenfd)
{
	char buf[STARTER_MSG_MAX];
	union {
		struct cmsghdr hdr;
		char           space[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { buf, sizeof buf };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
	    .msg_control = cm.space, .msg_controllen = sizeof cm.space };
	struct cmsghdr *c;
	int lockfd = -1, reply;
	ssize_t n;

	n = recvmsg(conn, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&lockfd, CMSG_DATA(c), sizeof lockfd);
	reply = (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ? -EMSGSIZE :
	    starter_fork(buf, (size_t)n, lockfd, sigfd, conn, listenfd);
	if (lockfd >= 0)
		close(lockfd);
	if (reply < 0)
		log_warnx("cannot start a shepherd: %s", strerror(-reply));
	return send(conn, &reply, sizeof reply, MSG_NOSIGNAL) == (ssize_t)sizeof reply;
}

/* A new connection: execd (re)started.  Only execd's user is served. */
static int
starter_accept(int listenfd, int conn)
{
	struct ucred uc;
	socklen_t len = sizeof uc;
	int fd = accept4(listenfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return conn;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0 || uc.uid != geteuid()) {
		log_warnx("refused a connection from uid %d", (int)uc.uid);
		close(fd);
		return conn;
	}
	/* The newest execd is the one: an older connection is a dead one. */
	if (conn >= 0)
		close(conn);
	return fd;
}

/* Alone and idle: our name goes first (if it is still ours, not a later
 * starter's), so no execd can connect in the moment before we exit; one
 * that connected before it is served. */
static void
starter_done(int listenfd)
{
	struct pollfd pf = { .fd = listenfd, .events = POLLIN };
	struct stat st;

	if (sock_path && stat(sock_path, &st) == 0 && st.st_dev == sock_st.st_dev &&
	    st.st_ino == sock_st.st_ino)
		unlink(sock_path);
	free(sock_path);
	sock_path = NULL;
	if (poll(&pf, 1, 0) > 0)
		return;
	if (pidfile_read_live(pid_path) == getpid())
		unlink(pid_path);
	_exit(0);
}

/*
 * nowq-shepherd --starter -s SPOOL -S LISTEN_FD [-v LEVEL] [-l LOG]: execd
 * bound the socket and hands it over, so its first order can be sent (and
 * wait in the socket's backlog) before we run.
 */
void
starter_main(int argc, char **argv)
{
	static struct execd_conf sconf;
	struct pollfd pf[3];
	sigset_t chld;
	int ch, listenfd = -1, sigfd, conn = -1;
	char pid[32];

	conf = &sconf;
	optind = 2;
	while ((ch = getopt(argc, argv, "s:S:v:l:")) != -1) {
		switch (ch) {
		case 's': sconf.spool_dir = optarg; break;
		case 'S': listenfd = shepherd_int_arg(optarg, 3, INT_MAX); break;
		case 'v': execd_log_level = shepherd_int_arg(optarg, 0, 100); break;
		case 'l': execd_log_path = optarg; break;
		default: shepherd_usage();
		}
	}
	if (optind != argc || !sconf.spool_dir || listenfd < 0)
		shepherd_usage();
	setsid();
	/* execd cleared close-on-exec on the socket only to hand it over;
	 * nothing else of execd's is kept. */
	if (listenfd > 3 && close_range(3, (unsigned)listenfd - 1, 0) < 0)
		fatal("close_range");
	if (close_range((unsigned)listenfd + 1, ~0U, 0) < 0)
		fatal("close_range");
	set_cloexec(listenfd);
	log_init_lazy("starter", execd_log_level, execd_log_path);
	/* execd starts us with every signal blocked: SIGCHLD stays so and is
	 * read from a descriptor; SIGTERM ends us, our shepherds live on. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_SETMASK, &chld, NULL);
	if ((sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		fatal("signalfd");
	dl_iterate_phdr(starter_warm_cb, NULL);
	pid_path = execd_path(STARTER_PID);
	sock_path = execd_path(STARTER_SOCKET);
	if (stat(sock_path, &sock_st) < 0) {
		free(sock_path);
		sock_path = NULL;
	}
	snprintf(pid, sizeof pid, "%d\n", (int)getpid());
	if (execd_write_file(pid_path, pid, 0600, false) < 0)
		log_warn("cannot write %s", pid_path);

	for (;;) {
		int npf = 0;
		pf[npf++] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
		pf[npf++] = (struct pollfd){ .fd = listenfd, .events = POLLIN };
		if (conn >= 0)
			pf[npf++] = (struct pollfd){ .fd = conn, .events = POLLIN };
		if (conn < 0 && nchildren == 0 && poll(&pf[1], 1, 0) == 0)
			starter_done(listenfd);
		if (poll(pf, (nfds_t)npf, -1) < 0) {
			if (errno != EINTR)
				fatal("poll");
			continue;
		}
		if (pf[0].revents) {
			struct signalfd_siginfo si;
			while (read(sigfd, &si, sizeof si) > 0)
				;
			starter_reap();
		}
		if (pf[1].revents)
			conn = starter_accept(listenfd, conn);
		else if (npf == 3 && pf[2].revents && !starter_order(conn, sigfd, listenfd)) {
			close(conn);
			conn = -1;
		}
	}
}
