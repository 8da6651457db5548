/*
 * The set-time checks of wks_store_set_private_key() (pki_<backend>.c),
 * the same on both backends (issue 31): for RSA (PKCS#1 v1.5 and PSS
 * signatures, rsaEncryption and RSASSA-PSS keys), ECDSA P-256/384/521,
 * Ed25519 and Ed448 a chain that is signed link by link and a key that
 * matches its leaf are accepted, and a wrong key, a broken link, a
 * modified signature or a key of another type is refused with
 * WKS_ERR_INVALID; an issuer whose algorithm the backend lacks (ML-DSA
 * on OpenSSL 3.0 and on Debian's wolfCrypt 5.5.4) is refused with
 * WKS_ERR_UNSUPPORTED, never accepted unchecked.  Fixtures:
 * tests/data/pki/ (gen.sh, written once by the openssl tool).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tu_ossl.h"

#define KP "setcheck-pw"

static const char *const algs[] = { "rsa", "pss", "rsapss", "p256", "p384",
                                    "p521", "ed25519", "ed448" };
static const char *const alg_names[] = { "RSA", "RSASSA-PSS", "RSA", "EC",
                                         "EC", "EC", "ED25519", "ED448" };
#define N_ALGS (sizeof(algs) / sizeof(algs[0]))

static const char *pki(const char *alg, const char *what)
{
	static _Thread_local char buf[4096];

	snprintf(buf, sizeof(buf), "%s/tests/data/pki/%s-%s", WKS_SOURCE_DIR,
	         alg, what);
	return buf;
}

typedef struct {
	tu_der *key, *other, *leaf, *ca;
} fixture;

static void load(fixture *f, const char *alg)
{
	assert_int_equal(tu_pem_ders(&f->key, pki(alg, "leafkey.key"),
	                             "PRIVATE KEY"), 1);
	assert_int_equal(tu_pem_ders(&f->other, pki(alg, "other.key"),
	                             "PRIVATE KEY"), 1);
	assert_int_equal(tu_pem_ders(&f->leaf, pki(alg, "leaf.pem"),
	                             "CERTIFICATE"), 1);
	assert_int_equal(tu_pem_ders(&f->ca, pki(alg, "ca.pem"),
	                             "CERTIFICATE"), 1);
}

static void unload(fixture *f)
{
	tu_ders_free(f->key, 1);
	tu_ders_free(f->other, 1);
	tu_ders_free(f->leaf, 1);
	tu_ders_free(f->ca, 1);
}

static int set(wks_store *st, const tu_der *key, const tu_der *c0,
               const tu_der *c1)
{
	const uint8_t *c[2] = { c0->der, c1 ? c1->der : NULL };
	size_t l[2] = { c0->len, c1 ? c1->len : 0 };

	return wks_store_set_private_key(st, "k", key->der, key->len, c, l,
	                                 c1 ? 2 : 1, KP, strlen(KP));
}

static void test_setchecks__accepted(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < N_ALGS; i++) {
		wks_store *st = tu_store_fast();
		wks_key *k = NULL;
		fixture f;
		size_t n;
		const uint8_t *d;

		load(&f, algs[i]);
		if (set(st, f.key, f.leaf, f.ca) != WKS_OK)
			fail_msg("%s: chain of 2 refused: %s", algs[i],
			         wks_error_detail());
		if (set(st, f.key, f.leaf, NULL) != WKS_OK)
			fail_msg("%s: leaf alone refused: %s", algs[i],
			         wks_error_detail());
		/* a self-signed CA as a one-certificate chain, with its key */
		{
			tu_der *cak = NULL;

			assert_int_equal(tu_pem_ders(&cak, pki(algs[i], "cakey.key"),
			                             "PRIVATE KEY"), 1);
			if (set(st, cak, f.ca, NULL) != WKS_OK)
				fail_msg("%s: self-signed CA refused: %s", algs[i],
				         wks_error_detail());
			tu_ders_free(cak, 1);
		}
		TU_OK(set(st, f.key, f.leaf, f.ca));
		TU_OK(wks_store_get_key(&k, st, "k", KP, strlen(KP)));
		d = wks_key_data(k, &n);
		assert_int_equal(n, f.key->len);
		assert_memory_equal(d, f.key->der, n);
		assert_string_equal(wks_key_algorithm(k), alg_names[i]);
		wks_key_free(k);
		unload(&f);
		wks_store_free(st);
	}
}

static void expect_invalid(const char *what, const char *alg, int r)
{
	if (r != WKS_ERR_INVALID)
		fail_msg("%s: %s: got %d (%s), want WKS_ERR_INVALID", alg, what, r,
		         wks_error_detail());
}

static void test_setchecks__refused(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < N_ALGS; i++) {
		wks_store *st = tu_store_fast();
		fixture f;
		tu_der bad;

		load(&f, algs[i]);
		/* another key of the same kind */
		expect_invalid("wrong key", algs[i], set(st, f.other, f.leaf, f.ca));
		expect_invalid("wrong key, leaf alone", algs[i],
		               set(st, f.other, f.leaf, NULL));
		/* the leaf is not signed by the next certificate (itself) */
		expect_invalid("broken link", algs[i],
		               set(st, f.key, f.leaf, f.leaf));
		/* the leaf's signature modified (its last byte) */
		bad.len = f.leaf->len;
		bad.der = malloc(bad.len);
		assert_non_null(bad.der);
		memcpy(bad.der, f.leaf->der, bad.len);
		bad.der[bad.len - 1] ^= 0x01;
		expect_invalid("modified signature", algs[i],
		               set(st, f.key, &bad, f.ca));
		free(bad.der);
		/* nothing was stored */
		assert_false(wks_store_contains(st, "k"));
		unload(&f);
		wks_store_free(st);
	}
}

