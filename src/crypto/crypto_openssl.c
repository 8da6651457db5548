/* Symmetric primitives on OpenSSL 3 libcrypto.  Algorithms are fetched
 * once per process for the default context, and once per store for a
 * store's own context (wks_store_new_ex(); the _cc functions at the end):
 * fetching is costly and get_key's cache-hit path must stay in the
 * microseconds. */
#define OPENSSL_SUPPRESS_DEPRECATED /* SHA512_Init & co: see hmac below */
#include "crypto/crypto.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "crypto/kdf.h"
#include "util/error.h"
#include "util/wipe.h"

_Static_assert(sizeof(SHA512_CTX) <= sizeof(((wks_hmac_key *)0)->inner),
               "wks_hmac_key too small for SHA512_CTX");
_Static_assert(sizeof(SHA512_CTX) <= sizeof(wks_sha512_state),
               "wks_sha512_state too small for SHA512_CTX");

/* ---- SHA-512 states, SHAKE256, wiping (the cache's shield, pqc.c,
 * util/wipe.c) ------------------------------------------------------------
 * The low-level SHA512_* functions (deprecated in 3.0 but present in
 * every 3.x) let a prepared hash state be copied by value: no allocation
 * and no provider dispatch on the cache-hit path, which EVP_MAC cannot
 * offer.  Update/Final on a valid state cannot fail. */
void wks__sha512_init(wks_sha512_state *s)
{
	SHA512_Init((SHA512_CTX *)s->w);
}

void wks__sha512_update(wks_sha512_state *s, const uint8_t *data, size_t len)
{
	SHA512_Update((SHA512_CTX *)s->w, data, len);
}

void wks__sha512_final(uint8_t out[64], wks_sha512_state *s)
{
	SHA512_Final(out, (SHA512_CTX *)s->w);
}

int wks__shake256_cc(const wks_crypto_ctx *cc, uint8_t *out, size_t out_len,
                     const uint8_t *in, size_t in_len)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	EVP_MD *md = EVP_MD_fetch(cc ? cc->libctx : NULL, "SHAKE256",
	                          cc ? cc->propq : NULL);
	int done;

	done = c && md && EVP_DigestInit_ex2(c, md, NULL) == 1 &&
	       EVP_DigestUpdate(c, in, in_len) == 1 &&
	       EVP_DigestFinalXOF(c, out, out_len) == 1;
	EVP_MD_CTX_free(c);
	EVP_MD_free(md);
	if (!done)
		return wks__err(WKS_ERR_CRYPTO, "SHAKE256 is not available");
	return WKS_OK;
}

void wks__cleanse(void *p, size_t n)
{
	OPENSSL_cleanse(p, n);
}

static pthread_once_t fetch_once = PTHREAD_ONCE_INIT;
static EVP_CIPHER *aes256cbc;
static EVP_MD *sha512_md;

static void fetch_algorithms(void)
{
	ERR_set_mark();
	aes256cbc = EVP_CIPHER_fetch(NULL, "AES-256-CBC", NULL);
	sha512_md = EVP_MD_fetch(NULL, "SHA512", NULL);
	ERR_pop_to_mark();
}

static int fetched(void)
{
	pthread_once(&fetch_once, fetch_algorithms);
	if (!aes256cbc || !sha512_md)
		return wks__err(WKS_ERR_CRYPTO, "OpenSSL lacks AES-256-CBC or SHA-512");
	return WKS_OK;
}

/* Like the functions of pki_openssl.c, every function here that can make
 * OpenSSL queue an error removes what it queued (ERR_set_mark() ...
 * ERR_pop_to_mark()) and leaves the caller's entries alone: libwks reports
 * through its own error model. */
int wks__random(uint8_t *out, size_t n)
{
	int ok;

	if (n > INT32_MAX)
		return wks__err(WKS_ERR_CRYPTO, "random number generator failed");
	ERR_set_mark();
	ok = RAND_bytes(out, (int)n) == 1;
	ERR_pop_to_mark();
	if (!ok)
		return wks__err(WKS_ERR_CRYPTO, "random number generator failed");
	return WKS_OK;
}

