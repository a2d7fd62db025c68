/* stage.c: the master's side of file staging: SPOOL/stage/ (files named by SHA-256), STAGE_PUT, STAGE_GET and the limits.
 *
 * A file comes in chunks of at most 1 MiB (STAGE_PUT, raw bytes after the
 * frame), each written at once from the input buffer to a temporary file and hashed as it comes, so the master's memory
 * does not grow with file sizes; the last chunk is checked against the
 * SHA-256 the client announced, made durable (fsync, rename, fsync of the
 * folder) and only then acknowledged.  A job's SUBMIT names the files by
 * hash; stage_admit checks they are here and within the limits.
 *
 * An upload outlives its connection and the master: a client that comes
 * back asks where to go on (STAGE_PUT without bytes) and is told the bytes
 * already here.  After a restart those are a temporary file whose running
 * hash is gone; it is hashed again before the answer, in slices of
 * STAGE_REHASH_SLICE bytes, one per turn of the event loop (upload_rehash),
 * so other clients are served between them.  After a failover they are
 * the bytes the primary shipped to us as they came (stage_repl.c), with
 * their running hash: a standby keeps each such upload under its
 * uploader's uid, and once promoted gives it to that uid's client as a
 * lost connection's (stage_promoted). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "qmaster/qmaster.h"
#include "common/msg.h"
#include "common/msg_req.h"
#include "spool/spool.h"

/* An upload nobody continued for this long is dropped; a file no job
 * names is removed once this old (an upload whose SUBMIT never came). */
#define STAGE_UPLOAD_IDLE_MS (10 * 60 * 1000)
#define STAGE_ORPHAN_MS      (60 * 60 * 1000)
/* A partial file left by a restart is hashed again this much a turn of
 * the loop, a few milliseconds of work: slices in the loop rather than a
 * helper thread, because the upload, its hash and its waiting client are
 * the loop's like every other state (no lock, nothing to hand back), and
 * a restart's resumes are rare enough that using the second core would
 * not pay for the code a thread needs. */
#define STAGE_REHASH_SLICE   (4 * 1024 * 1024)

/* An upload is its connection's: two senders of the same file (identical
 * outputs of two tasks) each write their own copy, and the later rename
 * wins with the same bytes.  The connection is only compared, never used. */
struct upload {
	TAILQ_ENTRY(upload) entry;
	const struct conn *conn;
	uid_t          uid;
	char           sha[SHA256_HEX + 1];
	int            fd;
	char          *tmp;
	int64_t        size, off, touched;
	int64_t        written;     /* bytes whose disk writes are started (stage_writeback) */
	struct sha256  h;
	bool           orphan;      /* its connection went: the next probe of its uid takes it */
	bool           shipped;     /* the primary's, to us the standby, whose uid is uid */
	/* Where it went on after a restart or a failover, and the bytes its
	 * clients sent this process: the log says the upload resumed. */
	int64_t        resumed_at, received;
	/* A partial file a restart left, hashed again up to rehash_to (from
	 * off) before the client waiting at (waiter, wseq) is told to go on. */
	int64_t        rehash_to, rehash_ms;
	struct event  *ev;
	char          *buf;
	struct conn   *waiter;
	int64_t        wseq;
};
static TAILQ_HEAD(, upload) uploads = TAILQ_HEAD_INITIALIZER(uploads);
/* The partial uploads found at start (names in stage_dir), until a client
 * takes one up or the sweep removes it: read once, not at every probe. */
static char **leftovers;
static char *stage_dir;
static int64_t stage_last_gc;

char *
stage_blob(const char *sha)
{
	return xasprintf("%s/%s", stage_dir, sha);
}

/* SPOOL/stage, private.  Partial uploads (tmp.SHA.UID.XXXXXX) stay for
 * their clients to go on with; stage_tick removes those left idle. */
