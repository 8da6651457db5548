/*
 * wks_store_new_ex(): a store's cryptography comes from its OpenSSL
 * library context and property query, and from nowhere else.
 *
 * - A context with only the "null" provider (no algorithms at all): a
 *   store can be made, and every operation that needs a primitive fails
 *   cleanly with WKS_ERR_CRYPTO (loads with a password, new keys, get_key,
 *   save); had anything fallen back to OpenSSL's default context, it
 *   would have succeeded.
 * - A context with the default provider: the shared wolfJCE vectors give
 *   the same keys and certificates as a plain store, and stores written
 *   by one load in the other (both PBKDF2 implementations).
 * - A property query that matches nothing fails the same way.
 * - FIPS: default properties fips=yes (no FIPS provider on Debian 12, so
 *   nothing can be fetched) fail cleanly, and a query asking for fips
 *   (here "?fips=yes", which the default provider satisfies) never runs
 *   libwks's native PBKDF2 (counted by wks__kdf_native_ctx_runs()).
 * - Concurrent get_key on one such store (for TSan).
 */
#include "testutil.h"

#include "crypto/crypto.h"
#include "crypto/pki.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/x509.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PW "wolfsslpassword"

#define NONASCII_PW "P\xc3\xa4ssw\xc3\xb6rd-\xce\xa9\xce\xbc\xce\xad\xce\xb3" \
	"\xce\xb1-\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e-\xf0\x9f\x94\x91"

/* The shared vectors (vectors/wolfjce-live/manifest.json); under
 * valgrind (WKS_UNDER_VALGRIND, as .ci/run sets it) only those marked
 * `vg`, for time. */
static const struct {
	const char *name, *pw, *kpw;
	int vg;
} vector_files[] = {
	{ "secret-keys.wks", PW, PW, 1 },
	{ "nonascii.wks", NONASCII_PW, NONASCII_PW, 1 },
	{ "iter-20000.wks", PW, PW, 0 },
	{ "rsa-4096.wks", PW, PW, 0 },
	{ "ec-p384.wks", PW, PW, 1 },
	{ "ec-p521-chain3.wks", PW, PW, 0 },
	{ "trusted-200.wks", PW, PW, 0 },
	{ "keypass-differs.wks", PW, "another-key-password", 1 },
	{ "chain3-default.wks", PW, PW, 0 },
	{ "empty.wks", PW, PW, 1 },
};

static int skip_vector(size_t i)
{
	return !vector_files[i].vg && getenv("WKS_UNDER_VALGRIND");
}

static const char *vector(const char *name)
{
	static char p[4096];

	snprintf(p, sizeof(p), "%s",
	         tu_shared("vectors/wolfjce-live/secret-keys.wks"));
	snprintf(strrchr(p, '/') + 1, sizeof(p) - (size_t)(strrchr(p, '/') + 1 - p),
	         "%s", name);
	return p;
}

static wks_store *ex_store(OSSL_LIB_CTX *ctx, const char *propq)
{
	wks_store *st = NULL;

	TU_OK(wks_store_new_ex(&st, ctx, propq));
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "10000"));
	return st;
}

/* Every operation that needs a primitive fails with WKS_ERR_CRYPTO, and
 * nothing is left on the OpenSSL error queue. */
