/* main.c: the exec daemon's start-up, its one event loop and the periodic duties. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <event2/event.h>

#include "execd/execd.h"

struct event_base *base;
bool   execd_idle = true;
char   execd_why[256];
bool   execd_full;
char   execd_full_why[160];
double execd_load[3];

/* Below this much room on the spool the host asks for no work: a job's
 * folder and the record of its end must fit. */
#define EXECD_SPOOL_MIN (4 * 1024 * 1024)

/* Whether the spool is too full for another job; why says how full. */
static bool
spool_full(char *why, size_t n)
{
	struct statvfs sv;
	int64_t avail;

	if (statvfs(conf->spool_dir, &sv) < 0)
		return false;
	avail = (int64_t)sv.f_bavail * (int64_t)sv.f_frsize;
	snprintf(why, n, "spool %s full (%lld KiB free)", conf->spool_dir, (long long)(avail >> 10));
	return avail < EXECD_SPOOL_MIN;
}

static struct event *load_ev, *scan_ev;

void
execd_decide(bool report)
{
	char why[sizeof execd_why];
	bool idle = idle_check(execd_load, why, sizeof why);
	bool full = spool_full(execd_full_why, sizeof execd_full_why);
	bool changed = idle != execd_idle || full != execd_full;

	if (idle != execd_idle)
		log_info("host is now %s: %s", idle ? "idle" : "busy", why);
	if (full != execd_full)
		log_info("%s", full ? execd_full_why : "the spool has room again");
	execd_idle = idle;
	execd_full = full;
	snprintf(execd_why, sizeof execd_why, "%s", why);
	active_owner(idle, why);
	if (report || changed)
		link_load();
}

/* Every load_interval: start the site command (its verdict arrives later,
 * through SIGCHLD), re-decide idleness from the latest readings and report
 * the load.  A host that just became idle pulls at once; one that became
 * busy stops pulling and applies owner_returns to its running jobs. */
static void
load_cb(evutil_socket_t fd, short what, void *arg)
{
	sense_command_start();
	execd_decide(true);
}

/* Every EXECD_SCAN_INTERVAL seconds, the safety net behind the shepherds'
 * notes: attempts whose shepherd died get their CHILD_TERM, and whatever the
 * outbox still holds is offered to the master again. */
static void
scan_cb(evutil_socket_t fd, short what, void *arg)
{
	active_check();
	outbox_flush();
	link_kick();
	cache_trim();
}

static void
sig_cb(evutil_socket_t sig, short what, void *arg)
{
	bool strays = false;
	pid_t pid;
	int status;

	switch (sig) {
	case SIGCHLD:
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			if (!sense_command_reaped(pid, status) && !spawn_reaped(pid, status) &&
			    !active_reaped(pid, status))
				strays = true;
		/* A leftover of a dead shepherd's job died and handed us its
		 * children: they are leftovers too. */
		if (strays)
			active_kill_strays();
		break;
	case SIGHUP:
		log_reopen();
		log_info("log reopened");
		break;
	default:
		/* Jobs keep running: their shepherds are in their own sessions
		 * and a later execd picks them up from the spool. */
		log_info("stopping on signal %d; running jobs continue", (int)sig);
		event_base_loopexit(base, NULL);
	}
}

/* -h and --help: the usage on stdout and success; a wrong call: stderr, 2. */
static void usage(bool asked) NOWQ_NORETURN;

static void
usage(bool asked)
{
	fprintf(asked ? stdout : stderr, "usage: execd [-f] [-d] [-c FILE]\n");
	exit(asked ? 0 : 2);
}

/* One execd per spool: the lock lives as long as this process (the shepherds
 * close their copy so a restart is never locked out by a running job). */
static int
spool_prepare(int *tightened)
{
	char *lock = execd_path("execd.lock");
	char *active = execd_path("active");
	char *outbox = execd_path("outbox");
	struct stat st;
	char why[PATH_MAX + 256];
	int fd, n;

	/* Job owners reach their script in active/ID.TASK.ATTEMPT/ by path,
	 * so the folders above it are traversable (0711), never listable;
	 * every file in them (the job, its environment and qrsh secret in
	 * job.json, the outbox's events) is the execd's user's alone. */
	if ((n = spool_make_private(conf->spool_dir, 0711, why, sizeof why)) < 0 ||
	    spool_mkdir_p(active, 0711) < 0 || spool_mkdir_p(outbox, 0700) < 0 ||
	    chmod(outbox, 0700) < 0) {
		fprintf(stderr, "execd: spool %s: %s\n", conf->spool_dir,
		    n < 0 ? why : strerror(errno));
		exit(1);
	}
	*tightened = n;
	if (geteuid() == 0 && stat(conf->spool_dir, &st) == 0 && !(st.st_mode & S_IXOTH))
		fprintf(stderr, "execd: warning: %s is not searchable by others; "
		    "jobs of other users will not reach their scripts\n", conf->spool_dir);
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "execd: cannot open %s: %s\n", lock, strerror(errno));
		exit(1);
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		fprintf(stderr, "execd: another execd is running on spool %s\n", conf->spool_dir);
		exit(1);
	}
	free(lock);
	free(active);
	free(outbox);
	return fd;
}

