/* fuzz_encode.c: fuzz target of the reply encoder: error sentences and texts quoting arbitrary user bytes always become one non-empty, decodable frame. */
#include "config.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "common/common.h"
#include "t/fuzz/fuzz.h"

#define FUZZ_MAX_FRAME 65536

/* Every character of s is whole UTF-8: what jansson takes. */
static void
assert_utf8(const char *s)
{
	size_t n;

	for (; *s; s += n)
		assert((n = utf8_char_len(s)) > 0);
}

/* The message goes into a frame and comes back out of it, with its text. */
static void
frame_round_trip(json_t *msg, const char *key)
{
	struct evbuffer *buf = evbuffer_new();
	const char *why = NULL;
	json_t *back = NULL;

	assert(msg);
	assert(proto_frame_append(buf, msg, FUZZ_MAX_FRAME * 4, &why) == 0);
	assert(evbuffer_get_length(buf) > 4);
	assert(proto_frame_take(buf, &back, FUZZ_MAX_FRAME * 4, &why) == 1);
	assert(jstr(back, key) && strcmp(jstr(back, key), jstr(msg, key)) == 0);
	json_decref(back);
	evbuffer_free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The first byte picks the cuts, the rest is what a user typed. */
	size_t cut = size ? data[0] : 0;
	char *s = fuzz_cstr(size ? data + 1 : data, size ? size - 1 : 0);
	char *t = xstrdup(s), *line, small[64];
	json_t *rep, *v;
	struct nodeset *ns;
	char err[256];

	/* An error sentence quoting it, whole and cut at any byte (the
	 * sentence buffer holds 1,024: long inputs are cut there). */
	rep = proto_reply_err(7, ERR_INVAL, "%s: unknown", s);
	frame_round_trip(rep, "message");
	assert_utf8(jstr(rep, "message"));
	json_decref(rep);
	rep = proto_reply_err(7, ERR_INVAL, "%.*s", (int)cut, s);
	frame_round_trip(rep, "message");
	json_decref(rep);

	/* A result's text. */
	v = proto_text(s);
	rep = json_pack("{s:s, s:I, s:b, s:o}", "type", "REPLY", "seq", (json_int_t)1, "ok", 1, "message", v);
	frame_round_trip(rep, "message");
	json_decref(rep);

	/* Scrubbing keeps valid text as it is and never grows it. */
	utf8_scrub(t);
	assert_utf8(t);
	assert(strlen(t) <= strlen(s));
	if ((v = json_string(s)) != NULL)
		assert(strcmp(t, s) == 0);
	json_decref(v);

	/* One-line texts, whole and cut short, are UTF-8 and never longer
	 * than asked. */
	line = text_oneline(s);
	assert_utf8(line);
	free(line);
	text_oneline_to(small, cut % sizeof small + 1, s);
	assert(strlen(small) <= cut % sizeof small);
	assert_utf8(small);

	/* A parser's error quotes the character it stopped at. */
	if ((ns = nodeset_parse(s, err, sizeof err)) != NULL)
		nodeset_free(ns);
	else {
		rep = proto_reply_err(3, ERR_INVAL, "%s: %s", s, err);
		frame_round_trip(rep, "message");
		json_decref(rep);
	}
	free(t);
	free(s);
	return 0;
}