int wks__pbkdf2(uint8_t *out, size_t out_len, const uint8_t *pw, size_t pw_len,
                const uint8_t *salt, size_t salt_len, uint32_t iter,
                wks_kdf_impl impl, int threads)
{
	int err, ok;

	if (iter == 0 || iter > INT32_MAX || pw_len > INT32_MAX ||
	    salt_len > INT32_MAX || out_len > INT32_MAX)
		return wks__err(WKS_ERR_INVALID, "PBKDF2 parameters out of range");
	if (impl == WKS_KDF_NATIVE)
		return wks__pbkdf2_sha512_native(out, out_len, pw, pw_len, salt,
		                                  salt_len, iter, threads,
		                                  WKS_KDF_PATH_AUTO);
	if ((err = fetched()) < 0)
		return err;
	ERR_set_mark();
	ok = PKCS5_PBKDF2_HMAC((const char *)pw, (int)pw_len, salt,
	                       (int)salt_len, (int)iter, sha512_md, (int)out_len,
	                       out) == 1;
	ERR_pop_to_mark();
	if (!ok) {
		wks_wipe(out, out_len);
		return wks__err(WKS_ERR_CRYPTO, "PBKDF2 failed");
	}
	return WKS_OK;
}

/*
 * HMAC-SHA512 on the low-level SHA-512 interface: no allocation and no
 * algorithm fetch per call, which matters on the cache-hit path where
 * the whole get_key is a few microseconds.  The low-level API is
 * deprecated in OpenSSL 3 but still its fastest SHA-512 entry point.
 */
void wks__hmac_prepare(wks_hmac_key *k, const uint8_t *key, size_t key_len)
{
	uint8_t block[128], kh[64];
	size_t i;

	memset(block, 0, sizeof(block));
	if (key_len > sizeof(block)) {
		SHA512(key, key_len, kh);
		memcpy(block, kh, sizeof(kh));
		wks_wipe(kh, sizeof(kh));
	} else if (key_len) {
		memcpy(block, key, key_len);
	}
	for (i = 0; i < sizeof(block); i++)
		block[i] ^= 0x36;
	SHA512_Init((SHA512_CTX *)k->inner);
	SHA512_Update((SHA512_CTX *)k->inner, block, sizeof(block));
	for (i = 0; i < sizeof(block); i++)
		block[i] ^= 0x36 ^ 0x5c;
	SHA512_Init((SHA512_CTX *)k->outer);
	SHA512_Update((SHA512_CTX *)k->outer, block, sizeof(block));
	wks_wipe(block, sizeof(block));
}

void wks__hmac_compute(uint8_t out[WKS_MAC_LEN], const wks_hmac_key *k,
                       const uint8_t *data, size_t len)
{
	SHA512_CTX c;
	uint8_t ih[64];

	memcpy(&c, k->inner, sizeof(c));
	SHA512_Update(&c, data, len);
	SHA512_Final(ih, &c);
	memcpy(&c, k->outer, sizeof(c));
	SHA512_Update(&c, ih, sizeof(ih));
	SHA512_Final(out, &c);
	wks_wipe(ih, sizeof(ih));
	wks_wipe(&c, sizeof(c));
}

int wks__hmac_sha512(uint8_t out[WKS_MAC_LEN], const uint8_t *key,
                     size_t key_len, const uint8_t *data, size_t len)
{
	wks_hmac_key k;

	wks__hmac_prepare(&k, key, key_len);
	wks__hmac_compute(out, &k, data, len);
	wks_wipe(&k, sizeof(k));
	return WKS_OK;
}

int wks__mac_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n) == 0;
}