void
stage_init(void)
{
	struct dirent *e;
	DIR *d;

	stage_dir = xasprintf("%s/stage", conf->spool_dir);
	if (mkdir(stage_dir, 0700) < 0 && errno != EEXIST)
		fatal("cannot create %s", stage_dir);
	if (chmod(stage_dir, 0700) < 0)
		fatal("cannot make %s private", stage_dir);
	if (!(d = opendir(stage_dir)))
		fatal("cannot read %s", stage_dir);
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "tmp.", 4) == 0)
			strv_push(&leftovers, xstrdup(e->d_name));
	closedir(d);
}

/* Leftover k is taken up or gone. */
static void
leftover_forget(size_t k)
{
	size_t n = strv_len(leftovers);

	free(leftovers[k]);
	memmove(&leftovers[k], &leftovers[k + 1], (n - k) * sizeof *leftovers);
}

bool
stage_have(const char *sha, int64_t size)
{
	char *path = stage_blob(sha);
	struct stat st;
	bool ok = stat(path, &st) == 0 && S_ISREG(st.st_mode) && (size < 0 || st.st_size == size);

	free(path);
	return ok;
}

/* u out of the list, its file kept (complete: renamed) or removed. */
static void
upload_free(struct upload *u, bool remove)
{
	TAILQ_REMOVE(&uploads, u, entry);
	if (u->waiter)
		stage_reply(u->waiter, u->wseq, false, 0);
	if (remove)
		stage_repl_abandon(u->sha, u->tmp);
	if (u->ev)
		event_free(u->ev);
	close(u->fd);
	if (remove)
		unlink(u->tmp);
	free(u->buf);
	free(u->tmp);
	free(u);
}

static void
upload_drop(struct upload *u)
{
	upload_free(u, true);
}

static struct upload *
upload_find(const struct conn *c, const char *sha)
{
	struct upload *u;

	TAILQ_FOREACH(u, &uploads, entry)
		if (u->conn == c && !u->orphan && (!c || u->uid == c->uid) && strcmp(u->sha, sha) == 0)
			return u;
	return NULL;
}

/* c's upload of sha; c NULL: one the primary ships to us, the standby,
 * uid's upload there (ship_uid, -1 for a file stored there). */
static struct upload *
upload_start(const struct conn *c, int64_t ship_uid, const char *sha, int64_t size, char *err,
    size_t n)
{
	uid_t uid = c ? c->uid : ship_uid >= 0 ? (uid_t)ship_uid : 0;
	struct upload *u = upload_find(c, sha);

	if (u)
		upload_drop(u);
	u = xcalloc(1, sizeof *u);
	/* Named by its uploader's uid for upload_resume (after a restart,
	 * or on the standby once promoted); a stored file shipped to us by
	 * none: no client takes it up. */
	u->tmp = c || ship_uid >= 0 ? xasprintf("%s/tmp.%s.%u.XXXXXX", stage_dir, sha, (unsigned)uid) :
	    xasprintf("%s/tmp.%s.primary.XXXXXX", stage_dir, sha);
	u->shipped = !c && ship_uid >= 0;
	u->touched = mono_ms();
	if ((u->fd = mkostemp(u->tmp, O_CLOEXEC)) < 0) {
		snprintf(err, n, "cannot create a file in the master's spool: %s", strerror(errno));
		free(u->tmp);
		free(u);
		return NULL;
	}
	u->conn = c;
	u->uid = uid;
	memcpy(u->sha, sha, sizeof u->sha);
	u->size = size;
	sha256_init(&u->h);
	TAILQ_INSERT_TAIL(&uploads, u, entry);
	return u;
}

/* One slice of a partial file hashed again; the next in the next turn of
 * the loop, and the waiting client told where to go on after the last. */
