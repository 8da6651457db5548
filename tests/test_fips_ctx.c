/*
 * A store in a library context whose default properties are FIPS
 * (EVP_default_properties_enable_fips), end to end.
 *
 * Debian 12 ships no OpenSSL FIPS provider, so this program brings its
 * own stand-in, "fakefips" (registered with OSSL_PROVIDER_add_builtin()
 * in each context that uses it): every algorithm of OpenSSL's default
 * provider, loaded in a separate internal library context, offered again
 * under the properties "provider=fakefips,fips=yes".  Its provider
 * context is the inner default provider's own, so each implementation
 * runs as the default provider's code on the inner context (what it
 * fetches for itself, e.g. HMAC's SHA-512, comes from there).  A few
 * entry points are wrapped to count calls: PBKDF2's derive (which also
 * turns on the SP 800-132 lower bounds, as the FIPS provider's PBKDF2
 * has them by default), HMAC's init,
 * AES-256-CBC's encrypt and decrypt init, the SHA-512/SHA-256/SHA-1
 * digest init and CTR-DRBG's generate.
 *
 * The outer context has fakefips alone (the default provider is never
 * loaded there, checked) and default properties fips=yes; a store made
 * with wks_store_new_ex() in it:
 * - adds a private key with its chain, a secret key and a trusted
 *   certificate, saves, loads back, get_key and get_pkey: the entries
 *   round-trip, keys and certificates live in fakefips, every PBKDF2 is
 *   fakefips's (libwks's native PBKDF2 never runs: its counter stays put)
 *   and AES, HMAC and the RNG are fakefips's;
 * - the file it wrote loads in a plain store (default context, native
 *   PBKDF2) and passes wksdump.py (shared/tools, an independent reader);
 * - a wolfJCE vector (ec-p384.wks) reads back in the FIPS context as its
 *   manifest says.
 * - the wks provider loaded beside fakefips opens a wks: URI in its child
 *   context with fakefips's PBKDF2 too (the child follows fips=yes).
 * A control: the same outer context without fips=yes keeps the native
 * PBKDF2 (fakefips's PBKDF2 counter does not move for derivations), so
 * the counter above measures the FIPS switch, not the wrapper.
 */
#include "testutil.h"

#include "crypto/crypto.h"

#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/provider.h>
#include <openssl/rand.h>
#include <openssl/store.h>
#include <openssl/x509.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PW "wolfsslpassword"
#define KPW "a-key-password"

/* ---- fakefips: the default provider again, as fips=yes, with counters -- */

enum { C_PBKDF2, C_HMAC, C_AES_ENC, C_AES_DEC, C_SHA512, C_SHA256, C_SHA1,
       C_RAND, C_N };
static unsigned long counts[C_N];

static OSSL_FUNC_kdf_derive_fn *orig_pbkdf2;
static OSSL_FUNC_mac_init_fn *orig_hmac;
static OSSL_FUNC_cipher_encrypt_init_fn *orig_aes_enc;
static OSSL_FUNC_cipher_decrypt_init_fn *orig_aes_dec;
static OSSL_FUNC_digest_init_fn *orig_sha512, *orig_sha256, *orig_sha1;
static OSSL_FUNC_rand_generate_fn *orig_drbg;

/* PBKDF2 with the SP 800-132 checks on, as in OpenSSL's FIPS provider
 * (its default "pkcs5" is 0: iterations >= 1000, salt >= 128 bits, key
 * >= 112 bits; the default provider's is 1, checks off). */
static int count_pbkdf2(void *c, unsigned char *key, size_t n,
                        const OSSL_PARAM p[])
{
	OSSL_PARAM all[16];
	size_t i = 0;
	int checks_on = 0;

	counts[C_PBKDF2]++;
	all[i++] = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_PKCS5, &checks_on);
	for (; p && p->key; p++) {
		if (i == 15)
			return 0; /* more parameters than PBKDF2 has */
		all[i++] = *p;
	}
	all[i] = OSSL_PARAM_construct_end();
	return orig_pbkdf2(c, key, n, all);
}

static int count_hmac(void *c, const unsigned char *key, size_t n,
                      const OSSL_PARAM p[])
{
	counts[C_HMAC]++;
	return orig_hmac(c, key, n, p);
}

static int count_aes_enc(void *c, const unsigned char *key, size_t kl,
                         const unsigned char *iv, size_t ivl,
                         const OSSL_PARAM p[])
{
	counts[C_AES_ENC]++;
	return orig_aes_enc(c, key, kl, iv, ivl, p);
}

