/* fuzz_cron.c: fuzz target of cron schedules (common/cron.c): parse, then ask when the schedule fires next. */
#include "config.h"

#include <assert.h>
#include <stdlib.h>

#include "common/common.h"
#include "t/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *spec = fuzz_cstr(data, size), err[256];
	struct cron_sched c;

	if (cron_parse(spec, &c, err, sizeof err) == 0) {
		/* A fixed instant, so that a slow or wrong answer is repeatable:
		 * 2026-03-08 (a daylight-saving change in many zones). */
		time_t after = 1772928000, next = cron_next(&c, after);
		assert(next == -1 || next > after);
	}
	free(spec);
	return 0;
}