static void
upload_rehash(evutil_socket_t fd, short what, void *arg)
{
	struct upload *u = arg;
	int64_t end = u->off + STAGE_REHASH_SLICE < u->rehash_to ? u->off + STAGE_REHASH_SLICE :
	    u->rehash_to;
	struct conn *c;

	(void)fd;
	(void)what;
	while (u->off < end) {
		size_t want = end - u->off < STAGE_CHUNK ? (size_t)(end - u->off) : STAGE_CHUNK;
		ssize_t r = pread(u->fd, u->buf, want, u->off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			/* Unreadable (or cut by hand): the client starts again. */
			log_warnx("cannot read back the partial upload %s: %s", u->tmp,
			    r < 0 ? strerror(errno) : "it is shorter");
			upload_drop(u);
			return;
		}
		sha256_update(&u->h, u->buf, (size_t)r);
		u->off += r;
	}
	u->touched = mono_ms();
	if (u->off < u->rehash_to) {
		event_active(u->ev, 0, 0);
		return;
	}
	u->rehash_to = 0;
	u->written = u->off;
	u->resumed_at = u->off;
	free(u->buf);
	u->buf = NULL;
	event_free(u->ev);
	u->ev = NULL;
	if (lseek(u->fd, u->off, SEEK_SET) < 0) {
		log_warn("cannot go on with the partial upload %s", u->tmp);
		upload_drop(u);
		return;
	}
	log_info("upload of staged file %s for uid %u resumed at offset %lld (hashed again in "
	    "%lld ms, slices of %d MiB)", u->sha, (unsigned)u->uid, (long long)u->off,
	    (long long)(mono_ms() - u->rehash_ms), STAGE_REHASH_SLICE >> 20);
	stage_repl_stream(u->sha, u->size, u->tmp, u->uid);
	stage_repl_grow(u->sha, u->tmp, u->off);
	if ((c = u->waiter) != NULL) {
		u->waiter = NULL;
		stage_reply(c, u->wseq, false, u->off);
	}
}

/* The upload of partial file NAME (in SPOOL/stage), which no upload holds:
 * c's, its bytes to be hashed again; NULL when it is not a beginning of
 * the file (it goes). */
