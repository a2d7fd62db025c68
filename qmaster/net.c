/* net.c: the master's listeners and connections, and replies held until commit.
 *
 * Accept, authenticate and frame. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netdb.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "common/msg.h"
#include "common/msg_req.h"
#include "qmaster/qmaster.h"
#include "spool/spool.h"

/* conf->client_timeout bounds what a slow or silent peer can hold: it must
 * say HELLO within it, finish a frame within it of the frame's first byte,
 * and read the replies that wait for it within it. */
/* A peer with this much unread stops being read until it drains, so
 * pipelined requests cannot grow the master's output without bound. */
#define NET_MAX_UNREAD (64u * 1024 * 1024)
/* What a connection may send per loop turn.  libevent 2.1 reads at most
 * 4 KiB per read event (EVBUFFER_MAX_READ), eight SUBMITs, so a pipelining
 * client would pay one fsync per eight jobs; conn_read_cb reads on up to this,
 * so one group commit carries hundreds while a turn (and so everyone
 * else's wait) stays a few milliseconds. */
#define NET_READ_PER_TURN (256u * 1024)
/* What one libevent read takes at most (EVBUFFER_MAX_READ): a read that
 * took less emptied the socket, so reading on would only hear EAGAIN. */
#define NET_LIBEVENT_READ 4096

TAILQ_HEAD(conn_list, conn);
static struct conn_list conns = TAILQ_HEAD_INITIALIZER(conns);

struct held {
	TAILQ_ENTRY(held) entry;
	struct conn      *c;
	int64_t           upto;     /* replication seq the standby must ack first; 0: not yet known */
	json_t           *msg;      /* or, when NULL, */
	char             *text;     /* the message as JSON text, */
	size_t            len;
	int64_t           seq;      /* a reply to this request */
	int               raw_fd;   /* then raw bytes of this file (net_send_file); -1: none */
	int64_t           raw_off;
	size_t            raw_len;
};
TAILQ_HEAD(held_list, held);
static struct held_list held = TAILQ_HEAD_INITIALIZER(held);

/* The listening sockets' accept events, at PRIO_NEW (qmaster.h). */
static struct event *lis_unix, *lis_tcp;
/* The bounded wait of new connections (net_new_check). */
static struct event *new_canary;
static int64_t new_canary_since;   /* when it was made active; 0: it is not */
static bool new_boosted;           /* the listening sockets are at PRIO_WORK this turn */
static struct event *accept_pause_ev;
static int64_t accept_fail_logged;   /* mono ms of the last warning */
static unsigned accept_failures;     /* since that warning */

static void conn_read_cb(struct bufferevent *bev, void *arg);
static void conn_write_cb(struct bufferevent *bev, void *arg);
static void conn_event_cb(struct bufferevent *bev, short what, void *arg);

static void
conn_release(struct conn *c)
{
	assert(c->dead);
	if (c->refs == 0) {
		free(c->user);
		free(c);
	}
}

/* A frame on its way straight to a socket (conn_write_now). */
static struct evbuffer *direct;

static void
conn_write_now(struct conn *c, json_t *msg, const char *text, size_t len)
{
	struct evbuffer *out;
	const char *why;
	int rc;

	if (c->dead || !c->bev)
		return;
	out = bufferevent_get_output(c->bev);
	/*
	 * Straight to the socket when nothing is queued before it: through
	 * libevent, each reply cost an epoll_ctl to watch for writability,
	 * a turn of the loop to be told, and an epoll_ctl to stop watching,
	 * three system calls beside the write (several microseconds each on
	 * a virtual machine).  Only what the socket does not take is queued.
	 * Not for a connection whose drain conn_write_cb waits for (closing,
	 * reading paused, the standby's staging pump).
	 */
	if (evbuffer_get_length(out) == 0 && !c->closing && c->role != ROLE_PEER &&
	    (bufferevent_get_enabled(c->bev) & EV_READ)) {
		if (!direct && (direct = evbuffer_new()) == NULL)
			fatalx("evbuffer_new failed");
		rc = msg ? proto_frame_append(direct, msg, conf->max_frame, &why) :
		    proto_frame_append_text(direct, text, len, conf->max_frame, &why);
		/* A failed write leaves the bytes for libevent, which reports it. */
		if (rc == 0) {
			(void)evbuffer_write(direct, bufferevent_getfd(c->bev));
			evbuffer_add_buffer(out, direct);
		} else
			evbuffer_drain(direct, evbuffer_get_length(direct));
	} else
		rc = msg ? proto_frame_append(out, msg, conf->max_frame, &why) :
		    proto_frame_append_text(out, text, len, conf->max_frame, &why);
	if (rc < 0)
		log_warnx("%s: cannot send %s: %s", c->peer, msg ? msg_type_text(msg) : "a reply", why);
	/* Writing is enabled with the first message left queued (see conn_new). */
	else if (evbuffer_get_length(out) > 0 && !(bufferevent_get_enabled(c->bev) & EV_WRITE))
		bufferevent_enable(c->bev, EV_WRITE);
}

