/* pe.c: the execd's side of a parallel job's part: NOWQ_VNN, its hosts, PE_HOSTFILE.
 *
 * The PE_HOSTFILE is written into the job's TMPDIR. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "execd/execd.h"

/*
 * The master puts "part" (0 for the master part) and "pe_hosts" ([{host,
 * slots}], master host first) into a part's job object; the execd keeps
 * the object as job.json in the attempt's folder, where the shepherd reads
 * them back.  The host file has Grid Engine's lines, "host slots queue
 * processors", and belongs to the job's owner.
 */
const char *
pe_part_prepare(const char *dir, const struct job *j, const char *tmpdir, bool root, struct pe_part *pp)
{
	static char why[512];
	char *path = xasprintf("%s/job.json", dir), *text, *file = NULL, *t;
	const char *err;
	json_t *o, *hosts, *h;
	size_t i, len;
	int fd;

	memset(pp, 0, sizeof *pp);
	text = read_file(path, 64u * 1024 * 1024, NULL, &err);
	free(path);
	o = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	hosts = json_object_get(o, "pe_hosts");
	if (!json_is_array(hosts) || json_array_size(hosts) == 0 || json_array_size(hosts) > JOB_MAX_SLOTS ||
	    jint(o, "part", -1) < 0 || jint(o, "part", -1) >= (int64_t)json_array_size(hosts)) {
		json_decref(o);
		return "the parallel job's part has no valid part and pe_hosts";
	}
	pp->part = (int)jint(o, "part", 0);
	pp->petask = (int)(jint(o, "petask", 0) > 0 && jint(o, "petask", 0) <= INT32_MAX ? jint(o, "petask", 0) : 0);
	pp->nhosts = (int)json_array_size(hosts);
	json_array_foreach(hosts, i, h) {
		const char *name = jstr(h, "host");
		int64_t slots = jint(h, "slots", 0);
		if (!name || !*name || strpbrk(name, " \n") || slots < 1 || slots > JOB_MAX_SLOTS) {
			free(file);
			json_decref(o);
			return "the parallel job's pe_hosts holds a bad host";
		}
		if (strcmp(name, conf->name) == 0)
			pp->slots = (int)slots;
		t = file;
		file = xasprintf("%s%s %lld %s@%s UNDEFINED\n", t ? t : "", name, (long long)slots,
		    j->queue ? j->queue : "", name);
		free(t);
	}
	json_decref(o);
	pp->hostfile = xasprintf("%s/pe_hostfile", tmpdir);
	len = strlen(file);
	/* TMPDIR is the owner's and may be one a killed shepherd left: never
	 * follow what may already be there, replace it. */
	if (unlink(pp->hostfile) < 0 && errno != ENOENT) {
		snprintf(why, sizeof why, "cannot replace %s: %s", pp->hostfile, strerror(errno));
		free(file);
		return why;
	}
	if ((fd = open(pp->hostfile, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0 ||
	    write(fd, file, len) != (ssize_t)len || (root && fchown(fd, j->uid, j->gid) < 0)) {
		snprintf(why, sizeof why, "cannot write %s: %s", pp->hostfile, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(file);
		return why;
	}
	close(fd);
	free(file);
	return NULL;
}
