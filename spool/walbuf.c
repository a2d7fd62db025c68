/* walbuf.c: an SQLite VFS that gathers a commit's WAL frames into one write. */
#include "config.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "spool/store_int.h"

/*
 * Why.  SQLite writes each WAL frame as two writes (its 24-byte header,
 * then the page), so a submission that touches a dozen pages of the jobs
 * table and its indexes costs two dozen pwrite calls before its one
 * fdatasync; on a virtual machine each system call costs several
 * microseconds, and those calls were most of the master's CPU per
 * submission.  This VFS passes everything to the default one except the
 * writes of a WAL file, which it keeps in memory while they append to one
 * run of bytes and writes out in one call before anything could look at
 * the file: a sync, a read, a size, a truncate, a lock change, a close.
 *
 * Why it is safe.  With synchronous=FULL (store.c) SQLite syncs the WAL at
 * every commit before it publishes the commit in the WAL index, and only
 * the index tells other connections (the reader thread, qmaster -C) which
 * frames to read; cache_spill=OFF keeps frames out of the WAL until the
 * commit.  So no connection can look for bytes still in the buffer, and a
 * write that fails surfaces at the sync, which fails the commit as the
 * write itself would have.
 */

#define WALBUF_NAME	"nowq-walbuf"
/* A commit larger than this (a purge of thousands of jobs) goes out in
 * several writes, so memory stays bounded. */
#define WALBUF_MAX	(1u << 20)
/* The unix VFS writes at most 128 KiB - 1 bytes a call (it masks the
 * count, since no page of SQLite's is larger), so the buffer goes out in
 * slices of this. */
#define WALBUF_SLICE	(1u << 16)

struct wb_file {
	sqlite3_file   base;
	sqlite3_file  *real;      /* the default VFS's file, right after this */
	unsigned char *buf;
	sqlite3_int64  off;       /* where buf[0] goes in the file */
	size_t         len;
};

static sqlite3_vfs *wb_parent;

static int
wb_flush(struct wb_file *f)
{
	size_t done, n;
	int rc = SQLITE_OK;

	for (done = 0; done < f->len && rc == SQLITE_OK; done += n) {
		n = f->len - done < WALBUF_SLICE ? f->len - done : WALBUF_SLICE;
		rc = f->real->pMethods->xWrite(f->real, f->buf + done, (int)n,
		    f->off + (sqlite3_int64)done);
	}
	f->len = 0;
	return rc;
}

static int
wb_write(sqlite3_file *fp, const void *p, int n, sqlite3_int64 off)
{
	struct wb_file *f = (struct wb_file *)fp;
	sqlite3_int64 end = f->off + (sqlite3_int64)f->len;
	int rc;

	assert(n >= 0 && off >= 0);
	/* A rewrite of bytes still here (SQLite rewrites the frames of the
	 * transaction it is writing when it checksums them again). */
	if (f->len && off >= f->off && off + n <= end) {
		memcpy(f->buf + (off - f->off), p, (size_t)n);
		return SQLITE_OK;
	}
	if (f->len && (off != end || f->len + (size_t)n > WALBUF_MAX)) {
		if ((rc = wb_flush(f)) != SQLITE_OK)
			return rc;
	}
	if ((size_t)n > WALBUF_MAX)
		return f->real->pMethods->xWrite(f->real, p, n, off);
	if (f->len == 0)
		f->off = off;
	memcpy(f->buf + f->len, p, (size_t)n);
	f->len += (size_t)n;
	return SQLITE_OK;
}

static int
wb_close(sqlite3_file *fp)
{
	struct wb_file *f = (struct wb_file *)fp;
	int rc = wb_flush(f), rc2 = f->real->pMethods->xClose(f->real);

	free(f->buf);
	f->buf = NULL;
	return rc != SQLITE_OK ? rc : rc2;
}

/* Everything else is the default VFS's, after the buffer is written. */
#define WB_FLUSHED(call) \
	struct wb_file *f = (struct wb_file *)fp; \
	int rc = wb_flush(f); \
	return rc != SQLITE_OK ? rc : f->real->pMethods->call