static void expect_all_fail(wks_store *st)
{
	tu_der *cert = NULL, *key = NULL;
	size_t ncert, nkey;
	uint8_t aes[32] = { 1, 2, 3 };
	uint8_t *out = NULL;
	size_t out_len = 0;
	wks_key *k = NULL;
	EVP_PKEY *pk = NULL;
	const uint8_t *ders[1];
	size_t lens[1];
	int rc;

	ERR_clear_error();
	TU_EXPECT(WKS_ERR_CRYPTO, wks_store_load_file(st, vector("secret-keys.wks"),
	                                              PW, strlen(PW)));
	TU_EXPECT(WKS_ERR_CRYPTO, wks_store_set_secret_key(st, "aes", "AES", aes,
	                                                   sizeof(aes), PW,
	                                                   strlen(PW)));
	/* A load without a password needs no cryptography for secret keys;
	 * their keys then cannot be opened. */
	TU_OK(wks_store_load_file(st, vector("secret-keys.wks"), NULL, 0));
	assert_true(wks_store_size(st) > 0);
	TU_EXPECT(WKS_ERR_CRYPTO, wks_store_get_key(&k, st, "aes128", PW,
	                                            strlen(PW)));
	assert_null(k);
	TU_EXPECT(WKS_ERR_CRYPTO, wks_store_get_pkey(&pk, st, "aes128", PW,
	                                             strlen(PW)));
	assert_null(pk);
	TU_EXPECT(WKS_ERR_CRYPTO, wks_store_save_buffer(st, &out, &out_len, PW,
	                                                strlen(PW)));
	assert_null(out);
	TU_EXPECT(WKS_ERR_CRYPTO, wks_store_change_key_password(st, "aes128", PW,
	                                                        strlen(PW), "x", 1));
	/* A new private key: its checks or its sealing fail, whichever the
	 * context stops first; never a success. */
	ncert = tu_pem_ders(&cert, tu_input("server-ecc-cert.pem"), "CERTIFICATE");
	nkey = tu_pem_ders(&key, tu_input("ecc-key.pem"), NULL);
	ders[0] = cert[0].der;
	lens[0] = cert[0].len;
	rc = wks_store_set_private_key(st, "k", key[0].der, key[0].len, ders, lens,
	                               1, PW, strlen(PW));
	assert_true(rc < 0);
	assert_false(wks_store_contains(st, "k"));
	/* A store with certificates, without a password: whatever the
	 * context can parse, no crash, and still no key. */
	rc = wks_store_load_file(st, vector("chain3-default.wks"), NULL, 0);
	assert_true(rc == WKS_OK || rc < 0);
	tu_ders_free(cert, ncert);
	tu_ders_free(key, nkey);
	assert_int_equal(ERR_peek_error(), 0);
}

static void test_null_provider(void **state)
{
	OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
	OSSL_PROVIDER *np;
	wks_store *st;

	(void)state;
	assert_non_null(ctx);
	assert_non_null(np = OSSL_PROVIDER_load(ctx, "null"));
	st = ex_store(ctx, NULL);
	expect_all_fail(st);
	/* both PBKDF2 settings */
	TU_OK(wks_store_set_property(st, "libwks.kdf.impl", "openssl"));
	expect_all_fail(st);
	wks_store_free(st);
	OSSL_PROVIDER_unload(np);
	OSSL_LIB_CTX_free(ctx);
}

/* Each primitive on its own, through a null-provider context: every one
 * fails (one that fell back to the default context would succeed). */
