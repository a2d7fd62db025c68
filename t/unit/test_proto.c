/* test_proto.c: unit tests of the wire framing (common/proto.c, common/proto_ev.c) and the job record's JSON form (common/job.c). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/buffer.h>

#include "common/common.h"
#include "common/msg_rows.h"

/* Builders of raw bytes, so malformed frames can be made on purpose. */

static void
put_frame(struct evbuffer *b, const void *payload, uint32_t len, size_t actual)
{
	uint32_t be = htonl(len);

	evbuffer_add(b, &be, 4);
	if (actual)
		evbuffer_add(b, payload, actual);
}

static void
put_text(struct evbuffer *b, const char *s)
{
	put_frame(b, s, (uint32_t)strlen(s), strlen(s));
}

static json_t *
msg(int i)
{
	/* Non-ASCII and escapes travel too. */
	return json_pack("{s:s, s:i, s:s, s:[i, s]}", "type", i % 2 ? "SUBMIT" : "REPLY",
	    "seq", i, "text", "caf\xc3\xa9 \"quoted\"\n\ttab", "list", i, "x");
}

/* Takes one frame that must be there and equal want. */
static void
take_equal(struct evbuffer *b, const json_t *want)
{
	json_t *got = NULL;
	const char *why = NULL;

	assert_int_equal(proto_frame_take(b, &got, PROTO_MAX_FRAME, &why), 1);
	assert_non_null(got);
	assert_true(json_equal(got, want));
	json_decref(got);
}

static void
take_none(struct evbuffer *b)
{
	json_t *got = (json_t *)1;
	const char *why = NULL;

	assert_int_equal(proto_frame_take(b, &got, PROTO_MAX_FRAME, &why), 0);
	assert_null(got);
}

/* Expects the stream to be refused; returns the reason. */
static const char *
take_bad(struct evbuffer *b, size_t max)
{
	json_t *got = (json_t *)1;
	const char *why = NULL;

	assert_int_equal(proto_frame_take(b, &got, max, &why), -1);
	assert_null(got);
	assert_non_null(why);
	return why;
}

/* Framing on evbuffers. */

