/* test_msg_req.c: unit tests of the client requests' pack and unpack pairs and their table (common/msg_req.c). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/msg_req.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_covers_client_requests),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_round_trip),
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
