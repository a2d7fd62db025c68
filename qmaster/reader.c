/* reader.c: the query thread: job listings answered at idle priority on a read-only connection.
 *
 * qstat's STATUS is answered from a read-only connection to the database, so
 * polling clients take no time from the loop's dispatch. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "common/msg.h"
#include "qmaster/qmaster.h"
#include "spool/spool.h"

/*
 * Why a thread.  A qstat connects, says HELLO, asks for the listing, reads
 * it and closes: on Linux most of that cost is the kernel's (the reply's
 * write, the close), and the listing's reads and text are the rest.  Done
 * by the loop, at the loop's priority, 10,000 of them a second would delay
 * every dispatch (BENCHMARKS.md, polling storms).  The loop still accepts the connection and
 * answers its HELLO (the authentication stays in one place); a listing
 * asked first moves the connection here, to a thread the kernel runs only
 * when nothing else wants the CPU (SCHED_IDLE).  Anything else it asks
 * afterwards goes back to the loop, in order.
 *
 * The thread shares nothing with the loop but two queues of handoffs
 * (under a mutex, each with an eventfd to wake the other side), the
 * atomic repl_released, and the log.  It reads the database through its
 * own SQLite connection, one snapshot per request: WAL shows it only
 * committed transactions, and with a standby a reply waits, as the loop's
 * do, until the standby has what it shows (else the loop answers it).
 *
 * The query endpoint.  The loop's part of each poll (the accept, the
 * HELLO, waking the thread) would still be work at the loop's priority,
 * enough at 10,000 a second to show in dispatch.  So the thread also
 * listens on a port of its own, the master's port + 1 (and the unix
 * socket's path + ".query"), where qstat asks first: there it accepts and
 * checks the HELLO itself, and the loop sees nothing of a poll.  It lets in
 * only what it can tell the loop would: a client, asking for no
 * particular master, of a master writable for sure (repl_surely_writable),
 * whose identity it confirms as the loop does (net_tcp_identity).  Any
 * other HELLO goes to the loop as it came, and the loop answers it as it
 * answers one at the port (its reply says "endpoint": "query" too).
 */

/* Polls that wait for the thread to accept them: it runs only when the
 * CPU is idle, so a burst waits in the kernel rather than being refused
 * (the kernel caps it at net.core.somaxconn). */
#define READER_BACKLOG 4096
/* Accepts per wake-up: the thread takes a burst without an epoll_wait
 * between two of its connections. */
#define READER_ACCEPTS 64

struct rconn {
	TAILQ_ENTRY(rconn) entry;
	struct bufferevent *bev;
	struct handoff     *h;      /* who it is; msg, in and out taken */
	json_t             *back;   /* the request the loop must answer: given back once the output drains */
	bool                going;  /* to the loop once the output drains */
	bool                closing; /* closed once the output drains */
};
TAILQ_HEAD(rconn_list, rconn);
TAILQ_HEAD(handoff_list, handoff);

static struct {
	bool                running;
	pthread_t           thread;
	pthread_mutex_t     mu;
	struct handoff_list to, back;   /* under mu */
	bool                stop;       /* under mu */
	int                 to_fd, back_fd;
	struct event_base  *rbase;      /* the thread's */
	struct event       *to_ev;      /* on rbase */
	struct event       *back_ev;    /* on the loop's base */
	struct store       *st;         /* the thread's; NULL after a failed reopen */
	char               *path;
	unsigned            gen;        /* the thread's: store_gen when st was opened */
	struct rconn_list   conns;      /* the thread's */
	bool                idle;
	bool                munge;      /* auth = munge (fixed at start) */
	struct event       *lis[2];     /* the query endpoint (TCP, unix), on rbase */
	char               *unix_path;  /* the unix one's, or NULL */
	struct event       *pause_ev;   /* listening again after accept failed */
	int64_t             accept_logged; /* mono ms of the last warning */
} rd = { .mu = PTHREAD_MUTEX_INITIALIZER, .to_fd = -1, .back_fd = -1 };

