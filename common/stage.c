/* stage.c: file staging's shared rules: SHA-256, the paths and lists qsub --stage-in/--stage-out may name. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "common.h"

/* ---- SHA-256 (FIPS 180-4) ---- */

static const uint32_t sha_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void
sha256_block(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, k, t1, t2;

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0]; b = h[1]; c = h[2]; d = h[3]; e = h[4]; f = h[5]; g = h[6]; k = h[7];
	for (int i = 0; i < 64; i++) {
		t1 = k + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + sha_k[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		k = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
	}
	h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The same rounds with the CPU's SHA extensions (about ten times the
 * portable code's speed: every staged file is hashed three times). */
__attribute__((target("sha,sse4.1,ssse3")))
static void
sha256_blocks_ni(uint32_t h[8], const unsigned char *p, size_t nblocks)
{
	const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
	__m128i st0, st1, tmp, msg, w[4], save0, save1;

	tmp = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xB1);   /* CDAB */
	st1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1B);   /* EFGH */
	st0 = _mm_alignr_epi8(tmp, st1, 8);                                       /* ABEF */
	st1 = _mm_blend_epi16(st1, tmp, 0xF0);                                    /* CDGH */
	for (; nblocks > 0; nblocks--, p += 64) {
		save0 = st0;
		save1 = st1;
		/* Unrolled, the schedule's four words stay in registers. */
#pragma GCC unroll 16
		for (int g = 0; g < 16; g++) {
			if (g < 4)
				w[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), swap);
			else {
				tmp = _mm_sha256msg1_epu32(w[g % 4], w[(g + 1) % 4]);
				tmp = _mm_add_epi32(tmp, _mm_alignr_epi8(w[(g + 3) % 4], w[(g + 2) % 4], 4));
				w[g % 4] = _mm_sha256msg2_epu32(tmp, w[(g + 3) % 4]);
			}
			msg = _mm_add_epi32(w[g % 4], _mm_loadu_si128((const __m128i *)&sha_k[4 * g]));
			st1 = _mm_sha256rnds2_epu32(st1, st0, msg);
			st0 = _mm_sha256rnds2_epu32(st0, st1, _mm_shuffle_epi32(msg, 0x0E));
		}
		st0 = _mm_add_epi32(st0, save0);
		st1 = _mm_add_epi32(st1, save1);
	}
	tmp = _mm_shuffle_epi32(st0, 0x1B);                                       /* FEBA */
	st1 = _mm_shuffle_epi32(st1, 0xB1);                                       /* DCHG */
	st0 = _mm_blend_epi16(tmp, st1, 0xF0);                                    /* DCBA */
	st1 = _mm_alignr_epi8(st1, tmp, 8);                                       /* HGFE */
	_mm_storeu_si128((__m128i *)&h[0], st0);
	_mm_storeu_si128((__m128i *)&h[4], st1);
}

static bool
sha256_have_ni(void)
{
	static int have = -1;
	unsigned a, b, c, d;

	if (have < 0)
		have = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_1) && (c & bit_SSSE3) &&
		    __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
	return have;
}
#endif

static void
sha256_blocks(uint32_t h[8], const unsigned char *p, size_t nblocks)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (sha256_have_ni()) {
		sha256_blocks_ni(h, p, nblocks);
		return;
	}
#endif
	for (; nblocks > 0; nblocks--, p += 64)
		sha256_block(h, p);
}

void
sha256_init(struct sha256 *s)
{
	static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };

	memcpy(s->h, iv, sizeof iv);
	s->len = 0;
	s->nbuf = 0;
}

void
sha256_update(struct sha256 *s, const void *data, size_t n)
{
	const unsigned char *p = data;

	s->len += n;
	if (s->nbuf) {
		size_t take = 64 - s->nbuf < n ? 64 - s->nbuf : n;
		memcpy(s->buf + s->nbuf, p, take);
		s->nbuf += take;
		p += take;
		n -= take;
		if (s->nbuf < 64)
			return;
		sha256_blocks(s->h, s->buf, 1);
		s->nbuf = 0;
	}
	sha256_blocks(s->h, p, n / 64);
	p += n / 64 * 64;
	n %= 64;
	memcpy(s->buf, p, n);
	s->nbuf = n;
}

void
sha256_hex(struct sha256 *s, char out[SHA256_HEX + 1])
{
	uint64_t bits = s->len * 8;
	unsigned char pad[72] = { 0x80 };
	size_t padn = (s->nbuf < 56 ? 56 : 120) - s->nbuf;

	for (int i = 0; i < 8; i++)
		pad[padn + i] = (unsigned char)(bits >> (56 - 8 * i));
	sha256_update(s, pad, padn + 8);
	for (int i = 0; i < 8; i++)
		snprintf(out + 8 * i, 9, "%08x", s->h[i]);
}

