/* fuzz.h: what the fuzz targets of t/fuzz share: the one entry that libFuzzer and the corpus replayer both call. */
#ifndef NOWQ_FUZZ_H
#define NOWQ_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* One input; returns 0.  A fault is a crash (assert, sanitizer report),
 * which is what both drivers look for. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (cut at its first NUL, as every C
 * parser sees it); free it. */
char *fuzz_cstr(const uint8_t *data, size_t size);

/* The input written to a file of its own, for parsers that read a path;
 * the caller unlinks and frees the name. */
char *fuzz_file(const uint8_t *data, size_t size);

/* Parsers that report on stderr would drown the fuzzer's output; the
 * sanitizers write to fd 2 directly and are not affected. */
void  fuzz_quiet(void);

#endif
