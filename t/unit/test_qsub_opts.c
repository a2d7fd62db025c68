/* test_qsub_opts.c: qsub's option parsing, directives, and the job JSON they produce. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/common.h"
#include "client/client.h"

/* Parses a NULL-terminated list of words as qsub's command line. */
static int
parse(struct qsub_opts *o, ...)
{
	char *words[64];
	int n = 0;
	va_list ap;

	va_start(ap, o);
	while (n < 63 && (words[n] = va_arg(ap, char *)) != NULL)
		n++;
	va_end(ap);
	words[n] = NULL;
	return qsub_opts_parse_argv(o, n, words);
}

static char *test_envp[] = {
	"HOME=/home/ann", "LOGNAME=envname", "PATH=/usr/bin:/bin", "SHELL=/bin/bash",
	"FOO=from-env", "BAR=bar-env", NULL,
};
static const struct qsub_env test_env = { test_envp, "/work/dir", "submithost", "ann" };

static const char *
env_of(const json_t *job, const char *name)
{
	size_t i, n = strlen(name);
	json_t *e;
	json_array_foreach(json_object_get(job, "env"), i, e) {
		const char *s = json_string_value(e);
		if (strncmp(s, name, n) == 0 && s[n] == '=')
			return s + n + 1;
	}
	return NULL;
}

static size_t
env_count(const json_t *job, const char *name)
{
	size_t i, n = strlen(name), c = 0;
	json_t *e;
	json_array_foreach(json_object_get(job, "env"), i, e) {
		const char *s = json_string_value(e);
		if (strncmp(s, name, n) == 0 && s[n] == '=')
			c++;
	}
	return c;
}

static json_t *
job_of(const struct qsub_opts *o, const char *script)
{
	char err[256] = "";
	json_t *j = qsub_job_json(o, script, &test_env, err, sizeof err);
	if (!j)
		fail_msg("qsub_job_json failed: %s", err);
	return j;
}

static void
test_defaults(void **state)
{
	struct qsub_opts o;
	json_t *j;

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, NULL), 0);
	assert_int_equal(o.join, QO_UNSET);
	assert_int_equal(o.sync, QO_UNSET);
	assert_int_equal(o.binary, QO_UNSET);
	assert_int_equal(o.hold, QO_UNSET);
	assert_null(o.operands);
	j = job_of(&o, "echo hi\n");
	assert_string_equal(jstr(j, "name"), "STDIN");
	assert_string_equal(jstr(j, "script"), "echo hi\n");
	assert_string_equal(jstr(j, "submit_host"), "submithost");
	/* Without -cwd or -wd the job runs in the owner's home: no cwd. */
	assert_null(json_object_get(j, "cwd"));
	assert_null(json_object_get(j, "argv"));
	assert_null(json_object_get(j, "args"));
	assert_null(json_object_get(j, "hold"));
	assert_null(json_object_get(j, "prio"));
	assert_null(json_object_get(j, "join"));
	json_decref(j);
	qsub_opts_free(&o);
}

/* -q QUEUE@EXPR narrows hosts=, -ar names a reservation. */
static void
test_queue_at_hosts(void **state)
{
	struct qsub_opts o;
	(void)state;

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-l", "hosts=a|b", "-q", "all.q@fast - c", "-ar", "maint", "x", NULL), 0);
	assert_string_equal(o.queue, "all.q");
	assert_string_equal(o.req.hosts, "(a|b) & (fast - c)");
	assert_string_equal(o.req.ar, "maint");
	qsub_opts_free(&o);
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-q", "*@gpu", "x", NULL), 0);
	assert_null(o.queue);
	assert_string_equal(o.req.hosts, "gpu");
	qsub_opts_free(&o);
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-q", "all.q@", "x", NULL), -1);
	assert_non_null(strstr(o.err, "QUEUE@HOSTS"));
	qsub_opts_free(&o);
}