static int count_aes_dec(void *c, const unsigned char *key, size_t kl,
                         const unsigned char *iv, size_t ivl,
                         const OSSL_PARAM p[])
{
	counts[C_AES_DEC]++;
	return orig_aes_dec(c, key, kl, iv, ivl, p);
}

static int count_sha512(void *c, const OSSL_PARAM p[])
{
	counts[C_SHA512]++;
	return orig_sha512(c, p);
}

static int count_sha256(void *c, const OSSL_PARAM p[])
{
	counts[C_SHA256]++;
	return orig_sha256(c, p);
}

static int count_sha1(void *c, const OSSL_PARAM p[])
{
	counts[C_SHA1]++;
	return orig_sha1(c, p);
}

static int count_drbg(void *c, unsigned char *out, size_t n,
                      unsigned int strength, int pr,
                      const unsigned char *adin, size_t adin_len)
{
	counts[C_RAND]++;
	return orig_drbg(c, out, n, strength, pr, adin, adin_len);
}

/* Which entry point of which algorithm is counted (first name of the
 * default provider's algorithm, as in its tables). */
static const struct {
	int op;
	const char *name;
	int fn_id;
	void (*wrapper)(void);
} wraps[] = {
	{ OSSL_OP_KDF, "PBKDF2", OSSL_FUNC_KDF_DERIVE,
	  (void (*)(void))count_pbkdf2 },
	{ OSSL_OP_MAC, "HMAC", OSSL_FUNC_MAC_INIT, (void (*)(void))count_hmac },
	{ OSSL_OP_CIPHER, "AES-256-CBC", OSSL_FUNC_CIPHER_ENCRYPT_INIT,
	  (void (*)(void))count_aes_enc },
	{ OSSL_OP_CIPHER, "AES-256-CBC", OSSL_FUNC_CIPHER_DECRYPT_INIT,
	  (void (*)(void))count_aes_dec },
	{ OSSL_OP_DIGEST, "SHA2-512", OSSL_FUNC_DIGEST_INIT,
	  (void (*)(void))count_sha512 },
	{ OSSL_OP_DIGEST, "SHA2-256", OSSL_FUNC_DIGEST_INIT,
	  (void (*)(void))count_sha256 },
	{ OSSL_OP_DIGEST, "SHA1", OSSL_FUNC_DIGEST_INIT,
	  (void (*)(void))count_sha1 },
	{ OSSL_OP_RAND, "CTR-DRBG", OSSL_FUNC_RAND_GENERATE,
	  (void (*)(void))count_drbg },
};
#define NWRAPS (sizeof(wraps) / sizeof(wraps[0]))

/* d: the table entry of wraps[w].fn_id */
static void keep_original(size_t w, const OSSL_DISPATCH *d)
{
	switch (w) {
	case 0: orig_pbkdf2 = OSSL_FUNC_kdf_derive(d); break;
	case 1: orig_hmac = OSSL_FUNC_mac_init(d); break;
	case 2: orig_aes_enc = OSSL_FUNC_cipher_encrypt_init(d); break;
	case 3: orig_aes_dec = OSSL_FUNC_cipher_decrypt_init(d); break;
	case 4: orig_sha512 = OSSL_FUNC_digest_init(d); break;
	case 5: orig_sha256 = OSSL_FUNC_digest_init(d); break;
	case 6: orig_sha1 = OSSL_FUNC_digest_init(d); break;
	case 7: orig_drbg = OSSL_FUNC_rand_generate(d); break;
	}
}

static OSSL_LIB_CTX *inner;          /* the default provider's own context */
static OSSL_PROVIDER *inner_default;
static OSSL_ALGORITHM *tables[OSSL_OP__HIGHEST + 1];
static OSSL_DISPATCH *dispatch_copies[NWRAPS];

/* "provider=default[,...]" -> "provider=fakefips[,...],fips=yes" (kept as
 * it is when the default provider already says fips=...; its encoders
 * and decoders say fips=yes). */
static char *fake_properties(const char *def)
{
	const char *rest = def;
	size_t n;
	char *p;

	if (strncmp(def, "provider=default", 16) == 0)
		rest = def + 16;
	n = strlen("provider=fakefips") + strlen(rest) + strlen(",fips=yes") + 1;
	assert_non_null(p = malloc(n));
	snprintf(p, n, "provider=fakefips%s%s", rest,
	         strstr(rest, "fips=") ? "" : ",fips=yes");
	return p;
}

static int first_name_is(const char *names, const char *name)
{
	size_t n = strlen(name);

	return strncmp(names, name, n) == 0 &&
	       (names[n] == ':' || names[n] == '\0');
}