/*
 * One AES-256-CBC context per thread, initialised with the cipher once and
 * re-keyed for each use: a fresh context per call, or passing the cipher
 * again, costs allocations and an atomic reference count on the shared
 * cipher object, which made concurrent cache hits contend.  After each use
 * the context is re-keyed with zeros and its block buffer overwritten
 * (scrub()), so neither a key schedule nor a plaintext block outlives the
 * call.
 */
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static pthread_key_t tls_ctx_key;
static int tls_ok;

static void tls_ctx_free(void *p)
{
	EVP_CIPHER_CTX_free(p);
}

static void tls_init(void)
{
	tls_ok = pthread_key_create(&tls_ctx_key, tls_ctx_free) == 0;
}

static EVP_CIPHER_CTX *thread_ctx(void)
{
	static const uint8_t zero[WKS_AES_KEY_LEN + WKS_IV_LEN];
	EVP_CIPHER_CTX *ctx;

	pthread_once(&tls_once, tls_init);
	if (!tls_ok)
		return NULL;
	if ((ctx = pthread_getspecific(tls_ctx_key)) != NULL)
		return ctx;
	if (!(ctx = EVP_CIPHER_CTX_new()))
		return NULL;
	if (EVP_CipherInit_ex2(ctx, aes256cbc, zero, zero + WKS_AES_KEY_LEN, 1,
	                       NULL) != 1 ||
	    pthread_setspecific(tls_ctx_key, ctx) != 0) {
		EVP_CIPHER_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

/*
 * Leave nothing of the last call in the context.  Re-keying with zeros
 * overwrites the key schedule, but not the provider's one-block buffer:
 * after an encryption it holds the plaintext's last (partial) block with
 * its padding, after a decryption the decrypted last block (so up to 15
 * bytes of a key, or all of a key shorter than a block), and a new
 * EVP_CipherInit only resets its length.  A decryption update of exactly
 * one block, with padding on (never turned off here), is held back whole
 * in that buffer (it may be the padded last block): feeding one zero
 * block overwrites all 16 bytes and outputs nothing.  tests/test_memdump.c
 * checks the result in the memory of a real process.  Returns WKS_OK, or
 * -1 and the caller frees the context.
 */
static int scrub(EVP_CIPHER_CTX *ctx)
{
	static const uint8_t zero[WKS_AES_KEY_LEN];
	uint8_t sink[32];
	int n = 0, ok;

	ok = EVP_CipherInit_ex2(ctx, NULL, zero, zero, 0, NULL) == 1 &&
	     EVP_CipherUpdate(ctx, sink, &n, zero, 16) == 1 && n == 0;
	wks_wipe(sink, sizeof(sink));
	return ok ? WKS_OK : -1;
}

static int aes_cbc(wks_buf *out, const uint8_t key[WKS_AES_KEY_LEN],
                   const uint8_t iv[WKS_IV_LEN], const uint8_t *in,
                   size_t in_len, int enc)
{
	EVP_CIPHER_CTX *ctx;
	int err, n1 = 0, n2 = 0;

	if ((err = fetched()) < 0)
		return err;
	if (in_len > INT32_MAX - 32)
		return wks__err(WKS_ERR_LIMIT, "data too large to encrypt");
	if ((err = wks_buf_reserve(out, in_len + 16)) < 0)
		return err;
	ERR_set_mark();
	if (!(ctx = thread_ctx())) {
		ERR_pop_to_mark();
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	/* Padding is PKCS#5 both ways; OpenSSL's decrypt checks every pad
	 * byte, rejects p = 0 and p > 16, and an input that is not a
	 * non-zero multiple of 16. */
	if (EVP_CipherInit_ex2(ctx, NULL, key, iv, enc, NULL) != 1 ||
	    EVP_CipherUpdate(ctx, out->ptr + out->len, &n1, in, (int)in_len) != 1 ||
	    EVP_CipherFinal_ex(ctx, out->ptr + out->len + n1, &n2) != 1) {
		wks_wipe(out->ptr + out->len, in_len + 16);
		err = enc ? wks__err(WKS_ERR_CRYPTO, "AES-256-CBC encryption failed")
		          : wks__err(WKS_ERR_INTEGRITY, "bad padding after decryption");
	} else {
		out->len += (size_t)n1 + (size_t)n2;
	}
	if (scrub(ctx) < 0) {
		pthread_setspecific(tls_ctx_key, NULL);
		EVP_CIPHER_CTX_free(ctx); /* frees with a cleanse */
	}
	ERR_pop_to_mark();
	return err;
}

int wks__aes256cbc_encrypt(wks_buf *out, const uint8_t key[WKS_AES_KEY_LEN],
                           const uint8_t iv[WKS_IV_LEN],
                           const uint8_t *pt, size_t pt_len)
{
	return aes_cbc(out, key, iv, pt, pt_len, 1);
}

int wks__aes256cbc_decrypt(wks_buf *out, const uint8_t key[WKS_AES_KEY_LEN],
                           const uint8_t iv[WKS_IV_LEN],
                           const uint8_t *ct, size_t ct_len)
{
	if (ct_len == 0 || ct_len % 16 != 0)
		return wks__err(WKS_ERR_INTEGRITY,
		                "ciphertext length %zu is not a positive multiple of 16",
		                ct_len);
	return aes_cbc(out, key, iv, ct, ct_len, 0);
}

int wks__sha256(uint8_t out[32], const uint8_t *data, size_t len)
{
	int ok;

	ERR_set_mark();
	ok = SHA256(data, len, out) != NULL;
	ERR_pop_to_mark();
	if (!ok)
		return wks__err(WKS_ERR_CRYPTO, "SHA-256 failed");
	return WKS_OK;
}

/* ---- a store's own library context (wks_store_new_ex) ------------------ */

static atomic_ulong native_ctx_runs, test_derivations, test_batches;

unsigned long wks__kdf_native_ctx_runs(void)
{
	return atomic_load_explicit(&native_ctx_runs, memory_order_relaxed);
}

unsigned long wks__kdf_test_derivations(void)
{
	return atomic_load_explicit(&test_derivations, memory_order_relaxed);
}

unsigned long wks__kdf_test_batches(void)
{
	return atomic_load_explicit(&test_batches, memory_order_relaxed);
}

/* Does the property query ask for the FIPS provider?  A clause "fips",
 * "fips=yes" or "?fips=yes" (spaces ignored, any case), as OpenSSL's
 * property syntax writes it. */
static int propq_is_fips(const char *q)
{
	char clause[32];
	size_t n = 0;

	if (!q)
		return 0;
	for (;; q++) {
		if (*q == ',' || *q == '\0') {
			clause[n] = '\0';
			if (strcmp(clause, "fips") == 0 ||
			    strcmp(clause, "fips=yes") == 0 ||
			    strcmp(clause, "?fips") == 0 ||
			    strcmp(clause, "?fips=yes") == 0 ||
			    strcmp(clause, "fips=\"yes\"") == 0)
				return 1;
			n = 0;
			if (*q == '\0')
				return 0;
		} else if (*q != ' ' && *q != '\t' && n + 1 < sizeof(clause)) {
			char c = *q;

			clause[n++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
		}
	}
}

int wks__crypto_ctx_new(wks_crypto_ctx **out, OSSL_LIB_CTX *libctx,
                        const char *propq)
{
	wks_crypto_ctx *cc;

	*out = NULL;
	if (!libctx && !propq)
		return WKS_OK;
	if (!(cc = calloc(1, sizeof(*cc))))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	if (propq && !(cc->propq = strdup(propq))) {
		free(cc);
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	cc->libctx = libctx;
	ERR_set_mark();
	cc->fips = EVP_default_properties_is_fips_enabled(libctx) ||
	           propq_is_fips(propq);
	cc->aes = EVP_CIPHER_fetch(libctx, "AES-256-CBC", propq);
	cc->hmac = EVP_MAC_fetch(libctx, "HMAC", propq);
	cc->pbkdf2 = EVP_KDF_fetch(libctx, "PBKDF2", propq);
	cc->sha512 = EVP_MD_fetch(libctx, "SHA512", propq);
	ERR_pop_to_mark();
	*out = cc;
	return WKS_OK;
}

void wks__crypto_ctx_free(wks_crypto_ctx *cc)
{
	if (!cc)
		return;
	EVP_CIPHER_free(cc->aes);
	EVP_MAC_free(cc->hmac);
	EVP_KDF_free(cc->pbkdf2);
	EVP_MD_free(cc->sha512);
	free(cc->propq);
	free(cc);
}

static int unavailable(const wks_crypto_ctx *cc, const char *alg)
{
	return wks__err(WKS_ERR_CRYPTO, "%s is not available from the store's "
	                "OpenSSL library context%s%s%s", alg,
	                cc->propq ? " (properties \"" : "",
	                cc->propq ? cc->propq : "", cc->propq ? "\")" : "");
}

int wks__random_cc(const wks_crypto_ctx *cc, uint8_t *out, size_t n)
{
	int ok;

	if (!cc)
		return wks__random(out, n);
	if (n > INT32_MAX)
		return wks__err(WKS_ERR_CRYPTO, "random number generator failed");
	ERR_set_mark();
	ok = RAND_bytes_ex(cc->libctx, out, n, 0) == 1;
	ERR_pop_to_mark();
	if (!ok)
		return wks__err(WKS_ERR_CRYPTO, "the random number generator of the "
		                "store's OpenSSL library context failed");
	return WKS_OK;
}

int wks__pbkdf2_cc(const wks_crypto_ctx *cc, uint8_t *out, size_t out_len,
                   const uint8_t *pw, size_t pw_len, const uint8_t *salt,
                   size_t salt_len, uint32_t iter, wks_kdf_impl impl,
                   int threads)
{
	OSSL_PARAM params[6], *p = params;
	EVP_KDF_CTX *kc;
	int ok;

	atomic_fetch_add_explicit(&test_derivations, 1, memory_order_relaxed);
	if (!cc)
		return wks__pbkdf2(out, out_len, pw, pw_len, salt, salt_len, iter,
		                   impl, threads);
	if (iter == 0 || iter > INT32_MAX || pw_len > INT32_MAX ||
	    salt_len > INT32_MAX || out_len > INT32_MAX)
		return wks__err(WKS_ERR_INVALID, "PBKDF2 parameters out of range");
	/* The context must offer PBKDF2 and SHA-512 even when the native
	 * code computes it: nothing runs that the context would refuse. */
	if (!cc->pbkdf2 || !cc->sha512)
		return unavailable(cc, "PBKDF2 with SHA-512");
	if (!cc->fips && impl == WKS_KDF_NATIVE) {
		atomic_fetch_add_explicit(&native_ctx_runs, 1, memory_order_relaxed);
		return wks__pbkdf2_sha512_native(out, out_len, pw, pw_len, salt,
		                                  salt_len, iter, threads,
		                                  WKS_KDF_PATH_AUTO);
	}
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PASSWORD,
	                                         (void *)pw, pw_len);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT,
	                                         (void *)salt, salt_len);
	*p++ = OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_ITER, &iter);
	*p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
	                                        (char *)"SHA512", 0);
	if (cc->propq)
		*p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_PROPERTIES,
		                                        cc->propq, 0);
	*p = OSSL_PARAM_construct_end();
	ERR_set_mark();
	kc = EVP_KDF_CTX_new(cc->pbkdf2);
	ok = kc && EVP_KDF_derive(kc, out, out_len, params) == 1;
	EVP_KDF_CTX_free(kc);
	ERR_pop_to_mark();
	if (!ok) {
		wks_wipe(out, out_len);
		return wks__err(WKS_ERR_CRYPTO, "PBKDF2 of the store's OpenSSL "
		                "library context failed");
	}
	return WKS_OK;
}