/* A key never matches a certificate key of another type or curve. */
static void test_setchecks__other_types(void **state)
{
	static const char *const pairs[][2] = {
		{ "rsa", "pss" }, { "pss", "rsa" }, { "p256", "p384" },
		{ "p384", "p521" }, { "ed25519", "ed448" }, { "ed448", "ed25519" },
		{ "rsa", "p256" }, { "p256", "ed25519" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		wks_store *st = tu_store_fast();
		fixture a, b;
		char what[64];

		load(&a, pairs[i][0]);
		load(&b, pairs[i][1]);
		snprintf(what, sizeof(what), "key of %s, leaf of %s", pairs[i][0],
		         pairs[i][1]);
		expect_invalid(what, pairs[i][0], set(st, a.key, b.leaf, b.ca));
		/* a chain whose issuer has another algorithm */
		snprintf(what, sizeof(what), "leaf of %s under the CA of %s",
		         pairs[i][0], pairs[i][1]);
		expect_invalid(what, pairs[i][0], set(st, a.key, a.leaf, b.ca));
		unload(&a);
		unload(&b);
		wks_store_free(st);
	}
}

/* An issuer whose key algorithm the backend cannot verify with: refused
 * as unsupported, with the algorithm named on wolfCrypt. */
static void test_setchecks__unsupported_issuer(void **state)
{
	wks_store *st, *v;
	uint8_t *file, *ml = NULL;
	size_t file_len, ml_len = 0;
	fixture f;
	tu_der mld;
	int r;

	(void)state;
	file = tu_read_file(tu_shared("vectors/wolfjce/client-mldsa44.wks"),
	                    &file_len);
	TU_OK(wks_store_new(&v));
	TU_OK(wks_store_load_buffer(v, file, file_len, NULL, 0));
	TU_OK(wks_store_get_cert_der(&ml, &ml_len, v, "client-mldsa44", 0));
	mld.der = ml;
	mld.len = ml_len;
	st = tu_store_fast();
	load(&f, "rsa");
	r = set(st, f.key, f.leaf, &mld);
	if (r != WKS_ERR_UNSUPPORTED)
		fail_msg("RSA leaf under an ML-DSA-44 issuer: got %d (%s), want "
		         "WKS_ERR_UNSUPPORTED", r, wks_error_detail());
#ifdef WKS_CRYPTO_WOLFCRYPT
	if (!strstr(wks_error_detail(), "ML-DSA-44"))
		fail_msg("the refusal does not name ML-DSA-44: %s",
		         wks_error_detail());
#endif
	assert_false(wks_store_contains(st, "k"));
	unload(&f);
	wks_free(ml);
	wks_store_free(st);
	wks_store_free(v);
	free(file);
}

/* RSA above what the backend verifies with: Debian's wolfCrypt
 * (RSA_MAX_SIZE 4096) decodes and matches a 4200-bit key as OpenSSL does,
 * but cannot verify a signature made with one: a chain whose issuer is
 * RSA-4200 is refused there as unsupported, naming the size (before, as
 * "not signed by"); OpenSSL accepts it. */
static void test_setchecks__rsa_size(void **state)
{
	wks_store *st = tu_store_fast();
	tu_der *k = NULL, *c = NULL, *sub = NULL;
	char kp[4096], cp[4096], sp[4096];
	fixture f;
	int r;

	(void)state;
	snprintf(kp, sizeof(kp), "%s/tests/data/pki/rsa4200.key", WKS_SOURCE_DIR);
	snprintf(cp, sizeof(cp), "%s/tests/data/pki/rsa4200.pem", WKS_SOURCE_DIR);
	snprintf(sp, sizeof(sp), "%s/tests/data/pki/rsa4200-sub.pem",
	         WKS_SOURCE_DIR);
	assert_int_equal(tu_pem_ders(&k, kp, "PRIVATE KEY"), 1);
	assert_int_equal(tu_pem_ders(&c, cp, "CERTIFICATE"), 1);
	assert_int_equal(tu_pem_ders(&sub, sp, "CERTIFICATE"), 1);
	/* the key against its own certificate, alone: matched on both */
	if ((r = set(st, k, c, NULL)) != WKS_OK)
		fail_msg("RSA-4200 key and certificate: %d (%s)", r,
		         wks_error_detail());
	/* an RSA-2048 leaf (rsa-leafkey.key) signed by the RSA-4200 key */
	load(&f, "rsa");
	r = set(st, f.key, sub, c);
#ifdef WKS_CRYPTO_WOLFCRYPT
	if (r != WKS_ERR_UNSUPPORTED || !strstr(wks_error_detail(), "4200 bits"))
		fail_msg("RSA-4200 issuer on wolfCrypt: got %d (%s), want "
		         "WKS_ERR_UNSUPPORTED naming 4200 bits", r,
		         wks_error_detail());
#else
	if (r != WKS_OK)
		fail_msg("RSA-4200 issuer on OpenSSL: %d (%s)", r,
		         wks_error_detail());
#endif
	unload(&f);
	tu_ders_free(k, 1);
	tu_ders_free(c, 1);
	tu_ders_free(sub, 1);
	wks_store_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_setchecks__accepted),
		cmocka_unit_test(test_setchecks__refused),
		cmocka_unit_test(test_setchecks__other_types),
		cmocka_unit_test(test_setchecks__unsupported_issuer),
		cmocka_unit_test(test_setchecks__rsa_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
