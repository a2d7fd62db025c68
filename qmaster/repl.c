/* repl.c: the hot standby's replication: roles, snapshots, changesets, and held replies.
 *
 * Which master is primary, snapshots and changesets to the standby, and the
 * semi-synchronous release of replies. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "common/msg.h"
#include "common/msg_rows.h"
#include "qmaster/qmaster.h"
#include "spool/spool.h"

/* Changesets kept for a standby that comes back after a short absence;
 * one further behind gets a snapshot. */
#define REPL_RING          4096
#define REPL_CHUNK         (4u << 20)   /* snapshot bytes per frame */
#define REPL_TICK_MS       100
#define REPL_HEARTBEAT_MS  250
#define REPL_RETRY_MS      250
#define REPL_PROBE_MS      2000

static struct {
	enum repl_role      role;
	int64_t             epoch;
	int64_t             since;         /* wall ms the role began */
	struct event       *tick_ev, *snap_ev;
	int64_t             next_hb;       /* mono ms */
	/* primary */
	struct conn        *standby;
	bool                streaming;     /* the standby has its snapshot or catch-up queued */
	bool                in_sync;       /* replies wait for its acknowledgement */
	int64_t             sent, acked;
	int64_t             waiting;       /* the highest seq whose replies are held */
	int64_t             released;      /* replies up to this seq may go */
	int64_t             ack_deadline;  /* mono ms; 0: nothing outstanding */
	int64_t             standby_lease; /* mono ms: it promotes itself not before */
	int64_t             standby_seen;  /* wall ms */
	struct { int64_t seq; char *b64; } ring[REPL_RING];
	int64_t             next_probe;    /* mono ms: is another master primary? */
	struct bufferevent *probe;         /* the running PROBE of the other master */
	char                probe_nonce[2 * AUTH_NONCE_BYTES + 1];
	bool                probe_ok;      /* it proved to be a master of this cluster */
	/* standby */
	struct bufferevent *up;
	char                up_nonce[2 * AUTH_NONCE_BYTES + 1];
	bool                up_ok;         /* the primary proved to be a master of this cluster */
	bool                up_ready;
	int64_t             up_retry;      /* mono ms */
	int64_t             last_heard;    /* mono ms of the primary's last frame */
	bool                gone, gone_probing;  /* its port refused us since we lost it */
	unsigned            gone_gen;      /* a connection since makes a probe's word stale */
	int64_t             primary_epoch, primary_seq;
	int                 primary_idx;
	int                 snap_fd;
	char               *snap_path;
	bool                want_snapshot; /* our copy diverged: ask for a new one */
	bool                rejoin;        /* started to rejoin as a standby */
} rp = { .primary_idx = -1, .snap_fd = -1 };

static char **saved_argv;

static void repl_become_standby(int idx);
static void repl_heartbeats(int64_t now);
static void repl_probe_start(void);
static void repl_rejoin(const char *why);

const char *
repl_role_name(void)
{
	switch (rp.role) {
	case REPL_PRIMARY: return "primary";
	case REPL_STANDBY: return "standby";
	default: return "starting";
	}
}

enum repl_role
repl_role(void)
{
	return rp.role;
}

int64_t
repl_epoch(void)
{
	return rp.epoch;
}

const char *
repl_primary_addr(void)
{
	if (rp.role == REPL_STANDBY && rp.primary_idx >= 0)
		return conf->masters[rp.primary_idx];
	return NULL;
}

/* rp.released for the reader thread (reader.c), which holds no reply the
 * loop would not send. */
static _Atomic int64_t released_shared;

/* For the query thread: until when (mono ms) this master is writable
 * for sure, and its epoch; repl_share keeps them. */
static _Atomic int64_t writable_until_shared, epoch_shared;

/* After a change of role, epoch or the standby's lease.  A primary that
 * is writable only through the execds' majority is not writable "for
 * sure": the thread leaves its clients to the loop, which knows. */
static void
repl_share(void)
{
	int64_t until = rp.role != REPL_PRIMARY ? 0 : conf->nmasters == 0 ? INT64_MAX : rp.standby_lease;

	atomic_store_explicit(&writable_until_shared, until, memory_order_release);
	atomic_store_explicit(&epoch_shared, rp.epoch, memory_order_release);
}

bool
repl_surely_writable(int64_t *epoch)
{
	*epoch = atomic_load_explicit(&epoch_shared, memory_order_acquire);
	return mono_ms() < atomic_load_explicit(&writable_until_shared, memory_order_acquire);
}

int64_t
repl_unacked(void)
{
	return rp.waiting > rp.released ? rp.waiting : 0;
}

/* What makes a reply safe to send: with the standby in sync, its
 * acknowledgement; without it, that a majority of the execds has heard of
 * the sequence (they vote only for a candidate that has it, so no standby
 * missing it can be elected); with no execd registered, the commit. */
static void
repl_release(void)
{
	int64_t r;

	if (rp.role != REPL_PRIMARY)
		return;
	if (rp.in_sync)
		r = rp.acked;
	else if (conf->nmasters)
		r = failover_witness_seq();
	else
		r = store_repl_seq(store);
	if (r > rp.released) {
		rp.released = r;
		atomic_store_explicit(&released_shared, r, memory_order_release);
	}
	net_release(rp.released);
}

