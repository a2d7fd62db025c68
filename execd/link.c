/* link.c: the connection to the master: connect, HELLO and REGISTER, LOAD and PULL.
 *
 * It connects in order with backoff and handles the master's messages. */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "common/msg.h"
#include "execd/execd.h"

#define LINK_BACKOFF_MIN_MS     100
#define LINK_BACKOFF_MAX_MS     5000
#define LINK_CONNECT_TIMEOUT_S  5
/* A master that accepted us but does not answer HELLO/REGISTER in time is
 * treated as down. */
#define LINK_REPLY_TIMEOUT_S    30
/* How long, after our vote, a candidate that redirects us (it awaits the
 * other votes) is asked again instead of the next master: the master we
 * voted out cannot take us (its epoch is older than our vote), and a
 * frozen one would hold us for LINK_REPLY_TIMEOUT_S, which bounds it. */
#define LINK_CANDIDATE_MS       (LINK_REPLY_TIMEOUT_S * 1000)

enum link_state {
	LINK_DOWN,        /* waiting for the retry timer */
	LINK_CONNECTING,  /* a connect() to addrs[cur] is under way */
	LINK_HELLO,       /* HELLO and REGISTER sent, waiting for the replies */
	LINK_READY,       /* registered: LOAD, PULL and the outbox flow */
};

struct link_addr {
	struct sockaddr_storage ss;
	socklen_t               len;
	char                   *label;   /* the masters entry it came from */
};

static struct {
	enum link_state     state;
	struct bufferevent *bev;
	struct event       *retry_ev;
	int                 backoff_ms;
	bool                warned;       /* "cannot reach" logged since the last success */
	struct link_addr   *addrs;
	int                 naddrs, cur;
	int64_t             seq;
	int64_t             hello_seq, register_seq;
	int64_t             epoch;
	bool                pulling;      /* a PULL is outstanding */
	int64_t             pull_seq;
	int                 pull_free;
	bool                pull_hold;    /* the master answered a PULL with nothing */
	int64_t             last_heard;   /* mono ms of the master's last frame */
	char                nonce[2 * AUTH_NONCE_BYTES + 1];  /* of this connection's HELLO */
	bool                master_ok;    /* the master proved its identity */
	char               *candidate;    /* the masters entry we last voted for */
	int64_t             candidate_until;  /* mono ms: waited for until then */
} lk;

static void link_try_next(void);

bool
link_ready(void)
{
	return lk.state == LINK_READY;
}

static const char *
link_peer(void)
{
	return lk.cur >= 0 && lk.cur < lk.naddrs ? lk.addrs[lk.cur].label : "master";
}

int64_t
link_send(json_t *msg)
{
	const char *why;
	int64_t seq;

	if (!lk.bev || (lk.state != LINK_HELLO && lk.state != LINK_READY)) {
		json_decref(msg);
		return -1;
	}
	seq = ++lk.seq;
	msg_seq_set(msg, seq);
	if (proto_frame_append(bufferevent_get_output(lk.bev), msg, PROTO_MAX_FRAME, &why) < 0) {
		log_warnx("cannot send %s to %s: %s", msg_type_text(msg), link_peer(), why);
		seq = -1;
	}
	json_decref(msg);
	return seq;
}

static void
link_free_addrs(void)
{
	for (int i = 0; i < lk.naddrs; i++)
		free(lk.addrs[i].label);
	free(lk.addrs);
	lk.addrs = NULL;
	lk.naddrs = 0;
	lk.cur = -1;
}

static void
link_add_addr(const struct sockaddr *sa, socklen_t len, const char *label)
{
	struct link_addr *a;

	lk.addrs = xrealloc(lk.addrs, (size_t)(lk.naddrs + 1) * sizeof *lk.addrs);
	a = &lk.addrs[lk.naddrs++];
	memset(a, 0, sizeof *a);
	memcpy(&a->ss, sa, len);
	a->len = len;
	a->label = xstrdup(label);
}

/* Every address of every master, in the configured order.  Names are
 * resolved again each round, so a master that moved is found. */
