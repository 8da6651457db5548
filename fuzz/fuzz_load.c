/*
 * fuzz_load: a hostile file loaded without a password (the path of trust
 * stores), then every query of the public API on what loaded.
 *
 * Oracles, beyond "no crash, no sanitizer report, no leak":
 *  - a load fails only with a clean class (FORMAT, LIMIT, INVALID);
 *  - a file that loads re-encodes to the same entries: serialised again
 *    (wks__encode) in file order, it decodes to identical entries (alias,
 *    type, body bytes) and re-encodes to itself (see
 *    load_check_roundtrip() for the aliases Java also accepts
 *    non-canonically);
 *  - the store holds the distinct aliases of the file (last one wins);
 *  - every certificate handed out is the DER found at its span, parses,
 *    and wks_store_find_cert_alias() finds an entry with it.
 */
#include "fuzz_common.h"

#include "config/config.h"
#include "format/format.h"
#include "store/decode.h"
#include "util/buf.h"

#include <openssl/x509.h>

int FUZZ_INIT(int *argc, char ***argv);
int FUZZ_ENTRY(const uint8_t *data, size_t size);

int FUZZ_INIT(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_settings();
	return 0;
}

/* Entries equal field by field (alias in API form, type, exact body). */
static void load_same_entries(wks_entry *const *a, wks_entry *const *b,
                              size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		FUZZ_CHECK(a[i]->type == b[i]->type, "type of record %zu", i);
		FUZZ_CHECK(a[i]->alias_len == b[i]->alias_len &&
		           memcmp(a[i]->alias, b[i]->alias, a[i]->alias_len) == 0,
		           "alias of record %zu", i);
		FUZZ_CHECK(a[i]->body_len == b[i]->body_len &&
		           memcmp(a[i]->body, b[i]->body, a[i]->body_len) == 0,
		           "body of record %zu", i);
	}
}

/*
 * Re-encode the decoded entries.  Bodies are kept byte for byte, so the
 * re-encoding equals the input except where an alias was not in the
 * canonical modified UTF-8 that Java's writeUTF produces: like Java's
 * readUTF, the parser also accepts a raw 00 byte and overlong 2- and
 * 3-byte forms, which a save writes canonically.  So: the re-encoding
 * decodes to the same entries, and re-encodes to itself; and when no
 * alias changed length it equals the input exactly.
 */
static void load_check_roundtrip(const uint8_t *data, size_t size,
                                 size_t *distinct)
{
	wks_entry **v = NULL, **w = NULL;
	wks_file_info fi, fi2;
	wks_settings cfg;
	wks_buf b = WKS_BUF_INIT, b2 = WKS_BUF_INIT;
	size_t n = 0, n2 = 0, i, j;
	int rc;

	wks__settings_get(&cfg, NULL);
	rc = wks__decode(&v, &n, NULL, &fi, data, size, &cfg);
	FUZZ_CHECK(rc == WKS_OK, "decode after a successful load: %d", rc);
	FUZZ_CHECK(fi.mac_input_len + 68 == size, "mac_input_len %zu of %zu",
	           fi.mac_input_len, size);
	FUZZ_CHECK(n == (size_t)fi.entry_count, "%zu entries, count %d", n,
	           (int)fi.entry_count);
	rc = wks__encode(&b, v, n, fi.salt, fi.iterations);
	FUZZ_CHECK(rc == WKS_OK, "encode: %d", rc);
	if (b.len == fi.mac_input_len && memcmp(b.ptr, data, b.len) != 0) {
		/* Same length: differences only inside overlong aliases. */
		for (i = 0; i < b.len && b.ptr[i] == data[i]; i++)
			;
		FUZZ_CHECK(i >= 12, "re-encoding differs in the header");
	}
	wks_buf_put_i32be(&b, 64);
	wks_buf_put(&b, fi.mac, 64);
	rc = wks__decode(&w, &n2, NULL, &fi2, b.ptr, b.len, &cfg);
	FUZZ_CHECK(rc == WKS_OK && n2 == n, "re-encoding does not decode: %d",
	           rc);
	load_same_entries(v, w, n);
	rc = wks__encode(&b2, w, n2, fi2.salt, fi2.iterations);
	FUZZ_CHECK(rc == WKS_OK && b2.len + 68 == b.len &&
	           memcmp(b2.ptr, b.ptr, b2.len) == 0,
	           "encoding is not idempotent");
	/* Distinct aliases (quadratic, but the entry count is small). */
	*distinct = 0;
	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++)
			if (v[i]->alias_len == v[j]->alias_len &&
			    memcmp(v[i]->alias, v[j]->alias, v[i]->alias_len) == 0)
				break;
		if (j == n)
			(*distinct)++;
	}
	wks_buf_dispose(&b);
	wks_buf_dispose(&b2);
	wks__entries_free(v, n);
	wks__entries_free(w, n2);
}