static void
test_frame_one(void **state)
{
	struct evbuffer *b = evbuffer_new();
	json_t *m = msg(1);
	const char *why = NULL;
	unsigned char hdr[4];
	char *text = json_dumps(m, JSON_COMPACT);

	take_none(b);
	assert_int_equal(proto_frame_append(b, m, PROTO_MAX_FRAME, &why), 0);
	/* 4-byte big-endian length, then the compact JSON. */
	assert_int_equal(evbuffer_get_length(b), 4 + strlen(text));
	evbuffer_copyout(b, hdr, 4);
	assert_int_equal((size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 | (size_t)hdr[2] << 8 | hdr[3],
	    strlen(text));
	take_equal(b, m);
	assert_int_equal(evbuffer_get_length(b), 0);
	take_none(b);
	free(text);
	json_decref(m);
	evbuffer_free(b);
}

static void
test_frames_back_to_back(void **state)
{
	struct evbuffer *b = evbuffer_new();
	const char *why = NULL;
	json_t *m[5];

	for (int i = 0; i < 5; i++) {
		m[i] = msg(i);
		assert_int_equal(proto_frame_append(b, m[i], PROTO_MAX_FRAME, &why), 0);
	}
	for (int i = 0; i < 5; i++)
		take_equal(b, m[i]);
	take_none(b);
	assert_int_equal(evbuffer_get_length(b), 0);
	for (int i = 0; i < 5; i++)
		json_decref(m[i]);
	evbuffer_free(b);
}

/* The stream may be cut anywhere: every split point, and one byte at a time. */
static void
test_frames_split_everywhere(void **state)
{
	struct evbuffer *all = evbuffer_new();
	const char *why = NULL;
	json_t *m[3];
	unsigned char *bytes;
	size_t len;

	for (int i = 0; i < 3; i++) {
		m[i] = msg(i);
		assert_int_equal(proto_frame_append(all, m[i], PROTO_MAX_FRAME, &why), 0);
	}
	len = evbuffer_get_length(all);
	bytes = xmalloc(len);
	evbuffer_copyout(all, bytes, len);

	for (size_t k = 0; k <= len; k++) {
		struct evbuffer *b = evbuffer_new();
		json_t *got;
		int n = 0, rc;

		evbuffer_add(b, bytes, k);
		while ((rc = proto_frame_take(b, &got, PROTO_MAX_FRAME, &why)) == 1) {
			assert_true(n < 3);
			assert_true(json_equal(got, m[n]));
			json_decref(got);
			n++;
		}
		assert_int_equal(rc, 0);
		evbuffer_add(b, bytes + k, len - k);
		while ((rc = proto_frame_take(b, &got, PROTO_MAX_FRAME, &why)) == 1) {
			assert_true(n < 3);
			assert_true(json_equal(got, m[n]));
			json_decref(got);
			n++;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(n, 3);
		assert_int_equal(evbuffer_get_length(b), 0);
		evbuffer_free(b);
	}

	{
		struct evbuffer *b = evbuffer_new();
		json_t *got;
		int n = 0, rc;

		for (size_t k = 0; k < len; k++) {
			evbuffer_add(b, bytes + k, 1);
			while ((rc = proto_frame_take(b, &got, PROTO_MAX_FRAME, &why)) == 1) {
				assert_true(n < 3);
				assert_true(json_equal(got, m[n]));
				json_decref(got);
				n++;
			}
			assert_int_equal(rc, 0);
		}
		assert_int_equal(n, 3);
		evbuffer_free(b);
	}
	for (int i = 0; i < 3; i++)
		json_decref(m[i]);
	free(bytes);
	evbuffer_free(all);
}

static void
test_frame_oversized(void **state)
{
	struct evbuffer *b = evbuffer_new();
	json_t *m = msg(1), *got;
	const char *why = NULL;

	/* Refused as soon as the length is known: the body is never awaited
	 * (only the 4 header bytes are there) nor allocated. */
	put_frame(b, NULL, 0xffffffffu, 0);
	take_bad(b, PROTO_MAX_FRAME);
	evbuffer_drain(b, evbuffer_get_length(b));
	put_frame(b, NULL, PROTO_MAX_FRAME + 1, 0);
	take_bad(b, PROTO_MAX_FRAME);
	evbuffer_drain(b, evbuffer_get_length(b));
	/* Exactly the limit is allowed: it waits for the rest. */
	put_frame(b, NULL, PROTO_MAX_FRAME, 0);
	take_none(b);
	evbuffer_drain(b, evbuffer_get_length(b));
	/* A smaller limit is honoured both ways. */
	put_text(b, "{\"type\":\"HELLO\"}");
	take_bad(b, 10);
	evbuffer_drain(b, evbuffer_get_length(b));
	put_text(b, "{\"type\":\"HELLO\"}");
	assert_int_equal(proto_frame_take(b, &got, 16, &why), 1);
	json_decref(got);
	why = NULL;
	assert_int_equal(proto_frame_append(b, m, 10, &why), -1);
	assert_non_null(why);
	assert_int_equal(evbuffer_get_length(b), 0);
	json_decref(m);
	evbuffer_free(b);
}

static void
test_frame_malformed(void **state)
{
	static const char *bad[] = {
		"{\"type\":",                             /* malformed JSON */
		"{\"type\":\"HELLO\"} trailing",          /* garbage after the object */
		"not json at all",
		"[1, 2, 3]",                              /* not an object */
		"\"HELLO\"",
		"42",
		"null",
		"{\"seq\": 1}",                           /* no type */
		"{\"type\": 5}",                          /* type not a text */
		"{\"type\": null}",
		"{\"type\":\"HELLO\",\"type\":\"REPLY\"}", /* duplicate keys */
		"{\"type\":\"HELLO\",\"seq\":1,\"seq\":2}",
		"{\"type\":\"HELLO\",\"s\":\"a\\u0000b\"}", /* NUL inside a text */
		"{\"type\":\"caf\xc3\"}",                  /* not UTF-8 */
	};

	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct evbuffer *b = evbuffer_new();
		put_text(b, bad[i]);
		take_bad(b, PROTO_MAX_FRAME);
		evbuffer_free(b);
	}
	{
		/* A raw NUL byte inside the payload. */
		struct evbuffer *b = evbuffer_new();
		put_frame(b, "{\"type\":\"H\0\"}", 13, 13);
		take_bad(b, PROTO_MAX_FRAME);
		evbuffer_free(b);
	}
	{
		/* Zero length. */
		struct evbuffer *b = evbuffer_new();
		put_frame(b, NULL, 0, 0);
		take_bad(b, PROTO_MAX_FRAME);
		evbuffer_free(b);
	}
}

static void
test_frame_truncated(void **state)
{
	struct evbuffer *b = evbuffer_new();
	const char *full = "{\"type\":\"HELLO\",\"seq\":7}";
	json_t *got;
	const char *why = NULL;

	/* Fewer than 4 header bytes, then a header and part of the body. */
	evbuffer_add(b, "\0\0", 2);
	take_none(b);
	evbuffer_drain(b, 2);
	put_frame(b, full, (uint32_t)strlen(full), 10);
	take_none(b);
	take_none(b);   /* asking again changes nothing */
	assert_int_equal(evbuffer_get_length(b), 14);
	evbuffer_add(b, full + 10, strlen(full) - 10);
	assert_int_equal(proto_frame_take(b, &got, PROTO_MAX_FRAME, &why), 1);
	assert_int_equal(jint(got, "seq", 0), 7);
	json_decref(got);
	evbuffer_free(b);
}

/* Framing on sockets. */

struct pair {
	int a, b;
};

static struct pair
pair_new(void)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	return (struct pair){ sv[0], sv[1] };
}

static void
pair_close(struct pair *p)
{
	if (p->a >= 0)
		close(p->a);
	if (p->b >= 0)
		close(p->b);
	p->a = p->b = -1;
}

