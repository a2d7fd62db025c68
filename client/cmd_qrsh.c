/* cmd_qrsh.c: qrsh: run a command as a job on a host the scheduler picks, as if it ran here.
 *
 * Its streams, signals and exit code are relayed; -n N runs N copies on N
 * hosts; -inherit runs a task of the parallel job it is called from. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include "common/common.h"
#include "client/client.h"
#include "common/msg.h"
#include "common/msg_req.h"

extern char **environ;

static int qrsh_run(int argc, char **argv);

const struct cmd cmd_qrsh = {
	"qrsh",
	"qrsh [options] command [args...]\n"
	"options: -N name  -q queue  -l resource=value,...  -ar reservation  -n hosts\n"
	"         -cwd  -wd dir  -V  -v var[=value],...  -p priority  -hold_jid job,...\n"
	"         -now y|n  -pty y|n  -prefix  -noshell  -help\n"
	"       qrsh -inherit [-nostdin] [-V] [-cwd] [-verbose] host command [args...]\n"
	"Runs command on a host chosen like any job's, with stdin, stdout, stderr,\n"
	"signals and the exit code relayed; -n N runs N copies on N hosts.\n"
	"-inherit, inside a parallel job ($JOB_ID), runs the command line on host,\n"
	"one of the job's hosts, as a task of the job.\n",
	qrsh_run,
};

/* How long a connecting shepherd may take to say HELLO, and how long
 * -now y gives the scheduler (a dispatch is normally in the commit of the
 * submission; an idle host may be between two PULLs). */
#define QRSH_HELLO_MS   5000
/* Connections still to say HELLO, read in the relay's one poll; a new one
 * beyond this many drops the oldest. */
#define QRSH_HELLOS_MAX 8
#define QRSH_NOW_MS     500
/* After a part was killed by a signal, how long to wait for the master's
 * word on why (qdel, a lost host) before saying nothing more. */
#define QRSH_WHY_MS     2000
/* How long a qrsh -inherit task's shepherd may take to call back. */
#define QRSH_INHERIT_MS 120000
/* How long -inherit asks again while the host's slots are full of tasks. */
#define QRSH_SLOT_WAIT_MS 2000

/* A connection that has not said HELLO yet. */
struct hello {
	int             fd;
	int64_t         deadline;
	struct qrsh_buf rx;
};

/* One part's stream. */
struct part {
	int             fd;         /* -1: not connected yet, or ended */
	bool            connected, ended;
	char            host[256];
	struct qrsh_buf tx, rx;
	struct qrsh_buf line[2];    /* -prefix: the unfinished line of stdout, stderr */
};

static struct {
	int64_t          id;
	int              nparts, nconnected, nended;
	struct part     *parts;
	int              lfd;           /* listening */
	struct hello     hellos[QRSH_HELLOS_MAX];
	int              nhellos;
	int              sigpipe[2];
	bool             pty, prefix, stdin_eof, tty_raw;
	bool             need_cred;     /* the master has munge: so do our shepherds */
	bool             inherit;       /* -inherit: a task of a job, which is not ours to end */
	int64_t          inherit_deadline;
	struct termios   tty_saved;
	int              exit_code;     /* the first non-zero, else 0 */
	int              killed_by;     /* a part's signal, if any */
	bool             lost;          /* a stream broke without an exit */
	json_t          *end;           /* the master's WAIT reply, once in */
	int64_t          wseq;
	char             secret[QRSH_SECRET_LEN + 1];
} q;

static void
on_signal(int sig)
{
	unsigned char c = (unsigned char)sig;
	int e = errno;
	/* A full pipe already holds a wake-up. */
	if (write(q.sigpipe[1], &c, 1) < 0)
		(void)0;
	errno = e;
}

static void
signals_catch(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGCONT, SIGWINCH,
	    SIGUSR1, SIGUSR2 };
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, NULL);
}

static void
tty_restore(void)
{
	if (q.tty_raw)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &q.tty_saved);
	q.tty_raw = false;
}

/* With -pty the remote terminal does the line editing and echo, and a
 * typed ^C or ^Z is a byte for it to turn into a signal. */
static void
tty_raw(void)
{
	struct termios t;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &q.tty_saved) < 0)
		return;
	t = q.tty_saved;
	cfmakeraw(&t);
	if (tcsetattr(STDIN_FILENO, TCSADRAIN, &t) == 0)
		q.tty_raw = true;
}

