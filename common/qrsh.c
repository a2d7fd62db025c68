/* qrsh.c: the stream between qrsh and its job's shepherd: typed frames, bounded buffers.
 *
 * Both ends relay the frames through the same bounded buffers. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

void
qrsh_buf_free(struct qrsh_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

/* Moves what is still unsent or unparsed to the front, so a buffer never
 * grows past what is pending plus one frame. */
static void
qrsh_buf_room(struct qrsh_buf *b, size_t need)
{
	if (b->off) {
		memmove(b->p, b->p + b->off, b->len - b->off);
		b->len -= b->off;
		b->off = 0;
	}
	if (b->len + need > b->cap) {
		b->cap = (b->len + need) * 2;
		b->p = xrealloc(b->p, b->cap);
	}
}

void
qrsh_buf_add(struct qrsh_buf *b, const void *data, size_t n)
{
	if (n == 0)
		return;
	qrsh_buf_room(b, n);
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

void
qrsh_buf_frame(struct qrsh_buf *b, int type, const void *data, size_t n)
{
	unsigned char h[QRSH_HEADER];

	assert(n <= QRSH_PAYLOAD_MAX);
	h[0] = (unsigned char)type;
	h[1] = (unsigned char)(n >> 24);
	h[2] = (unsigned char)(n >> 16);
	h[3] = (unsigned char)(n >> 8);
	h[4] = (unsigned char)n;
	qrsh_buf_room(b, sizeof h + n);
	memcpy(b->p + b->len, h, sizeof h);
	if (n)
		memcpy(b->p + b->len + sizeof h, data, n);
	b->len += sizeof h + n;
}

int
qrsh_buf_flush(struct qrsh_buf *b, int fd)
{
	while (b->off < b->len) {
		ssize_t w = write(fd, b->p + b->off, b->len - b->off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -1;
		}
		b->off += (size_t)w;
	}
	b->off = b->len = 0;
	return 0;
}

int
qrsh_buf_fill(struct qrsh_buf *b, int fd, size_t max)
{
	ssize_t r;

	qrsh_buf_room(b, max);
	do
		r = read(fd, b->p + b->len, max);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 1 : -1;
	b->len += (size_t)r;
	return r > 0;
}

int
qrsh_frame_take(struct qrsh_buf *b, int *type, const char **data, size_t *n)
{
	const unsigned char *h = (const unsigned char *)b->p + b->off;
	size_t have = b->len - b->off, len;

	if (have < QRSH_HEADER)
		return 0;
	len = (size_t)h[1] << 24 | (size_t)h[2] << 16 | (size_t)h[3] << 8 | h[4];
	if (len > QRSH_PAYLOAD_MAX)
		return -1;
	if (have < QRSH_HEADER + len)
		return 0;
	*type = h[0];
	*data = (const char *)h + QRSH_HEADER;
	*n = len;
	b->off += QRSH_HEADER + len;
	return 1;
}

/* Signals a qrsh client may forward: those of a terminal and of kill(1)'s
 * usual use; anything else is refused, so a client cannot make the
 * shepherd send, say, SIGSEGV to look like a crash. */
bool
qrsh_signal_ok(int sig)
{
	switch (sig) {
	case SIGHUP: case SIGINT: case SIGQUIT: case SIGKILL: case SIGUSR1: case SIGUSR2:
	case SIGTERM: case SIGCONT: case SIGSTOP: case SIGTSTP: case SIGWINCH:
		return true;
	default:
		return false;
	}
}

/* HELLO and START: the JSON of those frames, each written once. */

char *
qrsh_hello_pack(const struct qrsh_hello *m)
{
	json_t *o = json_pack("{s:s, s:s, s:i, s:I}", "secret", m->secret, "host", m->host,
	    "part", (int)m->part, "id", (json_int_t)m->id);
	char *text;

	if (m->cred)
		json_object_set_new(o, "cred", json_string(m->cred));
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return text;
}

void
qrsh_hello_unpack(const json_t *o, struct qrsh_hello *m)
{
	m->secret = jstr(o, "secret");
	m->host = jstr(o, "host");
	m->cred = jstr(o, "cred");
	m->part = jint(o, "part", -1);
	m->id = jint(o, "id", 0);
}

char *
qrsh_start_pack(const struct qrsh_start *m)
{
	json_t *o = json_pack("{s:b}", "pty", m->pty);
	char *text;

	if (m->has_size) {
		json_object_set_new(o, "rows", json_integer(m->rows));
		json_object_set_new(o, "cols", json_integer(m->cols));
	}
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return text;
}

void
qrsh_start_unpack(const json_t *o, struct qrsh_start *m)
{
	m->pty = jbool(o, "pty", false);
	m->rows = jint(o, "rows", 0);
	m->cols = jint(o, "cols", 0);
	m->has_size = json_object_get(o, "rows") != NULL;
}