static struct upload *
upload_adopt(struct conn *c, const char *name, const char *sha, int64_t size)
{
	struct upload *u = xcalloc(1, sizeof *u);
	struct stat st;

	u->tmp = xasprintf("%s/%s", stage_dir, name);
	u->fd = open(u->tmp, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (u->fd < 0 || fstat(u->fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > size) {
		if (u->fd >= 0)
			close(u->fd);
		unlink(u->tmp);
		free(u->tmp);
		free(u);
		return NULL;
	}
	u->conn = c;
	u->uid = c->uid;
	memcpy(u->sha, sha, sizeof u->sha);
	u->size = size;
	u->touched = mono_ms();
	u->rehash_to = st.st_size;
	u->rehash_ms = mono_ms();
	sha256_init(&u->h);
	u->buf = xmalloc(STAGE_CHUNK);
	/* At PRIO_NEW the loop runs one callback and polls again (main.c),
	 * after the work that is due: one slice a turn. */
	u->ev = event_new(base, -1, 0, upload_rehash, u);
	event_priority_set(u->ev, PRIO_NEW);
	TAILQ_INSERT_TAIL(&uploads, u, entry);
	event_active(u->ev, 0, 0);
	return u;
}

static struct upload *
upload_by_tmp(const char *name)
{
	struct upload *u;
	size_t n = strlen(stage_dir);

	TAILQ_FOREACH(u, &uploads, entry)
		if (strncmp(u->tmp, stage_dir, n) == 0 && strcmp(u->tmp + n + 1, name) == 0)
			return u;
	return NULL;
}

/* What c may go on with of sha: its own upload, one whose connection went
 * (a client that lost its link), or a partial file a restart left. */
static struct upload *
upload_resume(struct conn *c, const char *sha, int64_t size)
{
	struct upload *u = upload_find(c, sha);
	char prefix[SHA256_HEX + 32];
	size_t k = 0;

	if (u)
		return u->size == size ? u : NULL;
	TAILQ_FOREACH(u, &uploads, entry)
		if (u->orphan && u->uid == c->uid && u->size == size && strcmp(u->sha, sha) == 0) {
			u->orphan = false;
			u->conn = c;
			if (u->shipped) {
				/* Its running hash came with its bytes: no
				 * need to read them again. */
				u->shipped = false;
				u->resumed_at = u->off;
				log_info("upload of staged file %s for uid %u resumed at offset %lld (the "
				    "bytes the primary shipped to us before the failover)", u->sha,
				    (unsigned)u->uid, (long long)u->off);
				stage_repl_stream(u->sha, u->size, u->tmp, u->uid);
				stage_repl_grow(u->sha, u->tmp, u->off);
			}
			return u;
		}
	snprintf(prefix, sizeof prefix, "tmp.%s.%u.", sha, (unsigned)c->uid);
	while (leftovers && leftovers[k]) {
		if (strncmp(leftovers[k], prefix, strlen(prefix)) != 0) {
			k++;
			continue;
		}
		u = upload_adopt(c, leftovers[k], sha, size);
		leftover_forget(k);
		if (u)
			return u;
	}
	return NULL;
}

/* c's connection went: its uploads wait for it to come back (or go idle). */
void
stage_conn_gone(struct conn *c)
{
	struct upload *u;

	TAILQ_FOREACH(u, &uploads, entry) {
		if (u->waiter == c)
			u->waiter = NULL;
		if (u->conn == c && c)
			u->orphan = true;
	}
}

void
stage_promoted(void)
{
	struct upload *u, *next;

	TAILQ_FOREACH_SAFE(u, &uploads, entry, next) {
		if (u->conn || u->orphan)
			continue;
		/* A stored file's copy on its way: nobody sends the rest. */
		if (!u->shipped) {
			upload_drop(u);
			continue;
		}
		u->orphan = true;
		u->touched = mono_ms();
		log_info("upload of staged file %s for uid %u: %lld of its %lld bytes are here; its "
		    "client may go on from there", u->sha, (unsigned)u->uid, (long long)u->off,
		    (long long)u->size);
	}
}

/* What uid's jobs hold in SPOOL/stage/ (0 when stage_max_user is off: not
 * needed).  A query over every file of the user's jobs. */
static int64_t
stage_user_bytes(uid_t uid)
{
	int64_t held;

	if (!conf->stage_max_user)
		return 0;
	if ((held = store_stage_user_bytes(store, uid)) < 0)
		fatalx("cannot add up a user's staged files");
	return held;
}

/* The same for c's uploads, read again at most once a second: a
 * submission of many files pays for one query, not one per file (its
 * SUBMIT reads it afresh, stage_admit). */
#define STAGE_HELD_MS 1000
static int64_t
stage_held_of(struct conn *c)
{
	int64_t now = mono_ms();

	if (!c->stage_held_at || now - c->stage_held_at > STAGE_HELD_MS) {
		c->stage_held = stage_user_bytes(c->uid);
		c->stage_held_at = now;
	}
	return c->stage_held;
}

/* The limits of qmaster.conf, for a file of size in a job of total bytes
 * by a user whose jobs hold held bytes; 0, or -1 with one sentence in err. */
static int
stage_limits(int64_t held, int64_t size, int64_t total, char *err, size_t n)
{
	if (conf->stage_max_file && size > conf->stage_max_file) {
		snprintf(err, n, "a staged file of %lld bytes is over the limit of %lld bytes per file "
		    "(stage_max_file)", (long long)size, (long long)conf->stage_max_file);
		return -1;
	}
	if (conf->stage_max_job && total > conf->stage_max_job) {
		snprintf(err, n, "the job's staged files of %lld bytes are over the limit of %lld bytes "
		    "per job (stage_max_job)", (long long)total, (long long)conf->stage_max_job);
		return -1;
	}
	if (conf->stage_max_user) {
		if (held + total > conf->stage_max_user) {
			snprintf(err, n, "the job's staged files of %lld bytes would bring the user's to "
			    "%lld bytes, over the limit of %lld bytes per user (stage_max_user)",
			    (long long)total, (long long)(held + total), (long long)conf->stage_max_user);
			return -1;
		}
	}
	return 0;
}

/* The complete file: its hash checked, then on disk under its name. */
static int
upload_finish(struct upload *u, char *err, size_t n)
{
	char got[SHA256_HEX + 1], *path;
	int rc = -1;

	sha256_hex(&u->h, got);
	if (strcmp(got, u->sha) != 0) {
		snprintf(err, n, "the file's content does not match its SHA-256 (a corrupt transfer); "
		    "send it again");
		return -1;
	}
	path = stage_blob(u->sha);
	if (fchmod(u->fd, 0600) < 0 || fsync(u->fd) < 0 || rename(u->tmp, path) < 0 ||
	    spool_fsync_dir(stage_dir) < 0)
		snprintf(err, n, "cannot store the file in the master's spool: %s", strerror(errno));
	else
		rc = 0;
	free(path);
	return rc;
}

void
stage_reply(struct conn *c, int64_t seq, bool have, int64_t off)
{
	json_t *rep = proto_reply_ok(seq);

	msg_stage_putted_add(rep, &(struct msg_stage_putted){ .have = have, .offset = off });
	net_send(c, rep);
}

/* The chunk's len raw bytes at the front of in, hashed where they lie
 * and written from there: no copy, no allocation per chunk. */
static int
upload_write(struct upload *u, struct evbuffer *in, size_t len, char *err, size_t n)
{
	size_t left;
	struct evbuffer_iovec v[64], *vp = v;
	int nv;

	if (u->off + (int64_t)len > u->size) {
		snprintf(err, n, "a STAGE_PUT chunk goes past the file's announced size");
		return -1;
	}
	nv = evbuffer_peek(in, (ev_ssize_t)len, NULL, NULL, 0);
	if (nv > (int)(sizeof v / sizeof v[0]))
		vp = xmalloc((size_t)nv * sizeof *vp);
	nv = evbuffer_peek(in, (ev_ssize_t)len, NULL, vp, nv);
	for (int i = 0, k = 0; i < nv && k < (int)len; i++) {
		size_t part = vp[i].iov_len < len - (size_t)k ? vp[i].iov_len : len - (size_t)k;
		sha256_update(&u->h, vp[i].iov_base, part);
		k += (int)part;
	}
	if (vp != v)
		free(vp);
	for (left = len; left > 0;) {
		int w = evbuffer_write_atmost(in, u->fd, (ev_ssize_t)left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			snprintf(err, n, "cannot write to the master's spool: %s", strerror(errno));
			return -1;
		}
		left -= (size_t)w;
	}
	u->off += (int64_t)len;
	u->touched = mono_ms();
	stage_writeback(u->fd, &u->written, u->off);
	return 0;
}

void
stage_put(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_stage_put m;
	const char *why = NULL;
	struct upload *u;
	char err[512];
	struct evbuffer *in;
	size_t len;

	if (msg_stage_put_unpack(msg, &m, &why) < 0) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", why));
		return;
	}
	if (m.offset == 0) {
		if (stage_limits(stage_held_of(c), m.size, m.total, err, sizeof err) < 0) {
			net_send(c, proto_reply_err(seq, ERR_LIMIT, "%s", err));
			return;
		}
		/* Without bytes it is a question (where to go on), except the
		 * last chunk of an empty file, which is the whole file. */
		if (stage_have(m.sha256, m.size) || (!m.bytes && !m.last)) {
			bool have = stage_have(m.sha256, m.size);
			/* Fresh again: the sweep spares it until its job comes. */
			if (have) {
				char *path = stage_blob(m.sha256);
				utimensat(AT_FDCWD, path, NULL, 0);
				free(path);
				stage_repl_touch(m.sha256, m.size);
			}
			/* Still on its way to the standby: the answer waits too. */
			if (have && stage_repl_wait(m.sha256, c, seq))
				return;
			u = have ? NULL : upload_resume(c, m.sha256, m.size);
			if (u && u->rehash_to) {
				u->waiter = c;
				u->wseq = seq;
				return;
			}
			stage_reply(c, seq, have, have ? m.size : u ? u->off : 0);
			return;
		}
		if (!(u = upload_start(c, -1, m.sha256, m.size, err, sizeof err))) {
			net_send(c, proto_reply_err(seq, ERR_INTERNAL, "%s", err));
			return;
		}
		stage_repl_stream(u->sha, u->size, u->tmp, u->uid);
	} else if (!(u = upload_find(c, m.sha256)) || u->rehash_to || u->off != m.offset ||
	    u->size != m.size) {
		/* Not what we hold (a master restart, a lost chunk): say where
		 * to go on from, and the client sends from there. */
		stage_reply(c, seq, false, u && !u->rehash_to && u->size == m.size ? u->off : 0);
		return;
	}
	in = net_raw(c, &len);
	if (m.bytes && upload_write(u, in, len, err, sizeof err) < 0) {
		upload_drop(u);
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", err));
		return;
	}
	u->received += (int64_t)len;
	stage_repl_grow(u->sha, u->tmp, u->off);
	if (!m.last) {
		stage_reply(c, seq, false, u->off);
		return;
	}
	if (u->off != u->size) {
		upload_drop(u);
		net_send(c, proto_reply_err(seq, ERR_INVAL, "the staged file ended short of its size "
		    "(a truncated transfer); send it again"));
		return;
	}
	if (upload_finish(u, err, sizeof err) < 0) {
		upload_drop(u);
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", err));
		return;
	}
	if (u->resumed_at)
		log_info("upload of staged file %s for uid %u stored: %lld of its %lld bytes received "
		    "here after it resumed at offset %lld", u->sha, (unsigned)u->uid,
		    (long long)u->received, (long long)u->size, (long long)u->resumed_at);
	else
		log_debug("staged file %s (%lld bytes) stored for uid %u", m.sha256, (long long)m.size,
		    (unsigned)c->uid);
	upload_free(u, false);
	stage_repl_ship(m.sha256, m.size);
	if (!stage_repl_wait(m.sha256, c, seq))
		stage_reply(c, seq, true, m.size);
}

void
stage_get(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_stage_get m;
	const char *why = NULL;
	struct job *j;
	struct stat st;
	char *path;
	json_t *rep;
	int64_t r;
	int fd;

	if (msg_stage_get_unpack(msg, &m, &why) < 0) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", why));
		return;
	}
	j = store_job_get(store, m.job, false);
	if (!j || !perm_stage_read(c, j) || store_stage_uses(store, m.sha256, m.job) != 1) {
		job_free(j);
		net_send(c, proto_reply_err(seq, ERR_NOENT, "job %lld has no staged file %s of yours",
		    (long long)m.job, m.sha256));
		return;
	}
	job_free(j);
	path = stage_blob(m.sha256);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		net_send(c, proto_reply_err(seq, ERR_NOENT, "the staged file %s is not in the master's "
		    "spool", m.sha256));
		return;
	}
	/* The bytes go from the file to the socket (sendfile), after the
	 * reply that says how many. */
	r = m.offset < st.st_size ? st.st_size - m.offset : 0;
	if (r > STAGE_CHUNK)
		r = STAGE_CHUNK;
	rep = proto_reply_ok(seq);
	msg_stage_got_add(rep, &(struct msg_stage_got){ .bytes = r, .size = st.st_size,
	    .eof = m.offset + r >= st.st_size });
	/* The chunks a few MiB back are sent: their pages go, as a staged
	 * file's do once written (stage_writeback).  One still queued is
	 * read again from the disk. */
	stage_drop_behind(fd, m.offset - 2 * STAGE_WRITEBACK);
	net_send_file(c, rep, fd, m.offset, (size_t)r);
}