static void handle_signals(void);

/* Blocks while our reader is slow (that is the flow control), but still
 * passes signals on meanwhile. */
static void
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR) {
				handle_signals();
				continue;
			}
			/* Our reader is gone (SIGPIPE ignored): end as SIGPIPE
			 * would have ended us; the shepherds then kill the job. */
			tty_restore();
			_exit(128 + SIGPIPE);
		}
		p += w;
		n -= (size_t)w;
	}
}

/* A part's output: straight through, or line by line after "RANK: ". */
static void
output(int rank, int stream, const char *p, size_t n, bool flush)
{
	struct qrsh_buf *l = &q.parts[rank].line[stream];
	int fd = stream ? STDERR_FILENO : STDOUT_FILENO;
	char pre[24];
	size_t plen;

	if (!q.prefix) {
		write_all(fd, p, n);
		return;
	}
	plen = (size_t)snprintf(pre, sizeof pre, "%d: ", rank);
	qrsh_buf_add(l, p, n);
	while (QRSH_PENDING(l)) {
		char *s = l->p + l->off, *nl = memchr(s, '\n', QRSH_PENDING(l));
		size_t len;
		if (!nl && !flush)
			break;
		len = nl ? (size_t)(nl - s) + 1 : QRSH_PENDING(l);
		{
			/* One write per line, so parts' lines do not interleave. */
			char *out = xmalloc(plen + len + 1);
			memcpy(out, pre, plen);
			memcpy(out + plen, s, len);
			if (!nl)
				out[plen + len++] = '\n';
			write_all(fd, out, plen + len);
			free(out);
		}
		l->off += nl ? len : QRSH_PENDING(l);
	}
}

static void
send_all_parts(int type, const void *data, size_t n)
{
	for (int i = 0; i < q.nparts; i++)
		if (q.parts[i].fd >= 0)
			qrsh_buf_frame(&q.parts[i].tx, type, data, n);
}

static void
flush_parts(void)
{
	for (int i = 0; i < q.nparts; i++) {
		struct part *p = &q.parts[i];
		if (p->fd >= 0 && QRSH_PENDING(&p->tx) && qrsh_buf_flush(&p->tx, p->fd) < 0) {
			qrsh_buf_free(&p->tx);
		}
	}
}

static void
send_winch(void)
{
	struct winsize ws;
	char text[32];

	if (!q.pty || ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) < 0)
		return;
	snprintf(text, sizeof text, "%u %u", ws.ws_row, ws.ws_col);
	send_all_parts(QRSH_F_WINCH, text, strlen(text));
}

static void
part_end(struct part *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	if (!p->ended) {
		p->ended = true;
		q.nended++;
	}
}

/* Before the job runs, a signal that would end qrsh ends the job too. */
static void NOWQ_NORETURN
cancel(int sig, const char *why)
{
	json_t *rep;

	tty_restore();
	if (q.inherit) {
		/* The job is not ours to delete; its execd ends the task with it. */
		client_errx("qrsh -inherit got signal %d before the task ran", sig);
		exit(128 + sig);
	}
	rep = client_request(msg_jobsel_pack_one(MSG_DELETE, q.id));
	json_decref(rep);
	if (why)
		client_errx("%s", why);
	else
		client_errx("job %lld deleted: qrsh got signal %d before it ran", (long long)q.id, sig);
	exit(sig ? 128 + sig : 1);
}

static void
handle_signals(void)
{
	unsigned char sigs[64];
	ssize_t r = read(q.sigpipe[0], sigs, sizeof sigs);
	char text[16];

	for (ssize_t i = 0; i < r; i++) {
		int sig = sigs[i];
		if (sig == SIGWINCH) {
			send_winch();
			continue;
		}
		if (q.nconnected < q.nparts && (sig == SIGINT || sig == SIGTERM || sig == SIGHUP ||
		    sig == SIGQUIT))
			cancel(sig, NULL);
		snprintf(text, sizeof text, "%d", sig);
		send_all_parts(QRSH_F_SIGNAL, text, strlen(text));
		if (sig == SIGTSTP) {
			/* Stopped like the remote side: flush the stop first,
			 * then let the shell see us stop; SIGCONT resumes both. */
			for (int k = 0; k < q.nparts; k++)
				if (q.parts[k].fd >= 0) {
					int fl = fcntl(q.parts[k].fd, F_GETFL);
					fcntl(q.parts[k].fd, F_SETFL, fl & ~O_NONBLOCK);
					qrsh_buf_flush(&q.parts[k].tx, q.parts[k].fd);
					fcntl(q.parts[k].fd, F_SETFL, fl);
				}
			tty_restore();
			raise(SIGSTOP);
		} else if (sig == SIGCONT && q.pty)
			tty_raw();
	}
}