static void
link_resolve(void)
{
	link_free_addrs();
	for (char **m = conf->masters; *m; m++) {
		struct addrinfo hints, *res, *ai;
		char *host, port[16];
		int p, rc;

		if (strncmp(*m, "unix:", 5) == 0) {
			struct sockaddr_un sun;
			memset(&sun, 0, sizeof sun);
			sun.sun_family = AF_UNIX;
			snprintf(sun.sun_path, sizeof sun.sun_path, "%s", *m + 5);
			link_add_addr((struct sockaddr *)&sun, sizeof sun, *m);
			continue;
		}
		if (parse_hostport(*m, &host, &p) < 0)
			continue;	/* conf.c let no such entry through */
		memset(&hints, 0, sizeof hints);
		hints.ai_family = AF_UNSPEC;
		hints.ai_socktype = SOCK_STREAM;
		hints.ai_flags = AI_NUMERICSERV;
		snprintf(port, sizeof port, "%d", p);
		if ((rc = getaddrinfo(host, port, &hints, &res)) != 0) {
			log_debug("cannot resolve %s: %s", host, gai_strerror(rc));
			free(host);
			continue;
		}
		for (ai = res; ai; ai = ai->ai_next)
			link_add_addr(ai->ai_addr, ai->ai_addrlen, *m);
		freeaddrinfo(res);
		free(host);
	}
}

static void
link_close(void)
{
	if (lk.bev)
		bufferevent_free(lk.bev);
	lk.bev = NULL;
	lk.pulling = false;
	lk.pull_hold = false;
	outbox_link_down();
}

/* Waits before the next round: 100 ms, doubling up to 5 s. */
static void
link_schedule_retry(void)
{
	struct timeval tv = { lk.backoff_ms / 1000, (lk.backoff_ms % 1000) * 1000 };

	lk.state = LINK_DOWN;
	evtimer_add(lk.retry_ev, &tv);
	log_debug("next connection attempt in %d ms", lk.backoff_ms);
	lk.backoff_ms = lk.backoff_ms * 2 > LINK_BACKOFF_MAX_MS ? LINK_BACKOFF_MAX_MS : lk.backoff_ms * 2;
}

static void
link_down(const char *why)
{
	if (lk.state == LINK_READY)
		log_warnx("lost master %s: %s; jobs keep running, reconnecting", link_peer(), why);
	else
		log_warnx("master %s: %s", link_peer(), why);
	lk.warned = true;
	link_close();
	link_schedule_retry();
}

/* The first address of the candidate we wait for, or -1. */
static int
link_candidate(void)
{
	if (!lk.candidate || mono_ms() >= lk.candidate_until)
		return -1;
	for (int i = 0; i < lk.naddrs; i++)
		if (strcmp(lk.addrs[i].label, lk.candidate) == 0)
			return i;
	return -1;
}

/* A round starts at the candidate we voted for, if we wait for one: our
 * vote is its lease only for the failover timeout, and a connection to an
 * old primary cut off from us may take longer than that to fail. */
static void
link_start_round(void)
{
	int c = link_candidate();
	lk.cur = c >= 0 ? c - 1 : -1;
}

static bool
link_is_unix(void)
{
	return lk.addrs[lk.cur].ss.ss_family == AF_UNIX;
}

/* Our identity for the master: over TCP with munge, a credential made for
 * an execd's HELLO (the master reads the uid from it and nothing else);
 * with none, the claimed uid, which the master checks against the owner of
 * our loopback socket.  On a unix socket the kernel tells it. */
static void
link_auth(struct msg_hello *m, char **cred)
{
	*cred = NULL;
	m->auth_method = "none";
	if (!link_is_unix())
		auth_hello_daemon(m, conf->auth, auth_munge_socket(conf->munge_socket),
		    AUTH_PAYLOAD_EXECD, cred);
}

int
link_master_ok(int fd, bool is_unix, const json_t *rep, const char *nonce, char *why, size_t n)
{
	char err[400];
	int64_t uid = auth_master_uid(fd, is_unix, conf->auth, auth_munge_socket(conf->munge_socket),
	    rep, nonce, err, sizeof err);

	if (uid < 0) {
		snprintf(why, n, "refused the master: %s", err);
		return -1;
	}
	if (uid != 0 && uid != (int64_t)geteuid() && uid != conf->admin_uid) {
		snprintf(why, n, "refused the master: it runs as uid %lld, not root, uid %u or admin_user",
		    (long long)uid, (unsigned)geteuid());
		return -1;
	}
	return 0;
}

/* Only the master may DISPATCH to us: see link_master_ok. */
static int
link_check_master(json_t *rep, char *why, size_t n)
{
	return link_master_ok(bufferevent_getfd(lk.bev), link_is_unix(), rep, lk.nonce, why, n);
}

/* Whether the host asks for work, and if not, why (for qhost). */
static bool
link_takes_work(char *why, size_t n)
{
	if (execd_idle && !execd_full)
		return true;
	snprintf(why, n, "%s%s%s", execd_full ? execd_full_why : "",
	    execd_full && !execd_idle ? "; " : "", execd_idle ? "" : execd_why);
	return false;
}

