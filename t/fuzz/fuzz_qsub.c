/* fuzz_qsub.c: fuzz target of qsub's options and #$ directives: the first line is the command line, the rest the script. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "client/client.h"
#include "t/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *const envp[] = { "HOME=/home/fuzz", "PATH=/usr/bin:/bin", "SHELL=/bin/sh", NULL };
	const struct qsub_env env = { envp, "/home/fuzz", "host1", "fuzz" };
	char *text = fuzz_cstr(data, size), *nl = strchr(text, '\n'), **words, err[512];
	const char *script = nl ? nl + 1 : "";
	struct qsub_opts cl, o;
	json_t *job;

	if (nl)
		*nl = '\0';
	words = qsub_split_words(text);
	/* As cmd_qsub.c does: the command line once for -C and -b, the
	 * directives, then the command line over them. */
	qsub_opts_init(&cl);
	qsub_opts_init(&o);
	if (qsub_opts_parse_argv(&cl, (int)strv_len(words), words) < 0)
		goto out;
	if (cl.binary != 1 &&
	    qsub_opts_parse_script(&o, script, cl.prefix ? cl.prefix : QSUB_DEFAULT_PREFIX) < 0)
		goto out;
	if (qsub_opts_parse_argv(&o, (int)strv_len(words), words) < 0)
		goto out;
	if ((job = qsub_job_json(&o, cl.binary == 1 ? NULL : script, &env, err, sizeof err)) != NULL) {
		const char *why = NULL;
		struct job *j = job_from_json(job, &why);
		job_free(j);
		json_decref(job);
	}
	if (o.deps)
		json_decref(qsub_deps_json(&o));
out:
	qsub_opts_free(&cl);
	qsub_opts_free(&o);
	strv_free(words);
	free(text);
	return 0;
}
