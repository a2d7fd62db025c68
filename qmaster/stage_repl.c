/* stage_repl.c: staged files shipped to the standby, so that a failover loses none (doc/staging.md).
 *
 * Primary: each file stored in SPOOL/stage/ (an input or a stage-out
 * output) is queued for the standby and sent in STAGE_BLOB chunks of at
 * most 1 MiB straight from the file (sendfile), a few chunks at a time, so
 * neither the master's memory nor the standby link's queue grows with the
 * file and the link's other traffic (changesets, heartbeats) waits behind
 * a few MiB at most.  With the standby in sync, the STAGE_PUT reply that
 * says "stored" waits for its STAGE_STORED: a SUBMIT naming the file comes
 * only after the standby has it.  An upload is shipped as it comes: each
 * chunk written to its temporary file goes on to the standby (from that
 * file) while the client sends the next, all but the last, which goes
 * once the file is checked and stored here; so the wait before the reply
 * is for the standby's last chunk and fsync, not the whole file's copy.
 * A standby that connects is offered every
 * file (STAGE_OFFER), asks for those it lacks (STAGE_WANT), and counts as
 * in sync only once they are all there.
 *
 * Standby: the chunks go to a temporary file, hashed as they come; the
 * last is checked against the hash, made durable and renamed, and only
 * then answered with STAGE_STORED. */
#include "config.h"

#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "qmaster/qmaster.h"
#include "common/msg.h"
#include "common/msg_req.h"

/* Bytes queued on the standby link before the next chunk waits for it to drain. */
#define SHIP_WINDOW  (4 * STAGE_CHUNK)
/* A standby that takes no chunk and stores no file for this long (frozen,
 * its disk stalled) holds no reply: long enough for the fsync of a file
 * of several GiB on a loaded disk. */
#define SHIP_STALL_MS (30 * 1000)
/* Files named in one STAGE_OFFER frame (some 100 bytes each). */
#define OFFER_BATCH  1000

struct ship_waiter {
	TAILQ_ENTRY(ship_waiter) entry;
	struct conn *c;
	int64_t      seq;
};

struct ship {
	TAILQ_ENTRY(ship) entry;
	char     sha[SHA256_HEX + 1];
	int64_t  size, off;          /* bytes queued on the link so far */
	int64_t  moved;              /* mono ms: the last chunk queued */
	bool     sent;               /* all of it; STAGE_STORED is awaited */
	/* An upload's, shipped as it comes: its temporary file, whose first
	 * avail bytes are written; NULL once the file is stored here.  uid:
	 * its uploader's (-1 for a stored file), so that a standby promoted
	 * midway goes on with that client. */
	char    *src;
	int64_t  avail, uid;
	TAILQ_HEAD(, ship_waiter) waiters;
};
static TAILQ_HEAD(, ship) ships = TAILQ_HEAD_INITIALIZER(ships);
/* An offer sent whose last STAGE_WANT has not come yet. */
static bool offer_open;

static struct ship *
ship_find(const char *sha)
{
	struct ship *s;

	TAILQ_FOREACH(s, &ships, entry)
		if (strcmp(s->sha, sha) == 0)
			return s;
	return NULL;
}

/* The STAGE_PUT replies that waited for the standby's copy go. */
static void
ship_release(struct ship *s)
{
	struct ship_waiter *w;

	while ((w = TAILQ_FIRST(&s->waiters)) != NULL) {
		TAILQ_REMOVE(&s->waiters, w, entry);
		stage_reply(w->c, w->seq, true, s->size);
		free(w);
	}
}

static void
ship_done(struct ship *s)
{
	ship_release(s);
	TAILQ_REMOVE(&ships, s, entry);
	free(s->src);
	free(s);
}

/* The first ship of a stored file, whose standby copy replies wait for. */
static struct ship *
ship_first_stored(void)
{
	struct ship *s;

	TAILQ_FOREACH(s, &ships, entry)
		if (!s->src)
			return s;
	return NULL;
}

/* From stage_tick, every second: a standby that fell out of sync (it
 * did not acknowledge in time, repl.c) holds no reply any more, as it
 * holds no changeset's, nor does one that takes no chunk and stores no
 * file for SHIP_STALL_MS; the files still go to it. */
