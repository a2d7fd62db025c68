/* fuzz_proto.c: fuzz target of the wire protocol: frames on libevent buffers and on a socket, every typed message's unpack and every decoder of common/. */
#include "config.h"

#include <assert.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "common/common.h"
#include "common/msg_req.h"
#include "common/msg.h"
#include "common/msg_rows.h"
#include "t/fuzz/fuzz.h"

/* Small, so that the length checks are reached without huge inputs. */
#define FUZZ_MAX_FRAME 65536

/* What a decoder accepted must encode, and the encoding must decode: the
 * master stores jobs as JSON and reads them back, and sends them on. */
static void
job_round_trip(const json_t *o)
{
	const char *why = NULL;
	struct job *j = job_from_json(o, &why), *k;
	json_t *again;

	if (!j) {
		assert(why);
		return;
	}
	(void)job_state_letters(j);
	again = job_to_json(j);
	k = job_from_json(again, &why);
	assert(k);
	job_free(k);
	json_decref(again);
	job_free(j);
}

static void
req_round_trip(const json_t *o)
{
	struct job_req r, s;
	const char *why = NULL;
	json_t *again;

	memset(&r, 0, sizeof r);
	if (req_from_json(&r, o, &why) < 0) {
		req_clear(&r);
		return;
	}
	again = req_to_json(&r);
	memset(&s, 0, sizeof s);
	assert(req_from_json(&s, again, &why) == 0);
	req_clear(&s);
	req_clear(&r);
	json_decref(again);
}

static void
attrs_round_trip(const json_t *o)
{
	struct host_attrs a, b;
	const char *why = NULL;
	json_t *again;

	memset(&a, 0, sizeof a);
	if (host_attrs_from_json(&a, o, &why) < 0) {
		host_attrs_clear(&a);
		return;
	}
	again = host_attrs_to_json(&a);
	memset(&b, 0, sizeof b);
	assert(host_attrs_from_json(&b, again, &why) == 0);
	host_attrs_clear(&b);
	host_attrs_clear(&a);
	json_decref(again);
}

static void
rusage_round_trip(const json_t *o)
{
	struct job_rusage ru, back;
	const char *why = NULL;
	json_t *again;

	memset(&ru, 0, sizeof ru);
	if (rusage_from_json(&ru, o, &why) < 0)
		return;
	again = rusage_to_json(&ru);
	assert(rusage_from_json(&back, again, &why) == 0);
	json_decref(again);
}

/* Every client request's unpack, on the frame as its handler would get it
 * (of that type): what one accepts packs into a frame it accepts again, and
 * that frame is its own fixed point. */
static void
requests_round_trip(const json_t *msg)
{
	for (size_t i = 0; i < msg_req_ntypes; i++) {
		const struct msg_req_type *t = &msg_req_types[i];
		json_t *o = json_copy((json_t *)msg), *once, *twice;
		void *m = xcalloc(1, t->size);
		const char *why = NULL;

		json_object_set_new(o, "type", json_string(msg_type_name(t->type)));
		if (t->unpack(o, m, &why) < 0)
			assert(why);
		else {
			once = t->pack(m);
			memset(m, 0, t->size);
			assert(t->unpack(once, m, &why) == 0);
			twice = t->pack(m);
			assert(json_equal(once, twice));
			json_decref(twice);
			json_decref(once);
		}
		free(m);
		json_decref(o);
	}
}

/* Every typed message's unpack (common/msg.c), whatever the frame's type:
 * what one accepts must pack, and the pack must unpack again. */
static void
msg_round_trips(const json_t *msg)
{
	char err[512];

	for (size_t i = 0; i < msg_ndefs; i++) {
		const struct msg_def *d = &msg_defs[i];
		void *m = xcalloc(1, d->size), *m2 = xcalloc(1, d->size);
		json_t *again;

		if (d->unpack(msg, m, err, sizeof err) == 0) {
			again = d->pack(m);
			assert(json_is_object(again));
			assert(d->unpack(again, m2, err, sizeof err) == 0);
			if (d->clear)
				d->clear(m2);
			json_decref(again);
			if (d->clear)
				d->clear(m);
		} else
			assert(err[0] && !strchr(err, '\n'));
		free(m2);
		free(m);
	}
}

/* A list an unpack read, given to an add (which takes it over). */
static json_t *
ref(json_t *v)
{
	return v ? json_incref(v) : NULL;
}

/* The replies' lists (common/msg_rows.c), whatever the frame: what an
 * unpack reads, its add writes to a reply that unpacks to the same. */
