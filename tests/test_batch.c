/* Many key entries at once (src/store/batch.c, keypool.c): batched
 * get_key, KEK cache warming, password changes of many entries (also in
 * two steps, across a reload), keys made ahead for new entries, and the
 * conversions that use them.  Work is counted (derivations and batches,
 * wks__kdf_test_*()), never timed.
 *
 * Usage: test_batch [PATTERN] */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tu_ossl.h"

#include "crypto/crypto.h"
#include "store/store_int.h"
#include "wks/convert.h"

#define PW "store-password"
#define OTHER "own-key-password"
#define NEWPW "new-password"

static unsigned long runs0, batches0;

static void count_start(void)
{
	runs0 = wks__kdf_test_derivations();
	batches0 = wks__kdf_test_batches();
}

static unsigned long runs(void)
{
	return wks__kdf_test_derivations() - runs0;
}

static unsigned long batches(void)
{
	return wks__kdf_test_batches() - batches0;
}

/* One batch pass's worth of 96-byte derivations with the default
 * settings (lanes x threads / 2 blocks). */
static size_t pass_keys(void)
{
	size_t w = wks__pbkdf2_batch_width(0) / 2;

	return w ? w : 1;
}

#ifdef WKS_CRYPTO_WOLFCRYPT
/* The wolfCrypt build: one of 16 keys of tests/data/pki with its
 * certificate, picked by the alias (different aliases mostly get
 * different keys, of several algorithms). */
static void add_ec(wks_store *st, const char *alias, const char *pw)
{
	static const char *const algs[8] = { "p256", "p384", "p521", "ed25519",
	                                     "ed448", "rsa", "pss", "rsapss" };
	char kp[4096], cp[4096];
	unsigned h = 0;
	const char *a;
	tu_der *k = NULL, *c = NULL;
	const uint8_t *chain[1];
	size_t lens[1];

	for (a = alias; *a; a++)
		h = h * 31 + (unsigned char)*a;
	snprintf(kp, sizeof(kp), "%s/tests/data/pki/%s-%s.key", WKS_SOURCE_DIR,
	         algs[h % 8], (h / 8) % 2 ? "cakey" : "leafkey");
	snprintf(cp, sizeof(cp), "%s/tests/data/pki/%s-%s.pem", WKS_SOURCE_DIR,
	         algs[h % 8], (h / 8) % 2 ? "ca" : "leaf");
	assert_int_equal(tu_pem_ders(&k, kp, "PRIVATE KEY"), 1);
	assert_int_equal(tu_pem_ders(&c, cp, "CERTIFICATE"), 1);
	chain[0] = c[0].der;
	lens[0] = c[0].len;
	TU_OK(wks_store_set_private_key(st, alias, k[0].der, k[0].len, chain,
	                                lens, 1, pw, strlen(pw)));
	tu_ders_free(k, 1);
	tu_ders_free(c, 1);
}
#else
static void add_ec(wks_store *st, const char *alias, const char *pw)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	X509_NAME *n;

	assert_non_null(k);
	assert_non_null(x);
	n = X509_get_subject_name(x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400L);
	X509_set_pubkey(x, k);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
	                           (const unsigned char *)alias, -1, -1, 0);
	X509_set_issuer_name(x, n);
	assert_true(X509_sign(x, k, EVP_sha256()) > 0);
	TU_OK(wks_store_set_pkey(st, alias, k, &x, 1, pw, strlen(pw)));
	X509_free(x);
	EVP_PKEY_free(k);
}
#endif

static void add_secret(wks_store *st, const char *alias, const char *pw,
                       uint8_t b)
{
	uint8_t key[32];

	memset(key, b, sizeof(key));
	TU_OK(wks_store_set_secret_key(st, alias, "AES", key, sizeof(key), pw,
	                               strlen(pw)));
}

static void add_cert(wks_store *st, const char *alias)
{
	uint8_t *der = NULL;
	size_t len = 0;

	add_ec(st, "tmp-for-cert", PW);
	TU_OK(wks_store_get_cert_der(&der, &len, st, "tmp-for-cert", 0));
	TU_OK(wks_store_set_cert_der(st, alias, der, len));
	TU_OK(wks_store_delete(st, "tmp-for-cert"));
	wks_free(der);
}

/*
 * k1, k2, s1 (store password), own (another password), ca (a
 * certificate).  The aliases passed below add "missing" and NULL.
 */
static wks_store *make_store(void)
{
	wks_store *st = tu_store_fast();

	add_ec(st, "k1", PW);
	add_ec(st, "k2", PW);
	add_secret(st, "s1", PW, 7);
	add_ec(st, "own", OTHER);
	add_cert(st, "ca");
	return st;
}

static const char *const names[] = { "k1", "ca", "own", "missing", "s1",
                                     NULL, "k2" };
#define NNAMES (sizeof(names) / sizeof(names[0]))
static const int want_pw[NNAMES] = {
	WKS_OK, WKS_ERR_WRONG_TYPE, WKS_ERR_INTEGRITY, WKS_ERR_NOTFOUND,
	WKS_OK, WKS_ERR_INVALID, WKS_OK
};

static void same_key(const wks_key *a, const wks_key *b)
{
	size_t la, lb;
	const uint8_t *da = wks_key_data(a, &la), *db = wks_key_data(b, &lb);

	assert_int_equal(wks_key_type(a), wks_key_type(b));
	assert_int_equal(la, lb);
	assert_memory_equal(da, db, la);
	assert_string_equal(wks_key_algorithm(a), wks_key_algorithm(b));
}