/*
 * The shepherd's HELLO on fd: the job's secret, and proof that root or our
 * own user made the connection, for the secret alone is only as private as
 * every copy of the job: a munge credential of that uid, which it must
 * have when the master said so (need_cred), else (auth = none, one host)
 * the kernel's word on who owns the connecting socket.  NULL when
 * accepted, else why not.
 */
static const char *
hello_check(int fd, const char *data, size_t n, int *rank, char *host, size_t hostlen)
{
	static char why[512];
	json_error_t jerr;
	json_t *h = json_loadb(data, n, 0, &jerr);
	struct qrsh_hello m;
	const char *secret, *cred, *hn;
	int64_t part;
	unsigned diff = 0;

	qrsh_hello_unpack(h, &m);
	secret = m.secret;
	hn = m.host;
	part = m.part;
	if (!h || !json_is_object(h) || !secret || !hn || strlen(secret) != QRSH_SECRET_LEN || m.id != q.id ||
	    part < 0 || part >= q.nparts) {
		json_decref(h);
		return "malformed HELLO";
	}
	/* Compared in constant time: the secret is the key. */
	for (int i = 0; i < QRSH_SECRET_LEN; i++)
		diff |= (unsigned)(secret[i] ^ q.secret[i]);
	if (diff) {
		json_decref(h);
		return "wrong secret";
	}
	if ((cred = m.cred) != NULL) {
		char payload[sizeof QRSH_AUTH_PAYLOAD + QRSH_SECRET_LEN], err[256];
		uid_t uid;
		gid_t gid;
		snprintf(payload, sizeof payload, "%s%s", QRSH_AUTH_PAYLOAD, q.secret);
		if (auth_munge_decode(auth_munge_socket(NULL), cred, payload, &uid, &gid, err,
		    sizeof err) < 0) {
			snprintf(why, sizeof why, "munge credential refused: %s", err);
			json_decref(h);
			return why;
		}
		if (uid != 0 && uid != getuid()) {
			snprintf(why, sizeof why, "munge credential of uid %u, neither root nor ours",
			    (unsigned)uid);
			json_decref(h);
			return why;
		}
	} else if (q.need_cred) {
		json_decref(h);
		return "no munge credential, which this cluster's shepherds send";
	} else {
		int64_t owner = auth_loopback_peer_uid(fd);
		if (owner < 0) {
			json_decref(h);
			return "no munge credential, and the connection is not from this host";
		}
		if (owner != 0 && owner != (int64_t)getuid()) {
			snprintf(why, sizeof why, "the connection is uid %lld's, neither root's nor ours",
			    (long long)owner);
			json_decref(h);
			return why;
		}
	}
	if (q.parts[part].connected) {
		json_decref(h);
		return "a second connection for one part";
	}
	*rank = (int)part;
	snprintf(host, hostlen, "%s", hn);
	json_decref(h);
	return NULL;
}

/* A connection refused: not ours (a port scan, a stale job, a forgery);
 * we keep waiting for the genuine shepherd. */
static void
hello_refuse(int i, const char *why)
{
	client_warnx("refused a connection: %s", why);
	qrsh_buf_free(&q.hellos[i].rx);
	close(q.hellos[i].fd);
	q.nhellos--;
	memmove(&q.hellos[i], &q.hellos[i + 1], (size_t)(q.nhellos - i) * sizeof q.hellos[0]);
}

/* A connection came: its HELLO is read in the relay's poll with the rest,
 * so one that says nothing holds up no stream and no other shepherd. */
static void
hello_accept(void)
{
	int fd = accept4(q.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), one = 1;

	if (fd < 0)
		return;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (q.nhellos == QRSH_HELLOS_MAX)
		hello_refuse(0, "no HELLO before newer connections came");
	q.hellos[q.nhellos++] = (struct hello){ .fd = fd, .deadline = mono_ms() + QRSH_HELLO_MS };
}