static void
test_every_option(void **state)
{
	struct qsub_opts o;
	json_t *j;

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-N", "myjob", "-q", "fast.q", "-o", "out.txt", "-e", "/tmp/err",
	    "-i", "host:in.txt", "-j", "y", "-wd", "sub/dir", "-V", "-v", "A=1,B", "-h", "-p", "-5", "-terse",
	    "-sync", "y", "-S", "/bin/zsh", "-b", "n", "-C", "#PBS", "script.sh", "x", NULL), 0);
	assert_string_equal(o.name, "myjob");
	assert_string_equal(o.queue, "fast.q");
	assert_string_equal(o.out_path, "out.txt");
	assert_string_equal(o.err_path, "/tmp/err");
	assert_string_equal(o.in_path, "host:in.txt");
	assert_int_equal(o.join, 1);
	assert_string_equal(o.wd, "sub/dir");
	assert_false(o.use_cwd);
	assert_true(o.export_all);
	assert_int_equal(strv_len(o.vars), 2);
	assert_string_equal(o.vars[0], "A=1");
	assert_string_equal(o.vars[1], "B");
	assert_int_equal(o.hold, 1);
	assert_true(o.prio_set);
	assert_int_equal(o.prio, -5);
	assert_true(o.terse);
	assert_int_equal(o.sync, 1);
	assert_string_equal(o.shell, "/bin/zsh");
	assert_int_equal(o.binary, 0);
	assert_string_equal(o.prefix, "#PBS");
	assert_int_equal(strv_len(o.operands), 2);
	assert_string_equal(o.operands[0], "script.sh");
	assert_string_equal(o.operands[1], "x");

	j = job_of(&o, "true\n");
	assert_string_equal(jstr(j, "name"), "myjob");
	assert_string_equal(jstr(j, "queue"), "fast.q");
	assert_string_equal(jstr(j, "out"), "out.txt");
	assert_string_equal(jstr(j, "err"), "/tmp/err");
	assert_true(jbool(j, "join", false));
	assert_string_equal(jstr(j, "cwd"), "/work/dir/sub/dir");
	assert_int_equal(jint(j, "hold", 0), HOLD_USER);
	assert_int_equal(jint(j, "prio", 0), -5);
	assert_string_equal(jstr(j, "shell"), "/bin/zsh");
	assert_int_equal(json_array_size(json_object_get(j, "args")), 1);
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "args"), 0)), "x");
	json_decref(j);
	qsub_opts_free(&o);

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-cwd", "-j", "no", "-sync", "NO", "-help", NULL), 0);
	assert_true(o.use_cwd);
	assert_int_equal(o.join, 0);
	assert_int_equal(o.sync, 0);
	assert_true(o.help);
	j = job_of(&o, "true\n");
	assert_string_equal(jstr(j, "cwd"), "/work/dir");
	assert_null(json_object_get(j, "join"));
	json_decref(j);
	qsub_opts_free(&o);
}

/* --stage-in, --stage-out, their #$ form and PBS's -W stagein=/stageout=:
 * lists gathered in order, paths that leave the directory refused. */
static void
test_stage_lists(void **state)
{
	struct qsub_opts o;
	json_t *j;

	(void)state;
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "--stage-in", "a.txt,dir/b", "-W", "stagein=c@localhost:c",
	    "--stage-out", "out/*.txt", "-W", "stageout=res", NULL), 0);
	assert_string_equal(o.stage_in[0], "a.txt");
	assert_string_equal(o.stage_in[1], "dir/b");
	assert_string_equal(o.stage_in[2], "c");
	assert_null(o.stage_in[3]);
	assert_string_equal(o.stage_out[0], "out/*.txt");
	assert_string_equal(o.stage_out[1], "res");
	j = job_of(&o, "true\n");
	assert_int_equal(json_array_size(json_object_get(j, "stage_out")), 2);
	assert_null(json_object_get(j, "stage_in"));
	json_decref(j);
	qsub_opts_free(&o);

	qsub_opts_init(&o);
	assert_int_equal(qsub_opts_parse_script(&o, "#$ --stage-in x.dat\n", "#$"), 0);
	assert_string_equal(o.stage_in[0], "x.dat");
	qsub_opts_free(&o);

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "--stage-in", "../x", NULL), -1);
	assert_string_equal(o.err, "--stage-in: \"../x\": a staged path may not hold \".\" or \"..\"");
	qsub_opts_free(&o);
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "--stage-out", "/etc/shadow", NULL), -1);
	assert_string_equal(o.err, "--stage-out: \"/etc/shadow\": a staged path must be relative, not absolute");
	qsub_opts_free(&o);
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-W", "stagein=a@otherhost:/data/a", NULL), -1);
	assert_non_null(strstr(o.err, "nowq stages a file of the submit directory under its own name"));
	qsub_opts_free(&o);
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "--stage-in", ",", NULL), -1);
	assert_string_equal(o.err, "--stage-in needs a list of paths");
	qsub_opts_free(&o);
}

static void
test_cwd_and_wd_last_wins(void **state)
{
	struct qsub_opts o;
	json_t *j;

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-wd", "/abs", "-cwd", NULL), 0);
	j = job_of(&o, "true\n");
	assert_string_equal(jstr(j, "cwd"), "/work/dir");
	json_decref(j);
	qsub_opts_free(&o);

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-cwd", "-wd", "/abs", NULL), 0);
	j = job_of(&o, "true\n");
	assert_string_equal(jstr(j, "cwd"), "/abs");
	json_decref(j);
	qsub_opts_free(&o);
}

static void
test_operands_end_options(void **state)
{
	struct qsub_opts o;

	/* After the script, words that look like options are its arguments. */
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-N", "a", "run.sh", "-N", "b", "-foo", NULL), 0);
	assert_string_equal(o.name, "a");
	assert_int_equal(strv_len(o.operands), 4);
	assert_string_equal(o.operands[1], "-N");
	assert_string_equal(o.operands[3], "-foo");
	qsub_opts_free(&o);

	/* "-" alone is the script: standard input. */
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-", "arg", NULL), 0);
	assert_string_equal(o.operands[0], "-");
	{
		char *n = qsub_default_name(&o);
		assert_string_equal(n, "STDIN");
		free(n);
	}
	qsub_opts_free(&o);
}

