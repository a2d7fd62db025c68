/* test_msg.c: unit tests of the typed messages (common/msg.c): their table against doc/protocol.md, round trips and refusals. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/msg.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

/* The sections of doc/protocol.md whose tables msg_defs answers for. */
static const char *const msg_sections[] = { "## execd to master", "## master to execd", "## Masters:" };

/* Adds the types named in the first cell of each row of the table under
 * a heading starting with one of heads ("DELETE, HOLD, RELEASE" names three). */
static void
doc_types(const char *const *heads, size_t nheads, char names[][32], size_t *n)
{
	FILE *fp = fopen(TOP_SRCDIR "/doc/protocol.md", "r");
	char line[8192];
	bool in = false;

	assert_non_null(fp);
	while (fgets(line, sizeof line, fp)) {
		if (strncmp(line, "## ", 3) == 0) {
			in = false;
			for (size_t i = 0; i < nheads; i++)
				in |= strncmp(line, heads[i], strlen(heads[i])) == 0;
			continue;
		}
		if (!in || line[0] != '|' || strncmp(line, "| type", 6) == 0 || strncmp(line, "| ---", 5) == 0)
			continue;
		char *end = strchr(line + 1, '|'), *tok, *save = NULL;
		assert_non_null(end);
		*end = '\0';
		for (tok = strtok_r(line + 1, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
			assert_true(*n < 64);
			snprintf(names[(*n)++], 32, "%s", tok);
		}
	}
	fclose(fp);
}

static bool
named(char names[][32], size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

/* Every type of the execd and replication tables has an entry in msg_defs,
 * and every entry of msg_defs is in those tables, or is HELLO or REPLY,
 * which the text above them describes. */
static void
test_table_matches_doc(void **state)
{
	char names[64][32];
	size_t n = 0;

	(void)state;
	doc_types(msg_sections, sizeof msg_sections / sizeof msg_sections[0], names, &n);
	assert_true(n >= 18);
	for (size_t i = 0; i < n; i++) {
		const struct msg_def *d = msg_def_of(msg_type_lookup(names[i]));
		if (!d)
			fail_msg("doc/protocol.md names %s, which common/msg.c's msg_defs lacks", names[i]);
	}
	for (size_t i = 0; i < msg_ndefs; i++) {
		assert_string_equal(msg_defs[i].name, msg_type_name(msg_defs[i].type));
		if (msg_defs[i].type == MSG_HELLO || msg_defs[i].type == MSG_REPLY)
			continue;
		if (!named(names, n, msg_defs[i].name))
			fail_msg("msg_defs has %s, which no table of doc/protocol.md names", msg_defs[i].name);
	}
}

/* The client requests' table names only types the protocol knows, none of
 * them this table's. */
static void
test_client_table_known(void **state)
{
	static const char *const heads[] = { "## Client requests" };
	char names[64][32];
	size_t n = 0;

	(void)state;
	doc_types(heads, 1, names, &n);
	assert_true(n >= 10);
	for (size_t i = 0; i < n; i++) {
		assert_int_not_equal(msg_type_lookup(names[i]), MSG_UNKNOWN);
		assert_null(msg_def_of(msg_type_lookup(names[i])));
	}
}

/* One message of each type, as its senders write it. */
static const char *const samples[] = {
	"{\"type\":\"HELLO\",\"seq\":1,\"version\":1,\"role\":\"execd\",\"auth\":{\"method\":\"none\"},"
	    "\"uid\":0,\"nonce\":\"00112233445566778899aabbccddeeff\"}",
	"{\"type\":\"REPLY\",\"seq\":3,\"ok\":false,\"error\":\"invalid\",\"message\":\"no\"}",
	"{\"type\":\"REGISTER\",\"seq\":2,\"host\":\"h1\",\"slots\":4,\"uid\":0,\"load\":[0.5,1.0,1.5],"
	    "\"idle\":true,\"jobs\":[{\"id\":5,\"task\":0,\"attempt\":1}],\"attrs\":{\"arch\":\"x86_64\","
	    "\"mem\":1024,\"rating\":1.0,\"keys\":[\"fpu\"],\"mounts\":[]},\"vmem_limit\":\"rlimit\"}",
	"{\"type\":\"LOAD\",\"seq\":4,\"load\":[1.0,2.0,3.0],\"idle\":false,\"reason\":\"busy\","
	    "\"stopped\":[{\"id\":5,\"task\":0,\"attempt\":1}]}",
	"{\"type\":\"PULL\",\"seq\":5,\"free\":3}",
	"{\"type\":\"CHILD_REGISTER\",\"seq\":6,\"id\":5,\"task\":0,\"attempt\":1,\"host\":\"h1\","
	    "\"pid\":99,\"start_time\":1000}",
	"{\"type\":\"CHILD_TERM\",\"seq\":7,\"id\":5,\"task\":0,\"attempt\":1,\"host\":\"h1\","
	    "\"exit_status\":0,\"signal\":0,\"utime\":0.5,\"stime\":0.25,\"maxrss_kb\":10,"
	    "\"end_time\":2000,\"rusage\":{\"utime\":0.5,\"stime\":0.25}}",
	"{\"type\":\"DISPATCH\",\"seq\":5,\"jobs\":[]}",
	"{\"type\":\"SIGNAL\",\"id\":5,\"task\":0,\"attempt\":1,\"signal\":9}",
	"{\"type\":\"ACK\",\"seq\":7}",
	"{\"type\":\"PROBE\",\"seq\":2,\"epoch\":3,\"last\":40}",
	"{\"type\":\"SYNC\",\"seq\":2,\"epoch\":3,\"last\":40,\"schema\":12}",
	"{\"type\":\"SNAPSHOT\",\"seq\":40,\"epoch\":3,\"offset\":0,\"data\":\"AAAA\",\"last\":true}",
	"{\"type\":\"CHANGESET\",\"seq\":41,\"epoch\":3,\"cs\":\"AAAA\"}",
	"{\"type\":\"APPLIED\",\"seq\":0,\"applied\":41}",
	"{\"type\":\"HEARTBEAT\",\"epoch\":3,\"last\":41,\"t\":123}",
	"{\"type\":\"VOTE_REQUEST\",\"epoch\":4,\"timeout\":3000,\"candidate\":\"m2:7444\",\"last\":41,\"t\":9}",
	"{\"type\":\"VOTE\",\"seq\":0,\"epoch\":4,\"granted\":true,\"host\":\"h1\",\"t\":9}",
	"{\"type\":\"STAGE_BLOB\",\"sha256\":\"abababababababababababababababababababababababababababababababab\",\"size\":10,\"offset\":4,\"bytes\":6,\"uid\":1000,\"last\":true}",
	"{\"type\":\"STAGE_STORED\",\"seq\":0,\"sha256\":\"abababababababababababababababababababababababababababababababab\",\"size\":10}",
	"{\"type\":\"STAGE_OFFER\",\"seq\":0,\"files\":[{\"sha256\":\"abababababababababababababababababababababababababababababababab\",\"size\":10}]}",
	"{\"type\":\"STAGE_WANT\",\"seq\":0,\"files\":[],\"last\":true}",
	"{\"type\":\"MASTERS\",\"seq\":8}",
	"{\"type\":\"TAKEOVER\",\"seq\":9}",
};

/* Each sample unpacks, packs to itself, and its pack unpacks again. */
static void
test_round_trips(void **state)
{
	(void)state;
	assert_int_equal(sizeof samples / sizeof samples[0], msg_ndefs);
	for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
		json_t *o = json_loads(samples[i], 0, NULL), *p, *q;
		const struct msg_def *d;
		void *m = calloc(1, 4096), *m2 = calloc(1, 4096);
		char err[256];

		assert_non_null(o);
		d = msg_def_of(msg_type_of(o));
		assert_non_null(d);
		assert_true(d->size <= 4096);
		if (d->unpack(o, m, err, sizeof err) < 0)
			fail_msg("%s: %s", samples[i], err);
		p = d->pack(m);
		if (!json_equal(o, p))
			fail_msg("%s packs as %s", samples[i], json_dumps(p, JSON_COMPACT));
		assert_int_equal(d->unpack(p, m2, err, sizeof err), 0);
		q = d->pack(m2);
		assert_true(json_equal(p, q));
		if (d->clear) {
			d->clear(m);
			d->clear(m2);
		}
		json_decref(q);
		json_decref(p);
		json_decref(o);
		free(m);
		free(m2);
	}
}

static int
unpack_text(const char *text, char *err, size_t n)
{
	json_t *o = json_loads(text, 0, NULL);
	const struct msg_def *d = msg_def_of(msg_type_of(o));
	_Alignas(max_align_t) char m[4096];
	int rc = d->unpack(o, m, err, n);

	if (rc == 0 && d->clear)
		d->clear(m);
	json_decref(o);
	return rc;
}

/* The refusals say what the handlers answer. */
static void
test_refusals(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(unpack_text("{\"type\":\"HELLO\",\"version\":2,\"role\":\"client\"}", err, sizeof err), -1);
	assert_string_equal(err, "protocol version 2 is not 1");
	assert_int_equal(unpack_text("{\"type\":\"HELLO\",\"role\":\"client\"}", err, sizeof err), -1);
	assert_string_equal(err, "protocol version -1 is not 1");
	assert_int_equal(unpack_text("{\"type\":\"HELLO\",\"version\":1,\"role\":\"root\"}", err, sizeof err), -1);
	assert_string_equal(err, "HELLO needs role \"client\", \"execd\", \"peer\" or \"witness\"");
	assert_int_equal(unpack_text("{\"type\":\"REGISTER\",\"host\":\"a b\",\"slots\":1,\"uid\":0}", err,
	    sizeof err), -1);
	assert_string_equal(err, "REGISTER needs host, slots and uid");
	assert_int_equal(unpack_text("{\"type\":\"REGISTER\",\"host\":\"h\",\"slots\":100001,\"uid\":0}", err,
	    sizeof err), -1);
	assert_int_equal(unpack_text("{\"type\":\"REGISTER\",\"host\":\"h\",\"slots\":1,\"uid\":0,"
	    "\"attrs\":{\"mem\":\"lots\"}}", err, sizeof err), -1);
	assert_true(strncmp(err, "REGISTER: ", 10) == 0);
	assert_int_equal(unpack_text("{\"type\":\"SIGNAL\",\"id\":1,\"task\":0,\"attempt\":1,\"signal\":0}", err,
	    sizeof err), -1);
	assert_int_equal(unpack_text("{\"type\":\"DISPATCH\",\"jobs\":{}}", err, sizeof err), -1);
	assert_int_equal(unpack_text("{\"type\":\"VOTE\",\"granted\":true}", err, sizeof err), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_matches_doc),
		cmocka_unit_test(test_client_table_known),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_refusals),
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