void
stage_repl_tick(void)
{
	bool in_sync, stalled;
	struct ship *s;

	if (repl_standby_conn(&in_sync) && in_sync) {
		s = ship_first_stored();
		stalled = s && mono_ms() - s->moved > SHIP_STALL_MS;
		if (!stalled)
			return;
		if (!TAILQ_EMPTY(&s->waiters))
			log_warnx("the standby took no staged file for %lld ms; replies go without "
			    "its copy", (long long)(mono_ms() - s->moved));
	}
	TAILQ_FOREACH(s, &ships, entry)
		ship_release(s);
}

static struct ship *
ship_new(const char *sha, int64_t size, const char *src, int64_t uid)
{
	struct ship *s = xcalloc(1, sizeof *s);

	memcpy(s->sha, sha, sizeof s->sha);
	s->size = size;
	s->moved = mono_ms();
	s->src = src ? xstrdup(src) : NULL;
	s->uid = uid;
	TAILQ_INIT(&s->waiters);
	TAILQ_INSERT_TAIL(&ships, s, entry);
	return s;
}

/* Queues sha, now stored here, for the standby if one is connected: the
 * rest of its upload's ship, or the whole file. */
void
stage_repl_ship(const char *sha, int64_t size)
{
	struct ship *s = ship_find(sha);
	bool in_sync;

	if (!repl_standby_conn(&in_sync))
		return;
	if (s && s->src) {
		/* The bytes shipped so far are this file's: any upload of it
		 * that got this far had them as the stored one has. */
		free(s->src);
		s->src = NULL;
		s->avail = s->size;
		s->moved = mono_ms();
	} else if (!s)
		ship_new(sha, size, NULL, -1);
	stage_repl_pump();
}

/* uid's upload of sha begins in tmp (or goes on there after a restart or
 * a failover): it is shipped as it comes, unless the file is on its way
 * already. */
void
stage_repl_stream(const char *sha, int64_t size, const char *tmp, uid_t uid)
{
	bool in_sync;

	if (repl_standby_conn(&in_sync) && !ship_find(sha))
		ship_new(sha, size, tmp, (int64_t)uid);
}

/* tmp, an upload's file, holds avail bytes now. */
void
stage_repl_grow(const char *sha, const char *tmp, int64_t avail)
{
	struct ship *s = ship_find(sha);

	if (s && s->src && strcmp(s->src, tmp) == 0) {
		s->avail = avail;
		stage_repl_pump();
	}
}

/* The upload in tmp is dropped: what went of it is left to the standby's
 * sweep of partial files, or replaced when the file comes again. */
void
stage_repl_abandon(const char *sha, const char *tmp)
{
	struct ship *s = ship_find(sha);

	if (s && s->src && strcmp(s->src, tmp) == 0) {
		assert(TAILQ_EMPTY(&s->waiters));
		ship_done(s);
	}
}

/* With the standby in sync and sha on its way there, the reply to (c,
 * seq) waits for its STAGE_STORED: true.  Otherwise the caller answers. */
bool
stage_repl_wait(const char *sha, struct conn *c, int64_t seq)
{
	struct ship *s = ship_find(sha);
	struct ship_waiter *w;
	bool in_sync;

	if (!s || !repl_standby_conn(&in_sync) || !in_sync)
		return false;
	w = xcalloc(1, sizeof *w);
	w->c = c;
	w->seq = seq;
	TAILQ_INSERT_TAIL(&s->waiters, w, entry);
	return true;
}

/* One chunk of s on the standby link: 0, 1 when an upload's next bytes
 * (or its last chunk, which waits for the stored file) are not here yet,
 * -1 when the file is gone. */
static int
ship_chunk(struct conn *sb, struct ship *s)
{
	int64_t len = s->size - s->off < STAGE_CHUNK ? s->size - s->off : STAGE_CHUNK;
	char *path;
	int fd;

	if (s->src && (s->off + len > s->avail || s->off + len == s->size))
		return 1;
	path = s->src ? xstrdup(s->src) : stage_blob(s->sha);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return -1;
	net_send_file(sb, msg_stage_blob_pack(&(struct msg_stage_blob){ .sha256 = s->sha,
	    .size = s->size, .offset = s->off, .bytes = len, .uid = s->uid,
	    .last = s->off + len == s->size }),
	    fd, s->off, (size_t)len);
	s->off += len;
	s->moved = mono_ms();
	s->sent = s->off == s->size;
	return 0;
}