static void
test_binary_argv_exact(void **state)
{
	struct qsub_opts o;
	json_t *j, *argv;
	const char *words[] = { "/usr/bin/printf", "%s|%s\\n", "a b  c", "it's \"quoted\"", "",
		"$HOME;*", NULL };

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-b", "y", "-N", "bin", (char *)words[0], (char *)words[1],
	    (char *)words[2], (char *)words[3], (char *)words[4], (char *)words[5], NULL), 0);
	assert_int_equal(o.binary, 1);
	j = job_of(&o, NULL);
	argv = json_object_get(j, "argv");
	assert_non_null(argv);
	assert_int_equal(json_array_size(argv), 6);
	for (size_t i = 0; words[i]; i++)
		assert_string_equal(json_string_value(json_array_get(argv, i)), words[i]);
	assert_null(json_object_get(j, "script"));
	assert_null(json_object_get(j, "args"));
	json_decref(j);
	qsub_opts_free(&o);

	/* The default name of a binary job is its command's base name. */
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-b", "yes", "/bin/sleep", "10", NULL), 0);
	j = job_of(&o, NULL);
	assert_string_equal(jstr(j, "name"), "sleep");
	json_decref(j);
	qsub_opts_free(&o);
}

static void
test_default_names(void **state)
{
	struct qsub_opts o;
	json_t *j;

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "dir/sub/job.sh", NULL), 0);
	j = job_of(&o, "true\n");
	assert_string_equal(jstr(j, "name"), "job.sh");
	json_decref(j);
	qsub_opts_free(&o);
}

static void
test_v_values(void **state)
{
	struct qsub_opts o;
	json_t *j;

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-v", "FOO,NEW=x=y,EMPTY=", "-v", "MISSING", NULL), 0);
	j = job_of(&o, "true\n");
	/* Without a value, the value is the submitter's. */
	assert_string_equal(env_of(j, "FOO"), "from-env");
	/* Only the first '=' separates. */
	assert_string_equal(env_of(j, "NEW"), "x=y");
	assert_string_equal(env_of(j, "EMPTY"), "");
	assert_string_equal(env_of(j, "MISSING"), "");
	/* -v alone does not export the rest. */
	assert_null(env_of(j, "BAR"));
	json_decref(j);
	qsub_opts_free(&o);
}

static void
test_env_V_and_sge_o(void **state)
{
	struct qsub_opts o;
	json_t *j;

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-V", "-v", "BAR=override,SGE_O_HOST=liar", NULL), 0);
	j = job_of(&o, "true\n");
	assert_string_equal(env_of(j, "FOO"), "from-env");
	assert_string_equal(env_of(j, "BAR"), "override");
	assert_int_equal(env_count(j, "BAR"), 1);
	/* SGE_O_* are set by qsub itself and win. */
	assert_string_equal(env_of(j, "SGE_O_HOST"), "submithost");
	assert_int_equal(env_count(j, "SGE_O_HOST"), 1);
	assert_string_equal(env_of(j, "SGE_O_WORKDIR"), "/work/dir");
	assert_string_equal(env_of(j, "SGE_O_HOME"), "/home/ann");
	assert_string_equal(env_of(j, "SGE_O_LOGNAME"), "ann");
	assert_string_equal(env_of(j, "SGE_O_PATH"), "/usr/bin:/bin");
	assert_string_equal(env_of(j, "SGE_O_SHELL"), "/bin/bash");
	/* Absent from the environment: not sent. */
	assert_null(env_of(j, "SGE_O_MAIL"));
	json_decref(j);
	qsub_opts_free(&o);

	/* Without -V or -v only SGE_O_* travel. */
	qsub_opts_init(&o);
	j = job_of(&o, "true\n");
	assert_null(env_of(j, "FOO"));
	assert_null(env_of(j, "HOME"));
	assert_string_equal(env_of(j, "SGE_O_HOST"), "submithost");
	json_decref(j);
	qsub_opts_free(&o);
}

static void
test_directives_then_command_line(void **state)
{
	const char *script =
	    "#!/bin/sh\n"
	    "#$ -N fromscript\n"
	    "#$ -q script.q -j y\n"
	    "#$ -v S=1\n"
	    "echo work\n"
	    "#$ -o late.out\n"          /* the whole script is scanned */
	    " #$ -N indented\n"         /* not in column 1: not a directive */
	    "#$-p -3\n";                /* no blank after the prefix is fine */
	struct qsub_opts o;
	json_t *j;

	qsub_opts_init(&o);
	assert_int_equal(qsub_opts_parse_script(&o, script, QSUB_DEFAULT_PREFIX), 0);
	assert_string_equal(o.name, "fromscript");
	assert_string_equal(o.queue, "script.q");
	assert_int_equal(o.join, 1);
	assert_string_equal(o.out_path, "late.out");
	assert_int_equal(o.prio, -3);
	assert_int_equal(parse(&o, "-N", "cli", "-j", "n", "-v", "C=2", "job.sh", NULL), 0);
	/* The command line wins; what it does not say, the script keeps. */
	assert_string_equal(o.name, "cli");
	assert_int_equal(o.join, 0);
	assert_string_equal(o.queue, "script.q");
	j = job_of(&o, script);
	assert_string_equal(jstr(j, "name"), "cli");
	assert_string_equal(env_of(j, "S"), "1");
	assert_string_equal(env_of(j, "C"), "2");
	json_decref(j);
	qsub_opts_free(&o);
}

