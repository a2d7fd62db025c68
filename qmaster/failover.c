/* failover.c: the election of a primary master, its execd leases, and qconf -takeover.
 *
 * The standby asks the execds for votes and promotes itself with epoch + 1 on
 * a majority; the primary counts its execd leases. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg.h"
#include "qmaster/qmaster.h"
#include "spool/spool.h"

/* VOTE_REQUEST again while campaigning: an execd that heard the primary
 * a little later than we did refuses at first, and every tick it waits
 * delays the takeover. */
#define FAILOVER_ASK_MS 100

struct vote {
	char    *host;
	int64_t  epoch;
	int64_t  at;     /* mono ms */
};

static struct {
	struct vote *votes;
	int          nvotes;
	int64_t      campaign;     /* the epoch asked for; 0: not campaigning */
	int64_t      next_ask;
	int          registered;   /* hosts in the database, recounted each tick */
	bool         warned;
} fo;

static int
count_one(void *arg, const struct host_rec *h)
{
	(*(int *)arg)++;
	return 0;
}

static void
failover_count(void)
{
	int n = 0;
	if (store_hosts_foreach(store, count_one, &n) == 0)
		fo.registered = n;
}

static struct vote *
vote_of(const char *host)
{
	for (int i = 0; i < fo.nvotes; i++)
		if (strcmp(fo.votes[i].host, host) == 0)
			return &fo.votes[i];
	fo.votes = xrealloc(fo.votes, (size_t)(fo.nvotes + 1) * sizeof *fo.votes);
	fo.votes[fo.nvotes] = (struct vote){ xstrdup(host), 0, 0 };
	return &fo.votes[fo.nvotes++];
}

/* Distinct hosts that promised us: execds whose heartbeat echo is fresh,
 * and those whose vote made us primary (until their link comes back). */
bool
failover_have_majority(void)
{
	int64_t now = mono_ms();
	int n = 0;
	struct conn *c = NULL;

	if (fo.registered == 0)
		return true;   /* no witnesses: nothing can take over on its own */
	for (int i = 0; i < fo.nvotes; i++) {
		bool counted = fo.votes[i].epoch == repl_epoch() &&
		    fo.votes[i].at + conf->failover_timeout_ms > now;
		c = NULL;
		while (!counted && (c = net_next(c)) != NULL)
			counted = c->role == ROLE_EXECD && c->host && !c->dead &&
			    strcmp(c->host->name, fo.votes[i].host) == 0 && c->lease_until > now;
		n += counted;
	}
	c = NULL;
	while ((c = net_next(c)) != NULL)
		if (c->role == ROLE_EXECD && c->host && !c->dead && c->lease_until > now) {
			bool seen = false;
			for (int i = 0; i < fo.nvotes && !seen; i++)
				seen = strcmp(fo.votes[i].host, c->host->name) == 0;
			n += !seen;
		}
	return n * 2 > fo.registered;
}