static void load_check_queries(wks_store *st, size_t distinct)
{
	char **aliases = NULL, *found = NULL;
	size_t count = 0, i, k, nc, der_len;
	uint8_t *der = NULL;
	int64_t ms;
	X509 *x = NULL;
	int rc;

	FUZZ_CHECK(wks_store_size(st) == distinct, "size %zu, distinct %zu",
	           wks_store_size(st), distinct);
	rc = wks_store_aliases(&aliases, &count, st);
	FUZZ_CHECK(rc == WKS_OK && count == distinct, "aliases: %d", rc);
	for (i = 0; i < count; i++) {
		wks_entry_type t = wks_store_entry_type(st, aliases[i]);

		/* API-form aliases hold no NUL byte (U+0000 is C0 80). */
		FUZZ_CHECK(i == 0 || strcmp(aliases[i - 1], aliases[i]) < 0,
		           "aliases not sorted/unique at %zu", i);
		FUZZ_CHECK(wks_store_contains(st, aliases[i]) == 1, "contains");
		FUZZ_CHECK(t >= WKS_ENTRY_PRIVATE_KEY && t <= WKS_ENTRY_SECRET_KEY,
		           "type %d", (int)t);
		FUZZ_CHECK(wks_store_creation_time(&ms, st, aliases[i]) == WKS_OK,
		           "creation time");
		rc = wks_store_cert_count(&nc, st, aliases[i]);
		if (t == WKS_ENTRY_SECRET_KEY) {
			FUZZ_CHECK(rc == WKS_ERR_WRONG_TYPE, "cert_count: %d", rc);
			continue;
		}
		FUZZ_CHECK(rc == WKS_OK, "cert_count: %d", rc);
		FUZZ_CHECK(t != WKS_ENTRY_CERTIFICATE || nc == 1, "%zu certs", nc);
		for (k = 0; k <= nc; k++) {
			rc = wks_store_get_cert_der(&der, &der_len, st, aliases[i], k);
			if (k == nc) {
				FUZZ_CHECK(rc == WKS_ERR_NOTFOUND, "index past end: %d",
				           rc);
				break;
			}
			FUZZ_CHECK(rc == WKS_OK && der_len > 0, "get_cert_der: %d", rc);
			rc = wks_store_get_cert(&x, st, aliases[i], k);
			FUZZ_CHECK(rc == WKS_OK && x, "get_cert: %d", rc);
			X509_free(x);
			x = NULL;
			if (k == 0) {
				rc = wks_store_find_cert_alias(&found, st, der, der_len);
				FUZZ_CHECK(rc == WKS_OK, "find_cert_alias: %d", rc);
				FUZZ_CHECK(strcmp(found, aliases[i]) <= 0,
				           "find_cert_alias gave a later alias");
				wks_free(found);
				found = NULL;
			}
			wks_free(der);
			der = NULL;
		}
	}
	wks_aliases_free(aliases);
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	wks_store *st = NULL;
	size_t distinct = 0;
	int rc;

	fuzz_settings();
	FUZZ_CHECK(wks_store_new(&st) == WKS_OK, "store_new");
	rc = wks_store_load_buffer(st, data, size, NULL, 0);
	if (rc == WKS_OK) {
		load_check_roundtrip(data, size, &distinct);
		load_check_queries(st, distinct);
	} else {
		FUZZ_CHECK(fuzz_clean_reject(rc), "load without password: %d", rc);
		FUZZ_CHECK(wks_store_size(st) == 0, "entries after a failed load");
	}
	wks_store_free(st);
	return 0;
}