/* len bytes of fd from off after what c's output holds; fd is taken. */
static void
conn_write_file(struct conn *c, int fd, int64_t off, size_t len)
{
	if (c->dead || !c->bev || len == 0) {
		close(fd);
		return;
	}
	if (evbuffer_add_file(bufferevent_get_output(c->bev), fd, off, (ev_off_t)len) < 0) {
		close(fd);
		log_warnx("%s: cannot send %zu bytes of a file", c->peer, len);
	}
}

static struct held *
net_hold(struct conn *c, json_t *msg, char *text, size_t len, int64_t seq)
{
	struct held *h = xmalloc(sizeof *h);
	h->c = c;
	h->raw_fd = -1;
	h->msg = msg;
	h->text = text;
	h->len = len;
	h->seq = seq;
	/* Outside a transaction, only the changesets already sent hold it back. */
	h->upto = store_in_txn(store) ? 0 : repl_unacked();
	c->refs++;
	TAILQ_INSERT_TAIL(&held, h, entry);
	return h;
}

/* Replication and election traffic (to the standby, to witnesses, the
 * execds' HEARTBEATs) is what releases held replies: it never waits
 * behind them. */
void
net_send_now(struct conn *c, json_t *msg)
{
	conn_write_now(c, msg, NULL, 0);
	json_decref(msg);
}

/* A reply that says nothing of the database (a refusal that sends the
 * client elsewhere, the masters' roles) need not wait for the standby,
 * unless an earlier reply on its connection still waits (their order is
 * kept).  A primary cut off from its standby and most execds holds its
 * other replies until it is healed or steps down: this is how a client
 * still learns to ask another master, and how qconf -smasters still answers. */
void
net_send_unheld(struct conn *c, json_t *msg)
{
	if (c->refs == 0)
		net_send_now(c, msg);
	else
		net_send(c, msg);
}

void
net_send(struct conn *c, json_t *msg)
{
	if (c->role & (ROLE_PEER | ROLE_WITNESS)) {
		net_send_now(c, msg);
		return;
	}
	if (store_in_txn(store) || repl_unacked()) {
		net_hold(c, msg, NULL, 0, 0);
		return;
	}
	conn_write_now(c, msg, NULL, 0);
	json_decref(msg);
}

void
net_send_file(struct conn *c, json_t *msg, int fd, int64_t off, size_t len)
{
	struct held *h;

	if (c->refs == 0) {
		conn_write_now(c, msg, NULL, 0);
		json_decref(msg);
		conn_write_file(c, fd, off, len);
		return;
	}
	h = net_hold(c, msg, NULL, 0, 0);
	h->raw_fd = fd;
	h->raw_off = off;
	h->raw_len = len;
}

struct evbuffer *
net_raw(struct conn *c, size_t *len)
{
	*len = c->bev ? c->raw : 0;
	return c->bev ? bufferevent_get_input(c->bev) : NULL;
}

void
net_send_text(struct conn *c, int64_t seq, char *text, size_t len)
{
	if (store_in_txn(store) || repl_unacked()) {
		net_hold(c, NULL, text, len, seq);
		return;
	}
	conn_write_now(c, NULL, text, len);
	free(text);
}

void
net_hold_tag(int64_t seq)
{
	struct held *h;
	TAILQ_FOREACH_REVERSE(h, &held, held_list, entry) {
		if (h->upto)
			break;
		h->upto = seq;
	}
}

/* Takes h off the queue, writing it first when send. */
static void
held_done(struct held *h, bool send)
{
	TAILQ_REMOVE(&held, h, entry);
	if (send)
		conn_write_now(h->c, h->msg, h->text, h->len);
	if (h->raw_fd >= 0 && send)
		conn_write_file(h->c, h->raw_fd, h->raw_off, h->raw_len);
	else if (h->raw_fd >= 0)
		close(h->raw_fd);
	json_decref(h->msg);
	free(h->text);
	h->c->refs--;
	if (h->c->dead)
		conn_release(h->c);
	free(h);
}

/* Messages go in the order they were queued: the first one still waiting
 * for a later acknowledgement stops the walk. */
void
net_release(int64_t acked)
{
	struct held *h;
	while ((h = TAILQ_FIRST(&held)) != NULL && (acked < 0 || (h->upto && h->upto <= acked)))
		held_done(h, true);
}

/* The failed turn's messages are the last ones not yet tagged with a
 * sequence (net_hold_tag tags them at the commit).  A client's successful
 * replies say no in their place and keep their order behind what earlier
 * commits hold (a refusal stays as it is: it changed nothing); anything
 * else would speak of changes that were never made: a DISPATCH, an ACK
 * that would let an execd forget an event, a SIGNAL. */
void
net_refuse_turn(const char *code, const char *text)
{
	struct held *h, *first = NULL, *prev, *next;
	struct conn *c;
	int64_t behind;

	TAILQ_FOREACH_REVERSE(h, &held, held_list, entry) {
		if (h->upto)
			break;
		first = h;
	}
	if (!first)
		return;
	prev = TAILQ_PREV(first, held_list, entry);
	behind = prev ? prev->upto : 0;
	for (h = first; h; h = next) {
		struct msg_reply env = { 0 };

		next = TAILQ_NEXT(h, entry);
		if (!h->text)
			msg_reply_unpack(h->msg, &env, NULL, 0);
		if (h->c->role == ROLE_CLIENT && (h->text || env.ok)) {
			int64_t seq = h->text ? h->seq : env.seq;
			json_decref(h->msg);
			free(h->text);
			h->text = NULL;
			h->msg = proto_reply_err(seq, code, "%s", text);
			h->upto = behind;
			continue;
		}
		/* A live connection outlives held_done (only a dead one is freed there). */
		c = h->c->role == ROLE_EXECD && !h->c->dead ? h->c : NULL;
		held_done(h, false);
		if (c)
			net_close(c, "a commit of its messages failed; it registers again");
	}
	/* Nothing earlier waits: they go now. */
	while (!behind && (h = TAILQ_FIRST(&held)) != NULL && !h->upto)
		held_done(h, true);
}