/* LOAD; why the host takes no work, for qhost and the master's log. */
static void
link_load_send(bool takes, const char *why)
{
	struct msg_load m = { .load = { execd_load[0], execd_load[1], execd_load[2] }, .idle = takes,
	    .reason = takes ? NULL : why, .stopped = active_stopped_json() };

	link_send(msg_load_pack(&m));
	json_decref(m.stopped);
}

static void
link_hello(void)
{
	char why[sizeof execd_why + sizeof execd_full_why + 2], *cred;
	bool takes = link_takes_work(why, sizeof why);
	struct msg_hello h = { .role = "execd", .uid = geteuid(), .nonce = lk.nonce };
	struct msg_register r = { .host = conf->name, .slots = conf->slots, .uid = geteuid(),
	    .load = { execd_load[0], execd_load[1], execd_load[2] }, .idle = takes,
	    .jobs = active_jobs_json(), .attrs = conf->attrs, .vmem_limit = limits_vmem_mode };

	auth_nonce(lk.nonce, sizeof lk.nonce);
	lk.master_ok = false;
	link_auth(&h, &cred);
	lk.hello_seq = link_send(msg_hello_pack(&h));
	free(cred);
	lk.register_seq = link_send(msg_register_pack(&r));
	json_decref(r.jobs);
	/* A busy host says why in a LOAD right after registering. */
	if (!takes)
		link_load_send(false, why);
}

void
link_kick(void)
{
	int free_slots;

	if (lk.state != LINK_READY || !execd_idle || execd_full || lk.pull_hold)
		return;
	free_slots = active_free_slots();
	/* A new PULL replaces the one the master holds, so one whose count of
	 * free slots is stale is simply renewed; PULL {free: 0} withdraws it
	 * (a DISPATCH for an older PULL crossed it on the wire). */
	if (lk.pulling && lk.pull_free == free_slots)
		return;
	if (free_slots <= 0) {
		if (lk.pulling)
			link_send(msg_pull_pack(&(struct msg_pull){ .free = 0 }));
		lk.pulling = false;
		return;
	}
	lk.pull_seq = link_send(msg_pull_pack(&(struct msg_pull){ .free = free_slots }));
	if (lk.pull_seq < 0)
		return;
	lk.pulling = true;
	lk.pull_free = free_slots;
	log_debug("PULL %lld for %d slot%s", (long long)lk.pull_seq, free_slots,
	    free_slots == 1 ? "" : "s");
}

void
link_load(void)
{
	char why[sizeof execd_why + sizeof execd_full_why + 2];
	bool takes = link_takes_work(why, sizeof why);

	if (lk.state != LINK_READY)
		return;
	link_load_send(takes, why);
	if (!takes) {
		/* The master drops the PULL of a host that reports itself
		 * busy; when idle again we send a fresh one. */
		lk.pulling = false;
		return;
	}
	lk.pull_hold = false;
	link_kick();
}

static void
link_reply(json_t *msg)
{
	struct msg_reply r;
	struct msg_hello_reply hr;
	const char *text;
	char why[512];
	int64_t seq;
	bool ok;

	msg_reply_unpack(msg, &r, why, sizeof why);
	seq = r.seq;
	ok = r.ok;
	text = r.message;

	if (seq == lk.hello_seq || seq == lk.register_seq) {
		if (!ok && r.error && strcmp(r.error, ERR_REDIRECT) == 0) {
			int c = link_candidate();
			log_debug("master %s redirects: %s", link_peer(), text ? text : "");
			link_close();
			/* The candidate we voted for, still short of its
			 * majority: it again, shortly. */
			if (c >= 0 && strcmp(lk.addrs[c].label, link_peer()) == 0) {
				lk.backoff_ms = LINK_BACKOFF_MIN_MS;
				link_schedule_retry();
				return;
			}
			/* A standby, or a master that steps down: the next one. */
			link_try_next();
			return;
		}
		if (!ok) {
			snprintf(why, sizeof why, "refused %s: %s (%s)",
			    seq == lk.hello_seq ? "HELLO" : "REGISTER",
			    text ? text : "no reason given", r.error ? r.error : "?");
			link_down(why);
			return;
		}
		if (seq == lk.hello_seq) {
			if (link_check_master(msg, why, sizeof why) < 0 ||
			    msg_hello_reply_unpack(msg, &hr, why, sizeof why) < 0) {
				link_down(why);
				return;
			}
			lk.master_ok = true;
			lk.epoch = hr.epoch;
			/* Fencing: we voted for a newer master; this one was replaced. */
			if (lk.epoch < witness_epoch()) {
				log_warnx("master %s is of epoch %lld, older than %lld we voted for: trying the next",
				    link_peer(), (long long)lk.epoch, (long long)witness_epoch());
				link_close();
				link_try_next();
			}
			return;
		}
		lk.state = LINK_READY;
		lk.backoff_ms = LINK_BACKOFF_MIN_MS;
		lk.warned = false;
		lk.candidate_until = 0;
		bufferevent_set_timeouts(lk.bev, NULL, NULL);
		log_info("registered with master %s (epoch %lld): %d slot%s, %d job%s held",
		    link_peer(), (long long)lk.epoch, conf->slots, conf->slots == 1 ? "" : "s",
		    active_count(), active_count() == 1 ? "" : "s");
		outbox_flush();
		link_kick();
		return;
	}
	if (!ok) {
		log_warnx("master %s refused request %lld: %s", link_peer(), (long long)seq,
		    text ? text : "no reason given");
		if (lk.pulling && seq == lk.pull_seq) {
			/* Asking again at once would only be refused again. */
			lk.pulling = false;
			lk.pull_hold = true;
		}
	}
}