static void
write_raw(int fd, const void *p, size_t n)
{
	assert_int_equal(write(fd, p, n), (ssize_t)n);
}

static void
write_frame_raw(int fd, const void *payload, uint32_t len, size_t actual)
{
	uint32_t be = htonl(len);

	write_raw(fd, &be, 4);
	if (actual)
		write_raw(fd, payload, actual);
}

static const char *
recv_bad(int fd, int timeout_ms)
{
	json_t *got = (json_t *)1;
	const char *why = NULL;

	assert_int_equal(proto_recv_fd(fd, &got, timeout_ms, &why), -1);
	assert_null(got);
	assert_non_null(why);
	return why;
}

static void
test_fd_roundtrip(void **state)
{
	struct pair p = pair_new();
	json_t *m[4], *got;
	const char *why = NULL;
	pid_t pid;
	int status;
	char *big;

	for (int i = 0; i < 3; i++)
		m[i] = msg(i);
	/* A frame far larger than a socket buffer: the writer must loop. */
	big = xmalloc(3u * 1024 * 1024 + 1);
	memset(big, 'x', 3u * 1024 * 1024);
	big[3u * 1024 * 1024] = '\0';
	m[3] = json_pack("{s:s, s:s}", "type", "SUBMIT", "script", big);
	free(big);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int rc = 0;

		close(p.a);
		for (int i = 0; i < 4; i++) {
			if (rc == 0 && proto_send_fd(p.b, m[i]) < 0)
				rc = 1;
			json_decref(m[i]);   /* so leak checkers in the child stay quiet */
		}
		_exit(rc);
	}
	close(p.b);
	p.b = -1;
	for (int i = 0; i < 4; i++) {
		assert_int_equal(proto_recv_fd(p.a, &got, 10000, &why), 0);
		assert_true(json_equal(got, m[i]));
		json_decref(got);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("sender ended with status 0x%x", status);
	/* The writer is gone: the next read says so. */
	assert_string_equal(recv_bad(p.a, -1), "connection closed");
	for (int i = 0; i < 4; i++)
		json_decref(m[i]);
	pair_close(&p);
}

static void
test_fd_send_oversized(void **state)
{
	struct pair p = pair_new();
	char *big = xmalloc(PROTO_MAX_FRAME + 1);
	json_t *m;
	pid_t pid;
	int status;

	memset(big, 'y', PROTO_MAX_FRAME);
	big[PROTO_MAX_FRAME] = '\0';
	m = json_pack("{s:s, s:s}", "type", "SUBMIT", "script", big);
	free(big);
	/* A frame the peer would refuse is not sent at all.  In a child, so
	 * a sender that tried (and blocked, nobody reading) dies by the alarm. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int rc;

		close(p.b);
		alarm(5);
		rc = proto_send_fd(p.a, m) == -1 ? 0 : 1;
		json_decref(m);
		_exit(rc);
	}
	close(p.a);
	p.a = -1;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_string_equal(recv_bad(p.b, 1000), "connection closed");
	json_decref(m);
	pair_close(&p);
}

static void
test_fd_malformed(void **state)
{
	static const char *bad[] = {
		"{\"type\":",
		"[1, 2]",
		"\"HELLO\"",
		"{\"seq\": 1}",
		"{\"type\":\"HELLO\",\"type\":\"REPLY\"}",
	};

	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct pair p = pair_new();
		write_frame_raw(p.a, bad[i], (uint32_t)strlen(bad[i]), strlen(bad[i]));
		recv_bad(p.b, 1000);
		pair_close(&p);
	}
	{
		struct pair p = pair_new();
		write_frame_raw(p.a, NULL, 0, 0);
		recv_bad(p.b, 1000);
		pair_close(&p);
	}
}

static void
test_fd_oversized(void **state)
{
	uint32_t lens[] = { 0xffffffffu, PROTO_MAX_FRAME + 1 };

	for (size_t i = 0; i < 2; i++) {
		struct pair p = pair_new();
		int64_t t0 = mono_ms();

		/* The writer stays open and sends nothing more: a reader that
		 * tried to read (or allocate) the body would wait out the timeout. */
		write_frame_raw(p.a, NULL, lens[i], 0);
		assert_string_equal(recv_bad(p.b, 5000), "bad frame length from peer");
		assert_true(mono_ms() - t0 < 2000);
		pair_close(&p);
	}
}

static void
test_fd_truncated(void **state)
{
	const char *full = "{\"type\":\"HELLO\",\"seq\":7}";
	struct pair p;

	/* Closed after part of the body. */
	p = pair_new();
	write_frame_raw(p.a, full, (uint32_t)strlen(full), 10);
	close(p.a);
	p.a = -1;
	assert_string_equal(recv_bad(p.b, 1000), "connection closed");
	pair_close(&p);

	/* Closed inside the header. */
	p = pair_new();
	write_raw(p.a, "\0\0", 2);
	close(p.a);
	p.a = -1;
	assert_string_equal(recv_bad(p.b, 1000), "connection closed");
	pair_close(&p);

	/* Closed before anything. */
	p = pair_new();
	close(p.a);
	p.a = -1;
	assert_string_equal(recv_bad(p.b, -1), "connection closed");
	pair_close(&p);

	/* Still open but silent: the timeout ends the wait. */
	p = pair_new();
	write_frame_raw(p.a, full, (uint32_t)strlen(full), 10);
	{
		int64_t t0 = mono_ms();
		assert_non_null(strstr(recv_bad(p.b, 100), "timed out"));
		assert_true(mono_ms() - t0 >= 90);
	}
	pair_close(&p);
}

