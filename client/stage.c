/* stage.c: file staging's transfers for qsub, nowq fetch and the shepherd: files sent by STAGE_PUT, fetched by STAGE_GET.
 *
 * Every transfer is a chunk of at most 1 MiB per request, read from or
 * written to the file as it goes, so no side holds a whole file.  A lost
 * master is asked again (the same or the other one) for STAGE_RETRY_MS,
 * going on from the offset it says it has. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/client.h"
#include "common/msg_req.h"

#define STAGE_RETRY_MS (10 * 60 * 1000)

/* The reply to req (kept), asking again while the master is away. */
static json_t *
stage_call(json_t *req, char *err, size_t n)
{
	int64_t until = mono_ms() + STAGE_RETRY_MS;
	const char *why = NULL;
	json_t *rep;

	while ((rep = client_call(req, CLIENT_REPLY_MS, &why)) == NULL) {
		if (mono_ms() > until) {
			snprintf(err, n, "%s", why ? why : "the master does not answer");
			return NULL;
		}
		client_disconnect();
		sleep(1);
	}
	if (!client_reply_ok(rep)) {
		snprintf(err, n, "%s", client_reply_message(rep));
		json_decref(rep);
		return NULL;
	}
	return rep;
}

/* Chunks in flight at once: the kernel sends the next while the master
 * hashes and writes the last (two cores at work). */
#define STAGE_WINDOW 4

/* Where the master goes on with the file: 1 it has it all, 0 with *off
 * (the bytes it holds of an upload a lost connection or a master restart
 * cut short, 0 for none), -1 with err. */
static int
stage_put_where(const char *sha, int64_t size, int64_t total, int64_t *off, char *err, size_t n)
{
	json_t *req = msg_stage_put_pack(&(struct msg_stage_put){ .sha256 = sha, .size = size,
	    .total = total });
	json_t *rep = stage_call(req, err, n);
	struct msg_stage_putted p;

	json_decref(req);
	if (!rep)
		return -1;
	msg_stage_putted_unpack(rep, &p);
	json_decref(rep);
	if (p.have)
		return 1;
	if (p.offset < 0 || p.offset > size) {
		snprintf(err, n, "the master asked for offset %lld of a file of %lld bytes",
		    (long long)p.offset, (long long)size);
		return -1;
	}
	*off = p.offset;
	return 0;
}