/* Starting each job is synchronous and the next PULL follows at once: no
 * timer anywhere between a submission and its start. */
static void
link_dispatch(json_t *msg)
{
	struct msg_dispatch d;
	char err[64];
	json_t *j;
	size_t i;

	if (lk.pulling && msg_seq_of(msg, -1) == lk.pull_seq)
		lk.pulling = false;
	if (msg_dispatch_unpack(msg, &d, err, sizeof err) < 0) {
		log_warnx("DISPATCH from %s without a list of jobs: ignored", link_peer());
		return;
	}
	if (json_array_size(d.jobs) == 0)
		lk.pull_hold = true;
	json_array_foreach(d.jobs, i, j)
		active_start(j);
	link_kick();
}

static void
link_signal(json_t *msg)
{
	struct msg_signal m;
	char err[64];

	if (msg_signal_unpack(msg, &m, err, sizeof err) < 0) {
		log_warnx("%s from %s: ignored", err, link_peer());
		return;
	}
	active_signal(m.a.id, (int)m.a.task, (int)m.a.attempt, (int)m.signal);
}

/* The echo is the master's lease: we vote for no other master until the
 * failover timeout has passed since it sent this.  Not to a master that
 * lacks a sequence we heard announced: one restarted on an old copy while
 * the other is down would lose writes acknowledged on our word
 * (t/model/failover.pml). */
static void
link_heartbeat(const json_t *msg)
{
	struct msg_heartbeat hb;

	msg_heartbeat_unpack(msg, &hb, NULL, 0);
	if (hb.epoch == MSG_ABSENT)
		hb.epoch = 0;
	if (hb.last == MSG_ABSENT)
		hb.last = 0;
	if (hb.epoch >= witness_epoch() && hb.last >= witness_heard()) {
		witness_saw_seq(hb.last);
		link_send(msg_heartbeat_pack(&(struct msg_heartbeat){ .epoch = MSG_ABSENT, .last = hb.last,
		    .t = hb.t }));
	}
}

static void
link_handle(json_t *msg)
{
	/* Until the master has proved who it is, only its HELLO reply counts. */
	if (!lk.master_ok && msg_type_of(msg) != MSG_REPLY) {
		log_warnx("ignoring %s from %s before it proved to be the master", msg_type_text(msg), link_peer());
		return;
	}
	switch (msg_type_of(msg)) {
	case MSG_REPLY:
		link_reply(msg);
		break;
	case MSG_DISPATCH:
		link_dispatch(msg);
		break;
	case MSG_SIGNAL:
		link_signal(msg);
		break;
	case MSG_ACK: {
		struct msg_ack a;
		msg_ack_unpack(msg, &a, NULL, 0);
		outbox_ack(a.seq);
		break;
	}
	case MSG_HEARTBEAT:
		link_heartbeat(msg);
		break;
	default:
		log_debug("ignoring %s from master %s", msg_type_text(msg), link_peer());
	}
}

static void
link_read_cb(struct bufferevent *bev, void *arg)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	const char *why;
	json_t *msg;
	int r;

	while (lk.bev == bev && (r = proto_frame_take(in, &msg, PROTO_MAX_FRAME, &why)) != 0) {
		/* Only a registered link is a primary: a standby's redirect
		 * is not a sign that the primary lives. */
		if (r > 0 && lk.state == LINK_READY) {
			lk.last_heard = mono_ms();
			witness_alive(lk.addrs[lk.cur].label);
		}
		if (r < 0) {
			char text[256];
			snprintf(text, sizeof text, "bad frame (%s)", why);
			link_down(text);
			return;
		}
		link_handle(msg);
		json_decref(msg);
	}
}