/* Each result as get_key's, each key its key, one derivation per key
 * entry that can be opened at all (none for the others), in one batch. */
static void test_batch__get_keys(void **state)
{
	wks_store *st = make_store();
	wks_key *keys[NNAMES], *one = NULL;
	int res[NNAMES];
	size_t i;

	(void)state;
	count_start();
	TU_OK(wks_store_get_keys(keys, res, st, names, NNAMES, PW, strlen(PW)));
	assert_int_equal(runs(), 4); /* k1, own, s1, k2 */
	assert_int_equal(batches(), 1);
	for (i = 0; i < NNAMES; i++) {
		if (res[i] != want_pw[i])
			fail_msg("alias %s: %d, want %d", names[i] ? names[i] :
			         "(NULL)", res[i], want_pw[i]);
		if (res[i] != WKS_OK) {
			assert_null(keys[i]);
			continue;
		}
		TU_OK(wks_store_get_key(&one, st, names[i], PW, strlen(PW)));
		same_key(keys[i], one);
		wks_key_free(one);
		wks_key_free(keys[i]);
	}
	/* The other password opens only its entry. */
	TU_OK(wks_store_get_keys(keys, res, st, names, NNAMES, OTHER,
	                         strlen(OTHER)));
	assert_int_equal(res[2], WKS_OK);
	assert_int_equal(res[0], WKS_ERR_INTEGRITY);
	for (i = 0; i < NNAMES; i++)
		wks_key_free(keys[i]);
	/* Checking only: no keys, the same results. */
	TU_OK(wks_store_get_keys(NULL, res, st, names, NNAMES, PW, strlen(PW)));
	for (i = 0; i < NNAMES; i++)
		assert_int_equal(res[i], want_pw[i]);
	wks_store_free(st);
}

/* Above libwks.wks.maxIterationCount: WKS_ERR_LIMIT, and no
 * derivation for it. */
static void test_batch__iteration_cap(void **state)
{
	wks_store *st = tu_store_fast();
	const char *a[] = { "slow", "fast" };
	int res[2];

	(void)state;
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "12000"));
	add_secret(st, "slow", PW, 1);
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "10000"));
	add_secret(st, "fast", PW, 2);
	TU_OK(wks_store_set_property(st, "libwks.wks.maxIterationCount",
	                             "11000"));
	count_start();
	TU_OK(wks_store_get_keys(NULL, res, st, a, 2, PW, strlen(PW)));
	assert_int_equal(res[0], WKS_ERR_LIMIT);
	assert_int_equal(res[1], WKS_OK);
	assert_int_equal(runs(), 1);
	/* nor a new password for it, nor a new entry above the cap */
	TU_EXPECT(WKS_OK, wks_store_change_key_passwords(res, st, a, 2, PW,
	                  strlen(PW), NEWPW, strlen(NEWPW)));
	assert_int_equal(res[0], WKS_ERR_LIMIT);
	assert_int_equal(res[1], WKS_OK);
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "12000"));
	count_start();
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_change_key_passwords(res, st, a, 2,
	                         NEWPW, strlen(NEWPW), PW, strlen(PW)));
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_prepare_keys(st, PW, strlen(PW), 3));
	assert_int_equal(runs(), 0);
	wks_store_free(st);
}

static void test_batch__arguments(void **state)
{
	wks_store *st = make_store();
	wks_key *keys[2] = { (wks_key *)1, (wks_key *)1 };
	int res[2] = { 5, 5 };
	wks_rekey *rk = (wks_rekey *)1;
	size_t n = 9;

	(void)state;
	TU_EXPECT(WKS_ERR_INVALID, wks_store_get_keys(keys, res, st, names, 2,
	                                              "", 0));
	assert_null(keys[0]);
	assert_int_equal(res[1], 0);
	TU_EXPECT(WKS_ERR_INVALID, wks_store_get_keys(keys, NULL, st, names, 2,
	                                              PW, 2));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_get_keys(keys, res, NULL, names, 2,
	                                              PW, 2));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_get_keys(keys, res, st, NULL, 2,
	                                              PW, 2));
	TU_OK(wks_store_get_keys(NULL, res, st, NULL, 0, PW, 2));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_cache_warm(st, PW, strlen(PW), &n));
	assert_int_equal(n, 0);
	TU_EXPECT(WKS_ERR_INVALID, wks_store_cache_warm(NULL, PW, 2, NULL));
	TU_EXPECT(WKS_ERR_INVALID, wks_rekey_prepare(&rk, res, st, names, 2,
	                                             PW, strlen(PW), "", 0));
	assert_null(rk);
	TU_EXPECT(WKS_ERR_INVALID, wks_rekey_prepare(&rk, res, st, names, 2,
	                                             NULL, 0, PW, 2));
	TU_EXPECT(WKS_ERR_INVALID, wks_rekey_apply(st, NULL, &n));
	TU_EXPECT(WKS_ERR_INVALID, wks_rekey_apply(NULL, NULL, NULL));
	assert_int_equal(wks_rekey_count(NULL), 0);
	wks_rekey_free(NULL);
	TU_EXPECT(WKS_ERR_INVALID, wks_store_prepare_keys(st, "", 0, 1));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_prepare_keys(NULL, PW, 2, 1));
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_prepare_keys(st, PW, 2, 1025));
	TU_OK(wks_store_prepare_keys(st, NULL, 0, 0));
	wks_store_free(st);
}

/* ---- the KEK cache ------------------------------------------------------- */