void
net_flush_held(void)
{
	net_release(-1);
}

void
net_close(struct conn *c, const char *why)
{
	if (c->dead)
		return;
	if (why)
		log_debug("%s: closing: %s", c->peer, why);
	TAILQ_REMOVE(&conns, c, entry);
	if (c->role == ROLE_EXECD)
		exechost_conn_gone(c);
	if (c->role == ROLE_PEER || c->role == ROLE_WITNESS)
		repl_conn_gone(c);
	request_conn_gone(c);
	stage_repl_conn_gone(c);
	stage_conn_gone(c);
	json_decref(c->raw_msg);
	c->raw_msg = NULL;
	bufferevent_free(c->bev);
	close(c->fd);
	c->bev = NULL;
	c->dead = true;
	conn_release(c);
}

/* Configuration is the loop's: what the thread needs of it goes with
 * the connection. */
void
net_handoff_conf(struct handoff *h)
{
	h->see_all = perm_sees_all(h->operator);
	h->hold = conf->nmasters > 0;
	h->max_frame = conf->max_frame;
	h->client_timeout = conf->client_timeout;
}

/* Moves a client's connection to the query thread (reader.c), with the
 * listing it asked for first and what it sent after it.  Nothing of it is
 * held here (c->refs is 0), and its HELLO reply goes with it unwritten. */
static void
net_hand_off(struct conn *c, json_t *msg)
{
	struct handoff *h = xcalloc(1, sizeof *h);

	assert(c->role == ROLE_CLIENT && c->refs == 0 && !c->dead);
	h->fd = c->fd;
	h->is_unix = c->is_unix;
	memcpy(h->peer, c->peer, sizeof h->peer);
	h->uid = c->uid;
	h->gid = c->gid;
	h->user = xstrdup(c->user);
	h->manager = c->manager;
	h->operator = c->operator;
	h->daemon = c->daemon;
	net_handoff_conf(h);
	h->msg = json_incref(msg);
	h->in = evbuffer_new();
	h->out = evbuffer_new();
	/* A bufferevent's output is drained only by its own writes: open it. */
	evbuffer_unfreeze(bufferevent_get_output(c->bev), 1);
	evbuffer_add_buffer(h->in, bufferevent_get_input(c->bev));
	evbuffer_add_buffer(h->out, bufferevent_get_output(c->bev));
	TAILQ_REMOVE(&conns, c, entry);
	bufferevent_free(c->bev);
	c->bev = NULL;
	c->dead = true;
	conn_release(c);
	log_debug("%s: to the query thread", h->peer);
	reader_give(h);
}

#define REDIRECT_LOG_MS 60000

/* A primary cut off from its standby and most execds, or a standby, sends
 * every client poll away: one line a minute says how many, not one each. */
static void
redirect_note(const struct conn *c)
{
	static int64_t last;
	static long more;
	int64_t now = mono_ms();

	if (last && now - last < REDIRECT_LOG_MS) {
		more++;
		return;
	}
	if (more)
		log_info("%s: sent to another master, and %ld other client%s in the last %lld s",
		    c->peer, more, more == 1 ? "" : "s", (long long)((now - last) / 1000));
	else
		log_info("%s: sent to another master (this one takes no client requests now)", c->peer);
	last = now;
	more = 0;
}

/* Sends what is queued, then closes: used after a protocol error reply. */
static void
conn_close_after_flush(struct conn *c, const char *why)
{
	if (c->redirected)
		redirect_note(c);
	else
		log_info("%s: %s", c->peer, why);
	c->closing = true;
	bufferevent_disable(c->bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0 && c->refs == 0)
		net_close(c, why);
}

static struct conn *
conn_new(int fd, bool is_unix, const char *peer)
{
	struct conn *c = xcalloc(1, sizeof *c);
	struct timeval tv = { conf->client_timeout, 0 };

	c->fd = fd;
	c->is_unix = is_unix;
	snprintf(c->peer, sizeof c->peer, "%s", peer);
	if (is_unix) {
		struct ucred cred;
		socklen_t len = sizeof cred;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			log_warn("SO_PEERCRED");
			close(fd);
			free(c);
			return NULL;
		}
		c->uid = cred.uid;
		c->gid = cred.gid;
		snprintf(c->peer, sizeof c->peer, "unix:pid %d uid %u", (int)cred.pid, (unsigned)cred.uid);
	} else if (net_tcp_opts_needed(fd))
		net_tcp_opts_set(fd);
	/* Not closed with its bufferevent: net_close closes it, and a
	 * connection that moves to the query thread keeps it. */
	c->bev = bufferevent_socket_new(base, fd, 0);
	if (!c->bev)
		fatalx("bufferevent_socket_new failed");
	bufferevent_setcb(c->bev, conn_read_cb, conn_write_cb, conn_event_cb, c);
	bufferevent_set_timeouts(c->bev, &tv, NULL);
	/* Accepted in a boosted turn: it has waited its share already. */
	bufferevent_priority_set(c->bev, new_boosted ? PRIO_WORK : PRIO_NEW);
	c->promoted = new_boosted;
	/* Not EV_WRITE yet: libevent would watch the empty output until the
	 * socket says writable, two epoll_ctl calls and a wake-up for each of
	 * the thousands of qstat connections a minute. */
	bufferevent_enable(c->bev, EV_READ);
	TAILQ_INSERT_TAIL(&conns, c, entry);
	return c;
}