static int
cmp_desc(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

int64_t
failover_witness_seq(void)
{
	int64_t now = mono_ms(), *seqs, r = 0;
	struct conn *c = NULL;
	int n = 0, need = fo.registered / 2 + 1;

	if (fo.registered == 0)
		return store_repl_seq(store);
	seqs = xcalloc((size_t)fo.registered + 64, sizeof *seqs);
	while ((c = net_next(c)) != NULL && n < fo.registered + 64)
		if (c->role == ROLE_EXECD && c->host && !c->dead && c->lease_until > now)
			seqs[n++] = c->hb_seq;
	if (n >= need) {
		qsort(seqs, (size_t)n, sizeof *seqs, cmp_desc);
		r = seqs[need - 1];
	}
	free(seqs);
	return r;
}

/* The primary cannot write any more: we have not heard it for the
 * failover timeout (every lease it holds on us has run out), or its port
 * refused us since we lost it (its process is gone, leases and all). */
static bool
failover_primary_out(void)
{
	return repl_quiet_ms() >= conf->failover_timeout_ms || repl_primary_gone();
}

/* A majority of the registered execds voted for our campaign, and the
 * primary still cannot write: promote.  The campaign ends only at the
 * next tick, and a HEARTBEAT we echoed meanwhile gave the primary our
 * lease for the failover timeout: promoting then would leave it writable
 * beside us (t/model/failover.pml, promote). */
static void
failover_count_votes(void)
{
	int granted = 0;

	for (int i = 0; i < fo.nvotes; i++)
		granted += fo.votes[i].epoch == fo.campaign;
	if (fo.campaign && granted * 2 > fo.registered && failover_primary_out()) {
		char why[160];
		snprintf(why, sizeof why, "the primary %s for %lld ms and %d of %d execds voted",
		    repl_primary_gone() ? "was gone (its port refused us)" : "was silent",
		    (long long)repl_quiet_ms(), granted, fo.registered);
		fo.campaign = 0;
		repl_become_primary(repl_epoch() + 1, why);
	}
}

/* From repl.c's tick, and at once when the primary's port refuses us: a
 * standby whose primary cannot write any more campaigns for the next
 * epoch. */
void
failover_tick(int64_t now)
{
	struct conn *c = NULL;

	failover_count();
	if (repl_role() != REPL_STANDBY)
		return;
	if (!failover_primary_out()) {
		if (fo.campaign)
			log_info("the primary is back; no election");
		fo.campaign = 0;
		fo.warned = false;
		return;
	}
	if (fo.registered == 0) {
		if (!fo.warned)
			log_warnx("the primary is silent for %lld ms, but no execd is registered to vote: "
			    "no automatic failover (a manager may run qconf -takeover)",
			    (long long)repl_quiet_ms());
		fo.warned = true;
		return;
	}
	if (!fo.campaign) {
		fo.campaign = repl_epoch() + 1;
		log_warnx("the primary is %s for %lld ms: asking the execds to elect us for epoch %lld",
		    repl_primary_gone() ? "gone (its port refuses us)" : "silent",
		    (long long)repl_quiet_ms(), (long long)fo.campaign);
	}
	if (now >= fo.next_ask) {
		fo.next_ask = now + FAILOVER_ASK_MS;
		while ((c = net_next(c)) != NULL)
			if (c->role == ROLE_WITNESS && !c->dead && !c->closing)
				net_send(c, msg_vote_request_pack(&(struct msg_vote_request){
				    .epoch = fo.campaign, .timeout = conf->failover_timeout_ms,
				    .candidate = conf->masters[conf->self], .last = store_repl_seq(store),
				    .t = now }));
	}
	failover_count_votes();
}

/* VOTE {epoch, granted, host} from an execd's witness link. */
void
failover_vote(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_vote m;
	const char *host;
	int64_t e;

	if (msg_vote_unpack(msg, &m, NULL, 0) < 0)
		return;
	host = m.host;
	e = m.epoch;
	if (!m.granted) {
		log_debug("execd %s does not vote for epoch %lld: %s", host, (long long)e, m.why ? m.why : "");
		return;
	}
	if (e == fo.campaign && e > 0) {
		struct vote *v = vote_of(host);
		int64_t now = mono_ms(), t = m.t;
		v->epoch = e;
		/* The execd keeps its promise for the failover timeout from when
		 * it voted; we date it from when we asked (the echoed "t"),
		 * which is earlier, never from when the vote arrived, which is
		 * later.  An execd that echoes nothing (an older one) is dated
		 * by the vote's arrival. */
		v->at = t > 0 && t <= now && now - t < conf->failover_timeout_ms ? t : now;
		log_info("execd %s votes for us in epoch %lld", host, (long long)e);
		/* Promote on the deciding vote, not at the next tick: the
		 * voter is reconnecting to us right now. */
		if (repl_role() == REPL_STANDBY)
			failover_count_votes();
	}
}

void
failover_conn_gone(struct conn *c)
{
	(void)c;
}

/* TAKEOVER (qconf -takeover): a manager (the request table checks) makes
 * the standby primary now. */
void
failover_takeover(struct conn *c, int64_t seq, json_t *msg)
{
	json_t *rep;
	char why[160];

	if (repl_role() != REPL_STANDBY) {
		net_send(c, proto_reply_err(seq, ERR_REDIRECT, "this master is %s, not a standby",
		    repl_role_name()));
		return;
	}
	snprintf(why, sizeof why, "qconf -takeover by %s", c->user);
	rep = msg_reply_pack(&(struct msg_reply){ .seq = seq, .ok = true, .message = repl_following() ?
	    "took over while the primary still answers: it steps down when it sees the new epoch, "
	    "and until then clients that reach it may still be served by it" :
	    "took over without a vote: if the old primary is alive behind a partition and still "
	    "holds execds, both may accept writes until it sees the new epoch" });
	repl_become_primary(repl_epoch() + 1, why);
	msg_takeover_reply_add(rep, &(struct msg_takeover_reply){ repl_epoch() });
	net_send(c, rep);
}

void
failover_free(void)
{
	for (int i = 0; i < fo.nvotes; i++)
		free(fo.votes[i].host);
	free(fo.votes);
	fo.votes = NULL;
	fo.nvotes = 0;
}