static void
test_msg_types(void **state)
{
	json_t *r;

	for (int t = 1; t < MSG_NTYPES; t++)
		assert_int_equal(msg_type_lookup(msg_type_name((enum msg_type)t)), t);
	assert_int_equal(msg_type_lookup("NOPE"), MSG_UNKNOWN);
	assert_int_equal(msg_type_lookup(NULL), MSG_UNKNOWN);
	assert_string_equal(msg_type_name((enum msg_type)999), "UNKNOWN");
	r = proto_reply_ok(12);
	assert_int_equal(msg_type_of(r), MSG_REPLY);
	assert_int_equal(jint(r, "seq", 0), 12);
	assert_true(jbool(r, "ok", false));
	json_decref(r);
	r = proto_reply_err(13, ERR_INVAL, "bad %s", "thing");
	assert_false(jbool(r, "ok", true));
	assert_string_equal(jstr(r, "error"), "invalid");
	assert_string_equal(jstr(r, "message"), "bad thing");
	json_decref(r);
}

/* The job record. */

static char **
strv(const char *first, ...)
{
	char **v = xcalloc(16, sizeof *v);
	va_list ap;
	int n = 0;

	va_start(ap, first);
	for (const char *s = first; s; s = va_arg(ap, const char *))
		v[n++] = xstrdup(s);
	va_end(ap);
	return v;
}

static struct job *
full_job(void)
{
	struct job *j = job_new();

	j->id = 123456789012LL;
	j->task = 7;
	j->attempt = 3;
	j->name = xstrdup("name with spaces");
	j->owner = xstrdup("alice");
	j->uid = 4000000000u;
	j->gid = 1001;
	j->groups = xcalloc(3, sizeof *j->groups);
	j->groups[0] = 27;
	j->groups[1] = 4000000001u;
	j->ngroups = 2;
	j->queue = xstrdup("long.q");
	j->prio = -1023;
	j->script = xstrdup("#!/bin/sh\necho \"caf\xc3\xa9\" $1\n");
	j->argv = strv("/bin/echo", "", "two words", NULL);
	j->args = strv("a1", "a2", NULL);
	j->shell = xstrdup("/bin/bash");
	j->cwd = xstrdup("/work");
	j->home = xstrdup("/home/alice");
	j->out_path = xstrdup("/tmp/out");
	j->err_path = xstrdup("/tmp/err");
	j->in_path = xstrdup("/tmp/in");
	j->join = true;
	j->env = strv("A=1", "B=", "C=x=y", NULL);
	j->submit_host = xstrdup("sub");
	j->submit_time = 1700000000001LL;
	j->start_time = 1700000000002LL;
	j->end_time = 1700000000003LL;
	j->state = JS_RUNNING;
	j->hold = HOLD_USER;
	j->error = true;
	j->delete_req = true;
	j->host = xstrdup("node9");
	j->pid = 65000;
	j->exit_status = 137;
	j->signal = 9;
	j->reason = xstrdup("killed");
	j->utime = 1.5;
	j->stime = 3.0;
	j->maxrss_kb = 1LL << 40;
	return j;
}

static void
assert_strv_equal(char **a, char **b)
{
	if (!a || !b) {
		assert_true(a == b);
		return;
	}
	for (size_t i = 0;; i++) {
		if (!a[i] || !b[i]) {
			assert_true(!a[i] && !b[i]);
			return;
		}
		assert_string_equal(a[i], b[i]);
	}
}

static void
assert_opt_string(const char *a, const char *b)
{
	if (!a || !b)
		assert_true(a == b);
	else
		assert_string_equal(a, b);
}

/* Through JSON text, as it travels. */
static struct job *
through_json(const struct job *j)
{
	json_t *o = job_to_json(j), *back;
	char *text = json_dumps(o, JSON_COMPACT);
	json_error_t jerr;
	const char *why = NULL;
	struct job *k;

	back = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	assert_non_null(back);
	k = job_from_json(back, &why);
	if (!k)
		fail_msg("job_from_json refused its own output: %s", why);
	json_decref(o);
	json_decref(back);
	free(text);
	return k;
}