static void accept_error(void);

/*
 * New connections wait, not for ever.  At PRIO_NEW an accept or a HELLO
 * runs only in a turn that finds no due work; a master kept busy turn
 * after turn (thousands of hosts' messages, a steady stream of
 * submissions) would starve a qsub: 30-150 ms for its HELLO at 2,000
 * submissions a second.  So each busy turn makes a canary event active at
 * PRIO_NEW; when it has not run for NET_NEW_WAIT_MS, the listening sockets
 * take one turn at PRIO_WORK (NET_NEW_BOOST accepts each) and the
 * NET_NEW_BOOST oldest connections still waiting move to PRIO_WORK for
 * good.  A storm of connections thus gets a bounded share of a saturated
 * loop, and none of an idle one's.
 */

static void
listen_priority(int prio)
{
	struct event *lis[] = { lis_unix, lis_tcp };

	/* An active event refuses a new priority: taken out and put back,
	 * it is made active again by the next poll if the backlog holds
	 * more.  A socket paused for want of descriptors stays paused, at
	 * the new priority when it resumes. */
	for (size_t i = 0; i < sizeof lis / sizeof lis[0]; i++) {
		bool on;
		if (!lis[i])
			continue;
		if ((on = event_pending(lis[i], EV_READ, NULL)))
			event_del(lis[i]);
		event_priority_set(lis[i], prio);
		if (on)
			event_add(lis[i], NULL);
	}
}

/* The oldest connections still at PRIO_NEW, NET_NEW_BOOST at most, moved
 * to PRIO_WORK: each has waited NET_NEW_WAIT_MS already. */
static void
conns_boost(void)
{
	struct conn *c;
	int n = 0;

	TAILQ_FOREACH(c, &conns, entry) {
		short en;
		if (c->promoted || c->closing)
			continue;
		en = bufferevent_get_enabled(c->bev);
		if (en & EV_READ)
			bufferevent_disable(c->bev, EV_READ);
		if (bufferevent_priority_set(c->bev, PRIO_WORK) == 0)
			c->promoted = true;
		if (en & EV_READ)
			bufferevent_enable(c->bev, EV_READ);
		if (++n == NET_NEW_BOOST)
			break;
	}
}

/* A boosted turn is over: the listening sockets back at PRIO_NEW. */
static void
new_unboost(void)
{
	if (new_boosted) {
		new_boosted = false;
		listen_priority(PRIO_NEW);
	}
}

static void
new_canary_cb(evutil_socket_t fd, short what, void *arg)
{
	new_canary_since = 0;
	new_unboost();
}

void
net_new_check(void)
{
	int64_t now = mono_ms();

	new_unboost();
	if (!new_canary_since) {
		event_active(new_canary, EV_TIMEOUT, 0);
		new_canary_since = now;
	} else if (now - new_canary_since >= NET_NEW_WAIT_MS) {
		new_boosted = true;
		new_canary_since = now;
		listen_priority(PRIO_WORK);
		conns_boost();
	}
}

/* One connection a call (NET_NEW_BOOST in a boosted turn): the event
 * stays ready while the backlog holds more, and at PRIO_NEW each accept
 * waits for the work that is due. */
static void
accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	for (int n = 0; n < (new_boosted ? NET_NEW_BOOST : 1); n++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof ss;
		char peer[64];
		int fd = accept4(lfd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (!net_accept_transient(errno))
				accept_error();
			return;
		}
		net_peer_name(&ss, len, peer, sizeof peer);
		conn_new(fd, ss.ss_family == AF_UNIX, peer);
	}
}

bool
net_accept_transient(int err)
{
	/* Gone before it was taken, or taken already: nothing to do. */
	return err == EAGAIN || err == EWOULDBLOCK || err == EINTR || err == ECONNABORTED;
}

static void
accept_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	if (lis_unix)
		event_add(lis_unix, NULL);
	if (lis_tcp)
		event_add(lis_tcp, NULL);
}

/* The oldest connection that has not said HELLO: the cheapest for a
 * stranger to open, and the one to give up when descriptors run out. */
static struct conn *
net_oldest_stranger(void)
{
	struct conn *c;
	TAILQ_FOREACH(c, &conns, entry)
		if (c->role == ROLE_NONE && !c->closing)
			return c;
	return NULL;
}

