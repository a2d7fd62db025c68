/* mailer.c: mail about jobs, kept in the database outbox and sent by the mailer.
 *
 * A message is stored with the job's change, sent by the configured mailer in
 * forked children (a bounded number at once, each with a timeout), removed
 * only once a mailer exited 0, and retried with backoff otherwise. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/msg_rows.h"
#include "qmaster/qmaster.h"
#include "spool/spool.h"

#define MAIL_BATCH       64
#define MAIL_BACKOFF_MAX 3600    /* seconds: retries never wait longer */

struct sending {
	pid_t    pid;            /* 0: free */
	int64_t  id;             /* the outbox row */
	int      attempts;
	int64_t  started;        /* ms */
	bool     timed_out;
};

static struct sending *sending;  /* conf->mail_max_running entries at most */
static int             nsending;
static struct event   *pump_ev, *chld_ev;

static pid_t spawn(const char *message);
static void mailer_kick(void);

static const char *
mail_from(void)
{
	static char from[300];
	if (!from[0])
		snprintf(from, sizeof from, "nowq@%s", my_hostname());
	return from;
}

/* Who gets a job's mail: -M, or the owner's login name (local delivery). */
static void
queue_mail(const struct job *j, enum mail_event ev)
{
	const char *to = j->mail_to ? j->mail_to : j->owner;
	char *msg;

	if (!to)
		return;
	msg = mail_compose(ev, j, to, mail_from(), now_ms());
	qm_txn();
	if (store_mail_add(store, j->id, msg, now_ms()) < 0)
		fatalx("cannot store a mail of job %lld", (long long)j->id);
	free(msg);
	mailer_kick();
}

void
mail_admin(const char *subject, const char *body)
{
	for (size_t i = 0; conf->admin_mail && conf->admin_mail[i]; i++)
		mail_user(conf->admin_mail[i], subject, body);
}

void
mail_admin_now(const char *subject, const char *body)
{
	for (size_t i = 0; conf->admin_mail && conf->admin_mail[i]; i++) {
		const char *to = conf->admin_mail[i];
		char *msg;

		if (!mail_valid_address(to))
			continue;
		msg = mail_compose_admin(to, mail_from(), subject, body, now_ms());
		/* chld_cb reaps it: a pid not in sending is only waited for. */
		if (spawn(msg) < 0)
			log_warn("mail: cannot fork a mailer for %s", to);
		free(msg);
	}
}

void
mail_user(const char *to, const char *subject, const char *body)
{
	char *msg;

	if (!to || !mail_valid_address(to))
		return;
	msg = mail_compose_admin(to, mail_from(), subject, body, now_ms());
	qm_txn();
	if (store_mail_add(store, 0, msg, now_ms()) < 0)
		fatalx("cannot store a mail to %s", to);
	free(msg);
	mailer_kick();
}

void
mail_job_started(const struct job *j)
{
	if (j->mail & MAIL_BEGIN)
		queue_mail(j, MAIL_EV_BEGIN);
}

void
mail_job_suspended(const struct job *j)
{
	if (j->mail & MAIL_SUSPEND)
		queue_mail(j, MAIL_EV_SUSPEND);
}

/* Whether the job ran to an end of its own, whatever its exit status or a
 * signal that killed it: no deletion, lost host, limit, reservation or
 * start failure ended it (those leave their reason). */
static bool
ended_itself(const struct job *j)
{
	char sig[40];

	if (j->start_time <= 0 || (j->state != JS_DONE && j->state != JS_FAILED))
		return false;
	snprintf(sig, sizeof sig, "killed by signal %d", j->signal);
	return !j->reason || (j->signal && strcmp(j->reason, sig) == 0);
}

/* One mail, as Grid Engine's: Complete with the exit status for a job
 * that ended itself (-m e), else Aborted with the reason (-m a, and -m e
 * too: the end the user asked to hear of). */
void
mail_job_ended(const struct job *j)
{
	if (ended_itself(j)) {
		if (j->mail & MAIL_END)
			queue_mail(j, MAIL_EV_END);
	} else if (j->mail & (MAIL_ABORT | MAIL_END))
		queue_mail(j, MAIL_EV_ABORT);
}

/* The program and its options, split at blanks (the configuration gives
 * no shell, so nothing is interpreted). */
static char **
mailer_argv(void)
{
	char **v = NULL, *copy = xstrdup(conf->mailer), *tok, *save = NULL;
	size_t n = 0;

	for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		v = xrealloc(v, (n + 2) * sizeof *v);
		v[n++] = xstrdup(tok);
		v[n] = NULL;
	}
	free(copy);
	return v;
}

/*
 * The child feeds the message to the mailer through a pipe and exits with
 * the mailer's status, so the loop never writes to a mailer that might not
 * read.  Its own process group lets a timeout kill both.
 */