int
stage_put_fd(int fd, const char *sha, int64_t size, int64_t total, char *err, size_t n)
{
	int64_t until = mono_ms() + STAGE_RETRY_MS, sent = 0, resumed = 0;
	int64_t seq[STAGE_WINDOW], end[STAGE_WINDOW];
	int head = 0, nin = 0, rc;
	/* A file of one chunk goes at once: the chunk at offset 0 asks what
	 * a question would (the limits; the reply says "have" when the
	 * master holds the file already) and there is nothing to resume.  A
	 * larger one is asked about first, so that a file the master holds
	 * or holds part of is not sent again. */
	bool all_sent = false, ask = size > STAGE_CHUNK;
	const char *why = NULL;

	for (;;) {
		json_t *rep;
		struct msg_stage_putted p;

		/* First, and after a lost connection: the master may hold part
		 * of the file already (kept across its restart), and says from
		 * where to go on. */
		if (ask) {
			ask = false;
			if ((rc = stage_put_where(sha, size, total, &sent, err, n)) != 0)
				return rc < 0 ? -1 : 0;
			/* All bytes there but not the last chunk's end: a last
			 * chunk of none at the end completes it. */
			resumed = sent;
			all_sent = false;
		}
		while (nin < STAGE_WINDOW && !all_sent) {
			size_t len = size - sent < STAGE_CHUNK ? (size_t)(size - sent) : STAGE_CHUNK;
			struct stat st;
			json_t *req;
			int k = (head + nin) % STAGE_WINDOW;

			/* A file cut short is said at once; the kernel sends the
			 * bytes (a file that shrinks meanwhile loses the
			 * connection, and the next try says this). */
			errno = 0;
			if (fstat(fd, &st) < 0 || st.st_size < sent + (int64_t)len) {
				snprintf(err, n, "the file changed or cannot be read while it was sent: %s",
				    errno ? strerror(errno) : "it is shorter");
				return -1;
			}
			req = msg_stage_put_pack(&(struct msg_stage_put){ .sha256 = sha, .size = size,
			    .total = total, .offset = sent, .bytes = (int64_t)len,
			    .last = sent + (int64_t)len == size });
			if (client_send_file(req, fd, sent, len, &why) < 0) {
				json_decref(req);
				goto lost;
			}
			seq[k] = msg_seq_of(req, 0);
			json_decref(req);
			sent += (int64_t)len;
			end[k] = sent;
			all_sent = sent == size;
			nin++;
		}
		if (nin == 0)
			return 0;
		if ((rep = client_recv(CLIENT_REPLY_MS, &why)) == NULL)
			goto lost;
		/* Replies to chunks given up on (below) are passed over. */
		if (msg_seq_of(rep, -1) != seq[head]) {
			json_decref(rep);
			continue;
		}
		if (!client_reply_ok(rep)) {
			/* The bytes a master restart left did not make the file
			 * (a crash of its host cut them): once more, all of it. */
			if (resumed > 0) {
				json_decref(rep);
				resumed = sent = 0;
				all_sent = false;
				nin = 0;
				continue;
			}
			snprintf(err, n, "%s", client_reply_message(rep));
			json_decref(rep);
			return -1;
		}
		msg_stage_putted_unpack(rep, &p);
		json_decref(rep);
		if (p.have)
			return 0;
		if (p.offset != end[head]) {
			/* The master lost the file (a restart) or a chunk: on
			 * from where it says, the chunks in flight forgotten. */
			if (p.offset < 0 || p.offset > size) {
				snprintf(err, n, "the master asked for offset %lld of a file of %lld bytes",
				    (long long)p.offset, (long long)size);
				return -1;
			}
			sent = p.offset;
			all_sent = false;
			nin = 0;
			continue;
		}
		head = (head + 1) % STAGE_WINDOW;
		nin--;
		continue;
lost:
		if (mono_ms() > until) {
			snprintf(err, n, "%s", why ? why : "the master does not answer");
			return -1;
		}
		client_disconnect();
		sleep(1);
		ask = true;
		nin = 0;
	}
}

static int64_t stage_resumed;
static bool stage_host_fault;
static bool stage_restarted;

int64_t
stage_get_resumed(void)
{
	return stage_resumed;
}

bool
stage_get_restarted(void)
{
	return stage_restarted;
}

bool
stage_get_host_fault(void)
{
	return stage_host_fault;
}

