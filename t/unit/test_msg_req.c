/* test_msg_req.c: unit tests of the client requests' pack and unpack pairs and their table (common/msg_req.c). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/msg.h"
#include "common/msg_req.h"
#include "common/msg_rows.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

/* Every client request type of doc/protocol.md has a row, and only those. */
static void
test_table_covers_client_requests(void **state)
{
	static const enum msg_type want[] = {
		MSG_SUBMIT, MSG_STATUS, MSG_DELETE, MSG_HOLD, MSG_RELEASE, MSG_WAIT, MSG_HOSTS, MSG_ACCT,
		MSG_ALTER, MSG_CONF, MSG_CRON, MSG_RESERVE, MSG_UNRESERVE, MSG_ALIAS, MSG_DISABLE,
		MSG_ENABLE, MSG_SUSPEND, MSG_UNSUSPEND, MSG_CLEAR, MSG_INHERIT, MSG_STAGE_PUT, MSG_STAGE_GET,
	};
	(void)state;
	assert_int_equal(msg_req_ntypes, sizeof want / sizeof want[0]);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		assert_non_null(msg_req_type_of(want[i]));
	assert_null(msg_req_type_of(MSG_HELLO));
	assert_null(msg_req_type_of(MSG_REGISTER));
}

/* A frame's unpack by its type's row: NULL when accepted, else the refusal. */
static const char *
refusal(const char *text)
{
	json_error_t err;
	json_t *o = json_loads(text, 0, &err);
	const struct msg_req_type *t;
	const char *why = NULL;
	void *m;
	int rc;

	assert_non_null(o);
	t = msg_req_type_of(msg_type_of(o));
	assert_non_null(t);
	m = calloc(1, t->size);
	rc = t->unpack(o, m, &why);
	free(m);
	json_decref(o);
	assert_true(rc == 0 ? why == NULL : why != NULL);
	return why;
}

/* The refusals are the handlers' sentences, in the order they check. */
static void
test_refusals(void **state)
{
	(void)state;
	assert_null(refusal("{\"type\": \"DELETE\", \"jobs\": [1, 2]}"));
	assert_string_equal(refusal("{\"type\": \"HOLD\"}"), "no job ids or users given");
	assert_string_equal(refusal("{\"type\": \"DELETE\", \"jobs\": [0]}"), "a job id must be a positive integer");
	assert_string_equal(refusal("{\"type\": \"DELETE\", \"jobs\": 1, \"users\": 2}"),
	    "users must be a list of user names");
	assert_string_equal(refusal("{\"type\": \"CLEAR\", \"jobs\": [1], \"tasks\": {}}"),
	    "tasks must be an object of task ranges, and CLEAR takes none");
	assert_string_equal(refusal("{\"type\": \"HOLD\", \"jobs\": [1], \"tasks\": [1]}"),
	    "tasks must be an object of task ranges, and CLEAR takes none");
	assert_null(refusal("{\"type\": \"SUSPEND\", \"jobs\": [1], \"tasks\": {\"1\": \"2\"}}"));
	assert_null(refusal("{\"type\": \"STATUS\", \"states\": 7}"));
	assert_null(refusal("{\"type\": \"WAIT\", \"id\": 4, \"task\": 2}"));
	assert_string_equal(refusal("{\"type\": \"WAIT\", \"id\": 4, \"task\": -1}"),
	    "task must be a positive task id");
	assert_string_equal(refusal("{\"type\": \"STATUS\", \"states\": \"q\"}"),
	    "states must be letters from p, r, z, a");
	assert_string_equal(refusal("{\"type\": \"STATUS\", \"jobs\": [1], \"limit\": 5}"),
	    "after and limit (1..100000) go with a listing, not jobs");
	assert_string_equal(refusal("{\"type\": \"STATUS\", \"order\": \"prio\"}"),
	    "order \"prio\" (with after_prio) lists pending jobs: states \"p\", no jobs");
	assert_null(refusal("{\"type\": \"STATUS\", \"order\": \"prio\", \"states\": \"p\", \"after_prio\": 3}"));
	assert_string_equal(refusal("{\"type\": \"ACCT\", \"limit\": 1001}"),
	    "ACCT takes id, name, owner, since, queue, host, group, pe, slots, from, to, by_end, "
	    "summary (total, or host, queue, owner, group, pe and slots joined by commas), after "
	    "and limit (1..1000)");
	assert_null(refusal("{\"type\": \"ACCT\", \"summary\": \"group,pe,slots\", \"slots\": 2}"));
	assert_non_null(refusal("{\"type\": \"ACCT\", \"slots\": -1}"));
	assert_non_null(refusal("{\"type\": \"ACCT\", \"summary\": \"owner,owner\"}"));
	assert_non_null(refusal("{\"type\": \"ACCT\", \"summary\": \"host,\"}"));
	assert_non_null(refusal("{\"type\": \"ACCT\", \"summary\": \"project\"}"));
	assert_non_null(refusal("{\"type\": \"ACCT\", \"from\": -1}"));
	assert_non_null(refusal("{\"type\": \"ACCT\", \"host\": 7}"));
	assert_string_equal(refusal("{\"type\": \"ACCT\", \"after\": [1]}"), "ACCT after must be [end_time, row]");
	assert_string_equal(refusal("{\"type\": \"ALTER\", \"jobs\": []}"), "no job ids given");
	assert_null(refusal("{\"type\": \"ALTER\", \"jobs\": [3], \"prio\": \"high\"}"));
	assert_string_equal(refusal("{\"type\": \"CONF\", \"op\": \"edit\"}"), "CONF op must be list, show, global or reload");
	assert_null(refusal("{\"type\": \"CRON\", \"action\": \"list\", \"ids\": \"x\"}"));
	assert_string_equal(refusal("{\"type\": \"CRON\", \"action\": \"hold\"}"),
	    "CRON hold needs ids: a list of entry numbers");
	assert_string_equal(refusal("{\"type\": \"CRON\", \"action\": \"delete\", \"ids\": [-1]}"),
	    "a cron entry id is a positive integer");
	assert_string_equal(refusal("{\"type\": \"DISABLE\", \"targets\": [\"\"]}"),
	    "targets must be a list of queue or host names");
	assert_string_equal(refusal("{\"type\": \"SUBMIT\", \"key\": \"short\"}"),
	    "a submission key must have 16 to 64 characters");
	assert_string_equal(refusal("{\"type\": \"RESERVE\", \"op\": \"drop\"}"), "RESERVE op must be list or create");
	assert_string_equal(refusal("{\"type\": \"ALIAS\"}"),
	    "ALIAS op must be add, delete, show, expr, mhost or shost");
	assert_null(refusal("{\"type\": \"WAIT\", \"id\": \"x\"}"));
}