static void
assert_job_same(const struct job *a, const struct job *b)
{
	assert_int_equal(a->id, b->id);
	assert_int_equal(a->task, b->task);
	assert_int_equal(a->attempt, b->attempt);
	assert_opt_string(a->name, b->name);
	assert_opt_string(a->owner, b->owner);
	assert_int_equal(a->uid, b->uid);
	assert_int_equal(a->gid, b->gid);
	assert_int_equal(a->ngroups, b->ngroups);
	for (int i = 0; i < a->ngroups; i++)
		assert_int_equal(a->groups[i], b->groups[i]);
	assert_opt_string(a->queue, b->queue);
	assert_int_equal(a->prio, b->prio);
	assert_opt_string(a->script, b->script);
	assert_strv_equal(a->argv, b->argv);
	assert_strv_equal(a->args, b->args);
	assert_opt_string(a->shell, b->shell);
	assert_opt_string(a->cwd, b->cwd);
	assert_opt_string(a->home, b->home);
	assert_opt_string(a->out_path, b->out_path);
	assert_opt_string(a->err_path, b->err_path);
	assert_opt_string(a->in_path, b->in_path);
	assert_int_equal(a->join, b->join);
	/* No environment travels as an empty list. */
	if (a->env || (b->env && b->env[0]))
		assert_strv_equal(a->env, b->env);
	assert_opt_string(a->submit_host, b->submit_host);
	assert_int_equal(a->submit_time, b->submit_time);
	assert_int_equal(a->start_time, b->start_time);
	assert_int_equal(a->end_time, b->end_time);
	assert_int_equal(a->state, b->state);
	assert_int_equal(a->hold, b->hold);
	assert_int_equal(a->error, b->error);
	assert_int_equal(a->delete_req, b->delete_req);
	assert_opt_string(a->host, b->host);
	assert_int_equal(a->pid, b->pid);
	assert_int_equal(a->exit_status, b->exit_status);
	assert_int_equal(a->signal, b->signal);
	assert_opt_string(a->reason, b->reason);
	assert_true(a->utime == b->utime);
	assert_true(a->stime == b->stime);
	assert_int_equal(a->maxrss_kb, b->maxrss_kb);
}

static void
test_job_roundtrip(void **state)
{
	struct job *j = full_job(), *k;

	k = through_json(j);
	assert_job_same(j, k);
	job_free(k);

	/* Every state, and the opposite flags. */
	for (int s = JS_PENDING; s <= JS_DELETED; s++) {
		j->state = (enum job_state)s;
		j->join = j->error = j->delete_req = (s % 2) == 0;
		j->hold = 0;
		k = through_json(j);
		assert_job_same(j, k);
		job_free(k);
	}
	job_free(j);

	/* A job with nothing set comes back with nothing set. */
	j = job_new();
	k = through_json(j);
	assert_job_same(j, k);
	assert_null(k->argv);
	assert_null(k->script);
	job_free(k);
	job_free(j);
}

/* Takes full_job's JSON, changes one field, and expects a refusal. */
static void
refuse(const char *key, json_t *value)
{
	struct job *j = full_job(), *k;
	json_t *o = job_to_json(j);
	const char *why = NULL;

	if (value)
		json_object_set_new(o, key, value);
	else
		json_object_del(o, key);
	k = job_from_json(o, &why);
	if (k)
		fail_msg("job_from_json accepted a bad \"%s\"", key);
	assert_non_null(why);
	json_decref(o);
	job_free(j);
}

static void
test_job_from_json_rejects(void **state)
{
	char *big;
	const char *why = NULL;

	refuse("prio", json_integer(2000));
	refuse("prio", json_integer(-1024));
	refuse("prio", json_string("5"));
	refuse("prio", json_real(1.5));
	refuse("uid", json_integer(-1));
	refuse("uid", json_integer(4294967296LL));
	refuse("gid", json_integer(-1));
	refuse("id", json_integer(-1));
	refuse("id", json_string("12"));
	refuse("task", json_integer(-1));
	refuse("hold", json_integer(256));
	refuse("signal", json_integer(129));
	refuse("exit_status", json_integer(65536));
	refuse("pid", json_integer(-1));
	refuse("submit_time", json_integer(-5));
	refuse("env", json_pack("[s, s]", "A=1", "NOEQUALS"));
	refuse("env", json_pack("[s]", "=value"));
	refuse("env", json_pack("[i]", 3));
	refuse("env", json_string("A=1"));
	refuse("argv", json_pack("[s, i]", "/bin/echo", 5));
	refuse("argv", json_array());
	refuse("argv", json_pack("{s:s}", "a", "b"));
	refuse("args", json_pack("[b]", 1));
	refuse("script", json_stringn("echo a\0b", 8));
	refuse("script", json_integer(1));
	refuse("name", json_stringn("a\0", 2));
	refuse("name", json_true());
	refuse("state", json_string("zombie"));
	refuse("state", json_string(""));
	refuse("state", json_integer(2));
	refuse("groups", json_pack("[i, i]", 1, -1));
	refuse("groups", json_pack("[s]", "wheel"));
	refuse("groups", json_integer(1));
	refuse("join", json_string("yes"));
	refuse("error", json_integer(1));
	refuse("delete_req", json_string("true"));
	refuse("utime", json_string("1.5"));
	refuse("stime", json_real(-1));
	big = xmalloc(JOB_MAX_SCRIPT + 2);
	memset(big, 'x', JOB_MAX_SCRIPT + 1);
	big[JOB_MAX_SCRIPT + 1] = '\0';
	refuse("script", json_string(big));
	big[JOB_MAX_STRING + 1] = '\0';
	refuse("owner", json_string(big));
	free(big);
	/* Not an object at all. */
	{
		json_t *a = json_array();
		assert_null(job_from_json(a, &why));
		assert_non_null(why);
		json_decref(a);
	}
	/* Limits themselves are fine. */
	{
		struct job *j = full_job(), *k;
		j->prio = 1024;
		j->exit_status = -1;
		j->signal = 128;
		k = through_json(j);
		assert_job_same(j, k);
		job_free(k);
		job_free(j);
	}
}