/* A copy of a dispatch table with one function replaced. */
static OSSL_DISPATCH *wrap_dispatch(size_t w, const OSSL_DISPATCH *d)
{
	size_t n = 0, i;
	OSSL_DISPATCH *c;

	while (d[n].function_id != 0)
		n++;
	assert_non_null(c = calloc(n + 1, sizeof(*c)));
	memcpy(c, d, (n + 1) * sizeof(*c));
	for (i = 0; i < n; i++)
		if (c[i].function_id == wraps[w].fn_id) {
			keep_original(w, &d[i]);
			c[i].function = wraps[w].wrapper;
		}
	return c;
}

/* The inner context with the default provider, and fakefips's tables made
 * from the default provider's. */
static void fakefips_setup(void)
{
	int op;
	size_t w;

	assert_non_null(inner = OSSL_LIB_CTX_new());
	assert_non_null(inner_default = OSSL_PROVIDER_load(inner, "default"));
	for (op = 1; op <= OSSL_OP__HIGHEST; op++) {
		int no_cache = 0;
		const OSSL_ALGORITHM *a =
			OSSL_PROVIDER_query_operation(inner_default, op, &no_cache);
		size_t n = 0, i;

		if (!a)
			continue;
		while (a[n].algorithm_names)
			n++;
		assert_non_null(tables[op] = calloc(n + 1, sizeof(*tables[op])));
		for (i = 0; i < n; i++) {
			tables[op][i] = a[i];
			tables[op][i].property_definition =
				fake_properties(a[i].property_definition);
			for (w = 0; w < NWRAPS; w++)
				if (wraps[w].op == op &&
				    first_name_is(a[i].algorithm_names, wraps[w].name)) {
					/* two wraps may share one algorithm (AES's
					 * encrypt and decrypt): they stack */
					assert_null(dispatch_copies[w]);
					dispatch_copies[w] = wrap_dispatch(
						w, tables[op][i].implementation);
					tables[op][i].implementation = dispatch_copies[w];
				}
		}
		OSSL_PROVIDER_unquery_operation(inner_default, op, a);
	}
	for (w = 0; w < NWRAPS; w++)
		assert_non_null(dispatch_copies[w]);
	assert_true(orig_pbkdf2 && orig_hmac && orig_aes_enc && orig_aes_dec &&
	            orig_sha512 && orig_sha256 && orig_sha1 && orig_drbg);
}

static void fakefips_cleanup(void)
{
	size_t w;
	int op;

	for (op = 1; op <= OSSL_OP__HIGHEST; op++) {
		OSSL_ALGORITHM *a = tables[op];

		for (; a && a->algorithm_names; a++)
			free((char *)a->property_definition);
		free(tables[op]);
		tables[op] = NULL;
	}
	for (w = 0; w < NWRAPS; w++) {
		free(dispatch_copies[w]);
		dispatch_copies[w] = NULL;
	}
	OSSL_PROVIDER_unload(inner_default);
	OSSL_LIB_CTX_free(inner);
	inner_default = NULL;
	inner = NULL;
}

static const OSSL_ALGORITHM *fakefips_query(void *provctx, int op,
                                            int *no_cache)
{
	(void)provctx;
	*no_cache = 0;
	return op >= 1 && op <= OSSL_OP__HIGHEST ? tables[op] : NULL;
}

/* The provider context is the inner default provider's: it stays with
 * the inner context (freed by fakefips_cleanup(), after every context
 * that loaded fakefips). */
static void fakefips_teardown(void *provctx)
{
	(void)provctx;
}

static const OSSL_DISPATCH fakefips_dispatch[] = {
	{ OSSL_FUNC_PROVIDER_QUERY_OPERATION, (void (*)(void))fakefips_query },
	{ OSSL_FUNC_PROVIDER_TEARDOWN, (void (*)(void))fakefips_teardown },
	{ 0, NULL }
};

static int fakefips_init(const OSSL_CORE_HANDLE *handle,
                         const OSSL_DISPATCH *in, const OSSL_DISPATCH **out,
                         void **provctx)
{
	(void)handle;
	(void)in;
	*provctx = OSSL_PROVIDER_get0_provider_ctx(inner_default);
	*out = fakefips_dispatch;
	return *provctx != NULL;
}