static void enable_cache(wks_store *st)
{
	TU_OK(wks_store_set_property(st, "wolfjce.keystore.kekCacheEnabled",
	                             "true"));
}

/* Warming caches exactly the entries the password opens, in one batch;
 * their get_key then derives nothing; a second warming derives nothing. */
static void test_batch__cache_warm(void **state)
{
	wks_store *st = make_store();
	wks_cache_stats cs;
	wks_key *k = NULL;
	size_t n = 99;

	(void)state;
	enable_cache(st);
	count_start();
	TU_OK(wks_store_cache_warm(st, PW, strlen(PW), &n));
	assert_int_equal(n, 3);          /* k1, k2, s1 */
	assert_int_equal(runs(), 4);     /* and own, which does not open */
	assert_int_equal(batches(), 1);
	TU_OK(wks_store_cache_stats(&cs, st));
	assert_int_equal(cs.size, 3);
	assert_int_equal(cs.derivations, 4);
	assert_int_equal(cs.misses, 4);
	count_start();
	TU_OK(wks_store_get_key(&k, st, "k1", PW, strlen(PW)));
	wks_key_free(k);
	TU_OK(wks_store_get_key(&k, st, "s1", PW, strlen(PW)));
	wks_key_free(k);
	assert_int_equal(runs(), 0);
	TU_OK(wks_store_cache_stats(&cs, st));
	assert_int_equal(cs.hits, 2);
	/* Already cached: not derived again (own is, it does not open). */
	count_start();
	TU_OK(wks_store_cache_warm(st, PW, strlen(PW), &n));
	assert_int_equal(n, 3);
	assert_int_equal(runs(), 1);
	/* own, with its password: derived now; then a hit. */
	TU_OK(wks_store_cache_warm(st, OTHER, strlen(OTHER), &n));
	assert_int_equal(n, 1);
	count_start();
	TU_OK(wks_store_get_key(&k, st, "own", OTHER, strlen(OTHER)));
	wks_key_free(k);
	assert_int_equal(runs(), 0);
	/* A load clears the cache; warm it again. */
	wks_store_free(st);
}

/* get_keys with the cache on: derived keys are cached; the next batch
 * takes them from the cache. */
static void test_batch__get_keys_cached(void **state)
{
	wks_store *st = make_store();
	int res[NNAMES];

	(void)state;
	enable_cache(st);
	count_start();
	TU_OK(wks_store_get_keys(NULL, res, st, names, NNAMES, PW, strlen(PW)));
	assert_int_equal(runs(), 4);
	count_start();
	TU_OK(wks_store_get_keys(NULL, res, st, names, NNAMES, PW, strlen(PW)));
	assert_int_equal(runs(), 1); /* only "own" (not cacheable with PW) */
	assert_int_equal(res[0], WKS_OK);
	assert_int_equal(res[2], WKS_ERR_INTEGRITY);
	wks_store_free(st);
}

static void opens(wks_store *st, const char *alias, const char *pw, int want)
{
	wks_key *k = NULL;

	TU_EXPECT(want, wks_store_get_key(&k, st, alias, pw, strlen(pw)));
	wks_key_free(k);
}

/* ---- cached keys handed to another store (cacheblob.c) ------------------ */

/* The blob's layout (docs/CACHE.md): a 12-byte header, then per key its
 * salt, iterations, derived key and check value. */
#define BLOB_HDR 12
#define BLOB_REC (16 + 4 + 96 + 64)
#define BLOB_DK 20    /* offset of the derived key in a record */
#define BLOB_CHECK 116 /* and of the check value */

/* make_store()'s entries warmed with pw and exported: the blob in *out
 * (free()), its store saved in *file (wks_free()). */
static wks_store *exported(uint8_t **out, size_t *out_len, uint8_t **file,
                           size_t *file_len, const char *pw)
{
	wks_store *st = make_store();
	size_t n = 0, need = 0;

	enable_cache(st);
	TU_OK(wks_store_cache_warm(st, pw, strlen(pw), &n));
	TU_OK(wks_store_cache_export(st, pw, strlen(pw), NULL, 0, &need));
	*out = malloc(need);
	assert_non_null(*out);
	TU_OK(wks_store_cache_export(st, pw, strlen(pw), *out, need, out_len));
	TU_OK(wks_store_save_buffer(st, file, file_len, PW, strlen(PW)));
	return st;
}

/* A second store from the same bytes, cache on, nothing cached. */
static wks_store *reloaded(const uint8_t *file, size_t file_len)
{
	wks_store *st = tu_store_fast();

	enable_cache(st);
	TU_OK(wks_store_load_buffer(st, file, file_len, PW, strlen(PW)));
	return st;
}

static size_t import(wks_store *st, const char *pw, const uint8_t *blob,
                     size_t len)
{
	size_t n = 99;

	TU_OK(wks_store_cache_import(st, pw, strlen(pw), blob, len, &n));
	return n;
}

/* Exported from one store, imported into another loaded from the same
 * file: the keys come back as the first store's, with no derivation, as
 * cache hits; the entry on another password is not handed over. */