static void test_each_primitive(void **state)
{
	OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
	OSSL_PROVIDER *np;
	wks_crypto_ctx *cc = NULL;
	uint8_t out[96], key[32] = { 0 }, iv[16] = { 0 }, data[32] = { 0 };
	wks_buf b = WKS_BUF_INIT;
	tu_der *cert = NULL, *pkey = NULL;
	size_t ncert, nkey;
	X509 *x = NULL;
	EVP_PKEY *k = NULL;
	int rc;

	(void)state;
	assert_non_null(np = OSSL_PROVIDER_load(ctx, "null"));
	TU_OK(wks__crypto_ctx_new(&cc, ctx, NULL));
	assert_non_null(cc);
	TU_EXPECT(WKS_ERR_CRYPTO, wks__random_cc(cc, out, 16));
	TU_EXPECT(WKS_ERR_CRYPTO, wks__pbkdf2_cc(cc, out, 96, data, 8, data, 16,
	                                         1000, WKS_KDF_NATIVE, 1));
	TU_EXPECT(WKS_ERR_CRYPTO, wks__pbkdf2_cc(cc, out, 96, data, 8, data, 16,
	                                         1000, WKS_KDF_OPENSSL, 1));
	TU_EXPECT(WKS_ERR_CRYPTO, wks__hmac_sha512_cc(cc, out, key, 32, data, 32));
	TU_EXPECT(WKS_ERR_CRYPTO, wks__aes256cbc_encrypt_cc(cc, &b, key, iv, data,
	                                                    32));
	TU_EXPECT(WKS_ERR_CRYPTO, wks__aes256cbc_decrypt_cc(cc, &b, key, iv, data,
	                                                    32));
	assert_int_equal(b.len, 0);
	ncert = tu_pem_ders(&cert, tu_input("server-ecc-cert.pem"), "CERTIFICATE");
	nkey = tu_pem_ders(&pkey, tu_input("ecc-key.pem"), NULL);
	/* No decoder in the context: OpenSSL 3.0's EVP_PKCS82PKEY_ex() then
	 * falls back to libcrypto's built-in legacy ASN.1 decoding (no
	 * provider, no cryptographic operation); either outcome is clean. */
	rc = wks__pkey_from_pkcs8_cc(cc, &k, pkey[0].der, pkey[0].len);
	assert_true(rc == WKS_OK || rc == WKS_ERR_UNSUPPORTED);
	EVP_PKEY_free(k);
	/* A certificate still parses as ASN.1 in a null context, but its
	 * key cannot be decoded there, so neither its signature nor a key
	 * can be checked against it. */
	rc = wks__x509_parse_cc(cc, &x, cert[0].der, cert[0].len);
	if (rc == WKS_OK) {
		ERR_set_mark(); /* the test's own call queues a decode error */
		assert_null(X509_get0_pubkey(x));
		ERR_pop_to_mark();
		X509_free(x);
	}
	{
		const uint8_t *ders[1] = { cert[0].der };
		size_t lens[1] = { cert[0].len };

		assert_true(wks__check_key_and_chain_cc(cc, pkey[0].der,
		                                        pkey[0].len, ders, lens,
		                                        1) < 0);
		/* and the same through the default context succeeds */
		TU_OK(wks__check_key_and_chain(pkey[0].der, pkey[0].len, ders,
		                               lens, 1));
	}
	tu_ders_free(cert, ncert);
	tu_ders_free(pkey, nkey);
	wks_buf_dispose(&b);
	wks__crypto_ctx_free(cc);
	OSSL_PROVIDER_unload(np);
	OSSL_LIB_CTX_free(ctx);
	assert_int_equal(ERR_peek_error(), 0);
}

static void test_propq_matches_nothing(void **state)
{
	wks_store *st;

	(void)state;
	st = ex_store(NULL, "provider=nonexistent");
	expect_all_fail(st);
	wks_store_free(st);
}

static void test_fips_default_properties(void **state)
{
	OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
	OSSL_PROVIDER *dp;
	wks_store *st;
	unsigned long before;

	(void)state;
	assert_non_null(ctx);
	assert_non_null(dp = OSSL_PROVIDER_load(ctx, "default"));
	assert_int_equal(EVP_set_default_properties(ctx, "fips=yes"), 1);
	assert_true(EVP_default_properties_is_fips_enabled(ctx));
	st = ex_store(ctx, NULL);
	before = wks__kdf_native_ctx_runs();
	expect_all_fail(st);
	assert_int_equal(wks__kdf_native_ctx_runs(), before);
	wks_store_free(st);
	OSSL_PROVIDER_unload(dp);
	OSSL_LIB_CTX_free(ctx);
}