/* A shepherd proved itself: it is the part's stream, and gets START. */
static void
part_start(int rank, int fd, const char *host, struct qrsh_buf *rx)
{
	struct qrsh_start m = { .pty = q.pty };
	char *text;
	struct winsize ws;

	if (q.pty && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
		m = (struct qrsh_start){ q.pty, true, ws.ws_row, ws.ws_col };
	text = qrsh_start_pack(&m);
	q.parts[rank].fd = fd;
	q.parts[rank].connected = true;
	snprintf(q.parts[rank].host, sizeof q.parts[rank].host, "%s", host);
	qrsh_buf_frame(&q.parts[rank].tx, QRSH_F_START, text, strlen(text));
	free(text);
	/* Whatever came after the HELLO is the part's already. */
	q.parts[rank].rx = *rx;
	q.nconnected++;
	if (q.nconnected == q.nparts)
		client_progress_clear();
}

/* Bytes on a connection still to say HELLO: wait for the rest, or take it
 * as a part's stream, or refuse it. */
static void
hello_read(int i)
{
	struct hello *h = &q.hellos[i];
	const char *data, *why;
	char host[256];
	int type, rank = -1, fd = h->fd, rc = qrsh_buf_fill(&h->rx, h->fd, QRSH_DATA_CHUNK);
	size_t n;

	if (rc <= 0) {
		hello_refuse(i, rc < 0 ? "the connection failed before its HELLO" :
		    "closed before its HELLO");
		return;
	}
	if ((rc = qrsh_frame_take(&h->rx, &type, &data, &n)) == 0)
		return;
	if (rc < 0)
		why = "an oversized frame";
	else if (type != QRSH_F_HELLO)
		why = "no HELLO";
	else
		why = hello_check(fd, data, n, &rank, host, sizeof host);
	if (why) {
		hello_refuse(i, why);
		return;
	}
	part_start(rank, fd, host, &h->rx);
	q.nhellos--;
	memmove(&q.hellos[i], &q.hellos[i + 1], (size_t)(q.nhellos - i) * sizeof q.hellos[0]);
}

static void
part_frames(int rank)
{
	struct part *p = &q.parts[rank];
	int type, rc, st, sig;
	const char *data;
	size_t n;

	while ((rc = qrsh_frame_take(&p->rx, &type, &data, &n)) > 0) {
		char text[32];
		switch (type) {
		case QRSH_F_STDOUT:
			output(rank, 0, data, n, false);
			break;
		case QRSH_F_STDERR:
			output(rank, 1, data, n, false);
			break;
		case QRSH_F_EXIT:
			snprintf(text, sizeof text, "%.*s", (int)(n < 31 ? n : 31), data);
			if (sscanf(text, "%d %d", &st, &sig) != 2)
				st = 255, sig = 0;
			if (st && !q.exit_code)
				q.exit_code = st;
			if (sig && !q.killed_by)
				q.killed_by = sig;
			output(rank, 0, "", 0, true);
			output(rank, 1, "", 0, true);
			part_end(p);
			return;
		default:
			break;
		}
	}
	if (rc < 0)
		goto broken;
	return;
broken:
	part_end(p);
	q.lost = true;
	if (!q.exit_code)
		q.exit_code = 255;
}

/* The master's answer to our WAIT: the job is over in its books. */
static void
master_reply(void)
{
	const char *why = NULL;
	struct msg_reply env;
	json_t *rep = client_recv(0, &why);

	if (!rep) {
		if (why) {
			/* The master is away; the streams do not need it. */
			q.wseq = -1;
		}
		return;
	}
	msg_reply_unpack(rep, &env, NULL, 0);
	if (env.seq == q.wseq && !q.end)
		q.end = rep;
	else
		json_decref(rep);
}

/* The job of WAIT's reply, once it came; NULL before. */
static const json_t *
end_job(void)
{
	struct msg_waited m = { NULL };

	if (q.end)
		msg_waited_unpack(q.end, &m);
	return m.job;
}

/* Says how the job ended when the streams cannot: qdel, a lost host, a
 * start that failed.  Returns the exit status qrsh should give. */
static int
report_end(void)
{
	const json_t *job = end_job();
	struct msg_job_end e;
	const char *reason, *state;

	msg_job_end_unpack(job, &e);
	reason = e.reason;
	state = e.state;
	if (!job) {
		if (q.lost)
			client_errx("job %lld: the connection to its host broke before it ended",
			    (long long)q.id);
		return q.exit_code ? q.exit_code : 1;
	}
	if (state && strcmp(state, "done") == 0 && !q.lost)
		return q.exit_code;
	client_errx("job %lld %s%s%s", (long long)q.id, state ? state : "ended",
	    reason ? ": " : "", reason ? reason : "");
	return q.exit_code ? q.exit_code : 1;
}

/* Whether the master knows more of the end than the exit status says:
 * qdel, a limit of -l, the other parts killed for one that failed; not a
 * plain "killed by signal N", which the status says already. */
static bool
explain_end(void)
{
	struct msg_job_end e;
	const char *state, *reason;

	msg_job_end_unpack(end_job(), &e);
	state = e.state;
	reason = e.reason;
	if (!state || strcmp(state, "done") == 0)
		return false;
	if (strcmp(state, "deleted") == 0)
		return true;
	return q.killed_by && reason && strncmp(reason, "killed by signal", 16) != 0;
}

/*
 * The relay: stdin to every part (read only once all are connected and
 * while each has room: flow control), parts' frames to stdout and stderr
 * (a blocking write, so a slow reader of ours slows the job's pipes on the
 * remote side), signals to every part, and the master's WAIT reply.
 */
static int
relay(void)
{
	struct pollfd *pf = xcalloc((size_t)q.nparts + 4 + QRSH_HELLOS_MAX, sizeof *pf);
	int ihello[QRSH_HELLOS_MAX];
	int *ipart = xcalloc((size_t)q.nparts, sizeof *ipart);
	int64_t why_deadline = -1, end_deadline = -1;
	bool waiting_shown = false;

	for (;;) {
		int np = 0, istdin = -1, ilisten = -1, imaster = -1, isig, timeout, nhellos = q.nhellos;
		bool room = q.nconnected == q.nparts;

		if (q.nended == q.nparts) {
			/* A part killed by a signal may have been qdel'd, or its
			 * host lost: the master's WAIT says which. */
			if (!q.killed_by && !q.lost)
				break;
			if (q.end || q.wseq < 0)
				break;
			if (why_deadline < 0)
				why_deadline = mono_ms() + QRSH_WHY_MS;
			if (mono_ms() >= why_deadline)
				break;
		}
		/* The master ended the job while parts still stream: a lost
		 * host (its shepherd may live on, cut off), or an end whose
		 * streams are still on their way; they get QRSH_WHY_MS. */
		if (q.end && q.nended < q.nparts) {
			if (end_deadline < 0)
				end_deadline = mono_ms() + QRSH_WHY_MS;
			else if (mono_ms() >= end_deadline) {
				q.lost = true;
				break;
			}
		}
		if (q.inherit && q.nconnected < q.nparts && mono_ms() >= q.inherit_deadline) {
			client_errx("executing task of job %lld failed: it did not start within %d s",
			    (long long)q.id, QRSH_INHERIT_MS / 1000);
			free(pf);
			free(ipart);
			return 1;
		}
		if (q.nconnected < q.nparts && !waiting_shown && !q.inherit) {
			client_progress("waiting for interactive job %lld to be scheduled ...",
			    (long long)q.id);
			waiting_shown = true;
		}
		for (int i = 0; i < q.nparts; i++)
			if (q.parts[i].fd >= 0 && QRSH_PENDING(&q.parts[i].tx) >= QRSH_QUEUE_MAX)
				room = false;
		pf[isig = np++] = (struct pollfd){ .fd = q.sigpipe[0], .events = POLLIN };
		if (!q.stdin_eof && room)
			pf[istdin = np++] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
		if (q.nconnected < q.nparts)
			pf[ilisten = np++] = (struct pollfd){ .fd = q.lfd, .events = POLLIN };
		for (int k = 0; k < q.nhellos; k++)
			pf[ihello[k] = np++] = (struct pollfd){ .fd = q.hellos[k].fd, .events = POLLIN };
		if (q.wseq > 0 && !q.end && client_fd() >= 0)
			pf[imaster = np++] = (struct pollfd){ .fd = client_fd(), .events = POLLIN };
		for (int i = 0; i < q.nparts; i++) {
			struct part *p = &q.parts[i];
			ipart[i] = -1;
			if (p->fd >= 0)
				pf[ipart[i] = np++] = (struct pollfd){ .fd = p->fd,
				    .events = (short)(POLLIN | (QRSH_PENDING(&p->tx) ? POLLOUT : 0)) };
		}
		timeout = why_deadline >= 0 || end_deadline >= 0 ||
		    (q.inherit && q.nconnected < q.nparts) ? 100 : -1;
		if (q.nhellos) {
			/* The oldest connection's deadline comes first. */
			int64_t left = q.hellos[0].deadline - mono_ms();
			left = left < 0 ? 0 : left;
			timeout = timeout >= 0 && timeout < left ? timeout : (int)left;
		}
		if (poll(pf, (nfds_t)np, timeout) < 0) {
			if (errno != EINTR)
				fatal("poll");
			continue;
		}
		if (pf[isig].revents & POLLIN)
			handle_signals();
		if (imaster >= 0 && (pf[imaster].revents & (POLLIN | POLLHUP | POLLERR)))
			master_reply();
		if (q.end && q.nconnected < q.nparts) {
			/* It ended before every part connected: qdel, a failed
			 * start, a client the shepherd could not reach. */
			client_progress_clear();
			tty_restore();
			free(pf);
			free(ipart);
			q.lost = true;
			return report_end();
		}
		/* From the newest down, as taking one moves those above it. */
		for (int k = nhellos - 1; k >= 0; k--)
			if (pf[ihello[k]].revents & (POLLIN | POLLHUP | POLLERR))
				hello_read(k);
		while (q.nhellos && mono_ms() >= q.hellos[0].deadline)
			hello_refuse(0, "no HELLO in time");
		if (ilisten >= 0 && (pf[ilisten].revents & POLLIN))
			hello_accept();
		if (istdin >= 0 && (pf[istdin].revents & (POLLIN | POLLHUP | POLLERR))) {
			char buf[QRSH_DATA_CHUNK];
			ssize_t r = read(STDIN_FILENO, buf, sizeof buf);
			if (r > 0)
				send_all_parts(QRSH_F_STDIN, buf, (size_t)r);
			else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
				q.stdin_eof = true;
				send_all_parts(QRSH_F_EOF, NULL, 0);
			}
		}
		for (int i = 0; i < q.nparts; i++) {
			struct part *p = &q.parts[i];
			int r;
			if (p->fd < 0 || ipart[i] < 0 ||
			    !(pf[ipart[i]].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = qrsh_buf_fill(&p->rx, p->fd, QRSH_DATA_CHUNK);
			if (r < 0 || r == 0) {
				part_frames(i);
				if (p->fd >= 0) {
					part_end(p);
					q.lost = true;
					if (!q.exit_code)
						q.exit_code = 255;
				}
				continue;
			}
			part_frames(i);
		}
		flush_parts();
	}
	free(pf);
	free(ipart);
	tty_restore();
	if (q.lost || explain_end())
		return report_end();
	return q.exit_code;
}

/* Where shepherds reach us: $NOWQ_QRSH_HOST, else this host's name. */
static const char *
listen_host(void)
{
	static char name[256];
	const char *e = getenv("NOWQ_QRSH_HOST");

	if (e && *e)
		return e;
	if (gethostname(name, sizeof name - 1) < 0)
		return my_hostname();
	return name;
}

static int
listen_any(int backlog)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
	int fd, off = 0;

	if ((fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) >= 0) {
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
		if (bind(fd, (struct sockaddr *)&a6, sizeof a6) == 0 && listen(fd, backlog) == 0)
			return fd;
		close(fd);
	}
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a4, sizeof a4) == 0 && listen(fd, backlog) == 0)
		return fd;
	close(fd);
	return -1;
}