/* What a client packs, the master unpacks to the same fields. */
static void
test_round_trip(void **state)
{
	json_t *users = json_pack("[s]", "*"), *o;
	struct msg_status s = { .users = users, .states = "p", .brief = true, .by_prio = true, .limit = 50,
	    .after = 7, .has_after_prio = true, .after_prio = -3 }, t = { 0 };
	struct msg_acct a = { .name = "x", .limit = 10, .has_after = true, .after_end = 5, .after_row = 9,
	    .queue = "all.q", .host = "h1", .from = 3, .to = 4, .by_end = true, .summary = "host,owner" },
	    b = { 0 };
	struct msg_wait w = { .id = 12, .task = 3 }, v = { 0 };
	const char *why = NULL;

	(void)state;
	o = msg_status_pack(&s);
	assert_int_equal(msg_status_unpack(o, &t, &why), 0);
	assert_ptr_equal(t.users, users);
	assert_string_equal(t.states, "p");
	assert_true(t.brief && t.by_prio && t.has_after_prio);
	assert_int_equal(t.limit, 50);
	assert_int_equal(t.after, 7);
	assert_int_equal(t.after_prio, -3);
	json_decref(o);
	o = msg_acct_pack(&a);
	assert_int_equal(msg_acct_unpack(o, &b, &why), 0);
	assert_string_equal(b.name, "x");
	assert_int_equal(b.limit, 10);
	assert_true(b.has_after && b.after_end == 5 && b.after_row == 9);
	assert_string_equal(b.queue, "all.q");
	assert_string_equal(b.host, "h1");
	assert_true(b.from == 3 && b.to == 4 && b.by_end);
	assert_int_equal(b.groups, MSG_ACCT_BY_HOST | MSG_ACCT_BY_OWNER);
	json_decref(o);
	o = msg_wait_pack(&w);
	assert_int_equal(msg_wait_unpack(o, &v, &why), 0);
	assert_true(v.id == 12 && v.task == 3);
	json_decref(o);
	json_decref(users);
}

/* The words inside `...` of the last cell (the reply's) of the row of
 * doc/protocol.md whose first cell names type (a row of "DELETE, HOLD,
 * RELEASE" names three), each a run of letters, digits and _, as "word
 * word ..." with a blank around each; NULL when no row names it. */