static void rconn_work(struct rconn *rc);

/* Bumped by the loop when the database file was replaced under the
 * thread's connection (a standby installing a snapshot): the thread's
 * connection still reads the old file, and must open the new one. */
static _Atomic unsigned store_gen;

void
reader_store_replaced(void)
{
	atomic_fetch_add(&store_gen, 1);
}

/* The thread's connection to the database file the loop has now; false
 * when it cannot be opened (the loop answers then). */
static bool
reader_store(void)
{
	unsigned gen = atomic_load(&store_gen);
	const char *why;

	if (rd.st && gen == rd.gen)
		return true;
	store_close(rd.st);
	rd.gen = gen;
	if ((rd.st = store_open_reader(rd.path, &why)) == NULL)
		log_warnx("query thread: %s; the loop answers listings", why);
	return rd.st != NULL;
}

static void
handoff_free(struct handoff *h)
{
	if (!h)
		return;
	if (h->fd >= 0)
		close(h->fd);
	json_decref(h->msg);
	if (h->in)
		evbuffer_free(h->in);
	if (h->out)
		evbuffer_free(h->out);
	free(h->user);
	free(h);
}

static void
wake(int fd)
{
	uint64_t one = 1;
	/* Fails only when the counter is full: it is awake already. */
	(void)!write(fd, &one, sizeof one);
}

static void
drain(int fd)
{
	uint64_t n;
	(void)!read(fd, &n, sizeof n);
}

/* Takes the whole queue under the lock, then gives each handoff to fn
 * without it. */
static void
queue_each(struct handoff_list *q, void (*fn)(struct handoff *))
{
	struct handoff_list mine = TAILQ_HEAD_INITIALIZER(mine);
	struct handoff *h;

	pthread_mutex_lock(&rd.mu);
	TAILQ_CONCAT(&mine, q, entry);
	pthread_mutex_unlock(&rd.mu);
	while ((h = TAILQ_FIRST(&mine)) != NULL) {
		TAILQ_REMOVE(&mine, h, entry);
		fn(h);
	}
}

/* The other side takes the whole queue when woken: a queue that was not
 * empty has a wake-up coming already. */
static void
queue_put(struct handoff_list *q, struct handoff *h, int fd)
{
	bool was_empty;

	pthread_mutex_lock(&rd.mu);
	was_empty = TAILQ_EMPTY(q);
	TAILQ_INSERT_TAIL(q, h, entry);
	pthread_mutex_unlock(&rd.mu);
	if (was_empty)
		wake(fd);
}

/* The thread's side. */

static void
rconn_free(struct rconn *rc)
{
	TAILQ_REMOVE(&rd.conns, rc, entry);
	bufferevent_free(rc->bev);
	json_decref(rc->back);
	handoff_free(rc->h);
	free(rc);
}

/* To the loop, with what it sent after the last request answered here. */
static void
rconn_give_back(struct rconn *rc)
{
	struct handoff *h = rc->h;
	const char *why;

	h->in = evbuffer_new();
	/* A stranger's HELLO goes first, for the loop to read as it came (a
	 * frame of at most NET_HELLO_MAX_FRAME stays one when written again). */
	if (h->stranger && rc->back && proto_frame_append(h->in, rc->back, NET_HELLO_MAX_FRAME, &why) < 0)
		fatalx("a HELLO taken in cannot be written again: %s", why);
	else if (!h->stranger) {
		h->msg = rc->back;
		rc->back = NULL;
	}
	evbuffer_add_buffer(h->in, bufferevent_get_input(rc->bev));
	rc->h = NULL;
	rconn_free(rc);
	queue_put(&rd.back, h, rd.back_fd);
}