int64_t
repl_released(void)
{
	return atomic_load_explicit(&released_shared, memory_order_acquire);
}

bool
repl_writable(void)
{
	if (rp.role != REPL_PRIMARY)
		return false;
	if (conf->nmasters == 0)
		return true;
	return mono_ms() < rp.standby_lease || failover_have_majority();
}

/* The peer's address, for the blocking probe at start-up. */
static int
repl_connect_blocking(const char *addr, int timeout_ms)
{
	struct addrinfo *res, *ai;
	const char *why;
	int fd = -1;

	if (resolve_hostport(addr, &res) < 0)
		return -1;
	for (ai = res; ai && fd < 0; ai = ai->ai_next)
		fd = connect_timed(ai, timeout_ms, &why);
	freeaddrinfo(res);
	return fd;
}

/* Our HELLO to the other master: the daemon identity's credential (munge)
 * and a fresh nonce, which its proof must carry (repl_peer_ok). */
static json_t *
repl_hello(char *nonce, size_t n)
{
	struct msg_hello h = { .seq = 1, .role = "peer", .uid = geteuid(), .nonce = nonce };
	char *cred;
	json_t *o;

	auth_nonce(nonce, n);
	auth_hello_daemon(&h, conf->auth, auth_munge_socket(conf->munge_socket), AUTH_PAYLOAD_PEER, &cred);
	o = msg_hello_pack(&h);
	free(cred);
	return o;
}

/* The other master's answer to our HELLO on fd: is it the daemon identity
 * of this cluster?  A standby installs what its primary sends, and a PROBE's
 * answer can make a primary step down: neither is taken from anyone else. */
static bool
repl_peer_ok(int fd, const json_t *rep, const char *nonce, const char *addr)
{
	char err[400];
	int64_t uid = auth_master_uid(fd, false, conf->auth, auth_munge_socket(conf->munge_socket), rep,
	    nonce, err, sizeof err);

	if (uid < 0 || !qm_is_daemon((uid_t)uid)) {
		if (uid >= 0)
			snprintf(err, sizeof err, "it runs as uid %lld, not the daemon identity", (long long)uid);
		log_warnx("refused the master at %s: %s", addr, err);
		return false;
	}
	return true;
}

/* PROBE of one peer: its role, epoch and sequence; -1 when it does not answer. */
static int
repl_probe_peer(int idx, char *role, size_t rolelen, int64_t *epoch, int64_t *seq)
{
	int fd = repl_connect_blocking(conf->masters[idx], 200);
	json_t *hello, *probe, *rep = NULL;
	char nonce[2 * AUTH_NONCE_BYTES + 1];
	const char *why;
	int rc = -1;

	if (fd < 0)
		return -1;
	hello = repl_hello(nonce, sizeof nonce);
	probe = msg_probe_pack(&(struct msg_probe){ .seq = 2, .epoch = rp.epoch, .last = store_repl_seq(store) });
	if (proto_send_fd(fd, hello) == 0 && proto_send_fd(fd, probe) == 0) {
		for (int i = 0; i < 2; i++) {
			struct msg_reply env;
			json_decref(rep);
			rep = NULL;
			if (proto_recv_fd(fd, &rep, 1000, &why) < 0)
				break;
			msg_reply_unpack(rep, &env, NULL, 0);
			if (!env.ok || (env.seq == 1 && !repl_peer_ok(fd, rep, nonce, conf->masters[idx])))
				break;
			if (env.seq == 2) {
				struct msg_probe p;
				char err[256];
				msg_probe_reply_unpack(rep, &p, err, sizeof err);
				snprintf(role, rolelen, "%s", p.role ? p.role : "?");
				*epoch = p.epoch;
				*seq = p.last;
				rc = 0;
				break;
			}
		}
	}
	json_decref(rep);
	json_decref(hello);
	json_decref(probe);
	close(fd);
	return rc;
}

/* PROBE: who are you.  A primary probed by a master of a higher epoch has
 * been replaced and rejoins as its standby.  A single master has no other
 * master to ask it: a PROBE there could only make it restart for nothing,
 * dropping every connection, so it is refused. */
void
repl_probe(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_probe p;

	if (conf->nmasters == 0) {
		net_send_unheld(c, proto_reply_err(seq, ERR_INVAL, "this master has no other master "
		    "(masters is not set in qmaster.conf): PROBE is for the masters of a pair"));
		return;
	}
	msg_probe_unpack(msg, &p, NULL, 0);
	net_send(c, msg_probe_reply_pack(&(struct msg_probe){ .seq = seq, .role = repl_role_name(),
	    .epoch = rp.epoch, .last = store_repl_seq(store) }));
	if (rp.role == REPL_PRIMARY && p.epoch > rp.epoch)
		repl_rejoin("a master of a higher epoch exists");
}

/* Discards what this master has (anything the standby never acknowledged
 * was never acknowledged to a client either) and starts again as the
 * standby of the new primary: a fresh process is the simplest clean slate. */