int
main(int argc, char **argv)
{
	const char *path = SYSCONFDIR "/nowq/execd.ini";
	bool foreground = false, debug = false;
	const int signums[] = { SIGTERM, SIGINT, SIGHUP, SIGCHLD };
	struct event *sigs[4];
	struct timeval tv;
	char why[160], *pidfile;
	int ch, token, lockfd, tightened;
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};

	while ((ch = getopt_long(argc, argv, "fdc:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f': foreground = true; break;
		case 'd': debug = true; break;
		case 'c': path = optarg; break;
		case 'h': usage(true);
		default: usage(false);
		}
	}
	if (optind != argc)
		usage(false);
	daemon_close_inherited();
	daemon_malloc_keep();
	if ((conf = conf_load(path)) == NULL || spawn_find() < 0)
		exit(1);
	/* Ignored signals survive exec: whatever started us may have ignored
	 * some, and jobs must not inherit that.  Done once here, so a job's
	 * process has only the shepherd's few to reset. */
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &sa) == 0 &&
		    sa.sa_handler == SIG_IGN)
			signal(sig, SIG_DFL);
	}
	execd_log_level = debug ? LOG_LVL_DEBUG : conf->log_level;
	log_init("execd", execd_log_level, NULL);
	/* Jobs inherit this umask; every file of the execd's own is made
	 * with an explicit mode. */
	umask(022);
	/* The log file may live in the spool: create that first. */
	lockfd = spool_prepare(&tightened);
	execd_log_path = foreground || !conf->log_file ? NULL : xstrdup(conf->log_file);
	if (execd_log_path) {
		int fd = open(execd_log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0) {
			fprintf(stderr, "execd: cannot open log file %s: %s\n", execd_log_path,
			    strerror(errno));
			exit(1);
		}
		close(fd);
	}
	log_init("execd", execd_log_level, execd_log_path);
	if (tightened > 0)
		log_warnx("took the permissions of group and others from %d entr%s of spool %s",
		    tightened, tightened == 1 ? "y" : "ies", conf->spool_dir);
	token = daemon_begin(foreground);
	signal(SIGPIPE, SIG_IGN);
	/* Should a shepherd die, its job and what the job detached from its
	 * session become ours, not init's, and are killed
	 * (active_kill_strays): no job runs unsupervised. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		log_warn("cannot become a subreaper; the job of a killed shepherd may leave processes");

	base = event_base_new();
	if (!base)
		fatalx("event_base_new failed");
	for (int i = 0; i < 4; i++) {
		sigs[i] = evsignal_new(base, signums[i], sig_cb, NULL);
		event_add(sigs[i], NULL);
	}
	/* The notify socket exists before the first scan, so no shepherd's
	 * note can fall between the two. */
	if (outbox_init() < 0)
		fatalx("cannot set up the outbox; see the message above");
	log_info("h_vmem is enforced by %s: %s",
	    limits_probe(conf->cgroup_parent, why, sizeof why), why);
	if (active_init() < 0)
		fatalx("cannot read the spool's active jobs in %s", conf->spool_dir);
	execd_idle = idle_check(execd_load, execd_why, sizeof execd_why);
	log_info("host is %s: %s", execd_idle ? "idle" : "busy", execd_why);
	if ((execd_full = spool_full(execd_full_why, sizeof execd_full_why)))
		log_info("%s", execd_full_why);
	active_owner(execd_idle, execd_why);
	sense_command_start();

	load_ev = event_new(base, -1, EV_PERSIST, load_cb, NULL);
	tv.tv_sec = conf->load_interval;
	tv.tv_usec = 0;
	event_add(load_ev, &tv);
	scan_ev = event_new(base, -1, EV_PERSIST, scan_cb, NULL);
	tv.tv_sec = EXECD_SCAN_INTERVAL;
	event_add(scan_ev, &tv);
	if (strcmp(conf->auth, "none") == 0)
		log_warnx("AUTHENTICATION IS WEAK (auth = none): a master is known only as the owner of "
		    "its loopback socket; use munge for anything but a personal cluster");
	log_info("execd %s started: spool %s, %d slot%s, %d job%s in the spool",
	    conf->name, conf->spool_dir, conf->slots, conf->slots == 1 ? "" : "s",
	    active_count(), active_count() == 1 ? "" : "s");
	log_info("idle policies: load_threshold %g, idle_keyboard %d min, idle_no_users %s, "
	    "idle_windows %s, idle_command %s; owner_returns = %s", conf->load_threshold,
	    conf->idle_keyboard, conf->idle_no_users ? "yes" : "no",
	    conf->idle_windows_text ? conf->idle_windows_text : "none",
	    conf->idle_command ? conf->idle_command : "none",
	    idle_owner_returns_name(conf->owner_returns));
	witness_start();
	link_start();
	pidfile = execd_path("execd.pid");
	daemon_ready(token, pidfile);
	/* The starter of an earlier execd, whose shepherds run on, or a new
	 * one: started only now, so it inherits no descriptor of whoever
	 * started us (our 0, 1 and 2 are /dev/null by now, or the terminal
	 * with -f, as a shepherd's were). */
	spawn_init();

	event_base_dispatch(base);

	link_stop();
	witness_stop();
	sense_stop();
	outbox_shutdown();
	spawn_stop();
	active_free_all();
	for (int i = 0; i < 4; i++)
		event_free(sigs[i]);
	event_free(load_ev);
	event_free(scan_ev);
	event_base_free(base);
	unlink(pidfile);
	free(pidfile);
	close(lockfd);
	log_info("execd stopped");
	conf_free(conf);
	free(execd_log_path);
	return 0;
}
