/*
 * fuzz_load_pw: a hostile file loaded with the password (store MAC
 * checked).  Fuzz builds accept 1 to FUZZ_MAX_ITER iterations (see
 * fuzz_settings()), so a store MAC costs one cheap PBKDF2.
 *
 * A fuzzer cannot forge the store MAC, so the target also re-MACs every
 * input that parses (with PBKDF2 from OpenSSL, independent of libwks) and
 * loads that copy: the code after the MAC check (sorting, duplicates,
 * swapping the entries in) then sees fuzzed content too.
 *
 * Oracles:
 *  - the load succeeds exactly when the file parses and its MAC, computed
 *    independently, matches; otherwise a clean class (FORMAT, LIMIT,
 *    INVALID, or INTEGRITY for a parsable file with a wrong MAC);
 *  - a re-MACed parsable file loads;
 *  - what loaded saves and loads again (with the password) to the same
 *    aliases.
 */
#include "fuzz_common.h"

#include "config/config.h"
#include "format/format.h"
#include "store/decode.h"

#include <openssl/hmac.h>

int FUZZ_INIT(int *argc, char ***argv);
int FUZZ_ENTRY(const uint8_t *data, size_t size);

int FUZZ_INIT(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_settings();
	return 0;
}

static void loadpw_same_aliases(wks_store *a, wks_store *b)
{
	char **x = NULL, **y = NULL;
	size_t nx = 0, ny = 0, i;

	FUZZ_CHECK(wks_store_aliases(&x, &nx, a) == WKS_OK, "aliases");
	FUZZ_CHECK(wks_store_aliases(&y, &ny, b) == WKS_OK, "aliases");
	FUZZ_CHECK(nx == ny, "%zu vs %zu aliases", nx, ny);
	for (i = 0; i < nx; i++) {
		FUZZ_CHECK(strcmp(x[i], y[i]) == 0, "alias %zu differs", i);
		FUZZ_CHECK(wks_store_entry_type(a, x[i]) ==
		           wks_store_entry_type(b, y[i]), "type of %zu", i);
	}
	wks_aliases_free(x);
	wks_aliases_free(y);
}

/* Save `st` with the password and load the result into a new store. */
static void loadpw_check_save(wks_store *st)
{
	wks_store *again = NULL;
	uint8_t *out = NULL;
	size_t out_len = 0;
	int rc;

	rc = wks_store_save_buffer(st, &out, &out_len, FUZZ_PW, FUZZ_PW_LEN);
	FUZZ_CHECK(rc == WKS_OK, "save_buffer: %d", rc);
	FUZZ_CHECK(wks_store_new(&again) == WKS_OK, "store_new");
	rc = wks_store_load_buffer(again, out, out_len, FUZZ_PW, FUZZ_PW_LEN);
	FUZZ_CHECK(rc == WKS_OK, "reload of a saved store: %d", rc);
	loadpw_same_aliases(st, again);
	wks_store_free(again);
	wks_free(out);
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	wks_entry **v = NULL;
	wks_file_info fi;
	wks_settings cfg;
	wks_store *st = NULL;
	uint8_t mac[64], *copy = NULL;
	unsigned mac_len = 0;
	size_t n = 0;
	int rc, drc, mac_ok = 0;

	fuzz_settings();
	wks__settings_get(&cfg, NULL);
	drc = wks__decode(&v, &n, NULL, &fi, data, size, &cfg);
	wks__entries_free(v, n);
	if (drc == WKS_OK) {
		const uint8_t *key = fuzz_kdf(fi.salt, (uint32_t)fi.iterations, 64);

		FUZZ_CHECK(HMAC(EVP_sha512(), key, 64, data, fi.mac_input_len, mac,
		                &mac_len) != NULL, "HMAC");
		mac_ok = memcmp(mac, fi.mac, 64) == 0;
	}

	FUZZ_CHECK(wks_store_new(&st) == WKS_OK, "store_new");
	rc = wks_store_load_buffer(st, data, size, FUZZ_PW, FUZZ_PW_LEN);
	if (drc != WKS_OK) {
		FUZZ_CHECK(rc == drc && fuzz_clean_reject(rc),
		           "load %d, decode %d", rc, drc);
	} else if (!mac_ok) {
		FUZZ_CHECK(rc == WKS_ERR_INTEGRITY, "wrong MAC accepted? %d", rc);
		/* Re-MAC a copy and load that. */
		FUZZ_CHECK((copy = malloc(size)) != NULL, "malloc");
		memcpy(copy, data, size);
		memcpy(copy + size - 64, mac, 64);
		rc = wks_store_load_buffer(st, copy, size, FUZZ_PW, FUZZ_PW_LEN);
		FUZZ_CHECK(rc == WKS_OK, "re-MACed file refused: %d", rc);
		loadpw_check_save(st);
		free(copy);
	} else {
		FUZZ_CHECK(rc == WKS_OK, "correct MAC refused: %d", rc);
		loadpw_check_save(st);
	}
	wks_store_free(st);
	return 0;
}