static void
test_directive_words(void **state)
{
	struct qsub_opts o;
	char **w;

	w = qsub_split_words("  -N  'a b' -v \"X=1 2\",Y=3 # trailing comment -q no\r");
	assert_int_equal(strv_len(w), 4);
	assert_string_equal(w[0], "-N");
	assert_string_equal(w[1], "a b");
	assert_string_equal(w[2], "-v");
	assert_string_equal(w[3], "X=1 2,Y=3");
	strv_free(w);

	qsub_opts_init(&o);
	assert_int_equal(qsub_opts_parse_script(&o, "#$ -N name # -q ignored\r\n", "#$"), 0);
	assert_string_equal(o.name, "name");
	assert_null(o.queue);
	/* A '#' inside a word ends the directive too, as in Grid Engine. */
	assert_int_equal(qsub_opts_parse_script(&o, "#$ -N other# -q ignored\n", "#$"), 0);
	assert_string_equal(o.name, "other");
	assert_null(o.queue);
	qsub_opts_free(&o);
}

static void
test_prefix(void **state)
{
	struct qsub_opts o;

	/* -C changes the prefix; lines with the old one are plain comments. */
	qsub_opts_init(&o);
	assert_int_equal(qsub_opts_parse_script(&o, "#$ -N old\n#PBS -N new\n", "#PBS"), 0);
	assert_string_equal(o.name, "new");
	qsub_opts_free(&o);

	/* An empty prefix turns directives off. */
	qsub_opts_init(&o);
	assert_int_equal(qsub_opts_parse_script(&o, "#$ -N old\n-N other\n", ""), 0);
	assert_null(o.name);
	qsub_opts_free(&o);

	/* -C and -b inside a script are ignored, as in Grid Engine. */
	qsub_opts_init(&o);
	assert_int_equal(qsub_opts_parse_script(&o, "#$ -C %X -b y -N ok\n", "#$"), 0);
	assert_null(o.prefix);
	assert_int_equal(o.binary, QO_UNSET);
	assert_string_equal(o.name, "ok");
	qsub_opts_free(&o);
}

static void
test_error_unknown_option(void **state)
{
	struct qsub_opts o;

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-N", "x", "-foo", "s.sh", NULL), -1);
	assert_string_equal(o.err, "option \"-foo\" is not supported by nowq");
	qsub_opts_free(&o);

	/* Grid Engine options nowq lacks are named as such, in one sentence. */
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-ckpt", "c", "s.sh", NULL), -1);
	assert_string_equal(o.err, "option \"-ckpt\" is not supported by nowq");
	qsub_opts_free(&o);
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-now", "y", "s.sh", NULL), -1);
	assert_string_equal(o.err, "option \"-now\" is not supported by nowq");
	qsub_opts_free(&o);
}

/* Grid Engine's size and time notations. */
static void
test_sizes_and_times(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(parse_size("512", &v), 0);
	assert_int_equal(v, 512);
	assert_int_equal(parse_size("4G", &v), 0);
	assert_int_equal(v, 4LL << 30);
	assert_int_equal(parse_size("2k", &v), 0);
	assert_int_equal(v, 2000);
	assert_int_equal(parse_size("3M", &v), 0);
	assert_int_equal(v, 3LL << 20);
	assert_int_equal(parse_size("", &v), -1);
	assert_int_equal(parse_size("4GB", &v), -1);
	assert_int_equal(parse_size("-1", &v), -1);
	assert_int_equal(parse_size("99999999999T", &v), -1);
	assert_int_equal(parse_duration("3600", &v), 0);
	assert_int_equal(v, 3600);
	assert_int_equal(parse_duration("1:00:00", &v), 0);
	assert_int_equal(v, 3600);
	assert_int_equal(parse_duration("1:30", &v), 0);
	assert_int_equal(v, 90);
	assert_int_equal(parse_duration("::30", &v), 0);
	assert_int_equal(v, 30);
	assert_int_equal(parse_duration("1:2:3:4", &v), -1);
	assert_int_equal(parse_duration("1h", &v), -1);
	assert_int_equal(parse_duration("", &v), -1);
}

static void
test_resource_requests(void **state)
{
	struct qsub_opts o;

	(void)state;
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-l", "mem=4G,arch=x86_64,matlab", "-l",
	    "h_rt=1:00:00,h_vmem=2G,h_cpu=60,fpu=true,hosts=(a|b)&fast", "s.sh", NULL), 0);
	assert_int_equal(o.req.mem, 4LL << 30);
	assert_string_equal(o.req.arch, "x86_64");
	assert_string_equal(o.req.keys[0], "matlab");
	assert_string_equal(o.req.keys[1], "fpu");
	assert_null(o.req.keys[2]);
	assert_int_equal(o.req.h_rt, 3600);
	assert_int_equal(o.req.h_vmem, 2LL << 30);
	assert_int_equal(o.req.h_cpu, 60);
	assert_string_equal(o.req.hosts, "(a|b)&fast");
	qsub_opts_free(&o);

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-l", "mem=lots", "s.sh", NULL), -1);
	assert_string_equal(o.err, "-l mem=lots: not a size such as 512M or 4G");
	qsub_opts_free(&o);
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-l", "matlab=2", "s.sh", NULL), -1);
	assert_string_equal(o.err, "-l matlab=2: matlab is a key a host has or lacks; "
	    "request it as -l matlab");
	qsub_opts_free(&o);
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-l", "a,,b", "s.sh", NULL), -1);
	qsub_opts_free(&o);
}