/* Every size limit is refused with a sentence that names it; at the limit
 * a job passes. */
static void
limit_says(const char *key, json_t *value, const char *want)
{
	struct job *j = full_job(), *k;
	json_t *o = job_to_json(j);
	const char *why = NULL;

	json_object_set_new(o, key, value);
	k = job_from_json(o, &why);
	if (k)
		fail_msg("job_from_json accepted \"%s\" over its limit", key);
	assert_non_null(why);
	if (!strstr(why, want))
		fail_msg("\"%s\": said \"%s\", wanted \"%s\"", key, why, want);
	assert_null(strchr(why, '\n'));
	json_decref(o);
	job_free(j);
}

static json_t *
strings(size_t n, size_t len)
{
	json_t *a = json_array();
	char *s = xmalloc(len + 3);
	memset(s, 'v', len + 2);
	s[0] = 'V';
	s[1] = '=';
	s[len + 2] = '\0';
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(s));
	free(s);
	return a;
}

static void
test_job_limits(void **state)
{
	char *big = xmalloc(JOB_MAX_SCRIPT + 2);
	json_t *o;
	struct job *j;
	const char *why = NULL;

	memset(big, 'x', JOB_MAX_SCRIPT + 1);
	big[JOB_MAX_SCRIPT + 1] = '\0';
	limit_says("script", json_string(big), "the job's script is 1048577 bytes, more than the limit of 1048576");
	big[JOB_MAX_STRING + 1] = '\0';
	limit_says("cwd", json_string(big), "the job's cwd is 4097 bytes, more than the limit of 4096");
	free(big);
	limit_says("argv", strings(JOB_MAX_ARGV + 1, 1), "the job's argv has 4097 entries, more than the limit of 4096");
	limit_says("env", strings(JOB_MAX_ENV + 1, 1), "the job's env has 4097 entries, more than the limit of 4096");
	/* 300 variables of 4 KiB: few, but more bytes than execve could take. */
	limit_says("env", strings(300, 4096), "arguments and environment take more than the limit of 1048576 bytes");
	limit_says("t_last", json_integer(JOB_MAX_TASKS + 1), "array task 1000001 is above the limit of 1000000");
	/* At the limits. */
	j = full_job();
	o = job_to_json(j);
	job_free(j);
	json_object_set_new(o, "env", strings(JOB_MAX_ENV, 1));
	json_object_set_new(o, "t_first", json_integer(1));
	json_object_set_new(o, "t_last", json_integer(JOB_MAX_TASKS));
	json_object_set_new(o, "t_step", json_integer(1));
	j = job_from_json(o, &why);
	if (!j)
		fail_msg("refused at the limits: %s", why);
	job_free(j);
	json_decref(o);

	/* Names: the length limit keeps NAME.oID.TASK a file name. */
	big = xmalloc(JOB_MAX_NAME + 2);
	memset(big, 'n', JOB_MAX_NAME + 1);
	big[JOB_MAX_NAME + 1] = '\0';
	assert_false(job_valid_name(big));
	assert_non_null(strstr(job_name_problem(big), "201 bytes, more than the limit of 200"));
	big[JOB_MAX_NAME] = '\0';
	assert_true(job_valid_name(big));
	free(big);
	assert_true(job_valid_name("a b'c\"d$(x);`y`%s%n<>|&"));
	assert_false(job_valid_name("a\nb"));
	assert_false(job_valid_name("a\x1b" "[31m"));
	assert_false(job_valid_name("a\x7f"));
	assert_false(job_valid_name("a/b"));
	assert_false(job_valid_name(""));
	assert_null(job_deps_problem(JOB_MAX_DEPS));
	assert_string_equal(job_deps_problem(JOB_MAX_DEPS + 1),
	    "a job may wait for at most 10000 jobs (-hold_jid, -W depend), not 10001");
}

/* Control characters in a text for a log or a listing become escapes. */
static void
test_text_oneline(void **state)
{
	char buf[16], *s;

	s = text_oneline("a\nb\tc\rd\x1b" "e\x7f\\f");
	assert_string_equal(s, "a\\nb\\tc\\rd\\x1be\\x7f\\f");
	free(s);
	s = text_oneline("plain text, \"quoted\" and 'single'");
	assert_string_equal(s, "plain text, \"quoted\" and 'single'");
	free(s);
	/* Cut at the end, never in the middle of an escape. */
	text_oneline_to(buf, sizeof buf, "0123456789abcd\n\n");
	assert_string_equal(buf, "0123456789abcd");
	text_oneline_to(buf, 1, "x");
	assert_string_equal(buf, "");
}

