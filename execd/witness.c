/* witness.c: the execd as a failover witness: one vote per epoch, kept in the spool.
 *
 * A light link to every master carries its VOTE_REQUESTs. */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
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

#define WITNESS_RETRY_MS 500

struct wlink {
	const char         *addr;   /* the masters entry */
	struct bufferevent *bev;
	int64_t             retry;  /* mono ms */
	char                nonce[2 * AUTH_NONCE_BYTES + 1];  /* of this connection's HELLO */
	bool                master_ok;   /* it proved to be a master of this cluster */
	bool                up;          /* connected */
	bool                gone, probing;  /* its port refused us since the link went */
	unsigned            gen, probe_gen;  /* a connection since makes a probe's word stale */
	json_t             *held;        /* a VOTE_REQUEST refused while the others lived */
};

static struct {
	struct wlink *links;
	int           n;
	struct event *tick_ev;
	int64_t       voted;        /* the highest epoch we voted for */
	int64_t       seq;          /* the highest sequence a primary told us of */
	int64_t       voted_at;     /* mono ms of our last vote */
	char         *path;         /* SPOOL/voted_epoch */
} wt;

int64_t
witness_epoch(void)
{
	return wt.voted;
}

int64_t
witness_heard(void)
{
	return wt.seq;
}

void
witness_saw_seq(int64_t seq)
{
	if (seq > wt.seq)
		wt.seq = seq;
}

static void
witness_close(struct wlink *w)
{
	if (w->bev)
		bufferevent_free(w->bev);
	w->bev = NULL;
	w->up = false;
	json_decref(w->held);
	w->held = NULL;
	w->retry = mono_ms() + WITNESS_RETRY_MS;
}

static void
witness_send(struct wlink *w, json_t *msg)
{
	const char *why;
	if (w->bev && proto_frame_append(bufferevent_get_output(w->bev), msg, PROTO_MAX_FRAME, &why) < 0)
		log_warnx("witness: cannot send to %s: %s", w->addr, why);
	json_decref(msg);
}

/* We heard master addr on our registered link: whatever its port said
 * before, its process lives. */
void
witness_alive(const char *addr)
{
	for (int i = 0; i < wt.n; i++)
		if (strcmp(wt.links[i].addr, addr) == 0) {
			wt.links[i].gone = false;
			wt.links[i].gen++;
		}
}

/* Every master but w's refused our connection since we lost it, and we
 * are registered with none of them: their processes are gone, and the
 * leases our echoes gave them with them. */
static bool
witness_others_gone(const struct wlink *w)
{
	const char *m = link_master();

	if (m && strcmp(m, w->addr) != 0)
		return false;
	for (int i = 0; i < wt.n; i++)
		if (&wt.links[i] != w && !wt.links[i].gone)
			return false;
	return true;
}

/* A vote for epoch e only when we, too, have not heard the primary for the
 * failover timeout or its port refuses us, and never twice for one epoch
 * or for an older one. */
static void
witness_vote_request(struct wlink *w, json_t *msg)
{
	struct msg_vote_request r;
	int64_t e, timeout, quiet = mono_ms() - link_last_heard();
	const char *why = NULL;
	char buf[32];

	msg_vote_request_unpack(msg, &r, NULL, 0);
	e = r.epoch;
	timeout = r.timeout;

	if (e <= wt.voted)
		why = "already voted for this or a newer epoch";
	else if (wt.voted_at && mono_ms() - wt.voted_at < timeout)
		/* A vote is a lease too: the candidate counts it as one. */
		why = "we voted less than the failover timeout ago";
	else if (timeout <= 0 || (quiet < timeout && !witness_others_gone(w))) {
		why = "we still hear the primary";
		/* Asked again the moment its port refuses us. */
		json_decref(w->held);
		w->held = json_incref(msg);
	}
	else if (r.last < wt.seq)
		why = "the candidate lacks transactions the primary acknowledged";
	if (why) {
		witness_send(w, msg_vote_pack(&(struct msg_vote){ .epoch = e, .granted = false,
		    .host = conf->name, .why = why }));
		return;
	}
	/* Durable before it is cast: a restarted execd must not vote again. */
	snprintf(buf, sizeof buf, "%lld\n", (long long)e);
	if (spool_write_atomic(wt.path, buf, strlen(buf), 0600) < 0) {
		log_warn("cannot record our vote in %s; not voting", wt.path);
		return;
	}
	wt.voted = e;
	wt.voted_at = mono_ms();
	json_decref(w->held);
	w->held = NULL;
	log_warnx("voted for master %s in epoch %lld (the primary silent for %lld ms)",
	    r.candidate ? r.candidate : w->addr, (long long)e, (long long)quiet);
	/* "t" is the candidate's clock when it asked, echoed: it dates our
	 * promise from then, never later than we made it. */
	witness_send(w, msg_vote_pack(&(struct msg_vote){ .epoch = e, .granted = true, .host = conf->name,
	    .t = r.t }));
	link_fence(e, w->addr);
}