static void
repl_rejoin(const char *why)
{
	int n = 0;
	char **argv;

	log_warnx("stepping down from epoch %lld: %s; rejoining as standby", (long long)rp.epoch, why);
	while (saved_argv[n])
		n++;
	argv = xcalloc((size_t)n + 2, sizeof *argv);
	for (int i = 0; i < n; i++)
		argv[i] = saved_argv[i];
	if (!(n > 0 && strcmp(saved_argv[n - 1], "--rejoin") == 0))
		argv[n++] = "--rejoin";
	store_close(store);
	store = NULL;
	execv("/proc/self/exe", argv);
	fatal("cannot re-execute myself to rejoin");
}

/* The primary side. */

static void
repl_send_changeset(int64_t seq, const char *b64)
{
	net_send(rp.standby, msg_changeset_pack(&(struct msg_changeset){ seq, rp.epoch, b64 }));
}

static void
repl_standby_gone(const char *why)
{
	if (!rp.standby)
		return;
	log_warnx("standby %s: %s; the primary goes on alone while it holds a majority of the execds",
	    rp.standby->peer, why);
	rp.standby = NULL;
	rp.streaming = rp.in_sync = false;
	rp.ack_deadline = 0;
	stage_repl_standby_gone();
	repl_heartbeats(mono_ms());
	repl_release();
}

/* Snapshot: a consistent copy at a committed sequence, streamed in frames;
 * changesets committed later follow it on the same connection. */
static void
repl_snapshot_cb(evutil_socket_t fd, short what, void *arg)
{
	char *path;
	int in;
	struct stat sb;
	int64_t seq = store_repl_seq(store);
	char *buf;
	off_t off = 0;

	if (!rp.standby || rp.streaming)
		return;
	if (store_in_txn(store)) {
		struct timeval tv = { 0, 1000 };
		evtimer_add(rp.snap_ev, &tv);
		return;
	}
	path = xasprintf("%s/snapshot.db", conf->spool_dir);
	if (store_backup(store, path) < 0 || (in = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		free(path);
		net_close(rp.standby, "cannot make a snapshot");
		return;
	}
	fstat(in, &sb);
	buf = xmalloc(REPL_CHUNK);
	do {
		ssize_t n = pread(in, buf, REPL_CHUNK, off);
		char *b64;
		if (n < 0)
			fatal("cannot read the snapshot %s", path);
		b64 = b64_encode(buf, (size_t)n);
		off += n;
		net_send(rp.standby, msg_snapshot_pack(&(struct msg_snapshot){ seq, rp.epoch, off - n, b64,
		    off >= sb.st_size }));
		free(b64);
	} while (off < sb.st_size);
	close(in);
	unlink(path);
	free(buf);
	free(path);
	log_info("standby %s: sent a snapshot at sequence %lld (%lld bytes)", rp.standby->peer,
	    (long long)seq, (long long)sb.st_size);
	rp.streaming = true;
	rp.sent = seq;
}

/* SYNC {epoch, last, schema}: a standby wants to follow us from its last
 * applied sequence. */
void
repl_sync(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_probe m;
	int64_t e, last, cur = store_repl_seq(store);

	msg_sync_unpack(msg, &m, NULL, 0);
	e = m.epoch;
	last = m.last;

	if (rp.role != REPL_PRIMARY) {
		net_send(c, proto_reply_err(seq, ERR_REDIRECT, "this master is %s", repl_role_name()));
		return;
	}
	/* A standby of a newer epoch, or of ours with more, has what we
	 * lack (we restarted on an old copy while it was down): we follow it
	 * rather than overwrite it with a snapshot (t/model/failover.pml). */
	if (e > rp.epoch || (e == rp.epoch && last > cur)) {
		net_send(c, proto_reply_err(seq, ERR_REDIRECT, "you are ahead of me"));
		repl_rejoin("a standby with newer data called");
		return;
	}
	if (m.schema != STORE_SCHEMA_VERSION) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "schema version %lld is not mine (%d)",
		    (long long)m.schema, STORE_SCHEMA_VERSION));
		return;
	}
	if (rp.standby && rp.standby != c)
		net_close(rp.standby, "replaced by a new standby");
	rp.standby = c;
	rp.in_sync = rp.streaming = false;
	rp.acked = 0;
	rp.standby_seen = now_ms();
	net_send(c, msg_probe_reply_pack(&(struct msg_probe){ .seq = seq, .epoch = rp.epoch, .last = cur }));
	/* First: the standby asks for the staged files it lacks before it acknowledges anything. */
	stage_repl_offer(c);
	/* Same history and the missing changesets still in the ring: send
	 * them; otherwise (new, far behind, or from an older epoch, which may
	 * hold transactions we never had) a snapshot.  A standby at sequence
	 * 0 never had one: our rows from before replication began (a cluster
	 * that ran without masters) are in no changeset. */
	if (e == rp.epoch && last > 0 && last <= cur &&
	    (last == cur || rp.ring[(last + 1) % REPL_RING].seq == last + 1)) {
		for (int64_t s = last + 1; s <= cur; s++)
			repl_send_changeset(s, rp.ring[s % REPL_RING].b64);
		rp.streaming = true;
		rp.sent = cur;
		rp.acked = last;
		if (last < cur)
			log_info("standby %s: catching up from %lld to %lld", c->peer, (long long)last,
			    (long long)cur);
		repl_check_in_sync();
	} else
		event_active(rp.snap_ev, EV_TIMEOUT, 0);
}