static void test_batch__cache_export_import(void **state)
{
	static const char *const pw_keys[] = { "k1", "k2", "s1" };
	uint8_t *blob = NULL, *file = NULL;
	size_t len = 0, file_len = 0, i;
	wks_store *st = exported(&blob, &len, &file, &file_len, PW), *st2;
	wks_cache_stats cs;
	wks_key *a = NULL, *b = NULL;

	(void)state;
	assert_int_equal(len, BLOB_HDR + 3 * BLOB_REC);
	assert_memory_equal(blob, "WKSKEKC2\0\0\0\3", BLOB_HDR);
	st2 = reloaded(file, file_len);
	count_start();
	assert_int_equal(import(st2, PW, blob, len), 3);
	for (i = 0; i < 3; i++) {
		TU_OK(wks_store_get_key(&a, st, pw_keys[i], PW, strlen(PW)));
		TU_OK(wks_store_get_key(&b, st2, pw_keys[i], PW, strlen(PW)));
		same_key(a, b);
		wks_key_free(a);
		wks_key_free(b);
	}
	assert_int_equal(runs(), 0);
	TU_OK(wks_store_cache_stats(&cs, st2));
	assert_int_equal(cs.derivations, 0);
	assert_int_equal(cs.misses, 0);
	assert_int_equal(cs.hits, 3);
	assert_int_equal(cs.size, 3);
	/* "own" was not in it: its get_key derives. */
	opens(st2, "own", OTHER, WKS_OK);
	TU_OK(wks_store_cache_stats(&cs, st2));
	assert_int_equal(cs.derivations, 1);
	/* Importing again adds nothing new, and still derives nothing. */
	assert_int_equal(import(st2, PW, blob, len), 3);
	TU_OK(wks_store_cache_stats(&cs, st2));
	assert_int_equal(cs.size, 4);
	assert_int_equal(cs.derivations, 1);
	wks_store_free(st2);
	wks_store_free(st);
	free(blob);
	wks_free(file);
}

/* The size query, a buffer too small, the rest of the buffer wiped. */
static void test_batch__cache_export_sizes(void **state)
{
	uint8_t *blob = NULL, *file = NULL, buf[BLOB_HDR + 5 * BLOB_REC];
	size_t len = 0, file_len = 0, need = 0, i, out = 7;
	wks_store *st = exported(&blob, &len, &file, &file_len, PW);

	(void)state;
	/* room for every key entry (4), whatever is cached */
	TU_OK(wks_store_cache_export(st, PW, strlen(PW), NULL, 0, &need));
	assert_int_equal(need, BLOB_HDR + 4 * BLOB_REC);
	memset(buf, 0xa5, sizeof(buf));
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_cache_export(st, PW, strlen(PW), buf,
	                                                need - 1, &out));
	assert_int_equal(out, need);
	assert_int_equal(buf[0], 0xa5); /* nothing written */
	TU_OK(wks_store_cache_export(st, PW, strlen(PW), buf, sizeof(buf),
	                             &out));
	assert_int_equal(out, len);
	assert_memory_equal(buf, blob, len); /* same keys, same order */
	for (i = len; i < sizeof(buf); i++)
		if (buf[i] != 0)
			fail_msg("byte %zu after the blob: %#x", i, buf[i]);
	/* exactly `need` is enough */
	TU_OK(wks_store_cache_export(st, PW, strlen(PW), buf, need, &out));
	assert_int_equal(out, len);
	/* nothing cached for this password: an empty blob */
	TU_OK(wks_store_cache_export(st, "nothing", 7, buf, need, &out));
	assert_int_equal(out, BLOB_HDR);
	assert_memory_equal(buf, "WKSKEKC2\0\0\0\0", BLOB_HDR);
	TU_EXPECT(WKS_ERR_INVALID, wks_store_cache_export(st, PW, strlen(PW),
	                                                  NULL, 5, &out));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_cache_export(st, PW, strlen(PW),
	                                                  buf, need, NULL));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_cache_export(st, "", 0, buf,
	                                                  need, &out));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_cache_export(NULL, PW, 2, buf,
	                                                  need, &out));
	TU_OK(wks_store_set_property(st, "wolfjce.keystore.kekCacheEnabled",
	                             "false"));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_cache_export(st, PW, strlen(PW),
	                                                  buf, need, &out));
	assert_int_equal(out, 0);
	wks_store_free(st);
	free(blob);
	wks_free(file);
}

static void expect_import(int want, wks_store *st, const char *pw,
                          const uint8_t *blob, size_t len)
{
	size_t n = 99;

	TU_EXPECT(want, wks_store_cache_import(st, pw, pw ? strlen(pw) : 0, blob,
	                                       len, &n));
	assert_int_equal(n, 0);
}