/* rep, or a text reply (text taken). */
static void
rconn_send(struct rconn *rc, json_t *rep, char *text, size_t len)
{
	struct evbuffer *out = bufferevent_get_output(rc->bev);
	const char *why;

	if ((rep ? proto_frame_append(out, rep, rc->h->max_frame, &why) :
	    proto_frame_append_taken(out, text, len, rc->h->max_frame, &why)) < 0) {
		log_warnx("%s: cannot send a listing: %s", rc->h->peer, why);
		rc->closing = true;
	}
}

/* Answers one listing, or leaves it to the loop when its reply would show
 * what the standby does not have yet. */
static void
rconn_answer(struct rconn *rc, json_t *msg)
{
	int64_t seq = msg_seq_of(msg, 0);
	json_t *rep;
	char *text;
	size_t len;

	if (!reader_store()) {
		rc->back = json_incref(msg);
		return;
	}
	if (store_read_begin(rd.st) < 0) {
		rep = proto_reply_err(seq, ERR_INTERNAL, "cannot read the job list");
		rconn_send(rc, rep, NULL, 0);
		json_decref(rep);
		return;
	}
	if (rc->h->hold && store_repl_seq(rd.st) > repl_released()) {
		store_read_end(rd.st);
		rc->back = json_incref(msg);
		return;
	}
	rep = status_listing(rd.st, seq, msg, rc->h->user, rc->h->see_all, &text, &len);
	store_read_end(rd.st);
	rconn_send(rc, rep, text, len);
	json_decref(rep);
}

/* A HELLO at the query endpoint, answered here when the loop would let
 * the client in and the thread can tell (see the top of this file); false
 * leaves it to the loop, which says why it refuses, if it does. */
static bool
rconn_hello(struct rconn *rc, json_t *msg)
{
	struct handoff *h = rc->h;
	struct msg_hello m;
	char err[512], *munge_socket = NULL;
	int64_t epoch, failover_ms;
	struct timeval wr;
	json_t *rep;

	if (msg_type_of(msg) != MSG_HELLO || msg_hello_unpack(msg, &m, err, sizeof err) < 0 ||
	    strcmp(m.role, "client") != 0 || m.any || !repl_surely_writable(&epoch))
		return false;
	if (!h->is_unix) {
		if (rd.munge) {
			conf_read_begin();
			munge_socket = conf->munge_socket ? xstrdup(conf->munge_socket) : NULL;
			conf_read_end();
		}
		if (net_tcp_identity(h->fd, &m, AUTH_PAYLOAD_CLIENT, rd.munge, munge_socket, &h->uid,
		    &h->gid, err, sizeof err) < 0) {
			free(munge_socket);
			return false;
		}
		free(munge_socket);
	}
	h->user = user_name(h->uid, &h->gid);
	conf_read_begin();
	perm_roles(h->user, h->uid, &h->manager, &h->operator);
	h->daemon = qm_is_daemon(h->uid);
	net_handoff_conf(h);
	failover_ms = conf->failover_timeout_ms;
	conf_read_end();
	h->stranger = false;
	wr = (struct timeval){ h->client_timeout, 0 };
	bufferevent_set_timeouts(rc->bev, NULL, &wr);
	rep = msg_hello_reply_pack(&(struct msg_hello_reply){ .seq = m.seq, .master = my_hostname(),
	    .epoch = epoch, .failover_timeout = failover_ms, .uid = h->uid, .user = h->user,
	    .manager = h->manager, .operator = h->operator, .query = true });
	rconn_send(rc, rep, NULL, 0);
	json_decref(rep);
	log_debug("%s: client %s (uid %u) at the query endpoint", h->peer, h->user, (unsigned)h->uid);
	return true;
}

/* One request at a time: the next is read once the reply is written, so
 * what a client leaves unread stays one reply. */