void
repl_applied(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_applied m;
	int64_t s;

	msg_applied_unpack(msg, &m, NULL, 0);
	s = m.applied;

	if (c != rp.standby)
		return;
	rp.standby_seen = now_ms();
	if (s > rp.acked)
		rp.acked = s;
	if (rp.acked >= rp.sent)
		rp.ack_deadline = 0;
	repl_check_in_sync();
	repl_release();
}

/* In sync: the standby has every changeset and every staged file. */
void
repl_check_in_sync(void)
{
	if (!rp.standby || rp.in_sync || !rp.streaming || rp.acked < store_repl_seq(store) ||
	    !stage_repl_idle())
		return;
	rp.in_sync = true;
	log_info("standby %s is in sync at sequence %lld", rp.standby->peer, (long long)rp.acked);
}

struct conn *
repl_standby_conn(bool *in_sync)
{
	*in_sync = rp.standby && rp.in_sync;
	return rp.role == REPL_PRIMARY ? rp.standby : NULL;
}

/* From the commit step, after a successful commit: the changeset goes to
 * the standby, and the turn's replies wait for its acknowledgement. */
void
repl_committed(void)
{
	int n;
	int64_t seq;
	const void *cs = store_changeset(store, &n, &seq);

	if (cs) {
		char *b64 = b64_encode(cs, (size_t)n);
		free(rp.ring[seq % REPL_RING].b64);
		rp.ring[seq % REPL_RING].seq = seq;
		rp.ring[seq % REPL_RING].b64 = b64;
		store_changeset_done(store);
		if (rp.standby && rp.streaming) {
			repl_send_changeset(seq, b64);
			rp.sent = seq;
		}
	}
	if (!conf->nmasters) {
		net_flush_held();
		return;
	}
	if (store_repl_seq(store) > rp.waiting)
		rp.waiting = store_repl_seq(store);
	if (rp.waiting <= rp.released) {
		net_flush_held();
		return;
	}
	net_hold_tag(rp.waiting);
	if (rp.in_sync) {
		if (!rp.ack_deadline)
			rp.ack_deadline = mono_ms() + conf->failover_timeout_ms / 2;
	} else
		repl_heartbeats(mono_ms());   /* the execds learn the sequence now */
	repl_release();
}

/* The standby side. */

static void
repl_up_close(void)
{
	if (rp.up)
		bufferevent_free(rp.up);
	rp.up = NULL;
	rp.up_ok = rp.up_ready = false;
	stage_repl_frame_reset();
	if (rp.snap_fd >= 0)
		close(rp.snap_fd);
	rp.snap_fd = -1;
	rp.up_retry = mono_ms() + REPL_RETRY_MS;
}

void
repl_up_send(json_t *msg)
{
	const char *why;
	if (rp.up && proto_frame_append(bufferevent_get_output(rp.up), msg, conf->max_frame, &why) < 0)
		log_warnx("cannot send %s to the primary: %s", msg_type_text(msg), why);
	json_decref(msg);
}

static void
repl_up_applied(int64_t seq)
{
	repl_up_send(msg_applied_pack(&(struct msg_applied){ seq }));
}

/* The last frame of a snapshot: the copy replaces our database. */
static int
repl_install_snapshot(int64_t seq, int64_t epoch)
{
	char *db = xasprintf("%s/nowq.db", conf->spool_dir), *wal = xasprintf("%s-wal", db),
	    *shm = xasprintf("%s-shm", db);
	const char *why;
	int rc = 0;

	if (fsync(rp.snap_fd) < 0)
		fatal("cannot sync the snapshot");
	close(rp.snap_fd);
	rp.snap_fd = -1;
	store_close(store);
	unlink(wal);
	unlink(shm);
	if (rename(rp.snap_path, db) < 0 || spool_fsync_dir(conf->spool_dir) < 0)
		fatal("cannot install the snapshot as %s", db);
	if ((store = store_open(conf->spool_dir, &why)) == NULL)
		fatalx("cannot open the snapshot: %s", why);
	reader_store_replaced();
	store_capture(store, false);
	/* The copy carries the primary's meta rows (repl.seq, epoch) as they
	 * were at seq: writing them here would make the next changeset,
	 * which changes them, conflict. */
	if (store_repl_seq(store) != seq || store_epoch(store) != epoch) {
		log_warnx("the snapshot holds sequence %lld of epoch %lld, its frames say %lld of %lld; "
		    "asking for another", (long long)store_repl_seq(store), (long long)store_epoch(store),
		    (long long)seq, (long long)epoch);
		rc = -1;
	}
	rp.epoch = store_epoch(store);
	if (rc == 0)
		log_info("installed a snapshot of the primary at sequence %lld (epoch %lld)", (long long)seq,
		    (long long)epoch);
	free(db);
	free(wal);
	free(shm);
	return rc;
}

