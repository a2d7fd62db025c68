/* test_stage.c: file staging's rules: which paths --stage-in and --stage-out take, SHA-256, task names, early writeback. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"

static void
test_paths(void **state)
{
	static const char *const good[] = { "a", "in.txt", "dir/sub/file", "a..b", ".hidden",
		"x/.y", "..z" };
	static const char *const bad[] = { "", "/etc/passwd", "..", "../x", "a/../b", "a/..",
		".", "./a", "a/./b", "a//b", "a/", "a,b", "a\nb", "a\tb" };
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		why = NULL;
		if (!stage_path_ok(good[i], &why))
			fail_msg("\"%s\" refused: %s", good[i], why);
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why = NULL;
		if (stage_path_ok(bad[i], &why))
			fail_msg("\"%s\" taken", bad[i]);
		assert_non_null(why);
	}
	assert_true(stage_pattern_ok("out/*.txt", &why));
	assert_true(stage_pattern_ok("res[0-9]?", &why));
	assert_false(stage_pattern_ok("../*", &why));
	assert_false(stage_pattern_ok("/tmp/*", &why));
	assert_false(stage_path_ok("/x", &why));
	assert_string_equal(why, "a staged path must be relative, not absolute");
}

static void
test_long_path(void **state)
{
	char p[STAGE_MAX_PATH + 2];
	const char *why;

	(void)state;
	memset(p, 'a', sizeof p - 1);
	p[sizeof p - 1] = '\0';
	assert_false(stage_path_ok(p, &why));
	p[STAGE_MAX_PATH] = '\0';
	assert_true(stage_path_ok(p, &why));
}

static void
hex_of(const char *data, size_t n, size_t step, const char *want)
{
	struct sha256 s;
	char out[SHA256_HEX + 1];

	sha256_init(&s);
	for (size_t off = 0; off < n; off += step)
		sha256_update(&s, data + off, n - off < step ? n - off : step);
	sha256_hex(&s, out);
	assert_string_equal(out, want);
}

/* FIPS 180-4's examples, whole and fed in uneven pieces. */
static void
test_sha256(void **state)
{
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	char *million = malloc(1000000);

	(void)state;
	hex_of("", 0, 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	hex_of("abc", 3, 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	hex_of(two, strlen(two), 7, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	memset(million, 'a', 1000000);
	hex_of(million, 1000000, 4099, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(million);
	assert_true(sha256_hex_ok("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
	assert_false(sha256_hex_ok("E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"));
	assert_false(sha256_hex_ok("e3b0"));
}

/* The disk writes of a file coming in start every STAGE_WRITEBACK bytes,
 * not for less. */
static void
test_writeback(void **state)
{
	char path[] = "/tmp/nowq-test-stage.XXXXXX", buf[4096] = { 0 };
	int fd = mkstemp(path);
	int64_t done = 0;

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	for (int i = 0; i < (STAGE_WRITEBACK + 8192) / 4096; i++)
		assert_int_equal(write(fd, buf, sizeof buf), sizeof buf);
	stage_writeback(fd, &done, STAGE_WRITEBACK - 1);
	assert_int_equal(done, 0);
	stage_writeback(fd, &done, STAGE_WRITEBACK + 4096);
	assert_int_equal(done, STAGE_WRITEBACK + 4096);
	stage_writeback(fd, &done, STAGE_WRITEBACK + 8192);
	assert_int_equal(done, STAGE_WRITEBACK + 4096);
	close(fd);
}

static void
test_files(void **state)
{
	const char *h = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
	json_t *a = json_array();
	const char *why = NULL;

	(void)state;
	json_array_append_new(a, stage_file_pack(&(struct stage_file){ .name = "a", .size = 3, .sha256 = h }));
	json_array_append_new(a, stage_file_pack(&(struct stage_file){ .name = "d/b", .size = 4, .sha256 = h }));
	assert_true(stage_files_ok(a, 10, &why));
	assert_int_equal(stage_files_bytes(a), 7);
	assert_false(stage_files_ok(a, 1, &why));
	json_array_append_new(a, stage_file_pack(&(struct stage_file){ .name = "a", .size = 1, .sha256 = h }));
	assert_false(stage_files_ok(a, 10, &why));
	assert_string_equal(why, "a file is staged twice under one name");
	json_array_clear(a);
	json_array_append_new(a, stage_file_pack(&(struct stage_file){ .name = "../a", .size = 1, .sha256 = h }));
	assert_false(stage_files_ok(a, 10, &why));
	json_array_clear(a);
	json_array_append_new(a, json_pack("{s:s, s:i, s:s}", "name", "a", "size", -1, "sha256", h));
	assert_false(stage_files_ok(a, 10, &why));
	/* A mode is permission bits: kept through pack and unpack, checked. */
	json_array_clear(a);
	json_array_append_new(a, stage_file_pack(&(struct stage_file){ .name = "x.sh", .size = 1,
	    .sha256 = h, .mode = 0755 }));
	assert_true(stage_files_ok(a, 10, &why));
	{
		struct stage_file f;
		stage_file_unpack(json_array_get(a, 0), &f);
		assert_int_equal(f.mode, 0755);
	}
	json_array_append_new(a, json_pack("{s:s, s:i, s:s, s:i}", "name", "y", "size", 1, "sha256", h,
	    "mode", 04755));
	assert_false(stage_files_ok(a, 10, &why));
	assert_string_equal(why, "a staged file's mode is its permission bits, 0 to 0777");
	json_decref(a);
}

static void
test_task_names(void **state)
{
	char *s;

	(void)state;
	assert_string_equal(s = stage_task_name("out.txt", 0), "out.txt");
	free(s);
	assert_string_equal(s = stage_task_name("out.txt", 7), "out.txt.7");
	free(s);
	assert_string_equal(s = stage_task_name("res/a.txt", 12), "res.12/a.txt");
	free(s);
}

/* Chunks travel as base64: every byte value and length round-trips,
 * and what is not base64 is refused. */
static void
test_base64(void **state)
{
	unsigned char in[300];
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof in; i++)
		in[i] = (unsigned char)(i * 7 + 3);
	for (size_t len = 0; len < sizeof in; len += 37) {
		char *t = b64_encode(in, len);
		unsigned char *out = b64_decode(t, &n);
		assert_non_null(out);
		assert_int_equal(n, len);
		assert_memory_equal(out, in, len);
		free(out);
		free(t);
	}
	assert_null(b64_decode("QUJ", &n));
	assert_null(b64_decode("QU*D", &n));
	assert_null(b64_decode("Q=JD", &n));
	free(b64_decode("QUJD", &n));
	assert_int_equal(n, 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_long_path),
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_writeback),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_task_names),
		cmocka_unit_test(test_base64),
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