/* pread until LEN bytes or the end of the file: their count, or -1. */
static ssize_t
stage_pread(int fd, void *buf, size_t len, int64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = pread(fd, (char *)buf + got, len - got, off + (int64_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* The bytes fd already holds from an earlier try (a master that
 * restarted, a shepherd that died), hashed again into h so that the fetch
 * goes on after them; the whole file's SHA-256 is still checked at the
 * end.  Their count, or -1. */
static int64_t
stage_get_prefix(int fd, int64_t size, struct sha256 *h)
{
	static char buf[1 << 16];
	struct stat st;
	int64_t off = 0;

	sha256_init(h);
	if (fstat(fd, &st) < 0)
		return -1;
	/* Longer than the file: not a beginning of it. */
	if (st.st_size > size) {
		stage_restarted = true;
		if (ftruncate(fd, 0) < 0)
			return -1;
		st.st_size = 0;
	}
	while (off < st.st_size) {
		size_t want = st.st_size - off < (int64_t)sizeof buf ? (size_t)(st.st_size - off) : sizeof buf;
		ssize_t r = stage_pread(fd, buf, want, off);
		if (r <= 0)
			return -1;
		sha256_update(h, buf, (size_t)r);
		off += r;
	}
	return lseek(fd, off, SEEK_SET) < 0 ? -1 : off;
}

/* One try at the rest of the file, STAGE_WINDOW requests in flight; 1 when
 * the bytes do not match the hash. */
static int
stage_get_once(int64_t job, const char *sha, int64_t size, int fd, char *err, size_t n)
{
	int64_t seq[STAGE_WINDOW], asked = 0, off = 0, written = 0;
	int head = 0, nin = 0;
	char got[SHA256_HEX + 1];
	const char *why = NULL;
	struct sha256 h;

	stage_host_fault = true;   /* until the master answers */
	if ((off = stage_get_prefix(fd, size, &h)) < 0) {
		snprintf(err, n, "cannot read back a staged file: %s", strerror(errno));
		return -1;
	}
	asked = off;
	if (off > stage_resumed)
		stage_resumed = off;
	while (asked < size || nin > 0) {
		json_t *rep;
		struct msg_stage_got g;
		const void *data;
		size_t len;

		while (nin < STAGE_WINDOW && asked < size) {
			json_t *req = msg_stage_get_pack(&(struct msg_stage_get){ .sha256 = sha,
			    .offset = asked, .job = job });
			if (client_send(req, &why) < 0) {
				json_decref(req);
				snprintf(err, n, "%s", why);
				return -1;
			}
			seq[(head + nin) % STAGE_WINDOW] = msg_seq_of(req, 0);
			json_decref(req);
			asked += STAGE_CHUNK;
			nin++;
		}
		if ((rep = client_recv(CLIENT_REPLY_MS, &why)) == NULL) {
			snprintf(err, n, "%s", why ? why : "the master does not answer");
			return -1;
		}
		if (msg_seq_of(rep, -1) != seq[head]) {
			json_decref(rep);
			continue;
		}
		head = (head + 1) % STAGE_WINDOW;
		nin--;
		if (!client_reply_ok(rep)) {
			snprintf(err, n, "%s", client_reply_message(rep));
			stage_host_fault = false;
			json_decref(rep);
			return -1;
		}
		why = NULL;
		data = client_raw(&len);
		if (msg_stage_got_unpack(rep, &g, &why) < 0 || (size_t)g.bytes != len) {
			snprintf(err, n, "%s", why ? why : "the master's chunk is not as long as it says");
			stage_host_fault = false;
			json_decref(rep);
			return -1;
		}
		json_decref(rep);
		sha256_update(&h, data, len);
		if (write_full(fd, data, len) < 0) {
			snprintf(err, n, "cannot write a staged file: %s", strerror(errno));
			return -1;
		}
		off += (int64_t)len;
		stage_writeback(fd, &written, off);
	}
	sha256_hex(&h, got);
	if (off != size || strcmp(got, sha) != 0) {
		snprintf(err, n, "the staged file %s came with %lld bytes of SHA-256 %.12s..., not %lld "
		    "bytes of %.12s...", sha, (long long)off, got, (long long)size, sha);
		stage_host_fault = false;
		return 1;
	}
	return 0;
}

int
stage_get_fd(int64_t job, const char *sha, int64_t size, int fd, char *err, size_t n)
{
	int64_t until = mono_ms() + STAGE_RETRY_MS;
	int rc = 1, tries = 0;

	stage_resumed = 0;
	stage_restarted = false;
	/* A corrupt transfer is tried again from the start, twice, then
	 * given up; a lost master is asked again (from the bytes already
	 * here) for as long as stage_call would. */
	while (tries < 3) {
		rc = stage_get_once(job, sha, size, fd, err, n);
		if (rc == 0 || (rc < 0 && client_fd() >= 0))
			break;
		if (rc > 0) {
			stage_restarted = true;
			if (ftruncate(fd, 0) < 0) {
				stage_host_fault = true;
				break;
			}
		}
		if (rc < 0) {
			if (mono_ms() > until)
				break;
			client_disconnect();
			sleep(1);
			continue;
		}
		tries++;
	}
	return rc == 0 ? 0 : -1;
}

/* ---- qsub: the inputs ---- */

struct stage_walk {
	json_t *files;       /* [{name, size, sha256}] */
	json_t *paths;       /* where each is, in the same order */
	char   *err;
	size_t  n;
};

static int stage_walk_path(struct stage_walk *w, const char *name);

static int
stage_walk_dir(struct stage_walk *w, const char *name)
{
	DIR *d = opendir(name);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		snprintf(w->err, w->n, "--stage-in: cannot read the folder %s: %s", name, strerror(errno));
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char *sub;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		sub = xasprintf("%s/%s", name, e->d_name);
		rc = stage_walk_path(w, sub);
		free(sub);
	}
	closedir(d);
	return rc;
}

static int
stage_walk_path(struct stage_walk *w, const char *name)
{
	char sha[SHA256_HEX + 1];
	const char *why = NULL;
	struct stat st;
	int64_t size;
	int fd;

	if (!stage_path_ok(name, &why)) {
		snprintf(w->err, w->n, "--stage-in: %s: %s", name, why);
		return -1;
	}
	if (stat(name, &st) < 0) {
		snprintf(w->err, w->n, "--stage-in: %s: %s", name, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode))
		return stage_walk_dir(w, name);
	if (!S_ISREG(st.st_mode)) {
		snprintf(w->err, w->n, "--stage-in: %s is neither a file nor a folder", name);
		return -1;
	}
	if (json_array_size(w->files) >= STAGE_MAX_FILES) {
		snprintf(w->err, w->n, "--stage-in: more than %d files", STAGE_MAX_FILES);
		return -1;
	}
	if ((fd = open(name, O_RDONLY | O_CLOEXEC)) < 0 || sha256_fd(fd, sha, &size) < 0) {
		snprintf(w->err, w->n, "--stage-in: cannot read %s: %s", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	json_array_append_new(w->files, stage_file_pack(&(struct stage_file){ .name = name,
	    .size = size, .sha256 = sha, .mode = st.st_mode & 0777 }));
	json_array_append_new(w->paths, json_string(name));
	return 0;
}

/* The files' sizes, for the order they are sent in. */
static const json_t *stage_sort_files;

static int64_t
stage_size_at(size_t i)
{
	struct stage_file f;

	stage_file_unpack(json_array_get(stage_sort_files, i), &f);
	return f.size;
}

/* Largest first, then in the order given. */
static int
stage_cmp_size(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int64_t x = stage_size_at(i), y = stage_size_at(j);

	return x != y ? (x < y ? 1 : -1) : (i > j) - (i < j);
}

/* The inputs named (relative to the current directory, the submit
 * directory), hashed, then each sent unless the master has it.  The
 * SUBMIT's stage_in list, or NULL with err. */
json_t *
stage_inputs_send(char *const *names, char *err, size_t n)
{
	struct stage_walk w = { .files = json_array(), .paths = json_array(), .err = err, .n = n };
	const char *why = NULL;
	size_t *order, nfiles, k;
	int64_t total;

	for (char *const *p = names; *p; p++)
		if (stage_walk_path(&w, *p) < 0)
			goto bad;
	if (!stage_files_ok(w.files, STAGE_MAX_FILES, &why)) {
		snprintf(err, n, "--stage-in: %s", why);
		goto bad;
	}
	total = stage_files_bytes(w.files);
	/* The largest first: its first request meets every limit the others
	 * would (the per-file one hardest; the job's and the user's are the
	 * same for all), so a limit refuses the job with nothing stored. */
	nfiles = json_array_size(w.files);
	order = xcalloc(nfiles + 1, sizeof *order);
	for (k = 0; k < nfiles; k++)
		order[k] = k;
	stage_sort_files = w.files;
	qsort(order, nfiles, sizeof *order, stage_cmp_size);
	for (k = 0; k < nfiles; k++) {
		const char *path = json_string_value(json_array_get(w.paths, order[k]));
		struct stage_file f;
		int fd, rc;

		stage_file_unpack(json_array_get(w.files, order[k]), &f);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			snprintf(err, n, "--stage-in: cannot read %s: %s", path, strerror(errno));
			free(order);
			goto bad;
		}
		rc = stage_put_fd(fd, f.sha256, f.size, total, err, n);
		close(fd);
		if (rc < 0) {
			free(order);
			goto bad;
		}
	}
	free(order);
	json_decref(w.paths);
	return w.files;
bad:
	json_decref(w.paths);
	json_decref(w.files);
	return NULL;
}

/* ---- nowq fetch, qsub -sync y, qwait: the outputs ---- */

/* Makes the folders of name under dir (relative). */
static int
stage_mkdirs(const char *name)
{
	char *p = xstrdup(name);

	for (char *s = strchr(p, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(p, 0777) < 0 && errno != EEXIST) {
			free(p);
			return -1;
		}
		*s = '/';
	}
	free(p);
	return 0;
}

static int
stage_fetch_one(int64_t id, const struct stage_file *f, char *err, size_t n)
{
	const char *name = f->name, *sha = f->sha256;
	int64_t size = f->size;
	char *tmp;
	int fd, rc;
	const char *why = NULL;
	mode_t mask = umask(0);

	umask(mask);
	if (!stage_path_ok(name, &why) || !sha256_hex_ok(sha)) {
		snprintf(err, n, "job %lld: the master names an output \"%s\" nowq will not write",
		    (long long)id, name);
		return -1;
	}
	if (stage_mkdirs(name) < 0) {
		snprintf(err, n, "cannot make the folders of %s: %s", name, strerror(errno));
		return -1;
	}
	tmp = xasprintf("%s.nowq-fetch.XXXXXX", name);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		snprintf(err, n, "cannot write %s: %s", name, strerror(errno));
		free(tmp);
		return -1;
	}
	rc = stage_get_fd(id, sha, size, fd, err, n);
	/* The job's file's mode, less the umask, as cp(1) gives a copy. */
	if (fchmod(fd, (f->mode ? (mode_t)f->mode : 0666) & ~mask) < 0 && rc == 0) {
		snprintf(err, n, "cannot write %s: %s", name, strerror(errno));
		rc = -1;
	}
	close(fd);
	if (rc == 0 && rename(tmp, name) < 0) {
		snprintf(err, n, "cannot write %s: %s", name, strerror(errno));
		rc = -1;
	}
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	return rc;
}

/* Into dir; NULL: the submit directory when submit_dir and this host has
 * it, else the current one. */
int
stage_fetch(int64_t id, const char *dir, bool submit_dir, bool quiet, char *err, size_t n)
{
	json_t *req = msg_status_pack_one(id), *rep, *v;
	char here[PATH_MAX];
	const char *why = NULL;
	struct job *j;
	int rc = 0, count = 0;
	size_t i;

	rep = stage_call(req, err, n);
	json_decref(req);
	if (!rep)
		return -1;
	v = msg_status_reply_one(rep);
	j = v ? job_from_json(v, &why) : NULL;
	json_decref(rep);
	if (!j) {
		snprintf(err, n, "job %lld does not exist (or is not yours)%s%s", (long long)id,
		    why ? ": " : "", why ? why : "");
		return -1;
	}
	if (!dir && submit_dir) {
		struct stat st;
		for (char **e = j->env; e && *e; e++)
			if (strncmp(*e, "SGE_O_WORKDIR=", 14) == 0 && stat(*e + 14, &st) == 0 &&
			    S_ISDIR(st.st_mode))
				dir = *e + 14;
	}
	if (!getcwd(here, sizeof here) || (dir && chdir(dir) < 0)) {
		snprintf(err, n, "cannot change to %s: %s", dir ? dir : ".", strerror(errno));
		job_free(j);
		return -1;
	}
	json_array_foreach(j->staged_out, i, v) {
		struct stage_file f;

		stage_file_unpack(v, &f);
		if (stage_fetch_one(id, &f, err, n) < 0) {
			rc = -1;
			break;
		}
		if (!quiet)
			printf("%s\n", f.name);
		count++;
	}
	if (rc == 0 && !count && !quiet)
		fprintf(stderr, "job %lld has no staged outputs (yet)\n", (long long)id);
	if (dir && chdir(here) < 0 && rc == 0) {
		snprintf(err, n, "cannot change back to %s: %s", here, strerror(errno));
		rc = -1;
	}
	job_free(j);
	return rc;
}

/* nowq fetch [-d DIR] ID...: a job's outputs, for its owner. */
int
stage_fetch_main(int argc, char **argv)
{
	const char *dir = NULL;
	char err[512];
	int rc = 0, k = 1, ids = 0;

	for (; k < argc; k++) {
		char *end;
		long long id;

		if (strcmp(argv[k], "-d") == 0 && k + 1 < argc) {
			dir = argv[++k];
			continue;
		}
		id = strtoll(argv[k], &end, 10);
		if (argv[k][0] == '-' || *end || id <= 0) {
			client_errx("usage: nowq fetch [-d DIR] JOB_ID...");
			return 1;
		}
		ids++;
		if (stage_fetch(id, dir, false, false, err, sizeof err) < 0) {
			client_errx("%s", err);
			rc = 1;
		}
	}
	if (!ids) {
		client_errx("usage: nowq fetch [-d DIR] JOB_ID...");
		return 1;
	}
	return rc;
}
