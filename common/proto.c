/* proto.c: the wire protocol's framing (length-prefixed JSON) and message-type table. */
#include "config.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"
#include "msg.h"
#include "msg_rows.h"

static const char *msg_names[MSG_NTYPES] = {
	[MSG_UNKNOWN] = "UNKNOWN",
	[MSG_HELLO] = "HELLO",
	[MSG_REPLY] = "REPLY",
	[MSG_SUBMIT] = "SUBMIT",
	[MSG_STATUS] = "STATUS",
	[MSG_DELETE] = "DELETE",
	[MSG_HOLD] = "HOLD",
	[MSG_RELEASE] = "RELEASE",
	[MSG_WAIT] = "WAIT",
	[MSG_HOSTS] = "HOSTS",
	[MSG_ACCT] = "ACCT",
	[MSG_REGISTER] = "REGISTER",
	[MSG_LOAD] = "LOAD",
	[MSG_PULL] = "PULL",
	[MSG_CHILD_REGISTER] = "CHILD_REGISTER",
	[MSG_CHILD_TERM] = "CHILD_TERM",
	[MSG_DISPATCH] = "DISPATCH",
	[MSG_SIGNAL] = "SIGNAL",
	[MSG_ACK] = "ACK",
	[MSG_ALTER] = "ALTER",
	[MSG_CONF] = "CONF",
	[MSG_CRON] = "CRON",
	[MSG_DISABLE] = "DISABLE",
	[MSG_ENABLE] = "ENABLE",
	[MSG_SUSPEND] = "SUSPEND",
	[MSG_UNSUSPEND] = "UNSUSPEND",
	[MSG_CLEAR] = "CLEAR",
	[MSG_RESERVE] = "RESERVE",
	[MSG_UNRESERVE] = "UNRESERVE",
	[MSG_ALIAS] = "ALIAS",
	[MSG_INHERIT] = "INHERIT",
	[MSG_STAGE_PUT] = "STAGE_PUT",
	[MSG_STAGE_GET] = "STAGE_GET",
	[MSG_PROBE] = "PROBE",
	[MSG_SYNC] = "SYNC",
	[MSG_SNAPSHOT] = "SNAPSHOT",
	[MSG_CHANGESET] = "CHANGESET",
	[MSG_APPLIED] = "APPLIED",
	[MSG_HEARTBEAT] = "HEARTBEAT",
	[MSG_VOTE_REQUEST] = "VOTE_REQUEST",
	[MSG_VOTE] = "VOTE",
	[MSG_MASTERS] = "MASTERS",
	[MSG_TAKEOVER] = "TAKEOVER",
	[MSG_STAGE_BLOB] = "STAGE_BLOB",
	[MSG_STAGE_STORED] = "STAGE_STORED",
	[MSG_STAGE_OFFER] = "STAGE_OFFER",
	[MSG_STAGE_WANT] = "STAGE_WANT",
};

const char *
msg_type_name(enum msg_type t)
{
	if ((int)t < 0 || t >= MSG_NTYPES || !msg_names[t])
		return "UNKNOWN";
	return msg_names[t];
}

enum msg_type
msg_type_lookup(const char *name)
{
	if (!name)
		return MSG_UNKNOWN;
	for (int t = 1; t < MSG_NTYPES; t++)
		if (msg_names[t] && strcmp(msg_names[t], name) == 0)
			return (enum msg_type)t;
	return MSG_UNKNOWN;
}

enum msg_type
msg_type_of(const json_t *msg)
{
	return msg_type_lookup(msg_type_text(msg));
}

const char *
msg_type_text(const json_t *msg)
{
	return jstr(msg, "type");
}

int64_t
msg_seq_of(const json_t *msg, int64_t absent)
{
	return jint(msg, "seq", absent);
}

void
msg_seq_set(json_t *msg, int64_t seq)
{
	json_object_set_new(msg, "seq", json_integer(seq));
}