/* What Nextflow's sge executor writes: h_rss is the h_vmem limit, mem_free
 * the mem request, slots=N the job's slots (on one host, for the master). */
static void
test_nextflow_resources(void **state)
{
	struct qsub_opts o;
	char err[256] = "";
	json_t *j;

	(void)state;
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-l", "slots=4", "-l", "h_rss=2G,mem_free=3G", "-b", "y", "true", NULL), 0);
	assert_int_equal(o.req.h_vmem, 2LL << 30);
	assert_int_equal(o.req.mem, 3LL << 30);
	j = job_of(&o, NULL);
	assert_int_equal(json_integer_value(json_object_get(j, "slots")), 4);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "req"), "slots")), 4);
	json_decref(j);
	qsub_opts_free(&o);

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-l", "slots=2", "-pe", "smp", "2", "-b", "y", "true", NULL), 0);
	assert_null(qsub_job_json(&o, NULL, &test_env, err, sizeof err));
	assert_string_equal(err, "-l slots=2 asks for 2 slots on one host; give it or -pe, not both");
	qsub_opts_free(&o);
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-l", "slots=2x", "s.sh", NULL), -1);
	assert_string_equal(o.err, "-l slots=2x: not a number of slots from 1 to 100000");
	qsub_opts_free(&o);
}

/* The words of qstat -j's resource lists: "NAME=VALUE,..." as asked. */
static char *
asked_text(const json_t *req)
{
	char *s = xstrdup(""), *t;
	size_t i;
	json_t *v;

	json_array_foreach(json_object_get(req, "asked"), i, v) {
		t = xasprintf("%s%s%s", s, i ? "," : "", json_string_value(v));
		free(s);
		s = t;
	}
	return s;
}

/* -hard and -soft: -l goes to the request in force, from the command line
 * and from directives alike; Grid Engine's shortcuts become full names. */
static void
test_hard_and_soft(void **state)
{
	struct qsub_opts o;
	json_t *j;
	char *t;

	(void)state;
	qsub_opts_init(&o);
	assert_int_equal(qsub_opts_parse_script(&o, "#$ -soft -l arch=x86_64\n", "#$"), 0);
	assert_int_equal(parse(&o, "-hard", "-l", "vf=1G,h_vmem=2G,s_cpu=1:00:00,h_fsize=1M",
	    "-soft", "-l", "mf=1G,hostname=vm", "-hard", "-l", "q=batch", "-b", "y", "true", NULL), 0);
	j = job_of(&o, NULL);
	t = asked_text(json_object_get(j, "req"));
	assert_string_equal(t, "virtual_free=1G,h_vmem=2G,s_cpu=3600,h_fsize=1M,qname=batch");
	free(t);
	t = asked_text(json_object_get(j, "soft"));
	assert_string_equal(t, "arch=x86_64,mem_free=1G,hostname=vm");
	free(t);
	/* vf is matched against the host's memory, h_vmem and the rest enforced. */
	assert_int_equal(o.req.mem, 1LL << 30);
	assert_int_equal(o.req.h_vmem, 2LL << 30);
	assert_true(o.req.lim_set & (1u << REQ_S_CPU));
	assert_int_equal(o.req.lim[REQ_S_CPU], 3600);
	assert_int_equal(o.req.lim[REQ_H_FSIZE], 1LL << 20);
	assert_string_equal(o.soft.hosts, "vm");
	/* -l q= is the job's queue when -q is not given. */
	assert_string_equal(json_string_value(json_object_get(j, "queue")), "batch");
	json_decref(j);
	qsub_opts_free(&o);
}

/* Every requestable attribute of the complex list, by name and shortcut,
 * is accepted; the others are refused in Grid Engine's words. */
static void
test_complex_list(void **state)
{
	char err[256];

	(void)state;
	for (size_t i = 0; i < complex_nattrs; i++) {
		const struct cx_attr *a = &complex_attrs[i];
		const char *v = a->type == CX_MEMORY ? "1G" : a->type == CX_TIME ? "1:00:00" :
		    a->type == CX_BOOL ? "TRUE" : a->type == CX_INT || a->type == CX_DOUBLE ? "1" : "x";
		const char *names[] = { a->name, a->shortcut };

		for (int k = 0; k < 2; k++) {
			struct job_req r = { 0 };
			char *l = xasprintf("%s=%s", names[k], v), *want;
			int rc = req_parse(&r, l, err, sizeof err);

			if (a->requestable) {
				assert_int_equal(rc, 0);
				assert_non_null(r.asked);
				assert_string_equal(r.asked[0], a->type == CX_TIME ?
				    (want = xasprintf("%s=3600", a->name)) : (want = xasprintf("%s=%s", a->name, v)));
				free(want);
				assert_int_not_equal(a->use, CX_NOT_REQUESTABLE);
			} else {
				assert_int_equal(rc, -1);
				want = xasprintf("resource \"%s\" configured as non requestable", a->name);
				assert_string_equal(err, want);
				free(want);
				assert_int_equal(a->use, CX_NOT_REQUESTABLE);
			}
			free(l);
			req_clear(&r);
		}
	}
}

