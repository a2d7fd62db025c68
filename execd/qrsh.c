/* qrsh.c: a qrsh job's streams on the shepherd's side, relayed with flow control.
 *
 * The connection back to the waiting qrsh client, the job's pipes or pseudo-
 * terminal, and the relay between them. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include "execd/execd.h"

/* How long the client may take to accept us and to read what a job wrote
 * after it ended, before the shepherd gives up on it. */
#define QRSH_CONNECT_MS  10000
#define QRSH_DRAIN_MS    2000

static int
qrsh_connect_addr(const struct qrsh_addr *a, char *why, size_t whylen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	char port[16];
	int fd = -1, rc, one = 1, err = 0;

	snprintf(port, sizeof port, "%d", a->port);
	if ((rc = getaddrinfo(a->host, port, &hints, &res)) != 0) {
		snprintf(why, whylen, "cannot resolve the qrsh client's host %s: %s", a->host,
		    gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol)) < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(why, whylen, "cannot reach the qrsh client at %s:%d: %s", a->host, a->port,
		    strerror(err ? err : ECONNREFUSED));
		return -1;
	}
	/* Keystrokes and short lines go at once. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

/* Blocks (with poll) until the client's START frame, or fails. */
static json_t *
qrsh_read_start(struct qrsh_link *q, char *why, size_t whylen)
{
	int64_t deadline = mono_ms() + QRSH_CONNECT_MS;

	for (;;) {
		struct pollfd p = { .fd = q->sock, .events = POLLIN };
		int type, rc;
		const char *data;
		size_t n;

		if (QRSH_PENDING(&q->tx))
			p.events |= POLLOUT;
		if ((rc = qrsh_frame_take(&q->rx, &type, &data, &n)) > 0) {
			json_error_t jerr;
			json_t *o;
			if (type != QRSH_F_START ||
			    (o = json_loadb(data, n, 0, &jerr)) == NULL || !json_is_object(o)) {
				snprintf(why, whylen, "the qrsh client sent no valid START");
				return NULL;
			}
			return o;
		}
		if (rc < 0 || mono_ms() >= deadline) {
			snprintf(why, whylen, rc < 0 ? "the qrsh client sent an oversized frame" :
			    "the qrsh client did not accept the job within %d s", QRSH_CONNECT_MS / 1000);
			return NULL;
		}
		if (poll(&p, 1, (int)(deadline - mono_ms())) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(why, whylen, "cannot wait for the qrsh client: %s", strerror(errno));
			return NULL;
		}
		if ((p.revents & POLLOUT) && qrsh_buf_flush(&q->tx, q->sock) < 0) {
			snprintf(why, whylen, "the qrsh client closed the connection: %s", strerror(errno));
			return NULL;
		}
		if ((p.revents & (POLLIN | POLLHUP | POLLERR)) &&
		    qrsh_buf_fill(&q->rx, q->sock, QRSH_DATA_CHUNK) <= 0) {
			snprintf(why, whylen, "the qrsh client refused the job (wrong secret or credential?)");
			return NULL;
		}
	}
}

/* The job's side of its streams: a pseudo-terminal when the client asked
 * for one, else three pipes. */
static int
qrsh_make_stdio(struct qrsh_link *q, const struct job *j, bool root, char *why, size_t whylen)
{
	int p[3][2];

	if (q->pty) {
		char *name;
		int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), sl;
		if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || (name = ptsname(m)) == NULL ||
		    (sl = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
			snprintf(why, whylen, "cannot make a pseudo-terminal: %s", strerror(errno));
			return -1;
		}
		/* The job owns its terminal, as after a login. */
		if (root && fchown(sl, j->uid, (gid_t)-1) < 0)
			log_warn("cannot give %s to uid %u", name, (unsigned)j->uid);
		if (q->ws.ws_row && ioctl(m, TIOCSWINSZ, &q->ws) < 0)
			log_warn("cannot set the window size of %s", name);
		q->in_fd = q->out_fd = q->pty_fd = m;
		q->err_fd = -1;
		q->child[0] = q->child[1] = q->child[2] = sl;
		fcntl(m, F_SETFL, O_NONBLOCK);
		return 0;
	}
	for (int i = 0; i < 3; i++)
		if (pipe2(p[i], O_CLOEXEC) < 0) {
			snprintf(why, whylen, "cannot make the job's pipes: %s", strerror(errno));
			return -1;
		}
	q->child[0] = p[0][0];
	q->in_fd = p[0][1];
	q->child[1] = p[1][1];
	q->out_fd = p[1][0];
	q->child[2] = p[2][1];
	q->err_fd = p[2][0];
	fcntl(q->in_fd, F_SETFL, O_NONBLOCK);
	fcntl(q->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(q->err_fd, F_SETFL, O_NONBLOCK);
	return 0;
}