static void
accept_error(void)
{
	int err = errno;
	struct timeval tv = { 0, NET_ACCEPT_PAUSE_MS * 1000 };
	struct conn *c;

	/* Out of descriptors (EMFILE, ENFILE) or memory: the pending peer
	 * stays in the backlog and the listener would fire again at once.
	 * Make room by dropping the oldest peer that never said HELLO, and
	 * pause listening briefly, so the loop keeps serving the connections
	 * it has instead of spinning here. */
	if ((c = net_oldest_stranger()) != NULL)
		net_close(c, "dropped to make room: out of descriptors");
	accept_failures++;
	if (mono_ms() - accept_fail_logged >= 10000) {
		errno = err;
		log_warn("accept failed %u time(s) in 10 s (%s)", accept_failures,
		    c ? "dropping connections that did not say HELLO" : "pausing");
		accept_fail_logged = mono_ms();
		accept_failures = 0;
	}
	if (!accept_pause_ev)
		accept_pause_ev = evtimer_new(base, accept_resume_cb, NULL);
	if (lis_unix)
		event_del(lis_unix);
	if (lis_tcp)
		event_del(lis_tcp);
	evtimer_add(accept_pause_ev, &tv);
}

/* After HELLO: no idle limit (a WAIT or a long-poll PULL is silent for
 * long), but unread replies and unfinished frames are timed. */
static void
conn_set_timeouts(struct conn *c)
{
	struct timeval wr = { conf->client_timeout, 0 };
	bufferevent_set_timeouts(c->bev, NULL, &wr);
}

/* Times the frame being received: a deadline from its first byte (or
 * from the end of the frame before it, for a pipelining peer). */
static bool
conn_frame_deadline(struct conn *c, struct evbuffer *in)
{
	struct timeval tv;
	int64_t left;

	if (c->role == ROLE_NONE)
		return true;     /* the HELLO timeout covers it */
	if (evbuffer_get_length(in) == 0 && !c->raw_msg) {
		c->frame_since = 0;
		conn_set_timeouts(c);
		return true;
	}
	if (!c->frame_since)
		c->frame_since = mono_ms();
	left = c->frame_since + (int64_t)conf->client_timeout * 1000 - mono_ms();
	if (left <= 0)
		return false;
	tv.tv_sec = left / 1000;
	tv.tv_usec = (left % 1000) * 1000;
	{
		struct timeval wr = { conf->client_timeout, 0 };
		bufferevent_set_timeouts(c->bev, &tv, &wr);
	}
	return true;
}

/* A connection that asked for work, or a daemon's, is served at
 * PRIO_WORK.  libevent refuses the change while its write event is active
 * (a reply goes out in this turn): conn_read_cb and conn_write_cb try
 * again. */
static void
conn_promote(struct conn *c)
{
	if (!c->promoted && (c->asked || (c->role != ROLE_NONE && c->role != ROLE_CLIENT)) &&
	    bufferevent_priority_set(c->bev, PRIO_WORK) == 0)
		c->promoted = true;
}

int
net_tcp_identity(int fd, const struct msg_hello *m, const char *payload, bool munge,
    const char *munge_socket, uid_t *uid, gid_t *gid, char *err, size_t errlen)
{
	int64_t claim;

	*gid = (gid_t)-1;
	if (munge) {
		if (!m->auth_method || strcmp(m->auth_method, "munge") != 0) {
			snprintf(err, errlen, "this master wants a munge credential (auth = munge)");
			return -1;
		}
		/* The credential is the only source: no claimed uid is read. */
		return auth_munge_decode(auth_munge_socket(munge_socket), m->auth_cred, payload,
		    uid, gid, err, errlen);
	}
	claim = m->uid;
	if (claim < 0 || claim > UINT32_MAX - 1) {
		snprintf(err, errlen, "HELLO without a valid uid");
		return -1;
	}
	/* auth = none never means "believe anyone": the claim must be the uid
	 * that owns the peer's loopback socket. */
	if (auth_loopback_peer_uid(fd) != claim) {
		snprintf(err, errlen, "cannot confirm uid %lld for this connection "
		    "(auth = none accepts only the owner of a loopback socket)", (long long)claim);
		return -1;
	}
	*uid = (uid_t)claim;
	return 0;
}

/* The identity of a TCP peer (net_tcp_identity by conf); a gid it leaves
 * (gid_t)-1 is the user's own (user_name, in conn_hello).  0, or -1 with
 * the refusal in err. */
static int
conn_tcp_identity(struct conn *c, const struct msg_hello *m, const char *payload, char *err, size_t errlen)
{
	return net_tcp_identity(c->fd, m, payload, strcmp(conf->auth, "munge") == 0, conf->munge_socket,
	    &c->uid, &c->gid, err, errlen);
}

/* The master's answer to an execd's nonce: a credential of the daemon
 * identity carrying it, so the execd knows who DISPATCHes to it (*cred,
 * for the caller to free). */
static int
conn_prove_master(char **cred, const char *nonce, char *err, size_t errlen)
{
	char *payload;

	if (!nonce || strlen(nonce) != 2 * AUTH_NONCE_BYTES || strspn(nonce, "0123456789abcdef") != strlen(nonce)) {
		snprintf(err, errlen, "an execd's HELLO needs a nonce of %d hex digits", 2 * AUTH_NONCE_BYTES);
		return -1;
	}
	payload = xasprintf("%s%s", AUTH_PAYLOAD_MASTER, nonce);
	*cred = auth_munge_encode(auth_munge_socket(conf->munge_socket), payload, err, errlen);
	free(payload);
	return *cred ? 0 : -1;
}