bool
proto_is_listing(const json_t *msg)
{
	return msg_type_of(msg) == MSG_STATUS && !json_object_get(msg, "jobs");
}

static json_t *
decode_json(const char *data, size_t n, const char **why)
{
	json_error_t jerr;
	json_t *msg;

	msg = json_loadb(data, n, JSON_REJECT_DUPLICATES, &jerr);
	if (!msg) {
		*why = "malformed JSON in frame";
		return NULL;
	}
	if (!json_is_object(msg)) {
		json_decref(msg);
		*why = "frame is not a JSON object";
		return NULL;
	}
	if (!jstr(msg, "type")) {
		json_decref(msg);
		*why = "message has no type";
		return NULL;
	}
	return msg;
}

/* The room before a frame's text says how to give it back: 0 for
 * malloc's, else the size of mem_big's mapping. */
#define FRAME_HEAD 64
/* A frame this large is read into huge pages: the kernel writes it whole,
 * page after page, and a small page is dear the first time (mem_big). */
#define FRAME_BIG (512 * 1024)

char *
proto_frame_buf(size_t n)
{
	size_t got = 0;
	char *b = n >= FRAME_BIG ? mem_big(FRAME_HEAD + n + 1, &got) : xmalloc(FRAME_HEAD + n + 1);

	memcpy(b, &got, sizeof got);
	b[FRAME_HEAD + n] = '\0';
	return b + FRAME_HEAD;
}

void
proto_frame_buf_free(char *data)
{
	size_t got;

	if (!data)
		return;
	memcpy(&got, data - FRAME_HEAD, sizeof got);
	if (got)
		mem_big_free(data - FRAME_HEAD, got);
	else
		free(data - FRAME_HEAD);
}

json_t *
proto_decode_taken(char *data, size_t n, const char **why)
{
	json_t *msg;

	*why = NULL;
	if (msg_job_rows_native_on() && (msg = msg_job_rows_decode(data, n, why)) != NULL)
		return msg;
	msg = *why ? NULL : decode_json(data, n, why);
	proto_frame_buf_free(data);
	return msg;
}

json_t *
proto_decode(const char *data, size_t n, const char **why)
{
	char *copy;

	*why = NULL;
	if (!msg_job_rows_native_on())
		return decode_json(data, n, why);
	copy = proto_frame_buf(n);
	memcpy(copy, data, n);
	return proto_decode_taken(copy, n, why);
}

int
write_full(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd pfd = { .fd = fd, .events = POLLOUT };
				poll(&pfd, 1, -1);
				continue;
			}
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

size_t
proto_frame_put(char *dst, const char *s, size_t n)
{
	dst[0] = (char)(n >> 24);
	dst[1] = (char)(n >> 16);
	dst[2] = (char)(n >> 8);
	dst[3] = (char)n;
	memcpy(dst + 4, s, n);
	return n + 4;
}

uint32_t
proto_frame_len(const void *p)
{
	const unsigned char *h = p;

	return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
}

int
proto_send_fd(int fd, const json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	size_t n;
	int rc;
	char *frame;

	if (!s)
		return -1;
	n = strlen(s);
	/* The peer would refuse it and close; failing here says why. */
	if (n == 0 || n > PROTO_MAX_FRAME) {
		free(s);
		errno = EMSGSIZE;
		return -1;
	}
	/* One write per frame: a request should leave in one segment. */
	frame = xmalloc(n + 4);
	rc = write_full(fd, frame, proto_frame_put(frame, s, n));
	free(frame);
	free(s);
	return rc;
}