/* SUBMIT of a job (or cron entry) with inputs: each is here with its size,
 * within limits; qrsh's sessions, which have no submit-time inputs, are
 * refused. */
int
stage_admit(const struct job *j, uid_t uid, char *err, size_t n)
{
	size_t i;
	json_t *v;
	int64_t total, held;

	if (!j->stage_in && !j->stage_out)
		return 0;
	if (j->qrsh) {
		snprintf(err, n, "qrsh stages no files: an interactive session has no submit-time "
		    "inputs and sends nothing back; use a shared file system or scp");
		return -1;
	}
	if (!j->stage_in)
		return 0;
	total = stage_files_bytes(j->stage_in);
	held = stage_user_bytes(uid);
	json_array_foreach(j->stage_in, i, v) {
		struct stage_file f;

		stage_file_unpack(v, &f);
		if (stage_limits(held, f.size, total, err, n) < 0)
			return -1;
		if (!stage_have(f.sha256, f.size)) {
			snprintf(err, n, "the staged file %s was not sent before the job", f.name);
			return -1;
		}
	}
	return 0;
}

/* Once a minute: uploads left idle go, and files no job names any more. */
void
stage_tick(int64_t now)
{
	struct upload *u, *next;
	struct dirent *e;
	struct stat st;
	DIR *d;

	TAILQ_FOREACH_SAFE(u, &uploads, entry, next)
		if (mono_ms() - u->touched > STAGE_UPLOAD_IDLE_MS)
			upload_drop(u);
	stage_repl_tick();
	if (now - stage_last_gc < 60000 || !(d = opendir(stage_dir)))
		return;
	stage_last_gc = now;
	while ((e = readdir(d)) != NULL) {
		/* Partial uploads no client went on with (kept across a
		 * restart for their clients), idle as long as one in memory. */
		if (strncmp(e->d_name, "tmp.", 4) == 0 && !upload_by_tmp(e->d_name) &&
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    now - (int64_t)st.st_mtime * 1000 > STAGE_UPLOAD_IDLE_MS) {
			unlinkat(dirfd(d), e->d_name, 0);
			for (size_t k = 0; leftovers && leftovers[k]; k++)
				if (strcmp(leftovers[k], e->d_name) == 0) {
					leftover_forget(k);
					break;
				}
			continue;
		}
		if (!sha256_hex_ok(e->d_name) || fstatat(dirfd(d), e->d_name, &st, 0) < 0 ||
		    now - (int64_t)st.st_mtime * 1000 < STAGE_ORPHAN_MS)
			continue;
		if (store_stage_uses(store, e->d_name, 0) == 0 && unlinkat(dirfd(d), e->d_name, 0) == 0)
			log_debug("removed staged file %s: no job names it", e->d_name);
	}
	closedir(d);
}