/* HELLO: the identity of a peer, then its role.  On the unix socket the
 * kernel's SO_PEERCRED is the only truth; on TCP see conn_tcp_identity.
 * Every refusal is logged with the peer's address. */
static bool
conn_hello(struct conn *c, json_t *msg)
{
	struct msg_hello m;
	struct msg_hello_reply r;
	const char *role;
	char err[512], *cred = NULL;
	bool execd, peer, witness;
	int64_t seq;
	json_t *rep;

	if (msg_hello_unpack(msg, &m, err, sizeof err) < 0) {
		net_send(c, proto_reply_err(m.seq, ERR_PROTO, "%s", err));
		return false;
	}
	seq = m.seq;
	role = m.role;
	execd = strcmp(role, "execd") == 0;
	peer = strcmp(role, "peer") == 0;
	witness = strcmp(role, "witness") == 0;
	if (!c->is_unix && conn_tcp_identity(c, &m, execd || witness ? AUTH_PAYLOAD_EXECD : peer ?
	    AUTH_PAYLOAD_PEER : AUTH_PAYLOAD_CLIENT, err, sizeof err) < 0) {
		log_warnx("%s: refused: %s", c->peer, err);
		net_send(c, proto_reply_err(seq, ERR_AUTH, "%s", err));
		return false;
	}
	c->user = user_name(c->uid, &c->gid);
	perm_roles(c->user, c->uid, &c->manager, &c->operator);
	c->daemon = qm_is_daemon(c->uid);
	c->role = execd ? ROLE_EXECD : peer ? ROLE_PEER : witness ? ROLE_WITNESS : ROLE_CLIENT;
	/* An execd's connection draws HEARTBEATs and counts towards the
	 * leases: like the other daemon roles, it is refused before it is
	 * let in, not at its first request. */
	if ((execd || peer || witness) && !c->daemon) {
		log_warnx("%s: refused: uid %u is not the daemon identity of this cluster", c->peer,
		    (unsigned)c->uid);
		net_send(c, proto_reply_err(seq, ERR_AUTH, "only the daemon identity (root, the master's "
		    "own user or admin_user) may connect as %s", role));
		return false;
	}
	/* A standby serves only the replication link, the execds' votes and
	 * the requests that say they want whichever master (qconf -smasters,
	 * -takeover).  A primary without its leases still takes execds: their
	 * HEARTBEAT echoes are the leases that make it writable again (an
	 * execd that voted for a newer master does not connect to it). */
	if (((c->role == ROLE_CLIENT && !repl_writable() && !m.any) ||
	    (c->role == ROLE_EXECD && repl_role() != REPL_PRIMARY))) {
		c->redirected = c->role == ROLE_CLIENT;
		rep = proto_reply_redirect(seq, repl_primary_addr(), "this master is %s; ask another",
		    repl_role() == REPL_PRIMARY ? "a primary cut off from its standby and most execds" :
		    repl_role_name());
		net_send_unheld(c, rep);
		return false;
	}
	r = (struct msg_hello_reply){ .seq = seq, .master = my_hostname(), .epoch = repl_epoch(),
	    .failover_timeout = conf->failover_timeout_ms, .uid = c->uid, .user = c->user,
	    .manager = c->manager, .operator = c->operator, .query = c->query };
	/* Daemons (an execd, its witness link, the other master) act on what
	 * a master tells them: it proves who it is. */
	if ((execd || peer || witness) && !c->is_unix && strcmp(conf->auth, "munge") == 0 &&
	    conn_prove_master(&cred, m.nonce, err, sizeof err) < 0) {
		log_warnx("%s: refused a %s: %s", c->peer, role, err);
		net_send(c, proto_reply_err(seq, ERR_AUTH, "%s", err));
		return false;
	}
	r.auth_cred = cred;
	rep = msg_hello_reply_pack(&r);
	free(cred);
	/* Daemons and clients may be idle for long (WAIT, long-poll PULL). */
	bufferevent_set_timeouts(c->bev, NULL, NULL);
	conn_promote(c);
	/* Not held behind the standby's acknowledgement: it says nothing about
	 * the database, and an execd echoes the HEARTBEATs that release held
	 * replies only once it has it. */
	net_send_now(c, rep);
	log_debug("%s: %s %s (uid %u)%s", c->peer, role, c->user, (unsigned)c->uid,
	    c->is_unix ? "" : strcmp(conf->auth, "munge") == 0 ? " by munge" : " by loopback owner");
	return true;
}

/* A request announcing raw bytes waits for them in c->raw_msg: 0 then,
 * 1 when it has none, -1 (msg freed) when it announces too many. */
static int
conn_raw_start(struct conn *c, json_t *msg, const char **why)
{
	int64_t n = msg_raw_bytes(msg);

	if (n == 0)
		return 1;
	if (n < 0 || n > STAGE_CHUNK) {
		json_decref(msg);
		*why = "a frame announces raw bytes (\"bytes\") other than 0 to 1 MiB";
		return -1;
	}
	c->raw_msg = msg;
	c->raw = (size_t)n;
	return 0;
}