static void
rconn_work(struct rconn *rc)
{
	struct evbuffer *in = bufferevent_get_input(rc->bev);
	json_t *msg;
	const char *why;
	int r;

	/* A HELLO's reply need not be written before the request sent with
	 * it (qstat sends both in one write) is read. */
	bool hello = false;

	while (hello || evbuffer_get_length(bufferevent_get_output(rc->bev)) == 0) {
		hello = false;
		if (rc->closing) {
			rconn_free(rc);
			return;
		}
		if (rc->back || rc->going) {
			rconn_give_back(rc);
			return;
		}
		r = proto_frame_take(in, &msg, rc->h->stranger ? NET_HELLO_MAX_FRAME : rc->h->max_frame, &why);
		if (r == 0) {
			/* Half a frame: the loop times it, and takes the rest
			 * (half a HELLO is timed here, as a stranger's). */
			if (evbuffer_get_length(in) > 0 && !rc->h->stranger) {
				rc->going = true;
				continue;
			}
			bufferevent_enable(rc->bev, EV_READ);
			return;
		}
		if (r < 0) {
			json_t *rep = proto_reply_err(0, ERR_PROTO, "%s", why);
			log_info("%s: %s", rc->h->peer, why);
			rconn_send(rc, rep, NULL, 0);
			json_decref(rep);
			rc->closing = true;
		} else if (rc->h->stranger) {
			if (rconn_hello(rc, msg))
				hello = true;
			else
				rc->back = json_incref(msg);
		} else if (proto_is_listing(msg))
			rconn_answer(rc, msg);
		else
			rc->back = json_incref(msg);
		json_decref(msg);
	}
	bufferevent_disable(rc->bev, EV_READ);
}

static void
rconn_read_cb(struct bufferevent *bev, void *arg)
{
	rconn_work(arg);
}

static void
rconn_write_cb(struct bufferevent *bev, void *arg)
{
	rconn_work(arg);
}

static void
rconn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct rconn *rc = arg;

	if (what & BEV_EVENT_TIMEOUT)
		log_info("%s: closing after %d s: %s", rc->h->peer, rc->h->client_timeout,
		    what & BEV_EVENT_WRITING ? "left its replies unread" : "said nothing in time");
	else if (what == (BEV_EVENT_EOF | BEV_EVENT_READING) &&
	    evbuffer_get_length(bufferevent_get_output(bev)) > 0) {
		/* A half-close after a listing: the reply is written first
		 * (rconn_work frees it once the output drains). */
		rc->closing = true;
		return;
	}
	rconn_free(rc);
}

/* The thread's connection for h: a stranger must say HELLO within
 * client_timeout, and any peer read its replies within it. */
static struct rconn *
rconn_open(struct handoff *h)
{
	struct rconn *rc = xcalloc(1, sizeof *rc);
	struct timeval tv = { h->client_timeout, 0 };

	rc->h = h;
	rc->bev = bufferevent_socket_new(rd.rbase, h->fd, 0);
	if (!rc->bev)
		fatalx("bufferevent_socket_new failed");
	bufferevent_setcb(rc->bev, rconn_read_cb, rconn_write_cb, rconn_event_cb, rc);
	bufferevent_set_timeouts(rc->bev, h->stranger ? &tv : NULL, &tv);
	TAILQ_INSERT_TAIL(&rd.conns, rc, entry);
	return rc;
}

static void
rconn_new(struct handoff *h)
{
	struct rconn *rc = rconn_open(h);
	json_t *msg = h->msg;

	net_input_add(rc->bev, h->in);
	evbuffer_add_buffer(bufferevent_get_output(rc->bev), h->out);
	evbuffer_free(h->in);
	evbuffer_free(h->out);
	h->in = h->out = NULL;
	h->msg = NULL;
	rconn_answer(rc, msg);
	json_decref(msg);
	rconn_work(rc);
}

static void
to_cb(evutil_socket_t fd, short what, void *arg)
{
	bool stop;

	drain(fd);
	queue_each(&rd.to, rconn_new);
	pthread_mutex_lock(&rd.mu);
	stop = rd.stop;
	pthread_mutex_unlock(&rd.mu);
	if (stop)
		event_base_loopbreak(rd.rbase);
}