/* Chunks go while the link holds less than SHIP_WINDOW; called again
 * when it drains (net.c) and whenever a file is queued. */
void
stage_repl_pump(void)
{
	bool in_sync;
	struct conn *sb = repl_standby_conn(&in_sync);
	struct ship *s, *next;

	if (!sb || !sb->bev)
		return;
	/* One file after the other (the standby writes one at a time),
	 * but for an upload waiting for its client's next bytes. */
	TAILQ_FOREACH_SAFE(s, &ships, entry, next) {
		int r = 0;

		while (!s->sent && evbuffer_get_length(bufferevent_get_output(sb->bev)) < SHIP_WINDOW)
			if ((r = ship_chunk(sb, s)) != 0)
				break;
		if (s->sent || r > 0)
			continue;
		if (r == 0)
			return;
		log_warnx("staged file %s left the spool before the standby had it", s->sha);
		ship_done(s);
	}
}

/* STAGE_STORED from the standby: the file is durable there. */
void
stage_repl_stored(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_stage_blob m;
	struct ship *s;
	char err[200];
	bool in_sync;

	(void)seq;
	if (c != repl_standby_conn(&in_sync) || msg_stage_stored_unpack(msg, &m, err, sizeof err) < 0)
		return;
	if ((s = ship_find(m.sha256)) != NULL && s->sent) {
		log_debug("standby %s has staged file %s", c->peer, s->sha);
		ship_done(s);
		/* The next file's clock starts now. */
		if ((s = ship_first_stored()) != NULL && s->moved < mono_ms())
			s->moved = mono_ms();
	}
	repl_check_in_sync();
}

/* STAGE_WANT from a standby that connected: the files it lacks. */
void
stage_repl_want(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_stage_files m;
	char err[200];
	bool in_sync;
	size_t i;
	json_t *v;

	(void)seq;
	if (c != repl_standby_conn(&in_sync) || msg_stage_files_unpack(msg, &m, err, sizeof err) < 0)
		return;
	json_array_foreach(m.files, i, v) {
		struct stage_file f;
		stage_file_unpack(v, &f);
		if (stage_have(f.sha256, f.size))
			stage_repl_ship(f.sha256, f.size);
	}
	if (json_array_size(m.files))
		log_info("standby %s: sending it %zu staged files it lacks", c->peer,
		    json_array_size(m.files));
	if (m.last) {
		offer_open = false;
		repl_check_in_sync();
	}
}

static void
offer_flush(struct conn *sb, json_t *files, bool last)
{
	if (json_array_size(files) || last)
		net_send(sb, msg_stage_offer_pack(&(struct msg_stage_files){ files, last }));
	json_array_clear(files);
}

/* A file found here by a client's probe (its next SUBMIT names it):
 * offered alone, the standby's copy is kept fresh as ours is (or sent,
 * should it lack it), so its sweep does not remove it meanwhile. */
void
stage_repl_touch(const char *sha, int64_t size)
{
	bool in_sync;
	struct conn *sb = repl_standby_conn(&in_sync);
	json_t *files;

	if (!sb || ship_find(sha))
		return;
	files = json_array();
	json_array_append_new(files, stage_file_pack(&(struct stage_file){ .sha256 = sha, .size = size }));
	net_send(sb, msg_stage_offer_pack(&(struct msg_stage_files){ files, false }));
	json_decref(files);
}

/* At SYNC, before any snapshot or changeset: every file we hold. */
void
stage_repl_offer(struct conn *sb)
{
	json_t *files = json_array();
	struct dirent *e;
	struct stat st;
	DIR *d;

	offer_open = true;
	if (!(d = opendir(stage_spool()))) {
		offer_flush(sb, files, true);
		json_decref(files);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (!sha256_hex_ok(e->d_name) || fstatat(dirfd(d), e->d_name, &st, 0) < 0)
			continue;
		json_array_append_new(files, stage_file_pack(&(struct stage_file){ .sha256 = e->d_name,
		    .size = st.st_size }));
		if (json_array_size(files) >= OFFER_BATCH)
			offer_flush(sb, files, false);
	}
	closedir(d);
	offer_flush(sb, files, true);
	json_decref(files);
}