static int wb_read(sqlite3_file *fp, void *p, int n, sqlite3_int64 off)
{ WB_FLUSHED(xRead(f->real, p, n, off)); }
static int wb_truncate(sqlite3_file *fp, sqlite3_int64 size)
{ WB_FLUSHED(xTruncate(f->real, size)); }
static int wb_sync(sqlite3_file *fp, int flags)
{ WB_FLUSHED(xSync(f->real, flags)); }
static int wb_size(sqlite3_file *fp, sqlite3_int64 *size)
{ WB_FLUSHED(xFileSize(f->real, size)); }
static int wb_lock(sqlite3_file *fp, int level)
{ WB_FLUSHED(xLock(f->real, level)); }
static int wb_unlock(sqlite3_file *fp, int level)
{ WB_FLUSHED(xUnlock(f->real, level)); }
static int wb_file_control(sqlite3_file *fp, int op, void *arg)
{ WB_FLUSHED(xFileControl(f->real, op, arg)); }
static int wb_shm_lock(sqlite3_file *fp, int ofs, int n, int flags)
{ WB_FLUSHED(xShmLock(f->real, ofs, n, flags)); }
static int wb_fetch(sqlite3_file *fp, sqlite3_int64 off, int n, void **pp)
{ WB_FLUSHED(xFetch(f->real, off, n, pp)); }

/* Neither reads nor writes the file's bytes. */
static int wb_reserved(sqlite3_file *fp, int *out)
{ struct wb_file *f = (struct wb_file *)fp; return f->real->pMethods->xCheckReservedLock(f->real, out); }
static int wb_sector(sqlite3_file *fp)
{ struct wb_file *f = (struct wb_file *)fp; return f->real->pMethods->xSectorSize(f->real); }
static int wb_device(sqlite3_file *fp)
{ struct wb_file *f = (struct wb_file *)fp; return f->real->pMethods->xDeviceCharacteristics(f->real); }
static int wb_shm_map(sqlite3_file *fp, int pg, int sz, int extend, void volatile **pp)
{ struct wb_file *f = (struct wb_file *)fp; return f->real->pMethods->xShmMap(f->real, pg, sz, extend, pp); }
static void wb_shm_barrier(sqlite3_file *fp)
{ struct wb_file *f = (struct wb_file *)fp; f->real->pMethods->xShmBarrier(f->real); }
static int wb_shm_unmap(sqlite3_file *fp, int del)
{ struct wb_file *f = (struct wb_file *)fp; return f->real->pMethods->xShmUnmap(f->real, del); }
static int wb_unfetch(sqlite3_file *fp, sqlite3_int64 off, void *p)
{ struct wb_file *f = (struct wb_file *)fp; return f->real->pMethods->xUnfetch(f->real, off, p); }

static const sqlite3_io_methods wb_methods = {
	.iVersion = 3,
	.xClose = wb_close,
	.xRead = wb_read,
	.xWrite = wb_write,
	.xTruncate = wb_truncate,
	.xSync = wb_sync,
	.xFileSize = wb_size,
	.xLock = wb_lock,
	.xUnlock = wb_unlock,
	.xCheckReservedLock = wb_reserved,
	.xFileControl = wb_file_control,
	.xSectorSize = wb_sector,
	.xDeviceCharacteristics = wb_device,
	.xShmMap = wb_shm_map,
	.xShmLock = wb_shm_lock,
	.xShmBarrier = wb_shm_barrier,
	.xShmUnmap = wb_shm_unmap,
	.xFetch = wb_fetch,
	.xUnfetch = wb_unfetch,
};

static int
wb_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *fp, int flags, int *out)
{
	struct wb_file *f = (struct wb_file *)fp;
	int rc;

	(void)vfs;
	/* Only a WAL gets the buffer; any other file is the default VFS's own,
	 * in the same memory. */
	if (!(flags & SQLITE_OPEN_WAL))
		return wb_parent->xOpen(wb_parent, name, fp, flags, out);
	memset(f, 0, sizeof *f);
	f->real = (sqlite3_file *)(f + 1);
	if ((rc = wb_parent->xOpen(wb_parent, name, f->real, flags, out)) != SQLITE_OK)
		return rc;
	/* A WAL below version 3 could not be shared (no xShm*): not ours. */
	assert(f->real->pMethods && f->real->pMethods->iVersion >= 3);
	if ((f->buf = malloc(WALBUF_MAX)) == NULL) {
		f->real->pMethods->xClose(f->real);
		return SQLITE_NOMEM;
	}
	f->base.pMethods = &wb_methods;
	return SQLITE_OK;
}

static sqlite3_vfs wb_vfs;

const char *
store_walbuf_vfs(void)
{
	if (wb_parent == NULL) {
		wb_parent = sqlite3_vfs_find(NULL);
		assert(wb_parent != NULL);
		/* The default VFS's functions for everything but xOpen. */
		wb_vfs = *wb_parent;
		wb_vfs.zName = WALBUF_NAME;
		wb_vfs.szOsFile = (int)sizeof(struct wb_file) + wb_parent->szOsFile;
		wb_vfs.pNext = NULL;
		wb_vfs.xOpen = wb_open;
		if (sqlite3_vfs_register(&wb_vfs, 0) != SQLITE_OK)
			abort();
	}
	return WALBUF_NAME;
}
