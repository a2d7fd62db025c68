/* main.c: the queue master's start-up, its event loop, group commit and periodic duties. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "qmaster/qmaster.h"
#include "spool/spool.h"

struct qm_conf    *conf;
struct store      *store;
struct event_base *base;

static struct event *commit_ev, *tick_ev;

static void qm_reload(void);

/* The group commit.  Requests read in one loop turn mutate the database
 * inside one transaction; this event, activated by the first of them, runs
 * after all of them (libevent runs active events in order), lets the
 * scheduler add its dispatches to the same transaction, commits once, and
 * only then releases the replies and DISPATCHes held in net.c. */
static void
commit_cb(evutil_socket_t fd, short what, void *arg)
{
	int64_t t0;

	net_new_check();
	/* Only a writable primary starts jobs: a fenced one must not, nor
	 * one whose spool is full (what ends them must still fit). */
	if (sched_wanted() && repl_writable() && !space_full())
		sched_run();
	if (!store_in_txn(store))
		return;
	t0 = mono_us();
	if (store_commit(store) < 0) {
		/* Replies promise durability; without the commit there is no
		 * honest reply to give.  Out of space, the turn is undone and
		 * refused, and the master goes on; anything else stops it, and
		 * restarting recovers the last commit. */
		if (!store_out_of_space(store))
			fatalx("cannot commit to the database; stopping so no unsaved change is acknowledged");
		store_rollback(store);
		space_commit_failed();
		net_refuse_turn(ERR_NOSPACE, ERR_NOSPACE_MSG);
		qm_reload();
		return;
	}
	http_observe_commit(mono_us() - t0);
	repl_committed();
}

/* After a rollback: what the loop keeps in memory of the database (hosts'
 * lists and flags, aliases, reservations, queue flags) is read again, so
 * it says what the database says. */
static void
qm_reload(void)
{
	exechost_reload();
	resv_free_all();
	resv_init();
	qmod_apply_queues();
}

void
qm_txn(void)
{
	if (!store_in_txn(store) && store_begin(store) < 0)
		fatalx("cannot begin a database transaction");
	event_active(commit_ev, EV_TIMEOUT, 0);
}

void
qm_wake(void)
{
	event_active(commit_ev, EV_TIMEOUT, 0);
}

bool
qm_is_manager(const char *user, uid_t uid)
{
	if (uid == 0)
		return true;
	for (char **m = conf->managers; m && *m; m++)
		if (strcmp(*m, user) == 0)
			return true;
	return false;
}

bool
qm_is_operator(const char *user)
{
	for (char **m = conf->operators; m && *m; m++)
		if (strcmp(*m, user) == 0)
			return true;
	return false;
}

bool
qm_is_daemon(uid_t uid)
{
	return uid == 0 || uid == geteuid() || (conf->admin_user && uid == conf->admin_uid);
}

/* Once a second:
 *  - purge finished jobs older than finished_jobs_keep (they stay in accounting);
 *  - release jobs whose start time (qsub -a) has come;
 *  - make the jobs of cron entries that are due;
 *  - declare hosts silent for host_timeout lost (exechost.c);
 *  - open and close reservation windows (resv.c);
 *  - forget submission keys older than SUBMIT_KEY_KEEP_MS;
 *  - take the spool's reserve back once a full spool has room (space.c).
 * A fenced primary or a standby does none of it, but for the sweep of
 * SPOOL/stage/: a standby's copies of files no job names go as the
 * primary's do (its database says which, as the primary's). */
static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	int n;

	/* A fenced primary changes nothing on its own: the new one does. */
	if (!repl_writable()) {
		if (repl_role() == REPL_STANDBY)
			stage_tick(now_ms());
		return;
	}
	space_tick();
	qm_txn();
	n = store_jobs_purge_finished(store, now_ms() - conf->finished_keep_ms);
	if (n < 0)
		fatalx("cannot purge finished jobs");
	if (n > 0)
		log_info("purged %d finished jobs", n);
	deps_tick(now_ms());
	/* A full spool makes no new jobs: the tick after it has room does. */
	if (!space_full())
		cron_tick(now_ms());
	exechost_check_lost();
	resv_tick(now_ms());
	if (store_key_purge(store, now_ms() - SUBMIT_KEY_KEEP_MS) < 0)
		fatalx("cannot purge submission keys");
	stage_tick(now_ms());
}

void
qm_serve(void)
{
	struct timeval one = { 1, 0 };
	char *act;

	exechost_init();
	hostlist_init();
	resv_init();
	qmod_apply_queues();
	mailer_init();
	event_add(tick_ev, &one);
	act = xasprintf("%s/act_qmaster", conf->spool_dir);
	if (spool_write_atomic(act, my_hostname(), strlen(my_hostname()), 0600) < 0)
		log_warn("cannot write %s", act);
	free(act);
}