const char *
stage_spool(void)
{
	return stage_dir;
}

/* A chunk of a file the primary ships to us, the standby (stage_repl.c),
 * stored as an upload of no connection: 1 once the file is complete,
 * checked and durable, 0 while more is to come, -1 with err (the bytes
 * then left in in: the caller drops the link). */
int
stage_blob_chunk(const struct msg_stage_blob *m, struct evbuffer *in, size_t len, char *err,
    size_t n)
{
	const char *sha = m->sha256;
	int64_t size = m->size, off = m->offset;
	bool last = m->last;
	struct upload *u = off == 0 ? upload_start(NULL, m->uid, sha, size, err, n) :
	    upload_find(NULL, sha);
	int rc = -1;

	if (!u) {
		if (off)
			snprintf(err, n, "a chunk at offset %lld of a file not begun", (long long)off);
		return -1;
	}
	if (u->off != off || u->size != size)
		snprintf(err, n, "a chunk at offset %lld where %lld was expected", (long long)off,
		    (long long)u->off);
	else if (upload_write(u, in, len, err, n) == 0 && !last)
		return 0;
	else if (last && u->off != u->size)
		snprintf(err, n, "the file ended short of its size");
	else if (last && upload_finish(u, err, n) == 0) {
		upload_free(u, false);
		return 1;
	}
	upload_drop(u);
	return rc;
}