/* -P, -A, -R, -js, -binding, -shell and the context options. */
static void
test_recorded_options(void **state)
{
	struct qsub_opts o;
	json_t *j, *ctx;

	(void)state;
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-P", "p1", "-A", "acct1", "-R", "y", "-js", "5", "-binding",
	    "linear:1", "-shell", "n", "-ac", "a=1,b=2,c=3", "-dc", "b", "-ac", "a=4", "-b", "y",
	    "true", NULL), 0);
	j = job_of(&o, NULL);
	assert_string_equal(json_string_value(json_object_get(j, "project")), "p1");
	assert_string_equal(json_string_value(json_object_get(j, "account")), "acct1");
	assert_true(json_is_true(json_object_get(j, "reserve")));
	assert_int_equal(json_integer_value(json_object_get(j, "js")), 5);
	assert_string_equal(json_string_value(json_object_get(j, "binding")), "set linear:1");
	assert_true(json_is_true(json_object_get(j, "noshell")));
	ctx = json_object_get(j, "context");
	assert_int_equal(json_array_size(ctx), 2);
	assert_string_equal(json_string_value(json_array_get(ctx, 0)), "a=4");
	assert_string_equal(json_string_value(json_array_get(ctx, 1)), "c=3");
	json_decref(j);
	qsub_opts_free(&o);

	/* -sc replaces the whole context; -binding takes a type first. */
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-ac", "a=1", "-sc", "x=9", "-binding", "pe", "striding:2:4",
	    "s.sh", NULL), 0);
	assert_int_equal(strv_len(o.context), 1);
	assert_string_equal(o.context[0], "x=9");
	assert_string_equal(o.binding, "pe striding:2:4");
	qsub_opts_free(&o);

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-ac", "novalue", "s.sh", NULL), -1);
	assert_string_equal(o.err, "-ac: \"novalue\" is not NAME=VALUE");
	qsub_opts_free(&o);
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-R", "maybe", "s.sh", NULL), -1);
	assert_string_equal(o.err, "-R wants y or n, not \"maybe\"");
	qsub_opts_free(&o);
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-binding", "cores", "s.sh", NULL), -1);
	assert_string_equal(o.err, "-binding wants linear:N, striding:N:STEP or explicit:S,C..., not \"cores\"");
	qsub_opts_free(&o);
}

static void
test_arrays_and_parallel(void **state)
{
	struct qsub_opts o;

	(void)state;
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-t", "1-1000:2", "-tc", "5", "-pe", "mpi", "4", "-r", "y",
	    "-w", "n", "s.sh", NULL), 0);
	assert_int_equal(o.t_first, 1);
	assert_int_equal(o.t_last, 999);   /* the last task the step reaches */
	assert_int_equal(o.t_step, 2);
	assert_int_equal(o.tc, 5);
	assert_string_equal(o.pe, "mpi");
	assert_int_equal(o.slots, 4);
	assert_int_equal(o.rerun, 1);
	assert_int_equal(o.verify, 'n');
	qsub_opts_free(&o);

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-t", "7", "-n", "3", "s.sh", NULL), 0);
	assert_int_equal(o.t_first, 7);
	assert_int_equal(o.t_last, 7);
	assert_int_equal(o.t_step, 1);
	assert_null(o.pe);
	assert_int_equal(o.slots, 3);
	qsub_opts_free(&o);

	static const char *bad_t[] = { "0", "5-3", "1-10:0", "a", "1-", "3:2", NULL };
	for (int i = 0; bad_t[i]; i++) {
		qsub_opts_init(&o);
		assert_int_equal(parse(&o, "-t", bad_t[i], "s.sh", NULL), -1);
		assert_non_null(strstr(o.err, "-t wants FIRST"));
		qsub_opts_free(&o);
	}
	/* Grid Engine's ranges, a backwards one the right way round. */
	static const struct { const char *arg; int slots, min; } ranges[] = {
		{ "2-8", 8, 2 }, { "4-2", 4, 2 }, { "3-3", 3, 0 }, { "5", 5, 0 },
	};
	for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
		qsub_opts_init(&o);
		assert_int_equal(parse(&o, "-pe", "mpi", ranges[i].arg, "s.sh", NULL), 0);
		assert_int_equal(o.slots, ranges[i].slots);
		assert_int_equal(o.slots_min, ranges[i].min);
		qsub_opts_free(&o);
	}
	static const char *bad_pe[] = { "0", "2-", "-3", "a-b", "2-0", NULL };
	for (int i = 0; bad_pe[i]; i++) {
		qsub_opts_init(&o);
		assert_int_equal(parse(&o, "-pe", "mpi", bad_pe[i], "s.sh", NULL), -1);
		assert_non_null(strstr(o.err, "or a range MIN-MAX of them"));
		qsub_opts_free(&o);
	}
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-pe", "mpi", NULL), -1);
	assert_string_equal(o.err, "-pe needs a name and a number of slots");
	qsub_opts_free(&o);
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-w", "x", "s.sh", NULL), -1);
	qsub_opts_free(&o);
}

