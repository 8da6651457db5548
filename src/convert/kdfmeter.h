/*
 * The key-derivation budget and memo of one conversion (internal to
 * src/convert/).
 *
 * A foreign keystore names its own salts and iteration counts, and every
 * key in it may cost a password-based derivation: each is capped by
 * libwks.wks.maxIterationCount, but a file of many small entries would
 * still buy hours of CPU.  So every derivation a conversion runs from a
 * password (JCEKS's PBE, PKCS#12's PBKDF2 and PKCS#12-KDF keys and IVs,
 * the PKCS#12 MAC key) goes through one meter, made for the call
 * (wks_convert_read(), wks_p12_parse()) or for the life of a parsed Java
 * keystore (wks_java_parse() to wks_java_free(), every wks_java_get_key()
 * and wks_java_get_secret() on it):
 *
 *   - a derivation this meter ran already (same algorithm, salt,
 *     iteration count, output length and password) is copied from its
 *     memo and costs nothing: a PKCS#12 holding one key bag many times, or
 *     a JCEKS whose junk entries share a salt, derives once;
 *   - any other is charged its iteration count before it runs; when the
 *     sum would pass libwks.convert.maxKdfIterations the derivation is
 *     refused (WKS_ERR_LIMIT, detail naming the property) and so is every
 *     later one: the budget is spent.
 *
 * JKS's own key protection has no iteration count (one SHA-1 per 20 bytes
 * of key, bounded by the file's size) and is not metered.
 *
 * The memo holds derived keys: it is wiped when an entry is replaced and
 * when the meter is freed.  A meter may be used from several threads at
 * once (a wks_java_store is passed as const); derivations run outside its
 * lock.
 */
#ifndef WKS_CONVERT_KDFMETER_H
#define WKS_CONVERT_KDFMETER_H

#include <stddef.h>
#include <stdint.h>

typedef struct wks__kdf_meter wks__kdf_meter;

/* A meter with a budget of `max_iterations` (the value of
 * libwks.convert.maxKdfIterations; see wks__convert_limits()).  NULL when
 * out of memory. */
wks__kdf_meter *wks__kdf_meter_new(uint64_t max_iterations);
/* Wipe the memo and free (NULL is ignored). */
void wks__kdf_meter_free(wks__kdf_meter *m);
/* 1 once a derivation was refused for the budget. */
int wks__kdf_meter_spent(const wks__kdf_meter *m);

/*
 * What a derivation is: the algorithm (`what`, e.g. "PBKDF2/sha256"), two
 * numbers (iteration count, output length or key id...), the salt and the
 * password (pw == NULL is not the empty password: PKCS#12's KDF treats
 * them differently).  Two derivations with equal descriptions give equal
 * bytes.
 */
typedef struct {
	const char *what;
	uint64_t n1, n2;
	const uint8_t *salt;
	size_t salt_len;
	const char *pw;
	size_t pw_len;
} wks__kdf_desc;

/* Derive out_len bytes into out (the caller's buffer); 1 on success. */
typedef int (*wks__kdf_fn)(void *arg, uint8_t *out, size_t out_len);

/*
 * Derive `d` into out[0..out_len) with fn(arg, out, out_len), which costs
 * `iterations`: from the memo if this meter derived `d` before, else
 * charged and run (and remembered when out_len <= 64).  Returns 0,
 * WKS_ERR_LIMIT (the budget: nothing run), WKS_ERR_CRYPTO (fn failed;
 * out wiped) or WKS_ERR_NOMEM, with the detail set.  m == NULL: no budget
 * and no memo, the run is still counted.
 */
int wks__kdf_run(wks__kdf_meter *m, const wks__kdf_desc *d,
		 uint64_t iterations, wks__kdf_fn fn, void *arg,
		 uint8_t *out, size_t out_len);

/* Charge `runs` derivations of `iterations` each that OpenSSL runs itself
 * (no memo: the PKCS#12 MAC, PBE algorithms the memo does not know).
 * 0 or WKS_ERR_LIMIT; m == NULL: only counted. */
int wks__kdf_charge(wks__kdf_meter *m, uint64_t iterations, unsigned runs);

/* For tests: the number of derivations run (not taken from a memo) by
 * every meter of the process since it started. */
unsigned long wks__convert_kdf_runs(void);

#endif