int wks__pbkdf2_batch_cc(const wks_crypto_ctx *cc, const wks_kdf_job *jobs,
                         size_t njobs, wks_kdf_impl impl, int threads)
{
	size_t i;
	int err = WKS_OK;

	if (!jobs && njobs)
		return wks__err(WKS_ERR_INVALID, "PBKDF2: no jobs");
	for (i = 0; i < njobs; i++)
		if (jobs[i].iter == 0 || jobs[i].iter > INT32_MAX ||
		    jobs[i].pw_len > INT32_MAX || jobs[i].salt_len > INT32_MAX ||
		    jobs[i].out_len > INT32_MAX)
			return wks__err(WKS_ERR_INVALID,
			                "PBKDF2 parameters out of range");
	if (cc && (!cc->pbkdf2 || !cc->sha512))
		return unavailable(cc, "PBKDF2 with SHA-512");
	if (impl == WKS_KDF_NATIVE && (!cc || !cc->fips)) {
		if (cc)
			atomic_fetch_add_explicit(&native_ctx_runs, njobs,
			                          memory_order_relaxed);
		atomic_fetch_add_explicit(&test_derivations, njobs,
		                          memory_order_relaxed);
		if (njobs > 1)
			atomic_fetch_add_explicit(&test_batches, 1,
			                          memory_order_relaxed);
		err = wks__pbkdf2_sha512_batch(jobs, njobs, threads,
		                               WKS_KDF_PATH_AUTO);
	} else {
		for (i = 0; i < njobs && err == WKS_OK; i++)
			err = wks__pbkdf2_cc(cc, jobs[i].out, jobs[i].out_len,
			                     jobs[i].pw, jobs[i].pw_len,
			                     jobs[i].salt, jobs[i].salt_len,
			                     jobs[i].iter, impl, threads);
	}
	if (err < 0)
		for (i = 0; i < njobs; i++)
			if (jobs[i].out)
				wks_wipe(jobs[i].out, jobs[i].out_len);
	return err;
}