/* A and B give the same result for every entry of every vector file. */
static void compare_stores_kpw(wks_store *a, wks_store *b, const char *kpw)
{
	char **al = NULL, **bl = NULL;
	size_t an = 0, bn = 0, i, j, nc;

	TU_OK(wks_store_aliases(&al, &an, a));
	TU_OK(wks_store_aliases(&bl, &bn, b));
	assert_int_equal(an, bn);
	for (i = 0; i < an; i++) {
		wks_key *ka = NULL, *kb = NULL;
		EVP_PKEY *pa = NULL, *pb = NULL;
		int ra, rb;

		assert_string_equal(al[i], bl[i]);
		ra = wks_store_get_key(&ka, a, al[i], kpw, strlen(kpw));
		rb = wks_store_get_key(&kb, b, al[i], kpw, strlen(kpw));
		assert_int_equal(ra, rb);
		if (ra == WKS_OK) {
			size_t la, lb;
			const uint8_t *da = wks_key_data(ka, &la);
			const uint8_t *db = wks_key_data(kb, &lb);

			assert_int_equal(la, lb);
			assert_memory_equal(da, db, la);
			assert_string_equal(wks_key_algorithm(ka), wks_key_algorithm(kb));
		}
		wks_key_free(ka);
		wks_key_free(kb);
		ra = wks_store_get_pkey(&pa, a, al[i], kpw, strlen(kpw));
		rb = wks_store_get_pkey(&pb, b, al[i], kpw, strlen(kpw));
		assert_int_equal(ra, rb);
		if (ra == WKS_OK)
			assert_int_equal(EVP_PKEY_eq(pa, pb), 1);
		EVP_PKEY_free(pa);
		EVP_PKEY_free(pb);
		nc = 0;
		if (wks_store_cert_count(&nc, a, al[i]) == WKS_OK)
			for (j = 0; j < nc; j++) {
				X509 *xa = NULL, *xb = NULL;

				TU_OK(wks_store_get_cert(&xa, a, al[i], j));
				TU_OK(wks_store_get_cert(&xb, b, al[i], j));
				assert_int_equal(X509_cmp(xa, xb), 0);
				X509_free(xa);
				X509_free(xb);
			}
	}
	wks_aliases_free(al);
	wks_aliases_free(bl);
}

static void compare_stores(wks_store *a, wks_store *b)
{
	compare_stores_kpw(a, b, PW);
}

/* Load vector i into both stores and compare them. */
static void load_both(wks_store *a, wks_store *b, size_t i)
{
	const char *pw = vector_files[i].pw;

	TU_OK(wks_store_load_file(a, vector(vector_files[i].name), pw,
	                          strlen(pw)));
	TU_OK(wks_store_load_file(b, vector(vector_files[i].name), pw,
	                          strlen(pw)));
	compare_stores_kpw(a, b, vector_files[i].kpw);
}

/* The store's bytes written by `from`, loaded by `to`, same entries. */
static void round_trip(wks_store *from, wks_store *to)
{
	uint8_t *buf = NULL;
	size_t len = 0;

	TU_OK(wks_store_save_buffer(from, &buf, &len, PW, strlen(PW)));
	TU_OK(wks_store_load_buffer(to, buf, len, PW, strlen(PW)));
	wks_free(buf);
	compare_stores(from, to);
}

static void test_default_provider_same_results(void **state)
{
	OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
	OSSL_PROVIDER *dp;
	wks_store *plain, *ex;
	uint8_t aes[32];
	unsigned long before;
	EVP_PKEY *pk = NULL;
	X509 *cert = NULL;
	size_t i;

	(void)state;
	assert_non_null(ctx);
	assert_non_null(dp = OSSL_PROVIDER_load(ctx, "default"));
	plain = tu_store_fast();
	ex = ex_store(ctx, NULL);
	before = wks__kdf_native_ctx_runs();
	for (i = 0; i < sizeof(vector_files) / sizeof(vector_files[0]); i++)
		if (!skip_vector(i))
			load_both(plain, ex, i);
	/* not FIPS: the native PBKDF2 served the context's store */
	assert_true(wks__kdf_native_ctx_runs() > before);

	/* new entries through the context's RNG, AES, HMAC and checks */
	TU_OK(wks_store_load_file(ex, vector("ec-p384.wks"), PW, strlen(PW)));
	memset(aes, 0x5a, sizeof(aes));
	TU_OK(wks_store_set_secret_key(ex, "rt-aes", "AES", aes, sizeof(aes), PW,
	                               strlen(PW)));
	{
		char **al = NULL;
		size_t n = 0, j;

		TU_OK(wks_store_aliases(&al, &n, ex));
		for (j = 0; j < n && !pk; j++)
			if (wks_store_get_pkey(&pk, ex, al[j], PW, strlen(PW)) == WKS_OK)
				TU_OK(wks_store_get_cert(&cert, ex, al[j], 0));
		wks_aliases_free(al);
	}
	assert_non_null(pk);
	TU_OK(wks_store_set_pkey(ex, "rt-pkey", pk, &cert, 1, PW, strlen(PW)));
	TU_OK(wks_store_set_cert(ex, "rt-cert", cert));
	TU_OK(wks_store_change_key_password(ex, "rt-aes", PW, strlen(PW), PW,
	                                    strlen(PW)));
	round_trip(ex, plain);
	round_trip(plain, ex);
	/* OpenSSL's PBKDF2, fetched from the context */
	TU_OK(wks_store_set_property(ex, "libwks.kdf.impl", "openssl"));
	round_trip(ex, plain);
	round_trip(plain, ex);
	/* the KEK cache's hit path decrypts in the context too */
	{
		wks_cache_stats cs;
		wks_key *k1 = NULL, *k2 = NULL;
		size_t l1, l2;

		TU_OK(wks_store_set_property(ex, "wolfjce.keystore.kekCacheEnabled",
		                             "true"));
		TU_OK(wks_store_get_key(&k1, ex, "rt-aes", PW, strlen(PW)));
		TU_OK(wks_store_get_key(&k2, ex, "rt-aes", PW, strlen(PW)));
		TU_OK(wks_store_cache_stats(&cs, ex));
		assert_true(cs.hits >= 1);
		assert_int_equal(wks_key_data(k1, &l1)[0], 0x5a);
		assert_memory_equal(wks_key_data(k1, &l1), wks_key_data(k2, &l2), 32);
		wks_key_free(k1);
		wks_key_free(k2);
	}
	EVP_PKEY_free(pk);
	X509_free(cert);
	wks_store_free(plain);
	wks_store_free(ex);
	OSSL_PROVIDER_unload(dp);
	OSSL_LIB_CTX_free(ctx);
}