static void
accept_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	for (int i = 0; i < 2; i++)
		if (rd.lis[i])
			event_add(rd.lis[i], NULL);
}

/* A client at the query endpoint, a stranger until its HELLO; false when
 * there is none to take. */
static bool
accept_one(int lfd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	struct handoff *h;
	struct rconn *rc;
	struct ucred cred;
	socklen_t clen = sizeof cred;
	int fd = accept4(lfd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0) {
		struct timeval tv = { 0, NET_ACCEPT_PAUSE_MS * 1000 };
		if (net_accept_transient(errno))
			return false;
		/* Out of descriptors or memory: the backlog waits (the loop,
		 * which makes room by dropping strangers, is not starved). */
		if (mono_ms() - rd.accept_logged >= 10000) {
			log_warn("query endpoint: accept failed; pausing");
			rd.accept_logged = mono_ms();
		}
		for (int i = 0; i < 2; i++)
			if (rd.lis[i])
				event_del(rd.lis[i]);
		evtimer_add(rd.pause_ev, &tv);
		return false;
	}
	h = xcalloc(1, sizeof *h);
	h->fd = fd;
	h->stranger = true;
	h->max_frame = NET_HELLO_MAX_FRAME;
	h->is_unix = ss.ss_family == AF_UNIX;
	net_peer_name(&ss, len, h->peer, sizeof h->peer);
	if (h->is_unix) {
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0) {
			log_warn("query endpoint: SO_PEERCRED");
			handoff_free(h);
			return true;
		}
		h->uid = cred.uid;
		h->gid = cred.gid;
		snprintf(h->peer, sizeof h->peer, "unix:pid %d uid %u", (int)cred.pid, (unsigned)cred.uid);
	}
	conf_read_begin();
	h->client_timeout = conf->client_timeout;
	conf_read_end();
	rc = rconn_open(h);
	bufferevent_enable(rc->bev, EV_READ);
	return true;
}

static void
accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	for (int i = 0; i < READER_ACCEPTS && accept_one(lfd); i++)
		;
}

/* The query endpoint: port + 1 and the unix socket's path + ".query".
 * One that cannot be had is logged, and its clients use the port. */
static void
reader_listen(void)
{
	int fd;

	rd.pause_ev = evtimer_new(rd.rbase, accept_resume_cb, NULL);
	if (conf->listen && conf->listen_port < 65535 &&
	    (fd = net_bind_tcp(conf->listen_host, conf->listen_port + 1, READER_BACKLOG)) >= 0)
		rd.lis[0] = event_new(rd.rbase, fd, EV_READ | EV_PERSIST, accept_cb, NULL);
	else if (conf->listen)
		log_warnx("no query endpoint at %s:%d: qstat asks at the port", conf->listen_host,
		    conf->listen_port + 1);
	if (conf->unix_socket) {
		rd.unix_path = xasprintf("%s.query", conf->unix_socket);
		if (strlen(rd.unix_path) < sizeof ((struct sockaddr_un *)0)->sun_path &&
		    (fd = net_bind_unix(rd.unix_path, READER_BACKLOG)) >= 0)
			rd.lis[1] = event_new(rd.rbase, fd, EV_READ | EV_PERSIST, accept_cb, NULL);
		else {
			log_warnx("no query endpoint at %s: qstat asks at %s", rd.unix_path, conf->unix_socket);
			free(rd.unix_path);
			rd.unix_path = NULL;
		}
	}
	for (int i = 0; i < 2; i++)
		if (rd.lis[i] && event_add(rd.lis[i], NULL) < 0)
			fatalx("cannot watch the query endpoint");
}