static void
repl_up_frame(json_t *msg)
{
	struct msg_heartbeat hb;
	struct msg_snapshot snap;
	struct msg_changeset cs;
	struct msg_reply env;
	char err[256];
	size_t n;
	void *data;

	msg_reply_unpack(msg, &env, NULL, 0);
	if (!rp.up_ok && !(msg_type_of(msg) == MSG_REPLY && env.seq == 1)) {
		log_warnx("primary %s sent %s before proving who it is", conf->masters[rp.primary_idx],
		    msg_type_text(msg) ? msg_type_text(msg) : "a frame");
		repl_up_close();
		return;
	}
	rp.last_heard = mono_ms();
	switch (msg_type_of(msg)) {
	case MSG_REPLY:
		if (!env.ok) {
			log_warnx("primary %s refused us: %s", conf->masters[rp.primary_idx],
			    env.message ? env.message : "?");
			repl_up_close();
			return;
		}
		if (env.seq == 1) {
			if (!repl_peer_ok(bufferevent_getfd(rp.up), msg, rp.up_nonce, conf->masters[rp.primary_idx])) {
				repl_up_close();
				return;
			}
			rp.up_ok = true;
		}
		if (env.seq == 2) {
			struct msg_probe p;
			msg_probe_reply_unpack(msg, &p, err, sizeof err);
			rp.up_ready = true;
			rp.primary_epoch = p.epoch;
			rp.primary_seq = p.last;
			log_info("following primary %s (epoch %lld, sequence %lld; we have %lld)",
			    conf->masters[rp.primary_idx], (long long)rp.primary_epoch,
			    (long long)rp.primary_seq, (long long)store_repl_seq(store));
		}
		return;
	case MSG_HEARTBEAT:
		msg_heartbeat_unpack(msg, &hb, NULL, 0);
		if (hb.epoch != MSG_ABSENT)
			rp.primary_epoch = hb.epoch;
		if (hb.last != MSG_ABSENT)
			rp.primary_seq = hb.last;
		repl_up_send(msg_heartbeat_pack(&(struct msg_heartbeat){ MSG_ABSENT, MSG_ABSENT, hb.t }));
		return;
	case MSG_SNAPSHOT:
		msg_snapshot_unpack(msg, &snap, NULL, 0);
		if (!snap.data || !(data = b64_decode(snap.data, &n))) {
			repl_up_close();
			return;
		}
		if (snap.offset == 0) {
			if (rp.snap_fd >= 0)
				close(rp.snap_fd);
			free(rp.snap_path);
			rp.snap_path = xasprintf("%s/nowq.db.snapshot", conf->spool_dir);
			rp.snap_fd = open(rp.snap_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
			if (rp.snap_fd < 0)
				fatal("cannot write %s", rp.snap_path);
		}
		if (rp.snap_fd < 0 || write(rp.snap_fd, data, n) != (ssize_t)n)
			fatal("cannot write the snapshot");
		free(data);
		if (snap.last) {
			if (repl_install_snapshot(snap.seq, snap.epoch) < 0) {
				rp.want_snapshot = true;
				repl_up_close();
				return;
			}
			rp.want_snapshot = false;
			repl_up_applied(store_repl_seq(store));
		}
		return;
	case MSG_CHANGESET:
		msg_changeset_unpack(msg, &cs, NULL, 0);
		if (!cs.cs || !(data = b64_decode(cs.cs, &n))) {
			repl_up_close();
			return;
		}
		if (store_apply(store, data, (int)n, cs.seq, err, sizeof err) < 0) {
			log_warnx("%s; asking the primary for a snapshot", err);
			free(data);
			rp.want_snapshot = true;
			repl_up_close();
			return;
		}
		free(data);
		/* Committed with the others of this read (repl_up_commit). */
		return;
	default:
		log_debug("standby: ignoring %s from the primary", msg_type_text(msg));
	}
}

/* The changesets applied since the last commit are committed, then
 * acknowledged: one transaction (one fsync) for all that one read brought,
 * so a standby that falls behind catches up in larger steps instead of
 * falling further behind at one commit per changeset. */
static void
repl_up_commit(void)
{
	char err[256];

	if (!store_in_txn(store))
		return;
	if (store_apply_commit(store, err, sizeof err) < 0) {
		log_warnx("%s; asking the primary for a snapshot", err);
		rp.want_snapshot = true;
		repl_up_close();
		return;
	}
	repl_up_applied(store_repl_seq(store));
}

static void
repl_up_read_cb(struct bufferevent *bev, void *arg)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	const char *why;
	json_t *msg;
	int r;

	while (rp.up == bev && (r = stage_repl_frame_take(in, &msg, rp.up_ok, &why)) != 0) {
		if (r < 0) {
			log_warnx("primary: bad frame (%s)", why);
			store_rollback(store);
			repl_up_close();
			return;
		}
		/* Anything but a changeset sees the database as committed. */
		if (msg_type_of(msg) != MSG_CHANGESET && msg_type_of(msg) != MSG_HEARTBEAT)
			repl_up_commit();
		repl_up_frame(msg);
		json_decref(msg);
	}
	if (rp.up == bev)
		repl_up_commit();
	else if (store_in_txn(store))
		store_rollback(store);
}

