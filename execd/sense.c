/* sense.c: reads what the idle policies look at and hands it to idle_decide.
 *
 * Load, input devices, logged-in users, and the site command's verdict. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utmpx.h>

#include <event2/event.h>

#include "execd/execd.h"

/* The site command: at most one run at a time; the verdict of the last run
 * that finished is the one used. */
static struct {
	pid_t          pid;
	struct event  *timeout_ev;
	bool           timed_out;
	int            verdict;        /* IDLE_CMD_* */
	char           why[64];
} cmd = { .verdict = IDLE_CMD_UNKNOWN };

static bool
sense_loadavg(double load[3])
{
	FILE *fp = fopen("/proc/loadavg", "re");
	int n;

	load[0] = load[1] = load[2] = 0;
	if (!fp)
		return false;
	n = fscanf(fp, "%lf %lf %lf", &load[0], &load[1], &load[2]);
	fclose(fp);
	return n == 3;
}

/* Like Condor's KeyboardIdle: the kernel stamps a terminal's access time
 * when it is read from, so the latest access time of the input devices is
 * the last moment someone typed (or moved the mouse). */
static time_t
sense_last_input(char **globs)
{
	time_t last = 0;
	struct stat st;
	glob_t g;

	for (char **p = globs; p && *p; p++) {
		if (glob(*p, GLOB_NOSORT, NULL, &g) != 0)
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++)
			if (stat(g.gl_pathv[i], &st) == 0 && st.st_atime > last)
				last = st.st_atime;
		globfree(&g);
	}
	return last;
}

/* USER_PROCESS entries of utmp whose process still lives: a login that
 * crashed without logout(3) leaves its entry behind. */
static int
sense_users(char *first, size_t len)
{
	struct utmpx *u;
	int n = 0;

	first[0] = '\0';
	setutxent();
	while ((u = getutxent()) != NULL) {
		if (u->ut_type != USER_PROCESS || !u->ut_user[0])
			continue;
		if (u->ut_pid > 0 && kill(u->ut_pid, 0) < 0 && errno == ESRCH)
			continue;
		if (n++ == 0)
			snprintf(first, len, "%.*s", (int)sizeof u->ut_user, u->ut_user);
	}
	endutxent();
	return n;
}

bool
idle_check(double load[3], char *why, size_t whylen)
{
	static bool warned;
	struct idle_inputs in;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	memset(&in, 0, sizeof in);
	in.now = time(NULL);
	in.load_known = sense_loadavg(load);
	if (!in.load_known && !warned) {
		/* Without a load figure there is nothing to hold work back for. */
		log_warn("cannot read /proc/loadavg; the load policy says idle");
		warned = true;
	}
	in.np_load = load[0] / (ncpu > 0 ? (double)ncpu : 1.0);
	if (conf->idle_keyboard > 0)
		in.last_input = sense_last_input(conf->idle_devices);
	if (conf->idle_no_users)
		in.nusers = sense_users(in.user, sizeof in.user);
	in.command = cmd.verdict;
	snprintf(in.command_why, sizeof in.command_why, "%s", cmd.why);
	return idle_decide(conf, &in, why, whylen);
}

/* A run that takes too long counts as "busy", and so does every run that
 * cannot start: a broken command must not hand the host to jobs. */
static void
sense_command_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	if (cmd.pid <= 0)
		return;
	log_warnx("site command %s did not finish within %d s; killed", conf->idle_command,
	    conf->idle_command_timeout);
	cmd.timed_out = true;
	kill(-cmd.pid, SIGKILL);
}

void
sense_command_start(void)
{
	struct timeval tv = { conf->idle_command_timeout, 0 };
	pid_t pid;
	int fd;

	if (!conf->idle_command || cmd.pid > 0)
		return;
	fflush(NULL);
	if ((pid = fork()) < 0) {
		log_warn("cannot fork the site command");
		cmd.verdict = IDLE_CMD_BUSY;
		snprintf(cmd.why, sizeof cmd.why, "(cannot fork)");
		return;
	}
	if (pid == 0) {
		/* Its own group, so a timeout kills whatever it started. */
		setpgid(0, 0);
		if ((fd = open("/dev/null", O_RDWR)) >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			if (fd > 2)
				close(fd);
		}
		if (close_range(3, ~0U, 0) < 0)
			for (fd = 3; fd < 1024; fd++)
				close(fd);
		signal(SIGPIPE, SIG_DFL);
		execl("/bin/sh", "sh", "-c", conf->idle_command, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	cmd.pid = pid;
	cmd.timed_out = false;
	if (!cmd.timeout_ev)
		cmd.timeout_ev = evtimer_new(base, sense_command_timeout_cb, NULL);
	evtimer_add(cmd.timeout_ev, &tv);
}

bool
sense_command_is(pid_t pid)
{
	return cmd.pid > 0 && pid == cmd.pid;
}

bool
sense_command_reaped(pid_t pid, int status)
{
	int before = cmd.verdict;

	if (cmd.pid <= 0 || pid != cmd.pid)
		return false;
	cmd.pid = 0;
	evtimer_del(cmd.timeout_ev);
	if (cmd.timed_out) {
		cmd.verdict = IDLE_CMD_BUSY;
		snprintf(cmd.why, sizeof cmd.why, "(timed out after %d s)", conf->idle_command_timeout);
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		cmd.verdict = IDLE_CMD_IDLE;
		cmd.why[0] = '\0';
	} else {
		cmd.verdict = IDLE_CMD_BUSY;
		if (WIFEXITED(status))
			snprintf(cmd.why, sizeof cmd.why, "(exit status %d)", WEXITSTATUS(status));
		else
			snprintf(cmd.why, sizeof cmd.why, "(signal %d)", WTERMSIG(status));
	}
	log_debug("site command: %s %s", cmd.verdict == IDLE_CMD_IDLE ? "idle" : "busy", cmd.why);
	/* A change is acted on at once rather than at the next tick. */
	if (cmd.verdict != before)
		execd_decide(false);
	return true;
}

bool
sense_ready(void)
{
	return !conf->idle_command || cmd.verdict != IDLE_CMD_UNKNOWN;
}

void
sense_stop(void)
{
	if (cmd.pid > 0)
		kill(-cmd.pid, SIGKILL);
	if (cmd.timeout_ev)
		event_free(cmd.timeout_ev);
	cmd.timeout_ev = NULL;
}
