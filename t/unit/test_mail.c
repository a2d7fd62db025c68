/* test_mail.c: the messages nowq mails about jobs: each kind's headers and body, and their safety against hostile names, paths and addresses. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/common.h"

#define T0 1763800000000LL   /* some November 2025 instant */

static struct job *
mkjob(void)
{
	struct job *j = job_new();
	j->id = 12;
	j->name = xstrdup("sim");
	j->owner = xstrdup("alice");
	j->queue = xstrdup("all.q");
	j->host = xstrdup("node1");
	j->start_time = T0;
	j->end_time = T0 + 3723000;
	j->utime = 61;
	j->stime = 2;
	j->maxrss_kb = 2048;
	return j;
}

/* The header block: every line up to the first empty one. */
static char *
headers(const char *msg)
{
	const char *end = strstr(msg, "\n\n");
	assert_non_null(end);
	return strndup(msg, (size_t)(end - msg) + 1);
}

static void
test_kinds(void **state)
{
	static const struct { enum mail_event ev; const char *subject; } kinds[] = {
		{ MAIL_EV_BEGIN, "Subject: Job 12 (sim) Started\n" },
		{ MAIL_EV_END, "Subject: Job 12 (sim) Complete\n" },
		{ MAIL_EV_ABORT, "Subject: Job 12 (sim) Aborted\n" },
		{ MAIL_EV_SUSPEND, "Subject: Job 12 (sim) Suspended\n" },
	};
	struct job *j = mkjob();

	(void)state;
	setenv("TZ", "UTC0", 1);
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		char *m = mail_compose(kinds[i].ev, j, "alice", "nowq@head", T0), *h = headers(m);
		assert_non_null(strstr(h, "From: nowq@head\n"));
		assert_non_null(strstr(h, "To: alice\n"));
		assert_non_null(strstr(h, kinds[i].subject));
		assert_non_null(strstr(h, "Date: "));
		assert_non_null(strstr(h, "Message-ID: <nowq.12."));
		assert_non_null(strstr(m, " User             = alice\n"));
		assert_non_null(strstr(m, " Queue            = all.q@node1\n"));
		if (kinds[i].ev == MAIL_EV_BEGIN)
			assert_null(strstr(m, "Exit Status"));
		else {
			assert_non_null(strstr(m, " Wallclock Time   = 01:02:03\n"));
			assert_non_null(strstr(m, " User Time        = 00:01:01\n"));
			assert_non_null(strstr(m, " CPU              = 00:01:03\n"));
			assert_non_null(strstr(m, " Max rss          = 2048K\n"));
			assert_non_null(strstr(m, " Exit Status      = 0\n"));
		}
		free(h);
		free(m);
	}
	j->state = JS_FAILED;
	j->exit_status = 137;
	j->signal = 9;
	j->reason = xstrdup("h_rt limit (60 s) exceeded");
	char *m = mail_compose(MAIL_EV_ABORT, j, "alice", "nowq@head", T0);
	assert_non_null(strstr(m, " Signal           = 9\n"));
	assert_non_null(strstr(m, " Failure reason   = h_rt limit (60 s) exceeded\n"));
	free(m);
	m = mail_compose_admin("root", "nowq@head", "host node3 lost", "jobs 1, 2 requeued", T0);
	assert_non_null(strstr(m, "Subject: host node3 lost\n"));
	assert_non_null(strstr(m, "\n\njobs 1, 2 requeued\n"));
	free(m);
	job_free(j);
}

/* Nothing a user controls can add a header or end the header block. */
static void
test_injection(void **state)
{
	struct job *j = mkjob();
	char *m, *h;

	(void)state;
	free(j->name);
	j->name = xstrdup("x\r\nBcc: victim@example.com\n\nbody");
	free(j->reason);
	j->reason = xstrdup("line1\nTo: evil");
	j->state = JS_FAILED;
	m = mail_compose(MAIL_EV_ABORT, j, "alice\nCc: evil", "nowq@head", T0);
	h = headers(m);
	assert_null(strstr(h, "\nBcc:"));
	assert_null(strstr(h, "\nCc:"));
	assert_null(strstr(m, "\nTo: evil"));
	assert_non_null(strstr(h, "Subject: Job 12 (x??Bcc: victim@example.com??body) Aborted\n"));
	free(h);
	free(m);
	job_free(j);
}

static void
test_addresses_and_flags(void **state)
{
	static const char *const good[] = { "alice", "alice@example.com", "a.b+c@x-y.org", NULL };
	static const char *const bad[] = { "", "-oQ", "a b", "a,b", "a\nb", "<a@b>", "\"a\"@b", "@b", "a@",
		NULL };
	unsigned f;

	(void)state;
	for (int i = 0; good[i]; i++)
		assert_true(mail_valid_address(good[i]));
	for (int i = 0; bad[i]; i++)
		assert_false(mail_valid_address(bad[i]));
	assert_int_equal(mail_flags_parse("bea", &f), 0);
	assert_int_equal(f, MAIL_BEGIN | MAIL_END | MAIL_ABORT);
	assert_int_equal(mail_flags_parse("s", &f), 0);
	assert_int_equal(f, MAIL_SUSPEND);
	assert_int_equal(mail_flags_parse("n", &f), 0);
	assert_int_equal(f, 0);
	assert_int_equal(mail_flags_parse("bn", &f), -1);
	assert_int_equal(mail_flags_parse("x", &f), -1);
	assert_int_equal(mail_flags_parse("", &f), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_injection),
		cmocka_unit_test(test_addresses_and_flags),
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("mail", tests, NULL, NULL);
}