static char *
doc_row_words(const char *type)
{
	FILE *fp = fopen(TOP_SRCDIR "/doc/protocol.md", "r");
	static char line[16384];
	char *words = NULL;

	assert_non_null(fp);
	while (!words && fgets(line, sizeof line, fp)) {
		char first[512], *tok, *save = NULL, *end, *cell = NULL, *last = NULL;
		bool in = false;
		size_t n = 0, cap;

		if (line[0] != '|' || (end = strchr(line + 1, '|')) == NULL)
			continue;
		snprintf(first, sizeof first, "%.*s", (int)(end - line - 1), line + 1);
		for (tok = strtok_r(first, ", ", &save); tok && !in; tok = strtok_r(NULL, ", ", &save))
			in = strcmp(tok, type) == 0;
		if (!in)
			continue;
		/* The cells' bars, but not \| inside one. */
		for (char *c = end; *c; c++)
			if (*c == '|' && c[-1] != '\\') {
				cell = last;
				last = c;
			}
		assert_non_null(cell);
		*last = '\0';
		cap = 2 * strlen(line) + 2;
		words = calloc(1, cap);
		words[n++] = ' ';
		in = false;
		for (const char *c = cell; *c; c++) {
			if (*c == '`')
				in = !in;
			else if (in && (isalnum((unsigned char)*c) || *c == '_'))
				words[n++] = *c;
			else if (in && words[n - 1] != ' ')
				words[n++] = ' ';
			if (!in && words[n - 1] != ' ')
				words[n++] = ' ';
		}
	}
	fclose(fp);
	return words;
}

/* Every key of o, at any depth, is a word of words. */
static void
keys_documented(const char *type, const char *words, const json_t *o)
{
	const char *k;
	json_t *v;
	size_t i;
	char w[128];

	if (json_is_array(o))
		json_array_foreach(o, i, v)
			keys_documented(type, words, v);
	if (!json_is_object(o))
		return;
	json_object_foreach((json_t *)o, k, v) {
		snprintf(w, sizeof w, " %s ", k);
		if (!strstr(words, w))
			fail_msg("%s's reply has %s, which its row of doc/protocol.md does not name", type, k);
		keys_documented(type, words, v);
	}
}

static json_t *
names(void)
{
	return json_pack("[s]", "x");
}

/* A reply of each type with every field its add and its rows' packs can
 * write (job objects and accounting records aside: doc/protocol.md says
 * theirs in the text); the row of that type in doc/protocol.md names
 * each key. */
