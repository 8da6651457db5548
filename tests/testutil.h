/* Shared helpers for the cmocka test programs. */
#ifndef WKS_TESTUTIL_H
#define WKS_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "wks/wks.h"
#include "util/buf.h"

/* Path of a file under shared/ (static buffer, one at a time per call site). */
const char *tu_shared(const char *rel);

/* Read a whole file (malloc'ed; *len set).  Fails the test if unreadable. */
uint8_t *tu_read_file(const char *path, size_t *len);

/* Write a whole file.  Fails the test on error. */
void tu_write_file(const char *path, const uint8_t *data, size_t len);

/* A fresh temporary folder (mkdtemp under $TMPDIR or /tmp); removed with
 * everything in it by tu_rmtree(). */
char *tu_tmpdir(void);
void tu_rmtree(const char *path);

/* Lowercase hex of SHA-256(data). out must hold 65 bytes. */
void tu_sha256_hex(char out[65], const uint8_t *data, size_t len);

/* Hex -> bytes (malloc'ed). */
uint8_t *tu_unhex(const char *hex, size_t *len);

/* Run a shell command, return its exit status (-1 if it did not exit). */
int tu_system(const char *fmt, ...);

/* Assert that a wks call returned `want`, printing the detail if not. */
#define TU_EXPECT(want, call) do { \
	int tu_rc_ = (call); \
	if (tu_rc_ != (want)) \
		fail_msg("%s: got %d (%s: %s), want %d", #call, tu_rc_, \
		         wks_strerror(tu_rc_), wks_error_detail(), (want)); \
} while (0)
#define TU_OK(call) TU_EXPECT(WKS_OK, call)

/* A store configured with low iteration counts (10000) for fast tests. */
wks_store *tu_store_fast(void);

#endif