int
qrsh_open(struct qrsh_link *q, const struct job *j, int part, bool root, char *why, size_t whylen)
{
	struct qrsh_addr a;
	struct qrsh_hello hm;
	struct qrsh_start sm;
	json_t *start;
	char *text, *cred = NULL, payload[sizeof QRSH_AUTH_PAYLOAD + QRSH_SECRET_LEN];
	sigset_t set;

	memset(q, 0, sizeof *q);
	q->sock = q->in_fd = q->out_fd = q->err_fd = q->pty_fd = q->sigfd = -1;
	q->child[0] = q->child[1] = q->child[2] = -1;
	q->in_last = -1;
	q->id = j->id;
	if (job_qrsh_parse(j->qrsh, &a) < 0) {
		snprintf(why, whylen, "the job's qrsh address is malformed");
		return -1;
	}
	if ((q->sock = qrsh_connect_addr(&a, why, whylen)) < 0)
		return -1;
	/* auth = none, one host: the job's streams go only to a socket of the
	 * job's owner, never to whoever holds the port after qrsh. */
	if (strcmp(conf->auth, "none") == 0) {
		int64_t owner = auth_loopback_peer_uid(q->sock);
		if (owner != (int64_t)j->uid) {
			snprintf(why, whylen, "the qrsh client's port %d is held by uid %lld, not the "
			    "job's owner", a.port, (long long)owner);
			return -1;
		}
	}
	fcntl(q->sock, F_SETFL, O_NONBLOCK);
	hm = (struct qrsh_hello){ .secret = a.secret, .host = conf->name, .part = part, .id = j->id };
	/* With munge, the client also learns that a daemon of the cluster
	 * (root or its own user) made this connection, not just someone who
	 * knows the secret. */
	if (strcmp(conf->auth, "munge") == 0) {
		char err[256];
		snprintf(payload, sizeof payload, "%s%s", QRSH_AUTH_PAYLOAD, a.secret);
		if ((cred = auth_munge_encode(auth_munge_socket(conf->munge_socket), payload, err,
		    sizeof err)) == NULL) {
			snprintf(why, whylen, "cannot get a munge credential for qrsh: %s", err);
			return -1;
		}
		hm.cred = cred;
	}
	text = qrsh_hello_pack(&hm);
	free(cred);
	qrsh_buf_frame(&q->tx, QRSH_F_HELLO, text, strlen(text));
	free(text);
	if ((start = qrsh_read_start(q, why, whylen)) == NULL)
		return -1;
	qrsh_start_unpack(start, &sm);
	q->pty = sm.pty;
	q->ws.ws_row = (unsigned short)sm.rows;
	q->ws.ws_col = (unsigned short)sm.cols;
	json_decref(start);
	if (qrsh_make_stdio(q, j, root, why, whylen) < 0)
		return -1;
	/* SIGCHLD and SIGTERM are blocked in the shepherd; the relay takes
	 * them from a descriptor so one poll waits for everything. */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	if ((q->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		snprintf(why, whylen, "cannot make a signalfd: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int
qrsh_child_stdio(const struct qrsh_link *q)
{
	for (int i = 0; i < 3; i++)
		if (dup2(q->child[i], i) < 0)
			return -1;
	/* setsid came first: the terminal becomes the job's controlling one. */
	if (q->pty && ioctl(0, TIOCSCTTY, 0) < 0)
		return -1;
	return 0;
}

static void qrsh_from_client(struct qrsh_link *q);

void
qrsh_started(struct qrsh_link *q, pid_t pid)
{
	q->pid = pid;
	for (int i = 0; i < 3; i++)
		if (q->child[i] >= 0 && (i == 0 || q->child[i] != q->child[i - 1]))
			close(q->child[i]);
	q->child[0] = q->child[1] = q->child[2] = -1;
	/* What the client sent right behind its START (stdin, a signal) is
	 * read already. */
	qrsh_from_client(q);
}

static void
qrsh_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The client is gone: like a hangup, nothing of the job survives it. */
static void
qrsh_client_gone(struct qrsh_link *q, const char *how)
{
	if (q->gone)
		return;
	q->gone = true;
	log_warnx("job %lld: the qrsh client %s; killing the job", (long long)q->id, how);
	if (q->pid > 0)
		kill(-q->pid, SIGKILL);
	qrsh_close(&q->sock);
	qrsh_buf_free(&q->tx);
}

/* The client's frames: stdin, its end, signals and window sizes. */
static void
qrsh_from_client(struct qrsh_link *q)
{
	int type, rc, sig;
	const char *data;
	size_t n;

	while ((rc = qrsh_frame_take(&q->rx, &type, &data, &n)) > 0) {
		char text[32];
		switch (type) {
		case QRSH_F_STDIN:
			if (q->in_fd >= 0 && !q->in_eof && n > 0) {
				qrsh_buf_add(&q->in, data, n);
				q->in_last = (unsigned char)data[n - 1];
			}
			break;
		case QRSH_F_EOF:
			/* Acted on once what came before it is in (qrsh_stdin_end). */
			q->in_eof = true;
			break;
		case QRSH_F_SIGNAL:
			snprintf(text, sizeof text, "%.*s", (int)(n < 31 ? n : 31), data);
			sig = atoi(text);
			if (!qrsh_signal_ok(sig))
				break;
			/* The job leads a session of its own whose parent is
			 * elsewhere: an orphaned group, for which the kernel
			 * drops SIGTSTP; stop it for good instead. */
			if (sig == SIGTSTP)
				sig = SIGSTOP;
			if (q->pid > 0)
				kill(-q->pid, sig);
			break;
		case QRSH_F_WINCH:
			snprintf(text, sizeof text, "%.*s", (int)(n < 31 ? n : 31), data);
			if (q->pty && sscanf(text, "%hu %hu", &q->ws.ws_row, &q->ws.ws_col) == 2)
				ioctl(q->pty_fd, TIOCSWINSZ, &q->ws);
			break;
		default:
			break;
		}
	}
	if (rc < 0)
		qrsh_client_gone(q, "sent an oversized frame");
}

/* One read of a job's stream into a frame for the client; false at its end.
 * A pty says EIO once the job and its children have closed it. */
static bool
qrsh_from_job(struct qrsh_link *q, int *fd, int type)
{
	char buf[QRSH_DATA_CHUNK];
	ssize_t r;

	do
		r = read(*fd, buf, sizeof buf);
	while (r < 0 && errno == EINTR);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return true;
	if (r <= 0) {
		if (q->pty) {
			/* Not closed yet: a job closes its terminal before it
			 * exits (cat closes stdout), and closing the master
			 * would hang the terminal up, so SIGHUP would kill the
			 * job on its way out (qrsh_finish closes it). */
			q->in_fd = q->out_fd = -1;
			return false;
		}
		qrsh_close(fd);
		return false;
	}
	if (!q->gone)
		qrsh_buf_frame(&q->tx, type, buf, (size_t)r);
	return true;
}

/* Whether the last byte a terminal with settings t was given leaves a
 * line open in canonical mode: one its EOF character only hands to the
 * reader, so a second is needed for the reader to see the end.  When in
 * doubt (a CR it ignores) the line counts as open: one EOF too many ends
 * the next read too, one too few leaves the job waiting for ever. */
static bool
qrsh_pty_line_open(const struct termios *t, int c)
{
	if (c < 0)
		return false;
	if (c == '\n')
		return (t->c_iflag & INLCR) != 0;
	if (c == '\r')
		return !(t->c_iflag & ICRNL) || (t->c_iflag & IGNCR);
	if (c == _POSIX_VDISABLE)
		return true;
	return c != t->c_cc[VEOF] && c != t->c_cc[VEOL] && c != t->c_cc[VEOL2];
}

/*
 * The end of the client's stdin, once everything before it is written: a
 * pipe is closed; a terminal has no end of input, only its EOF character
 * (VEOF), which ends a read in canonical mode at the start of a line and
 * only hands over the line typed so far elsewhere, so that is typed once
 * or twice, as a person would.  The terminal's settings are read now, not
 * at the start: the job may have changed them.  Without canonical mode
 * VEOF is typed once, since readline and its kind take it as the end of
 * input on an empty line.
 */
static void
qrsh_stdin_end(struct qrsh_link *q)
{
	struct termios t;
	char eof[2];

	if (!q->in_eof || q->in_fd < 0 || QRSH_PENDING(&q->in))
		return;
	if (!q->pty) {
		qrsh_close(&q->in_fd);
		return;
	}
	if (q->eof_typed)
		return;
	q->eof_typed = true;
	if (tcgetattr(q->in_fd, &t) < 0) {
		/* The master answers for its terminal while it is open. */
		log_warn("job %lld: cannot read its terminal's settings", (long long)q->id);
		return;
	}
	if (t.c_cc[VEOF] == _POSIX_VDISABLE)
		return;
	eof[0] = eof[1] = (char)t.c_cc[VEOF];
	qrsh_buf_add(&q->in, eof, (t.c_lflag & ICANON) && qrsh_pty_line_open(&t, q->in_last) ? 2 : 1);
}

/*
 * One round of the relay: waits at most timeout_ms (< 0: forever) and
 * returns a signal the shepherd must handle (SIGCHLD, SIGTERM) or 0.
 * Flow control: the job's pipes are read only while less than
 * QRSH_QUEUE_MAX waits for the client's socket, and the socket only while
 * less than that waits for the job's stdin, so a slow reader at either end
 * stops the writer at the other, never fills our memory.
 */
static int
qrsh_poll(struct qrsh_link *q, int timeout_ms)
{
	struct pollfd p[5];
	int np = 0, isock = -1, iout = -1, ierr = -1, iin = -1, isig;
	bool room = QRSH_PENDING(&q->tx) < QRSH_QUEUE_MAX;

	/* Before the poll: an end with nothing left to write wakes no one. */
	qrsh_stdin_end(q);
	p[isig = np++] = (struct pollfd){ .fd = q->sigfd, .events = POLLIN };
	if (q->sock >= 0) {
		short ev = 0;
		if (QRSH_PENDING(&q->in) < QRSH_QUEUE_MAX)
			ev |= POLLIN;
		if (QRSH_PENDING(&q->tx))
			ev |= POLLOUT;
		p[isock = np++] = (struct pollfd){ .fd = q->sock, .events = ev };
	}
	if (q->out_fd >= 0) {
		short ev = room || q->gone ? POLLIN : 0;
		/* The pty master is the job's stdin too. */
		if (q->pty && QRSH_PENDING(&q->in))
			ev |= POLLOUT;
		if (ev)
			p[iout = np++] = (struct pollfd){ .fd = q->out_fd, .events = ev };
	}
	if (q->err_fd >= 0 && (room || q->gone))
		p[ierr = np++] = (struct pollfd){ .fd = q->err_fd, .events = POLLIN };
	if (!q->pty && q->in_fd >= 0 && QRSH_PENDING(&q->in))
		p[iin = np++] = (struct pollfd){ .fd = q->in_fd, .events = POLLOUT };
	if (poll(p, (nfds_t)np, timeout_ms) < 0)
		return 0;
	/* A descriptor polled after its close is our bug, and would make
	 * every poll return at once. */
	for (int i = 0; i < np; i++)
		assert(!(p[i].revents & POLLNVAL));
	if (isock >= 0 && (p[isock].revents & (POLLIN | POLLHUP | POLLERR))) {
		if (qrsh_buf_fill(&q->rx, q->sock, QRSH_DATA_CHUNK) <= 0)
			qrsh_client_gone(q, "closed the connection");
		else
			qrsh_from_client(q);
	}
	if (q->sock >= 0 && (isock < 0 || (p[isock].revents & POLLOUT) || QRSH_PENDING(&q->tx)) &&
	    qrsh_buf_flush(&q->tx, q->sock) < 0)
		qrsh_client_gone(q, "stopped reading");
	if (iout >= 0 && q->out_fd >= 0 && (p[iout].revents & POLLOUT)) {
		if (qrsh_buf_flush(&q->in, q->out_fd) < 0)
			qrsh_buf_free(&q->in);
	}
	if (iout >= 0 && q->out_fd >= 0 && (p[iout].revents & (POLLIN | POLLHUP | POLLERR)))
		qrsh_from_job(q, &q->out_fd, QRSH_F_STDOUT);
	if (ierr >= 0 && q->err_fd >= 0 && (p[ierr].revents & (POLLIN | POLLHUP | POLLERR)))
		qrsh_from_job(q, &q->err_fd, QRSH_F_STDERR);
	if (iin >= 0 && (p[iin].revents & (POLLOUT | POLLERR | POLLHUP))) {
		/* A job that closed its stdin takes nothing more. */
		if (qrsh_buf_flush(&q->in, q->in_fd) < 0) {
			qrsh_buf_free(&q->in);
			qrsh_close(&q->in_fd);
		}
	}
	if (p[isig].revents & POLLIN) {
		struct signalfd_siginfo si;
		if (read(q->sigfd, &si, sizeof si) == (ssize_t)sizeof si)
			return (int)si.ssi_signo;
	}
	return 0;
}

int
qrsh_wait(struct qrsh_link *q, int64_t timeout_ms)
{
	int64_t deadline = timeout_ms >= 0 ? mono_ms() + timeout_ms : -1;

	for (;;) {
		int64_t left = deadline < 0 ? -1 : deadline - mono_ms();
		int sig;
		if (deadline >= 0 && left <= 0)
			return 0;
		if ((sig = qrsh_poll(q, (int)(left > 1000000 ? 1000000 : left))) != 0)
			return sig;
	}
}

void
qrsh_finish(struct qrsh_link *q, int exit_status, int sig)
{
	int64_t deadline = mono_ms() + QRSH_DRAIN_MS;
	char text[32];

	/* What the job wrote before it ended still goes out; a child that
	 * escaped its group and keeps a pipe open gets QRSH_DRAIN_MS.  A
	 * pty's master is the job's stdin and its output at once: it stays
	 * open until it says EIO, which comes only once the kernel has handed
	 * over everything the job wrote (that can arrive after the SIGCHLD:
	 * a pty passes bytes on through a kernel worker). */
	qrsh_buf_free(&q->in);
	if (q->pty)
		q->in_fd = -1;
	else
		qrsh_close(&q->in_fd);
	while ((q->out_fd >= 0 || q->err_fd >= 0) && !q->gone && mono_ms() < deadline)
		qrsh_poll(q, (int)(deadline - mono_ms()));
	/* The job has ended: the hangup reaches only what escaped it. */
	qrsh_close(&q->pty_fd);
	q->out_fd = -1;
	if (q->gone)
		return;
	snprintf(text, sizeof text, "%d %d", exit_status, sig);
	qrsh_buf_frame(&q->tx, QRSH_F_EXIT, text, strlen(text));
	deadline = mono_ms() + QRSH_DRAIN_MS;
	while (q->sock >= 0 && QRSH_PENDING(&q->tx) && mono_ms() < deadline) {
		struct pollfd p = { .fd = q->sock, .events = POLLOUT };
		poll(&p, 1, (int)(deadline - mono_ms()));
		if (qrsh_buf_flush(&q->tx, q->sock) < 0)
			return;
	}
	if (q->sock < 0)
		return;
	/* Closing with the client's unread bytes in our buffer would reset
	 * the connection and could lose the end of the output: say we are
	 * done and read until the client closes. */
	shutdown(q->sock, SHUT_WR);
	while (mono_ms() < deadline) {
		struct pollfd p = { .fd = q->sock, .events = POLLIN };
		char buf[4096];
		if (poll(&p, 1, (int)(deadline - mono_ms())) <= 0 || read(q->sock, buf, sizeof buf) <= 0)
			break;
	}
	qrsh_close(&q->sock);
}