static void
witness_read_cb(struct bufferevent *bev, void *arg)
{
	struct wlink *w = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	const char *why;
	json_t *msg;
	int r;

	while (w->bev == bev && (r = proto_frame_take(in, &msg, PROTO_MAX_FRAME, &why)) != 0) {
		if (r < 0) {
			witness_close(w);
			return;
		}
		struct msg_reply env;

		msg_reply_unpack(msg, &env, NULL, 0);
		if (msg_type_of(msg) == MSG_VOTE_REQUEST && w->master_ok)
			witness_vote_request(w, msg);
		else if (msg_type_of(msg) == MSG_REPLY && !env.ok) {
			log_debug("witness: %s refused us: %s", w->addr, env.message ? env.message : "?");
			witness_close(w);
		} else if (msg_type_of(msg) == MSG_REPLY && env.seq == 1) {
			/* Our vote decides who runs jobs: only a master of this
			 * cluster may ask for it. */
			char err[512];
			if (link_master_ok(bufferevent_getfd(bev), false, msg, w->nonce, err, sizeof err) < 0) {
				log_warnx("witness: %s: %s", w->addr, err);
				json_decref(msg);
				witness_close(w);
				return;
			}
			w->master_ok = true;
		}
		json_decref(msg);
	}
}

/* The kernel's word on a master whose link went: refused, its process is
 * gone; a request held for that is answered now. */
static void
witness_gone_cb(void *arg, bool refused)
{
	struct wlink *w = arg;

	w->probing = false;
	if (w->gen != w->probe_gen || w->up || !refused || w->gone)
		return;
	w->gone = true;
	log_warnx("witness: master %s refuses connections: its process is gone", w->addr);
	for (int i = 0; i < wt.n; i++) {
		json_t *msg = wt.links[i].held;
		if (msg && wt.links[i].master_ok) {
			wt.links[i].held = NULL;
			witness_vote_request(&wt.links[i], msg);
			json_decref(msg);
		}
	}
}

static void
witness_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct wlink *w = arg;
	if (what & BEV_EVENT_CONNECTED) {
		w->up = true;
		w->gone = false;
		w->gen++;
		struct msg_hello h = { .seq = 1, .role = "witness", .uid = geteuid(), .nonce = w->nonce };
		char *cred;

		auth_nonce(w->nonce, sizeof w->nonce);
		w->master_ok = false;
		auth_hello_daemon(&h, conf->auth, auth_munge_socket(conf->munge_socket), AUTH_PAYLOAD_EXECD,
		    &cred);
		witness_send(w, msg_hello_pack(&h));
		free(cred);
		return;
	}
	witness_close(w);
	if (!w->probing) {
		w->probe_gen = w->gen;
		w->probing = gone_probe(base, w->addr, 1000, witness_gone_cb, w) == 0;
	}
}

static void
witness_connect(struct wlink *w)
{
	struct addrinfo *res;

	w->retry = mono_ms() + WITNESS_RETRY_MS;
	if (resolve_hostport(w->addr, &res) < 0)
		return;
	w->bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (!w->bev)
		fatalx("bufferevent_socket_new failed");
	bufferevent_setcb(w->bev, witness_read_cb, NULL, witness_event_cb, w);
	bufferevent_enable(w->bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(w->bev, res->ai_addr, (int)res->ai_addrlen) < 0)
		witness_close(w);
	freeaddrinfo(res);
}

static void
witness_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	int64_t now = mono_ms();
	for (int i = 0; i < wt.n; i++)
		if (!wt.links[i].bev && now >= wt.links[i].retry)
			witness_connect(&wt.links[i]);
}

/* With a single master there is no one to elect: no witness links. */
void
witness_start(void)
{
	struct timeval tv = { 0, WITNESS_RETRY_MS * 1000 };
	char *text;
	const char *why;
	int n = 0;

	wt.path = execd_path("voted_epoch");
	if ((text = read_file(wt.path, 64, NULL, &why)) != NULL) {
		wt.voted = strtoll(text, NULL, 10);
		free(text);
	}
	for (char **m = conf->masters; *m; m++)
		if (strncmp(*m, "unix:", 5) != 0)
			n++;
	if (n < 2)
		return;
	wt.links = xcalloc((size_t)n, sizeof *wt.links);
	for (char **m = conf->masters; *m; m++)
		if (strncmp(*m, "unix:", 5) != 0)
			wt.links[wt.n++].addr = *m;
	wt.tick_ev = event_new(base, -1, EV_PERSIST, witness_tick_cb, NULL);
	event_add(wt.tick_ev, &tv);
	witness_tick_cb(-1, 0, NULL);
}

void
witness_stop(void)
{
	for (int i = 0; i < wt.n; i++)
		witness_close(&wt.links[i]);
	free(wt.links);
	wt.links = NULL;
	wt.n = 0;
	if (wt.tick_ev)
		event_free(wt.tick_ev);
	wt.tick_ev = NULL;
	free(wt.path);
	wt.path = NULL;
}