static void
test_dependencies_and_dates(void **state)
{
	struct qsub_opts o;
	json_t *d;
	int64_t ms;
	time_t now = 1700000000;   /* 2023-11-14 */
	struct tm tm = { .tm_year = 2026 - 1900, .tm_mon = 10, .tm_mday = 22, .tm_hour = 14,
		.tm_min = 30, .tm_sec = 15, .tm_isdst = -1 };

	(void)state;
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-hold_jid", "12,prep*", "-W", "depend=afterok:3:4,after:5",
	    "s.sh", NULL), 0);
	d = qsub_deps_json(&o);
	assert_int_equal(json_array_size(d), 5);
	assert_string_equal(jstr(json_array_get(d, 0), "kind"), "afterany");
	json_decref(d);
	qsub_opts_free(&o);
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-hold_jid", "12,prep*", "-W", "depend=afterok:3:4,after:5",
	    "-hold_jid_ad", "7", "s.sh", NULL), 0);
	d = qsub_deps_json(&o);
	assert_int_equal(json_array_size(d), 6);
	assert_string_equal(jstr(json_array_get(d, 5), "kind"), "array");
	assert_string_equal(jstr(json_array_get(d, 5), "job"), "7");
	assert_string_equal(jstr(json_array_get(d, 1), "job"), "prep*");
	assert_string_equal(jstr(json_array_get(d, 2), "kind"), "afterok");
	assert_string_equal(jstr(json_array_get(d, 3), "job"), "4");
	assert_string_equal(jstr(json_array_get(d, 4), "kind"), "after");
	json_decref(d);
	qsub_opts_free(&o);
	qsub_opts_init(&o);
	assert_null(qsub_deps_json(&o));
	assert_int_equal(parse(&o, "-W", "depend=afterok:x", "s.sh", NULL), -1);
	assert_string_equal(o.err, "-W depend: \"x\" is not a job id");
	qsub_opts_free(&o);
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-W", "depend=afterok", "s.sh", NULL), -1);
	qsub_opts_free(&o);

	/* -a: local time, with or without century, year and seconds. */
	assert_int_equal(qsub_parse_date("202611221430.15", now, &ms), 0);
	assert_int_equal(ms, (int64_t)mktime(&tm) * 1000);
	assert_int_equal(qsub_parse_date("2611221430.15", now, &ms), 0);
	assert_int_equal(ms, (int64_t)mktime(&tm) * 1000);
	tm.tm_year = 2023 - 1900;
	tm.tm_sec = 0;
	tm.tm_isdst = -1;
	assert_int_equal(qsub_parse_date("11221430", now, &ms), 0);
	assert_int_equal(ms, (int64_t)mktime(&tm) * 1000);
	assert_int_equal(qsub_parse_date("02301200", now, &ms), -1);   /* February 30th */
	assert_int_equal(qsub_parse_date("11221460", now, &ms), -1);
	assert_int_equal(qsub_parse_date("1122143", now, &ms), -1);
	assert_int_equal(qsub_parse_date("11221430.5", now, &ms), -1);
	assert_int_equal(qsub_parse_date("1122x430", now, &ms), -1);
}

static void
test_error_missing_argument(void **state)
{
	static const char *needs[] = { "-N", "-q", "-o", "-e", "-j", "-wd", "-v", "-p", "-sync",
		"-S", "-b", "-C", NULL };
	struct qsub_opts o;
	char want[128];

	for (int i = 0; needs[i]; i++) {
		qsub_opts_init(&o);
		assert_int_equal(parse(&o, "-cwd", (char *)needs[i], NULL), -1);
		snprintf(want, sizeof want, "option \"%s\" needs an argument", needs[i]);
		assert_string_equal(o.err, want);
		qsub_opts_free(&o);
	}
}

static void
test_error_bad_p(void **state)
{
	static const char *bad[] = { "abc", "1025", "-1024", "1x", "", "99999999999999999999", NULL };
	struct qsub_opts o;

	for (int i = 0; bad[i]; i++) {
		qsub_opts_init(&o);
		assert_int_equal(parse(&o, "-p", (char *)bad[i], NULL), -1);
		assert_non_null(strstr(o.err, "-p wants an integer from -1023 to 1024"));
		assert_false(o.prio_set);
		qsub_opts_free(&o);
	}
	/* The ends of the range are fine. */
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-p", "-1023", NULL), 0);
	assert_int_equal(o.prio, -1023);
	assert_int_equal(parse(&o, "-p", "1024", NULL), 0);
	assert_int_equal(o.prio, 1024);
	qsub_opts_free(&o);
}