/* Reads a pending request's raw bytes straight into the input, as much
 * of them as the socket holds in one call (libevent's own reads take 4 KiB
 * at a time); the input's end must be open.  As read(2). */
static ssize_t
conn_read_raw(struct conn *c, struct evbuffer *in, int fd)
{
	size_t have = evbuffer_get_length(in), want = c->raw > have ? c->raw - have : 0, left;
	struct evbuffer_iovec v[2];
	ssize_t n;
	int nv;

	if (want == 0)
		return 0;
	if ((nv = evbuffer_reserve_space(in, (ev_ssize_t)want, v, 2)) <= 0)
		return -1;
	left = want;
	for (int i = 0; i < nv; i++) {
		if (v[i].iov_len > left)
			v[i].iov_len = left;
		left -= v[i].iov_len;
	}
	if ((n = readv(fd, (struct iovec *)v, nv)) <= 0)
		return n;
	left = (size_t)n;
	for (int i = 0; i < nv; i++) {
		if (v[i].iov_len > left)
			v[i].iov_len = left;
		left -= v[i].iov_len;
	}
	evbuffer_commit_space(in, v, nv);
	return n;
}

/* After a request: what its handler left of its raw bytes is dropped
 * (before: the input's length when the handler began). */
static void
conn_raw_done(struct conn *c, struct evbuffer *in, size_t before)
{
	size_t taken;

	if (!c->dead && c->bev) {
		taken = before - evbuffer_get_length(in);
		if (c->raw > taken)
			evbuffer_drain(in, c->raw - taken);
	}
	c->raw = 0;
}

static void
conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	json_t *msg;
	const char *why;
	size_t more = 0;
	/* Whether the socket may hold more than the bufferevent read. */
	bool full = evbuffer_get_length(in) >= NET_LIBEVENT_READ;
	size_t before;
	int r, n;

	conn_promote(c);
	while (!c->dead && !c->closing) {
		/* Replies the peer does not read: stop reading it until they
		 * drain (conn_write_cb resumes). */
		if (evbuffer_get_length(bufferevent_get_output(bev)) > NET_MAX_UNREAD) {
			bufferevent_disable(bev, EV_READ);
			bufferevent_setwatermark(bev, EV_WRITE, NET_MAX_UNREAD / 2, 0);
			/* While the master does not read, the frame is not timed:
			 * the write timeout now says whether the peer reads. */
			c->frame_since = 0;
			conn_set_timeouts(c);
			return;
		}
		if (!c->raw_msg) {
			r = proto_frame_take(in, &msg, c->role == ROLE_NONE ? NET_HELLO_MAX_FRAME :
			    conf->max_frame, &why);
			if (r > 0 && c->role != ROLE_NONE)
				r = conn_raw_start(c, msg, &why);
		}
		/* A request with raw bytes is handled once they are all here. */
		if (c->raw_msg && (r = evbuffer_get_length(in) >= c->raw) == 1) {
			msg = c->raw_msg;
			c->raw_msg = NULL;
		}
		/* No whole frame left: what else the socket holds, up to the
		 * turn's share (an error or the end is left to the
		 * bufferevent's own next read).  A bufferevent keeps its
		 * input's end frozen outside its own reads, as here. */
		if (r == 0 && c->role != ROLE_NONE && (full || c->raw_msg) &&
		    more < (c->raw_msg ? STAGE_CHUNK : NET_READ_PER_TURN)) {
			evbuffer_unfreeze(in, 0);
			n = c->raw_msg ? (int)conn_read_raw(c, in, bufferevent_getfd(bev)) :
			    evbuffer_read(in, bufferevent_getfd(bev), -1);
			evbuffer_freeze(in, 0);
			if (n > 0) {
				more += (size_t)n;
				full = n >= NET_LIBEVENT_READ;
				continue;
			}
		}
		if (r == 0)
			break;
		/* A whole frame arrived: the next one is timed from its own start. */
		c->frame_since = 0;
		if (r < 0) {
			net_send(c, proto_reply_err(0, ERR_PROTO, "%s", why));
			conn_close_after_flush(c, why);
			return;
		}
		if (c->role == ROLE_NONE) {
			bool ok = msg_type_of(msg) == MSG_HELLO && conn_hello(c, msg);
			if (!ok && msg_type_of(msg) != MSG_HELLO)
				net_send(c, proto_reply_err(msg_seq_of(msg, 0), ERR_AUTH,
				    "the first message must be HELLO"));
			json_decref(msg);
			if (!ok) {
				conn_close_after_flush(c, "refused before authentication");
				return;
			}
			conn_set_timeouts(c);
			continue;
		}
		/* A listing asked first is the query thread's, with the rest. */
		if (!c->asked && c->role == ROLE_CLIENT && c->refs == 0 && reader_takes(msg)) {
			conn_raw_done(c, in, evbuffer_get_length(in));
			net_hand_off(c, msg);
			json_decref(msg);
			return;
		}
		if (!c->asked) {
			c->asked = true;
			conn_promote(c);
		}
		before = evbuffer_get_length(in);
		request_dispatch(c, msg);
		json_decref(msg);
		conn_raw_done(c, in, before);
	}
	if (!c->dead && !c->closing && !conn_frame_deadline(c, in)) {
		net_send(c, proto_reply_err(0, ERR_PROTO, "a frame was not complete within %d s",
		    conf->client_timeout));
		conn_close_after_flush(c, "a frame was not complete in time");
	}
}