static pid_t
spawn(const char *message)
{
	char **argv = mailer_argv();
	pid_t pid = fork();

	if (pid != 0) {
		strv_free(argv);
		return pid;
	}
	setpgid(0, 0);
	signal(SIGPIPE, SIG_IGN);
	{
		int p[2], st, fd;
		size_t off = 0, len = strlen(message);
		pid_t m;

		if (pipe2(p, O_CLOEXEC) < 0)
			_exit(71);
		if ((m = fork()) < 0)
			_exit(71);
		if (m == 0) {
			dup2(p[0], 0);
			close(p[0]);
			close(p[1]);
			if ((fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) >= 0) {
				dup2(fd, 1);
				dup2(fd, 2);
			}
			execv(argv[0], argv);
			_exit(127);
		}
		close(p[0]);
		while (off < len) {
			ssize_t w = write(p[1], message + off, len - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		close(p[1]);
		while (waitpid(m, &st, 0) < 0 && errno == EINTR)
			;
		_exit(off < len ? 74 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	}
}

static bool
in_flight(int64_t id)
{
	for (int i = 0; i < nsending; i++)
		if (sending[i].pid && sending[i].id == id)
			return true;
	return false;
}

static int
start_one(void *arg, int64_t id, int64_t job_id, const char *message, int attempts)
{
	int *free_slots = arg;
	pid_t pid;
	int i;

	(void)job_id;
	if (*free_slots <= 0)
		return 1;
	if (in_flight(id))
		return 0;
	for (i = 0; i < nsending && sending[i].pid; i++)
		;
	assert(i < 64);
	if (i == nsending)
		nsending++;
	if ((pid = spawn(message)) < 0) {
		log_warn("mail: cannot fork a mailer");
		return 1;
	}
	sending[i] = (struct sending){ pid, id, attempts, now_ms(), false };
	(*free_slots)--;
	return 0;
}

static void
pump_cb(evutil_socket_t fd, short what, void *arg)
{
	int busy = 0, free_slots;
	struct timeval again = { 1, 0 };

	(void)fd;
	(void)what;
	(void)arg;
	/* Only committed messages go out: a mailer never runs for a change
	 * the database might still roll back. */
	if (store_in_txn(store)) {
		struct timeval soon = { 0, 10000 };
		event_add(pump_ev, &soon);
		return;
	}
	for (int i = 0; i < nsending; i++) {
		if (!sending[i].pid)
			continue;
		busy++;
		if (!sending[i].timed_out && now_ms() - sending[i].started > conf->mail_timeout * 1000LL) {
			log_warnx("mail: the mailer for message %lld hangs; killed after %d s",
			    (long long)sending[i].id, conf->mail_timeout);
			killpg(sending[i].pid, SIGKILL);
			sending[i].timed_out = true;
		}
	}
	free_slots = conf->mail_max_running - busy;
	if (free_slots > 0 && store_mail_due(store, now_ms(), MAIL_BATCH, start_one, &free_slots) < 0)
		log_warnx("mail: cannot read the outbox");
	event_add(pump_ev, &again);
}

static void
finished(struct sending *s, int status)
{
	char why[96];
	int64_t delay;

	qm_txn();
	if (!s->timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		if (store_mail_done(store, s->id) < 0)
			fatalx("cannot remove a sent mail");
		log_debug("mail: message %lld sent", (long long)s->id);
	} else {
		if (s->timed_out)
			snprintf(why, sizeof why, "the mailer timed out after %d s", conf->mail_timeout);
		else if (WIFEXITED(status))
			snprintf(why, sizeof why, "the mailer exited %d", WEXITSTATUS(status));
		else
			snprintf(why, sizeof why, "the mailer was killed by signal %d", WTERMSIG(status));
		delay = (int64_t)conf->mail_retry << (s->attempts < 12 ? s->attempts : 12);
		if (delay > MAIL_BACKOFF_MAX)
			delay = MAIL_BACKOFF_MAX;
		log_warnx("mail: message %lld not sent: %s; next try in %lld s", (long long)s->id, why,
		    (long long)delay);
		if (store_mail_retry(store, s->id, s->attempts + 1, now_ms() + delay * 1000, why) < 0)
			fatalx("cannot store a mail's retry");
	}
	s->pid = 0;
}

static void
chld_cb(evutil_socket_t fd, short what, void *arg)
{
	pid_t pid;
	int status;

	(void)fd;
	(void)what;
	(void)arg;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		for (int i = 0; i < nsending; i++)
			if (sending[i].pid == pid)
				finished(&sending[i], status);
	mailer_kick();
}

/* New messages may be in the outbox. */
static void
mailer_kick(void)
{
	if (pump_ev)
		event_active(pump_ev, EV_TIMEOUT, 0);
}

void
mailer_init(void)
{
	struct timeval one = { 1, 0 };

	sending = xcalloc(64, sizeof *sending);   /* mail_max_running is at most 64 */
	pump_ev = evtimer_new(base, pump_cb, NULL);
	chld_ev = evsignal_new(base, SIGCHLD, chld_cb, NULL);
	event_add(chld_ev, NULL);
	event_add(pump_ev, &one);
}

void
mailer_shutdown(void)
{
	if (!pump_ev)
		return;   /* a standby never started it */
	event_free(pump_ev);
	event_free(chld_ev);
	pump_ev = chld_ev = NULL;
	free(sending);
	sending = NULL;
	nsending = 0;
}

json_t *
mail_pending_json(int64_t job_id)
{
	int count = 0;
	char *err = NULL;
	int64_t next = 0;
	json_t *o;

	if (store_mail_of_job(store, job_id, &count, &err, &next) < 0 || count == 0) {
		free(err);
		return NULL;
	}
	o = msg_job_mail_pack(count, err, next);
	free(err);
	return o;
}