/* Text written by jtext reads back as the same values through jansson. */
static void
test_jtext(void **state)
{
	static const char *const texts[] = { "plain", "quo\"te", "back\\slash", "tab\tnew\nline\x01",
		"caf\xc3\xa9 \xe2\x9c\x93", "", NULL };
	struct jtext t = { 0 };
	json_t *o;
	size_t len, i;
	char *s;

	(void)state;
	jt_lit(&t, "[");
	for (i = 0; texts[i]; i++) {
		jt_str(&t, texts[i]);
		jt_lit(&t, ",");
	}
	jt_str(&t, NULL);
	jt_lit(&t, ",");
	jt_int(&t, INT64_MIN);
	jt_lit(&t, ",{");
	jt_key(&t, "k", true);
	jt_int(&t, 7);
	jt_key(&t, "l", false);
	jt_int(&t, -1);
	jt_lit(&t, "}]");
	s = jt_steal(&t, &len);
	assert_null(t.buf);
	assert_int_equal(len, strlen(s));
	o = json_loads(s, 0, NULL);
	assert_non_null(o);
	for (i = 0; texts[i]; i++)
		assert_string_equal(json_string_value(json_array_get(o, i)), texts[i]);
	assert_true(json_is_null(json_array_get(o, i)));
	assert_true(json_integer_value(json_array_get(o, i + 1)) == INT64_MIN);
	assert_int_equal(jint(json_array_get(o, i + 2), "l", 0), -1);
	json_decref(o);
	free(s);
}

/* A brief row has one value per column name. */
static void
test_job_brief_row(void **state)
{
	struct job *j = job_new();
	struct jtext t = { 0 };
	json_t *row;
	size_t n = 0;
	char *s;

	(void)state;
	j->id = 42;
	j->name = xstrdup("n\"1");
	j->state = JS_RUNNING;
	j->t_first = 1;
	j->t_last = 9;
	j->t_step = 2;
	job_brief_text(j, &t);
	s = jt_steal(&t, NULL);
	row = json_loads(s, 0, NULL);
	assert_non_null(row);
	while (job_brief_columns[n])
		n++;
	assert_int_equal(json_array_size(row), n);
	assert_int_equal(json_integer_value(json_array_get(row, 0)), 42);
	assert_string_equal(json_string_value(json_array_get(row, 2)), "n\"1");
	assert_string_equal(json_string_value(json_array_get(row, 9)), "r");
	assert_string_equal(job_brief_columns[9], "state_letters");
	json_decref(row);
	free(s);
	job_free(j);
}

/* A brief listing's text, of jobs named as given (a quote makes the
 * frame jansson's), with a cursor after the rows. */
static char *
brief_listing(const char *const *names, size_t n, size_t *len)
{
	struct jtext t = { 0 };

	jt_lit(&t, "{\"type\":\"REPLY\",\"seq\":7,\"ok\":true,");
	job_brief_head(&t);
	for (size_t i = 0; i < n; i++) {
		struct job *j = job_new();
		j->id = 100 + (int64_t)i;
		j->task = i == 1 ? 3 : 0;
		j->prio = i == 2 ? -500 : 0;
		j->submit_time = 1764322000123;
		j->name = xstrdup(names[i]);
		j->owner = xstrdup("\xc3\xa9mile");
		j->host = i == 1 ? xstrdup("h1") : NULL;
		j->slots = 4;
		j->state = i == 1 ? JS_RUNNING : JS_PENDING;
		if (i)
			jt_lit(&t, ",");
		job_brief_text_tasks(j, i == 2 ? "1-99:2" : NULL, &t);
		job_free(j);
	}
	jt_lit(&t, "],\"next\":{\"id\":102}}");
	return jt_steal(&t, len);
}

/* Brief rows read from the text are those jansson reads, or jansson reads
 * them itself; their block is the caller's. */