size_t wks__pbkdf2_batch_width(int threads)
{
	wks_kdf_path path = WKS_KDF_PATH_AUTO;

	if (threads < 0)
		threads = 0;
	/* A batch large enough that every thread runs full passes. */
	wks__kdf_resolve_blocks(&path, &threads, 1024);
	return (size_t)threads * wks__kdf_path_lanes(path);
}

size_t wks__pbkdf2_batch_spare(const wks_crypto_ctx *cc, size_t blocks,
                               wks_kdf_impl impl, int threads)
{
	size_t t, k, limit;

	if (impl != WKS_KDF_NATIVE || (cc && cc->fips) || blocks == 0)
		return 0;
	if (threads < 0)
		threads = 0;
	t = wks__kdf_estimate(blocks, threads);
	/* (The free lanes are fewer than one pass of every thread.) */
	limit = wks__pbkdf2_batch_width(threads);
	for (k = 0; k < limit && wks__kdf_estimate(blocks + k + 1, threads) <= t;
	     k++)
		;
	return k;
}

int wks__hmac_sha512_cc(const wks_crypto_ctx *cc, uint8_t out[WKS_MAC_LEN],
                        const uint8_t *key, size_t key_len,
                        const uint8_t *data, size_t len)
{
	OSSL_PARAM params[3], *p = params;
	EVP_MAC_CTX *m;
	size_t n = 0;
	int ok;

	if (!cc)
		return wks__hmac_sha512(out, key, key_len, data, len);
	if (!cc->hmac || !cc->sha512)
		return unavailable(cc, "HMAC-SHA512");
	*p++ = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
	                                        (char *)"SHA512", 0);
	if (cc->propq)
		*p++ = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_PROPERTIES,
		                                        cc->propq, 0);
	*p = OSSL_PARAM_construct_end();
	ERR_set_mark();
	m = EVP_MAC_CTX_new(cc->hmac);
	ok = m && EVP_MAC_init(m, key, key_len, params) == 1 &&
	     EVP_MAC_update(m, data, len) == 1 &&
	     EVP_MAC_final(m, out, &n, WKS_MAC_LEN) == 1 && n == WKS_MAC_LEN;
	EVP_MAC_CTX_free(m); /* frees the digest contexts with a cleanse */
	ERR_pop_to_mark();
	if (!ok) {
		wks_wipe(out, WKS_MAC_LEN);
		return wks__err(WKS_ERR_CRYPTO, "HMAC-SHA512 of the store's OpenSSL "
		                "library context failed");
	}
	return WKS_OK;
}

