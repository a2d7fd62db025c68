/* outbox.c: CHILD_REGISTER/CHILD_TERM events, files in SPOOL/outbox until the master ACKs them. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/msg.h"
#include "execd/execd.h"

/* An event file is small; anything bigger is not ours. */
#define OUTBOX_MAX_FILE (64u * 1024)

/* Events sent on the current connection and not yet ACKed, by frame seq. */
struct outbox_sent {
	TAILQ_ENTRY(outbox_sent) entry;
	char    *name;
	int64_t  seq;
};
static TAILQ_HEAD(, outbox_sent) sent = TAILQ_HEAD_INITIALIZER(sent);

static int notify_fd = -1;
static struct event *notify_ev;

static void
outbox_notify_cb(evutil_socket_t fd, short what, void *arg)
{
	char buf[ATTEMPT_KEY_MAX + 16], *sp;
	union {
		struct cmsghdr hdr;
		char           space[CMSG_SPACE(sizeof(struct ucred))];
	} cm;
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *c;
	ssize_t n;

	for (;;) {
		bool ours = false;
		iov = (struct iovec){ buf, sizeof buf - 1 };
		mh = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1,
		    .msg_control = cm.space, .msg_controllen = sizeof cm.space };
		if ((n = recvmsg(fd, &mh, 0)) <= 0)
			break;
		buf[n] = '\0';
		/* Abstract sockets have no file permissions: only notes from
		 * our own uid (the shepherds) are believed. */
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
				struct ucred uc;
				memcpy(&uc, CMSG_DATA(c), sizeof uc);
				ours = uc.uid == geteuid();
			}
		if (!ours || (sp = strchr(buf, ' ')) == NULL)
			continue;
		*sp = '\0';
		active_note(buf, sp + 1);
	}
	outbox_flush();
}

/* An atomic write cut short by a crash leaves NAME.tmp.PID behind; once
 * that writer is gone, so is any use for it. */
static void
outbox_clean_temps(void)
{
	char *dir = execd_path("outbox");
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL) {
		char *tmp = strstr(e->d_name, ".json.tmp."), *end, *path;
		long pid;
		if (!tmp)
			continue;
		pid = strtol(tmp + 10, &end, 10);
		if (*end || pid <= 0 || (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		path = execd_path("outbox/%s", e->d_name);
		unlink(path);
		free(path);
	}
	if (d)
		closedir(d);
	free(dir);
}

int
outbox_init(void)
{
	struct sockaddr_un sun;
	socklen_t len = outbox_notify_addr(&sun);

	notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (notify_fd < 0 || bind(notify_fd, (struct sockaddr *)&sun, len) < 0 ||
	    setsockopt(notify_fd, SOL_SOCKET, SO_PASSCRED, &(int){ 1 }, sizeof(int)) < 0) {
		log_warn("cannot bind the wake-up socket @%s", sun.sun_path + 1);
		return -1;
	}
	notify_ev = event_new(base, notify_fd, EV_READ | EV_PERSIST, outbox_notify_cb, NULL);
	event_add(notify_ev, NULL);
	outbox_clean_temps();
	return 0;
}

static void
outbox_sent_free(struct outbox_sent *s)
{
	TAILQ_REMOVE(&sent, s, entry);
	free(s->name);
	free(s);
}

void
outbox_link_down(void)
{
	struct outbox_sent *s;
	while ((s = TAILQ_FIRST(&sent)) != NULL)
		outbox_sent_free(s);
}

void
outbox_shutdown(void)
{
	outbox_link_down();
	if (notify_ev)
		event_free(notify_ev);
	if (notify_fd >= 0)
		close(notify_fd);
	notify_ev = NULL;
	notify_fd = -1;
}

/* The length of KEY in NAME if NAME ends with SUFFIX after a key. */
static size_t
outbox_key_len(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);
	return n > k && strcmp(name + n - k, suffix) == 0 ? n - k : 0;
}

/* KEY.reg (job.pid's second name), KEY.reg.json (its form where no link
 * could be made, and what an older shepherd wrote) and KEY.term.json;
 * temporary files of an atomic write and files set aside start with a dot. */
static int
outbox_filter(const struct dirent *d)
{
	const char *name = d->d_name;
	if (name[0] == '.')
		return 0;
	return outbox_key_len(name, ".reg") || outbox_key_len(name, ".reg.json") ||
	    outbox_key_len(name, ".term.json");
}

/* The message a file of the outbox holds; NULL if it holds none. */
static json_t *
outbox_msg(const char *name, const char *text)
{
	size_t k = outbox_key_len(name, ".reg");
	json_error_t jerr;
	json_t *msg;

	if (k) {
		char *key = xstrndup(name, k);
		msg = outbox_reg_msg(key, text);
		free(key);
		return msg;
	}
	msg = json_loads(text, 0, &jerr);
	if (msg && (!json_is_object(msg) || !msg_type_text(msg))) {
		json_decref(msg);
		msg = NULL;
	}
	return msg;
}