static void
sig_cb(evutil_socket_t sig, short what, void *arg)
{
	char err[512];

	switch (sig) {
	case SIGHUP:
		/* Static settings that can change at run time; listeners and
		 * the spool stay as they were started. */
		log_reopen();
		conf_reload(err, sizeof err);
		break;
	default:
		log_info("stopping on signal %d", (int)sig);
		event_base_loopexit(base, NULL);
	}
}

/* -h and --help: the usage on stdout and success; a wrong call: stderr, 2. */
static void usage(bool asked) NOWQ_NORETURN;

static void
usage(bool asked)
{
	fprintf(asked ? stdout : stderr, "usage: qmaster [-f] [-d] [-c FILE] [--rejoin]\n"
	    "       qmaster [-c FILE] --check | --dump [DATABASE]\n       qmaster --requests\n");
	exit(asked ? 0 : 2);
}

/* --check and --dump: the configured spool's database, or the one named,
 * opened for reading only, so both are safe beside a running master (and a
 * spool that is not there is reported, not created). */
static int
check_database(const char *conf_path, const char *db, bool dump)
{
	struct store *st;
	const char *why;
	char *path;
	int problems;

	if (db)
		path = xstrdup(db);
	else {
		if ((conf = conf_load(conf_path)) == NULL)
			return 1;
		path = xasprintf("%s/nowq.db", conf->spool_dir);
	}
	if (access(path, F_OK) < 0) {
		/* A fresh install has neither: say which, and what makes them. */
		if (!db && errno == ENOENT && access(conf->spool_dir, F_OK) < 0)
			fprintf(stderr, "qmaster: spool_dir %s is missing; qmaster creates it, and the "
			    "database in it, at its first start\n", conf->spool_dir);
		else if (!db && errno == ENOENT)
			fprintf(stderr, "qmaster: the database %s is missing; qmaster creates it at its "
			    "first start\n", path);
		else
			fprintf(stderr, "qmaster: %s: %s\n", path, strerror(errno));
		free(path);
		return 1;
	}
	if ((st = store_open_readonly(path, &why)) == NULL) {
		fprintf(stderr, "qmaster: %s\n", why);
		free(path);
		return 1;
	}
	/* A dump goes to diff: its problems go to stderr, and a database with
	 * any gives no dump at all rather than one that compares equal. */
	problems = store_check(st, dump ? stderr : stdout);
	if (dump && problems)
		fprintf(stderr, "qmaster: %s has %d problem%s; no dump\n", path, problems,
		    problems == 1 ? "" : "s");
	else if (dump && (store_dump(st, stdout) < 0 || fflush(stdout) != 0)) {
		fprintf(stderr, "qmaster: cannot dump %s\n", path);
		problems = 1;
	} else if (!dump)
		printf("%d problem%s\n", problems, problems == 1 ? "" : "s");
	store_close(st);
	free(path);
	return problems ? 1 : 0;
}