/* The kernel's word on the primary we lost: a refused connection means its
 * process is gone, and failover.c need not wait out its lease. */
static void
repl_gone_cb(void *arg, bool refused)
{
	rp.gone_probing = false;
	if ((unsigned)(uintptr_t)arg != rp.gone_gen || rp.role != REPL_STANDBY || rp.up_ready || !refused)
		return;
	if (!rp.gone)
		log_warnx("the primary %s refuses connections: its process is gone", conf->masters[rp.primary_idx]);
	rp.gone = true;
	failover_tick(mono_ms());
}

bool
repl_primary_gone(void)
{
	return rp.role == REPL_STANDBY && rp.gone;
}

static void
repl_up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	if (what & BEV_EVENT_CONNECTED) {
		int one = 1, fd = bufferevent_getfd(bev);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		rp.gone = false;
		rp.gone_gen++;
		rp.up_ok = false;
		repl_up_send(repl_hello(rp.up_nonce, sizeof rp.up_nonce));
		repl_up_send(msg_sync_pack(&(struct msg_probe){ .seq = 2, .epoch = rp.epoch,
		    .last = rp.want_snapshot ? -1 : store_repl_seq(store), .schema = STORE_SCHEMA_VERSION }));
		return;
	}
	if (rp.up_ready)
		log_warnx("lost the primary %s", conf->masters[rp.primary_idx]);
	repl_up_close();
	if (!rp.gone_probing && rp.role == REPL_STANDBY)
		rp.gone_probing = gone_probe(base, conf->masters[rp.primary_idx], 1000, repl_gone_cb,
		    (void *)(uintptr_t)rp.gone_gen) == 0;
}

/* A non-blocking connection to master idx; NULL when its address does
 * not resolve.  The event loop never waits for a peer. */
static struct bufferevent *
repl_bev_connect(int idx, bufferevent_data_cb readcb, bufferevent_event_cb eventcb)
{
	struct addrinfo *res;
	struct bufferevent *bev;

	if (resolve_hostport(conf->masters[idx], &res) < 0)
		return NULL;
	bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (!bev)
		fatalx("bufferevent_socket_new failed");
	bufferevent_setcb(bev, readcb, NULL, eventcb, NULL);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(bev, res->ai_addr, (int)res->ai_addrlen) < 0) {
		bufferevent_free(bev);
		bev = NULL;
	}
	freeaddrinfo(res);
	return bev;
}

static void
repl_up_connect(void)
{
	rp.up_retry = mono_ms() + REPL_RETRY_MS;
	rp.up = repl_bev_connect(rp.primary_idx, repl_up_read_cb, repl_up_event_cb);
}

/* The periodic PROBE of a primary without a standby: is the other master
 * primary in a newer epoch (we were replaced while cut off)?  Then we
 * rejoin as its standby.  Asynchronous, with a deadline. */
static void
repl_probe_close(void)
{
	if (rp.probe)
		bufferevent_free(rp.probe);
	rp.probe = NULL;
}

static void
repl_probe_read_cb(struct bufferevent *bev, void *arg)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	const char *why;
	char why_buf[256];
	json_t *msg;
	int r;

	while (rp.probe == bev && (r = proto_frame_take(in, &msg, conf->max_frame, &why)) != 0) {
		struct msg_reply env = { 0 };
		struct msg_probe p;
		bool newer;
		if (r > 0)
			msg_reply_unpack(msg, &env, NULL, 0);
		if (r < 0 || !env.ok) {
			json_decref(msg);
			repl_probe_close();
			return;
		}
		if (env.seq == 1) {
			rp.probe_ok = repl_peer_ok(bufferevent_getfd(bev), msg, rp.probe_nonce, "the other master");
			json_decref(msg);
			if (!rp.probe_ok) {
				repl_probe_close();
				return;
			}
			continue;
		}
		if (env.seq != 2 || !rp.probe_ok) {
			json_decref(msg);
			continue;
		}
		msg_probe_reply_unpack(msg, &p, why_buf, sizeof why_buf);
		newer = p.role && strcmp(p.role, "primary") == 0 && p.epoch > rp.epoch;
		json_decref(msg);
		repl_probe_close();
		if (newer && rp.role == REPL_PRIMARY && !rp.standby)
			repl_rejoin("another master is primary with a higher epoch");
		return;
	}
}

static void
repl_probe_event_cb(struct bufferevent *bev, short what, void *arg)
{
	const char *why;

	if (what & BEV_EVENT_CONNECTED) {
		json_t *hello, *probe;
		rp.probe_ok = false;
		hello = repl_hello(rp.probe_nonce, sizeof rp.probe_nonce);
		probe = msg_probe_pack(&(struct msg_probe){ .seq = 2, .epoch = rp.epoch,
		    .last = store_repl_seq(store) });
		if (proto_frame_append(bufferevent_get_output(bev), hello, conf->max_frame, &why) < 0 ||
		    proto_frame_append(bufferevent_get_output(bev), probe, conf->max_frame, &why) < 0)
			repl_probe_close();
		json_decref(hello);
		json_decref(probe);
		return;
	}
	repl_probe_close();   /* refused, reset or timed out: nobody newer there now */
}