static bool
outbox_in_flight(const char *name)
{
	struct outbox_sent *s;
	TAILQ_FOREACH(s, &sent, entry)
		if (strcmp(s->name, name) == 0)
			return true;
	return false;
}

/* A file we cannot send would block nothing but would be logged at every
 * flush: move it aside, where a person can look at it. */
static void
outbox_set_aside(const char *name, const char *why)
{
	char *from = execd_path("outbox/%s", name);
	char *to = execd_path("outbox/.bad.%s", name);
	log_warnx("outbox event %s is unusable (%s); moved to %s", name, why, to);
	if (rename(from, to) < 0)
		log_warn("cannot move %s", from);
	free(from);
	free(to);
}

/* The log's line for a job's start or end, written by execd as it sends
 * the event rather than by the shepherd (see shepherd_main).  An event
 * sent again after a reconnection is logged again. */
static void
outbox_log(const json_t *msg)
{
	char key[ATTEMPT_KEY_MAX], err[64];

	if (msg_type_of(msg) == MSG_CHILD_REGISTER) {
		struct msg_child_register m = { 0 };
		msg_child_register_unpack(msg, &m, err, sizeof err);
		active_key(key, sizeof key, m.id, (int)m.task, (int)m.attempt, (int)m.petask);
		log_info("job %s started as pid %lld", key, (long long)m.pid);
	} else if (msg_type_of(msg) == MSG_CHILD_TERM) {
		struct msg_child_term m = { 0 };
		msg_child_term_unpack(msg, &m, err, sizeof err);
		active_key(key, sizeof key, m.id, (int)m.task, (int)m.attempt, (int)m.petask);
		const char *limit = m.limit ? m.limit : m.requeue;
		log_info("job %s ended: exit status %lld%s%s%s%s%s%s", key,
		    (long long)m.exit_status, limit ? ", " : "", limit ? limit : "",
		    m.vacated ? ", vacated: " : "", m.vacated ? m.vacated : "",
		    m.failed ? ", failed: " : "", m.failed ? m.failed : "");
	}
}

/* In name order (versionsort: by job id, then task and attempt, and each
 * attempt's reg before its term), everything not already sent on this
 * connection.  The master may see an event twice; it is idempotent there. */
void
outbox_flush(void)
{
	struct dirent **names;
	char *dir;
	int n;

	if (!link_ready())
		return;
	dir = execd_path("outbox");
	n = scandir(dir, &names, outbox_filter, versionsort);
	if (n < 0) {
		log_warn("cannot read %s", dir);
		free(dir);
		return;
	}
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		char *path, *text;
		const char *why;
		json_t *msg;
		int64_t seq;

		if (!link_ready() || outbox_in_flight(name))
			continue;
		path = execd_path("outbox/%s", name);
		text = read_file(path, OUTBOX_MAX_FILE, NULL, &why);
		free(path);
		if (!text) {
			/* ENOENT: ACKed and removed meanwhile; nothing to do. */
			if (errno != ENOENT)
				outbox_set_aside(name, why);
			continue;
		}
		msg = outbox_msg(name, text);
		free(text);
		if (!msg) {
			outbox_set_aside(name, "not an event");
			continue;
		}
		outbox_log(msg);   /* before link_send, which takes msg */
		if ((seq = link_send(msg)) >= 0) {
			struct outbox_sent *s = xmalloc(sizeof *s);
			s->name = xstrdup(name);
			s->seq = seq;
			TAILQ_INSERT_TAIL(&sent, s, entry);
			log_debug("sent %s as seq %lld", name, (long long)seq);
		}
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(dir);
}

/* The master holds the event durably: the file goes, and a CHILD_TERM's
 * attempt goes with it, which frees its slot. */
void
outbox_ack(int64_t seq)
{
	struct outbox_sent *s;
	char *path;
	size_t n;

	TAILQ_FOREACH(s, &sent, entry)
		if (s->seq == seq)
			break;
	if (!s) {
		log_debug("ACK for seq %lld, which is not an outbox event", (long long)seq);
		return;
	}
	if ((n = outbox_key_len(s->name, ".term.json")) != 0) {
		char *key = xstrndup(s->name, n);
		active_remove(key);
		free(key);
	}
	path = execd_path("outbox/%s", s->name);
	if (unlink(path) < 0 && errno != ENOENT)
		log_warn("cannot remove %s", path);
	free(path);
	outbox_sent_free(s);
}