/* AES-256-CBC through the store's context: a context per call (the
 * per-thread one above holds the default context's cipher and must not
 * mix with another's).  Freeing it cleanses the key schedule and the
 * block buffer (the provider's freectx clears its whole context). */
static int aes_cbc_cc(const wks_crypto_ctx *cc, wks_buf *out,
                      const uint8_t key[WKS_AES_KEY_LEN],
                      const uint8_t iv[WKS_IV_LEN], const uint8_t *in,
                      size_t in_len, int enc)
{
	EVP_CIPHER_CTX *ctx;
	int err = WKS_OK, n1 = 0, n2 = 0;

	if (!cc->aes)
		return unavailable(cc, "AES-256-CBC");
	if (in_len > INT32_MAX - 32)
		return wks__err(WKS_ERR_LIMIT, "data too large to encrypt");
	if ((err = wks_buf_reserve(out, in_len + 16)) < 0)
		return err;
	ERR_set_mark();
	if (!(ctx = EVP_CIPHER_CTX_new())) {
		ERR_pop_to_mark();
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	if (EVP_CipherInit_ex2(ctx, cc->aes, key, iv, enc, NULL) != 1) {
		err = wks__err(WKS_ERR_CRYPTO, "AES-256-CBC of the store's OpenSSL "
		               "library context failed");
	} else if (EVP_CipherUpdate(ctx, out->ptr + out->len, &n1, in,
	                            (int)in_len) != 1 ||
	           EVP_CipherFinal_ex(ctx, out->ptr + out->len + n1, &n2) != 1) {
		wks_wipe(out->ptr + out->len, in_len + 16);
		err = enc ? wks__err(WKS_ERR_CRYPTO, "AES-256-CBC encryption failed")
		          : wks__err(WKS_ERR_INTEGRITY, "bad padding after decryption");
	} else {
		out->len += (size_t)n1 + (size_t)n2;
	}
	EVP_CIPHER_CTX_free(ctx);
	ERR_pop_to_mark();
	return err;
}

int wks__aes256cbc_encrypt_cc(const wks_crypto_ctx *cc, wks_buf *out,
                              const uint8_t key[WKS_AES_KEY_LEN],
                              const uint8_t iv[WKS_IV_LEN],
                              const uint8_t *pt, size_t pt_len)
{
	if (!cc)
		return wks__aes256cbc_encrypt(out, key, iv, pt, pt_len);
	return aes_cbc_cc(cc, out, key, iv, pt, pt_len, 1);
}

int wks__aes256cbc_decrypt_cc(const wks_crypto_ctx *cc, wks_buf *out,
                              const uint8_t key[WKS_AES_KEY_LEN],
                              const uint8_t iv[WKS_IV_LEN],
                              const uint8_t *ct, size_t ct_len)
{
	if (!cc)
		return wks__aes256cbc_decrypt(out, key, iv, ct, ct_len);
	if (ct_len == 0 || ct_len % 16 != 0)
		return wks__err(WKS_ERR_INTEGRITY,
		                "ciphertext length %zu is not a positive multiple of 16",
		                ct_len);
	return aes_cbc_cc(cc, out, key, iv, ct, ct_len, 0);
}