/* A context with fakefips alone; default properties fips=yes if `fips`. */
static OSSL_LIB_CTX *fake_ctx(int fips, OSSL_PROVIDER **prov)
{
	OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();

	assert_non_null(ctx);
	assert_int_equal(OSSL_PROVIDER_add_builtin(ctx, "fakefips",
	                                           fakefips_init), 1);
	assert_non_null(*prov = OSSL_PROVIDER_load(ctx, "fakefips"));
	if (fips)
		assert_int_equal(EVP_default_properties_enable_fips(ctx, 1), 1);
	assert_int_equal(EVP_default_properties_is_fips_enabled(ctx), fips);
	return ctx;
}

static void done_ctx(OSSL_LIB_CTX *ctx, OSSL_PROVIDER *prov)
{
	/* nothing ever loaded the default provider there */
	assert_int_equal(OSSL_PROVIDER_available(ctx, "default"), 0);
	OSSL_PROVIDER_unload(prov);
	OSSL_LIB_CTX_free(ctx);
}

static unsigned long delta(const unsigned long before[C_N], int c)
{
	return counts[c] - before[c];
}

static const char *provider_of_pkey(const EVP_PKEY *k)
{
	const OSSL_PROVIDER *p = k ? EVP_PKEY_get0_provider(k) : NULL;

	return p ? OSSL_PROVIDER_get0_name(p) : "(none)";
}

/* ---- the tests --------------------------------------------------------- */

/* fakefips is what a FIPS query finds, and only there: the default
 * provider does not answer fips=yes, and the fips context holds no
 * default provider. */
static void test_fakefips_answers_fips(void **state)
{
	OSSL_PROVIDER *fp;
	OSSL_LIB_CTX *ctx = fake_ctx(1, &fp);
	EVP_KDF *kdf;
	EVP_MAC *mac;
	EVP_CIPHER *aes;
	EVP_MD *md;
	unsigned long before[C_N];
	uint8_t r[32] = { 0 }, z[32] = { 0 };

	(void)state;
	ERR_set_mark();
	assert_null(kdf = EVP_KDF_fetch(NULL, "PBKDF2", "fips=yes"));
	ERR_pop_to_mark();
	assert_non_null(kdf = EVP_KDF_fetch(ctx, "PBKDF2", NULL));
	assert_string_equal(OSSL_PROVIDER_get0_name(EVP_KDF_get0_provider(kdf)),
	                    "fakefips");
	assert_non_null(mac = EVP_MAC_fetch(ctx, "HMAC", NULL));
	assert_non_null(aes = EVP_CIPHER_fetch(ctx, "AES-256-CBC", NULL));
	assert_non_null(md = EVP_MD_fetch(ctx, "SHA512", NULL));
	assert_string_equal(OSSL_PROVIDER_get0_name(EVP_MD_get0_provider(md)),
	                    "fakefips");
	/* the counters count: a digest, and random bytes through the
	 * context's DRBG */
	memcpy(before, counts, sizeof(before));
	{
		uint8_t h[64];
		unsigned int hl = 0;

		assert_int_equal(EVP_Digest("abc", 3, h, &hl, md, NULL), 1);
		assert_int_equal(hl, 64);
		assert_int_equal(h[0], 0xdd); /* SHA-512("abc") = ddaf35a1... */
		assert_int_equal(h[1], 0xaf);
	}
	assert_int_equal(RAND_bytes_ex(ctx, r, sizeof(r), 0), 1);
	assert_memory_not_equal(r, z, sizeof(r));
	assert_int_equal(delta(before, C_SHA512), 1);
	assert_true(delta(before, C_RAND) >= 1);
	/* its PBKDF2 applies the FIPS provider's SP 800-132 lower bounds:
	 * an 8-byte salt or 999 iterations are refused, WKS's 16-byte salt
	 * and 10,000 iterations pass */
	{
		EVP_KDF_CTX *kc = EVP_KDF_CTX_new(kdf);
		unsigned int iters[] = { 10000, 999, 10000 };
		size_t salts[] = { 16, 16, 8 };
		int want[] = { 1, 0, 0 };
		uint8_t salt[16] = { 1 }, out[96];

		assert_non_null(kc);
		for (size_t i = 0; i < 3; i++) {
			OSSL_PARAM kp[] = {
				OSSL_PARAM_construct_octet_string(
					OSSL_KDF_PARAM_PASSWORD, (void *)PW,
					strlen(PW)),
				OSSL_PARAM_construct_octet_string(
					OSSL_KDF_PARAM_SALT, salt, salts[i]),
				OSSL_PARAM_construct_uint(OSSL_KDF_PARAM_ITER,
				                          &iters[i]),
				OSSL_PARAM_construct_utf8_string(
					OSSL_KDF_PARAM_DIGEST, (char *)"SHA512",
					0),
				OSSL_PARAM_construct_end()
			};

			ERR_set_mark();
			assert_int_equal(EVP_KDF_derive(kc, out, sizeof(out), kp),
			                 want[i]);
			ERR_pop_to_mark();
		}
		EVP_KDF_CTX_free(kc);
	}
	EVP_KDF_free(kdf);
	EVP_MAC_free(mac);
	EVP_CIPHER_free(aes);
	EVP_MD_free(md);
	done_ctx(ctx, fp);
}