static void
replies_round_trip(const json_t *msg)
{
	json_t *o = json_object();
	struct msg_status_reply st, st2;
	struct msg_hosts_reply ho, ho2;
	struct msg_cron_reply cr, cr2;
	struct msg_reserve_reply rr, rr2;
	struct msg_alias_reply ar, ar2;
	struct msg_masters_reply ma, ma2;
	struct msg_results rs, rs2;
	struct msg_acct_reply ac, ac2;
	struct msg_conf_reply cf, cf2;
	struct msg_takeover_reply tk, tk2;

	msg_status_reply_unpack(msg, &st);
	msg_hosts_reply_unpack(msg, &ho);
	msg_cron_reply_unpack(msg, &cr);
	msg_reserve_reply_unpack(msg, &rr);
	msg_alias_reply_unpack(msg, &ar);
	msg_masters_reply_unpack(msg, &ma);
	msg_results_unpack(msg, &rs);
	msg_acct_reply_unpack(msg, &ac);
	msg_conf_reply_unpack(msg, &cf);
	msg_takeover_reply_unpack(msg, &tk);
	(void)msg_status_reply_one(msg);
	msg_status_reply_add(o, &(struct msg_status_reply){ ref(st.jobs) });
	msg_hosts_reply_add(o, &(struct msg_hosts_reply){ ref(ho.hosts) });
	msg_cron_reply_add(o, &(struct msg_cron_reply){ ref(cr.entries) });
	msg_reserve_reply_add(o, &(struct msg_reserve_reply){ ref(rr.reservations), ref(rr.reservation) });
	msg_alias_reply_add(o, &(struct msg_alias_reply){ ref(ar.hosts), ref(ar.aliases), ref(ar.host) });
	msg_masters_reply_add(o, &(struct msg_masters_reply){ ref(ma.masters) });
	msg_results_add(o, &(struct msg_results){ ref(rs.results) });
	msg_acct_reply_add(o, &(struct msg_acct_reply){ ref(ac.rows), ref(ac.summary) });
	msg_conf_reply_add(o, &(struct msg_conf_reply){ ref(cf.queues), ref(cf.pes), ref(cf.managers),
	    ref(cf.operators), cf.text });
	msg_takeover_reply_add(o, &tk);
	msg_status_reply_unpack(o, &st2);
	msg_hosts_reply_unpack(o, &ho2);
	msg_cron_reply_unpack(o, &cr2);
	msg_reserve_reply_unpack(o, &rr2);
	msg_alias_reply_unpack(o, &ar2);
	msg_masters_reply_unpack(o, &ma2);
	msg_results_unpack(o, &rs2);
	msg_acct_reply_unpack(o, &ac2);
	msg_conf_reply_unpack(o, &cf2);
	msg_takeover_reply_unpack(o, &tk2);
	assert(st2.jobs == st.jobs && ho2.hosts == ho.hosts && cr2.entries == cr.entries);
	assert(rr2.reservations == rr.reservations && rr2.reservation == rr.reservation);
	assert(ar2.hosts == ar.hosts && ar2.aliases == ar.aliases && ar2.host == ar.host);
	assert(ma2.masters == ma.masters);
	assert(rs2.results == rs.results && ac2.rows == ac.rows && ac2.summary == ac.summary);
	assert(cf2.queues == cf.queues && cf2.pes == cf.pes && cf2.managers == cf.managers);
	assert(cf2.operators == cf.operators && tk2.epoch == tk.epoch);
	assert(cf.text ? cf2.text && strcmp(cf.text, cf2.text) == 0 : !cf2.text);
	json_decref(o);
}

/* DISPATCH's jobs as an execd reads them. */
static void
dispatch_jobs(const json_t *msg)
{
	struct msg_dispatch d;
	struct msg_dispatch_job dj;
	const char *why;
	char err[64];
	const json_t *e;
	size_t i;

	if (msg_dispatch_unpack(msg, &d, err, sizeof err) < 0)
		return;
	json_array_foreach(d.jobs, i, e) {
		why = NULL;
		if (msg_dispatch_job_unpack(e, &dj, &why) == 0)
			job_free(dj.job);
		else
			assert(why && !dj.job);
	}
}

/* Every decoder a message's fields can reach, whatever its type: a hostile
 * peer chooses the type too. */
static void
decode(const json_t *msg)
{
	const json_t *v, *e;
	const char *key;
	size_t i;

	(void)msg_type_name(msg_type_of(msg));
	requests_round_trip(msg);
	msg_round_trips(msg);
	replies_round_trip(msg);
	dispatch_jobs(msg);
	job_round_trip(json_object_get(msg, "job"));
	json_array_foreach(json_object_get(msg, "jobs"), i, e)
		job_round_trip(e);
	req_round_trip(json_object_get(msg, "req"));
	attrs_round_trip(json_object_get(msg, "attrs"));
	if ((v = json_object_get(msg, "rusage")) != NULL)
		rusage_round_trip(v);
	json_object_foreach((json_t *)json_object_get(msg, "tasks"), key, e) {
		struct task_range r;
		const char *s = json_string_value(e);
		if (s && task_range_parse(s, &r) == 0) {
			assert(r.first >= 1 && r.first <= r.last && r.last <= JOB_MAX_TASKS);
			free(task_pending_format(&r, NULL, 0));
		}
	}
}

static void
frames_on_buffer(const uint8_t *data, size_t size)
{
	struct evbuffer *buf = evbuffer_new();
	const char *why = NULL;
	json_t *msg;
	int r;

	evbuffer_add(buf, data, size);
	while ((r = proto_frame_take(buf, &msg, FUZZ_MAX_FRAME, &why)) == 1) {
		decode(msg);
		json_decref(msg);
	}
	assert(r == 0 || why);
	evbuffer_free(buf);
}

/* The clients' blocking reader, on a socket holding the input then EOF. */
static void
frames_on_socket(const uint8_t *data, size_t size)
{
	const char *why = NULL;
	json_t *msg;
	int sv[2];

	if (size > 65536 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return;
	set_nonblock(sv[0]);
	if (write(sv[0], data, size) != (ssize_t)size) {
		close(sv[0]);
		close(sv[1]);
		return;
	}
	shutdown(sv[0], SHUT_WR);
	while (proto_recv_fd(sv[1], &msg, 1000, &why) == 0) {
		decode(msg);
		json_decref(msg);
	}
	close(sv[0]);
	close(sv[1]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	frames_on_buffer(data, size);
	frames_on_socket(data, size);
	return 0;
}