static void *
reader_main(void *arg)
{
	struct rconn *rc;

	/* Below every other thread of the host: polling waits, dispatch does
	 * not.  A host with no idle time still serves it a little (Linux
	 * gives SCHED_IDLE a small share), so a listing is late, never lost. */
	if (rd.idle && pthread_setschedparam(pthread_self(), SCHED_IDLE, &(struct sched_param){ 0 }) != 0)
		log_warnx("query thread: cannot take idle priority; it runs at the loop's");
	event_base_dispatch(rd.rbase);
	while ((rc = TAILQ_FIRST(&rd.conns)) != NULL)
		rconn_free(rc);
	users_forget();
	return NULL;
}

/* The loop's side. */

static void
back_cb(evutil_socket_t fd, short what, void *arg)
{
	drain(fd);
	queue_each(&rd.back, net_adopt);
}

bool
reader_takes(const json_t *msg)
{
	/* Only a writable primary's answers are the cluster's (a standby
	 * answers only clients that ask for any master, in the loop). */
	return rd.running && proto_is_listing(msg) && repl_role() == REPL_PRIMARY && repl_writable();
}

void
reader_give(struct handoff *h)
{
	assert(rd.running);
	queue_put(&rd.to, h, rd.to_fd);
}

int
reader_start(void)
{
	const char *why;
	sigset_t all, old;
	int rc;

	if (conf->query_thread == QUERY_THREAD_OFF)
		return 0;
	rd.path = xasprintf("%s/nowq.db", conf->spool_dir);
	rd.gen = atomic_load(&store_gen);
	if ((rd.st = store_open_reader(rd.path, &why)) == NULL) {
		log_warnx("query thread: %s", why);
		return -1;
	}
	TAILQ_INIT(&rd.to);
	TAILQ_INIT(&rd.back);
	TAILQ_INIT(&rd.conns);
	rd.idle = conf->query_thread == QUERY_THREAD_IDLE;
	if ((rd.to_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
	    (rd.back_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
		fatal("eventfd");
	if ((rd.rbase = event_base_new()) == NULL)
		fatalx("event_base_new failed");
	rd.to_ev = event_new(rd.rbase, rd.to_fd, EV_READ | EV_PERSIST, to_cb, NULL);
	rd.back_ev = event_new(base, rd.back_fd, EV_READ | EV_PERSIST, back_cb, NULL);
	event_add(rd.to_ev, NULL);
	event_add(rd.back_ev, NULL);
	rd.munge = strcmp(conf->auth, "munge") == 0;
	(void)my_hostname();     /* computed once, here, before the thread reads it */
	if (conf->query_listen)
		reader_listen();
	/* Signals are the loop's: the thread starts with all of them blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&rd.thread, NULL, reader_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		errno = rc;
		fatal("query thread");
	}
	rd.running = true;
	log_info("query thread started (%s priority)%s", rd.idle ? "idle" : "normal",
	    rd.lis[0] || rd.lis[1] ? ", with the query endpoint" : "");
	return 0;
}

void
reader_stop(void)
{
	if (!rd.running)
		return;
	pthread_mutex_lock(&rd.mu);
	rd.stop = true;
	pthread_mutex_unlock(&rd.mu);
	wake(rd.to_fd);
	pthread_join(rd.thread, NULL);
	rd.running = false;
	/* What neither side took is closed with the rest. */
	queue_each(&rd.to, handoff_free);
	queue_each(&rd.back, handoff_free);
	event_free(rd.to_ev);
	event_free(rd.back_ev);
	for (int i = 0; i < 2; i++)
		if (rd.lis[i]) {
			close(event_get_fd(rd.lis[i]));
			event_free(rd.lis[i]);
		}
	if (rd.pause_ev)
		event_free(rd.pause_ev);
	if (rd.unix_path)
		unlink(rd.unix_path);
	free(rd.unix_path);
	event_base_free(rd.rbase);
	close(rd.to_fd);
	close(rd.back_fd);
	store_close(rd.st);
	free(rd.path);
}