/* A store made, saved and read back in the FIPS context. */
static void test_store_round_trip(void **state)
{
	OSSL_PROVIDER *fp;
	OSSL_LIB_CTX *ctx = fake_ctx(1, &fp);
	wks_store *st = NULL;
	unsigned long before[C_N], native;
	uint8_t aes[32];
	tu_der *ca = NULL, *chain = NULL;
	size_t nca, nchain, i, n, kl;
	char *dir = tu_tmpdir(), path[4096], sha[65], want[65];
	wks_key *k = NULL;
	EVP_PKEY *pk = NULL;
	X509 *leaf = NULL, *issuer = NULL;
	uint8_t *der = NULL;
	const uint8_t *kd;
	size_t der_len = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/fips.wks", dir);
	for (i = 0; i < sizeof(aes); i++)
		aes[i] = (uint8_t)(0xa0 + i);
	nca = tu_pem_ders(&ca, tu_input("ca-ecc-cert.pem"), "CERTIFICATE");
	nchain = tu_pem_ders(&chain, tu_input("server-cert-chain2.pem"),
	                     "CERTIFICATE");
	assert_int_equal(nchain, 2);
	native = wks__kdf_native_ctx_runs();

	/* write: an RSA key with its two certificates, an AES key, a
	 * trusted EC certificate */
	TU_OK(wks_store_new_ex(&st, ctx, NULL));
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "10000"));
	memcpy(before, counts, sizeof(before));
	TU_OK(tu_set_key_files(st, "server", "server-key.pem",
	                       "server-cert-chain2.pem", KPW));
	TU_OK(wks_store_set_secret_key(st, "aes", "AES", aes, sizeof(aes), KPW,
	                               strlen(KPW)));
	TU_OK(wks_store_set_cert_der(st, "ca", ca[0].der, ca[0].len));
	TU_OK(wks_store_save_file(st, path, PW, strlen(PW)));
	wks_store_free(st);
	st = NULL;
	/* one PBKDF2 per key entry sealed and one for the store MAC, all
	 * fakefips's; each sealing encrypts once; HMAC for each entry's MAC
	 * and the store's; salts and IVs from the context's DRBG */
	assert_int_equal(delta(before, C_PBKDF2), 3);
	assert_int_equal(delta(before, C_AES_ENC), 2);
	assert_int_equal(delta(before, C_HMAC), 3);
	assert_true(delta(before, C_RAND) >= 5);

	/* read back */
	memcpy(before, counts, sizeof(before));
	TU_OK(wks_store_new_ex(&st, ctx, NULL));
	TU_OK(wks_store_load_file(st, path, PW, strlen(PW)));
	assert_int_equal(wks_store_size(st), 3);
	assert_int_equal(delta(before, C_PBKDF2), 1); /* the store MAC */
	assert_int_equal(delta(before, C_HMAC), 1);

	TU_OK(wks_store_get_key(&k, st, "aes", KPW, strlen(KPW)));
	assert_int_equal(wks_key_type(k), WKS_ENTRY_SECRET_KEY);
	assert_memory_equal(wks_key_data(k, &kl), aes, sizeof(aes));
	assert_int_equal(kl, sizeof(aes));
	wks_key_free(k);
	k = NULL;
	TU_OK(wks_store_get_key(&k, st, "server", KPW, strlen(KPW)));
	kd = wks_key_data(k, &kl);
	tu_sha256_hex(sha, kd, kl);
	tu_input_key_sha(want, "server-key.pem");
	assert_string_equal(sha, want);
	wks_key_free(k);
	k = NULL;
	TU_OK(wks_store_get_pkey(&pk, st, "server", KPW, strlen(KPW)));
	assert_string_equal(provider_of_pkey(pk), "fakefips");
	assert_int_equal(EVP_PKEY_get_base_id(pk), EVP_PKEY_RSA);
	/* a wrong key password is still refused */
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_get_key(&k, st, "aes", PW,
	                                               strlen(PW)));
	assert_null(k);
	/* get_key x3 (one refused) and get_pkey: four entry PBKDF2s */
	assert_int_equal(delta(before, C_PBKDF2), 5);
	assert_int_equal(delta(before, C_AES_DEC), 3);
	assert_int_equal(delta(before, C_HMAC), 5);
	/* libwks's native PBKDF2 never ran for this context */
	assert_int_equal(wks__kdf_native_ctx_runs(), native);

	/* the certificates: same bytes, keys in fakefips, the leaf's
	 * signature checks in the context, the key matches the leaf */
	TU_OK(wks_store_cert_count(&n, st, "server"));
	assert_int_equal(n, 2);
	for (i = 0; i < 2; i++) {
		TU_OK(wks_store_get_cert_der(&der, &der_len, st, "server", i));
		assert_int_equal(der_len, chain[i].len);
		assert_memory_equal(der, chain[i].der, der_len);
		wks_free(der);
		der = NULL;
	}
	TU_OK(wks_store_get_cert(&leaf, st, "server", 0));
	TU_OK(wks_store_get_cert(&issuer, st, "server", 1));
	assert_string_equal(provider_of_pkey(X509_get0_pubkey(leaf)), "fakefips");
	assert_int_equal(X509_verify(leaf, X509_get0_pubkey(issuer)), 1);
	assert_int_equal(EVP_PKEY_eq(pk, X509_get0_pubkey(leaf)), 1);
	X509_free(leaf);
	X509_free(issuer);
	leaf = NULL;
	TU_OK(wks_store_get_cert_der(&der, &der_len, st, "ca", 0));
	assert_int_equal(der_len, ca[0].len);
	assert_memory_equal(der, ca[0].der, der_len);
	wks_free(der);
	TU_OK(wks_store_get_cert(&leaf, st, "ca", 0));
	assert_string_equal(provider_of_pkey(X509_get0_pubkey(leaf)), "fakefips");
	assert_int_equal(X509_verify(leaf, X509_get0_pubkey(leaf)), 1);
	X509_free(leaf);
	wks_store_free(st);
	st = NULL;

	/* the same file in a plain store (default context, native PBKDF2) */
	{
		EVP_PKEY *plain_pk = NULL;

		TU_OK(wks_store_new(&st));
		TU_OK(wks_store_load_file(st, path, PW, strlen(PW)));
		TU_OK(wks_store_get_key(&k, st, "aes", KPW, strlen(KPW)));
		assert_memory_equal(wks_key_data(k, &kl), aes, sizeof(aes));
		wks_key_free(k);
		TU_OK(wks_store_get_pkey(&plain_pk, st, "server", KPW, strlen(KPW)));
		assert_string_equal(provider_of_pkey(plain_pk), "default");
		assert_int_equal(EVP_PKEY_eq(pk, plain_pk), 1);
		EVP_PKEY_free(plain_pk);
		wks_store_free(st);
	}
	/* and in wksdump.py (store MAC, every entry's MAC, keys against
	 * their leaf certificates) */
	if (tu_system("python3 -c 'import cryptography' >/dev/null 2>&1") != 0)
		fail_msg("python3 with the cryptography package is required");
	assert_int_equal(tu_system("python3 %s dump --password '%s' "
	                           "--key-password '%s' '%s' >/dev/null",
	                           tu_shared("tools/wksdump.py"), PW, KPW, path),
	                 0);
	/* and it notices a wrong key password (the check above can fail) */
	assert_int_not_equal(tu_system("python3 %s dump --password '%s' "
	                               "--key-password '%s' '%s' >/dev/null 2>&1",
	                               tu_shared("tools/wksdump.py"), PW, PW,
	                               path), 0);
	EVP_PKEY_free(pk);
	tu_ders_free(ca, nca);
	tu_ders_free(chain, nchain);
	tu_rmtree(dir);
	free(dir);
	done_ctx(ctx, fp);
	assert_int_equal(ERR_peek_error(), 0);
}

