/* fuzz_replies.c: fuzz target of what clients make of a master's replies: qstat's rows and qstat -j, qhost's table, from any frame. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <event2/buffer.h>

#include "common/common.h"
#include "client/client.h"
#include "t/fuzz/fuzz.h"

/* The printers' output goes nowhere; only their reading of the reply counts. */
static FILE *sink;

static void
print_reply(const json_t *rep)
{
	struct qhost_view all = { NULL, true, NULL, true };
	struct qhost_view plain = { NULL, false, NULL, false };
	struct msg_job_row *rows;
	const json_t *e;
	size_t n, i;

	if ((rows = msg_job_rows_unpack(rep, &n)) != NULL) {
		qstat_print_table(sink, rows, n);
		free(rows);
	}
	json_array_foreach(json_object_get(rep, "jobs"), i, e) {
		struct msg_job_row r;
		msg_job_row_unpack(e, &r);
		qstat_print_row(sink, &r);
		qstat_print_job(sink, e);
	}
	if (json_is_array(json_object_get(rep, "hosts"))) {
		qhost_print(sink, json_object_get(rep, "hosts"), &all);
		qhost_print(sink, json_object_get(rep, "hosts"), &plain);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evbuffer *buf = evbuffer_new();
	const char *why = NULL;
	json_t *msg;

	if (!sink && (sink = fopen("/dev/null", "w")) == NULL)
		fatal("/dev/null");
	evbuffer_add(buf, data, size);
	while (proto_frame_take(buf, &msg, 65536, &why) == 1) {
		print_reply(msg);
		json_decref(msg);
	}
	evbuffer_free(buf);
	return 0;
}