int
sha256_fd(int fd, char out[SHA256_HEX + 1], int64_t *size)
{
	static _Thread_local unsigned char buf[1 << 16];
	struct sha256 s;
	ssize_t r;

	sha256_init(&s);
	*size = 0;
	while ((r = read(fd, buf, sizeof buf)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		sha256_update(&s, buf, (size_t)r);
		*size += r;
	}
	sha256_hex(&s, out);
	return 0;
}

/* Starts the disk writes of what fd got from *done up to upto, once that
 * is STAGE_WRITEBACK or more: the writes then go on while the file comes
 * in, and the fsync at its end waits for the last few MiB, not for the
 * whole file.  It does not wait for them itself.
 *
 * What was started a slice earlier is written by now, and its pages are
 * let go (stage_drop_behind): a staged file is read again only by a later
 * fetch or copy, so keeping it cached would only push out what the host
 * does use (the master's database), and the next slice's pages are then
 * the ones just freed.  On a virtual machine that matters most: a page
 * the guest has not used lately costs several times a recycled one to
 * fill (BENCHMARKS.md, "File staging"). */
void
stage_writeback(int fd, int64_t *done, int64_t upto)
{
	if (upto - *done < STAGE_WRITEBACK)
		return;
	stage_drop_behind(fd, *done);
#ifdef SYNC_FILE_RANGE_WRITE
	(void)sync_file_range(fd, *done, upto - *done, SYNC_FILE_RANGE_WRITE);
#endif
	*done = upto;
}

/* fd's cached pages before upto let go, those still being written kept
 * (the kernel skips them): it never waits for the disk. */
void
stage_drop_behind(int fd, int64_t upto)
{
#ifdef POSIX_FADV_DONTNEED
	if (upto > 0)
		(void)posix_fadvise(fd, 0, upto, POSIX_FADV_DONTNEED);
#else
	(void)fd;
	(void)upto;
#endif
}

bool
sha256_hex_ok(const char *s)
{
	if (!s || strlen(s) != SHA256_HEX)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

/* ---- paths ---- */

/* Relative, no "." or ".." or empty component, printable, bounded: a path
 * that stays inside the directory it is taken from, whatever it names. */
static bool
stage_path_check(const char *p, const char **why)
{
	const char *c;
	size_t n;

	if (!p || !*p) {
		*why = "a staged path is empty";
		return false;
	}
	if (strlen(p) > STAGE_MAX_PATH) {
		*why = "a staged path is longer than 1024 bytes";
		return false;
	}
	if (p[0] == '/') {
		*why = "a staged path must be relative, not absolute";
		return false;
	}
	for (c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == ',') {
			*why = "a staged path holds a control character or a comma";
			return false;
		}
	for (c = p; *c; c += n + (c[n] == '/')) {
		n = strcspn(c, "/");
		if (n == 0) {
			*why = "a staged path has an empty component (// or a trailing /)";
			return false;
		}
		if ((n == 2 && strncmp(c, "..", 2) == 0) || (n == 1 && c[0] == '.')) {
			*why = "a staged path may not hold \".\" or \"..\"";
			return false;
		}
		if (c[n] == '/' && !c[n + 1]) {
			*why = "a staged path has an empty component (// or a trailing /)";
			return false;
		}
	}
	return true;
}

bool
stage_path_ok(const char *p, const char **why)
{
	return stage_path_check(p, why);
}

bool
stage_pattern_ok(const char *p, const char **why)
{
	return stage_path_check(p, why);
}

json_t *
stage_file_pack(const struct stage_file *f)
{
	json_t *o = json_object();

	assert(f->sha256);
	if (f->name)
		json_object_set_new(o, "name", json_string(f->name));
	json_object_set_new(o, "size", json_integer(f->size));
	json_object_set_new(o, "sha256", json_string(f->sha256));
	if (f->task > 0)
		json_object_set_new(o, "task", json_integer(f->task));
	if (f->mode > 0)
		json_object_set_new(o, "mode", json_integer(f->mode & 0777));
	return o;
}

void
stage_file_unpack(const json_t *o, struct stage_file *f)
{
	f->name = jstr(o, "name");
	f->sha256 = jstr(o, "sha256");
	f->size = jint(o, "size", -1);
	f->task = jint(o, "task", 0);
	f->mode = jint(o, "mode", 0);
}

/* A job's inputs: [{name, size, sha256}], each name a path once. */
bool
stage_files_ok(const json_t *a, size_t most, const char **why)
{
	size_t i;
	json_t *v;

	if (!json_is_array(a) || json_array_size(a) > most) {
		*why = "a job's staged files are not a list of at most 10000 {name, size, sha256}";
		return false;
	}
	json_array_foreach(a, i, v) {
		struct stage_file f, g;

		stage_file_unpack(v, &f);
		if (!json_is_object(v) || !stage_path_ok(f.name, why))
			return false;
		if (f.size < 0 || !sha256_hex_ok(f.sha256)) {
			*why = "a staged file needs a size and a SHA-256 of 64 hex digits";
			return false;
		}
		if (f.mode < 0 || f.mode > 0777) {
			*why = "a staged file's mode is its permission bits, 0 to 0777";
			return false;
		}
		for (size_t k = 0; k < i; k++) {
			stage_file_unpack(json_array_get(a, k), &g);
			if (strcmp(g.name, f.name) == 0 && g.task == f.task) {
				*why = "a file is staged twice under one name";
				return false;
			}
		}
	}
	return true;
}

int64_t
stage_files_bytes(const json_t *a)
{
	int64_t sum = 0;
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v) {
		struct stage_file f;
		stage_file_unpack(v, &f);
		sum += f.size;
	}
	return sum;
}

/* A -t job's output NAME comes back as NAME.TASK; under a folder the
 * folder gets the suffix (dir/a.txt: dir.TASK/a.txt), as Grid Engine names
 * a task's default output NAME.oID.TASK. */
char *
stage_task_name(const char *name, int task)
{
	size_t n = strcspn(name, "/");

	if (task <= 0)
		return xstrdup(name);
	return xasprintf("%.*s.%d%s", (int)n, name, task, name + n);
}