static void
repl_probe_start(void)
{
	struct timeval tv = { 1, 0 };

	for (int i = 0; i < conf->nmasters && !rp.probe; i++) {
		if (i == conf->self)
			continue;
		if ((rp.probe = repl_bev_connect(i, repl_probe_read_cb, repl_probe_event_cb)) != NULL)
			bufferevent_set_timeouts(rp.probe, &tv, &tv);
	}
}

int64_t
repl_quiet_ms(void)
{
	return mono_ms() - rp.last_heard;
}

bool
repl_following(void)
{
	return rp.up_ready;
}

/* Heartbeats: to the standby (its echo is our lease on it) and to every
 * execd (the echo means it will not vote against us before the lease ends). */
static void
repl_heartbeats(int64_t now)
{
	struct conn *c = NULL;
	while ((c = net_next(c)) != NULL) {
		if (c->dead || c->closing)
			continue;
		if (c == rp.standby || c->role == ROLE_EXECD)
			net_send_now(c, msg_heartbeat_pack(&(struct msg_heartbeat){ rp.epoch,
			    store_repl_seq(store), now }));
	}
}

/* HEARTBEAT echoed by the standby or an execd: the time we sent it plus
 * the failover timeout is how long it will not turn against us. */
void
repl_heartbeat(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_heartbeat hb;
	int64_t t, until;

	msg_heartbeat_unpack(msg, &hb, NULL, 0);
	t = hb.t;
	until = t + conf->failover_timeout_ms;

	if (t <= 0 || t > mono_ms())
		return;
	if (c == rp.standby) {
		if (until > rp.standby_lease) {
			rp.standby_lease = until;
			repl_share();
		}
		rp.standby_seen = now_ms();
	} else if (c->role == ROLE_EXECD) {
		if (until > c->lease_until)
			c->lease_until = until;
		if (hb.last != MSG_ABSENT && hb.last > c->hb_seq)
			c->hb_seq = hb.last;
		if (!rp.in_sync)
			repl_release();
	}
}

/* Every REPL_TICK_MS:
 *  - primary: heartbeats; a standby that does not acknowledge in time is
 *    left behind (replies go without it); with no standby, probe the peer
 *    in case a newer primary exists (then rejoin);
 *  - standby: (re)connect to the primary; failover.c decides on promotion. */
static void
repl_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	int64_t now = mono_ms();

	if (rp.role == REPL_PRIMARY) {
		/* Alone, nobody counts the echoes (40,000 a second for 10,000 execds). */
		if (now >= rp.next_hb && conf->nmasters) {
			rp.next_hb = now + REPL_HEARTBEAT_MS;
			repl_heartbeats(now);
		}
		if (rp.ack_deadline && now > rp.ack_deadline && rp.sent > rp.acked) {
			rp.in_sync = false;
			rp.ack_deadline = 0;
			log_warnx("standby did not acknowledge sequence %lld within %lld ms; replies go "
			    "without it (once a majority of the execds has heard of them) until it "
			    "catches up", (long long)rp.sent, (long long)conf->failover_timeout_ms / 2);
			repl_heartbeats(now);
			repl_release();
		}
		if (!rp.standby && !rp.probe && now >= rp.next_probe) {
			rp.next_probe = now + REPL_PROBE_MS;
			repl_probe_start();
		}
	} else if (rp.role == REPL_STANDBY) {
		if (!rp.up && now >= rp.up_retry)
			repl_up_connect();
	}
	failover_tick(now);
}

void
repl_conn_gone(struct conn *c)
{
	if (c == rp.standby)
		repl_standby_gone("connection closed");
	failover_conn_gone(c);
}

static void
repl_become_standby(int idx)
{
	rp.role = REPL_STANDBY;
	rp.since = now_ms();
	rp.primary_idx = idx;
	repl_share();
	rp.last_heard = mono_ms();
	rp.gone = false;
	rp.gone_gen++;
	store_capture(store, false);
	log_info("standby of %s (epoch %lld, sequence %lld)", conf->masters[idx], (long long)rp.epoch,
	    (long long)store_repl_seq(store));
	repl_up_connect();
}

void
repl_become_primary(int64_t epoch, const char *why)
{
	bool was_standby = rp.role == REPL_STANDBY;

	repl_up_close();
	rp.role = REPL_PRIMARY;
	rp.since = now_ms();
	rp.primary_idx = conf->self;
	if (conf->nmasters > 0)
		store_capture(store, true);
	if (epoch != rp.epoch) {
		rp.epoch = epoch;
		qm_txn();
		if (store_set_epoch(store, epoch) < 0)
			fatalx("cannot record epoch %lld", (long long)epoch);
	}
	repl_share();
	log_info("primary (epoch %lld, sequence %lld): %s", (long long)rp.epoch,
	    (long long)store_repl_seq(store), why);
	qm_serve();
	if (was_standby) {
		char body[512];
		stage_promoted();
		snprintf(body, sizeof body, "The standby qmaster %s took over as primary (epoch %lld): "
		    "%s.\n", conf->masters[conf->self], (long long)rp.epoch, why);
		mail_admin("nowq: standby qmaster took over", body);
	}
}

