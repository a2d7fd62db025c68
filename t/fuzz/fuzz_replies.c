/* fuzz_replies.c: fuzz target of what clients make of a master's replies: qstat's views and -xml, qstat -j, qhost's, from any frame. */
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
	struct qhost_view all = { NULL, true, NULL, true, true };
	struct qhost_view plain = { NULL, false, NULL, false, false };
	struct qstat_xml x = { sink, QX_EXT | QX_REQ, 0 };
	struct msg_status_reply st;
	struct msg_hosts_reply hr;
	struct msg_job_row *rows;
	const json_t *e;
	size_t n, i;

	if ((rows = msg_job_rows_unpack(rep, &n)) != NULL) {
		qstat_print_table(sink, rows, n);
		qstat_view_rows(sink, rows, n, QV_EXT, false, true);
		qstat_view_rows(sink, rows, n, QV_PRI, false, true);
		qstat_xml_begin(&x);
		x.flags = QX_EXT;
		qstat_xml_rows(&x, rows, n);
		qstat_xml_end(&x);
		msg_job_rows_free(rows);
	}
	msg_status_reply_unpack(rep, &st);
	json_array_foreach(st.jobs, i, e) {
		struct msg_job_row r;
		msg_job_row_unpack(e, &r);
		qstat_print_row(sink, &r);
		qstat_print_job(sink, e);
		qstat_view_rows(sink, &r, 1, QV_PLAIN, true, true);
	}
	qstat_xml_jobs(sink, st.jobs, json_object_get(rep, "missing"));
	msg_hosts_reply_unpack(rep, &hr);
	if (hr.hosts) {
		qhost_print(sink, hr.hosts, &all);
		qhost_print(sink, hr.hosts, &plain);
		qhost_xml(sink, hr.hosts, &all);
		qstat_print_cqueues(sink, hr.hosts);
		qstat_xml_cqueues(sink, hr.hosts);
		x.flags = QX_FULL;
		qstat_xml_begin(&x);
		qstat_xml_queues(&x, hr.hosts, NULL, 0);
		qstat_xml_end(&x);
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