static int
lock_spool(const char *dir)
{
	char *path = xasprintf("%s/qmaster.lock", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		fatal("cannot open %s", path);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		fprintf(stderr, "qmaster: another qmaster is running on spool %s\n", dir);
		exit(1);
	}
	free(path);
	return fd;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "check", no_argument, NULL, 'C' },
		{ "dump", no_argument, NULL, 'D' },
		{ "rejoin", no_argument, NULL, 'J' },
		{ "requests", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *path = SYSCONFDIR "/nowq/qmaster.conf";
	bool foreground = false, debug = false, check = false, dump = false, rejoin = false;
	const char *why;
	char swhy[PATH_MAX + 256];
	int ch, token, tightened;
	struct event *sigs[4];
	const int signums[4] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };

	while ((ch = getopt_long(argc, argv, "fdc:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f': foreground = true; break;
		case 'd': debug = true; break;
		case 'c': path = optarg; break;
		case 'C': check = true; break;
		case 'D': dump = true; break;
		case 'J': rejoin = true; break;
		case 'R':
			/* The handler table, for people and for the test that
			 * walks every request with an unprivileged identity. */
			request_table_print(stdout);
			exit(0);
		case 'h': usage(true);
		default: usage(false);
		}
	}
	if (check || dump) {
		if (check == dump || argc - optind > 1)
			usage(false);
		exit(check_database(path, optind < argc ? argv[optind] : NULL, dump));
	}
	if (optind != argc)
		usage(false);
	daemon_close_inherited();
	daemon_malloc_keep();
	if ((conf = conf_load(path)) == NULL)
		exit(1);
	/* Every file the master makes holds job data or describes it (the
	 * database and its WAL, which SQLite creates with the database's
	 * mode, snapshots, logs) and none is for anyone else: whatever the
	 * umask of the shell that started us. */
	umask(077);
	if ((tightened = spool_make_private(conf->spool_dir, 0700, swhy, sizeof swhy)) < 0) {
		fprintf(stderr, "qmaster: spool directory %s: %s\n", conf->spool_dir, swhy);
		exit(1);
	}
	log_init("qmaster", debug ? LOG_LVL_DEBUG : conf->log_level, foreground ? NULL : conf->log_file);
	if (tightened > 0)
		log_warnx("took the permissions of group and others from %d entr%s of spool %s",
		    tightened, tightened == 1 ? "y" : "ies", conf->spool_dir);
	if (conf->unix_socket) {
		/* /run is a tmpfs: without systemd's RuntimeDirectory, the
		 * socket's folder (/run/nowq) is gone after every boot. */
		char *dir = xstrdup(conf->unix_socket), *slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			/* Every user's commands reach the socket: not the umask's
			 * 0700 of the spool. */
			if (access(dir, F_OK) < 0 && (spool_mkdir_p(dir, 0755) < 0 || chmod(dir, 0755) < 0))
				fatal("cannot create %s, the folder of unix_socket", dir);
		}
		free(dir);
	}
	lock_spool(conf->spool_dir);
	/* A master that steps down re-executes itself (--rejoin): it is a
	 * daemon already and keeps its pid. */
	token = daemon_begin(foreground || rejoin);
	signal(SIGPIPE, SIG_IGN);
	space_init();
	if ((store = store_open(conf->spool_dir, &why)) == NULL)
		fatalx("cannot open the database in %s: %s%s", conf->spool_dir, why,
		    space_full() ? " (no space left on the spool)" : "");
	stage_init();
	{
		/* PRIO_NEW callbacks one at a time: between two, the loop looks
		 * for due work again (qmaster.h). */
		struct event_config *cfg = event_config_new();
		if (!cfg || event_config_set_max_dispatch_interval(cfg, NULL, 1, PRIO_NEW) < 0 ||
		    (base = event_base_new_with_config(cfg)) == NULL ||
		    event_base_priority_init(base, PRIO_COUNT) < 0)
			fatalx("event_base_new failed");
		event_config_free(cfg);
	}
	commit_ev = event_new(base, -1, 0, commit_cb, NULL);
	tick_ev = event_new(base, -1, EV_PERSIST, tick_cb, NULL);
	for (int i = 0; i < 4; i++) {
		sigs[i] = evsignal_new(base, signums[i], sig_cb, NULL);
		event_add(sigs[i], NULL);
	}
	if (http_start() < 0)
		fatalx("cannot serve the status page on http_listen %s", conf->http_listen);
	if (net_listen() < 0)
		fatalx("cannot listen; see the messages above");
	if (reader_start() < 0)
		fatalx("cannot start the query thread; see the message above");
	if (strcmp(conf->auth, "munge") == 0) {
		/* munged may come later; say now why every peer would be refused. */
		char err[400], *cred = auth_munge_encode(auth_munge_socket(conf->munge_socket), "nowq:probe",
		    err, sizeof err);
		if (!cred)
			log_warnx("auth = munge, but %s: TCP peers will be refused until munged answers", err);
		free(cred);
	}
	if (strcmp(conf->auth, "none") == 0)
		log_warnx("AUTHENTICATION IS WEAK (auth = none): only loopback peers, each taken to "
		    "be the owner of its socket; use munge for anything but a personal cluster");
	repl_start(argv, rejoin);
	log_info("qmaster started as %s: spool %s, listening on %s%s%s, %lld pending and %lld running jobs",
	    repl_role_name(),
	    conf->spool_dir, conf->unix_socket ? conf->unix_socket : "",
	    conf->unix_socket && conf->listen ? " and " : "", conf->listen ? conf->listen : "",
	    (long long)store_jobs_count(store, 1u << JS_PENDING),
	    (long long)store_jobs_count(store, 1u << JS_DISPATCHED | 1u << JS_RUNNING));
	daemon_ready(token, conf->pid_file);

	event_base_dispatch(base);

	/* Whatever the last turn changed is committed before we go. */
	if (store_in_txn(store)) {
		if (store_commit(store) < 0)
			fatalx("cannot commit on the way out");
		net_flush_held();
	}
	reader_stop();
	net_shutdown();
	http_stop();
	repl_stop();
	failover_free();
	mailer_shutdown();
	resv_free_all();
	exechost_free_all();
	for (int i = 0; i < 4; i++)
		event_free(sigs[i]);
	event_free(commit_ev);
	event_free(tick_ev);
	event_base_free(base);
	store_close(store);
	unlink(conf->pid_file);
	log_info("qmaster stopped");
	conf_free(conf);
	return 0;
}
