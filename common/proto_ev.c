/* proto_ev.c: framing on libevent buffers, for the daemons (clients block, in proto.c). */
#include "config.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "common.h"

int
proto_frame_append(struct evbuffer *buf, const json_t *msg, size_t max, const char **why)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	int rc;

	if (!s) {
		*why = "cannot encode message";
		return -1;
	}
	rc = proto_frame_append_text(buf, s, strlen(s), max, why);
	free(s);
	return rc;
}

static void
text_free(const void *data, size_t len, void *arg)
{
	(void)len;
	(void)arg;
	free((void *)data);
}

/* n bytes at s as one frame: copied, or (taken) sent in place and freed
 * once written, or at once when refused. */
static int
frame_append(struct evbuffer *buf, const char *s, size_t n, size_t max, const char **why, bool taken)
{
	uint32_t be;

	/* The peer would take an empty frame for a broken stream: a message
	 * that could not be encoded (NULL, n 0) is not sent at all. */
	if (!s || n == 0)
		*why = "empty message (it could not be encoded)";
	else if (n > max)
		*why = "message larger than the frame limit";
	else {
		be = htonl((uint32_t)n);
		evbuffer_add(buf, &be, 4);
		if (taken && evbuffer_add_reference(buf, s, n, text_free, NULL) == 0)
			return 0;
		if (!taken)
			return evbuffer_add(buf, s, n);
		*why = "out of memory";
	}
	if (taken)
		free((void *)s);
	return -1;
}

int
proto_frame_append_text(struct evbuffer *buf, const char *s, size_t n, size_t max, const char **why)
{
	return frame_append(buf, s, n, max, why, false);
}

int
proto_frame_append_taken(struct evbuffer *buf, char *s, size_t n, size_t max, const char **why)
{
	return frame_append(buf, s, n, max, why, true);
}

int
proto_frame_take(struct evbuffer *buf, json_t **msg, size_t max, const char **why)
{
	unsigned char hdr[4];
	uint32_t n;
	unsigned char *data;

	*msg = NULL;
	if (evbuffer_get_length(buf) < 4)
		return 0;
	evbuffer_copyout(buf, hdr, 4);
	n = proto_frame_len(hdr);
	if (n > max) {
		*why = "frame larger than the limit";
		return -1;
	}
	if (n == 0) {
		*why = "empty frame";
		return -1;
	}
	if (evbuffer_get_length(buf) < 4 + (size_t)n)
		return 0;
	data = evbuffer_pullup(buf, 4 + (ssize_t)n);
	*msg = proto_decode((const char *)data + 4, n, why);
	evbuffer_drain(buf, 4 + (size_t)n);
	return *msg ? 1 : -1;
}