/* Malformed blobs and bad arguments: refused, nothing cached. */
static void test_batch__cache_import_rejects(void **state)
{
	uint8_t *blob = NULL, *file = NULL, *big, hdr[BLOB_HDR];
	size_t len = 0, file_len = 0;
	wks_store *st = exported(&blob, &len, &file, &file_len, PW), *st2;
	wks_store *off;
	wks_cache_stats cs;

	(void)state;
	st2 = reloaded(file, file_len);
	blob[7] = '1'; /* the first version's magic */
	expect_import(WKS_ERR_FORMAT, st2, PW, blob, len);
	blob[7] = '2';
	blob[0] ^= 0x20;
	expect_import(WKS_ERR_FORMAT, st2, PW, blob, len);
	blob[0] ^= 0x20;
	expect_import(WKS_ERR_FORMAT, st2, PW, blob, len - 1);
	expect_import(WKS_ERR_FORMAT, st2, PW, blob, BLOB_HDR - 1);
	expect_import(WKS_ERR_FORMAT, st2, PW, NULL, 0);
	big = calloc(1, len + 1);
	assert_non_null(big);
	memcpy(big, blob, len);
	expect_import(WKS_ERR_FORMAT, st2, PW, big, len + 1);
	/* one record short of what the count says, one more */
	big[11] = 4;
	expect_import(WKS_ERR_FORMAT, st2, PW, big, len);
	big[11] = 2;
	expect_import(WKS_ERR_FORMAT, st2, PW, big, len);
	free(big);
	/* a count above the limit: LIMIT before the lengths are looked at */
	memcpy(hdr, "WKSKEKC2\0\1\0\1", BLOB_HDR); /* 65537 */
	expect_import(WKS_ERR_LIMIT, st2, PW, hdr, BLOB_HDR);
	memcpy(hdr, "WKSKEKC2\xff\xff\xff\xff", BLOB_HDR);
	expect_import(WKS_ERR_LIMIT, st2, PW, hdr, BLOB_HDR);
	/* arguments */
	expect_import(WKS_ERR_INVALID, st2, "", blob, len);
	expect_import(WKS_ERR_INVALID, st2, NULL, blob, len);
	expect_import(WKS_ERR_INVALID, NULL, PW, blob, len);
	expect_import(WKS_ERR_INVALID, st2, PW, NULL, len);
	off = tu_store_fast();
	TU_OK(wks_store_load_buffer(off, file, file_len, PW, strlen(PW)));
	expect_import(WKS_ERR_INVALID, off, PW, blob, len);
	TU_OK(wks_store_cache_stats(&cs, st2));
	assert_int_equal(cs.inserts, 0);
	/* an empty blob is a blob */
	memcpy(hdr, "WKSKEKC2\0\0\0\0", BLOB_HDR);
	expect_import(WKS_OK, st2, PW, hdr, BLOB_HDR);
	/* and the real one still imports (NULL n_imported allowed) */
	TU_OK(wks_store_cache_import(st2, PW, strlen(PW), blob, len, NULL));
	TU_OK(wks_store_cache_stats(&cs, st2));
	assert_int_equal(cs.size, 3);
	wks_store_free(off);
	wks_store_free(st2);
	wks_store_free(st);
	free(blob);
	wks_free(file);
}

/* A damaged record imports nothing for its entry, whose get_key then
 * derives; a record whose salt matches no entry is skipped. */
static void test_batch__cache_import_damaged(void **state)
{
	static const size_t offs[] = { BLOB_DK + 5, BLOB_DK + 40, BLOB_CHECK + 9,
	                               3 /* salt */, 17 /* iterations */ };
	uint8_t *blob = NULL, *file = NULL;
	size_t len = 0, file_len = 0, i;
	wks_store *st = exported(&blob, &len, &file, &file_len, PW), *st2;
	wks_cache_stats cs;

	(void)state;
	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		/* the second record, one bit */
		size_t at = BLOB_HDR + BLOB_REC + offs[i];

		blob[at] ^= 0x10;
		st2 = reloaded(file, file_len);
		if (import(st2, PW, blob, len) != 2)
			fail_msg("bit flipped at %zu of a record: not 2 keys", offs[i]);
		opens(st2, "k1", PW, WKS_OK);
		opens(st2, "k2", PW, WKS_OK);
		opens(st2, "s1", PW, WKS_OK);
		TU_OK(wks_store_cache_stats(&cs, st2));
		assert_int_equal(cs.derivations, 1);
		assert_int_equal(cs.hits, 2);
		wks_store_free(st2);
		blob[at] ^= 0x10;
	}
	wks_store_free(st);
	free(blob);
	wks_free(file);
}

/* A blob opens nothing under another password: imported under a wrong
 * one, it caches nothing and get_key with that password still fails; the
 * keys exported under "own"'s password are not cached under PW either. */
static void test_batch__cache_import_wrong_password(void **state)
{
	uint8_t *blob = NULL, *file = NULL, *own = NULL;
	size_t len = 0, file_len = 0, own_len = 0, n = 0;
	wks_store *st = exported(&blob, &len, &file, &file_len, PW), *st2;
	wks_cache_stats cs;

	(void)state;
	st2 = reloaded(file, file_len);
	assert_int_equal(import(st2, "wrong-password", blob, len), 0);
	TU_OK(wks_store_cache_stats(&cs, st2));
	assert_int_equal(cs.size, 0);
	opens(st2, "k1", "wrong-password", WKS_ERR_INTEGRITY);
	opens(st2, "s1", "wrong-password", WKS_ERR_INTEGRITY);
	/* "own" warmed and exported with its own password ... */
	TU_OK(wks_store_cache_warm(st, OTHER, strlen(OTHER), &n));
	assert_int_equal(n, 1);
	TU_OK(wks_store_cache_export(st, OTHER, strlen(OTHER), NULL, 0,
	                             &own_len));
	own = malloc(own_len);
	assert_non_null(own);
	TU_OK(wks_store_cache_export(st, OTHER, strlen(OTHER), own, own_len,
	                             &own_len));
	assert_int_equal(own_len, BLOB_HDR + BLOB_REC);
	/* ... is not taken under PW, nor under a record count of PW's */
	assert_int_equal(import(st2, PW, own, own_len), 0);
	opens(st2, "own", PW, WKS_ERR_INTEGRITY);
	/* under its own password it is */
	assert_int_equal(import(st2, OTHER, own, own_len), 1);
	TU_OK(wks_store_cache_stats(&cs, st2));
	assert_int_equal(cs.size, 1);
	wks_store_free(st2);
	wks_store_free(st);
	free(own);
	free(blob);
	wks_free(file);
}

/* ---- new passwords for many ---------------------------------------------- */