/* At start-up: with masters configured, the other master decides: if it is
 * primary we follow it; if nobody answers we are primary; two starting
 * masters agree on the one with the newer data (then the first listed). */
void
repl_start(char **argv, bool rejoin)
{
	saved_argv = argv;
	rp.epoch = store_epoch(store);
	rp.rejoin = rejoin;
	rp.tick_ev = event_new(base, -1, EV_PERSIST, repl_tick_cb, NULL);
	rp.snap_ev = evtimer_new(base, repl_snapshot_cb, NULL);
	{
		struct timeval tv = { 0, REPL_TICK_MS * 1000 };
		event_add(rp.tick_ev, &tv);
	}
	if (conf->nmasters == 0) {
		repl_become_primary(rp.epoch, "no standby configured");
		return;
	}
	for (int tries = 0;; tries++) {
		bool any = false, yield = false;
		for (int i = 0; i < conf->nmasters; i++) {
			char role[16];
			int64_t e, s;
			if (i == conf->self || repl_probe_peer(i, role, sizeof role, &e, &s) < 0)
				continue;
			any = true;
			if (strcmp(role, "primary") == 0) {
				repl_become_standby(i);
				return;
			}
			if (e > rp.epoch || (e == rp.epoch && s > store_repl_seq(store)) ||
			    (e == rp.epoch && s == store_repl_seq(store) && i < conf->self))
				yield = true;
		}
		if (rejoin || yield) {
			/* Wait for the other one to become primary. */
			if (tries < 20) {
				usleep(250000);
				continue;
			}
			if (rejoin) {
				int other = conf->self == 0 ? 1 : 0;
				repl_become_standby(other);
				return;
			}
		}
		repl_become_primary(rp.epoch, any ? "the other master is not primary" :
		    "no other master answers");
		return;
	}
}

void
repl_stop(void)
{
	repl_up_close();
	repl_probe_close();
	if (rp.tick_ev)
		event_free(rp.tick_ev);
	if (rp.snap_ev)
		event_free(rp.snap_ev);
	rp.tick_ev = rp.snap_ev = NULL;
	for (int i = 0; i < REPL_RING; i++)
		free(rp.ring[i].b64);
	free(rp.snap_path);
}

/* Every master as this one sees it (qconf -smasters, the status page). */
json_t *
repl_masters_json(void)
{
	json_t *list = json_array();
	int64_t cur = store_repl_seq(store);
	/* Cut off, a primary that writes nothing never misses an
	 * acknowledgement: silence, not the last ack, says the standby is gone. */
	int64_t quiet = rp.standby && rp.standby_seen ? now_ms() - rp.standby_seen : 0;
	bool lost = quiet > conf->failover_timeout_ms;
	char said[96];

	snprintf(said, sizeof said, "standby not heard for %lld s", (long long)(quiet / 1000));

	for (int i = 0; i < (conf->nmasters ? conf->nmasters : 1); i++) {
		struct msg_master_row m = { .name = conf->nmasters ? conf->masters[i] : my_hostname() };

		if (conf->nmasters == 0 || i == conf->self) {
			m.role = repl_role_name();
			m.has_epoch = m.has_seq = m.has_since = m.has_writable = m.self = true;
			m.epoch = rp.epoch;
			m.seq = cur;
			m.since = rp.since;
			m.writable = repl_writable();
			if (rp.role == REPL_PRIMARY && conf->nmasters)
				m.state = lost ? said : rp.in_sync ? "in sync (semi-synchronous)" :
				    rp.standby ? "catching the standby up" : "alone (no standby)";
		} else if (rp.role == REPL_PRIMARY) {
			m.role = rp.standby ? "standby" : "unreachable";
			if (rp.standby) {
				m.has_seq = m.has_lag = m.has_in_sync = m.has_since = true;
				m.seq = rp.acked;
				m.lag = cur - rp.acked;
				m.in_sync = rp.in_sync && !lost;
				m.since = rp.standby_seen;
				if (lost)
					m.state = said + strlen("standby ");
			}
		} else {
			bool up = rp.up_ready && i == rp.primary_idx;
			m.role = up ? "primary" : "unreachable";
			if (up) {
				m.has_epoch = m.has_seq = m.has_lag = true;
				m.epoch = rp.primary_epoch;
				m.seq = rp.primary_seq;
				m.lag = rp.primary_seq - cur;
			}
			m.has_quiet = true;
			m.quiet_ms = repl_quiet_ms();
		}
		json_array_append_new(list, msg_master_row_pack(&m));
	}
	return list;
}

void
repl_masters(struct conn *c, int64_t seq, json_t *msg)
{
	json_t *rep = proto_reply_ok(seq);

	msg_masters_reply_add(rep, &(struct msg_masters_reply){ repl_masters_json() });
	net_send_unheld(c, rep);
}