/* A wolfJCE vector read in the FIPS context, against its manifest. */
static void test_wolfjce_vector(void **state)
{
	OSSL_PROVIDER *fp;
	OSSL_LIB_CTX *ctx = fake_ctx(1, &fp);
	cJSON *man = tu_json_file(tu_shared("vectors/wolfjce-live/manifest.json"));
	const cJSON *f, *inputs, *in;
	wks_store *st = NULL;
	unsigned long before[C_N], native = wks__kdf_native_ctx_runs();
	const char *pw;
	char vec[4096], sha[65];
	size_t nkeys = 0;

	(void)state;
	f = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(man, "files"), "ec-p384.wks");
	assert_non_null(f);
	pw = cJSON_GetObjectItemCaseSensitive(f, "password")->valuestring;
	snprintf(vec, sizeof(vec), "%s",
	         tu_shared("vectors/wolfjce-live/ec-p384.wks"));
	memcpy(before, counts, sizeof(before));
	TU_OK(wks_store_new_ex(&st, ctx, NULL));
	TU_OK(wks_store_load_file(st, vec, pw, strlen(pw)));
	inputs = cJSON_GetObjectItemCaseSensitive(f, "inputs");
	assert_int_equal(wks_store_size(st), (size_t)cJSON_GetArraySize(inputs));
	cJSON_ArrayForEach(in, inputs) {
		const char *type = cJSON_GetObjectItemCaseSensitive(in, "type")
		                       ->valuestring;
		uint8_t *der = NULL;
		size_t len = 0;

		if (strcmp(type, "private_key") == 0) {
			const cJSON *cs = cJSON_GetObjectItemCaseSensitive(in,
			                                                  "chain_sha256");
			const cJSON *c;
			wks_key *k = NULL;
			EVP_PKEY *pk = NULL;
			X509 *leaf = NULL;
			const uint8_t *kd;
			size_t kl, i = 0;

			TU_OK(wks_store_get_key(&k, st, in->string, pw, strlen(pw)));
			kd = wks_key_data(k, &kl);
			tu_sha256_hex(sha, kd, kl);
			assert_string_equal(sha, cJSON_GetObjectItemCaseSensitive(
				in, "pkcs8_sha256")->valuestring);
			wks_key_free(k);
			TU_OK(wks_store_get_pkey(&pk, st, in->string, pw, strlen(pw)));
			assert_string_equal(provider_of_pkey(pk), "fakefips");
			cJSON_ArrayForEach(c, cs) {
				TU_OK(wks_store_get_cert_der(&der, &len, st, in->string,
				                             i++));
				tu_sha256_hex(sha, der, len);
				assert_string_equal(sha, c->valuestring);
				wks_free(der);
			}
			TU_OK(wks_store_get_cert(&leaf, st, in->string, 0));
			assert_int_equal(EVP_PKEY_eq(pk, X509_get0_pubkey(leaf)), 1);
			X509_free(leaf);
			EVP_PKEY_free(pk);
			nkeys++;
		} else {
			assert_string_equal(type, "certificate");
			TU_OK(wks_store_get_cert_der(&der, &len, st, in->string, 0));
			tu_sha256_hex(sha, der, len);
			assert_string_equal(sha, cJSON_GetObjectItemCaseSensitive(
				in, "sha256")->valuestring);
			wks_free(der);
		}
	}
	assert_int_equal(nkeys, 1);
	/* the store MAC, then get_key and get_pkey */
	assert_int_equal(delta(before, C_PBKDF2), 3);
	assert_int_equal(delta(before, C_AES_DEC), 2);
	assert_int_equal(wks__kdf_native_ctx_runs(), native);
	wks_store_free(st);
	cJSON_Delete(man);
	done_ctx(ctx, fp);
	assert_int_equal(ERR_peek_error(), 0);
}