static void
link_connected(void)
{
	struct timeval tv = { LINK_REPLY_TIMEOUT_S, 0 };
	int fd = bufferevent_getfd(lk.bev), one = 1;

	if (lk.addrs[lk.cur].ss.ss_family != AF_UNIX) {
		int idle = 30, intvl = 10, cnt = 3;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
	}
	log_debug("connected to master %s", link_peer());
	lk.state = LINK_HELLO;
	bufferevent_set_timeouts(lk.bev, &tv, NULL);
	link_hello();
}

static void
link_event_cb(struct bufferevent *bev, short what, void *arg)
{
	if (what & BEV_EVENT_CONNECTED) {
		link_connected();
		return;
	}
	if (lk.state == LINK_CONNECTING) {
		log_debug("cannot connect to master %s: %s", link_peer(),
		    what & BEV_EVENT_TIMEOUT ? "timed out" : strerror(EVUTIL_SOCKET_ERROR()));
		bufferevent_free(lk.bev);
		lk.bev = NULL;
		link_try_next();
		return;
	}
	if (what & BEV_EVENT_TIMEOUT)
		link_down("no reply in time");
	else if (what & BEV_EVENT_EOF)
		link_down("connection closed");
	else
		link_down(strerror(EVUTIL_SOCKET_ERROR()));
}

/* The next address of this round; when none is left, wait and start over. */
static void
link_try_next(void)
{
	struct timeval tv = { LINK_CONNECT_TIMEOUT_S, 0 };

	while (++lk.cur < lk.naddrs) {
		struct link_addr *a = &lk.addrs[lk.cur];
		int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			log_warn("socket");
			continue;
		}
		lk.bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
		if (!lk.bev)
			fatalx("bufferevent_socket_new failed");
		bufferevent_setcb(lk.bev, link_read_cb, NULL, link_event_cb, NULL);
		bufferevent_set_timeouts(lk.bev, NULL, &tv);
		bufferevent_enable(lk.bev, EV_READ | EV_WRITE);
		lk.state = LINK_CONNECTING;
		if (bufferevent_socket_connect(lk.bev, (struct sockaddr *)&a->ss, (int)a->len) == 0)
			return;
		log_debug("cannot connect to master %s: %s", a->label, strerror(errno));
		bufferevent_free(lk.bev);
		lk.bev = NULL;
	}
	if (!lk.warned)
		log_warnx("cannot reach any master (%s%s); retrying", conf->masters[0],
		    conf->masters[1] ? ", ..." : "");
	lk.warned = true;
	link_schedule_retry();
}

static void
link_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	link_resolve();
	link_start_round();
	link_try_next();
}

int64_t
link_last_heard(void)
{
	return lk.last_heard;
}

const char *
link_master(void)
{
	return lk.state == LINK_READY ? lk.addrs[lk.cur].label : NULL;
}

/* We voted for epoch: a link to an older master goes, and a link that is
 * down (the primary died) tries again now rather than after its backoff,
 * so the new primary has its execds, and their leases, at once. */
void
link_fence(int64_t epoch, const char *candidate)
{
	free(lk.candidate);
	lk.candidate = xstrdup(candidate);
	lk.candidate_until = mono_ms() + LINK_CANDIDATE_MS;
	if (lk.bev && lk.epoch < epoch && lk.state != LINK_CONNECTING) {
		log_warnx("master %s: its epoch was superseded by our vote; reconnecting", link_peer());
		link_close();
		lk.state = LINK_DOWN;
	}
	if (lk.state == LINK_DOWN) {
		evtimer_del(lk.retry_ev);
		lk.backoff_ms = LINK_BACKOFF_MIN_MS;
		link_start_round();
		link_try_next();
	}
}

void
link_start(void)
{
	lk.last_heard = mono_ms();
	lk.backoff_ms = LINK_BACKOFF_MIN_MS;
	lk.cur = -1;
	lk.retry_ev = evtimer_new(base, link_retry_cb, NULL);
	link_resolve();
	link_try_next();
}

void
link_stop(void)
{
	link_close();
	if (lk.retry_ev)
		event_free(lk.retry_ev);
	lk.retry_ev = NULL;
	link_free_addrs();
	free(lk.candidate);
	lk.candidate = NULL;
	lk.state = LINK_DOWN;
}
