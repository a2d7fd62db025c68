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

#include "common/msg.h"
#include "execd/execd.h"

/*
 * A part's job object (msg_dispatch_part_pack) is kept as job.json in the
 * attempt's folder, where the shepherd reads its part and hosts back.  The
 * host file has Grid Engine's lines, "host slots queue
 * processors", and belongs to the job's owner.
 */
const char *
pe_part_prepare(const char *dir, const struct job *j, const char *tmpdir, bool root, struct pe_part *pp)
{
	static char why[512];
	char *path = xasprintf("%s/job.json", dir), *text, *file = NULL, *t;
	const char *err;
	struct msg_dispatch_part dp;
	const json_t *h;
	json_t *o;
	size_t i, len;
	int fd;

	memset(pp, 0, sizeof *pp);
	text = read_file(path, 64u * 1024 * 1024, NULL, &err);
	free(path);
	o = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	if ((err = msg_dispatch_part_unpack(o, &dp)) != NULL) {
		json_decref(o);
		return err;
	}
	pp->part = (int)dp.part;
	pp->petask = (int)dp.petask;
	pp->nhosts = (int)json_array_size(dp.pe_hosts);
	json_array_foreach(dp.pe_hosts, i, h) {
		struct msg_pe_host ph;

		msg_pe_host_unpack(h, &ph);
		if (strcmp(ph.host, conf->name) == 0)
			pp->slots = (int)ph.slots;
		t = file;
		file = xasprintf("%s%s %lld %s@%s UNDEFINED\n", t ? t : "", ph.host, (long long)ph.slots,
		    j->queue ? j->queue : "", ph.host);
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