/* Control: fakefips without fips=yes.  The store works the same, but the
 * PBKDF2 is libwks's native one: fakefips's PBKDF2 is fetched (the
 * context must offer it) and never derives. */
static void test_control_not_fips(void **state)
{
	OSSL_PROVIDER *fp;
	OSSL_LIB_CTX *ctx = fake_ctx(0, &fp);
	wks_store *st = NULL;
	unsigned long before[C_N], native = wks__kdf_native_ctx_runs();
	uint8_t aes[16] = { 1, 2, 3, 4 };
	uint8_t *buf = NULL;
	size_t len = 0, kl;
	wks_key *k = NULL;

	(void)state;
	memcpy(before, counts, sizeof(before));
	TU_OK(wks_store_new_ex(&st, ctx, NULL));
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "10000"));
	TU_OK(wks_store_set_secret_key(st, "aes", "AES", aes, sizeof(aes), PW,
	                               strlen(PW)));
	TU_OK(wks_store_save_buffer(st, &buf, &len, PW, strlen(PW)));
	TU_OK(wks_store_load_buffer(st, buf, len, PW, strlen(PW)));
	TU_OK(wks_store_get_key(&k, st, "aes", PW, strlen(PW)));
	assert_memory_equal(wks_key_data(k, &kl), aes, sizeof(aes));
	wks_key_free(k);
	wks_free(buf);
	wks_store_free(st);
	assert_int_equal(delta(before, C_PBKDF2), 0);
	assert_int_equal(wks__kdf_native_ctx_runs() - native, 4);
	/* everything else still from fakefips */
	assert_int_equal(delta(before, C_AES_ENC), 1);
	assert_int_equal(delta(before, C_AES_DEC), 1);
	assert_true(delta(before, C_HMAC) >= 4);
	done_ctx(ctx, fp);
}

