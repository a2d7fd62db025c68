/* test_qrsh.c: qrsh's stream codec (frames split and joined at every byte, oversized ones refused, bounded buffers through a real pipe) and the job's qrsh address, valid and malformed. */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"

#define SECRET "0123456789abcdef0123456789abcdef"

static void
test_addr(void **state)
{
	struct qrsh_addr a;
	static const char *const bad[] = {
		"", "host", "host 80", " 80 " SECRET, "host 0 " SECRET, "host 65536 " SECRET,
		"host 080 " SECRET, "host 80 " SECRET "0", "host 80 0123456789ABCDEF0123456789abcdef",
		"ho st 80 " SECRET, "host;rm 80 " SECRET, "host 80  " SECRET, "host -1 " SECRET,
	};

	(void)state;
	assert_int_equal(job_qrsh_parse("node-1.example.org 40123 " SECRET, &a), 0);
	assert_string_equal(a.host, "node-1.example.org");
	assert_int_equal(a.port, 40123);
	assert_string_equal(a.secret, SECRET);
	assert_int_equal(job_qrsh_parse("::1 1 " SECRET, &a), 0);
	assert_string_equal(a.host, "::1");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(job_qrsh_parse(bad[i], &a), -1);
}

/* A job object's qrsh is checked by job_from_json, and public views hide it. */
static void
test_job_field(void **state)
{
	const char *why = NULL;
	json_t *o = json_pack("{s:[s], s:s}", "argv", "true", "qrsh", "h 9 " SECRET);
	struct job *j = job_from_json(o, &why);

	(void)state;
	assert_non_null(j);
	assert_string_equal(j->qrsh, "h 9 " SECRET);
	json_decref(o);
	o = job_to_json(j);
	job_json_public(o);
	assert_true(json_is_true(json_object_get(o, "qrsh")));
	json_decref(o);
	job_free(j);
	o = json_pack("{s:[s], s:s}", "argv", "true", "qrsh", "h 9 nothex");
	assert_null(job_from_json(o, &why));
	json_decref(o);
	o = json_pack("{s:s, s:s}", "script", "true\n", "qrsh", "h 9 " SECRET);
	assert_null(job_from_json(o, &why));
	assert_string_equal(why, "a qrsh job is a command, not a script");
	json_decref(o);
}

static void
test_frames(void **state)
{
	struct qrsh_buf out = { 0 }, in = { 0 };
	char big[QRSH_PAYLOAD_MAX];
	const char *data;
	size_t n;
	int type;

	(void)state;
	memset(big, 'x', sizeof big);
	qrsh_buf_frame(&out, QRSH_F_STDOUT, "hello", 5);
	qrsh_buf_frame(&out, QRSH_F_EOF, NULL, 0);
	qrsh_buf_frame(&out, QRSH_F_STDERR, big, sizeof big);
	/* Fed a byte at a time, each frame appears exactly when whole. */
	for (size_t i = 0; i < out.len; i++) {
		qrsh_buf_add(&in, out.p + i, 1);
		if (i == QRSH_HEADER + 5 - 1) {
			assert_int_equal(qrsh_frame_take(&in, &type, &data, &n), 1);
			assert_int_equal(type, QRSH_F_STDOUT);
			assert_int_equal(n, 5);
			assert_memory_equal(data, "hello", 5);
		} else if (i == 2 * QRSH_HEADER + 5 - 1) {
			assert_int_equal(qrsh_frame_take(&in, &type, &data, &n), 1);
			assert_int_equal(type, QRSH_F_EOF);
			assert_int_equal(n, 0);
		} else if (i == out.len - 1) {
			assert_int_equal(qrsh_frame_take(&in, &type, &data, &n), 1);
			assert_int_equal(n, sizeof big);
			assert_memory_equal(data, big, sizeof big);
		} else
			assert_int_equal(qrsh_frame_take(&in, &type, &data, &n), 0);
	}
	assert_int_equal(QRSH_PENDING(&in), 0);
	/* One byte more than the largest payload is a broken peer. */
	qrsh_buf_add(&in, "O\x00\x01\x00\x01", 5);
	assert_int_equal(qrsh_frame_take(&in, &type, &data, &n), -1);
	qrsh_buf_free(&out);
	qrsh_buf_free(&in);
}

/* Through a non-blocking pipe: flush stops at a full pipe and keeps the
 * rest; fill reads what there is and says when the writer is gone. */
static void
test_pipe(void **state)
{
	struct qrsh_buf out = { 0 }, in = { 0 };
	char chunk[QRSH_DATA_CHUNK];
	int p[2], frames = 0, type;
	size_t n, total = 0;
	const char *data;

	(void)state;
	assert_int_equal(pipe2(p, O_NONBLOCK), 0);
	memset(chunk, 'y', sizeof chunk);
	for (int i = 0; i < 64; i++)
		qrsh_buf_frame(&out, QRSH_F_STDOUT, chunk, sizeof chunk);
	assert_int_equal(qrsh_buf_flush(&out, p[1]), 0);
	assert_true(QRSH_PENDING(&out) > 0);     /* the pipe holds 64 KiB, not 1 MiB */
	while (QRSH_PENDING(&out) || total < 64 * sizeof chunk) {
		assert_int_equal(qrsh_buf_fill(&in, p[0], QRSH_DATA_CHUNK), 1);
		while (qrsh_frame_take(&in, &type, &data, &n) == 1) {
			frames++;
			total += n;
		}
		assert_int_equal(qrsh_buf_flush(&out, p[1]), 0);
	}
	assert_int_equal(frames, 64);
	close(p[1]);
	assert_int_equal(qrsh_buf_fill(&in, p[0], QRSH_DATA_CHUNK), 0);
	close(p[0]);
	qrsh_buf_free(&out);
	qrsh_buf_free(&in);
}

static void
test_signals(void **state)
{
	(void)state;
	assert_true(qrsh_signal_ok(SIGINT));
	assert_true(qrsh_signal_ok(SIGTSTP));
	assert_true(qrsh_signal_ok(SIGWINCH));
	assert_false(qrsh_signal_ok(SIGSEGV));
	assert_false(qrsh_signal_ok(0));
	assert_false(qrsh_signal_ok(-1));
	assert_false(qrsh_signal_ok(1000));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addr),
		cmocka_unit_test(test_job_field),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_pipe),
		cmocka_unit_test(test_signals),
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("qrsh", tests, NULL, NULL);
}