/* True when no stored file is on its way to the standby (it may count as
 * in sync; an upload in progress is no file yet). */
bool
stage_repl_idle(void)
{
	return !ship_first_stored() && !offer_open;
}

/* The standby is gone: nothing waits for it any more; the replies go,
 * the files being durable here. */
void
stage_repl_standby_gone(void)
{
	struct ship *s;

	offer_open = false;
	while ((s = TAILQ_FIRST(&ships)) != NULL)
		ship_done(s);
}

/* A client that went away waits for nothing. */
void
stage_repl_conn_gone(struct conn *c)
{
	struct ship *s;
	struct ship_waiter *w, *next;

	TAILQ_FOREACH(s, &ships, entry)
		TAILQ_FOREACH_SAFE(w, &s->waiters, entry, next)
			if (w->c == c) {
				TAILQ_REMOVE(&s->waiters, w, entry);
				free(w);
			}
}

/* ---- the standby ---- */

/* STAGE_OFFER: asks for the files not here; those here are fresh again
 * for the sweep (stage_tick), as the primary's are. */
static void
stage_repl_offered(const json_t *msg)
{
	struct msg_stage_files m;
	json_t *want;
	char err[200];
	size_t i;
	json_t *v;

	if (msg_stage_files_unpack(msg, &m, err, sizeof err) < 0) {
		log_warnx("primary: %s", err);
		return;
	}
	want = json_array();
	json_array_foreach(m.files, i, v) {
		struct stage_file f;
		char *path;
		stage_file_unpack(v, &f);
		if (!stage_have(f.sha256, f.size)) {
			json_array_append(want, v);
			continue;
		}
		path = stage_blob(f.sha256);
		utimensat(AT_FDCWD, path, NULL, 0);
		free(path);
	}
	if (json_array_size(want) || m.last)
		repl_up_send(msg_stage_want_pack(&(struct msg_stage_files){ want, m.last }));
	json_decref(want);
}

/* STAGE_BLOB with its raw bytes at the front of in (taken here); -1 when
 * the file cannot be stored here (the link is then dropped: the primary
 * goes on without us and offers the file again when we come back). */
static int
stage_repl_blob(const json_t *msg, struct evbuffer *in, size_t len)
{
	struct msg_stage_blob m;
	char err[400];
	int rc;

	if (msg_stage_blob_unpack(msg, &m, err, sizeof err) < 0 || (size_t)m.bytes != len)
		return -1;
	rc = stage_blob_chunk(&m, in, len, err, sizeof err);
	if (rc < 0) {
		log_warnx("cannot store staged file %s from the primary: %s", m.sha256, err);
		return -1;
	}
	if (rc == 1)
		repl_up_send(msg_stage_stored_pack(&m));
	return 0;
}

/* A STAGE_BLOB whose raw bytes are not all here yet. */
static json_t *blob_msg;
static size_t  blob_len;

void
stage_repl_frame_reset(void)
{
	json_decref(blob_msg);
	blob_msg = NULL;
}

int
stage_repl_frame_take(struct evbuffer *in, json_t **msg, bool trusted, const char **why)
{
	int64_t n;
	int r;

	for (;;) {
		if (blob_msg) {
			if (evbuffer_get_length(in) < blob_len)
				return 0;
			r = stage_repl_blob(blob_msg, in, blob_len);
			stage_repl_frame_reset();
			if (r < 0) {
				*why = "a STAGE_BLOB that could not be stored";
				return -1;
			}
			continue;
		}
		r = proto_frame_take(in, msg, conf->max_frame, why);
		if (r <= 0 || !trusted)
			return r;
		if (msg_type_of(*msg) == MSG_STAGE_OFFER) {
			stage_repl_offered(*msg);
			json_decref(*msg);
			continue;
		}
		if (msg_type_of(*msg) != MSG_STAGE_BLOB)
			return 1;
		if ((n = msg_raw_bytes(*msg)) < 0 || n > STAGE_CHUNK) {
			json_decref(*msg);
			*why = "a STAGE_BLOB with raw bytes other than 0 to 1 MiB";
			return -1;
		}
		blob_msg = *msg;
		blob_len = (size_t)n;
	}
}