#ifdef WKS_PROVIDER_DIR
/* The wks provider (wks.so) loaded beside fakefips in the FIPS context:
 * a wks: URI opens in its child context, which follows the parent's
 * fips=yes, so the store MAC and the entry's PBKDF2 are fakefips's; the
 * key and certificates come back decoded by fakefips.  The application
 * asks for nothing special: the wks loader is marked fips=yes (as
 * OpenSSL's own "file" loader is: a loader does no cryptography; the
 * store's all comes from the context). */
static void test_wks_provider(void **state)
{
	OSSL_PROVIDER *fp, *wp;
	OSSL_LIB_CTX *ctx = fake_ctx(1, &fp);
	wks_store *st = NULL;
	unsigned long before[C_N], native;
	char *dir = tu_tmpdir(), path[4096], uri[4400];
	OSSL_STORE_CTX *sc;
	EVP_PKEY *want = NULL;
	int types[8], n = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/p.wks", dir);
	/* written by a plain store */
	st = tu_store_fast();
	TU_OK(tu_set_key_files(st, "server", "server-key.pem",
	                       "server-cert-chain2.pem", KPW));
	TU_OK(wks_store_save_file(st, path, PW, strlen(PW)));
	TU_OK(wks_store_get_pkey(&want, st, "server", KPW, strlen(KPW)));
	wks_store_free(st);

	assert_int_equal(OSSL_PROVIDER_set_default_search_path(ctx,
	                                                       WKS_PROVIDER_DIR),
	                 1);
	assert_non_null(wp = OSSL_PROVIDER_load(ctx, "wks"));
	snprintf(uri, sizeof(uri), "wks:%s?alias=server&storepass=pass:%s"
	         "&keypass=pass:%s", path, PW, KPW);
	native = wks__kdf_native_ctx_runs();
	memcpy(before, counts, sizeof(before));
	ERR_clear_error();
	/* no property query: the context's default fips=yes applies */
	assert_non_null(sc = OSSL_STORE_open_ex(uri, ctx, NULL, NULL, NULL,
	                                        NULL, NULL, NULL));
	while (!OSSL_STORE_eof(sc)) {
		OSSL_STORE_INFO *info = OSSL_STORE_load(sc);

		if (!info)
			continue;
		assert_true(n < 8);
		types[n] = OSSL_STORE_INFO_get_type(info);
		if (types[n] == OSSL_STORE_INFO_PKEY) {
			const EVP_PKEY *k = OSSL_STORE_INFO_get0_PKEY(info);

			assert_string_equal(provider_of_pkey(k), "fakefips");
			assert_int_equal(EVP_PKEY_eq(k, want), 1);
		} else if (types[n] == OSSL_STORE_INFO_CERT) {
			X509 *x = OSSL_STORE_INFO_get0_CERT(info);

			assert_string_equal(provider_of_pkey(X509_get0_pubkey(x)),
			                    "fakefips");
		}
		n++;
		OSSL_STORE_INFO_free(info);
	}
	OSSL_STORE_close(sc);
	if (n != 3)
		ERR_print_errors_fp(stdout);
	assert_int_equal(n, 3);
	assert_int_equal(types[0], OSSL_STORE_INFO_PKEY);
	assert_int_equal(types[1], OSSL_STORE_INFO_CERT);
	assert_int_equal(types[2], OSSL_STORE_INFO_CERT);
	/* the store MAC and the entry: fakefips's PBKDF2, never the native */
	assert_int_equal(delta(before, C_PBKDF2), 2);
	assert_int_equal(delta(before, C_AES_DEC), 1);
	assert_int_equal(wks__kdf_native_ctx_runs(), native);
	EVP_PKEY_free(want);
	OSSL_PROVIDER_unload(wp);
	tu_rmtree(dir);
	free(dir);
	done_ctx(ctx, fp);
}
#endif

static int setup(void **state)
{
	(void)state;
	fakefips_setup();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fakefips_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fakefips_answers_fips),
		cmocka_unit_test(test_store_round_trip),
		cmocka_unit_test(test_wolfjce_vector),
		cmocka_unit_test(test_control_not_fips),
#ifdef WKS_PROVIDER_DIR
		cmocka_unit_test(test_wks_provider),
#endif
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