static void
test_error_bad_yes_no(void **state)
{
	static const char *opts[] = { "-j", "-b", "-sync", NULL };
	struct qsub_opts o;
	char want[128];

	for (int i = 0; opts[i]; i++) {
		qsub_opts_init(&o);
		assert_int_equal(parse(&o, (char *)opts[i], "maybe", NULL), -1);
		snprintf(want, sizeof want, "%s wants y or n, not \"maybe\"", opts[i]);
		assert_string_equal(o.err, want);
		qsub_opts_free(&o);
	}
}

static void
test_error_bad_values(void **state)
{
	struct qsub_opts o;

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-v", ",,", NULL), -1);
	assert_string_equal(o.err, "-v needs a list of VARIABLE[=VALUE]");
	qsub_opts_free(&o);

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-v", "A=1,=x", NULL), -1);
	assert_non_null(strstr(o.err, "has no variable name"));
	qsub_opts_free(&o);

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-N", "a/b", NULL), -1);
	assert_non_null(strstr(o.err, "-N: the job name \"a/b\""));
	qsub_opts_free(&o);

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-N", "", NULL), -1);
	qsub_opts_free(&o);

	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-q", "", NULL), -1);
	assert_string_equal(o.err, "-q needs a queue name");
	qsub_opts_free(&o);
}

static void
test_error_in_directive(void **state)
{
	struct qsub_opts o;

	qsub_opts_init(&o);
	assert_int_equal(qsub_opts_parse_script(&o, "#!/bin/sh\necho\n#$ -p high\n", "#$"), -1);
	assert_string_equal(o.err, "script line 3: -p wants an integer from -1023 to 1024, not \"high\"");
	qsub_opts_free(&o);

	qsub_opts_init(&o);
	assert_int_equal(qsub_opts_parse_script(&o, "#$ -N a stray\n", "#$"), -1);
	assert_string_equal(o.err, "script line 1: unexpected argument \"stray\" in a directive");
	qsub_opts_free(&o);

	qsub_opts_init(&o);
	assert_int_equal(qsub_opts_parse_script(&o, "#$ -bogus\n", "#$"), -1);
	assert_string_equal(o.err, "script line 1: option \"-bogus\" is not supported by nowq");
	qsub_opts_free(&o);
}

static void
test_error_job(void **state)
{
	struct qsub_opts o;
	char err[256] = "";

	/* -b y without a command. */
	qsub_opts_init(&o);
	assert_int_equal(parse(&o, "-b", "y", NULL), 0);
	assert_null(qsub_job_json(&o, NULL, &test_env, err, sizeof err));
	assert_string_equal(err, "-b y needs a command");
	qsub_opts_free(&o);

	/* More variables than a job may carry. */
	{
		char **big = xcalloc(JOB_MAX_ENV + 2, sizeof *big);
		struct qsub_env e = { NULL, "/w", "h", "u" };
		for (int i = 0; i < JOB_MAX_ENV + 1; i++)
			big[i] = xasprintf("V%d=x", i);
		e.envp = big;
		qsub_opts_init(&o);
		assert_int_equal(parse(&o, "-V", NULL), 0);
		assert_null(qsub_job_json(&o, "true\n", &e, err, sizeof err));
		assert_non_null(strstr(err, "the job's env has"));
		assert_non_null(strstr(err, "more than the limit of 4096"));
		qsub_opts_free(&o);
		strv_free(big);
	}

	/* A script the wire cannot carry. */
	qsub_opts_init(&o);
	assert_null(qsub_job_json(&o, "echo \xff\xfe\n", &test_env, err, sizeof err));
	assert_string_equal(err, "the script is not UTF-8 text");
	qsub_opts_free(&o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_option),
		cmocka_unit_test(test_queue_at_hosts),
		cmocka_unit_test(test_cwd_and_wd_last_wins),
		cmocka_unit_test(test_operands_end_options),
		cmocka_unit_test(test_binary_argv_exact),
		cmocka_unit_test(test_default_names),
		cmocka_unit_test(test_v_values),
		cmocka_unit_test(test_env_V_and_sge_o),
		cmocka_unit_test(test_directives_then_command_line),
		cmocka_unit_test(test_directive_words),
		cmocka_unit_test(test_prefix),
		cmocka_unit_test(test_error_unknown_option),
		cmocka_unit_test(test_sizes_and_times),
		cmocka_unit_test(test_resource_requests),
		cmocka_unit_test(test_nextflow_resources),
		cmocka_unit_test(test_hard_and_soft),
		cmocka_unit_test(test_complex_list),
		cmocka_unit_test(test_recorded_options),
		cmocka_unit_test(test_arrays_and_parallel),
		cmocka_unit_test(test_dependencies_and_dates),
		cmocka_unit_test(test_error_missing_argument),
		cmocka_unit_test(test_error_bad_p),
		cmocka_unit_test(test_error_bad_yes_no),
		cmocka_unit_test(test_error_bad_values),
		cmocka_unit_test(test_error_in_directive),
		cmocka_unit_test(test_error_job),
		cmocka_unit_test(test_stage_lists),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("qsub_opts", tests, NULL, NULL);
}