/* The entries on the old password move to the new one (one derivation
 * per entry per password: 4 old, 3 new), the others stay, each result
 * says which; the store saves and loads back. */
static void test_batch__change_key_passwords(void **state)
{
	wks_store *st = make_store();
	const char *a[NNAMES + 1];
	int res[NNAMES + 1];
	int64_t t0 = 0, t1 = 0;
	uint8_t *file = NULL;
	size_t len = 0, i;
	wks_key *before = NULL, *after = NULL;
	wks_cache_stats cs, cs0;

	(void)state;
	for (i = 0; i < NNAMES; i++)
		a[i] = names[i];
	a[NNAMES] = "k1"; /* listed twice */
	TU_OK(wks_store_creation_time(&t0, st, "k1"));
	TU_OK(wks_store_get_key(&before, st, "k1", PW, strlen(PW)));
	TU_OK(wks_store_cache_stats(&cs0, st));
	count_start();
	TU_OK(wks_store_change_key_passwords(res, st, a, NNAMES + 1, PW,
	                                     strlen(PW), NEWPW, strlen(NEWPW)));
	/* The old password: one derivation for each of k1, own, s1, k2.
	 * The new one: one for each of the three that opened, and for own
	 * too when it rode in the old batch's free lanes; never more. */
	TU_OK(wks_store_cache_stats(&cs, st));
	assert_int_equal(cs.derivations - cs0.derivations, 4);
	assert_true(runs() == 4 + 3 || runs() == 4 + 4);
	assert_true(batches() >= 1 && batches() <= 2);
	for (i = 0; i < NNAMES; i++)
		assert_int_equal(res[i], want_pw[i]);
	assert_int_equal(res[NNAMES], WKS_ERR_INVALID);
	opens(st, "k1", NEWPW, WKS_OK);
	opens(st, "k2", NEWPW, WKS_OK);
	opens(st, "s1", NEWPW, WKS_OK);
	opens(st, "k1", PW, WKS_ERR_INTEGRITY);
	opens(st, "own", OTHER, WKS_OK);
	TU_OK(wks_store_get_key(&after, st, "k1", NEWPW, strlen(NEWPW)));
	same_key(before, after);
	TU_OK(wks_store_creation_time(&t1, st, "k1"));
	assert_int_equal(t0, t1);
	TU_OK(wks_store_save_buffer(st, &file, &len, NEWPW, strlen(NEWPW)));
	TU_OK(wks_store_load_buffer(st, file, len, NEWPW, strlen(NEWPW)));
	opens(st, "k2", NEWPW, WKS_OK);
	opens(st, "own", OTHER, WKS_OK);
	wks_free(file);
	wks_key_free(before);
	wks_key_free(after);
	wks_store_free(st);
}

/* Prepared from one store, applied to the same file loaded again (as a
 * caller does under the file lock); refused, with nothing changed, when
 * an entry differs; the applying derives nothing. */
static void test_batch__rekey_two_steps(void **state)
{
	wks_store *st = make_store(), *again = NULL;
	const char *a[] = { "k1", "k2", "own" };
	wks_rekey *rk = NULL;
	uint8_t *file = NULL;
	size_t len = 0, n = 0;
	int res[3];

	(void)state;
	TU_OK(wks_store_save_buffer(st, &file, &len, PW, strlen(PW)));
	TU_OK(wks_store_load_buffer(st, file, len, PW, strlen(PW)));
	TU_OK(wks_rekey_prepare(&rk, res, st, a, 3, PW, strlen(PW), NEWPW,
	                        strlen(NEWPW)));
	assert_int_equal(wks_rekey_count(rk), 2);
	assert_int_equal(res[2], WKS_ERR_INTEGRITY);
	/* nothing changed by preparing */
	opens(st, "k1", PW, WKS_OK);

	again = tu_store_fast();
	TU_OK(wks_store_load_buffer(again, file, len, PW, strlen(PW)));
	count_start();
	TU_OK(wks_rekey_apply(again, rk, &n));
	assert_int_equal(n, 2);
	assert_int_equal(runs(), 0);
	opens(again, "k1", NEWPW, WKS_OK);
	opens(again, "k2", NEWPW, WKS_OK);
	opens(again, "own", OTHER, WKS_OK);

	/* The file changed meanwhile (k2 replaced): refused, nothing
	 * applied, k1 still on the old password. */
	TU_OK(wks_store_load_buffer(again, file, len, PW, strlen(PW)));
	add_secret(again, "k2", PW, 9);
	TU_EXPECT(WKS_ERR_INVALID, wks_rekey_apply(again, rk, &n));
	assert_int_equal(n, 0);
	assert_non_null(strstr(wks_error_detail(), "k2"));
	opens(again, "k1", PW, WKS_OK);
	/* An entry gone: refused too. */
	TU_OK(wks_store_load_buffer(again, file, len, PW, strlen(PW)));
	TU_OK(wks_store_delete(again, "k1"));
	TU_EXPECT(WKS_ERR_INVALID, wks_rekey_apply(again, rk, &n));
	opens(again, "k2", PW, WKS_OK);
	/* Applied twice to the same store: the second finds new entries. */
	TU_OK(wks_rekey_apply(st, rk, &n));
	TU_EXPECT(WKS_ERR_INVALID, wks_rekey_apply(st, rk, &n));
	wks_rekey_free(rk);
	wks_free(file);
	wks_store_free(again);
	wks_store_free(st);
}

/* ---- keys made ahead for new entries ------------------------------------- */