static int
listen_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -1;
	return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
	    ((struct sockaddr_in *)&ss)->sin_port);
}

/* -now y: the job must be dispatched at once (in its submission's commit,
 * or while an idle host comes back to pull), else it is deleted. */
static bool
dispatched_now(void)
{
	int64_t deadline = mono_ms() + QRSH_NOW_MS;

	for (;;) {
		json_t *rep = client_request(msg_status_pack_one(q.id));
		size_t n;
		struct msg_job_row *rows = msg_job_objects_unpack(rep, &n);
		bool yes = n > 0 && rows[0].state && strcmp(rows[0].state, "pending") != 0;
		free(rows);
		json_decref(rep);
		if (yes)
			return true;
		if (mono_ms() >= deadline)
			return false;
		usleep(20000);
	}
}

/*
 * qrsh -inherit HOST COMMAND: a task of the parallel job $JOB_ID on HOST,
 * one of its hosts.  The master decides whether we may (our uid is the
 * job's, the job runs with control_slaves, HOST was given to it) and the
 * host's execd starts the task, which calls back here as a qrsh job's
 * shepherd does; the streams are relayed as for one part.
 */
static int
qrsh_inherit(int argc, char **argv)
{
	const char *jid = getenv("JOB_ID"), *host = NULL;
	bool nostdin = false, with_env = false, with_cwd = false;
	char cwd[PATH_MAX], *end, *addr;
	const char *bad = NULL;
	json_t *tenv, *req, *rep, *words;
	struct msg_inherited done;
	struct msg_reply env = { 0 };
	int i, port, fd;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-inherit") == 0 || strcmp(argv[i], "-verbose") == 0)
			continue;
		else if (strcmp(argv[i], "-nostdin") == 0)
			nostdin = true;
		else if (strcmp(argv[i], "-V") == 0)
			with_env = true;
		else if (strcmp(argv[i], "-cwd") == 0)
			with_cwd = true;
		else {
			client_errx("qrsh -inherit takes only -nostdin, -V, -cwd and -verbose, not %s",
			    argv[i]);
			return 1;
		}
	}
	if (!jid || !*jid) {
		client_errx("\"qrsh\" called with option \"-inherit\", but \"JOB_ID\" not set in environment");
		return 1;
	}
	q.id = strtoll(jid, &end, 10);
	if (*end || q.id <= 0) {
		client_errx("\"qrsh\" called with option \"-inherit\", but \"JOB_ID\" is not a job id: %s", jid);
		return 1;
	}
	if (argc - i < 2) {
		client_errx("qrsh -inherit needs a host and a command");
		return 1;
	}
	host = argv[i++];
	if (nostdin && ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0 || dup2(fd, 0) < 0)) {
		client_errx("cannot open /dev/null: %s", strerror(errno));
		return 1;
	}
	if (!getcwd(cwd, sizeof cwd))
		with_cwd = false;
	if ((q.lfd = listen_any(16)) < 0 || (port = listen_port(q.lfd)) < 0 ||
	    pipe2(q.sigpipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		client_errx("cannot listen for the task's streams: %s", strerror(errno));
		return 1;
	}
	auth_nonce(q.secret, sizeof q.secret);
	addr = xasprintf("%s %d %s", listen_host(), port, q.secret);
	/* The shepherd joins the words into the line the owner's shell runs,
	 * as for any qrsh command (Open MPI quotes its orted's arguments). */
	if ((words = strv_json(argv + i, false, &bad)) == NULL) {
		client_errx("the command is not UTF-8 text: %s", bad);
		free(addr);
		return 1;
	}
	tenv = with_env ? strv_json(environ, true, NULL) : NULL;
	req = msg_inherit_pack(&(struct msg_inherit){ .id = q.id, .host = host, .argv = words, .env = tenv,
	    .cwd = with_cwd ? cwd : NULL, .qrsh = addr });
	free(addr);
	json_decref(words);
	json_decref(tenv);
	/* A task that just ended may not be known ended on the master yet:
	 * a host whose slots its tasks fill is asked again for a moment. */
	for (int64_t until = mono_ms() + QRSH_SLOT_WAIT_MS;;) {
		rep = client_request(json_incref(req));
		msg_reply_unpack(rep, &env, NULL, 0);
		if (env.ok || !env.error || strcmp(env.error, ERR_LIMIT) != 0 || mono_ms() >= until)
			break;
		json_decref(rep);
		usleep(100000);
	}
	json_decref(req);
	if (!env.ok) {
		client_errx("executing task of job %lld failed: %s", (long long)q.id,
		    client_reply_message(rep));
		json_decref(rep);
		return 1;
	}
	msg_inherited_unpack(rep, &done);
	json_decref(rep);
	q.inherit = true;
	q.inherit_deadline = mono_ms() + QRSH_INHERIT_MS;
	q.need_cred = done.qrsh_cred;
	q.nparts = 1;
	q.wseq = -1;
	q.parts = xcalloc(1, sizeof *q.parts);
	q.parts[0].fd = -1;
	signals_catch();
	return relay();
}