void
net_input_add(struct bufferevent *bev, struct evbuffer *from)
{
	struct evbuffer *in = bufferevent_get_input(bev);

	evbuffer_unfreeze(in, 0);
	evbuffer_add_buffer(in, from);
	evbuffer_freeze(in, 0);
}

void
net_adopt(struct handoff *h)
{
	struct conn *c = conn_new(h->fd, h->is_unix, h->peer);

	h->fd = -1;
	log_debug("%s: back from the query thread%s", h->peer, h->stranger ? ", before HELLO" : "");
	if (c && h->stranger) {
		/* The query endpoint's client that the thread does not let in
		 * itself: the loop's HELLO decides, as for any other. */
		c->query = true;
		net_input_add(c->bev, h->in);
		conn_read_cb(c->bev, c);
	} else if (c) {
		c->role = ROLE_CLIENT;
		c->uid = h->uid;
		c->gid = h->gid;
		c->user = h->user;
		h->user = NULL;
		c->manager = h->manager;
		c->operator = h->operator;
		c->daemon = h->daemon;
		c->asked = true;
		conn_promote(c);
		conn_set_timeouts(c);
		net_input_add(c->bev, h->in);
		if (h->msg)
			request_dispatch(c, h->msg);
		if (!c->dead && !c->closing)
			conn_read_cb(c->bev, c);
	}
	json_decref(h->msg);
	evbuffer_free(h->in);
	free(h->user);
	free(h);
}

static void
conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	if (c->closing && c->refs == 0) {
		net_close(c, "closed after error");
		return;
	}
	conn_promote(c);
	/* Its replies drained below the mark: read its requests again. */
	if (!c->closing && !(bufferevent_get_enabled(bev) & EV_READ)) {
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		bufferevent_enable(bev, EV_READ);
		conn_read_cb(bev, c);
	}
	/* The standby link drained: the next chunks of staged files. */
	if (c->role == ROLE_PEER && !c->dead)
		stage_repl_pump();
}

static void
conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	const char *why = NULL;

	if ((what & BEV_EVENT_TIMEOUT) && (what & BEV_EVENT_WRITING))
		why = "left its replies unread";
	else if ((what & BEV_EVENT_TIMEOUT) && c->frame_since)
		why = "a frame was not complete in time";
	else if (what & BEV_EVENT_TIMEOUT)
		why = "said nothing in time";
	if (why) {
		/* A peer that holds resources without progress is worth a line. */
		log_info("%s: closing after %d s: %s", c->peer, conf->client_timeout, why);
		net_close(c, why);
	} else if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR) && !c->dead &&
	    (c->refs > 0 || evbuffer_get_length(bufferevent_get_output(bev)) > 0)) {
		/* A half-close (shutdown of writing) after a request: that
		 * request may be committed already, so its reply still goes
		 * out, and the connection closes once it is written. */
		conn_close_after_flush(c, "peer closed its side; sending what it asked first");
	} else if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		net_close(c, "peer closed");
}

/* The accept event of a listening socket, at PRIO_NEW; NULL for fd -1. */
static struct event *
listen_event(int fd)
{
	struct event *ev;

	if (fd < 0)
		return NULL;
	ev = event_new(base, fd, EV_READ | EV_PERSIST, accept_cb, NULL);
	if (!ev || event_priority_set(ev, PRIO_NEW) < 0 || event_add(ev, NULL) < 0)
		fatalx("cannot watch a listening socket");
	return ev;
}

/* Closes what listen_event watched. */
static void
listen_free(struct event *ev)
{
	if (!ev)
		return;
	close(event_get_fd(ev));
	event_free(ev);
}

int
net_listen(void)
{
	net_raise_fd_limit();
	if (conf->unix_socket && (lis_unix = listen_event(net_bind_unix(conf->unix_socket, 128))) == NULL)
		return -1;
	if (conf->listen && (lis_tcp = listen_event(net_bind_tcp(conf->listen_host, conf->listen_port, 512))) == NULL)
		return -1;
	new_canary = event_new(base, -1, 0, new_canary_cb, NULL);
	if (!new_canary || event_priority_set(new_canary, PRIO_NEW) < 0)
		fatalx("cannot make the new connections' canary event");
	return 0;
}

void
net_shutdown(void)
{
	struct conn *c;
	listen_free(lis_unix);
	listen_free(lis_tcp);
	lis_unix = lis_tcp = NULL;
	if (new_canary)
		event_free(new_canary);
	new_canary = NULL;
	new_canary_since = 0;
	new_boosted = false;
	if (accept_pause_ev)
		event_free(accept_pause_ev);
	accept_pause_ev = NULL;
	if (conf->unix_socket)
		unlink(conf->unix_socket);
	while ((c = TAILQ_FIRST(&conns)) != NULL)
		net_close(c, "shutting down");
}

struct conn *
net_next(struct conn *c)
{
	return c ? TAILQ_NEXT(c, entry) : TAILQ_FIRST(&conns);
}