static void salt_of(uint8_t out[WKS_SALT_LEN], wks_store *st,
                    const char *alias)
{
	wks_entry *e = NULL;

	TU_OK(wks__store_get_entry(&e, st, alias));
	memcpy(out, e->salt, WKS_SALT_LEN);
	wks__entry_unref(e);
}

/* Three keys made in one batch serve the next three setters with that
 * password (no derivation of their own, each its own salt); the fourth,
 * another password or another iteration count derive as usual; n == 0
 * wipes what is left. */
static void test_batch__prepare_keys(void **state)
{
	wks_store *st = tu_store_fast();
	uint8_t s1[WKS_SALT_LEN], s2[WKS_SALT_LEN], s3[WKS_SALT_LEN];

	(void)state;
	count_start();
	TU_OK(wks_store_prepare_keys(st, PW, strlen(PW), 3));
	assert_int_equal(runs(), 3);
	assert_int_equal(batches(), 1);
	add_secret(st, "other", OTHER, 1); /* not for this password */
	assert_int_equal(runs(), 4);
	add_ec(st, "a", PW);
	add_secret(st, "b", PW, 2);
	add_ec(st, "c", PW);
	assert_int_equal(runs(), 4);
	add_secret(st, "d", PW, 3); /* none left */
	assert_int_equal(runs(), 5);
	opens(st, "a", PW, WKS_OK);
	opens(st, "b", PW, WKS_OK);
	opens(st, "c", PW, WKS_OK);
	opens(st, "d", PW, WKS_OK);
	opens(st, "other", OTHER, WKS_OK);
	salt_of(s1, st, "a");
	salt_of(s2, st, "b");
	salt_of(s3, st, "c");
	assert_memory_not_equal(s1, s2, WKS_SALT_LEN);
	assert_memory_not_equal(s2, s3, WKS_SALT_LEN);

	/* made for 10000 iterations: not used at 12000 */
	TU_OK(wks_store_prepare_keys(st, PW, strlen(PW), 1));
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "12000"));
	count_start();
	add_secret(st, "e", PW, 4);
	assert_int_equal(runs(), 1);
	opens(st, "e", PW, WKS_OK);
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "10000"));
	/* still waiting, then wiped */
	TU_OK(wks_store_prepare_keys(st, NULL, 0, 0));
	count_start();
	add_secret(st, "f", PW, 5);
	assert_int_equal(runs(), 1);
	/* a load keeps them */
	TU_OK(wks_store_prepare_keys(st, PW, strlen(PW), 1));
	{
		uint8_t *file = NULL;
		size_t len = 0;

		TU_OK(wks_store_save_buffer(st, &file, &len, PW, strlen(PW)));
		TU_OK(wks_store_load_buffer(st, file, len, PW, strlen(PW)));
		wks_free(file);
	}
	count_start();
	add_secret(st, "g", PW, 6);
	assert_int_equal(runs(), 0);
	opens(st, "g", PW, WKS_OK);
	wks_store_free(st);
}

/* An announced run (a conversion): the first setter derives a pass of
 * keys at once, the next ones take them; entries that never come cost at
 * most what was left of that pass, wiped at the end of the run. */
static void test_batch__announced_run(void **state)
{
	wks_store *st = tu_store_fast();
	size_t pass = pass_keys(), want;

	(void)state;
	count_start();
	wks__store_expect_keys(st, 5);
	add_secret(st, "a", PW, 1);
	want = pass < 5 ? pass : 5;
	assert_int_equal(runs(), want);
	add_secret(st, "b", PW, 2);
	/* (one key per pass where the batch has one lane and one core:
	 * every setter derives its own) */
	assert_int_equal(runs(), pass >= 2 ? want : 2);
	wks__store_expect_keys(st, 0); /* the run ends early */
	add_secret(st, "c", PW, 3);
	assert_int_equal(runs(), (pass >= 2 ? want : 2) + 1);
	opens(st, "a", PW, WKS_OK);
	opens(st, "b", PW, WKS_OK);
	opens(st, "c", PW, WKS_OK);
	wks_store_free(st);
}

/* wks_convert_read() of a PKCS#12 with n keys: n derivations, in
 * batches of a pass; every key opens. */
#ifdef WKS_CRYPTO_OPENSSL
static void test_batch__convert(void **state)
{
	enum { N = 6 };
	wks_store *src = tu_store_fast(), *dst = tu_store_fast();
	wks_convert_report *rep = NULL;
	uint8_t *p12 = NULL;
	size_t len = 0, i, pass = pass_keys();
	char alias[16];

	(void)state;
	for (i = 0; i < N; i++) {
		snprintf(alias, sizeof(alias), "key%zu", i);
		add_ec(src, alias, PW);
	}
	TU_OK(wks_convert_write_p12(&p12, &len, src, NULL, PW, strlen(PW), PW,
	                            strlen(PW), 2048, NULL, NULL, NULL));
	count_start();
	TU_OK(wks_convert_read(dst, p12, len, PW, strlen(PW), 0, NULL, NULL,
	                       &rep));
	assert_int_equal(wks_convert_report_done(rep), N);
	assert_int_equal(runs(), N);
	assert_int_equal(batches(), (N + pass - 1) / pass);
	for (i = 0; i < N; i++) {
		snprintf(alias, sizeof(alias), "key%zu", i);
		opens(dst, alias, PW, WKS_OK);
	}
	wks_convert_report_free(rep);
	wks_free(p12);
	wks_store_free(src);
	wks_store_free(dst);
}
#endif