static int
read_all(int fd, void *p, size_t n, int64_t deadline, const char **why)
{
	char *c = p;
	/* What has arrived is read at once; poll only when nothing has:
	 * a reply usually waits whole in the socket. */
	bool wait = false, sock = true;
	while (n > 0) {
		ssize_t r;
		if (deadline >= 0 && (wait || !sock)) {
			int64_t left = deadline - mono_ms();
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			if (left <= 0 || poll(&pfd, 1, (int)left) == 0) {
				*why = "timed out waiting for the master";
				return -1;
			}
		}
		r = deadline >= 0 && sock ? recv(fd, c, n, MSG_DONTWAIT) : read(fd, c, n);
		wait = r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
		if (r < 0 && errno == ENOTSOCK) {
			sock = false;   /* a pipe: poll, then read */
			continue;
		}
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			*why = strerror(errno);
			return -1;
		}
		if (r == 0) {
			*why = "connection closed";
			return -1;
		}
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

int
proto_recv_fd(int fd, json_t **msg, int timeout_ms, const char **why)
{
	unsigned char hdr[4];
	uint32_t n;
	char *data;
	int64_t deadline = timeout_ms < 0 ? -1 : mono_ms() + timeout_ms;

	*msg = NULL;
	if (read_all(fd, hdr, 4, deadline, why) < 0)
		return -1;
	n = proto_frame_len(hdr);
	if (n == 0 || n > PROTO_MAX_FRAME) {
		*why = "bad frame length from peer";
		return -1;
	}
	data = proto_frame_buf(n);
	if (n < FRAME_BIG)
		mem_populate(data, n);
	if (read_all(fd, data, n, deadline, why) < 0) {
		proto_frame_buf_free(data);
		return -1;
	}
	*msg = proto_decode_taken(data, n, why);
	return *msg ? 0 : -1;
}

int
proto_recv_raw(int fd, void *p, size_t n, int timeout_ms, const char **why)
{
	return read_all(fd, p, n, timeout_ms < 0 ? -1 : mono_ms() + timeout_ms, why);
}

json_t *
proto_reply_ok(int64_t seq)
{
	return msg_reply_pack(&(struct msg_reply){ .seq = seq, .ok = true });
}

static json_t *reply_errv(int64_t, const char *, const char *, const char *, va_list) NOWQ_ATTR_PRINTF(4, 0);

static json_t *
reply_errv(int64_t seq, const char *code, const char *master, const char *fmt, va_list ap)
{
	char msg[1024];
	json_t *rep;

	vsnprintf(msg, sizeof msg, fmt, ap);
	/* The sentence may quote what a user sent, and the cut may split a
	 * character: jansson takes only UTF-8, and would give no reply. */
	utf8_scrub(msg);
	rep = msg_reply_pack(&(struct msg_reply){ .seq = seq, .ok = false, .error = code, .message = msg,
	    .master = master });
	assert(json_object_get(rep, "message"));
	return rep;
}

json_t *
proto_reply_err(int64_t seq, const char *code, const char *fmt, ...)
{
	va_list ap;
	json_t *rep;

	va_start(ap, fmt);
	rep = reply_errv(seq, code, NULL, fmt, ap);
	va_end(ap);
	return rep;
}

json_t *
proto_reply_redirect(int64_t seq, const char *master, const char *fmt, ...)
{
	va_list ap;
	json_t *rep;

	va_start(ap, fmt);
	rep = reply_errv(seq, ERR_REDIRECT, master, fmt, ap);
	va_end(ap);
	return rep;
}

json_t *
proto_text(const char *s)
{
	char *t = xstrdup(s);
	json_t *v;

	utf8_scrub(t);
	v = json_string(t);
	free(t);
	assert(v);
	return v;
}

const char *
jstr(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

int64_t
jint(const json_t *o, const char *key, int64_t dflt)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

bool
jbool(const json_t *o, const char *key, bool dflt)
{
	json_t *v = json_object_get(o, key);
	return json_is_boolean(v) ? json_is_true(v) : dflt;
}

json_t *
strv_json(char *const *v, bool skip_bad, const char **bad)
{
	json_t *a = json_array();
	for (; v && *v; v++) {
		json_t *s = json_string(*v);
		if (!s) {
			if (skip_bad)
				continue;
			*bad = *v;
			json_decref(a);
			return NULL;
		}
		json_array_append_new(a, s);
	}
	return a;
}