/* A query that asks for FIPS turns the native PBKDF2 off: "?fips=yes"
 * (optional) is satisfied by the default provider here, so the store
 * works, with PBKDF2 fetched from the context every time. */
static void test_fips_query_no_native_kdf(void **state)
{
	wks_store *plain, *ex;
	unsigned long before;
	size_t i;

	(void)state;
	plain = tu_store_fast();
	ex = ex_store(NULL, "?fips=yes");
	before = wks__kdf_native_ctx_runs();
	for (i = 0; i < 3; i++)
		if (!skip_vector(i))
			load_both(plain, ex, i);
	round_trip(ex, plain);
	round_trip(plain, ex);
	assert_int_equal(wks__kdf_native_ctx_runs(), before);
	wks_store_free(plain);
	wks_store_free(ex);
}

#define THREADS 4
#define ROUNDS 20

static void *getter(void *arg)
{
	wks_store *st = arg;
	int i, bad = 0, rounds = getenv("WKS_UNDER_VALGRIND") ? 3 : ROUNDS;

	for (i = 0; i < rounds; i++) {
		wks_key *k = NULL;

		if (wks_store_get_key(&k, st, i % 2 ? "aes128" : "aes256", PW,
		                      strlen(PW)) != WKS_OK)
			bad++;
		wks_key_free(k);
	}
	return (void *)(intptr_t)bad;
}

static void test_threads(void **state)
{
	OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
	OSSL_PROVIDER *dp;
	pthread_t t[THREADS];
	wks_store *st;
	int i, pass;

	(void)state;
	assert_non_null(dp = OSSL_PROVIDER_load(ctx, "default"));
	st = ex_store(ctx, NULL);
	TU_OK(wks_store_load_file(st, vector("secret-keys.wks"), PW, strlen(PW)));
	for (pass = 0; pass < 2; pass++) {
		TU_OK(wks_store_set_property(st, "wolfjce.keystore.kekCacheEnabled",
		                             pass ? "true" : "false"));
		for (i = 0; i < THREADS; i++)
			assert_int_equal(pthread_create(&t[i], NULL, getter, st), 0);
		for (i = 0; i < THREADS; i++) {
			void *r;

			pthread_join(t[i], &r);
			assert_int_equal((intptr_t)r, 0);
		}
	}
	wks_store_free(st);
	OSSL_PROVIDER_unload(dp);
	OSSL_LIB_CTX_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_provider),
		cmocka_unit_test(test_each_primitive),
		cmocka_unit_test(test_propq_matches_nothing),
		cmocka_unit_test(test_fips_default_properties),
		cmocka_unit_test(test_default_provider_same_results),
		cmocka_unit_test(test_fips_query_no_native_kdf),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