/* ---- threads and fork ---------------------------------------------------- */

typedef struct {
	wks_store *st;
	int role;
	int rounds;
	int bad;
} worker;

/* Every result is one a concurrent edit can explain. */
static void *work(void *p)
{
	worker *w = p;
	const char *a[] = { "k1", "k2", "s1", "own", "ca" };
	wks_key *keys[5], *k = NULL;
	int res[5], i, r;
	size_t n;
	char alias[32];

	for (r = 0; r < w->rounds; r++) {
		switch (w->role) {
		case 0: /* batched get_key, keys and checks */
			if (wks_store_get_keys(r % 2 ? keys : NULL, res, w->st, a, 5,
			                       PW, strlen(PW)) != WKS_OK)
				w->bad++;
			for (i = 0; i < 5; i++) {
				if (res[i] != WKS_OK && res[i] != WKS_ERR_INTEGRITY &&
				    res[i] != WKS_ERR_WRONG_TYPE &&
				    res[i] != WKS_ERR_NOTFOUND)
					w->bad++;
				if (r % 2)
					wks_key_free(keys[i]);
			}
			break;
		case 1: /* warming and single get_key */
			if (wks_store_cache_warm(w->st, PW, strlen(PW), &n) != WKS_OK)
				w->bad++;
			if (wks_store_get_key(&k, w->st, "s1", PW, strlen(PW)) !=
			    WKS_OK)
				w->bad++;
			wks_key_free(k);
			k = NULL;
			break;
		case 2: /* k2 to NEWPW and back */
			a[0] = "k2";
			if (wks_store_change_key_passwords(res, w->st, a, 1,
			                                   r % 2 ? NEWPW : PW,
			                                   strlen(r % 2 ? NEWPW : PW),
			                                   r % 2 ? PW : NEWPW,
			                                   strlen(r % 2 ? PW : NEWPW)) <
			    0 && strstr(wks_error_detail(), "meanwhile") == NULL)
				w->bad++;
			break;
		default: /* keys made ahead, new entries, deletes */
			snprintf(alias, sizeof(alias), "new%d", r);
			if (wks_store_prepare_keys(w->st, PW, strlen(PW), 2) != WKS_OK)
				w->bad++;
			add_secret(w->st, alias, PW, (uint8_t)r);
			if (wks_store_delete(w->st, alias) != WKS_OK)
				w->bad++;
			wks__store_expect_keys(w->st, (size_t)(r % 3));
			break;
		}
	}
	return NULL;
}

/* Batches, warming, password changes and keys made ahead on one store
 * from several threads at once (for TSan; the results must make sense). */
static void test_batch__threads(void **state)
{
	enum { T = 4 };
	wks_store *st = make_store();
	pthread_t tid[T];
	worker w[T];
	int i, rounds = getenv("WKS_UNDER_VALGRIND") ? 2 : 6;

	(void)state;
	enable_cache(st);
	for (i = 0; i < T; i++) {
		w[i].st = st;
		w[i].role = i;
		w[i].rounds = rounds;
		w[i].bad = 0;
		assert_int_equal(pthread_create(&tid[i], NULL, work, &w[i]), 0);
	}
	for (i = 0; i < T; i++) {
		pthread_join(tid[i], NULL);
		if (w[i].bad)
			fail_msg("thread %d: %d unexpected results", i, w[i].bad);
	}
	opens(st, "k1", PW, WKS_OK);
	wks_store_free(st);
}

/* A fork()ed child does not inherit the keys made ahead: its setters
 * derive (and the entries open). */
static void test_batch__fork(void **state)
{
	wks_store *st = tu_store_fast();
	int status;
	pid_t pid;

	(void)state;
	TU_OK(wks_store_prepare_keys(st, PW, strlen(PW), 2));
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		wks_key *k = NULL;
		unsigned long before = wks__kdf_test_derivations();

		alarm(60);
		if (wks_store_set_secret_key(st, "child", "AES",
		                             (const uint8_t *)"0123456789abcdef",
		                             16, PW, strlen(PW)) != WKS_OK)
			_exit(1);
		if (wks__kdf_test_derivations() != before + 1)
			_exit(2);
		if (wks_store_get_key(&k, st, "child", PW, strlen(PW)) != WKS_OK)
			_exit(3);
		wks_key_free(k);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* the parent's are still there */
	count_start();
	add_secret(st, "parent", PW, 1);
	assert_int_equal(runs(), 0);
	opens(st, "parent", PW, WKS_OK);
	wks_store_free(st);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch__get_keys),
		cmocka_unit_test(test_batch__iteration_cap),
		cmocka_unit_test(test_batch__arguments),
		cmocka_unit_test(test_batch__cache_warm),
		cmocka_unit_test(test_batch__get_keys_cached),
		cmocka_unit_test(test_batch__cache_export_import),
		cmocka_unit_test(test_batch__cache_export_sizes),
		cmocka_unit_test(test_batch__cache_import_rejects),
		cmocka_unit_test(test_batch__cache_import_damaged),
		cmocka_unit_test(test_batch__cache_import_wrong_password),
		cmocka_unit_test(test_batch__change_key_passwords),
		cmocka_unit_test(test_batch__rekey_two_steps),
		cmocka_unit_test(test_batch__prepare_keys),
		cmocka_unit_test(test_batch__announced_run),
#ifdef WKS_CRYPTO_OPENSSL
		cmocka_unit_test(test_batch__convert),
#endif
		cmocka_unit_test(test_batch__threads),
		cmocka_unit_test(test_batch__fork),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