static void
test_replies_documented(void **state)
{
	struct host_attrs attrs = { .arch = "x86_64", .mem = 1, .rating = 1.0 };
	struct msg_host_row h = { .name = "h1", .state = "idle", .busy_reason = "b", .vmem_limit = "rlimit",
	    .attrs = attrs, .reserved = { true, "r", "u", 0, 2 }, .queues = json_array(), .jobs = json_array() };
	struct msg_host_row h2 = { .name = "h2", .state = "idle", .attrs = attrs,
	    .reserved_next = { true, "r", "u", 1, 2 } };
	struct msg_master_row mr = { .name = "m", .role = "primary", .has_epoch = true, .has_seq = true,
	    .has_lag = true, .has_in_sync = true, .has_since = true, .has_writable = true, .has_quiet = true,
	    .self = true, .state = "s" };
	struct msg_acct_sum sum = { "h", "q", "o", "g", "pe", true, 1, 1, 0, 0, 0, 0 };
	struct msg_host_lists hl = { "h", names(), names(), names(), { true, "r", "u", 0, 2 } };
	json_t *alias_hosts = names();
	struct {
		const char *type;
		json_t     *rep;
	} c[16];
	size_t n = 0;

	(void)state;
	msg_host_queue_add(h.queues, &(struct msg_host_queue){ "all.q", false, 1 });
#define REPLY(t)	(c[n].type = (t), c[n++].rep = json_object())
	REPLY("STATUS");
	msg_status_reply_add(c[n - 1].rep, &(struct msg_status_reply){ json_array() });
	msg_status_next_add(c[n - 1].rep, &(struct msg_status_next){ true, 5, true, 3 });
	REPLY("HOSTS");
	msg_hosts_reply_add(c[n - 1].rep, &(struct msg_hosts_reply){ json_pack("[o, o]",
	    msg_host_row_pack(&h), msg_host_row_pack(&h2)) });
	REPLY("CRON");
	msg_cron_reply_add(c[n - 1].rep, &(struct msg_cron_reply){ json_pack("[o]",
	    msg_cron_row_pack(&(struct msg_cron_row){ 1, "u", "* * * * *", "n", 1, 2, "done", true, "q" })) });
	msg_results_add(c[n - 1].rep, &(struct msg_results){ json_array() });
	msg_result_add(json_object_get(c[n - 1].rep, "results"), &(struct msg_result){ .id = 1, .message = "m" });
	REPLY("RESERVE");
	msg_reserve_reply_add(c[n - 1].rep, &(struct msg_reserve_reply){ json_array(),
	    msg_resv_row_pack(&(struct msg_resv_row){ "r", "u", names(), names(), 1, 2, "active", true, true,
	    "be" }) });
	REPLY("ALIAS");
	msg_alias_reply_add(c[n - 1].rep, &(struct msg_alias_reply){ names(),
	    json_pack("[o]", msg_alias_row_pack(&(struct msg_alias_row){ "a", alias_hosts })),
	    msg_host_lists_pack(&hl) });
	json_decref(alias_hosts);   /* an alias row borrows its hosts */
	REPLY("MASTERS");
	msg_masters_reply_add(c[n - 1].rep, &(struct msg_masters_reply){ json_pack("[o]",
	    msg_master_row_pack(&mr)) });
	REPLY("TAKEOVER");
	msg_takeover_reply_add(c[n - 1].rep, &(struct msg_takeover_reply){ 2 });
	REPLY("ACCT");
	msg_acct_reply_add(c[n - 1].rep, &(struct msg_acct_reply){ json_array(),
	    json_pack("[o]", msg_acct_sum_pack(&sum)) });
	msg_acct_next_add(c[n - 1].rep, 1, 2);
	REPLY("CONF");
	msg_conf_reply_add(c[n - 1].rep, &(struct msg_conf_reply){ names(), names(), names(), names(), "t" });
	REPLY("DISABLE");
	msg_results_add(c[n - 1].rep, &(struct msg_results){ json_array() });
	msg_result_add(json_object_get(c[n - 1].rep, "results"), &(struct msg_result){ .target = "q",
	    .message = "m" });
	REPLY("DELETE");
	msg_results_add(c[n - 1].rep, &(struct msg_results){ json_array() });
	msg_result_add(json_object_get(c[n - 1].rep, "results"), &(struct msg_result){ .id = 1, .message = "m" });
#undef REPLY
	for (size_t i = 0; i < n; i++) {
		char *words = doc_row_words(c[i].type);

		if (!words)
			fail_msg("doc/protocol.md has no row for %s", c[i].type);
		keys_documented(c[i].type, words, c[i].rep);
		free(words);
		json_decref(c[i].rep);
	}
}

/* Each reply's unpack reads back what its add wrote, and nothing of a
 * reply whose lists are of another type. */
static void
test_replies_round_trip(void **state)
{
	json_t *rep = json_object(), *l = names(), *o = json_object();
	struct msg_hosts_reply hr;
	struct msg_reserve_reply rr;
	struct msg_alias_reply ar;
	struct msg_conf_reply cr;
	struct msg_takeover_reply tr;

	(void)state;
	msg_hosts_reply_add(rep, &(struct msg_hosts_reply){ json_incref(l) });
	msg_reserve_reply_add(rep, &(struct msg_reserve_reply){ NULL, json_incref(o) });
	msg_conf_reply_add(rep, &(struct msg_conf_reply){ .pes = json_incref(l), .text = "t" });
	msg_takeover_reply_add(rep, &(struct msg_takeover_reply){ 7 });
	msg_hosts_reply_unpack(rep, &hr);
	msg_reserve_reply_unpack(rep, &rr);
	msg_alias_reply_unpack(rep, &ar);
	msg_conf_reply_unpack(rep, &cr);
	msg_takeover_reply_unpack(rep, &tr);
	assert_ptr_equal(hr.hosts, l);
	assert_ptr_equal(rr.reservation, o);
	assert_null(rr.reservations);
	assert_ptr_equal(ar.hosts, l);
	assert_null(ar.aliases);
	assert_null(ar.host);
	assert_ptr_equal(cr.pes, l);
	assert_null(cr.queues);
	assert_string_equal(cr.text, "t");
	assert_int_equal(tr.epoch, 7);
	json_object_set_new(rep, "hosts", json_string("h"));
	json_object_set_new(rep, "reservation", json_array());
	msg_hosts_reply_unpack(rep, &hr);
	msg_reserve_reply_unpack(rep, &rr);
	assert_null(hr.hosts);
	assert_null(rr.reservation);
	json_decref(rep);
	json_decref(l);
	json_decref(o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_covers_client_requests),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_replies_documented),
		cmocka_unit_test(test_replies_round_trip),
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