static void
test_job_rows_decode(void **state)
{
	static const char *const plain[] = { "a", "b b", "c" }, *const quoted[] = { "a", "q\"x", "c" };
	const char *const *sets[] = { plain, quoted };

	(void)state;
	for (size_t k = 0; k < 2; k++) {
		size_t len, na, nb;
		char *text = brief_listing(sets[k], 3, &len);
		const char *why = NULL;
		json_t *a, *b;
		struct msg_job_row *ra, *rb;

		a = proto_decode(text, len, &why);
		assert_non_null(a);
		ra = msg_job_rows_unpack(a, &na);
		msg_job_rows_native(true);
		b = proto_decode(text, len, &why);
		assert_non_null(b);
		assert_int_equal(json_is_integer(json_object_get(b, "rows")), k == 0);
		assert_int_equal(jint(json_object_get(b, "next"), "id", 0), 102);
		rb = msg_job_rows_unpack(b, &nb);
		assert_int_equal(na, 3);
		assert_int_equal(nb, 3);
		for (size_t i = 0; i < 3; i++) {
			assert_int_equal(ra[i].id, rb[i].id);
			assert_int_equal(ra[i].task, rb[i].task);
			assert_int_equal(ra[i].prio, rb[i].prio);
			assert_int_equal(ra[i].submit_time, rb[i].submit_time);
			assert_int_equal(ra[i].slots, rb[i].slots);
			assert_string_equal(ra[i].name, rb[i].name);
			assert_string_equal(rb[i].name, sets[k][i]);
			assert_string_equal(ra[i].owner, rb[i].owner);
			assert_string_equal(ra[i].state, rb[i].state);
			assert_int_equal(ra[i].host == NULL, rb[i].host == NULL);
			assert_int_equal(ra[i].tasks == NULL, rb[i].tasks == NULL);
		}
		assert_string_equal(rb[1].host, "h1");
		assert_string_equal(rb[2].tasks, "1-99:2");
		assert_int_equal(rb[2].prio, -500);
		msg_job_rows_free(ra);
		/* The block is lent until given back; the texts live in the
		 * frame until native reading is switched. */
		msg_job_rows_free(rb);
		msg_job_rows_native(false);
		json_decref(a);
		json_decref(b);
		free(text);
	}
	/* Malformed after the rows: refused, as jansson would. */
	{
		const char bad[] = "{\"type\":\"REPLY\",\"seq\":1,\"ok\":true,\"columns\":[\"id\"],\"rows\":[[1]],}";
		const char *why = NULL;

		msg_job_rows_native(true);
		assert_null(proto_decode(bad, sizeof bad - 1, &why));
		assert_non_null(why);
		msg_job_rows_native(false);
	}
}

/* CHILD_TERM's rusage: every field round-trips, garbage is refused. */
static void
test_rusage_json(void **state)
{
	struct job_rusage a, b, keep;
	struct rusage sys;
	const char *why = NULL;
	json_t *o;
	static const char *bad[] = {
		"[]", "{\"ru_utime\": \"1\"}", "{\"ru_stime\": -1}", "{\"ru_utime\": 1e300}",
		"{\"ru_maxrss\": -5}", "{\"ru_minflt\": 1.5}", "{\"ru_nivcsw\": null}",
		"{\"ru_inblock\": true}",
	};

	(void)state;
	memset(&sys, 0, sizeof sys);
	sys.ru_utime.tv_sec = 2;
	sys.ru_utime.tv_usec = 500000;
	sys.ru_stime.tv_usec = 250000;
	sys.ru_maxrss = 4096;
	sys.ru_nivcsw = 9;
	rusage_from_sys(&a, &sys);
	assert_true(a.utime == 2.5 && a.stime == 0.25);
	assert_int_equal(a.maxrss, 4096);
	for (int i = 0; i < RUSAGE_NINT; i++)
		rusage_set_int(&a, i, 100 + i);
	o = rusage_to_json(&a);
	/* utime, stime, the integers and maxvmem. */
	assert_int_equal(json_object_size(o), 3 + RUSAGE_NINT);
	assert_int_equal(rusage_from_json(&b, o, &why), 0);
	assert_memory_equal(&a, &b, sizeof a);
	/* A field a newer execd may add is skipped. */
	json_object_set_new(o, "ru_future", json_string("x"));
	assert_int_equal(rusage_from_json(&b, o, &why), 0);
	json_decref(o);
	keep = b;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		o = json_loads(bad[i], JSON_DECODE_ANY, NULL);
		assert_non_null(o);
		why = NULL;
		assert_int_equal(rusage_from_json(&b, o, &why), -1);
		assert_non_null(why);
		assert_memory_equal(&b, &keep, sizeof b);
		json_decref(o);
	}
	assert_int_equal(rusage_from_json(&b, NULL, &why), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_one),
		cmocka_unit_test(test_frames_back_to_back),
		cmocka_unit_test(test_frames_split_everywhere),
		cmocka_unit_test(test_frame_oversized),
		cmocka_unit_test(test_frame_malformed),
		cmocka_unit_test(test_frame_truncated),
		cmocka_unit_test(test_fd_roundtrip),
		cmocka_unit_test(test_fd_send_oversized),
		cmocka_unit_test(test_fd_malformed),
		cmocka_unit_test(test_fd_oversized),
		cmocka_unit_test(test_fd_truncated),
		cmocka_unit_test(test_msg_types),
		cmocka_unit_test(test_job_roundtrip),
		cmocka_unit_test(test_job_from_json_rejects),
		cmocka_unit_test(test_job_limits),
		cmocka_unit_test(test_text_oneline),
		cmocka_unit_test(test_jtext),
		cmocka_unit_test(test_job_brief_row),
		cmocka_unit_test(test_job_rows_decode),
		cmocka_unit_test(test_rusage_json),
	};

	signal(SIGPIPE, SIG_IGN);
	log_init("test_proto", LOG_LVL_WARN, NULL);
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