static int
qrsh_run(int argc, char **argv)
{
	struct qsub_opts o;
	struct qsub_env env;
	char cwd[PATH_MAX], err[512], *addr;
	json_t *job, *req, *rep, *deps;
	struct msg_submitted done;
	const char *why = NULL;
	int rc = 1, port;

	for (int i = 1; i < argc && argv[i][0] == '-'; i++)
		if (strcmp(argv[i], "-inherit") == 0)
			return qrsh_inherit(argc, argv);
	qsub_opts_init(&o);
	o.qrsh = true;
	if (qsub_opts_parse_argv(&o, argc - 1, argv + 1) < 0) {
		client_errx("%s", o.err);
		goto out;
	}
	if (o.help) {
		client_usage(&cmd_qrsh, stdout);
		rc = 0;
		goto out;
	}
	if (!o.operands) {
		client_errx("a command is needed: nowq's qrsh runs commands, not logins");
		goto out;
	}
	if (o.sync == 1 || o.t_first || o.cron || o.hold == 1 || o.out_path || o.err_path || o.in_path) {
		client_errx("qrsh takes no -sync, -t, --cron, -h, -o, -e or -i: its job's streams are the "
		    "terminal's and it runs now");
		goto out;
	}
	if (o.stage_in || o.stage_out) {
		client_errx("qrsh stages no files (--stage-in, --stage-out): an interactive session has "
		    "no submit-time inputs and sends nothing back; use a shared file system or scp");
		goto out;
	}
	o.binary = 1;
	q.nparts = o.slots > 0 && !o.pe ? o.slots : 1;
	if (o.pe) {
		client_errx("qrsh takes -n N for N copies on N hosts, not -pe");
		goto out;
	}
	q.pty = o.pty == 1;
	q.prefix = o.prefix_rank;
	q.lfd = -1;
	if (!getcwd(cwd, sizeof cwd)) {
		client_errx("cannot tell the current directory: %s", strerror(errno));
		goto out;
	}
	if ((q.lfd = listen_any(q.nparts + 16)) < 0 || (port = listen_port(q.lfd)) < 0) {
		client_errx("cannot listen for the job's streams: %s", strerror(errno));
		goto out;
	}
	if (pipe2(q.sigpipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		client_errx("cannot make a pipe: %s", strerror(errno));
		goto out;
	}
	auth_nonce(q.secret, sizeof q.secret);
	env.envp = environ;
	env.cwd = cwd;
	env.host = my_hostname();
	env.user = client_user();
	if ((job = qsub_job_json(&o, NULL, &env, err, sizeof err)) == NULL) {
		client_errx("%s", err);
		goto out;
	}
	addr = xasprintf("%s %d %s", listen_host(), port, q.secret);
	json_object_set_new(job, "qrsh", json_string(addr));
	free(addr);
	deps = o.deps ? qsub_deps_json(&o) : NULL;
	req = msg_submit_pack(&(struct msg_submit){ .job = job, .verify = o.verify != 'n', .deps = deps });
	json_decref(job);
	json_decref(deps);
	/* Signals before the job exists are qrsh's own to die of. */
	if ((rep = client_request_ok(req, "Unable to run job: ")) == NULL)
		goto out;
	msg_submitted_unpack(rep, &done);
	q.id = done.id;
	q.need_cred = done.qrsh_cred;
	json_decref(rep);
	signals_catch();
	q.parts = xcalloc((size_t)q.nparts, sizeof *q.parts);
	for (int i = 0; i < q.nparts; i++)
		q.parts[i].fd = -1;
	if (o.now == 1 && !dispatched_now())
		cancel(0, "Your \"qrsh\" request could not be scheduled, try again later.");
	/* The master's word on the job's end, for what the streams cannot
	 * tell (qdel, a lost host); none is needed when it is away. */
	req = msg_wait_pack(&(struct msg_wait){ .id = q.id });
	q.wseq = client_send(req, &why) < 0 ? -1 : msg_seq_of(req, -1);
	json_decref(req);
	if (q.pty)
		tty_raw();
	rc = relay();
out:
	qsub_opts_free(&o);
	return rc;
}
