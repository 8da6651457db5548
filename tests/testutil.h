/* Shared helpers for the cmocka test programs. */
#ifndef WKS_TESTUTIL_H
#define WKS_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
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

/* Wait for the child `pid` for about bound_ms milliseconds at most (1 ms
 * polls); kill it (SIGKILL) and reap it if it is still running then.
 * Returns its wait status, or -1 if it had to be killed. */
int tu_reap_bounded(pid_t pid, int bound_ms);

/* Run a shell command, return its exit status (-1 if it did not exit). */
int tu_system(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;

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

/* The test suite's two modes (tests/run.sh --help): the default samples
 * the exhaustive tests (a stride, a fixed seed, fewer rounds, the same
 * assertions); WKS_TEST_FULL=1 (tests/run.sh --full, CI's plain stage)
 * runs them in full.  tu_env_count(NAME, quick, full): NAME's value when
 * set and not empty, else the mode's default. */
int tu_full_mode(void);
size_t tu_env_count(const char *name, size_t quick, size_t full);

/* ---- additions for the vector, interop, rules, tamper and thread tests ---- */

#include <cjson/cJSON.h>

/* One DER object read from a PEM file. */
typedef struct {
	uint8_t *der;
	size_t len;
} tu_der;

/* Path of a file in shared/vectors/wolfjce-live/inputs/ (static buffer). */
const char *tu_input(const char *name);

/* Every PEM block of a file whose label is `label` (NULL: any label), as
 * the exact DER bytes of the block.  Returns the count (fails the test if
 * there is none); free with tu_ders_free(). */
size_t tu_pem_ders(tu_der **out, const char *path, const char *label);
void tu_ders_free(tu_der *v, size_t n);

/* Parse a JSON file (fails the test on error).  Free with cJSON_Delete(). */
cJSON *tu_json_file(const char *path);

/* Lowercase hex of n bytes into out (2n+1 bytes), or malloc'ed. */
void tu_hex(char *out, const uint8_t *p, size_t n);
char *tu_hex_dup(const uint8_t *p, size_t n);

/* Big-endian 32-bit helpers for patching WKS images. */
uint32_t tu_get_be32(const uint8_t *p);
void tu_put_be32(uint8_t *p, uint32_t v);

/* Recompute the store MAC of a WKS image whose trailer is its last 92
 * bytes, with OpenSSL's PBKDF2 directly (independent of libwks). */
void tu_restamp(uint8_t *data, size_t len, const char *pw);

/* A shell single-quoted copy of s (malloc'ed). */
char *tu_shell_quote(const char *s);

/*
 * Set a private key entry from files in the inputs/ folder: the PKCS#8 PEM
 * `key_name` and every certificate of `chain_name` (leaf first).  Returns
 * the wks_store_set_private_key() result.
 */
int tu_set_key_files(wks_store *st, const char *alias, const char *key_name,
                     const char *chain_name, const char *pw);

/* SHA-256 hex of the PKCS#8 DER in inputs/`key_name`. */
void tu_input_key_sha(char out[65], const char *key_name);

#endif
