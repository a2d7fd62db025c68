/* fuzz_values.c: fuzz target of the small notations: sizes, times, -l lists, -a dates, task ranges, -m letters and mail addresses. */
#include "config.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "client/client.h"
#include "t/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size), err[256];
	struct task_range tr;
	struct job_req r;
	unsigned flags;
	int64_t v;

	if (parse_size(s, &v) == 0)
		assert(v >= 0);
	if (parse_duration(s, &v) == 0)
		assert(v >= 0);
	/* -a: the year left out is decided by "now"; a fixed one repeats. */
	(void)qsub_parse_date(s, 1772928000, &v);
	if (task_range_parse(s, &tr) == 0) {
		assert(tr.first >= 1 && tr.first <= tr.last && tr.last <= JOB_MAX_TASKS && tr.step >= 1);
		assert(task_range_count(&tr) >= 1);
	}
	(void)mail_flags_parse(s, &flags);
	(void)mail_valid_address(s);
	memset(&r, 0, sizeof r);
	if (req_parse(&r, s, err, sizeof err) == 0) {
		const char *why = NULL;
		struct job_req back;
		json_t *o = req_to_json(&r);
		memset(&back, 0, sizeof back);
		assert(req_from_json(&back, o, &why) == 0);
		req_clear(&back);
		json_decref(o);
	}
	req_clear(&r);
	free(s);
	return 0;
}
